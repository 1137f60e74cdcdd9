// The lines llama.cpp prints about memory, in the wording of the build's era (research notes:
// ../shared/research/llamacpp-log-eras.md), and its failure lines.
#pragma once
#include <string>
#include <vector>

#include "headroom/forecast.h"
#include "headroom/gpu.h"
#include "headroom/llamacpp_plan.h"
#include "engines/llamacpp/device_select.h"

namespace headroom::llamacpp {

// The ggml backend llama.cpp uses on this GPU: "CUDA" (NVIDIA), "ROCm" (AMD HIP builds), "Metal".
std::string backend_name(const GpuSpec& gpu, int build);
// "llama_kv_cache era (b8100+)", ... for Forecast::era.
std::string era_name(int build);
// The line llama.cpp prints when the allocation of `f` fails.
std::string failure_line(const Failure& f, const DeviceNaming& names);
std::vector<std::string> log_lines(const LlamaModel& m, const ServerSettings& s, const KvCache* kv, const Placement& p,
                                   const DeviceNaming& names);

}  // namespace headroom::llamacpp
