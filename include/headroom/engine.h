// Engine models: turn a Deployment into a Forecast by playing that engine's startup
// sequence, for the engine version asked for, on each rank.
#pragma once
#include "headroom/calibration.h"
#include "headroom/deployment.h"
#include "headroom/forecast.h"
#include <optional>
#include <string>

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
  // A host profile's terms (headroom calibrate, --profile); unset: the models' estimates.
  // plan() fills it from Deployment::calibration when the caller left it unset.
  std::optional<Calibration> calibration;
  // A log replayed on another machine (doctor, validate): files the log names that are not here
  // (llama.cpp's -md draft GGUF) are said in the notes and cap the verdict at "at risk" instead of
  // failing the plan; a user's own command line keeps them an error.
  bool files_elsewhere = false;
};

// Dispatches on deployment.engine. Throws InputError for flags the engine would reject,
// with the engine's own wording.
Forecast plan(const Deployment& d, const PlanOptions& opt = {});

Forecast plan_sglang(const Deployment& d, const PlanOptions& opt);
Forecast plan_vllm(const Deployment& d, const PlanOptions& opt);
Forecast plan_trtllm(const Deployment& d, const PlanOptions& opt);
Forecast plan_llamacpp(const Deployment& d, const PlanOptions& opt);

// The longest context the engine accepts for the deployment's model without an override, as
// the engine derives it (engines/context_limit.cpp); nullopt when the deployment's --env lifts
// the limit (VLLM_ALLOW_LONG_MAX_MODEL_LEN, SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN,
// TLLM_ALLOW_LONG_MAX_MODEL_LEN), the engine keeps any length (a TensorRT-LLM TensorRT engine or a
// release before 1.1) or the config gives none.
struct ContextLimit {
  int64_t tokens = 0;
  std::string rule;  // where the figure comes from, for messages
};
std::optional<ContextLimit> context_limit(const Deployment& d);
// SGLang's derived context_length (the default --context-length).
int64_t sglang_derived_context_length(const ModelConfig& c);
// TensorRT-LLM's inferred max_seq_len (the default --max_seq_len, and what a longer one is cut to).
int64_t trtllm_inferred_max_seq_len(const ModelConfig& c);

// Engine flags (engine spelling) accepted by each engine model.
const std::vector<std::string_view>& sglang_flags();
// SGLang flags accepted whose memory effect is not modelled, with what it would change.
const std::vector<std::pair<std::string_view, std::string_view>>& sglang_unmodelled_flags();
const std::vector<std::string_view>& vllm_flags();
const std::vector<std::string_view>& trtllm_flags();

}  // namespace headroom
