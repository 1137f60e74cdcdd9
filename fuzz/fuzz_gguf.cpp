// Fuzz harness: GGUF header parsing (magic, version, counts, metadata of every type, tensor infos,
// alignment, offsets), the model summary and llama.cpp's KV cache size from it must either succeed
// or throw InputError; nothing else, never a crash, a hang or a huge allocation. A parsed header's
// tensors lie inside the input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/error.h"
#include "headroom/gguf_model.h"
#include "headroom/llamacpp_kv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto h = headroom::gguf::parse_header(bytes, "fuzz.gguf");
    for (const auto& t : h.tensors)
      if (t.bytes < 0 || h.data_offset + static_cast<int64_t>(t.offset) + t.bytes > static_cast<int64_t>(size)) __builtin_trap();
    auto s = headroom::gguf::summarize(headroom::gguf::ModelFiles{{std::move(h)}, {}});
    if (auto m = headroom::llamacpp::kv_model_from_gguf(s, nullptr)) {
      auto c = headroom::llamacpp::kv_cache_size(*m, headroom::llamacpp::KvSettings{});
      if (c.bytes() < 0) __builtin_trap();
    }
  } catch (const headroom::InputError&) {
  }
  return 0;
}
