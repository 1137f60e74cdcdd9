// TensorRT-LLM's estimated constants, one row each of trtllm_constants.cpp (include/headroom/estimates.h).
#pragma once
#include <cstddef>

#include "headroom/estimates.h"

namespace headroom::trtllm {

// Indexed into the table: keep the order of the rows.
enum class Const { ExecContextPerToken, RuntimeBuffers, PytorchExecutorOverhead, GraphUnit, SamplerBytes, UnifiedMemoryOutsideTorch, Count };
const EstimatedConstant& constant(Const k);

}  // namespace headroom::trtllm
