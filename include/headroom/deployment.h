// A deployment = (model, cluster, engine settings), built from the common command-line
// options of CONTRACT.md. Engine flags stay as given (engine spelling); each engine model
// resolves their defaults the way that engine version does.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "headroom/calibration.h"
#include "headroom/cli.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/parallel.h"

namespace headroom {

struct Deployment {
  EngineKind engine = EngineKind::SGLang;
  std::string engine_version;              // as given after '@'; empty = newest known
  std::shared_ptr<const Model> model;
  std::string model_spec;                  // what --model said
  GpuSpec gpu;                             // catalog entry (capacity overridden by --gpu-memory)
  int64_t capacity_bytes = 0;              // per GPU, as PyTorch reports total memory
  int gpus = 1;
  // --gpu A,B,...: devices of different kinds in device order (llama.cpp only); empty = gpus x gpu.
  std::vector<GpuSpec> gpu_list;
  Parallel par;
  std::vector<std::pair<std::string, std::string>> flags;  // engine flags, in the order given
  // --env NAME=VALUE: the engine's environment variables that change its memory arithmetic
  // (e.g. VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0); an engine model notes the ones it ignores.
  std::vector<std::pair<std::string, std::string>> env;
  // --compile-cache cold|warm: the state of vLLM's torch.compile cache at start (~/.cache/vllm/
  // torch_compile_cache): cold on a first start or in a fresh container, warm on a restart that kept
  // it. Empty = not said (each engine model states what it assumes).
  std::string compile_cache;
  // --host-memory: RAM the server may use (llama.cpp only); 0 = not given, the host is not checked.
  int64_t host_memory_bytes = 0;
  // --host-state: memory other processes hold on each of this deployment's GPUs when it starts
  // (device order, after CUDA_VISIBLE_DEVICES); empty = nothing else on the GPUs.
  std::vector<int64_t> held_by_others;
  std::string host_state_source;  // where that was read ("hosts.csv", "NVML", "server chat")
  // --profile NAME / HEADROOM_PROFILE: the host's calibrated terms (attach_profile, calibrate.h);
  // every plan of this deployment (and of the copies tune, fit and compare make) uses them.
  std::shared_ptr<const Calibration> calibration;

  const std::string* flag(std::string_view name) const;   // last value given, or nullptr
  const std::string* env_value(std::string_view name) const;  // last --env value given, or nullptr
  // An --env boolean as vLLM's envs.py and SGLang's get_bool_env_var read one: "1" or "true" in
  // any case (spaces trimmed) is on; unset or anything else is off. The last value given counts.
  bool env_on(std::string_view name) const;
  // Memory held by others on device i (0 when not given), and the most on any of its GPUs: the
  // engines that size every rank alike (vLLM, SGLang, TensorRT-LLM) plan all ranks on the latter.
  int64_t held_by_others_on(size_t device) const { return device < held_by_others.size() ? held_by_others[device] : 0; }
  int64_t held_by_others_max() const;
};

// Options every deployment verb accepts (besides the engine's own flags).
const std::vector<std::string_view>& common_deployment_options();

// Builds a deployment from parsed arguments. Defaults: engine sglang (newest), 1 GPU.
// Throws InputError for missing/contradictory values. `default_model`/`default_gpu` fill in
// when --model/--gpu are absent (empty = required).
Deployment parse_deployment(const Args& args, std::string_view default_model = {},
                            std::string_view default_gpu = {});

// Parses "sglang", "vllm@0.10.2", "trtllm", "llamacpp" into (kind, version).
std::pair<EngineKind, std::string> parse_engine_spec(std::string_view spec);

// The date of a build a version names as "LABEL@YYYY[-MM[-DD]]" (main@2025-10-16, unknown@2026-03),
// as yyyymmdd; a bare year reads as its 28 December and a month as its 28th, so a release table
// gives the newest release of that period. nullopt when there is no '@' or no year 2023..2100 after it.
std::optional<int> dated_build_ymd(std::string_view version);

}  // namespace headroom
