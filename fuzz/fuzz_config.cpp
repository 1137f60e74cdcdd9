// Fuzz harness: config.json normalization (+ the derived inventory for configs of a sane size)
// must succeed or throw InputError; never crash, hang or exhaust memory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/error.h"
#include "headroom/model.h"
#include "model/model_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Inputs containing a NUL split into config.json + hf_quant_config.json.
  std::string_view hq;
  if (auto z = text.find('\0'); z != std::string_view::npos) {
    hq = text.substr(z + 1);
    text = text.substr(0, z);
  }
  try {
    headroom::ModelConfig c = headroom::parse_model_config(text, "fuzz/config.json", hq);
    // Keep each run small: the inventory grows with layers x experts.
    if (c.num_layers * (c.num_experts + 16) <= 20000 && c.hidden_size <= 65536 && c.vocab_size <= 1'000'000) {
      headroom::Model m;
      m.config = c;
      m.tensors = headroom::model_detail::derive_inventory(m.config);
      headroom::model_detail::compute_totals(m);
    }
  } catch (const headroom::InputError&) {
  }
  return 0;
}
