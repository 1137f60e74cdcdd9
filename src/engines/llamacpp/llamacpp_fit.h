// llama.cpp's --fit: common_fit_params' adjustment of what the user left unset (context, then the
// layers per device and, for MoE models, which layers keep their experts) so every device keeps
// its target free (fit.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "headroom/llamacpp_plan.h"

namespace headroom::llamacpp {

struct FitOutcome {
  bool ran = false;
  bool failed = false;               // llama.cpp gave up ("... abort"): the start goes on as set
  bool changed = false;              // it lowered the context, the layers or moved experts
  std::vector<std::string> log;      // its llama_params_fit_impl lines, without the prefix
  std::string gave_up;               // why it gave up, in llama.cpp's words ("" when it did not)
};

// Adjusts `s` (context, -ngl, --tensor-split, fit_overrides) as common_fit_params would for devices
// with `free` bytes each, keeping `margins` free (one per device) and the context at least `n_ctx_min`; `names` label
// the devices in its log.
FitOutcome fit_params(const LlamaModel& m, ServerSettings& s, const std::vector<int64_t>& free, const std::vector<int64_t>& margins, int64_t n_ctx_min,
                      const std::vector<std::string>& names);

}  // namespace headroom::llamacpp
