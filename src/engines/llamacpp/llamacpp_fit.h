// llama.cpp's --fit: llama_params_fit's adjustment of what the user left unset (context, then
// MoE experts or offloaded layers) so every device keeps its target free (fit.cpp).
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
  std::string unmodelled;            // a step headroom does not model, said in the notes
};

// Adjusts `s` as llama_params_fit would for devices with `free` bytes each, keeping `margin`
// free and the context at least `n_ctx_min`.
FitOutcome fit_params(const LlamaModel& m, ServerSettings& s, const std::vector<int64_t>& free, int64_t margin, int64_t n_ctx_min);

}  // namespace headroom::llamacpp
