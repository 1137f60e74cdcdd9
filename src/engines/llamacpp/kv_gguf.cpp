// The KV model llama.cpp derives from a GGUF's metadata (n_embd_k_gqa(il) = key_length x
// head_count_kv(il), llama-hparams.cpp), and the size line llama_kv_cache prints
// (src/llama-kv-cache.cpp, LLAMA_LOG_INFO "%s: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), ...").
#include <fmt/format.h>

#include "headroom/llamacpp_kv.h"

namespace headroom::llamacpp {

std::string kv_cache_log_line(const KvCache& c, const KvCacheLine& line, const KvSettings& s) {
  auto mib = [](int64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); };
  return fmt::format("llama_kv_cache: size = {:7.2f} MiB ({:6d} cells, {:3d} layers, {:2d}/{} seqs), K ({}): {:7.2f} MiB, V ({}): {:7.2f} MiB",
                     mib(line.bytes()), line.cells, line.layers, c.n_seq_max, c.n_stream, gguf::type_traits(s.type_k).name,
                     mib(line.k_bytes), gguf::type_traits(s.type_v).name, mib(line.v_bytes));
}

std::optional<KvModel> kv_model_from_gguf(const gguf::ModelSummary& s, std::string* why) {
  auto no = [&](std::string reason) -> std::optional<KvModel> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (s.sliding_window > 0) return no("sliding-window layers: which layers slide is per-architecture code in llama.cpp (set_swa_pattern), not modelled yet");
  if (s.mla) return no("multi-head latent attention: llama.cpp caches the latent, not modelled yet");
  if (s.recurrent) return no("recurrent layers: llama.cpp keeps their state in a separate per-sequence buffer, not modelled yet");
  if (s.block_count <= 0) return no("no {arch}.block_count");
  KvModel m;
  m.n_ctx_train = s.context_length;
  for (int64_t kv : s.head_count_kv) m.layers.push_back(KvLayer{kv * s.key_length, kv * s.value_length, false});
  return m;
}

}  // namespace headroom::llamacpp
