// ESTIMATE of llama.cpp's compute buffers: what ggml_gallocr reserves for the worst-case graph
// (one ubatch of n_ubatch tokens against the whole KV cache). Not the engine's arithmetic: the
// largest tensors alive at once, a term per phase, with two constants read from the corpus
// (docs/llamacpp-plan.md "Compute buffer"; tests/llamacpp_plan_test.cpp checks them).
#include <algorithm>

#include "engines/llamacpp/llamacpp_constants.h"
#include "engines/llamacpp/llamacpp_rule_table.h"
#include "headroom/llamacpp_plan.h"

namespace headroom::llamacpp {

namespace {
// Residual activations alive beside the attention scores (Q, K, V, the layer input and its norm):
// kResidualCopies x (q width + n_embd) f32 rows per token. Read from llamacpp-027 (Llama-2-7B,
// 164.01 MiB = 4 MiB mask + 128 MiB KQ + 32 MiB) and llamacpp-010 (Qwen3-30B-A3B, 1080 MiB =
// 32 + 1024 + 24): both give exactly 2.
const int64_t kResidualCopies = static_cast<int64_t>(constant(Const::ComputeResidualCopies).central);
// The range said with the estimate, a GUESS: llamacpp-013's log lies 11 % above the central value
// (inside), -015's (gpt-oss on Metal) twice it (outside: a graph these terms miss).
const double kLow = constant(Const::ComputeRange).low, kHigh = constant(Const::ComputeRange).high;

struct Graph {
  int64_t ub = 0, n_kv = 0, n_kv_swa = 0;
  bool fa = true;
};

int64_t mask_bytes(const Graph& g, int64_t elem) { return (g.n_kv + g.n_kv_swa) * g.ub * elem; }

int64_t device_peak(const LlamaModel& m, const Graph& g, bool holds_output) {
  const int64_t row = g.ub * 4;  // one f32 value per token
  const int64_t q_width = m.n_head * m.head_dim;
  const int64_t scores = g.fa ? 0 : g.n_kv * m.n_head * row;  // KQ (soft_max runs in place)
  const int64_t attn = scores + kResidualCopies * (q_width + m.n_embd) * row;
  const int64_t ffn = (2 * m.n_ff + m.n_embd) * row;
  const int64_t out = holds_output ? (m.n_vocab + m.n_embd) * row : 0;
  // Flash attention takes the mask in f16 (a cast of the f32 input); without it, a copy of the f32 mask.
  return mask_bytes(g, g.fa ? 2 : 4) + std::max({attn, ffn, out});
}
}  // namespace

void estimate_compute(const LlamaModel& m, const ServerSettings& s, const KvCache* kv, Placement& p) {
  Graph g;
  g.fa = s.kv.flash_attn;
  g.n_kv = kv ? kv->base.cells : std::max<int64_t>(s.kv.ctx_size, 512);
  g.n_kv_swa = kv && kv->swa.layers > 0 ? kv->swa.cells : 0;
  g.ub = std::min(s.kv.n_ubatch, std::max<int64_t>(1, g.n_kv * (kv ? kv->n_stream : 1)));
  for (size_t d = 0; d < p.gpu.size(); ++d) {
    DeviceBuffers& b = p.gpu[d];
    if (b.layers == 0) continue;
    b.compute = device_peak(m, g, static_cast<int>(d) == p.output_device);
    b.compute_low = static_cast<int64_t>(static_cast<double>(b.compute) * kLow);
    b.compute_high = static_cast<int64_t>(static_cast<double>(b.compute) * kHigh);
  }
  // Host (pinned) compute buffer: the graph's inputs, the f32 mask and the token embeddings.
  p.host.compute = mask_bytes(g, 4) + m.n_embd * g.ub * 4;
  if (p.layers_offloaded == 0) p.host.compute = device_peak(m, g, true);
  p.host.compute_low = static_cast<int64_t>(static_cast<double>(p.host.compute) * kLow);
  p.host.compute_high = static_cast<int64_t>(static_cast<double>(p.host.compute) * kHigh);
  // Output buffer (llama_context::output_reserve): logits for one output per sequence, f32, pinned
  // host memory; before PR #6122 (~b2450) one per batch token.
  const int64_t outputs = !has(Rule::OutputsPerSequence, s.build) ? s.kv.n_batch : std::max(1, kv ? kv->n_seq_max : 1);
  p.host.output = m.n_vocab * 4 * outputs;
}

LaidOut lay_out(const LlamaModel& m, const ServerSettings& s, const std::vector<int64_t>& free_bytes) {
  const KvModel kvm = kv_model_for_build(m, s.build);
  LaidOut out;
  if (!m.kv_declined) out.kv = kv_cache_size(kvm, s.kv);
  out.p = place(m, kvm, s, free_bytes, out.kv ? &*out.kv : nullptr);
  estimate_compute(m, s, out.kv ? &*out.kv : nullptr, out.p);
  return out;
}

}  // namespace headroom::llamacpp
