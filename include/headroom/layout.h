// Per-rank weight layout: which tensors each GPU rank holds under an engine's sharding rules
// (column/row split, replication, vocab-parallel padding, expert parallel, pipeline stages).
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "headroom/model.h"
#include "headroom/parallel.h"

namespace headroom {

struct RankWeights {
  int rank = 0;      // global rank = pp_rank * tp + tp_rank
  int tp_rank = 0, pp_rank = 0;
  int64_t bytes = 0;      // weights this rank holds for the main model
  int64_t mtp_bytes = 0;  // MTP / next-n layer weights this rank would hold if the engine loads them
  int64_t fp8_bytes = 0;  // of `bytes`: FP8 (E4M3/E5M2) tensors, whose scales some kernels re-lay at load
  int64_t layer_bytes = 0;  // of `bytes`: the parameters inside this rank's decoder layers (what CPU offload can move)
  std::vector<std::pair<std::string, int64_t>> by_component;  // "attention", "experts", ...

  // Bytes of the named components on this rank (0 for names it does not hold).
  int64_t component_bytes(std::span<const std::string_view> names) const {
    int64_t sum = 0;
    for (const auto& [component, b] : by_component)
      if (std::find(names.begin(), names.end(), std::string_view(component)) != names.end()) sum += b;
    return sum;
  }
  int64_t component_bytes(std::initializer_list<std::string_view> names) const {
    return component_bytes(std::span<const std::string_view>(names.begin(), names.size()));
  }
};

// The decoder-layer Linear weights (attention, dense/shared MLP, experts, linear-attention
// projections): what online FP8 quantizes.
inline constexpr std::string_view kLinearComponents[] = {"attention", "mlp", "experts", "linear_attention"};

// Layer range [first, last) of pipeline stage pp_rank, as the engine splits layers.
std::pair<int, int> pp_layer_range(int num_layers, int pp, int pp_rank, EngineKind engine);

// Bytes per rank for the main model (and MTP layers separately), every rank of the tp x pp grid.
std::vector<RankWeights> weights_per_rank(const Model& model, EngineKind engine, const Parallel& par);

}  // namespace headroom
