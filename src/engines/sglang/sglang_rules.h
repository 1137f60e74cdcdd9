// SGLang's sizing rules by version era: the era table, defaults as SGLang resolves them
// (mem_fraction_static, chunked_prefill_size, cuda_graph_max_bs, capture lists, page size,
// KV dtype) and the KV cell size. Each function names the SGLang file it mirrors.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "headroom/deployment.h"
#include "headroom/kv.h"
#include "headroom/model.h"
#include "headroom/parallel.h"

namespace headroom::sglang {

// Eras of SGLang's memory rules (research/sglang-memory.md §3). Boundaries are PR merge
// dates mapped to the first release after them (release mapping INFERRED from dated logs).
enum class Era {
  V2024,      // <= v0.4.6 (to 2025-06-10): TP-based default fraction, capture list era A
  Mid2025,    // v0.4.7 .. v0.5.2 (PR #7054): tiered reserve by GPU size
  Late2025,   // v0.5.3 .. v0.5.8 (PR #10975): general reserve heuristic, capture list era B
  Y2026,      // >= v0.5.9 (arg_groups/memory_hook.py): reserve incl. graph terms, KV cell inflated for drafts
};

struct EraInfo {
  Era era;
  std::string label;   // e.g. "SGLang 2026 rules (memory_hook.py)"
  std::string reason;  // why this era was chosen from the version string
  int release = 0;     // a release's version as a * 10000 + b * 100 + c ("0.5.13" -> 513), else 0
  int build_date = 0;  // a dated build's yyyymmdd ("main@2026-05-24"; a bare month -> its 1st, a year -> June), else 0
};
// Parses "0.5.4", "0.4.8.post1", "main@2025-10-16", "docker@2025-11", "" (newest).
// Throws InputError for a version string it cannot read.
EraInfo era_for_version(const std::string& version);
// A boolean server flag given and not "false"/"0" (the corpus and the web form pass values).
bool flag_on(const Deployment& d, std::string_view name);
// Settings that move capture memory and are not modelled (sglang_caveats.cpp): one note each.
std::vector<std::string> unmodelled_capture_settings(const Deployment& d, const std::string& spec_algo, bool draft_counted);
// True for 2026 builds before the cuda_graph_config rework (the "Capture piecewise CUDA graph"
// log era): releases before 0.5.17, builds of main dated before 2026-07-01 (INFERRED boundary:
// 0.5.13 and main@2026-05-24 logs print the piecewise lines, 0.5.17 and main@2026-07-21 the
// "Capture target prefill/decode CUDA graph" ones).
bool legacy_piecewise_graph(const EraInfo& era);
// True for the first DeepSeek-V4 builds, whose pool configurator sized the c128 compress state
// with the token pool (sglang PR #28612, "Optimize C128 state pool allocation using request state
// pool", opened 2026-06-18, made it request-scoped). Builds of main dated before 2026-06-20,
// releases before 0.5.15 (both cuts INFERRED from that PR's date).
bool legacy_dsv4_pool(const EraInfo& era);
// True for the builds whose ROCm DeepSeek-V4 image kept the draft-sized compress-state rings (16 / 256)
// without a draft: the 2026-05-12 image does (xsgl-027), the 0.5.13 ROCm builds do not (xsgl-036/037).
// Builds of main dated before 2026-06-01, releases before 0.5.13 (cuts INFERRED between those logs).
bool early_rocm_dsv4_rings(const EraInfo& era);

// Inputs SGLang's server_args reads to resolve its defaults.
struct DefaultInputs {
  int64_t gpu_mem_mib = 0;   // nvidia-smi memory.total (min over GPUs); 0 = unknown
  int tp = 1, pp = 1, dp = 1;
  bool dp_attention = false;
  bool mla = false;
  bool speculative = false;
  bool standalone_spec = false;
  bool deepep = false;
  bool multimodal = false;
  bool prefill_graph = false;          // newest era: breakable prefill CUDA graph enabled
  int64_t prefill_graph_buckets = 0;   // number of prefill token buckets (non-MLA reserve term)
  bool piecewise_graph = false;        // late-2025 --enable-piecewise-cuda-graph
  int64_t piecewise_buckets = 0;
  int64_t chunked_prefill_size = 0;    // resolved (<= 0: chunking off)
  int64_t max_prefill_tokens = 16384;
  int64_t cuda_graph_max_bs = 0;       // resolved decode max bs
  int64_t vit_layers = 0, vit_hidden = 0;
};

// small_tier_raised: the 20-35 GiB tier's 4096 / 48 (160 at tp >= 4) of PR #37898 (2026-09) in
// the 2026 era; before it 2048 / 24 (80).
int64_t default_chunked_prefill_size(Era era, int64_t gpu_mem_mib, int tp, bool small_tier_raised = true);
int64_t default_cuda_graph_max_bs(Era era, int64_t gpu_mem_mib, int tp, bool speculative, bool small_tier_raised = true);
// mem_fraction_static when the user gives none; also returns the reserve (MiB) in `reserve_mib`.
double default_mem_fraction_static(Era era, const DefaultInputs& in, double* reserve_mib = nullptr);

// Decode CUDA-graph batch sizes before the request-pool filter (cuda_graph_runner /
// arg_groups/cuda_graph_hook.py), then filtered by the request pool size as the runner does.
std::vector<int64_t> capture_batch_sizes(Era era, int64_t max_bs, bool speculative, bool disable_padding,
                                         int64_t gpu_mem_mib, int dp, bool dp_attention);
std::vector<int64_t> filter_by_pool(std::vector<int64_t> bs, int64_t req_pool_size, int mul_base);
// Prefill (breakable/piecewise) token buckets up to max_tokens (cuda_graph_config.py).
std::vector<int64_t> prefill_graph_buckets(int64_t max_tokens);

// Page size SGLang forces for the attention backend in use (server_args backend fix-ups).
int64_t forced_page_size(const ModelConfig& c, const std::string& attention_backend, int64_t user_page_size);

// DeepSeek-V4 pools (DSV4PoolConfigurator, sglang_kv.cpp): bytes per full-pool token over all
// sub-pools, and the fixed c128 compress-state bytes subtracted from the budget first.
double dsv4_bytes_per_full_token(const ModelConfig& c, double swa_ratio, bool speculative, bool legacy_pool, bool wide_rings = false);
int64_t dsv4_c128_state_fixed_bytes(const ModelConfig& c, bool speculative, int64_t max_running_requests, int dp);

// --kv-cache-dtype as SGLang resolves "auto" for this model and GPU; throws InputError with
// SGLang's argparse wording for values it does not accept.
std::string resolve_kv_dtype(const ModelConfig& c, const std::string& flag_value, int sm);

// max_running_requests and the ReqToTokenPool rows for a token budget.
struct RequestPool {
  int64_t max_running_requests = 0;
  int64_t rows = 0;        // ReqToTokenPool rows
  int64_t width = 0;       // context_len + 4 (+ draft tokens)
  int64_t bytes() const { return rows * width * 4; }
};
RequestPool request_pool(Era era, int64_t tokens, int64_t context_len, std::optional<int64_t> user_max_running,
                         int attn_dp, int64_t extra_width);

}  // namespace headroom::sglang
