// Tune and fit plan one deployment many times with only its memory budget changed (the
// bisection of --gpu-memory-utilization, free_gpu_memory_fraction, ...). An engine model can
// keep what does not depend on that flag -- the flags resolved, the per-rank weights, the
// per-stage estimated terms -- for the last deployment it planned on the thread, and reuse it
// when the next deployment is the same but for the budget flags' values. This says whether it is.
#pragma once
#include <span>
#include <string_view>

#include "headroom/deployment.h"

namespace headroom {

// True when a and b are the same deployment (model object, engine version, GPU, capacity,
// parallelism, every flag in the same order) except for the values of the `budget` flags.
bool same_but_budget(const Deployment& a, const Deployment& b, std::span<const std::string_view> budget);

}  // namespace headroom
