// vLLM defaults that depend on the version and the hardware: batch sizes for `vllm serve`
// and the CUDA-graph capture sizes.
#include <algorithm>
#include <cctype>

#include "engines/vllm/vllm_rule_table.h"
#include "engines/vllm/vllm_rules.h"
#include "headroom/units.h"

namespace headroom::vllm {

BatchDefaults default_batch(const Era& era, int64_t capacity_bytes, const std::string& gpu_name, bool nvml_memory) {
  if (era.v0) return {2048, 256};  // V0 SchedulerConfig: chunked prefill 2048 tokens, 256 seqs
  // vllm/engine/arg_utils.py (EngineArgs._set_default_args / get_batch_defaults, 2025-2026):
  // "NOTE(Kuntai): Setting large max_num_batched_tokens for A100 reduces throughput".
  // device_memory = current_platform.get_device_total_memory() inside a try whose except sets
  // device_memory = 0; on CUDA that is NvmlCudaPlatform.get_device_total_memory ->
  // pynvml.nvmlDeviceGetMemoryInfo(handle).total (vllm/platforms/cuda.py), which NVML does not
  // support on the GB10's unified memory (nvidia-smi prints memory 'Not Supported', gpus.json
  // smi_total_mib 0). So a DGX Spark takes the small defaults although torch reports 121.69 GiB:
  // logged 'Chunked prefill is enabled with max_num_batched_tokens=2048' by vLLM 0.13.0 (NVIDIA
  // 26.01 container, Qwen3-30B-A3B-FP8, xvllm-018) and 0.11.0 (NVIDIA 25.11 container,
  // public-code 9009555428) on DGX Spark.
  if (!nvml_memory) capacity_bytes = 0;
  std::string lower = gpu_name;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  bool big = capacity_bytes >= 70 * GiB && lower.find("a100") == std::string::npos;
  return big ? BatchDefaults{8192, 1024} : BatchDefaults{2048, 256};
}

std::vector<int64_t> capture_sizes(const Era& era, int64_t max_num_seqs, int64_t max_num_batched_tokens,
                                   int64_t decode_query_len, int64_t max_capture_size_flag) {
  std::vector<int64_t> out;
  if (era.v0) {
    // V0 model_runner _BATCH_SIZES_TO_CAPTURE = [1, 2, 4] + [8 * i for i in 1..32], up to max_num_seqs.
    for (int64_t s : {1, 2, 4}) out.push_back(s);
    for (int64_t i = 1; i <= 32; ++i) out.push_back(8 * i);
    int64_t cap = std::max<int64_t>(1, std::min<int64_t>(max_num_seqs, 256));
    std::erase_if(out, [&](int64_t s) { return s > cap; });
    return out;
  }
  if (!has(Rule::CompilationCaptureSizes, era.version)) {
    // 0.8-0.10: SchedulerConfig.cuda_graph_sizes [c]: [1, 2, 4] + range(8, c + 1, 8) (vllm.graph_sizes_from_max_num_seqs).
    int64_t c = max_capture_size_flag > 0 ? max_capture_size_flag
                : has(Rule::GraphSizesFromMaxNumSeqs, era.version) ? std::min<int64_t>(max_num_seqs * 2, 512) : 512;
    for (int64_t s : {1, 2, 4})
      if (s <= c) out.push_back(s);
    for (int64_t s = 8; s <= c; s += 8) out.push_back(s);
    std::erase_if(out, [&](int64_t s) { return s > max_num_batched_tokens; });
    return out;
  }
  // 0.11+: vllm/config/vllm.py _set_cudagraph_sizes.
  int64_t max_cap = max_capture_size_flag > 0 ? max_capture_size_flag
                                              : std::min<int64_t>(max_num_seqs * decode_query_len * 2, 512);
  max_cap = std::min(max_cap, max_num_batched_tokens);
  for (int64_t s : {1, 2, 4})
    if (s <= max_cap) out.push_back(s);
  for (int64_t s = 8; s < std::min<int64_t>(max_cap + 1, 256); s += 8) out.push_back(s);
  for (int64_t s = 256; s <= max_cap; s += 16) out.push_back(s);
  return out;
}

std::vector<int64_t> explicit_capture_sizes(std::vector<int64_t> sizes, int64_t max_num_batched_tokens, int64_t max_capture_size_flag) {
  // vllm/config/vllm.py _set_cudagraph_sizes with user sizes: deduplicated, sorted, and the sizes
  // above max_num_batched_tokens (or a given max_cudagraph_capture_size) dropped.
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const int64_t cap = max_capture_size_flag > 0 ? std::min(max_capture_size_flag, max_num_batched_tokens) : max_num_batched_tokens;
  std::erase_if(sizes, [&](int64_t x) { return x > cap; });
  return sizes;
}

int64_t full_graph_count(const Era& era, const std::vector<int64_t>& sizes, int64_t max_num_seqs,
                         int64_t decode_query_len) {
  if (!era.full_and_piecewise) return 0;
  // FULL decode graphs only for uniform-decode batches (vllm/v1/cudagraph_dispatcher.py
  // initialize_cudagraph_keys): capture sizes with decode_query_len <= size <= max_num_seqs x
  // decode_query_len. The logs that print "FULL=35 (largest=256)" ran with 256 sequences (cards
  // under 70 GiB, A100s); GLM-5.2 on GB200 with the 1,024-sequence default prints "FULL=51
  // (largest=512)" (tests/data/extra xvllm-067). (Until 2026-12 a cap of 256 was INFERRED here.)
  int64_t lim = max_num_seqs * decode_query_len;
  return std::count_if(sizes.begin(), sizes.end(), [&](int64_t s) { return s <= lim; });
}

}  // namespace headroom::vllm
