// llama-server's --device LIST (common/arg.cpp parse_device_list): the GPUs the model uses, in that
// order; the plan runs on those alone and names each buffer by its device (CUDA2, CUDA1).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "headroom/deployment.h"

namespace headroom::llamacpp {

// Device names as llama.cpp prints them: the backend and the device's index on the host.
struct DeviceNaming {
  std::string backend;  // "CUDA", "ROCm", "Vulkan", "SYCL", "MTL" (Metal since ~b7780), "Metal" (one device, before)
  std::vector<int> ids; // host index of each device the plan uses; empty = 0, 1, 2, ...
  int id(size_t g) const { return ids.empty() ? static_cast<int>(g) : ids[g]; }
  std::string operator()(size_t g) const { return backend == "Metal" ? backend : backend + std::to_string(id(g)); }
  bool metal() const { return backend == "Metal" || backend == "MTL"; }
  // The pinned host buffers' type: CUDA_Host, ROCm_Host, Vulkan_Host; Metal has none (CPU).
  std::string host() const { return metal() ? "CPU" : backend + "_Host"; }
};

// "CUDA2" (ROCm, Vulkan, SYCL, MTL, Metal) -> its backend and number; nullopt for anything else.
struct DeviceName {
  std::string backend;
  int number = 0;
};
std::optional<DeviceName> parse_device_name(const std::string& name);

// The host indices --device names (empty when not given). InputError for a device that is not
// one of the --gpus, a repeated one, or "none" (no GPU: nothing for headroom to plan).
std::vector<int> device_list(const Deployment& d);
// The deployment on those GPUs alone, in that order: --gpu list, capacities and host state
// reordered; -ot and --device-draft buffer names and --tensor-split proportions mapped onto them.
Deployment on_devices(const Deployment& d, const std::vector<int>& ids, std::vector<std::string>& notes);

}  // namespace headroom::llamacpp
