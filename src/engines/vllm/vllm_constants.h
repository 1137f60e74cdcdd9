// vLLM's estimated constants, one row each of vllm_constants.cpp (include/headroom/estimates.h).
// The derivations stay beside the code that reads them (vllm_estimates.cpp) and in docs/engines/vllm.md.
#pragma once
#include <cstddef>

#include "headroom/estimates.h"

namespace headroom::vllm {

// Indexed into the table: keep the order of the rows.
enum class Const {
  ContextEraB, ContextPcie, ContextNvlink,
  NonTorchConsumedOneGpu, NonTorchPcieEraB, NonTorchPcie, NonTorchEraBPerRank, NonTorchConsumedTwoGpus, NonTorchConsumedMoreGpus,
  NonTorchAfterNccl, UmaHostGrowth, ColdCompile,
  GraphPiecewiseUnit, GraphFullUnit, GraphPerGraphUnit, GraphCaptureRange, HybridFullWarmup, NcclCapturedGraphs, V2CaptureAfterProfiling,
  V1EstimateOverCapture, V2Estimator, OutputsPerSizeFactor, SamplerTopkTopp,
  Count
};
const EstimatedConstant& constant(Const k);

}  // namespace headroom::vllm
