// plan(): picks the engine model for a deployment.
#include "headroom/engine.h"
#include "headroom/error.h"

namespace headroom {

Forecast plan(const Deployment& d, const PlanOptions& opt) {
  switch (d.engine) {
    case EngineKind::SGLang: return plan_sglang(d, opt);
    case EngineKind::VLLM: return plan_vllm(d, opt);
    case EngineKind::TRTLLM: return plan_trtllm(d, opt);
    case EngineKind::LlamaCpp: break;
  }
  fail_input("--engine", "llamacpp", "llama.cpp forecasts are not implemented yet");
}

}  // namespace headroom
