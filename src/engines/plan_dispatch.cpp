// plan(): picks the engine model for a deployment.
#include "headroom/engine.h"
#include "headroom/error.h"

namespace headroom {

namespace {
// --env for engines whose model reads no environment variable yet (TensorRT-LLM): said, not dropped silently
// (with the other notes: only when detail is asked for, as vLLM's settings notes are).
Forecast with_env_notes(Forecast f, const Deployment& d, const PlanOptions& opt) {
  if (!opt.detail) return f;
  // vLLM's and SGLang's models read the variables they know and note the rest themselves
  // (sglang_plan.cpp: the context-length override and DeepSeek-V4's loader variables).
  if (d.engine == EngineKind::VLLM || d.engine == EngineKind::SGLang) return f;
  // llama.cpp: environment variables (GGML_VK_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES) choose devices.
  for (const auto& [name, value] : d.env)
    f.notes.push_back(name + "=" + value + ": environment variable not modelled for this engine; the forecast is the same as without it");
  return f;
}

// A model that stood in for the id asked for (catalog_lookup.cpp) is said first, then a config
// rewritten by an engine option.
Forecast with_model_note(Forecast f, const Deployment& d, const PlanOptions& opt) {
  if (opt.detail && d.model && !d.model->override_note.empty()) f.notes.insert(f.notes.begin(), d.model->override_note);
  if (opt.detail && d.model && !d.model->resolved_note.empty()) f.notes.insert(f.notes.begin(), d.model->resolved_note);
  return f;
}

Forecast plan_engine(const Deployment& d, const PlanOptions& opt) {
  switch (d.engine) {
    case EngineKind::SGLang: return plan_sglang(d, opt);
    case EngineKind::VLLM: return plan_vllm(d, opt);
    case EngineKind::TRTLLM: return plan_trtllm(d, opt);
    case EngineKind::LlamaCpp: return plan_llamacpp(d, opt);
  }
  fail_input("--engine", "?", "unknown engine");
}
}  // namespace

Forecast plan(const Deployment& d, const PlanOptions& opt) {
  if (!opt.calibration && d.calibration) {  // a --profile on the deployment: every plan of it is calibrated
    PlanOptions o = opt;
    o.calibration = *d.calibration;
    return with_model_note(with_env_notes(plan_engine(d, o), d, o), d, o);
  }
  return with_model_note(with_env_notes(plan_engine(d, opt), d, opt), d, opt);
}

}  // namespace headroom
