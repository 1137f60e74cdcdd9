// Memoized weights_per_rank(): tune, fit and doctor plan the same model and parallelism many
// times; the per-rank layout walks the whole tensor inventory, so it is computed once.
#pragma once
#include <memory>
#include <vector>

#include "headroom/layout.h"

namespace headroom {

// Thread-safe; returns a copy (a few dozen ranks). Keeps the model alive while cached; at most
// 4096 entries (later ones are computed, not kept).
std::vector<RankWeights> cached_weights_per_rank(const std::shared_ptr<const Model>& model, EngineKind engine,
                                                        const Parallel& par);

}  // namespace headroom
