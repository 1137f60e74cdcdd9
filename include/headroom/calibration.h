// Host calibration terms (headroom calibrate, --profile): figures measured on one host's own
// startup logs that replace the engine models' estimates. The engine plans read them through
// PlanOptions::calibration (or Deployment::calibration, which plan() copies there).
//
// Terms are absolute where they belong to the host (CUDA context, NCCL, memory outside the model)
// and keyed per tensor-parallel size, since NCCL and custom all-reduce buffers grow with it; terms
// that scale with the model (activation peak, CUDA-graph memory) are ratios to the estimate, so a
// profile fitted on one model carries the host's bias to another.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace headroom {

struct CalibrationAtTp {
  // SGLang: CUDA context + NCCL before weights (capacity - "Load weight begin ... avail mem");
  // vLLM: the CUDA context (capacity - "Free memory on device" / "Initial free memory").
  std::optional<int64_t> init_bytes;
  // SGLang: memory in use after the weights beyond the model's weights (signed: negative when
  // the weights took less than the model's arithmetic), and in use at capture begin beyond the
  // KV pool and the modelled workspaces (signed).
  std::optional<int64_t> after_load_extra_bytes, before_capture_extra_bytes;
  // vLLM: non-torch memory growth (as logged, or fitted to the logged KV memory).
  std::optional<int64_t> non_torch_bytes;
};

struct Calibration {
  std::string host;    // the profile's name, shown as "calibrated (host NAME)"
  std::string gpu;     // catalog name of the GPU the logs came from
  int64_t capacity_bytes = 0;
  std::string engine;  // "sglang" | "vllm"
  std::map<int, CalibrationAtTp> per_tp;
  // Logged / estimated, over the logs the profile came from.
  std::optional<double> activation_scale, graph_scale, graph_estimate_scale;

  // The terms fitted at this TP size, or nullptr.
  const CalibrationAtTp* at_tp(int tp) const {
    auto it = per_tp.find(tp);
    return it == per_tp.end() ? nullptr : &it->second;
  }
};

}  // namespace headroom
