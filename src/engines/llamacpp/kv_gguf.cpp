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

namespace {

// Architectures whose sliding-window layers llama.cpp marks with set_swa_pattern(period) in
// load_hparams (llama-model.cpp; llama-hparams.cpp: layer il slides when il % period < period - 1):
// gemma2 (period 2, window 4096 when the key is absent), gemma3 (6), gpt-oss (2).
struct SwaArch {
  std::string_view arch;
  int64_t period;
  int64_t default_window;
};
constexpr SwaArch kSwaArchs[] = {{"gemma2", 2, 4096}, {"gemma3", 6, 0}, {"gpt-oss", 2, 0}};

}  // namespace

std::optional<KvModel> kv_model_from_gguf(const gguf::ModelSummary& s, std::string* why) {
  auto no = [&](std::string reason) -> std::optional<KvModel> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const SwaArch* swa = nullptr;
  for (const auto& a : kSwaArchs)
    if (a.arch == s.architecture) swa = &a;
  const int64_t n_swa = s.sliding_window > 0 ? s.sliding_window : swa ? swa->default_window : 0;
  if (n_swa > 0 && !swa)
    return no("sliding-window layers of " + s.architecture + ": which layers slide is per-architecture code in llama.cpp (set_swa_pattern), not in headroom's table yet");
  if (s.mla) return no("multi-head latent attention: llama.cpp caches the latent, not modelled yet");
  if (s.recurrent) return no("recurrent layers: llama.cpp keeps their state in a separate per-sequence buffer, not modelled yet");
  if (s.block_count <= 0) return no("no {arch}.block_count");
  KvModel m;
  m.n_ctx_train = s.context_length;
  m.n_swa = n_swa;
  for (size_t il = 0; il < s.head_count_kv.size(); ++il) {
    const int64_t kv = s.head_count_kv[il];
    const bool slides = n_swa > 0 && static_cast<int64_t>(il) % swa->period < swa->period - 1;
    m.layers.push_back(KvLayer{kv * s.key_length, kv * s.value_length, slides});
  }
  return m;
}

}  // namespace headroom::llamacpp
