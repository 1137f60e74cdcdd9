// --cpu-offload-gb (vLLM models/utils.py maybe_offload_to_cpu; SGLang's srt/utils offloader,
// the same scheme): the bytes of a rank's decoder-layer weights that live in pinned CPU memory.
#pragma once
#include <cstdint>
#include <string>

#include "headroom/layout.h"

namespace headroom {

struct CpuOffload {
  int64_t bytes = 0;
  std::string what;  // one note line; empty when nothing moved
};
// online_fp8_saved: what online FP8 took off the rank's linears before they are counted.
CpuOffload cpu_offload(const RankWeights& w, int64_t offload_bytes, int64_t online_fp8_saved);

}  // namespace headroom
