// TensorRT-LLM's memory rules as rows (rules.h): the Era flags are read from here (trtllm_settings.cpp).
#pragma once
#include <span>

#include "headroom/rules.h"

namespace headroom::trtllm {

enum class Rule {
  LazyContext, TokensPerBlock64, TokensPerBlock32, PytorchDefault, Log2026, EstimationFloor,
  // The cuts that were raw version comparisons in the engine model (issue 27), in release order.
  PagesPerSequenceLine, SummaryMaxBatchSize, MaxSeqLenClamp, BlocksPerWindowLog, BlocksPerSequenceLine, AllowLongMaxSeqLen,
  Count
};

std::span<const EngineRule> rule_table();
bool has(Rule r, int v);  // release v = a*10000 + b*100 + c

}  // namespace headroom::trtllm
