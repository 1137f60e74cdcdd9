// vLLM engine flags -> the settings in force, defaults resolved as the chosen vLLM version
// resolves them (vllm/engine/arg_utils.py, vllm/config/*.py). Flag errors are thrown as
// InputError in vLLM's own words (argparse / pydantic / config checks).
#pragma once
#include <cstdint>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engines/vllm/vllm_load_extras.h"
#include "engines/vllm/vllm_rules.h"
#include "headroom/deployment.h"

namespace headroom::vllm {

struct Settings {
  Era era;
  double utilization = 0.9;
  bool utilization_given = false;
  std::optional<int64_t> kv_cache_memory_bytes;
  int64_t max_model_len = 0;
  bool max_model_len_auto = false;   // --max-model-len auto / -1
  bool max_model_len_given = false;
  int64_t max_num_seqs = 0, max_num_batched_tokens = 0;
  int64_t block_size = 16;
  bool block_size_given = false;
  KvDtype kv;
  DType model_dtype = DType::BF16;
  // --quantization fp8 on an unquantized 16-bit checkpoint: vLLM's online dynamic FP8.
  bool online_fp8 = false;
  int64_t cpu_offload_bytes = 0;     // --cpu-offload-gb x 1024^3, per GPU
  double swap_space_gib = 4;         // --swap-space (CacheConfig.swap_space, GiB per GPU): V0 sizes its CPU blocks from it
  int64_t mamba_block_size = 0;      // --mamba-block-size (0: not given); used in mamba_cache_mode "all"
  // The vision tower is neither loaded nor profiled: --language-model-only, or image and video
  // limits of 0 on a Qwen-VL family model.
  bool text_only = false;
  int64_t dcp = 1;                   // --decode-context-parallel-size (-dcp)
  bool disable_sliding_window = false;  // every sliding-window layer as full attention, context capped at the window
  int64_t redundant_experts = 0;     // EPLB: --num-redundant-experts / --eplb-config num_redundant_experts
  bool enforce_eager = false;
  int64_t max_capture_size = 0;      // --max-cudagraph-capture-size (0 = default)
  std::optional<int64_t> num_gpu_blocks_override;
  std::string spec_method;           // --speculative-config method ("mtp", "eagle", ...)
  int64_t num_speculative_tokens = 0;
  std::string spec_model;            // --speculative-config model (the drafter's checkpoint)
  // method draft_model with a checkpoint headroom can read: the drafter loaded at load_model, and
  // how many attention layers it adds to the KV cache config (0 when its page differs).
  std::shared_ptr<const Model> draft;
  int64_t draft_layers = 0;
  bool chunked_prefill = true;
  LoraSettings lora;                 // --enable-lora and its sizes (vllm/config/lora.py LoRAConfig)
  bool graph_estimate_on = false;    // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS in force
  std::vector<int64_t> capture;      // capture sizes (empty with enforce_eager)
  int64_t piecewise_graphs = 0;      // PIECEWISE captures (0 under cudagraph_mode FULL / FULL_DECODE_ONLY / NONE)
  int64_t full_graphs = 0;
  bool cuda_graphs() const { return !enforce_eager && piecewise_graphs + full_graphs > 0; }
  // Copies of each captured graph: 2 with LoRA under CompilationConfig.cudagraph_specialize_lora
  // (default True from 0.11.1: one graph per size with and without active adapters).
  int64_t graph_copies = 1;
  std::vector<std::pair<std::string, std::string>> table;  // flag -> value in force (for the report)
  std::vector<std::string> notes;
};

// The model's context limit as vLLM derives it (the default --max-model-len, and the most a
// given one may ask for without VLLM_ALLOW_LONG_MAX_MODEL_LEN).
double derived_max_model_len(const ModelConfig& c);

// Resolves the deployment's engine flags. Throws InputError for unknown flags
// ("unrecognized arguments: ...") and invalid values, worded as vLLM words them.
Settings resolve_settings(const Deployment& d);

// The memory-budget flags: --gpu-memory-utilization and --kv-cache-memory-bytes (alias
// --kv-cache-memory), the only flags tune's and fit's searches change between plans. Nothing
// else in Settings depends on them but the fields below and their two rows of the table.
inline constexpr std::array<std::string_view, 3> kBudgetFlags = {"--gpu-memory-utilization", "--kv-cache-memory-bytes",
                                                                         "--kv-cache-memory"};
struct Budget {
  double utilization = 0.9;
  bool utilization_given = false;
  std::optional<int64_t> kv_cache_memory_bytes;
};
// Reads the budget flags of d (errors as resolve_settings words them).
Budget resolve_budget(const Deployment& d, const Era& era);
// Puts a budget into settings resolved for another budget of the same deployment.
void apply_budget(Settings& s, const Budget& b);

}  // namespace headroom::vllm
