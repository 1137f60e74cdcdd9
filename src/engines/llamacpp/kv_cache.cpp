// llama.cpp KV cache size. Mirrors ggml-org/llama.cpp src/llama-context.cpp (n_ctx / n_ctx_seq
// padding, PR #17046), src/llama-kv-cache.cpp (per layer K [n_embd_k_gqa, kv_size, n_stream] and V
// likewise, bytes = ggml_row_size(type, n_embd) x kv_size x n_stream) and src/llama-kv-cache-iswa.cpp
// (the SWA cache size, three rules over time). Build boundaries of the rules: docs/llamacpp-kv.md.
#include <algorithm>
#include <fmt/format.h>

#include "headroom/error.h"
#include "headroom/llamacpp_kv.h"
#include "engines/llamacpp/llamacpp_rule_table.h"

namespace headroom::llamacpp {
namespace {

int64_t pad(int64_t x, int64_t n) { return (x + n - 1) / n * n; }  // GGML_PAD

// Bytes of a row of n elements of type t (ggml_row_size).
int64_t row_bytes(gguf::GgmlType t, int64_t n, const char* which) {
  using G = gguf::GgmlType;
  static constexpr G kAllowed[] = {G::F32, G::F16, G::BF16, G::Q8_0, G::Q4_0, G::Q4_1, G::IQ4_NL, G::Q5_0, G::Q5_1};
  const auto& tr = gguf::type_traits(t);
  if (std::find(std::begin(kAllowed), std::end(kAllowed), t) == std::end(kAllowed))
    fail_input("command line", which, fmt::format("{} is not a KV cache type llama.cpp accepts", tr.name));
  if (n % tr.block_size != 0)
    fail_input("command line", which, fmt::format("{} rows of {} elements are not a multiple of its block ({})", tr.name, n, tr.block_size));
  return n / tr.block_size * tr.type_size;
}

}  // namespace

KvRules kv_rules_for_build(int build) {
  // [INF] boundaries, see docs/llamacpp-kv.md: the ubatch-based SWA size by b6182 (a log shows
  // 640 = 128 + 512 cells), the 256 padding and per-sequence streams with PR #17046 (Nov 2025).
  if (has(Rule::KvPad256Streams, build)) return {CtxRule::Pad256Streams, SwaRule::Ubatch256, true};
  if (has(Rule::SwaUbatchSize, build)) return {CtxRule::PadForAttention, SwaRule::UbatchPadMin, false};
  return {CtxRule::PadForAttention, SwaRule::BatchPadMin, false};
}

KvCache kv_cache_size(const KvModel& m, const KvSettings& s) {
  const KvRules rules = kv_rules_for_build(s.build);
  if (s.ctx_size < 0 || s.n_parallel == 0 || s.n_parallel < -1 || s.n_ubatch <= 0 || s.n_batch <= 0)
    fail_input("command line", "--ctx-size", "negative context, batch or slot count");
  KvCache c;
  // Slots: llama-server's -np (tools/server: -1 = 4 unified slots in newer builds, else 1).
  if (s.n_parallel == -1) {
    c.n_seq_max = rules.server_four_slots ? 4 : 1;
    c.unified = true;
  } else {
    c.n_seq_max = s.n_parallel;
    c.unified = rules.ctx == CtxRule::PadForAttention || s.kv_unified || s.n_parallel == 1;
  }
  int64_t n_ctx = s.ctx_size == 0 ? m.n_ctx_train : s.ctx_size;
  if (n_ctx <= 0) fail_input("model", "context_length", "no context size: the model states none and -c is 0");
  if (n_ctx > (int64_t{1} << 32) || m.n_swa < 0 || m.n_swa > (int64_t{1} << 32) || s.n_ubatch > (int64_t{1} << 32) || s.n_batch > (int64_t{1} << 32))
    fail_input("model", "context_length", "context, window or batch above 2^32 tokens (llama.cpp keeps them in uint32)");
  int64_t n_pad = 1;
  if (rules.ctx == CtxRule::PadForAttention) {
    n_pad = s.flash_attn ? 256 : 32;  // llama_kv_cache(_unified)::get_padding
    c.n_ctx = pad(n_ctx, n_pad);
    c.n_ctx_seq = c.n_ctx / c.n_seq_max;
    c.n_stream = 1;
    c.base.cells = c.n_ctx;
  } else {
    n_pad = 256;
    c.n_ctx = pad(n_ctx, 256);
    if (c.unified) {
      c.n_ctx_seq = c.n_ctx;
    } else {
      c.n_ctx_seq = pad(c.n_ctx / c.n_seq_max, 256);
      c.n_ctx = c.n_ctx_seq * c.n_seq_max;  // "n_ctx is not divisible by n_seq_max - rounding down to"
    }
    c.n_stream = c.unified ? 1 : c.n_seq_max;
    c.base.cells = c.n_ctx_seq;
  }
  // The SWA cache (llama_kv_cache_iswa), per stream.
  const int64_t seqs = c.unified ? c.n_seq_max : 1;
  switch (rules.swa) {
    case SwaRule::BatchPadMin: c.swa.cells = std::min(c.base.cells, pad(m.n_swa * c.n_seq_max + s.n_batch, n_pad)); break;
    case SwaRule::UbatchPadMin: c.swa.cells = std::min(c.base.cells, pad(m.n_swa * seqs + s.n_ubatch, n_pad)); break;
    case SwaRule::Ubatch256: c.swa.cells = pad(std::min(c.base.cells, m.n_swa * seqs + s.n_ubatch), 256); break;
  }
  if (s.swa_full) c.swa.cells = c.base.cells;
  bool any_swa = false;
  // bytes += row x cells x streams, refusing what int64 cannot hold (hostile metadata, absurd -c).
  auto add = [&](int64_t& bytes, int64_t row, int64_t cells) {
    int64_t b = 0;
    if (__builtin_mul_overflow(row, cells, &b) || __builtin_mul_overflow(b, static_cast<int64_t>(c.n_stream), &b) ||
        __builtin_add_overflow(bytes, b, &bytes))
      fail_input("model", "KV cache", "size overflows 64-bit bytes");
  };
  for (const auto& l : m.layers) {
    if (l.k_gqa == 0 && l.v_gqa == 0) continue;  // no KV (recurrent) layer
    if (l.k_gqa < 0 || l.v_gqa < 0) fail_input("model", "KV cache", "negative K/V width");
    KvCacheLine& line = l.swa ? c.swa : c.base;
    any_swa = any_swa || l.swa;
    line.layers += 1;
    add(line.k_bytes, row_bytes(s.type_k, l.k_gqa, "--cache-type-k"), line.cells);
    add(line.v_bytes, row_bytes(s.type_v, l.v_gqa, "--cache-type-v"), line.cells);
  }
  if (!any_swa) c.swa = {};
  return c;
}

}  // namespace headroom::llamacpp
