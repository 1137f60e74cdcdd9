// The doctor's cause codes (CONTRACT doctor) as one enum, with the one table of their names: the
// strings its JSON and text output use.
#pragma once
#include <optional>
#include <string_view>

namespace headroom {

enum class Cause {
  None, NotOom, NoErrorInLog, OomStageUnknown, OtherProcess, Fragmentation,
  WeightsDoNotFit, StaticFractionTooHigh, StaticFractionTooLow, GraphCaptureHeadroom,
  KvTooSmallForContext, StateCacheTooSmall, ActivationPeak,
  KvCacheDoesNotFit, ComputeBufferDoesNotFit,  // llama.cpp's buffers
};

std::string_view name(Cause c);
std::optional<Cause> parse_cause(std::string_view s);

}  // namespace headroom
