// vLLM's memory rules by version era, as pure functions over explicit inputs: the era table,
// defaults (utilization, max_num_seqs, max_num_batched_tokens, block size, capture sizes),
// the KV page layout (page size per layer, grouping of hybrid models, blocks -> tokens ->
// concurrency, the capacity check and its estimated maximum model length) and the estimated
// terms (CUDA context, non-torch memory, profile-run activation peak, CUDA-graph memory).
// Each function names the vLLM file it mirrors; research/vllm-trtllm-llamacpp-memory.md has
// the derivations.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "headroom/deployment.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "engines/shared/capture_terms.h"
#include "engines/shared/process_terms.h"
#include "headroom/parallel.h"

namespace headroom::vllm {

// ---------------------------------------------------------------- eras (vllm_era.cpp)
// Version number as major*10000 + minor*100 + patch (0.10.2 -> 1002).
struct Era {
  int version = 0;          // resolved release the rules are taken from
  std::string label;        // e.g. "vLLM 0.10.2 rules (V1 engine, per-instance budget)"
  std::string reason;       // how the version string was read
  bool v0 = false;          // < 0.8.0: V0 engine (worker.py profiling, "# GPU blocks")
  // V0 from 0.6.5 (PR #10511, memory_profiling): the baseline is read after the CUDA context
  // exists, so the context is not charged to the budget (NCCL, built after it, still is).
  bool v0_context_in_baseline = false;
  bool whole_gpu = false;   // < 0.9.1: KV = T*u - (peak incl. weights) - non-torch of the whole GPU
  bool kv_memory_flag = false;     // >= 0.11: --kv-cache-memory-bytes (PR #21489)
  bool graph_estimate_logged = false;  // >= 0.17: profile_cudagraph_memory() runs (PR #30515)
  bool graph_estimate_applied = false; // >= 0.21: estimate subtracted by default (PR #38284)
  bool ceil_request = false;       // >= 0.21: requested = ceil(T*u) (request_memory())
  bool tokens_from_concurrency = false;  // >= 0.21: GPU KV cache size = int(concurrency * L)
  bool total_consumed = false;     // >= 0.26.1: total_consumed (mem_get_info) accounting (L18b suggestion line)
  bool suggestion_gib = false;     // >= 0.11: L18a suggestion line with "(x GiB)" and "in use is x GiB" (0.10.2: "x bytes")
  bool override_sets_memory = false;  // >= 0.21: --num-gpu-blocks-override sets the KV memory before the checks (PR #41069)
  bool combined_kv_line = false;   // >= 0.29: one "GPU KV cache size ..., Maximum concurrency ..." line
  bool format_gib = false;         // >= 0.12: GiB printed with format_gib (round 2, no trailing zeros)
  bool models_typo = true;         // "models's max seq len" until ~0.26
  bool full_and_piecewise = false; // >= 0.11: cudagraph_mode FULL_AND_PIECEWISE by default
  // 0.8 .. 0.10.0 (V1): piecewise CUDA graphs keep every captured size's intermediate outputs, so
  // graph memory grows with hidden_size (INFERRED from 0.9.2 logs; cut at 0.10.1, see vllm_era.cpp).
  bool graph_outputs_per_size = false;
  // >= 0.11: NCCL is initialised before the init snapshot (PR #25359), so its buffers are outside
  // the budget and seen by the startup free-memory check; 0.9.1-0.10.2 charge them as non-torch growth.
  bool nccl_before_snapshot = false;
  double default_utilization = 0.9;  // 0.92 from 0.21
  // >= 0.26: sliding-window / chunked-local admission holds max_in_flight_tokens =
  // max_concurrent_batches x max_num_batched_tokens beyond the window (PR #47728, opened 2026-07-06;
  // vllm#49878: Gemma-4 on 0.26.0 needs ceil((1023 + 2 x 32768) / 16) + 1 blocks per sliding group).
  bool swa_in_flight = false;
  // Set by the deployment, not the version: --enable-lora keeps the V1 model runner (Model Runner
  // V2 has no LoRA CUDA-graph specialization: vllm PR #43084, 2026-05, adds LoRA to
  // _get_v2_model_runner_unsupported_features so LoRA configs fall back to V1; INFERRED for every
  // release since V2 became a default).
  bool lora = false;
  // Set by the deployment: VLLM_USE_V2_MODEL_RUNNER (-1 unset, 0 forces V1, 1 forces V2) and a
  // deployment Model Runner V2 falls back from (vLLM blog "From Opt-In to Default: Migrating vLLM
  // to Model Runner V2", 2026-08-31, its list of automatic fallbacks: n-gram speculation, EAGLE3
  // with pipeline parallelism, DeepSeek-V3.2 / V4 on ROCm, dual batch overlap, elastic EP, custom
  // logits processors, KV-sharing fast prefill).
  int v2_runner_env = -1;
  bool v2_fallback = false;
};
// Reads "0.10.2", "0.11.0rc1", "0.26.1rc1.dev608+g99a10304d", "unknown@2025-07-22",
// "main@2025-04", "latest@2026-08", "" (newest). Throws InputError when unreadable.
Era era_for_version(const std::string& version);
inline constexpr int kNewestVersion = 3100;  // 0.31.0: newest release a log checked the rules against (xvllm-001)

// ---------------------------------------------------------------- defaults (vllm_defaults.cpp)
struct BatchDefaults {
  int64_t max_num_batched_tokens = 0, max_num_seqs = 0;
};
// EngineArgs default batch sizes for `vllm serve` (vllm/engine/arg_utils.py, V1 usage-context
// table): >= 70 GiB and not an A100 -> 8192 tokens / 1024 seqs, else 2048 / 256.
// nvml_memory = false: the device total comes from NVML and NVML has no memory figure for the
// device (DGX Spark / GB10 unified memory), so vLLM falls back to 0 GiB -> 2048 / 256.
BatchDefaults default_batch(const Era& era, int64_t capacity_bytes, const std::string& gpu_name, bool nvml_memory = true);

// CUDA-graph capture sizes (vllm/config/vllm.py _set_cudagraph_sizes; 0.9/0.10:
// SchedulerConfig.cuda_graph_sizes). decode_query_len = 1 + num_speculative_tokens.
std::vector<int64_t> capture_sizes(const Era& era, int64_t max_num_seqs, int64_t max_num_batched_tokens,
                                   int64_t decode_query_len, int64_t max_capture_size_flag);
// FULL graphs captured (decode-only FULL for FULL_AND_PIECEWISE): sizes <= max_num_seqs * decode_query_len.
// An explicit capture list as vLLM keeps it (sorted, unique, within max_num_batched_tokens).
std::vector<int64_t> explicit_capture_sizes(std::vector<int64_t> sizes, int64_t max_num_batched_tokens, int64_t max_capture_size_flag);
int64_t full_graph_count(const Era& era, const std::vector<int64_t>& sizes, int64_t max_num_seqs, int64_t decode_query_len);

// ---------------------------------------------------------------- KV layout (vllm_kv.cpp)
enum class SpecKind { Full, Mla, Sliding, Chunked, Mamba };

// One attention layer's KV spec on one rank (vllm/v1/kv_cache_interface.py).
struct LayerSpec {
  SpecKind kind = SpecKind::Full;
  int64_t bytes_per_token = 0;   // attention: page bytes per token of block (H_kv*(Dk+Dv)*s + scales)
  int64_t window = 0;            // sliding window / attention chunk (tokens)
  int64_t mamba_bytes = 0;       // Mamba/GDN state bytes per request (conv + ssm), unpadded
  // DeepSeek-V4 caches (MLAAttentionSpec / SlidingWindowMLASpec with model_version
  // "deepseek_v4"): bytes_per_token is per *stored* token, compress the tokens per stored
  // token (page = round_up(block / compress * bytes_per_token, align)), own_block the layer's
  // fixed block size (SWA 64, compressor states 4 / 8; 0 = the cache block size).
  bool dsv4 = false;
  int64_t compress = 1, own_block = 0, align = 0;
  // MambaSpec only: cache mode (vllm/config/cache.py mamba_cache_mode) and the state blocks kept
  // for speculative tokens (num_speculative_blocks = num_speculative_tokens).
  int mamba_mode = 0;  // MambaCache::None / Align / All
  int64_t spec_blocks = 0;
  int64_t mamba_chunk = 0;  // the model's mamba chunk size ("all" mode aligns the block to it)
  bool operator==(const LayerSpec&) const = default;
};

// How vLLM caches Mamba / linear-attention state (MambaSpec.max_memory_usage_bytes, vllm_kv.cpp
// mamba_cache_for): "none" one state block per request (+ spec blocks), "align" two (+ spec
// blocks), "all" one per block of the context. spec_tokens widen the GDN conv state.
struct MambaCache {
  enum Mode { None = 0, Align = 1, All = 2 };
  int mode = None;
  int64_t spec_tokens = 0;
  // --mamba-cache-dtype / --mamba-ssm-cache-dtype in bytes per element (0 = "auto").
  int conv_bytes = 0, ssm_bytes = 0;
  int64_t block_tokens = 0;  // --mamba-block-size: "all" mode aligns the attention block to it, not the model's chunk
};

struct KvDtype {
  std::string name;       // as vLLM names it: "auto"->"bfloat16", "fp8", "fp8_e5m2", "nvfp4", "fp8_ds_mla", ...
  double elem_bytes = 2;  // bytes per element (nvfp4: 0.5 + scales added separately)
  bool per_token_head_scales = false;
  bool nvfp4 = false;
  bool ds_mla = false;    // fp8_ds_mla: 656 B per token per MLA layer
};
// Resolves --kv-cache-dtype as vLLM does (vllm/config/cache.py CacheDType); throws InputError
// with argparse's wording for values vLLM does not accept. `model_dtype`: --dtype or the config's.
KvDtype resolve_kv_dtype(const Era& era, const std::string& flag, DType model_dtype, const Quantization& q, bool mla);

// The specs of the layers on pipeline stage pp_rank (vLLM get_pp_indices split; TP shards KV
// heads, MLA latent replicated). extra_full_layers: draft/MTP layers that get their own KV.
std::vector<LayerSpec> layer_specs(const ModelConfig& c, const Parallel& par, const KvDtype& kv, int pp_rank,
                                   int64_t extra_full_layers = 0, const MambaCache& mamba = {});
// A separate draft model's attention layers that join the target's KV cache config: all of its
// layers when each is a full-attention layer with the target's page (same KV heads per rank and
// head size, e.g. Qwen3-0.6B drafting for Qwen3-8B); else 0, with `why` saying what differs.
int64_t draft_model_kv_layers(const ModelConfig& target, const ModelConfig& draft, const Parallel& par, const KvDtype& kv,
                              std::string& why);
// vLLM's pipeline split (vllm/distributed/utils.py get_pp_indices): remainder layers go to the
// stages before the last, from the second-to-last backwards.
std::pair<int, int> pp_indices(int num_layers, int pp, int pp_rank);

struct KvLayout {
  int64_t block_size = 16;        // attention block size in force (raised for Mamba hybrids)
  int64_t page_bytes = 0;         // bytes per block of one tensor (all groups share it)
  int64_t tensors = 0;            // tensors sharing the pool = group_size (uniform: layer count)
  int64_t num_groups = 1;         // KV cache groups
  bool uniform = true;            // one group of identical full-attention layers
  bool hybrid = false;
  int64_t padding_layers = 0;     // L12 warning
  // layers: the group's layer count as allocated (group_size, padding included);
  // real_layers: the model's layers in it (the last group of a type may be short).
  struct Group {
    SpecKind kind; int64_t block_size; int64_t window; int64_t layers; int64_t real_layers = 0;
    int mamba_mode = 0; int64_t spec_blocks = 0;  // Mamba groups: MambaCache mode and speculative state blocks
  };
  // The capacity check's per-request sum counts the padding layers (2026 _max_memory_usage_
  // bytes_from_groups) or only the model's layers (2025 max_memory_usage_bytes over the specs).
  bool needed_counts_padding = true;
  // Batches whose tokens are scheduled but not yet settled (VllmConfig.max_concurrent_batches):
  // sliding-window / chunked groups keep window + in_flight_batches x max_num_batched_tokens per
  // request in the capacity check and the concurrency (era.swa_in_flight; 1 before 0.26).
  int64_t in_flight_batches = 1;
  // Decode context parallelism (--decode-context-parallel-size): each rank of a DCP group keeps
  // cdiv(L, cp) tokens of a request's full-attention / MLA cache, and the logged token count is
  // multiplied by cp (kv_cache_interface.py max_memory_usage_bytes, kv_cache_utils.py).
  int64_t cp = 1;
  std::vector<Group> groups;
  std::vector<std::string> notes; // L21 lines etc.
  bool attention_free = false;
  std::string composition;        // what one block holds when page_bytes sums several layer pages ("78 latent + 21 indexer-key caches")
  // DeepSeek-V4 packed layout (kv_cache_utils.py _get_kv_cache_config_packed): page_bytes is the
  // whole block (every page-size bucket), tensors 1. v4: the groups as vLLM makes them.
  struct V4Group { bool full; int64_t block; int64_t window; int64_t page_sum; int64_t layers; int64_t tuples; };
  bool packed = false;
  std::vector<V4Group> v4;
  int64_t v4_tuple_bytes = 0;  // sum of the full-MLA group's distinct page sizes
  int64_t bytes_per_block_all() const { return page_bytes * tensors; }
};
// Groups the specs (vllm/v1/core/kv_cache_utils.py get_kv_cache_groups /
// _get_kv_cache_groups_uniform_page_size, unify_kv_cache_spec_page_size) and raises the
// attention block size for Mamba hybrids (model_executor/models/config.py).
KvLayout kv_layout(const std::vector<LayerSpec>& specs, int64_t block_size, bool block_size_given, const Era& era);

// num_blocks from available bytes (get_num_blocks): floor(floor(avail / page) / tensors).
int64_t num_blocks(const KvLayout& l, int64_t avail_bytes);
// Bytes one request at max_model_len L needs (max_memory_usage_bytes summed over layers).
int64_t needed_bytes(const KvLayout& l, int64_t max_model_len, int64_t max_num_batched_tokens);
// Largest L in [1, L0] with needed_bytes(L) <= avail (estimate_max_model_len, binary search); 0 if none.
int64_t estimate_max_model_len(const KvLayout& l, int64_t avail_bytes, int64_t max_model_len,
                               int64_t max_num_batched_tokens);
// "Maximum concurrency for L tokens per request" (get_max_concurrency_for_kv_cache_config).
double max_concurrency(const KvLayout& l, int64_t blocks, int64_t max_model_len, int64_t max_num_batched_tokens);
// "GPU KV cache size: N tokens" by era (_report_kv_cache_config / get_kv_cache_config).
int64_t kv_tokens(const Era& era, const KvLayout& l, int64_t blocks, int64_t max_model_len,
                  int64_t max_num_batched_tokens);

// ---------------------------------------------------------------- estimated terms (vllm_estimates.cpp)
// Estimate, range, add_bytes and the process-level terms every engine shares live in
// engines/shared/ (context_and_nccl, non_torch_growth, profile_peak, layer_graph_memory,
// drafter_graph_memory, unified_memory_device); vLLM's era forms below refine them.
using headroom::add_bytes;
using headroom::Estimate;
using headroom::range;
// The fabric NCCL runs over, for the multi-GPU estimates below: Pcie for NVIDIA cards whose
// interconnect (data/gpus.json, or --interconnect) is "pcie"; NvLink for NVSwitch boards, NVLink
// bridge groups, AMD, network-joined and custom GPUs (the figures the estimates were first fitted on).
enum class Fabric { NvLink, Pcie };
Fabric fabric_of(const GpuSpec& g);
// By era (vllm_estimates.cpp): what the startup "Free memory on device" check sees resident --
// the CUDA context alone in 0.9.1-0.10.2 (NCCL is built after the snapshot), context + NCCL from
// 0.11 (PR #25359) -- and, before 0.9.1, the context + NCCL that the whole-GPU budget charges.
// PCIe hosts have their own figures (smaller NCCL buffers).
Estimate cuda_context(const Era& era, int tp, int pp, bool amd, Fabric fabric = Fabric::NvLink);
// The part of cuda_context(era, ...) that the whole-GPU budget (before 0.9.1) charges: all of
// it, except in V0 from 0.6.5 (era.v0_context_in_baseline), whose memory_profiling baseline
// already holds one GPU's CUDA context (only NCCL, built after it, is charged).
Estimate budget_context(const Era& era, int tp, int pp, bool amd, Fabric fabric = Fabric::NvLink);
// By era: the non-torch term of the budget. 0.9.1-0.10.2: NCCL's buffers + growth (scaled by the
// world size on NVLink hosts, flat on PCIe); 0.11+: growth after NCCL init; total_consumed era:
// consumed - weights.
Estimate non_torch_increase(const Era& era, int tp, int pp, Fabric fabric = Fabric::NvLink);
// VLLM_USE_FLASHINFER_SAMPLER as vllm/envs.py reads it: unset (None), "0" (False), any other
// integer (True). It picks the top-k/top-p sampler path of the profile run (sampler_path).
enum class FlashInferSampler { Unset, Off, On };
// Reads it from the deployment's --env (the last value given). A value int() cannot read is the
// one-line error vLLM's envs.py would raise (exit 2). V0 builds: a note, the forecast unchanged.
FlashInferSampler flashinfer_sampler_env(const Deployment& d, const Era& era, std::vector<std::string>& notes);
// Unified-memory devices (Orin SM 8.7, Thor 11.0, Spark 12.1): vLLM's MemorySnapshot reads free
// memory as psutil's available system memory, so host-memory growth during the profile counts as
// non-torch growth. Widens the unfavourable end of `nt` (GUESS, see vllm_estimates.cpp).
Estimate uma_non_torch(const Estimate& nt);
// Torch peak increase of profile_run at max_num_batched_tokens (forward + sampler on the
// last PP rank). Calibrated on the corpus activation figures (see vllm_estimates.cpp).
// DeepSeek-V4 (0.24+): what the dummy forward of profile_run reserves beyond the generic
// activations (vllm_estimates.cpp dsv4_profile_buffers): the shared WorkspaceManager buffer (the
// larger of the sparse indexer's K-gather reservation and the sparse MLA prefill bf16 gather;
// kept for the life of the engine) and the indexer's transient logits reservation.
struct Dsv4ProfileBuffers {
  int64_t indexer_ws = 0, gather_ws = 0;  // the two workspace requests (bytes, 256-aligned pieces)
  int64_t workspace = 0;                  // max of the two: one buffer, grown to the largest request
  int64_t logits = 0;                     // VLLM_SPARSE_INDEXER_MAX_LOGITS_MB torch.empty, freed at once
  int64_t hc_temporaries = 0;             // hyper-connection temporaries of the forward (ESTIMATE, vllm_estimates.cpp)
};
Dsv4ProfileBuffers dsv4_profile_buffers(const ModelConfig& c, int64_t max_model_len, int64_t max_num_batched_tokens, int pp_rank, int pp);
// DeepSeek-V3.2 / GLM-5 (MLA + DSA indexer): the indexer's prefill gather buffer and logits reservation.
Dsv4ProfileBuffers dsa_profile_buffers(const ModelConfig& c, int64_t max_model_len);
// v4 (DeepSeek-V4 only): its logits reservation joins the forward, its workspace is added to the
// peak (a torch allocation of the profile run, never freed).
Estimate activation_peak(const Era& era, const ModelConfig& c, const Parallel& par, int64_t max_num_batched_tokens,
                         int64_t max_num_seqs, bool last_pp_rank, int64_t layers_on_rank,
                         const Dsv4ProfileBuffers* v4 = nullptr, FlashInferSampler fi = FlashInferSampler::Unset);
// The sampler warm-up after capture (compile_or_warm_up_model): transient logits + sort buffers.
Estimate sampler_warmup(const Era& era, const ModelConfig& c, int64_t num_reqs, FlashInferSampler fi = FlashInferSampler::Unset);
// What a cold torch.compile cache adds to Model Runner V2's profiled peak (ESTIMATE; vllm_estimates.cpp).
Estimate cold_compile_overhead();
// CUDA-graph memory by era (the capture after the KV cache, L16, and the estimator, L8): dense
// hybrids' GDN layers cost as attention layers before 0.26 (vllm_estimates.cpp).
// ByKind: a PIECEWISE and a FULL capture cost differently (the capture itself); PerGraph: one cost
// per graph, the basis vLLM's own estimate was calibrated on (cuda_graph_estimate).
enum class GraphCost { ByKind, PerGraph };
Estimate cuda_graph_memory(const Era& era, const ModelConfig& c, int64_t layers_on_rank, int64_t linear_layers_on_rank,
                           int64_t piecewise_graphs, int64_t full_graphs, int tp, int64_t max_num_batched_tokens,
                           GraphCost cost = GraphCost::ByKind);
// What NCCL collectives captured inside the graphs add, where vLLM's custom all-reduce is off (more
// than two PCIe GPUs, or a group across nodes) on the V1 runner: per (graph x decoder layer), an
// ESTIMATE (vllm_estimates.cpp lists the logs). Zero where custom all-reduce takes the graphs.
Estimate nccl_graph_capture(const Era& era, const ModelConfig& c, int tp, Fabric fabric, bool across_nodes, int64_t graphs,
                            int64_t layers_on_rank);
// Model Runner V2 (vllm/v1/worker/gpu/) runs the deployment: dense models from 0.25.1 (vllm_estimates.cpp).
bool model_runner_v2(const Era& era, const ModelConfig& c);
// The runner model_runner_v2 picks and why, as a plan note ("" for V0).
std::string model_runner_basis(const Era& era, const ModelConfig& c);
// What profile_cudagraph_memory() returns, given the capture forecast: on the V1 runner the capture,
// its per-graph part scaled where the extrapolation from the second-largest size overshoots
// (second_size: the second-largest PIECEWISE capture size, 0 = unknown; vllm_estimates.cpp), 0
// (Model Runner V2 before 0.28), or V2's own estimator (0.28+).
Estimate cuda_graph_estimate(const Era& era, const ModelConfig& c, const Estimate& capture, int64_t layers_on_rank, int64_t graphs,
                             int64_t second_size = 0);
// The same capture in the graph_outputs_per_size era (V1 0.8 .. 0.10.0): sum of the capture
// sizes x hidden_size x activation bytes x layers, times a fitted 0.5.
Estimate cuda_graph_memory_outputs_per_size(const ModelConfig& c, int64_t layers_on_rank,
                                            const std::vector<int64_t>& capture_sizes, int64_t act_bytes);

// ---------------------------------------------------------------- printing (vllm_log.cpp)
// The figures of gpu_worker.py's --kv-cache-memory suggestion line (L18a/L18b), printed after
// CUDA-graph capture by compile_or_warm_up_model when the KV size came from profiling.
struct KvSuggestion {
  int64_t free_at_start = 0;   // init_snapshot.free_memory
  int64_t total = 0;           // init_snapshot.total_memory
  double utilization = 0.9;
  int64_t requested = 0;       // requested_memory
  int64_t weights = 0;         // model_memory_usage (L18a) ...
  int64_t non_torch = 0;       // ... + non_torch_memory; their sum is total_consumed (L18b)
  int64_t peak_activation = 0; // peak_activation_memory: torch peak increase (+ the applied CUDA-graph estimate, 0.21+)
  int64_t graph_actual = 0;    // cuda_graph_memory_bytes returned by capture_model()
  int64_t kv_available = 0;    // available_kv_cache_memory_bytes
};
// The line in the era's form; to_requested / to_gpu: the two --kv-cache-memory values it suggests.
std::string kv_suggestion_line(const Era& era, const KvSuggestion& k, int64_t* to_requested = nullptr, int64_t* to_gpu = nullptr);

// GiB as the era prints it: "%.2f" or format_gib (round to 2, trailing zeros dropped).
std::string gib(const Era& era, int64_t bytes);
std::string gib_fmt(int64_t bytes);     // format_gib: round(x/2^30, 2) printed without trailing zeros
std::string commas(int64_t n);          // f"{n:,}"

}  // namespace headroom::vllm
