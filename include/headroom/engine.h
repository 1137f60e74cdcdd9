// Engine models: turn a Deployment into a Forecast by playing that engine's startup
// sequence, for the engine version asked for, on each rank.
#pragma once
#include "headroom/deployment.h"
#include "headroom/forecast.h"
#include <optional>

namespace headroom {

struct PlanOptions {
  bool detail = true;  // false: skip log lines and item lists (tune/fit inner loops)
  // Measured free memory (e.g. from a log) that replaces the estimate: before weights (SGLang's
  // P, "Load weight begin. avail mem") and after weights (A, "Load weight end ... avail mem").
  std::optional<int64_t> pre_load_free_bytes, post_load_free_bytes;
  // Calibration from a log (doctor): memory the log shows in use before CUDA-graph capture
  // beyond what the model explains, and the least memory capture was seen to need.
  int64_t extra_before_capture_bytes = 0;
  int64_t graph_floor_bytes = 0;
};

// Dispatches on deployment.engine. Throws InputError for flags the engine would reject,
// with the engine's own wording.
Forecast plan(const Deployment& d, const PlanOptions& opt = {});

Forecast plan_sglang(const Deployment& d, const PlanOptions& opt);
Forecast plan_vllm(const Deployment& d, const PlanOptions& opt);
Forecast plan_trtllm(const Deployment& d, const PlanOptions& opt);

// Engine flags (engine spelling) accepted by each engine model.
const std::vector<std::string_view>& sglang_flags();
const std::vector<std::string_view>& vllm_flags();
const std::vector<std::string_view>& trtllm_flags();

}  // namespace headroom
