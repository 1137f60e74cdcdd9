// Each rank's weights as SGLang loads them (sglang_weights.cpp): the checkpoint's bytes per rank,
// then what its loader converts, keeps whole or moves.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engines/sglang/sglang_flag_reader.h"
#include "headroom/deployment.h"
#include "headroom/layout.h"

namespace headroom::sglang {

struct LoadedWeights {
  std::vector<RankWeights> ranks;
  std::vector<int64_t> fp8_saved;  // per rank: what online FP8 took off (its 16-bit copy is held while loading)
};
// DeepSeek-V4's loader rules, online FP8 (--quantization fp8 on a 16-bit checkpoint),
// --moe-dense-tp-size 1, --enable-dp-lm-head, --ep-num-redundant-experts and --cpu-offload-gb;
// each adds a note. InputError for values SGLang refuses.
LoadedWeights loaded_weights(const Deployment& d, const Flags& fl, bool dsv4, std::vector<std::string>& notes);

}  // namespace headroom::sglang
