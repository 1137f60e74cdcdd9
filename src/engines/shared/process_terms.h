// Process-level terms that every PyTorch-based engine pays the same way and calls with its own
// parameters: the CUDA context and NCCL communicators, the non-torch growth of a profiling
// forward, a forward pass's temporaries with the sampler beside them, and unified-memory
// devices. Fitted on vLLM's startup logs (the only engine that prints each of them); the
// figures and their cases are in docs/engines/vllm.md.
#pragma once
#include <cstdint>
#include <string>

#include "engines/shared/estimate.h"
#include "headroom/layout.h"
#include "headroom/model.h"

namespace headroom {

// CUDA context + NCCL communicators before any weight, by world size alone (fitted on logs of
// every vLLM era; vLLM's own plan refines it by era and fabric).
Estimate context_and_nccl(int tp, int pp, bool amd);
// Memory outside torch that a profiling forward grows (cuBLAS / NCCL / custom all-reduce
// workspaces), by world size alone.
Estimate non_torch_growth(int tp_pp_world);
// Jetson Orin / Thor and DGX Spark (GB10): GPU and host share one LPDDR pool.
bool unified_memory_device(int sm);
// What a CUDA-graph capture adds on such a device beyond the discrete GPU's figure: the engines
// measure capture as free memory before - after, and there free memory is the system's, so the
// host-side growth of capturing (graph instantiation, compiled code, Python objects) counts.
Estimate unified_memory_capture_growth();

// Bytes per logit the sampler holds at its peak, with the ends of the other paths of a build.
struct SamplerBytes {
  double central, low, high;
  std::string what;
};
// The torch peak of one profiling step of `tokens` tokens (residual + hidden + the largest layer
// temporary: attention, MLP, fused-MoE caches, Gated-DeltaNet projections), bf16, on one TP rank.
double forward_temporaries(const ModelConfig& c, const Parallel& par, int64_t tokens);
// The profile step's peak: the forward, or (on the last pipeline stage) `requests` dummy
// requests x vocabulary x the sampler's bytes per logit plus the hidden states, whichever is
// larger; ends 0.6..1.6 of a forward peak, the sampler's own paths for a sampler peak.
// `extra_forward` is added to the forward (model-specific temporaries alive with it).
Estimate profile_peak(const ModelConfig& c, const Parallel& par, int64_t tokens, int64_t requests, bool last_pp_rank,
                      const SamplerBytes& sampler, double extra_forward = 0);

}  // namespace headroom
