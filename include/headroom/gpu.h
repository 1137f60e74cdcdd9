// The GPU catalog (data/gpus.json): capacities as PyTorch and nvidia-smi report them,
// architecture, FP8/FP4 support, bandwidth, interconnect, each with its source.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

struct GpuSpec {
  std::string name;                  // canonical catalog name, e.g. "rtx-pro-6000"
  std::string display;               // "NVIDIA RTX PRO 6000 Blackwell"
  std::vector<std::string> aliases;  // lower-case
  std::string vendor;                // "nvidia" | "amd" | "intel" | "apple"
  std::string arch;                  // "blackwell", "hopper", ...
  int sm = 0;                        // compute capability x10 (120, 90, 100, ...); 0 for AMD
  int64_t capacity_bytes = 0;        // torch.cuda.get_device_properties().total_memory
  int64_t smi_total_mib = 0;         // nvidia-smi --query-gpu=memory.total (MiB)
  bool fp8 = false;
  bool fp4 = false;
  double bandwidth_tbs = 0;          // TB/s
  // How the GPUs of one host reach each other (data/gpus.json "_interconnect" cites each class):
  // "nvswitch" (SXM/HGX/NVL72 boards), "nvlink" (bridged groups, superchip pairs), "pcie",
  // "xgmi" (AMD Infinity Fabric), "network" (one GPU per system); "" for a custom GPU.
  std::string interconnect;
  std::string source;                // where the memory figures come from
};

const std::vector<GpuSpec>& gpu_catalog();
// Case-insensitive lookup by name or alias; nullptr when unknown. Apple Silicon is parametric
// ("apple-m3-max-64gb", "m2-ultra-192gb": src/gpu/apple_silicon.h).
const GpuSpec* find_gpu(std::string_view name);
// The row for a GPU as nvidia-smi / NVML names it, with the total memory it reports (0 = not
// known); nullptr when no row matches.
const GpuSpec* find_gpu_for_host(std::string_view reported_name, int64_t smi_total_bytes);
// Throws InputError("--gpu", ...) listing close names when unknown; an Apple chip without its
// memory size says which sizes to add.
const GpuSpec& require_gpu(std::string_view name);
// The interconnect classes above; is_interconnect() says whether a string is one of them.
inline constexpr std::string_view kInterconnects[] = {"nvswitch", "nvlink", "pcie", "xgmi", "network"};
bool is_interconnect(std::string_view s);

}  // namespace headroom
