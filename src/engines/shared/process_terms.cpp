// Process-level terms every PyTorch-based engine pays the same way (process_terms.h): CUDA
// context and NCCL, non-torch growth, a profiling forward's temporaries and the sampler beside
// them. Constants fitted on vLLM's logs (the cases are quoted beside each).
#include "engines/shared/process_terms.h"

#include <algorithm>
#include <fmt/format.h>

#include "engines/shared/shared_constants.h"
#include "headroom/units.h"

namespace headroom {

namespace {
// A GiB row of shared_constants.cpp as an estimate whose ends are the row's.
Estimate gib_row(shared::Const k, std::string basis) {
  const EstimatedConstant& c = shared::constant(k);
  return range_of(c, c.central * GiB, std::move(basis));
}
}  // namespace

Estimate range(double central, double lo_factor, double hi_factor, std::string basis) {
  Estimate e;
  e.central = static_cast<int64_t>(central);
  e.low = static_cast<int64_t>(central * lo_factor);
  e.high = static_cast<int64_t>(central * hi_factor);
  e.basis = std::move(basis);
  return e;
}

Estimate range_of(const EstimatedConstant& k, double central, std::string basis) {
  return range(central, k.low / k.central, k.high / k.central, std::move(basis));
}

Estimate context_and_nccl(int tp, int pp, bool amd) {
  // Era-blind; vLLM's multi-GPU plan takes its era form (vllm_estimates.cpp cuda_context).
  // Free memory before the budget check, logged as "Free memory on device (F/T GiB)":
  // T - F = 0.49 (1 GPU, vllm-019), 0.51 (vllm-054), 0.56 (vllm-082); 0.60 (TP2, vllm-048),
  // 0.96 (TP4, vllm-052), 1.55 (TP4, vllm-071). vllm-009 started at u=0.98 of 22.36 GiB, so
  // the single-GPU context can be <= 0.45 GiB.
  using shared::Const;
  if (tp * pp <= 1) return gib_row(amd ? Const::ContextOneGpuAmd : Const::ContextOneGpu, "CUDA context (1 GPU), fitted to logged free memory at start");
  return gib_row(Const::ContextMultiGpu, "CUDA context + NCCL communicators (multi-GPU), fitted to logged free memory at start");
}

Estimate non_torch_growth(int world) {
  // Era-blind. Its multi-GPU figure mixes the eras vLLM's non_torch_increase splits: the 0.10.2
  // figure holds NCCL's buffers, the 2026 ones do not.
  // "non-torch forward increase memory" / non-torch memory in the logs: 0.02 (vllm-019),
  // 0.03 (vllm-017), 0.30 (consumed - weights, vllm-053) on one GPU; 1.38 (TP2, vllm-048),
  // 0.13 (TP4, vllm-071), 1.70 (TP4 consumed - weights, vllm-052) with NCCL / custom all-reduce.
  if (world <= 1) return gib_row(shared::Const::NonTorchOneGpu, "non-torch growth in profile_run (cuBLAS workspaces), 1 GPU");
  // n = 4 multi-GPU figures: 0.13 .. 1.70 logged, and ~2.5 GiB implied by vllm-001 (TP4 H100,
  // 2025: 71.27 requested - 55.12 weights - 8.11 available - ~5.5 sampler peak), so the
  // unfavourable end is 2.6 GiB (2.0x).
  return gib_row(shared::Const::NonTorchMultiGpu,
                 "non-torch growth in profile_run (NCCL / custom all-reduce buffers), multi-GPU (logged 0.13 .. 1.70 GiB, ~2.5 implied)");
}

bool unified_memory_device(int sm) { return sm == 87 || sm == 110 || sm == 121; }

Estimate unified_memory_capture_growth() {
  const EstimatedConstant& c = shared::constant(shared::Const::UmaCaptureGrowth);
  return Estimate{static_cast<int64_t>(c.central * GiB), static_cast<int64_t>(c.low * GiB), static_cast<int64_t>(c.high * GiB),
                  "host memory growth during capture on unified memory (ESTIMATE: two vLLM DGX Spark logs +0.5 GiB, one SGLang log +2.6)"};
}

double forward_temporaries(const ModelConfig& c, const Parallel& par, int64_t tokens) {
  //  residual + hidden (2 x N x h x 2 B) + the largest layer temporary: attention qkv + output,
  //  dense MLP gate_up + act, or fused-MoE caches (router logits N x E x 4, cache1 N*k*2I/tp*2,
  //  cache2 N*k*I/tp*2, cache3 N*k*h*2), or a Gated-DeltaNet layer's projections.
  const double b = 2;  // bf16 activations
  int tp = std::max(1, par.tp);
  double n = static_cast<double>(tokens), h = static_cast<double>(c.hidden_size);
  double heads = static_cast<double>(std::max<int64_t>(1, c.num_attention_heads));
  double d = static_cast<double>(c.head_dim > 0 ? c.head_dim : (c.hidden_size / std::max<int64_t>(1, c.num_attention_heads)));
  double kvh = static_cast<double>(std::max<int64_t>(1, (c.num_kv_heads > 0 ? c.num_kv_heads : c.num_attention_heads) / tp));
  double resident = 2 * n * h * b;
  double attn = n * (heads / tp + 2 * kvh) * d * b + n * (heads / tp) * d * b;
  if (c.mla) attn = n * (heads / tp) * static_cast<double>(c.qk_nope_head_dim + c.qk_rope_head_dim + c.qk_nope_head_dim + 128) * b;
  double mlp = 0;
  if (c.intermediate_size > 0) mlp = n * 3.0 * static_cast<double>(c.intermediate_size) / tp * b;
  double moe = 0;
  if (c.is_moe()) {
    // fused_moe caches are sized for all N x top_k token-expert pairs (expert parallel keeps
    // the full intermediate per expert; TP shards it): cache1 2I, cache2 I, cache3 h.
    // Checked on Qwen3-235B-FP8 TP4 EP (vllm-057/058): +4.83 GiB from N = 32,768 to 65,536,
    // i.e. 158 KB/token = 8 x (3 x 1,536 + 4,096) x 2 B + residual.
    double k = static_cast<double>(std::max<int64_t>(1, c.experts_per_token));
    double im = static_cast<double>(c.moe_intermediate_size) / (par.ep > 1 ? 1 : tp);
    moe = n * static_cast<double>(c.num_experts) * 4 + n * k * (3 * im + h) * b;
  }
  double gdn = 0;
  if (c.has_linear_attention()) {
    // Gated-DeltaNet layers in a profile run without attention metadata: the chunked kernels never
    // run (docs/engines/vllm.md, "profile run"); the layer holds the in_proj_qkvz output
    // [N, 2 x key_dim + 2 x value_dim] (Qwen3-Next's interleaved layout adds a [N, 2 x key_dim +
    // value_dim] copy), core_attn_out [N, value_dim] and the gated RMSNorm's output, all / tp, bf16.
    const double kd = static_cast<double>(c.linear_num_key_heads * c.linear_key_head_dim) / tp;
    const double vd = static_cast<double>(c.linear_num_value_heads * c.linear_value_head_dim) / tp;
    const bool interleaved = c.model_type == "qwen3_next";
    gdn = n * (2 * kd + 2 * vd + (interleaved ? 2 * kd + vd : 0) + 2 * vd) * b;
  }
  return resident + std::max({attn, mlp, moe, gdn});
}

Estimate profile_peak(const ModelConfig& c, const Parallel& par, int64_t tokens, int64_t requests, bool last_pp_rank,
                      const SamplerBytes& path, double extra_forward) {
  const double b = 2;
  const double n = static_cast<double>(tokens), h = static_cast<double>(c.hidden_size);
  const double forward = forward_temporaries(c, par, tokens) + extra_forward;
  // Sampler: R = min(S, N) dummy requests x vocab V x the bytes per logit alive together at the
  // sampler's peak, plus the forward's hidden_states [N, h] still held while it runs.
  const int64_t reqs = std::min(requests, tokens);
  const double rv = static_cast<double>(reqs) * static_cast<double>(c.vocab_size);
  double sampler = 0;
  if (last_pp_rank) sampler = rv * path.central + n * h * b;
  const double central = std::max(forward, sampler);
  double lo = shared::constant(shared::Const::ProfilePeakRange).low, hi = shared::constant(shared::Const::ProfilePeakRange).high;
  if (last_pp_rank && sampler > forward) {
    // The sampler sets the peak: the ends are the other sampler paths, not a fitted factor, at
    // least 10% above the central for the allocator's block rounding and the small per-request
    // tensors not counted (a GUESS), and a little below it at the low end.
    lo = std::min(std::max(forward, rv * path.low + n * h * b) / central, 0.95);
    hi = std::max(std::max(forward, rv * path.high + n * h * b) / central, 1.1);
  }
  return range(central, lo, hi,
               fmt::format("profile_run torch peak at max_num_batched_tokens={} (forward {:.2f} GiB, sampler {:.2f} GiB for {} requests: {})", tokens,
                           forward / GiB, sampler / GiB, reqs, path.what));
}

}  // namespace headroom
