// --host-state live: the GPUs' memory read through the NVIDIA management library, loaded with
// dlopen at run time (never a build dependency); nullopt where the library or a driver is absent.
#include <dlfcn.h>

#include <optional>

#include "headroom/host_state.h"

namespace headroom {

namespace {
// The few NVML entry points used, with the C types of nvml.h (stable ABI since NVML 2011).
struct NvmlMemory {
  unsigned long long total, free, used;
};
using Device = void*;
using InitFn = int (*)();
using CountFn = int (*)(unsigned*);
using HandleFn = int (*)(unsigned, Device*);
using NameFn = int (*)(Device, char*, unsigned);
using MemoryFn = int (*)(Device, NvmlMemory*);

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}
}  // namespace

std::optional<HostState> read_host_state_nvml() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return std::nullopt;
  const auto init = symbol<InitFn>(lib, "nvmlInit_v2");
  const auto shutdown = symbol<InitFn>(lib, "nvmlShutdown");
  const auto count = symbol<CountFn>(lib, "nvmlDeviceGetCount_v2");
  const auto handle = symbol<HandleFn>(lib, "nvmlDeviceGetHandleByIndex_v2");
  const auto name = symbol<NameFn>(lib, "nvmlDeviceGetName");
  const auto memory = symbol<MemoryFn>(lib, "nvmlDeviceGetMemoryInfo");
  std::optional<HostState> out;
  if (init && shutdown && count && handle && name && memory && init() == 0) {
    HostState h;
    h.source = "NVML";
    unsigned n = 0;
    if (count(&n) == 0) {
      for (unsigned i = 0; i < n && i < 1024; ++i) {
        Device dev = nullptr;
        NvmlMemory m{};
        char buf[96] = {};
        if (handle(i, &dev) != 0 || memory(dev, &m) != 0) continue;
        if (name(dev, buf, sizeof buf) != 0) buf[0] = '\0';
        h.gpus.push_back(HostGpu{static_cast<int>(i), buf, "", static_cast<int64_t>(m.total), static_cast<int64_t>(m.used),
                                 static_cast<int64_t>(m.free)});
      }
      if (!h.gpus.empty()) out = std::move(h);
    }
    shutdown();
  }
  dlclose(lib);
  return out;
}

}  // namespace headroom
