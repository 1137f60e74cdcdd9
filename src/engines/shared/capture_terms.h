// CUDA-graph capture of PyTorch models (torch.cuda.graph over the decoder layers, as vLLM and
// TensorRT-LLM's PyTorch backend capture them): the graph pool and graph objects as captured
// graphs x decoder layers x a cost per (graph x layer) that each engine passes from its own fit,
// and a drafter's graph objects.
#pragma once
#include <cstdint>

#include "engines/shared/estimate.h"
#include "headroom/model.h"

namespace headroom {

// The MiB per (graph x layer) of a PIECEWISE capture and of a FULL one.
struct GraphUnit {
  double piecewise, full;
};
// Graphs x layers x unit + 16 MiB of fixed buffers (range 0.7..1.6). Gated-DeltaNet layers cost
// `unit` when gdn_as_attention, else the MoE-hybrid figure 1.88 MiB / tp per (graph x layer).
Estimate layer_graph_memory(const ModelConfig& c, int64_t layers, int64_t linear_layers, int64_t piecewise, int64_t full, int tp,
                            bool gdn_as_attention, GraphUnit unit);
// A drafter compiled piecewise at the target's sizes: its graph objects (~3 KiB per kernel node).
Estimate drafter_graph_memory(int64_t piecewise_graphs, int64_t drafter_layers, double kernels_per_layer);

}  // namespace headroom
