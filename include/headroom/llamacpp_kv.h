// llama.cpp's KV cache size, cell for cell, as llama_kv_cache / llama_kv_cache_iswa allocate it
// for a build: the context and slot rules of the era (-c/--ctx-size, -np/--parallel, -kvu), the
// sliding-window cache, and K/V types. A pure function; derivation and eras: docs/llamacpp-kv.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "headroom/gguf.h"
#include "headroom/gguf_model.h"

namespace headroom::llamacpp {

// One layer as llama_hparams sees it: n_embd_k_gqa(il) / n_embd_v_gqa(il) (0: no KV, e.g. a
// recurrent layer) and is_swa(il).
struct KvLayer {
  int64_t k_gqa = 0, v_gqa = 0;
  bool swa = false;
};
struct KvModel {
  std::vector<KvLayer> layers;
  int64_t n_swa = 0;        // sliding window (tokens) of the SWA layers
  int64_t n_ctx_train = 0;  // {arch}.context_length: what -c 0 asks for
};

// How a build sizes the cache (rows of a table keyed by build number).
enum class CtxRule { PadForAttention,  // kv_size = GGML_PAD(n_ctx, flash_attn ? 256 : 32), one stream
                     Pad256Streams };  // n_ctx padded to 256; non-unified: one stream per sequence (PR #17046)
enum class SwaRule { BatchPadMin,      // min(base, PAD(n_swa * n_seq_max + n_batch, n_pad))
                     UbatchPadMin,     // min(base, PAD(n_swa * (unified ? n_seq_max : 1) + n_ubatch, n_pad))
                     Ubatch256 };      // PAD(min(base, n_swa * (unified ? n_seq_max : 1) + n_ubatch), 256)
struct KvRules {
  CtxRule ctx;
  SwaRule swa;
  bool server_four_slots;  // llama-server without -np: 4 slots sharing one unified cache
};
KvRules kv_rules_for_build(int build);  // build 0 = newest

struct KvSettings {
  int build = 0;                 // bNNNN, 0 = newest
  int64_t ctx_size = 0;          // -c / --ctx-size; 0 = the model's n_ctx_train
  int n_parallel = -1;           // -np / --parallel; -1 = not given
  bool kv_unified = false;       // -kvu / --kv-unified given
  bool flash_attn = true;        // resolved on/off (it sets the padding of older builds)
  bool swa_full = false;         // --swa-full
  int64_t n_batch = 2048, n_ubatch = 512;
  gguf::GgmlType type_k = gguf::GgmlType::F16, type_v = gguf::GgmlType::F16;
};

// One cache (the base one, or the SWA one of an iswa model) as its log line prints it:
// "size = … MiB (cells cells, layers layers, n_seq_max/n_stream seqs), K (type): …, V (type): …".
struct KvCacheLine {
  int64_t cells = 0;  // per stream
  int layers = 0;
  int64_t k_bytes = 0, v_bytes = 0;
  int64_t bytes() const { return k_bytes + v_bytes; }
};
struct KvCache {
  int64_t n_ctx = 0, n_ctx_seq = 0;
  int n_seq_max = 1, n_stream = 1;
  bool unified = true;
  KvCacheLine base, swa;
  int64_t bytes() const { return base.bytes() + swa.bytes(); }
};

// InputError for K/V types llama.cpp's cache does not take, or a row not a multiple of the block.
KvCache kv_cache_size(const KvModel& m, const KvSettings& s);

// The line llama_kv_cache prints for one cache (newer builds' format):
// "llama_kv_cache: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB".
std::string kv_cache_log_line(const KvCache& c, const KvCacheLine& line, const KvSettings& s);

// The KV model of a GGUF model: per layer head_count_kv x key_length / value_length, sliding-window
// layers marked for the architectures in its table (gemma2, gemma3, gpt-oss). nullopt, with `why`
// said, where llama.cpp sizes the cache with per-architecture code not modelled yet (other
// sliding-window patterns, MLA, recurrent state).
std::optional<KvModel> kv_model_from_gguf(const gguf::ModelSummary& s, std::string* why);

}  // namespace headroom::llamacpp
