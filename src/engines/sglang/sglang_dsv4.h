// DeepSeek-V4 weights as SGLang holds them, beyond the checkpoint's tensors that the common
// layout (src/model/layout.cpp) counts: what SGLang's loader converts, keeps or builds per rank,
// by GPU generation and build date (sglang_dsv4_weights.cpp names the SGLang file of each term).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "headroom/model.h"
#include "headroom/parallel.h"

namespace headroom::sglang {

// yyyymmdd of an SGLang build dated "<anything>@YYYY-MM[-DD]" (a month alone counts as its 1st),
// 0 when the version carries no date (release numbers, "newest": the newest rules apply).
int build_date(const std::string& engine_version);

// What a DeepSeek-V4 deployment adds per rank, as SGLang loads it.
struct Dsv4Inputs {
  int sm = 90;                        // GPU compute capability x10 (0 = AMD)
  bool amd = false;
  int date = 0;                       // build_date(); 0 = newest
  std::string moe_runner_backend;     // --moe-runner-backend as given ("" = auto)
  std::string moe_a2a_backend;        // --moe-a2a-backend as given ("" = none)
  // --env values as given (nullopt = unset), read as SGLang's get_bool_env_var reads them.
  std::optional<bool> env_fp4_experts;      // SGLANG_DSV4_FP4_EXPERTS
  std::optional<bool> env_fp4_dequant;      // SGLANG_DSV4_FP4_DEQUANT
  std::optional<bool> env_fp8_wo_a_gemm;    // SGLANG_OPT_FP8_WO_A_GEMM
};

struct Dsv4RankExtra {
  int64_t main_bytes = 0;   // added to the rank's main-model weights ("Load weight end" mem usage)
  int64_t draft_bytes = 0;  // added to the MTP draft model's weights (speculative decoding)
  std::vector<std::pair<std::string, int64_t>> items;  // what, bytes (main model), for the report
};

struct Dsv4Weights {
  bool wo_a_bf16 = false;         // wo_a dequantized to BF16 at load (_dequant_fp8_wo_a)
  bool marlin_scale_leak = false; // FP32 loader scales of the FP4 experts stay resident (Marlin)
  bool fp4_dequant = false;       // SGLANG_DSV4_FP4_DEQUANT=1: FP4 experts cast to FP8 at load
  std::string moe_backend;        // the MoE runner SGLang resolves for the routed experts
  std::vector<std::string> notes;
};

// Resolves which of SGLang's load-time conversions apply.
Dsv4Weights dsv4_weight_rules(const ModelConfig& c, const Dsv4Inputs& in);

// Extra bytes of one rank holding decoder layers [first, last) (pp stage), embedding on the first
// stage, under the rules resolved above.
Dsv4RankExtra dsv4_rank_extra(const ModelConfig& c, const Parallel& par, const Dsv4Weights& w, int first, int last,
                              bool first_stage);

}  // namespace headroom::sglang
