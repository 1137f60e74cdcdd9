// Fuzz harness: --host-state text (nvidia-smi CSV, rocm-smi JSON) and HOST.yaml host files
// (split at the first NUL) must parse or throw InputError; never crash, hang or exhaust memory.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "headroom/error.h"
#include "headroom/host_plan.h"
#include "headroom/host_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string_view yaml;
  if (auto z = text.find('\0'); z != std::string_view::npos) {
    yaml = text.substr(z + 1);
    text = text.substr(0, z);
  }
  try {
    headroom::parse_host_state(text, "fuzz/host.csv");
  } catch (const headroom::InputError&) {
  }
  try {
    headroom::parse_host_spec(std::string(yaml), "fuzz/host.yaml");
  } catch (const headroom::InputError&) {
  }
  return 0;
}
