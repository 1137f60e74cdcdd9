// plan(): picks the engine model for a deployment.
#include "headroom/engine.h"
#include "headroom/error.h"

namespace headroom {

namespace {
// --env for engines whose model reads no environment variable yet: said, not dropped silently
// (with the other notes: only when detail is asked for, as vLLM's settings notes are).
Forecast with_env_notes(Forecast f, const Deployment& d, const PlanOptions& opt) {
  if (!opt.detail) return f;
  for (const auto& [name, value] : d.env)
    f.notes.push_back(name + "=" + value + ": environment variable not modelled for this engine; the forecast is the same as without it");
  return f;
}
}  // namespace

Forecast plan(const Deployment& d, const PlanOptions& opt) {
  switch (d.engine) {
    case EngineKind::SGLang: return with_env_notes(plan_sglang(d, opt), d, opt);
    case EngineKind::VLLM: return plan_vllm(d, opt);
    case EngineKind::TRTLLM: return with_env_notes(plan_trtllm(d, opt), d, opt);
    case EngineKind::LlamaCpp: break;
  }
  fail_input("--engine", "llamacpp", "llama.cpp forecasts are not implemented yet");
}

}  // namespace headroom
