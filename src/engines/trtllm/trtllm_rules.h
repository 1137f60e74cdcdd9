// TensorRT-LLM's KV sizing rules as pure functions: settings from trtllm-serve / LLM-API
// flags, bytes per token (KVCacheManager.get_cache_size_per_token), the KV budget from the
// memory free after the profiled peak (tensorrt_llm/_torch/pyexecutor/_util.py
// KvCacheCreator; cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp), blocks and tokens.
#pragma once
#include <cstdint>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "headroom/deployment.h"

namespace headroom::trtllm {

struct Era {
  int version = 0;          // major*10000 + minor*100 + patch (1.2.0 -> 10200)
  bool pytorch_default = true;  // >= 1.0: the PyTorch backend is trtllm-serve's default
  bool log_2026 = true;     // "kv size per token is ..." form of the peak-memory line (>= 1.2)
  // The estimation run's KV floor of one max_seq_len sequence + the CUDA-graph warm-up batch and
  // of max_batch_size blocks (_util.py _get_token_num_for_estimation, 2026 copy). GUESS >= 1.3:
  // absent in the 1.2.0rc2 log (257 blocks for max_seq_len 9193), present by 1.3.0rc0.
  bool estimation_floor = true;
  // tokens_per_block when none is given: 128 before 0.10, 64 in 0.10-0.18, 32 from 0.19
  // (trtllm_settings.cpp era_for_version has the sources).
  int64_t default_tokens_per_block = 32;
  // TensorRT engines before 0.9: the execution context took no memory before the KV pool was
  // sized (GptSession; 0.8.0 log "IExecutionContext creation: ... GPU +0"), so the budget is
  // (total - context - engine) x fraction. GUESS: 0.9 is the first release sizing after it.
  bool trt_lazy_context = false;
  std::string label, reason;
};
Era era_for_version(const std::string& version);

// The quantization a TensorRT engine was built with from a 16-bit checkpoint (trtllm-build after
// quantize.py --qformat / convert_checkpoint.py, trtllm-bench build --quantization), in
// TensorRT-LLM's QuantAlgo spelling (tensorrt_llm/quantization/mode.py): what one linear-layer
// weight (attention, MLP, experts) then takes (trtllm_estimates.cpp engine_quant has the table).
struct EngineQuant {
  std::string algo;            // QuantAlgo name, e.g. "W4A16_AWQ"
  double bytes_per_weight = 2;  // packed weight + its per-group scales (and zeros)
};

// --speculative_config (trtllm_spec.cpp): what the drafter adds to the target's pools.
struct SpecDecoding {
  std::string type;               // decoding_type: "MTP", "Eagle3", ...
  int64_t draft_len = 0;          // max_draft_len: graphs verify 1 + draft_len tokens per request
  int64_t kv_layers = 0;          // layers added to the KV pool (get_num_spec_layers)
  int64_t graph_layer_runs = 0;   // drafter layer passes inside each captured graph
  bool loads_mtp_weights = false; // the checkpoint's MTP layers are loaded
  std::string what;
};
SpecDecoding parse_speculative_config(const std::string& text, int64_t model_mtp_layers);

struct Settings {
  Era era;
  std::string backend = "pytorch";          // "pytorch" | "trt"
  double fraction = 0.9;                    // KvCacheConfig.free_gpu_memory_fraction
  bool fraction_given = false;
  std::optional<int64_t> max_tokens;        // KvCacheConfig.max_tokens
  int64_t max_gpu_total_bytes = 0;          // KvCacheConfig.max_gpu_total_bytes (0 = unset)
  int64_t tokens_per_block = 32;            // KvCacheConfig.tokens_per_block (Era default when not given)
  int64_t max_batch_size = 2048, max_num_tokens = 8192, max_seq_len = 0, max_beam_width = 1;
  // The length a longer --max_seq_len is cut to (the PyTorch backend from 1.1 without
  // TLLM_ALLOW_LONG_MAX_MODEL_LEN); nullopt where the engine keeps any given length.
  std::optional<int64_t> max_seq_len_cap;
  std::string kv_dtype = "auto";            // resolved: "bfloat16" | "float16" | "fp8" | "nvfp4"
  double kv_elem_bytes = 2;
  bool cuda_graphs = true;
  int64_t cuda_graph_max_batch_size = 128;  // CudaGraphConfig.max_batch_size (0 -> 128)
  bool cuda_graph_padding = false;          // CudaGraphConfig.enable_padding (default False)
  int tp = 1, pp = 1, ep = 1;
  bool attention_dp = false;
  bool fail_fast_window = false;            // --fail_fast_on_attention_window_too_large (default False)
  std::optional<EngineQuant> engine_quant;  // --quantization W4A16_AWQ, FP8, ...: a TensorRT engine's linears (nullopt = as the checkpoint)
  std::optional<SpecDecoding> spec;         // --speculative_config
  std::vector<std::pair<std::string, std::string>> table;
  std::vector<std::string> notes;
};
// Throws InputError for unknown flags ("Error: No such option: --x", as click says) and
// invalid values, in TensorRT-LLM's words.
Settings resolve_settings(const Deployment& d);

// The memory-budget flags (KvCacheConfig.free_gpu_memory_fraction under both spellings): the
// only flags tune's and fit's searches change between plans. Nothing else in Settings depends
// on them but `fraction`, `fraction_given` and their row of the table.
inline constexpr std::array<std::string_view, 2> kBudgetFlags = {"--kv_cache_free_gpu_memory_fraction", "--free_gpu_memory_fraction"};
struct Budget {
  double fraction = 0.9;
  bool given = false;
};
// Reads the budget flags of d (errors as resolve_settings words them).
Budget resolve_budget(const Deployment& d);
// Puts a budget into settings resolved for another budget of the same deployment.
void apply_budget(Settings& s, const Budget& b);

// Bytes per token on this rank: kv_factor x KV heads per rank x head size x local layers x
// dtype size (MLA: factor 1, head kv_lora_rank + qk_rope_head_dim).
int64_t bytes_per_token(const ModelConfig& c, const Settings& s, int pp_rank);
// Bytes per token KvCacheCreator divides the KV budget by (get_cache_size_per_token): the mean of a
// per-layer KV-head list times every layer of the stage. Equals `exact` except for Nemotron-NAS.
int64_t sizing_bytes_per_token(const ModelConfig& c, const Settings& s, int pp_rank, int64_t exact);
// Local layer range of a pipeline stage (tensorrt_llm mapping: even split, remainder to the first stages).
std::pair<int, int> pp_layers(int num_layers, int pp, int pp_rank);

// KV budget: (total - peak) x fraction, capped by max_tokens x bytes/token and max_gpu_total_bytes.
int64_t kv_budget(int64_t total, int64_t peak, double fraction, std::optional<int64_t> max_tokens, int64_t bytes_per_token,
                  int64_t max_gpu_total_bytes);
// Blocks of tokens_per_block from a byte budget: ceil(floor(budget / bytes_per_token) /
// tokens_per_block); tokens = blocks x tokens_per_block ("Allocated ... (N)").
int64_t blocks_for(int64_t budget, int64_t bytes_per_token, int64_t tokens_per_block);
// Tokens of the temporary KV cache the profiling run uses (PyTorch backend), given the memory
// free when it is created (after weights): KvCacheCreator._get_token_num_for_estimation.
int64_t estimation_tokens(const Settings& s, int64_t free_now, int64_t bytes_per_token);
// CUDA-graph batch sizes the PyTorch engine captures: CudaGraphConfig._generate_cuda_graph_batch_sizes
// for cuda_graph_max_batch_size, then those <= max_batch_size.
std::vector<int64_t> cuda_graph_batch_sizes(const Settings& s);

}  // namespace headroom::trtllm
