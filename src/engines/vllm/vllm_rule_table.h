// vLLM's memory rules as rows (rules.h): the Era flags are read from here (vllm_era.cpp).
#pragma once
#include <span>

#include "headroom/rules.h"

namespace headroom::vllm {

enum class Rule {
  V1Engine, V0ContextInBaseline, PerInstanceBudget, KvCacheMemoryBytes, GraphOutputsPerSize, FullAndPiecewise,
  NcclBeforeSnapshot, SuggestionGib, FormatGib, GraphEstimateLogged, GraphEstimateApplied, CeilRequest,
  TokensFromConcurrency, OverrideSetsMemory, Utilization092, ModelsTypo, SwaInFlight, TotalConsumed, CombinedKvLine,
  Count
};

std::span<const EngineRule> rule_table();
// In force for release v (a*10000 + b*100 + c).
bool has(Rule r, int v);

}  // namespace headroom::vllm
