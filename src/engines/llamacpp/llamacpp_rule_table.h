// llama.cpp's build-dependent defaults as rows (rules.h); "release" is the build number (b6895).
#pragma once
#include <span>

#include "headroom/rules.h"

namespace headroom::llamacpp {

enum class Rule { MicroBatches, OutputsPerSequence, MlaLatentKv, SwaUbatchSize, KvPad256Streams, MlaLatentKOnly, FlashAttnAuto, AllLayersOffloaded, FitOn, CpuMoeFusedGateUp, FitContextInterpolated,
                  FitKeepsExplicitCtx0, FitNStreams, FitCountsDraft,
                  FitCountsMmproj, MetalMtlNames, Count };

std::span<const EngineRule> rule_table();
bool has(Rule r, int build);  // build 0 = newest

}  // namespace headroom::llamacpp
