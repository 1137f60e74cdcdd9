// vLLM's memory rules as rows (rules.h): the Era flags are read from here (vllm_era.cpp).
#pragma once
#include <span>

#include "headroom/rules.h"

namespace headroom::vllm {

enum class Rule {
  V1Engine, V0ContextInBaseline, PerInstanceBudget, KvCacheMemoryBytes, GraphOutputsPerSize, FullAndPiecewise,
  NcclBeforeSnapshot, SuggestionGib, FormatGib, GraphEstimateLogged, GraphEstimateApplied, CeilRequest,
  TokensFromConcurrency, OverrideSetsMemory, Utilization092, ModelsTypo, SwaInFlight, TotalConsumed, CombinedKvLine,
  // The cuts that were raw version comparisons in the engine model (issue 27), in release order.
  NemotronNasUnsupported, SamplerPromptTokenIds, FlashinferPre023Api, GraphSizesFromMaxNumSeqs, GptOssCapture1024,
  CompilationCaptureSizes, FlashinferSamplerUnlessFalse, PydanticMaxModelLen, Mxfp4TritonSm90, Qwen3VlVideoProfile, ModeloptKvFp8Auto,
  KvDtypeFp8DsMla, CudagraphSpecializeLora, ConservingMemoryHint, StartupErrorNamesDevice, OnlineFp8Streaming, NeededCountsPadding,
  HybridGroupSizeMax, PpWholeModelKvCheck, TritonTopkToppSampler, V2RunnerEnv, HybridAlignBlockSize, MaxModelLenAuto, KvDtypeNvfp4,
  NcclInCapturedGraphs, Dsv4Support, Dsv4BucketedBlock, Dsv4Packed, KvDtypePerTokenHead, Mrv2DenseDefault, HybridFullWarmupTransient,
  Mrv2CpuOffloadNoop, Mrv2GraphEstimateZero, HybridPrefixCachingDefault, Mrv2AllFamilies, Mrv2CaptureAfterProfiling,
  Count
};

std::span<const EngineRule> rule_table();
// In force for release v (a*10000 + b*100 + c).
bool has(Rule r, int v);

}  // namespace headroom::vllm
