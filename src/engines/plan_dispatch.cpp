// plan(): picks the engine model for a deployment.
#include <fmt/format.h>

#include "headroom/engine.h"
#include "headroom/engine_traits.h"
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

// One line instead of numbers where the engine does not run on the GPU, or headroom does not model
// it there: TensorRT-LLM is NVIDIA-only; vLLM and SGLang are modelled in their CUDA and ROCm builds,
// not on Apple Silicon (Metal) or Intel (XPU). llama.cpp runs on every catalog GPU.
void require_engine_on_gpu(const Deployment& d) {
  if (d.engine == EngineKind::LlamaCpp || (d.gpu.vendor != "apple" && d.gpu.vendor != "intel")) return;
  const std::string_view engine = traits(d.engine).display;
  const std::string_view where = d.gpu.vendor == "apple" ? "Apple Silicon" : "Intel GPUs";
  if (d.engine == EngineKind::TRTLLM)
    fail_input("--gpu", d.gpu.name, fmt::format("{} runs on NVIDIA GPUs only; use --engine llamacpp", engine));
  fail_input("--gpu", d.gpu.name, fmt::format("{} on {} is not modelled (headroom models its CUDA and ROCm builds); use --engine llamacpp", engine, where));
}

Forecast plan_engine(const Deployment& d, const PlanOptions& opt) {
  require_engine_on_gpu(d);
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
