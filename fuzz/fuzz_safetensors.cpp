// Fuzz harness: safetensors header parsing (length, JSON, dtype/shape/offset checks) must
// either succeed or throw InputError; nothing else, never a crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/error.h"
#include "model/model_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto h = headroom::model_detail::parse_safetensors_header(bytes, static_cast<int64_t>(size), "fuzz.safetensors");
    int64_t sum = 0;
    for (const auto& t : h.tensors) sum += t.bytes;
    if (sum != h.data_bytes) __builtin_trap();
  } catch (const headroom::InputError&) {
  }
  return 0;
}
