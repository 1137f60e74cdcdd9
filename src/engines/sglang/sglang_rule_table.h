// SGLang's memory rules as rows (rules.h): its era and the build-dependent behaviours are read
// from here (sglang_era.cpp).
#pragma once
#include <span>

#include "engines/sglang/sglang_rules.h"
#include "headroom/rules.h"

namespace headroom::sglang {

enum class Rule { TpDefaultFraction, TieredReserve, ReserveHeuristic, MemoryHook, LegacyPiecewiseGraph, LegacyDsv4Pool, EarlyRocmDsv4Rings, NemotronNas,
                  NcclInCapturedGraphs, SmallGpuTierRaised, Count };

std::span<const EngineRule> rule_table();
bool has(Rule r, const RuleVersion& v);
RuleVersion rule_version(const EraInfo& era);

}  // namespace headroom::sglang
