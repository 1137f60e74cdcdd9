// llama.cpp's estimated constants, one row each of llamacpp_constants.cpp (include/headroom/estimates.h).
#pragma once
#include <cstddef>

#include "headroom/estimates.h"

namespace headroom::llamacpp {

// Indexed into the table: keep the order of the rows.
enum class Const { RuntimeContext, MmprojCompute, ComputeResidualCopies, ComputeRange, Count };
const EstimatedConstant& constant(Const k);

}  // namespace headroom::llamacpp
