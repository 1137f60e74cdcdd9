// validate's vLLM kv_tokens_given_memory: the "GPU KV cache size" a vLLM log prints, recomputed
// from the same log's "Available KV cache memory: X GiB" through vLLM's own KV layout arithmetic
// (engines/vllm/vllm_kv.h), so the layout is checked apart from the memory budget.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace headroom {

// The byte interval a GiB figure printed with 2 decimals stands for: [X-0.005, X+0.005) GiB,
// as the smallest and the largest whole byte count inside it.
std::pair<int64_t, int64_t> gib2_interval(double gib);

struct VllmKvGiven {
  bool counted = false;   // the case enters the metric
  bool agree = false;     // the logged tokens lie in [low, high]
  int64_t low = 0, high = 0, point = 0;  // tokens at the interval's ends and at X GiB exactly
  nlohmann::ordered_json row;            // per-case row (also when skipped: "skipped" says why)
};

// base_args: the case's deployment arguments without a GPU (engine, model, parallelism, flags);
// gpu_variants: the GPU arguments to try (the case's own, or several when the log names none:
// the GPU only selects the batch defaults and the MLA block size, and the interval is the union).
VllmKvGiven vllm_kv_given_memory(double kv_gib, int64_t kv_tokens, const std::vector<std::string>& base_args,
                                 const std::vector<std::vector<std::string>>& gpu_variants);

}  // namespace headroom
