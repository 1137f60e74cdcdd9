// The name table of Cause: each cause code's spelling in the doctor's JSON and text.
#include "headroom/cause.h"

#include <utility>

#include "headroom/name_table.h"

namespace headroom {

namespace {

constexpr std::pair<Cause, std::string_view> kCauseNames[] = {
    {Cause::None, "none"},
    {Cause::NotOom, "not_oom"},
    {Cause::NoErrorInLog, "no_error_in_log"},
    {Cause::OomStageUnknown, "oom_stage_unknown"},
    {Cause::OtherProcess, "other_process"},
    {Cause::Fragmentation, "fragmentation"},
    {Cause::WeightsDoNotFit, "weights_do_not_fit"},
    {Cause::StaticFractionTooHigh, "static_fraction_too_high"},
    {Cause::StaticFractionTooLow, "static_fraction_too_low"},
    {Cause::GraphCaptureHeadroom, "graph_capture_headroom"},
    {Cause::KvTooSmallForContext, "kv_too_small_for_context"},
    {Cause::StateCacheTooSmall, "state_cache_too_small"},
    {Cause::ActivationPeak, "activation_peak"},
    {Cause::KvCacheDoesNotFit, "kv_cache_does_not_fit"},
    {Cause::ComputeBufferDoesNotFit, "compute_buffer_does_not_fit"},
};

}  // namespace

std::string_view name(Cause c) { return name_in(kCauseNames, c, "none"); }

std::optional<Cause> parse_cause(std::string_view s) { return parse_in(kCauseNames, s); }

}  // namespace headroom
