// The estimated constants of engines/shared/ (process_terms.cpp, capture_terms.cpp, graph_nodes.h),
// one row each of shared_constants.cpp (include/headroom/estimates.h).
#pragma once
#include <cstddef>

#include "headroom/estimates.h"

namespace headroom::shared {

// Indexed into the table: keep the order of the rows.
enum class Const {
  ContextOneGpu, ContextOneGpuAmd, ContextMultiGpu, NonTorchOneGpu, NonTorchMultiGpu, ProfilePeakRange,
  GraphFixedBuffers, GraphPerGdnLayer, GraphRange, DrafterGraphRange, GraphNodeBytes, UmaCaptureGrowth,
  Count
};
const EstimatedConstant& constant(Const k);

}  // namespace headroom::shared
