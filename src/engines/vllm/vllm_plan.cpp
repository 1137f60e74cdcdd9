// plan_vllm(): vLLM V1's startup on every rank, in the engine's own order
// (vllm/v1/worker/gpu_worker.py init_device -> load_model -> determine_available_memory;
// vllm/v1/engine/core.py _initialize_kv_caches -> get_kv_cache_configs (min over workers)
// -> initialize_from_config -> compile_or_warm_up_model), with the budget rule of the
// version era, the refusals in vLLM's words and the log lines it would print.
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <stdexcept>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engines/calibration_apply.h"
#include "engines/layout_cache.h"
#include "engines/plan_memo.h"
#include "engines/shared/cpu_offload.h"
#include "engines/vllm/vllm_kv.h"
#include "engines/vllm/vllm_rule_table.h"
#include "engines/vllm/vllm_rules.h"
#include "engines/vllm/vllm_settings.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/layout.h"
#include "headroom/sim.h"
#include "engines/deployment_host.h"
#include "engines/graph_nodes.h"
#include "headroom/units.h"

namespace headroom {

namespace {
using namespace vllm;

// The terms that depend on the pipeline stage only (its layers, whether it is the last): every
// tensor-parallel rank of a stage shares them, so they are computed once per stage.
struct StageTerms {
  bool built = false;
  Estimate ctx, act, nt, gest, gact, sampler;
  Estimate gdraft;  // of gact: the drafter's piecewise graphs (speculative decoding)
  int64_t draft_kv_tensors = 0;  // of layout.tensors: the drafter's layers (last stage)
  Estimate ctx_budget;  // the part of ctx the whole-GPU budget charges (budget_context)
  Estimate v4_workspace;  // DeepSeek-V4 / DSA models: the part of act that the WorkspaceManager keeps after profiling
  KvLayout layout;
};

struct RankTerms {
  int rank = 0, pp_rank = 0;
  int64_t weights = 0;
  bool padded = false;  // MXFP4 expert padding changed the weights (the item's label says so)
  int64_t lora = 0, marlin = 0;  // of weights: LoRA slots and Marlin's FP8 scales (vllm_load_extras.h)
  int64_t draft = 0;             // of weights: a draft model's shard (--speculative-config model)
  int64_t mtp = 0;               // of weights: the MTP module's layers the drafter loads (method mtp)
  int64_t fp8_transient = 0;     // 16-bit weights held while online FP8 quantization loads (freed)
  const StageTerms* st = nullptr;
  int64_t avail[3] = {0, 0, 0};  // central, best (estimates low), worst (estimates high)
  // Index of an earlier rank with the same weights on the same stage, or -1: such a rank plays
  // the same timeline, so it is simulated once (and copied into the report with detail).
  int same_as = -1;
};

// Layers the drafter runs in each captured size: MTP modules, an EAGLE head (one decoder layer,
// INFERRED from the EAGLE/EAGLE-3 heads published), a draft model's decoder layers.
int64_t drafter_graph_layers(const Settings& s, int64_t mtp_layers) {
  if (mtp_layers > 0) return mtp_layers;
  if (s.spec_method == "eagle" || s.spec_method == "eagle3") return 1;
  if (s.spec_method == "draft_model" && s.draft) return s.draft->config.num_layers;
  return 0;
}

enum Sc { Central = 0, Best = 1, Worst = 2 };
int64_t pick(const Estimate& e, int sc) { return sc == Central ? e.central : sc == Best ? e.low : e.high; }

// Python's repr of a float: 0.9 -> "0.9", 1.0 -> "1.0".
std::string py(double x) {
  std::string s = fmt::format("{}", x);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string conserving() { return " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."; }

// V0's CPU swap blocks: int(swap_space_bytes // cache_block_size), 4 GiB by default (2048 blocks of
// 2 MiB for Llama-3.1-8B in vllm-021's and xvllm-015's logs).
int64_t v0_cpu_blocks(const Settings& s, const RankTerms& t0) {
  const int64_t block = t0.st->layout.bytes_per_block_all();
  return block > 0 ? static_cast<int64_t>(s.swap_space_gib * 1073741824.0) / block : 0;
}

// The lines vLLM prints on rank 0 / the engine core from weight loading to graph capture, in
// the era's wording (after the results are set in f).
void log_lines(Forecast& f, const Settings& s, const RankTerms& t0, int64_t F0c, int64_t R, int64_t T, double u, int64_t L, int64_t blocks,
               bool started_profile, bool kv_done, const std::optional<Failure>& refusal, const std::optional<Failure>& oom, int64_t v0_tokens) {
  const Era& era = s.era;
  const int64_t W0 = t0.weights;
  const bool loaded = !(oom && oom->stage == StageId::Weights);  // the line comes after load_model returns
  if (loaded)
    f.log.push_back(era.v0           ? fmt::format("Loading model weights took {:.4f} GB", to_gib(W0))
                    : era.format_gib ? fmt::format("Model loading took {} GiB memory", gib_fmt(W0))
                                     : fmt::format("Model loading took {:.4f} GiB", to_gib(W0)));

  if (started_profile) {
    if (!era.v0 && !era.whole_gpu) {
      if (!era.total_consumed)
        f.log.push_back(fmt::format("Initial free memory: {:.2f} GiB; Requested memory: {:.2f} (util), {:.2f} GiB", to_gib(F0c), u, to_gib(R)));
    }
    if (era.v0 && !era.v0_context_in_baseline) {
      // V0 worker.py before PR #10511 (0.6.4 and earlier): one line, non_torch_memory = every
      // non-torch byte in use (the CUDA context included); as an RTX 3090 log printed it (vllm-021).
      const int64_t non_torch = t0.st->nt.central + t0.st->ctx_budget.central;
      f.log.push_back(fmt::format("Memory profiling results: total_gpu_memory={:.2f}GiB initial_memory_usage={:.2f}GiB peak_torch_memory={:.2f}GiB "
                                  "memory_usage_post_profile={:.2f}GiB non_torch_memory={:.2f}GiB kv_cache_size={:.2f}GiB gpu_memory_utilization={:.2f}",
                                  to_gib(T), to_gib(W0 + t0.st->ctx_budget.central), to_gib(W0 + t0.st->act.central), to_gib(W0 + non_torch),
                                  to_gib(non_torch), to_gib(t0.avail[Central]), u));
    } else if (era.v0)
      f.log.push_back(fmt::format("Memory profiling takes (not forecast) seconds. the current vLLM instance can use total_gpu_memory ({:.2f}GiB) x "
                                  "gpu_memory_utilization ({:.2f}) = {:.2f}GiB. model weights take {:.2f}GiB; non_torch_memory takes {:.2f}GiB; PyTorch "
                                  "activation peak memory takes {:.2f}GiB; the rest of the memory reserved for KV Cache is {:.2f}GiB.",
                                  to_gib(T), u, to_gib(T) * u, to_gib(W0), to_gib(t0.st->nt.central + t0.st->ctx_budget.central), to_gib(t0.st->act.central),
                                  to_gib(t0.avail[Central])));
    if (t0.st->gest.central > 0 && !s.kv_cache_memory_bytes) {
      int64_t largest = s.capture.empty() ? 0 : s.capture.back();
      // FULL graphs take the smallest sizes of the list (full_graph_count, apply_cudagraph_mode).
      const int64_t full_largest = s.full_graphs > 0 && s.full_graphs <= static_cast<int64_t>(s.capture.size()) ? s.capture[static_cast<size_t>(s.full_graphs - 1)] : 0;
      std::string modes = s.piecewise_graphs > 0 ? fmt::format("PIECEWISE={} (largest={})", s.piecewise_graphs, largest) : std::string();
      if (s.full_graphs > 0) modes += fmt::format("{}FULL={} (largest={})", modes.empty() ? "" : ", ", s.full_graphs, full_largest);
      f.log.push_back("Profiling CUDA graph memory: " + modes);
      f.log.push_back(fmt::format("Estimated CUDA graph memory: {:.2f} GiB total", to_gib(t0.st->gest.central)));
    }
    if (s.kv_cache_memory_bytes) {
      f.log.push_back(fmt::format("Initial free memory {:.2f} GiB, reserved {:.2f} GiB memory for KV Cache as specified by kv_cache_memory_bytes config and "
                                  "skipped memory profiling. This does not respect the gpu_memory_utilization config. Only use kv_cache_memory_bytes "
                                  "config when you want manual control of KV cache memory size. If OOM'ed, check the difference of initial free memory "
                                  "between the current run and the previous run where kv_cache_memory_bytes is suggested and update it correspondingly.",
                                  to_gib(F0c), to_gib(*s.kv_cache_memory_bytes)));
    } else if (!era.v0) {
      f.log.push_back(fmt::format("Available KV cache memory: {} GiB", gib(era, t0.avail[Central])));
    }
    if (t0.st->gest.central > 0 && !s.kv_cache_memory_bytes) {
      double du = to_gib(t0.st->gest.central) / to_gib(T);
      auto r4 = [](double x) { return std::round(x * 10000.0) / 10000.0; };
      if (s.graph_estimate_on)
        f.log.push_back(fmt::format("CUDA graph memory profiling is enabled (default since v0.21.0). The current --gpu-memory-utilization={:.4f} is equivalent "
                                    "to --gpu-memory-utilization={:.4f} without CUDA graph memory profiling. To maintain the same effective KV cache size "
                                    "as before, increase --gpu-memory-utilization to {:.4f}. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
                                    u, r4(u - du), std::min(r4(u + du), 1.0)));
      else if (era.graph_estimate_applied)  // 0.21+ with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 (gpu_worker.py, logger.warning)
        f.log.push_back(fmt::format("CUDA graph memory profiling is disabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0). Without it, CUDA graph memory "
                                    "is not accounted for during KV cache allocation, which may require lowering --gpu-memory-utilization to avoid "
                                    "OOM. Consider re-enabling it (the default as of v0.21.0) and increasing --gpu-memory-utilization from {:.4f} to {:.4f}.",
                                    u, std::min(r4(u + du), 1.0)));
      else
        f.log.push_back(fmt::format("In v0.19, CUDA graph memory profiling will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more "
                                    "accurately accounts for CUDA graph memory during KV cache allocation. To try it now, set "
                                    "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization from {:.4f} to {:.4f} to maintain the "
                                    "same effective KV cache size.",
                                    u, std::min(r4(u + du), 1.0)));
    }
  }

  if (kv_done) {
    if (s.dcp > 1 && !era.v0)  // kv_cache_utils.py _report_kv_cache_config, before the size line
      f.log.push_back(fmt::format("Multiplying the GPU KV cache size by the cp_world_size {} (pcp_world_size 1 * dcp_world_size {}).", s.dcp, s.dcp));
    if (era.v0) {
      f.log.push_back(fmt::format("# GPU blocks: {}, # CPU blocks: {}", blocks, v0_cpu_blocks(s, t0)));
      f.log.push_back(fmt::format("Maximum concurrency for {} tokens per request: {:.2f}x", L, f.max_concurrency));
    } else if (era.combined_kv_line) {
      f.log.push_back(fmt::format("GPU KV cache size: {} tokens, Maximum concurrency for {} tokens per request: {:.2f}x", commas(f.kv_tokens),
                                  commas(L), f.max_concurrency));
    } else {
      f.log.push_back(fmt::format("GPU KV cache size: {} tokens", commas(f.kv_tokens)));
      f.log.push_back(fmt::format("Maximum concurrency for {} tokens per request: {:.2f}x", commas(L), f.max_concurrency));
    }
    if (s.cuda_graphs() && !(oom && oom->stage == StageId::KvPool)) {
      f.log.push_back(fmt::format("Graph capturing finished, took {:.2f} GiB", to_gib(t0.st->gact.central)));
      if (t0.st->gest.central > 0 && s.graph_estimate_on) {
        double diff = to_gib(t0.st->gest.central - t0.st->gact.central);
        f.log.push_back(fmt::format("CUDA graph pool memory: {} GiB (actual), {} GiB (estimated), difference: {} GiB ({:.1f}%).", gib_fmt(t0.st->gact.central),
                                    gib_fmt(t0.st->gest.central), gib_fmt(t0.st->gest.central - t0.st->gact.central),
                                    t0.st->gact.central > 0 ? 100.0 * diff / to_gib(t0.st->gact.central) : 0.0));
      }
      if (era.kv_memory_flag && !s.kv_cache_memory_bytes) {
        // The suggestion line (PR #21489; vllm_log.cpp kv_suggestion_line): fixed 150 MiB
        // redundancy buffer, graphs as captured, the budget sized before capture as "in use".
        // peak_activation_memory holds the applied CUDA-graph estimate only in the
        // total_consumed era (L18b); before it the estimate was subtracted from the budget
        // separately (vllm-071: R - weights - peak - non-torch - 1.32 GiB estimate = 43.4 GiB in use).
        KvSuggestion k;
        k.free_at_start = F0c;
        k.total = T;
        k.utilization = u;
        k.requested = R;
        k.weights = W0;
        k.non_torch = t0.st->nt.central;
        k.peak_activation = t0.st->act.central + (era.total_consumed && s.graph_estimate_on ? t0.st->gest.central : 0);
        k.graph_actual = t0.st->gact.central;
        k.kv_available = t0.avail[Central];
        f.log.push_back(kv_suggestion_line(era, k));
      }
    }
  }
  if (era.v0 && refusal && refusal->stage == StageId::KvPool && v0_tokens > 0) {
    f.log.push_back(fmt::format("# GPU blocks: {}, # CPU blocks: {}", blocks, v0_cpu_blocks(s, t0)));
  }
}

// Model Runner V2 compiling with torch.compile on an empty cache: --compile-cache cold, or
// VLLM_DISABLE_COMPILE_CACHE=1 (vllm/envs.py: every start compiles). enforce_eager compiles nothing.
bool compiles_cold(const Deployment& d, const Settings& s) {
  if (s.enforce_eager || !model_runner_v2(s.era, d.model->config)) return false;
  return d.compile_cache == "cold" || d.env_on("VLLM_DISABLE_COMPILE_CACHE");
}

// What the forecast rests on: the budget rule of the era, the estimated terms, the KV layout.
void notes(Forecast& f, const Deployment& d, const Settings& s, const RankTerms& t0, int64_t T, int64_t R, double u) {
  const Era& era = s.era;
  if (std::string r = model_runner_basis(era, d.model->config); !r.empty()) f.notes.push_back(std::move(r));
  f.notes.push_back(fmt::format("budget: requested = {} x {} = {} ({}); KV = {}", gib2(T), u, human_bytes(R),
                                era.ceil_request ? "ceil" : "float",
                                s.kv_cache_memory_bytes ? "--kv-cache-memory-bytes exactly"
                                : era.v0_context_in_baseline ? "T x u - (weights + activation peak + non-torch growth over the post-context baseline)"
                                : era.whole_gpu      ? "T x u - (weights + activation peak + non-torch of the whole GPU)"
                                : s.graph_estimate_on ? "requested - weights - activation peak - non-torch - CUDA-graph estimate"
                                                      : "requested - weights - activation peak - non-torch"));
  note_host_state(f, d,
                  era.whole_gpu && !era.v0_context_in_baseline
                      ? "this vLLM charges them to its budget (whole-GPU non-torch before 0.9.1): KV shrinks by as much"
                  : era.whole_gpu ? "this vLLM (V0 from 0.6.5) profiles against a baseline taken after them: its budget ignores them, the card does not"
                                  : "this vLLM's budget is per instance (0.9.1+, PR #19312): they do not shrink KV, but the free memory at start must "
                                    "cover the requested utilization of the total or it refuses to start");
  f.notes.push_back("ESTIMATED: " + t0.st->ctx.basis);
  if (era.v0_context_in_baseline) f.notes.push_back("budget charge: " + t0.st->ctx_budget.basis);
  f.notes.push_back("ESTIMATED: " + t0.st->act.basis);
  f.notes.push_back("ESTIMATED: " + t0.st->nt.basis);
  if (s.cuda_graphs()) f.notes.push_back("ESTIMATED: " + t0.st->gact.basis);
  f.notes.push_back(fmt::format("KV layout: block size {}, page {} B, {} tensor(s), {} group(s){}", t0.st->layout.block_size, t0.st->layout.page_bytes,
                                t0.st->layout.tensors, t0.st->layout.num_groups,
                                t0.st->layout.hybrid ? " (hybrid KV cache manager)"
                                : t0.st->layout.composition.empty() ? ""
                                                                     : " (" + t0.st->layout.composition + ")"));
  if (d.par.dp > 1) f.notes.push_back(fmt::format("data parallel {}: each engine replica plans the same; KV tokens are per replica", d.par.dp));
  if (!era.v0 && !s.enforce_eager && !compiles_cold(d, s)) {
    if (model_runner_v2(era, d.model->config))
      f.notes.push_back("torch.compile cache: warm (a restart that kept ~/.cache/vllm). A first start or a fresh container compiles inside the "
                        "profile run and holds ~1.0 GiB more (ESTIMATE): --compile-cache cold plans it");
    else if (d.compile_cache == "warm")
      f.notes.push_back("torch.compile cache: the V1 runner's terms are fitted on first starts; a warm restart had 0.95 GiB more KV in a 0.24.0 "
                        "pair (xvllm-012), not applied (n=1)");
  }
}

// What plans of one deployment share when only its budget flags differ (tune's and fit's
// bisection): the flags resolved, the per-rank weights and the per-stage terms. Kept for the last
// deployment planned on the thread (engines/plan_memo.h); nothing here depends on the budget
// (utilization / KV bytes): that is applied to `s` and the ranks' `avail` by every plan. Only
// the Deployment is the key: a term computed here must not read PlanOptions.
struct Prepared {
  bool valid = false;
  Deployment key;
  Settings s;
  std::string era_text;
  // 0.14 .. 0.15 with pipeline parallelism: get_kv_cache_configs checks one request's memory with the
  // unified spec of ALL workers' layers against a worker's memory (PR #29431's regression, fixed by
  // PR #33698, merged 2026-02-03: vllm#32105 "71.16 GiB is the required total KV cache for 202,752
  // tokens, not a single GPU"; vllm#34076 on 0.15.2rc1.dev93 still asks 24.0 GiB = all 48 layers of
  // Qwen3-Coder-30B-A3B at 262,144 tokens). First release with the fix INFERRED 0.16. The whole
  // model's layout for that check; empty otherwise.
  std::optional<KvLayout> whole_model_check;
  std::vector<StageTerms> stages;
  std::vector<RankTerms> ranks;
  std::vector<std::string> notes, log;  // notes after the settings' own; the first log lines
};

// MXFP4 MoE experts as vLLM holds them after loading, per byte of the checkpoint's expert tensors
// (weight U8 [out, in/2] + E8M0 scale U8 [out, in/32] + bf16 bias [out]), by the backend
// vllm/model_executor/layers/quantization/mxfp4.py get_mxfp4_backend picks:
//  - Marlin, and FlashInfer: create_weights pads hidden to 256 and the per-rank intermediate to 128
//    (FlashInfer on sm100: both to 256; SM90_FI_MXFP4_BF16: both to 128); the ratio of the padded
//    matrices to the checkpoint's.
//  - Triton (sm90 with triton_kernels installed, VLLM_MXFP4_USE_MARLIN unset or 0): create_weights
//    pads the intermediate to 64 only; process_weights_after_loading swizzles weights and scales
//    into triton_kernels' Hopper layouts (_swizzle_mxfp4): the weights are replaced, but the
//    swizzled scales are new tensors beside the still-registered originals, their output dimension
//    padded to 2 x num_warps x 2 x 8 = 256 (triton_kernels HopperMXScaleLayout, num_warps 8 without
//    batched MoE), and the biases become fp32 copies.
// Triton is taken on sm90 from 0.11 (GUESS about the install: the vllm/vllm-openai image ships
// triton_kernels, a pip install without it takes Marlin; no log between 0.10.1 and 0.11.0 says
// which). Checks: gpt-oss-120b on one H100, "Model loading took 64.38 GiB" on 0.11.0 (xvllm-024)
// and 0.14.1 ("Using Triton backend", vllm#33155) vs 64.30 here (60.77 GiB checkpoint + 3.53);
// gpt-oss-20b 13.47 (xvllm-023) vs 13.40; Marlin on 0.10.1 (vllm-004) 65.97 vs 65.90.
double mxfp4_expert_ratio(const Era& era, const Deployment& d, const ModelConfig& c, int tp, std::vector<std::string>& notes) {
  auto up = [](int64_t x, int64_t m) { return (x + m - 1) / m * m; };
  const int64_t h = c.hidden_size, im = c.moe_intermediate_size / (d.par.ep > 1 ? 1 : tp);
  if (h <= 0 || im <= 0) return 1.0;
  const bool sm100 = d.gpu.sm == 100 || d.gpu.sm == 103;
  auto env_bool = [&](const char* name) -> std::optional<bool> {
    // vllm/envs.py maybe_convert_bool: None when unset, else bool(int(value)).
    const std::string* v = d.env_value(name);
    if (!v) return std::nullopt;
    try {
      size_t used = 0;
      long long x = std::stoll(*v, &used);
      if (used == v->size()) return x != 0;
    } catch (const std::exception&) {
    }
    fail_input("--env", name, fmt::format("'{}' is not an integer (vllm/envs.py reads it as bool(int(value)))", *v));
  };
  const auto marlin_env = env_bool("VLLM_MXFP4_USE_MARLIN");
  const auto fi_sm90 = env_bool("VLLM_USE_FLASHINFER_MOE_MXFP4_BF16");
  const double hd = static_cast<double>(h), imd = static_cast<double>(im);
  if (d.gpu.sm == 90 && fi_sm90.value_or(false))
    return static_cast<double>(up(h, 128) * up(im, 128)) / (hd * imd);
  if (d.gpu.sm == 90 && has(Rule::Mxfp4TritonSm90, era.version) && !marlin_env.value_or(false)) {
    const double imp = static_cast<double>(up(im, 64));
    const double raw = 1.5 * hd * imd + 3.0 * hd * imd / 32 + (2 * imd + hd) * 2;
    const double loaded = 1.5 * hd * imp + 3.0 * hd * imp / 32 +
                          static_cast<double>(up(2 * up(im, 64), 256)) * hd / 32 + static_cast<double>(up(h, 256)) * imp / 32 +
                          (2 * imp + hd) * 4;
    notes.push_back(fmt::format("MXFP4 experts on the Triton backend (sm90, 0.11+; VLLM_MXFP4_USE_MARLIN=1 takes Marlin): "
                                "swizzled scales kept beside the originals and fp32 biases, +{:.1f}% of the experts (a GUESS that "
                                "triton_kernels is installed, as in the vllm/vllm-openai image)",
                                (loaded / raw - 1) * 100));
    return loaded / raw;
  }
  return static_cast<double>(up(h, 256) * up(im, sm100 ? 256 : 128)) / (hd * imd);
}

// profile_run's multimodal step (vllm/v1/worker/gpu_model_runner.py profile_run, V1 0.11 .. 2026):
// before the text dummy run the encoder runs once on mm_budget's dummy batch, and its outputs are
// kept (encoder_cache["tmp"]) through _dummy_run and _dummy_sampler_run, cleared only after them.
// Every Qwen3-VL / Qwen3.5 start in the logs read (0.11 .. 0.26: xvllm-022, xvllm-034, xvllm-040,
// public-code ids 55195690679, 7744031738, 56970046574, 51912001300) prints "Encoder cache will be
// initialized with a budget of 16384 tokens, and profiled with 1 image items of the maximum feature
// size" at max_num_batched_tokens <= 16,384, and one at 32,768 prints "a budget of 32768 tokens, and
// profiled with 2 image items" (public-code 56681168668): the budget is max(max_num_batched_tokens,
// the largest item) (compute_mm_encoder_budget: max_num_encoder_input_tokens defaults to
// max_num_batched_tokens) and the dummy batch holds budget // 16,384 images of 16,384 tokens =
// 16,384 x merge^2 patches each, through one tower call. Two terms follow:
//  - held: the encoder outputs, items x 16,384 x out_hidden x (1 + deepstack mergers) bf16 (the
//    Qwen3-VL tower concatenates its deepstack features to the output), alive during the text
//    forward and the sampler: added to the text peak (DERIVED);
//  - tower: the tower's own torch peak for all P patches of the batch. The pixel values come from the
//    HF image processor as fp32 and reach the GPU as fp32 (MultiModalKwargs.as_kwargs keeps the
//    dtype; profile_run's batched_dummy_mm_inputs holds them through the call), and
//    Qwen3VLForConditionalGeneration._process_image_input makes a bf16 copy (.type(visual.dtype)):
//    in_channels x temporal x patch^2 x (4 + 2) B per patch, DERIVED. Inside the blocks
//    (Qwen3_VisionTransformer.forward / Qwen3_VisionBlock, read, not measured: a GUESS of which
//    temporaries coexist): the hidden states 2h, a block's norm output 2h, fc1 and its GELU output
//    2 x 2I/tp B. Check: Qwen3.5-9B on a named L40S at 8,192 tokens / 256 requests (xvllm-034 on
//    0.18.0, xvllm-035 on 0.19.0; neither charges the CUDA-graph estimate): 0.9 x 44.39 - 17.66
//    weights - 20.27 KV = 2.02 GiB of peak + non-torch as logged, against this tower's 1.89 + 0.15
//    (the text side, 1.01 GiB, is smaller). Before the fp32 copy was counted the tower was 1.52.
// The peak of the profile run is the larger of the tower and the text one (activation_peak + held),
// on the first pipeline stage, which holds the tower. Off with --skip-mm-profiling or
// --language-model-only (no tower loaded).
struct VisionProfile {
  Estimate tower;
  double held = 0;
  int64_t items = 1;
};

// Pixel values per patch (channels x temporal patch x patch^2) and encoder-output bytes per merged
// token (out_hidden, plus the deepstack mergers' copies, in bf16) of a Qwen3-VL-style tower.
double patch_values(const VisionTower& v) {
  return static_cast<double>(v.in_channels * std::max<int64_t>(1, v.temporal_patch_size) * v.patch_size * v.patch_size);
}
double encoder_output_bytes(const ModelConfig& c) {
  const VisionTower& v = c.vision;
  return static_cast<double>((v.out_hidden > 0 ? v.out_hidden : c.hidden_size) * (1 + std::max<int64_t>(0, v.deepstack_mergers))) * 2;
}

std::optional<VisionProfile> vision_profile_peak(const Deployment& d, const ModelConfig& c, int tp, int64_t N) {
  const VisionTower& v = c.vision;
  if (!v.present || (v.kind != "qwen3_vl" && v.kind != "qwen2_5_vl") || v.hidden <= 0 || v.intermediate <= 0 || v.patch_size <= 0)
    return std::nullopt;
  for (const char* off : {"--skip-mm-profiling", "--language-model-only"})
    if (const std::string* f = d.flag(off); f && *f != "false" && *f != "False" && *f != "0") return std::nullopt;
  constexpr int64_t kItemTokens = 16384;  // the logged "maximum feature size" of one image
  VisionProfile r;
  r.items = std::max<int64_t>(1, std::max(N, kItemTokens) / kItemTokens);
  const double merge = static_cast<double>(std::max<int64_t>(1, v.spatial_merge_size));
  const double P = static_cast<double>(r.items * kItemTokens) * merge * merge;
  const double pixel = patch_values(v) * (4 + 2);
  const double h = static_cast<double>(v.hidden), I = static_cast<double>(v.intermediate) / std::max(1, tp);
  // Qwen3-VL's block MLP is fc1 + GELU (2 x 2I B per patch); Qwen2.5-VL's is SwiGLU
  // (Qwen2_5_VisionMLP: gate_up_proj's 2I outputs and SiluAndMul's I, 3 x 2I B).
  const double mlp = v.kind == "qwen2_5_vl" ? 6 * I : 4 * I;
  const double peak = P * (pixel + 4 * h + mlp);
  r.held = static_cast<double>(r.items * kItemTokens) * encoder_output_bytes(c);
  r.tower = range(peak, 0.8, 1.6,
                  fmt::format("vision tower profile on {} x 16,384-token image(s) ({:.0f} patches): fp32 pixel values and their bf16 "
                              "copy + hidden + a block's norm and MLP outputs ({}) = {:.2f} GiB (GUESS: which block temporaries coexist)",
                              r.items, P, v.kind == "qwen2_5_vl" ? "SwiGLU gate_up + act" : "fc1 + GELU", peak / GiB));
  return r;
}

// Qwen3-VL (model_type qwen3_vl / qwen3_vl_moe) on vLLM 0.11 profiles ONE VIDEO, not an image:
// "Encoder cache will be initialized with a budget of 153600 tokens, and profiled with 1 video items
// of the maximum feature size" (vllm#27992, Qwen3-VL-8B-FP8 on 0.11.0, even at --max-model-len
// 32768; public-code 42514581982, a Qwen3-VL-30B-class TP4 start, same budget). The video path's
// memory is not derived (its dummy geometry was not read); ESTIMATE fitted on two 0.11.0 refusals
// whose budgets leave the profile peak: Qwen3-VL-8B on an RTX 5090 at 0.9 (xvllm-074: 28.23 - 16.58
// weights - 0.15 non-torch - 4.66 KV = 6.84 GiB) and Qwen3-VL-30B-A3B on an A100 80GB (xvllm-022:
// 71.33 - 58.12 - ~0.2 - 8.04 = ~4.97 GiB): per budget token the fp32 pixel values of its 4 patches
// (24,576 B) + 0.71 x the encoder outputs (out_hidden x (1 + deepstack levels) x 2 B), i.e. 47.8 and
// 36.2 KB against 47.8 and 34.7 logged. Window INFERRED: 0.11 logs; vllm#38459 still sizes Qwen3-VL's
// video per item on 0.17.1; the Qwen3.5 logs of 0.18+ and a Qwen3-VL-30B-A3B-FP8 start on 0.20.2
// (xvllm-008, within 2.4% on the image path) do not show it.
// Under tensor parallelism every rank holds the whole fp32 pixel input, while the second term
// shrinks with the rank's share of the tower (its sharded linears' outputs): a Qwen3-VL-30B-A3B TP4
// start on 4 x RTX 3090, 0.11.0 (xvllm-091: 0.9 x 23.56 - 14.77 weights - 2.31 KV = 4.12 GiB of peak
// + non-torch, the pixel values alone 3.52) leaves ~0.4 GiB for it where the TP1 figure is 1.66.
// INFERRED, n = 1 at TP > 1.
std::optional<Estimate> qwen3_vl_video_profile(const Era& era, const ModelConfig& c, int tp) {
  const VisionTower& v = c.vision;
  if (!has(Rule::Qwen3VlVideoProfile, era.version) || (c.model_type != "qwen3_vl" && c.model_type != "qwen3_vl_moe")) return std::nullopt;
  constexpr double kBudget = 153600;
  const double merge = static_cast<double>(std::max<int64_t>(1, v.spatial_merge_size));
  const double pixel_fp32 = merge * merge * patch_values(v) * 4;
  const double out = encoder_output_bytes(c);
  const double peak = kBudget * (pixel_fp32 + 0.71 * out / std::max(1, tp));
  // Ends GUESSED around the two fitted logs (0.96x and 1.04x of the central).
  return range(peak, 0.85, 1.2,
               fmt::format("Qwen3-VL video profile of vLLM 0.11-0.17: one video of a 153,600-token encoder budget (vllm#27992), 153,600 x "
                           "({:.0f} B of fp32 pixel values + 0.71 x {:.0f} B of encoder outputs / tp {}) = {:.2f} GiB (ESTIMATE, n=2 at "
                           "TP1: Qwen3-VL-8B and -30B-A3B refusals on 0.11.0; the / tp from one TP4 start)",
                           pixel_fp32, out, tp, peak / GiB));
}

void prepare(Prepared& P, const Deployment& d) {
  P.valid = false;
  P.key = d;
  P.s = resolve_settings(d);
  P.notes.clear();
  P.log.clear();
  const Settings& s = P.s;
  const Era& era = s.era;
  const ModelConfig& c = d.model->config;
  P.era_text = era.label + "; " + era.reason;

  // DeepSeek-V4: per-layer specs, grouping and the packed block layout in vllm_kv.cpp (0.24+).
  // The layout is exact given the KV memory (vllm-035, vllm-036 replayed to the token). The
  // profile run's sparse-attention workspace (indexer K-gather max_model_len x 40 / 4 entries of
  // 132 B, or the prefill bf16 gather, whichever is larger) and the indexer's 512 MiB logits
  // reservation are DERIVED (vllm_estimates.cpp dsv4_profile_buffers): 1.12 GiB + 0.5 GiB on
  // vllm-035. The rest of V4's forward (hyper-connection and fp32 temporaries, MoE/DeepGEMM
  // workspaces) is one ESTIMATE per batched token fitted on two logs (dsv4_profile_buffers
  // hc_temporaries). Say so.
  const bool dsv4 = c.model_type == "deepseek_v4" || c.family == "deepseek_v4";
  if (dsv4)
    P.notes.push_back(
        "ESTIMATED: DeepSeek-V4's sparse-attention workspace and indexer logits reservation are derived from vLLM's code; the "
        "rest of its profile-run forward (hyper-connection temporaries, MoE/DeepGEMM workspaces) is an ESTIMATE per batched "
        "token fitted on 2 logs (both TP2 on Hopper, one with MTP). Pass --kv-cache-memory-bytes for an exact token count");
  const bool amd = d.gpu.vendor == "amd";
  const Fabric fabric = fabric_of(d.gpu);                                  // PCIe hosts' NCCL figures (vllm_estimates.cpp)
  const FlashInferSampler fi = flashinfer_sampler_env(d, era, P.notes);   // VLLM_USE_FLASHINFER_SAMPLER
  const int tp = std::max(1, d.par.tp), pp = std::max(1, d.par.pp);
  const int64_t N = s.max_num_batched_tokens;

  std::vector<RankWeights> ws = cached_weights_per_rank(d.model, EngineKind::VLLM, d.par);
  int64_t extra_layers = draft_kv_layers(c, s.spec_method);  // MTP drafters' attention layers (vllm_kv.cpp)
  bool mtp = extra_layers > 0;
  // KV tensors of the drafter in the shared pool: MTP layers, or a draft model's attention layers.
  const int64_t draft_kv_tensors = mtp ? extra_layers : s.draft ? s.draft_layers : 0;
  // A draft model (method draft_model) loads inside load_model's window, each TP rank its shard
  // (draft_tensor_parallel_size defaults to the target's): its weights join "Model loading took".
  std::vector<RankWeights> draft_ws;
  if (s.draft) {
    Parallel dp = d.par;
    dp.pp = 1;
    dp.ep = 1;
    draft_ws = weights_per_rank(*s.draft, EngineKind::VLLM, dp);
    P.notes.push_back(fmt::format("draft model {}: its weights ({} on rank 0) and {} attention layers of KV are modelled; its dummy run in "
                                  "profile_run is not (smaller than the target's)",
                                  s.spec_model, draft_ws.empty() ? std::string("0 B") : human_bytes(draft_ws.front().bytes), s.draft_layers));
  } else if (!s.spec_method.empty() && !mtp && !(s.spec_method == "draft_model" && !s.spec_model.empty())) {  // else settled in resolve_settings
    P.notes.push_back(fmt::format("speculative method '{}': the draft model's weights and KV are not modelled", s.spec_method));
  }

  P.whole_model_check.reset();
  if (pp > 1 && !era.v0 && has(Rule::PpWholeModelKvCheck, era.version)) {
    Deployment one = d;
    one.par.pp = 1;
    KvLayout whole = stage_kv_layout(one, s, 0);
    if (!whole.packed) whole.in_flight_batches = in_flight_batches(d, s);  // the deployment's (pp batches), not one stage's
    P.whole_model_check = whole;
    P.notes.push_back("the one-request KV check of 0.14-0.15 counts every layer of the model against one pipeline stage's memory (vllm#32105, "
                      "fixed by PR #33698 in 0.16 INFERRED)");
  }

  // ---- per-stage and per-rank terms
  P.stages.assign(static_cast<size_t>(pp), StageTerms{});
  P.ranks.clear();
  P.ranks.reserve(ws.size());
  const int64_t raw0 = ws.empty() ? 0 : ws.front().bytes;
  // MXFP4 experts as loaded per byte of the checkpoint's (mxfp4_expert_ratio above).
  const double mx_ratio = c.quant.method == QuantMethod::Mxfp4 && c.is_moe() && !amd ? mxfp4_expert_ratio(era, d, c, tp, P.notes) : 1.0;
  for (const auto& w : ws) {
    RankTerms t;
    t.rank = w.rank;
    t.pp_rank = w.pp_rank;
    t.mtp = mtp ? w.mtp_bytes : 0;
    t.weights = w.bytes + t.mtp;
    t.padded = false;
    if (c.quant.method == QuantMethod::Mxfp4 && c.is_moe() && !amd) {
      // vllm/model_executor/layers/quantization/mxfp4.py Mxfp4MoEMethod.create_weights: expert
      // tensors are allocated with hidden rounded up to 256 and the per-rank intermediate to 128
      // (flashinfer on sm100: both to 256). gpt-oss-120b on H100: 2880 -> 3072 x 2880 -> 2944,
      // +9.0% of 56.7 GiB of experts = 65.9 GiB, logged "Model loading took 65.9651 GiB" (vllm-004).
      // On sm90 from 0.11 the Triton backend instead (mxfp4_expert_ratio).
      for (const auto& [comp, bytes] : w.by_component)
        if (comp == "experts") t.weights += static_cast<int64_t>(static_cast<double>(bytes) * (mx_ratio - 1.0));
    }
    // The weights item's label: padded when the bytes differ from rank 0's as loaded.
    t.padded = t.weights != raw0 && c.quant.method == QuantMethod::Mxfp4;
    if (w.pp_rank < 0 || w.pp_rank >= pp) fail_input("vllm", "--pp", fmt::format("rank {} lies on pipeline stage {} of {}", w.rank, w.pp_rank, pp));
    const auto [l0, l1] = pp_indices(static_cast<int>(c.num_layers), pp, w.pp_rank);
    const bool last = w.pp_rank == pp - 1;
    // Allocated at load beyond the checkpoint's tensors, inside "Model loading took".
    const LoadExtra lora = lora_buffers(c, s.lora, tp, l0, l1);
    const LoadExtra marlin = amd ? LoadExtra{} : fp8_marlin_scales(c, d.gpu, w.fp8_bytes);
    if (s.text_only) t.weights -= w.component_bytes({"vision"});
    if (s.redundant_experts > 0 && c.num_experts > 0 && d.par.ep > 1) {
      // EPLB: (E + R) / EP experts per rank instead of E / EP.
      const int64_t extra = w.component_bytes({"experts"}) * s.redundant_experts / c.num_experts;
      t.weights += extra;
      if (P.ranks.empty())
        P.notes.push_back(fmt::format("EPLB: {} redundant experts over {} EP ranks: +{} of expert weights per rank", s.redundant_experts, d.par.ep,
                                      human_bytes(extra)));
    }
    int64_t fp8_saved = 0;
    if (s.online_fp8) {
      const OnlineFp8 o = online_fp8(w, era.version, l1 - l0);
      fp8_saved = o.saved;
      t.weights -= o.saved;
      t.fp8_transient = o.load_transient;
      if (P.ranks.empty()) P.notes.push_back(o.what);
    }
    if (s.cpu_offload_bytes > 0 && model_runner_v2(era, c) && has(Rule::Mrv2CpuOffloadNoop, era.version)) {
      // Model Runner V2 never installed the offloader (set_offloader was called by the V1 runner
      // only): vllm#51396 (2026-08-07, "cpu_offload_gb silently no-ops on Model Runner V2"). PR
      // #51413 "added MRV2 weight offloading by reusing the MRV1 offloader" (vLLM blog of
      // 2026-08-31, which lists it as landed); first release 0.28.0 INFERRED (PR opened days after
      // the issue, 0.28.0 cut in late August). Before it the weights load whole on the GPU.
      if (P.ranks.empty())
        P.notes.push_back("--cpu-offload-gb has no effect here: Model Runner V2 (this build's runner for dense models) does not install the "
                          "CPU offloader before vLLM PR #51413 (vllm#51396; 0.28.0 INFERRED as the first release with the fix), so every "
                          "weight stays on the GPU");
    } else if (s.cpu_offload_bytes > 0) {
      const CpuOffload off = cpu_offload(w, s.cpu_offload_bytes, fp8_saved);
      t.weights -= off.bytes;
      if (P.ranks.empty()) P.notes.push_back(off.what);
    }
    t.lora = lora.bytes;
    t.marlin = marlin.bytes;
    t.draft = !draft_ws.empty() && last ? draft_ws[static_cast<size_t>(w.tp_rank)].bytes : 0;  // draft_ws: one entry per TP rank
    t.weights += t.lora + t.marlin + t.draft;
    if (P.ranks.empty()) {
      if (!lora.what.empty()) P.notes.push_back(lora.what);
      if (!marlin.what.empty()) P.notes.push_back(marlin.what);
    }
    StageTerms& st = P.stages[static_cast<size_t>(w.pp_rank)];
    if (!st.built) {
      st.layout = stage_kv_layout(d, s, w.pp_rank);
      st.draft_kv_tensors = last ? draft_kv_tensors : 0;
      int64_t layers = l1 - l0;
      int64_t linear = 0;
      for (int i = l0; i < l1 && i < static_cast<int>(c.layers.size()); ++i)
        if (c.layers[i].attn == AttnKind::Linear) ++linear;
      // NCCL's communicators span the data-parallel ranks too: init_distributed_environment builds
      // the DP and EP groups over dp x tp x pp processes, and every group of more than one rank gets
      // a PyNccl device communicator (parallel_state.py GroupCoordinator), so a DP replica on one
      // GPU carries the multi-GPU context and NCCL figures.
      const int comm_tp = tp * std::max(1, d.par.dp);
      st.ctx = cuda_context(era, comm_tp, pp, amd, fabric);
      st.ctx_budget = budget_context(era, comm_tp, pp, amd, fabric);
      st.nt = non_torch_increase(era, comm_tp, pp, fabric);
      if (d.gpu.vendor == "nvidia" && unified_memory_device(d.gpu.sm)) st.nt = uma_non_torch(st.nt);
      // Sparse-attention buffers the WorkspaceManager keeps through the profile run: DeepSeek-V4's,
      // or DeepSeek-V3.2 / GLM-5's indexer prefill buffer (vllm_estimates.cpp).
      std::optional<Dsv4ProfileBuffers> sparse;
      if (dsv4) sparse = dsv4_profile_buffers(c, s.max_model_len, N, w.pp_rank, pp);
      else if (c.mla && c.has_indexer() && !era.v0) sparse = dsa_profile_buffers(c, s.max_model_len);
      st.act = activation_peak(era, c, d.par, N, s.max_num_seqs, last, layers, sparse ? &*sparse : nullptr, fi);
      if (compiles_cold(d, s)) {
        const Estimate cold = cold_compile_overhead();
        add_bytes(st.act, cold);
        st.act.basis += "; + " + cold.basis;
      }
      if (sparse) {
        st.v4_workspace.central = st.v4_workspace.high = sparse->workspace;
        st.v4_workspace.low = std::min(sparse->workspace, sparse->gather_ws);  // as activation_peak's low end
      }
      if (w.pp_rank == 0)
        if (auto vit = s.text_only ? std::nullopt : vision_profile_peak(d, c, tp, N)) {
          st.act.central += vit->held;
          st.act.low += vit->held;
          st.act.high += vit->held;
          st.act.basis += fmt::format("; + {:.2f} GiB of dummy encoder outputs kept through it ({} image(s) x 16,384 tokens)",
                                      vit->held / GiB, vit->items);
          if (vit->tower.central > st.act.central) {
            st.act.central = vit->tower.central;
            st.act.low = std::max(st.act.low, vit->tower.low);
            st.act.high = std::max(st.act.high, vit->tower.high);
            st.act.basis += "; the larger: " + vit->tower.basis;
          }
          if (auto video = qwen3_vl_video_profile(era, c, tp); video && video->central > st.act.central) {
            st.act.central = video->central;
            st.act.low = std::max(st.act.low, video->low);
            st.act.high = std::max(st.act.high, video->high);
            st.act.basis += "; the larger: " + video->basis;
          }
        }
      int64_t pw = s.piecewise_graphs * s.graph_copies;
      const int64_t full = s.full_graphs * s.graph_copies;
      // The capture, and the basis vLLM's own estimator extrapolates from (calibrated on the logged
      // estimates at one cost per graph, vllm_estimates.cpp cuda_graph_estimate).
      auto capture = [&](GraphCost cost) {
        Estimate e = !s.cuda_graphs() ? Estimate{}
                     : era.graph_outputs_per_size && linear == 0
                         ? cuda_graph_memory_outputs_per_size(c, layers, s.capture, s.model_dtype == DType::F32 ? 4 : 2)
                         : cuda_graph_memory(era, c, layers, linear, pw, full, tp, N, cost);
        if (s.cuda_graphs())
          if (Estimate nccl = nccl_graph_capture(era, c, tp, fabric, d.gpu.interconnect == "network", pw + full, layers); nccl.central > 0) {
            add_bytes(e, nccl);
            e.basis += "; + " + nccl.basis;
          }
        return e;
      };
      st.gact = capture(GraphCost::ByKind);
      Estimate estimator_basis = capture(GraphCost::PerGraph);
      if (s.cuda_graphs() && pw > 0)
        if (const int64_t dl = drafter_graph_layers(s, extra_layers); dl > 0) {
          st.gdraft = drafter_graph_memory(pw, dl, decode_kernels_per_layer(s.draft && !mtp ? s.draft->config : c));
          add_bytes(st.gact, st.gdraft);
          add_bytes(estimator_basis, st.gdraft);
          st.gact.basis += "; + " + st.gdraft.basis;
        }
      // The second-largest PIECEWISE size: the graph whose delta vLLM's estimator extrapolates.
      std::vector<int64_t> sizes = s.capture;
      std::sort(sizes.begin(), sizes.end());
      const int64_t second = sizes.size() >= 2 ? sizes[sizes.size() - 2] : 0;
      st.gest = era.graph_estimate_logged && s.cuda_graphs() ? cuda_graph_estimate(era, c, estimator_basis, layers, pw + full, second) : Estimate{};
      st.sampler = last ? sampler_warmup(era, c, std::min(s.max_num_seqs, N), fi) : Estimate{};
      st.built = true;
    }
    t.st = &st;
    for (size_t j = 0; j < P.ranks.size(); ++j)
      if (P.ranks[j].same_as < 0 && P.ranks[j].pp_rank == t.pp_rank && P.ranks[j].weights == t.weights) {
        t.same_as = static_cast<int>(j);
        break;
      }
    P.ranks.push_back(t);
  }
  if (P.ranks.empty()) fail_input("vllm", "--model", "no ranks to plan (tensor x pipeline parallel size is 0)");
  if (pp > 1) {
    std::vector<std::string> parts;
    for (int p = 0; p < pp; ++p) {
      auto [a, b] = pp_indices(static_cast<int>(c.num_layers), pp, p);
      parts.push_back(std::to_string(b - a));
    }
    if (c.num_layers % pp) P.log.push_back(fmt::format("Hidden layers were unevenly partitioned: [{}]. This can be manually overridden using the VLLM_PP_LAYER_PARTITION environment variable", fmt::join(parts, ",")));
  }
  const RankTerms& r0 = P.ranks.front();
  if (d.flag("--kv-transfer-config")) {
    // KV connectors (e.g. LMCacheConnectorV1) leave vLLM's budget as it is (vllm_estimates.cpp
    // non_torch_increase). LMCache's GPU connector (lmcache/v1/gpu_connector.py
    // VLLMPagedMemGPUConnectorV2, use_gpu) keeps one staging chunk, torch.empty of
    // [2, layers, chunk_size 256, KV heads x head size] in the KV dtype = 256 tokens of this
    // rank's KV, allocated before profiling and outside the budget; its CPU/disk tiers hold no
    // GPU memory. Not added to the timeline (whether the buffer exists depends on the LMCache
    // config, which the flags do not carry).
    const auto& l = r0.st->layout;
    int64_t chunk = l.block_size > 0 ? l.bytes_per_block_all() / l.block_size * 256 : 0;
    P.notes.push_back(fmt::format(
        "--kv-transfer-config: the connector does not change vLLM's KV budget; its GPU buffers come on top of it (LMCache's GPU staging "
        "chunk: 256 tokens of this rank's KV, {}; not in the timeline: it depends on the connector's own config)",
        human_bytes(chunk)));
  }
  for (const auto& n : r0.st->layout.notes) P.log.push_back(n);
  if (r0.st->layout.padding_layers > 0)
    P.log.push_back(fmt::format("Add {} padding layers, may waste at most {:.2f}% KV cache memory", r0.st->layout.padding_layers,
                                100.0 * r0.st->layout.padding_layers / std::max<int64_t>(1, r0.st->layout.tensors * r0.st->layout.num_groups)));
  P.valid = true;
}

// A host profile's terms (--profile) on copies of the cached per-stage terms (the cache keeps the
// estimates): the CUDA context and non-torch growth measured at this TP size replace the
// estimates; the activation peak and graph memory are scaled by the host's logged / estimated.
struct CalibratedRanks {
  std::vector<RankTerms> ranks;
  std::deque<StageTerms> terms;
  std::string note;
};
void calibrate_terms(StageTerms& st, const Calibration& c, const CalibrationAtTp* at) {
  auto exact = [](Estimate& e, int64_t v) { e.central = e.low = e.high = v; };
  auto scale = [](Estimate& e, double k) {
    e.central = std::llround(static_cast<double>(e.central) * k);
    e.low = std::llround(static_cast<double>(e.low) * k);
    e.high = std::llround(static_cast<double>(e.high) * k);
  };
  if (at && at->init_bytes) exact(st.ctx, *at->init_bytes);
  if (at && at->non_torch_bytes) exact(st.nt, *at->non_torch_bytes);
  if (c.activation_scale) {
    scale(st.act, *c.activation_scale);
    st.act.central = std::max(st.act.central, st.v4_workspace.central);
    st.act.low = std::max(st.act.low, st.v4_workspace.low);
    st.act.high = std::max(st.act.high, st.v4_workspace.high);
  }
  if (c.graph_estimate_scale) scale(st.gest, *c.graph_estimate_scale);
  if (c.graph_scale) {
    scale(st.gact, *c.graph_scale);
    scale(st.gdraft, *c.graph_scale);
  }
}
std::vector<RankTerms>& calibrated_ranks(std::vector<RankTerms>& cached, const Calibration* c, int tp, CalibratedRanks& out) {
  if (!c) return cached;
  const CalibrationAtTp* at = c->at_tp(tp);
  out.ranks = cached;
  std::map<const StageTerms*, const StageTerms*> done;
  for (auto& t : out.ranks) {
    auto it = done.find(t.st);
    if (it == done.end()) {
      out.terms.push_back(*t.st);
      calibrate_terms(out.terms.back(), *c, at);
      it = done.emplace(t.st, &out.terms.back()).first;
    }
    t.st = it->second;
  }
  std::vector<std::string> terms;
  if (at && at->init_bytes) terms.push_back("CUDA context " + calibration_gib(*at->init_bytes));
  if (at && at->non_torch_bytes) terms.push_back("non-torch growth " + calibration_gib(*at->non_torch_bytes));
  if (c->activation_scale) terms.push_back(fmt::format("activation peak x {:.3f}", *c->activation_scale));
  if (c->graph_estimate_scale) terms.push_back(fmt::format("CUDA-graph estimate x {:.3f}", *c->graph_estimate_scale));
  if (c->graph_scale) terms.push_back(fmt::format("CUDA graphs x {:.3f}", *c->graph_scale));
  out.note = calibration_note(*c, at, tp, fmt::format("{}", fmt::join(terms, ", ")));
  return out.ranks;
}

}  // namespace

Forecast plan_vllm(const Deployment& d, const PlanOptions& opt) {
  // Nemotron-NAS: model_executor/models/nemotron_nas.py DeciLMDecoderLayer reads only no_op; a
  // replace_with_linear block (Llama-3.1-Nemotron-51B) gets an attention / MLP built from a null
  // n_heads_in_group / ffn_mult. The exact Python error is a GUESS; that it cannot load is not.
  // model_executor/models/nemotron_nas.py arrived with PR #15008 (merged 2025-03-18); earlier releases
  // map DeciLMForCausalLM to decilm.py, which reads a per-layer KV list Nemotron-NAS configs lack.
  // vllm#15779 quotes 0.7.3 ("DeciLMConfig object has no attribute 'num_key_value_heads_per_layer'")
  // and 0.8.2 loading the model; INFERRED boundary 0.8.2 (0.8.0 / 0.8.1 not seen).
  if (d.model->config.family == "nemotron_nas") {
    const Era e = era_for_version(d.engine_version);
    if (has(Rule::NemotronNasUnsupported, e.version))
      fail_input("vllm serve", "--model",
                 fmt::format("AttributeError: 'DeciLMConfig' object has no attribute 'num_key_value_heads_per_layer' (vLLM {} predates "
                             "nemotron_nas.py, 0.8.2)", d.engine_version));
  }
  if (d.model->config.family == "nemotron_nas")
    for (size_t i = 0; i < d.model->config.layers.size(); ++i)
      if (d.model->config.layers[i].attn_linear || d.model->config.layers[i].ffn_linear)
        fail_input("vllm serve", "--model",
                   fmt::format("block_configs[{}] replace_with_linear: vLLM's DeciLMDecoderLayer has no linear replacement "
                               "(TypeError: unsupported operand type(s) for //: 'int' and 'NoneType', GUESS of the wording)", i));
  thread_local Prepared P;
  if (P.valid && same_but_budget(P.key, d, kBudgetFlags)) apply_budget(P.s, resolve_budget(d, P.s.era));
  else prepare(P, d);
  const Settings& s = P.s;
  const Era& era = s.era;
  const Calibration* cal = calibration_for(opt, d);
  CalibratedRanks cal_ranks;
  std::vector<RankTerms>& ranks = calibrated_ranks(P.ranks, cal, std::max(1, d.par.tp), cal_ranks);
  Forecast f;
  f.engine = "vllm";
  f.version = d.engine_version.empty() ? "newest" : d.engine_version;
  f.era = P.era_text;
  f.settings = s.table;
  if (opt.detail) {
    f.notes = s.notes;
    f.notes.insert(f.notes.end(), P.notes.begin(), P.notes.end());
    f.log = P.log;
  }

  const int64_t T = d.capacity_bytes;
  const int tp = std::max(1, d.par.tp), pp = std::max(1, d.par.pp);
  const double u = s.utilization;
  // requested_memory: T * u (float) until 2026, ceil(T * u) in request_memory().
  const int64_t R = era.ceil_request ? static_cast<int64_t>(std::ceil(static_cast<double>(T) * u))
                                     : static_cast<int64_t>(static_cast<double>(T) * u);
  const int64_t L0 = s.max_model_len;
  const int64_t N = s.max_num_batched_tokens;
  // Memory other processes hold (--host-state): in the whole-GPU budget's non-torch term before
  // 0.9.1 (but V0's baseline-relative profile from 0.6.5); from 0.9.1 only in the startup check.
  const int64_t others = d.held_by_others_max();
  const int64_t others_charged = era.whole_gpu && !era.v0_context_in_baseline ? others : 0;
  for (auto& t : ranks) {
    const StageTerms& st = *t.st;
    for (int sc = 0; sc < 3; ++sc) {
      int64_t W = t.weights, A = pick(st.act, sc), NT = pick(st.nt, sc), CTX = pick(st.ctx_budget, sc);
      int64_t G = s.graph_estimate_on ? pick(st.gest, sc) : 0;
      if (s.kv_cache_memory_bytes) t.avail[sc] = *s.kv_cache_memory_bytes;
      else if (era.whole_gpu) t.avail[sc] = static_cast<int64_t>(static_cast<double>(T) * u) - (CTX + W + A + NT + others_charged);
      else t.avail[sc] = R - W - A - NT - G;
    }
  }
  const RankTerms& r0 = ranks.front();

  // ---- engine-core decisions on central estimates (refusals), min over workers
  std::optional<Failure> refusal;
  int refusal_rank = -1;
  int64_t F0c = T - r0.st->ctx.central - others;
  if (!era.whole_gpu && F0c < R) {
    std::string dev = has(Rule::StartupErrorNamesDevice, era.version) ? " cuda:0" : "";
    refusal = Failure{StageId::Init, 0, R, F0c,
                      fmt::format("ValueError: Free memory on device{} ({}/{} GiB) on startup is less than desired GPU memory utilization ({}, {} GiB). "
                                  "Decrease GPU memory utilization or reduce GPU memory used by other processes.",
                                  dev, gib(era, F0c), gib(era, T), py(u), gib(era, R))};
  }

  int64_t L = L0;
  int64_t blocks[3] = {INT64_MAX, INT64_MAX, INT64_MAX};
  int64_t min_avail = INT64_MAX;
  for (const auto& t : ranks) min_avail = std::min(min_avail, t.avail[Central]);
  int64_t weights_fail_rank = -1;
  int64_t v0_tokens = 0;
  for (const auto& t : ranks)
    if (t.weights + t.fp8_transient + t.st->ctx.central + others > T) { weights_fail_rank = t.rank; break; }

  // --num-gpu-blocks-override (vllm/v1/core/kv_cache_utils.py). Until 0.20 get_num_blocks ->
  // may_override_num_blocks replaces each worker's computed block count after the capacity check,
  // which still ran on the profiled memory, and logs the computed count. From 0.21 (PR #41069)
  // get_kv_cache_configs first sets every worker's available memory to override x
  // _pool_bytes_per_block (logging avail // bytes_per_block), so auto-fit and the checks run on
  // the overridden capacity. Either way the override blocks are what initialize_kv_cache
  // allocates, whatever the memory.
  const std::optional<int64_t> override_blocks = s.num_gpu_blocks_override;
  auto checked = [&](const RankTerms& t, int sc) -> int64_t {
    if (override_blocks && era.override_sets_memory && !t.st->layout.attention_free)
      return *override_blocks * t.st->layout.bytes_per_block_all();
    return t.avail[sc];
  };
  std::string override_line;  // printed by the engine core before "GPU KV cache size"
  if (!refusal && weights_fail_rank < 0 && override_blocks && era.override_sets_memory)
    override_line = fmt::format("Overriding num_gpu_blocks={} with num_gpu_blocks_override={}",
                                r0.avail[Central] > 0 ? r0.avail[Central] / std::max<int64_t>(1, r0.st->layout.bytes_per_block_all()) : 0,
                                *override_blocks);
  if (override_blocks && era.override_sets_memory) {
    min_avail = INT64_MAX;
    for (const auto& t : ranks) min_avail = std::min(min_avail, checked(t, Central));
  }

  if (!refusal && weights_fail_rank < 0) {
    if (s.max_model_len_auto) {
      int64_t best = INT64_MAX;
      for (const auto& t : ranks)
        if (t.same_as < 0)
          best = std::min(best, checked(t, Central) > 0 ? estimate_max_model_len(P.whole_model_check ? *P.whole_model_check : t.st->layout,
                                                                                 checked(t, Central), L0, N)
                                                        : 0);
      if (best <= 0) {
        refusal = Failure{StageId::KvPool, 0, 0, min_avail,
                          "ValueError: Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. Try increasing `gpu_memory_utilization`."};
      } else if (best < L0) {
        f.log.push_back(fmt::format("Auto-fit max_model_len: reduced from {} to {} to fit in available GPU memory ({} GiB available for KV cache)", L0, best, gib(era, min_avail)));
        L = best;
      } else {
        f.log.push_back(fmt::format("Auto-fit max_model_len: full model context length {} fits in available GPU memory", L0));
      }
    }
    for (const auto& t : ranks) {
      if (refusal) break;
      if (t.same_as >= 0) continue;  // decided on the earlier rank with the same terms
      int64_t a = checked(t, Central);
      if (a <= 0 && !t.st->layout.attention_free) {
        refusal = Failure{StageId::KvPool, t.rank, 0, a,
                          std::string("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.") +
                              (has(Rule::ConservingMemoryHint, era.version) ? conserving() : "")};
        refusal_rank = t.rank;
        break;
      }
      const KvLayout& checked_layout = P.whole_model_check ? *P.whole_model_check : t.st->layout;
      int64_t need = needed_bytes(checked_layout, L, N);
      if (era.v0) continue;  // V0 checks tokens after blocks (below)
      if (need > a) {
        int64_t M = estimate_max_model_len(checked_layout, a, L, N);
        std::string est = M > 0 ? fmt::format("Based on the available memory, the estimated maximum model length is {}. ", M) : "";
        std::string g_need = era.format_gib ? gib_fmt(need) : fmt::format("{:.2f}", to_gib(need));
        std::string g_av = era.format_gib ? gib_fmt(a) : fmt::format("{:.2f}", to_gib(a));
        refusal = Failure{StageId::KvPool, t.rank, need, a,
                          fmt::format("ValueError: To serve at least one request with the {} max seq len ({}), ({} GiB KV cache is needed, which is larger "
                                      "than the available KV cache memory ({} GiB). {}Try increasing `gpu_memory_utilization` or decreasing `max_model_len` "
                                      "when initializing the engine.{}",
                                      era.models_typo ? "models's" : "model's", L, g_need, g_av, est, has(Rule::ConservingMemoryHint, era.version) ? conserving() : "")};
        refusal_rank = t.rank;
        f.notes.push_back(fmt::format("estimated maximum model length M = {} (binary search over max_model_len as vLLM's estimate_max_model_len)", M));
      }
    }
    for (int sc = 0; sc < 3; ++sc)
      for (const auto& t : ranks)
        if (t.same_as < 0) blocks[sc] = std::min(blocks[sc], num_blocks(t.st->layout, t.avail[sc]));
    if (override_blocks) {
      if (!era.override_sets_memory)
        override_line = fmt::format("Overriding num_gpu_blocks={} with num_gpu_blocks_override={}", std::max<int64_t>(0, blocks[Central]), *override_blocks);
      for (auto& b : blocks) b = *override_blocks;
      f.notes.push_back(fmt::format("--num-gpu-blocks-override {}: the KV pool is {} blocks whatever the memory ({}){}", *override_blocks, *override_blocks,
                                    human_bytes(*override_blocks * r0.st->layout.bytes_per_block_all()),
                                    era.override_sets_memory ? "; the capacity checks and auto-fit use that capacity (PR #41069, 0.21+)"
                                                             : "; the capacity check still used the profiled memory (before PR #41069)"));
    }
    if (era.v0 && !refusal) {
      int64_t tokens = blocks[Central] * r0.st->layout.block_size;
      v0_tokens = tokens;  // V0 prints "# GPU blocks" before it refuses
      if (tokens < L)
        refusal = Failure{StageId::KvPool, 0, L, tokens,
                          fmt::format("ValueError: The model's max seq len ({}) is larger than the maximum number of tokens that can be stored in KV cache ({}). "
                                      "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
                                      L, tokens)};
    }
  }
  for (auto& b : blocks)
    if (b == INT64_MAX || b < 0) b = 0;

  // ---- the timeline on every rank
  std::optional<Failure> oom;
  bool profile_oom = false;
  int64_t headroom = INT64_MAX;
  for (const auto& t : ranks) {
    if (t.same_as >= 0) {
      // Same terms as an earlier rank: the same timeline (it cannot be the first to fail).
      if (opt.detail) f.repeat_rank(static_cast<size_t>(t.same_as), t.rank);
      continue;
    }
    RankSim sim(t.rank, T);
    sim.begin_stage(StageId::Init);
    sim_held_by_others(sim, d, others);
    // 0.9.1-0.10.2 build NCCL after the init snapshot: its buffers are in the non-torch growth item.
    const char* ctx_what = tp * pp <= 1 ? "" : (!era.whole_gpu && !era.nccl_before_snapshot) ? " (NCCL buffers: in the non-torch growth)" : " + NCCL communicators";
    sim.alloc_estimated("CUDA context" + std::string(ctx_what), t.st->ctx.central, t.st->ctx.low, t.st->ctx.high);
    bool stop = refusal && refusal->stage == StageId::Init;
    if (!stop) {
      sim.begin_stage(StageId::Weights);
      // Online FP8's 16-bit weights while loading: exact before 0.14, one layer's linears after (INFERRED).
      const int64_t tr = t.fp8_transient, tr_lo = has(Rule::OnlineFp8Streaming, era.version) ? 0 : tr, tr_hi = has(Rule::OnlineFp8Streaming, era.version) ? 2 * tr : tr;
      const char* tr_what = "16-bit weights during online FP8 quantization";
      if (tr > 0) sim.alloc_estimated(tr_what, tr, tr_lo, tr_hi);
      sim.alloc(t.padded ? "model weights (incl. MXFP4 expert padding)" : "model weights (Model loading took)", t.weights - t.lora - t.marlin - t.draft - t.mtp);
      if (tr > 0 && !sim.failed()) sim.release_estimated(tr_what, tr, tr_lo, tr_hi);
      if (t.mtp > 0) sim.alloc("draft (MTP) weights", t.mtp);
      if (t.draft > 0) sim.alloc("draft model weights (--speculative-config model)", t.draft);
      if (t.marlin > 0) sim.alloc("Marlin FP8 group scales (no FP8 compute)", t.marlin);
      if (t.lora > 0) sim.alloc("LoRA adapter slots (--enable-lora)", t.lora);
    }
    if (!stop && !sim.failed()) {
      sim.begin_stage(StageId::ProfileRun);
      const Estimate& ws = t.st->v4_workspace;  // zero but for DeepSeek-V4 and DSA models
      if (ws.central > 0)
        sim.alloc_estimated("sparse-attention workspace (kept)", ws.central, ws.low, ws.high);
      sim.alloc_estimated("profile_run activation peak (torch)", t.st->act.central - ws.central, t.st->act.low - ws.low, t.st->act.high - ws.high);
      sim.alloc_estimated("non-torch memory growth", t.st->nt.central, t.st->nt.low, t.st->nt.high);
      if (t.st->gest.central > 0) {
        sim.alloc_estimated("CUDA-graph memory estimate (profile_cudagraph_memory)", t.st->gest.central, t.st->gest.low, t.st->gest.high);
        sim.release_estimated("CUDA-graph estimate pool", t.st->gest.central, t.st->gest.low, t.st->gest.high);
      }
      // DeepSeek-V4: the WorkspaceManager buffer stays (locked) for the engine's life.
      sim.release_estimated("profile_run activations freed", t.st->act.central - ws.central, t.st->act.low - ws.low, t.st->act.high - ws.high);
    }
    bool kv_ok = !refusal && !sim.failed();
    if (kv_ok) {
      int64_t per_block = t.st->layout.bytes_per_block_all();
      sim.begin_stage(StageId::KvPool);
      // The drafter's layers share the pool's blocks (one tensor each): shown as their own item.
      const int64_t draft_tensors = per_block == t.st->layout.tensors * t.st->layout.page_bytes ? std::min(t.st->layout.tensors - 1, t.st->draft_kv_tensors) : 0;
      const int64_t target_block = per_block - draft_tensors * t.st->layout.page_bytes, draft_block = per_block - target_block;
      sim.alloc_estimated(fmt::format("KV cache ({} blocks x {} tensors x {} B)", blocks[Central], t.st->layout.tensors - draft_tensors, t.st->layout.page_bytes),
                          blocks[Central] * target_block, blocks[Best] * target_block, blocks[Worst] * target_block);
      if (draft_tensors > 0)
        sim.alloc_estimated(fmt::format("draft KV cache ({} blocks x {} layer(s))", blocks[Central], draft_tensors),
                            blocks[Central] * draft_block, blocks[Best] * draft_block, blocks[Worst] * draft_block);
      if (s.cuda_graphs() && !sim.failed()) {
        sim.begin_stage(StageId::CudaGraph);
        const Estimate& gd = t.st->gdraft;
        sim.alloc_estimated(fmt::format("CUDA-graph capture ({} sizes)", s.capture.size()), t.st->gact.central - gd.central, t.st->gact.low - gd.low,
                            t.st->gact.high - gd.high);
        if (gd.central > 0) sim.alloc_estimated(fmt::format("drafter CUDA graphs ({} piecewise)", s.piecewise_graphs * s.graph_copies), gd.central, gd.low, gd.high);
        if (d.gpu.vendor == "nvidia" && unified_memory_device(d.gpu.sm)) {
          const Estimate u = unified_memory_capture_growth();
          sim.alloc_estimated("host memory growth during capture (unified memory)", u.central, u.low, u.high);
        }
      }
      if (!sim.failed() && t.st->sampler.central > 0) {
        sim.begin_stage(StageId::Warmup);
        sim.alloc_estimated("sampler warm-up (logits + sort buffers)", t.st->sampler.central, t.st->sampler.low, t.st->sampler.high);
        sim.release_estimated("sampler warm-up freed", t.st->sampler.central, t.st->sampler.low, t.st->sampler.high);
      }
      headroom = std::min(headroom, sim.free());
    }
    if (sim.failed() && !oom) {
      oom = sim.failure();
      if (oom->stage == StageId::ProfileRun) {
        oom->stage = StageId::Warmup;
        profile_oom = true;
      }
      if (oom->stage == StageId::Weights && has(Rule::ConservingMemoryHint, era.version))
        oom->message = "Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, increasing "
                       "--tensor-parallel-size, or using --quantization. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. (" +
                       oom->message + ")";
    }
    f.ranks.push_back(sim.finish());
  }
  (void)refusal_rank;

  // ---- results (rank 0 / engine core)
  const RankTerms& t0 = ranks.front();
  const bool started_profile = !(refusal && refusal->stage == StageId::Init) && !(oom && oom->stage == StageId::Weights);
  const bool kv_done = started_profile && !refusal && !(oom && (oom->stage == StageId::Weights || profile_oom));
  if (kv_done) {
    f.kv_tokens = kv_tokens(era, t0.st->layout, blocks[Central], L, N);
    f.max_concurrency = max_concurrency(t0.st->layout, blocks[Central], L, N);
  }
  if (era.v0 && refusal && refusal->stage == StageId::KvPool && v0_tokens > 0) f.kv_tokens = v0_tokens;
  // The lines vLLM would print (rank 0); only with detail: tune and fit never read them.
  if (opt.detail) {
    log_lines(f, s, t0, F0c, R, T, u, L, blocks[Central], started_profile, kv_done, refusal, oom, v0_tokens);
    if (!override_line.empty()) {
      auto at = std::find_if(f.log.begin(), f.log.end(), [](const std::string& l) {
        return l.rfind("GPU KV cache size", 0) == 0 || l.rfind("# GPU blocks", 0) == 0 || l.rfind("ValueError", 0) == 0;
      });
      f.log.insert(at, override_line);
    }
  }
  f.context_len = L;
  f.max_running_requests = s.max_num_seqs;
  f.headroom_bytes = headroom == INT64_MAX ? 0 : headroom;

  // ---- verdict
  if (refusal) {
    f.verdict = Verdict::Refused;
    f.failure = refusal;
    f.log.push_back(refusal->message);
  } else if (oom) {
    f.verdict = Verdict::Oom;
    f.failure = oom;
    f.log.push_back(oom->stage == StageId::Weights ? oom->message : "torch.OutOfMemoryError: CUDA out of memory. (" + oom->message + ")");
  } else {
    f.verdict = verdict_from_ranks(f.ranks, std::nullopt);
    // The capacity check on the unfavourable estimates: at risk of the refusal (also when a
    // transient peak already makes it at risk: the two have different fixes).
    for (const auto& t : ranks)
      if (checked(t, Worst) <= 0 || needed_bytes(t.st->layout, L, N) > checked(t, Worst)) {
        f.verdict = Verdict::AtRisk;
        f.refused_at_worst = true;
        f.notes.push_back("at the unfavourable end of the estimated activation/non-torch/graph terms vLLM would refuse (KV cache too small)");
        break;
      }
    // A drafter this plan does not count moves weights, KV and capture: at most at risk.
    const bool drafter_counted = draft_kv_layers(d.model->config, s.spec_method) > 0 || (s.spec_method == "draft_model" && s.draft);
    if (f.verdict == Verdict::Fits && !s.spec_method.empty() && s.spec_method != "ngram" && s.spec_method != "suffix" && !drafter_counted) {
      f.verdict = Verdict::AtRisk;
      f.notes.push_back(fmt::format("at risk rather than fits: the '{}' drafter's weights (and KV) are not counted", s.spec_method));
    }
  }

  // ---- notes: what is estimated and how (with detail: the search loops of tune and fit never
  // read them, and building them cost more than the forecast itself)
  if (opt.detail) notes(f, d, s, t0, T, R, u);
  if (cal) {
    f.calibrated_host = cal->host;
    if (opt.detail) f.notes.push_back(cal_ranks.note);
  }
  if (!opt.detail) f.log.clear();  // items stay: validate and tune read the stage sums
  return f;
}

}  // namespace headroom
