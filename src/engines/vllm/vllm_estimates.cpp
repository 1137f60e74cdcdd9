// The terms of vLLM's startup that no formula in vLLM fixes in advance: CUDA context and
// NCCL, non-torch growth during profiling, the profile run's activation peak and CUDA-graph
// memory. Each is an ESTIMATE with a range; the constants are fitted to the real startup
// logs of corpus/vllm.jsonl (figures quoted next to each constant) and re-checked by
// `headroom validate`.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

#include "engines/vllm/vllm_rule_table.h"
#include "engines/vllm/vllm_rules.h"
#include "headroom/error.h"
#include "engines/graph_nodes.h"
#include "engines/shared/capture_terms.h"
#include "engines/shared/process_terms.h"
#include "engines/vllm/vllm_constants.h"
#include "headroom/units.h"

namespace headroom::vllm {

namespace {
// A row of vllm_constants.cpp as an estimate of `scale` x its central, its ends the row's.
Estimate row(Const k, double scale, std::string basis) {
  const EstimatedConstant& c = constant(k);
  return range_of(c, c.central * scale, std::move(basis));
}
}  // namespace


// KV connectors (--kv-transfer-config, e.g. LMCacheConnectorV1): vLLM's budget is NOT changed by
// them. The connector is built in init_worker_distributed_environment (after the init snapshot,
// before load_model); its GPU buffers are torch tensors allocated before profile_run, so they
// are neither in torch_peak_increase (measured from the profile's start) nor in the non-torch
// growth, and the attention hooks (wait_for_kv_layer_from_connector / maybe_save_kv_layer_to_
// connector) return early in the dummy runs (no attention metadata). "Available KV cache
// memory" is therefore requested - weights - peak - non-torch as without a connector, and the
// connector's own buffers (and LMCache's runtime staging buffers) come on top of the budget.
// Corpus: vllm-001 (vllm#21348: `--kv-transfer-config {"kv_connector":"LMCacheConnectorV1",
// "kv_role":"kv_both"}`, TP4 H100, 2025-07) logs 8.11 GiB where this model expects ~9.3 GiB:
// its act + non-torch were ~8.0 GiB per rank against 6.9 estimated. LMCache does not explain it:
// its GPU connector (lmcache/v1/gpu_connector.py VLLMPagedMemGPUConnectorV2) allocates one
// staging chunk [2, layers, 256, KV heads x head size] (12 MiB here) as a torch tensor before
// the profile, outside both the peak increase and the non-torch growth. The ~1.2 GiB is NCCL's:
// a July-2025 build (0.9.1-0.10.2) builds the communicators after the init snapshot and charges
// their buffers to the budget, ~0.65 GiB per rank (non_torch_increase by era; vllm-001 is one of
// the two figures that fit it, so its agreement is in-sample); vllm-029 (LMCache CPU offload, u = 0.9764) started and
// then ran out of memory during inference, the runtime buffers above.

// ---- Where NCCL sits relative to the budget, by era (multi-GPU only; one GPU has no NCCL).
// vllm/v1/worker/gpu_worker.py init_device / determine_available_memory, read in three eras:
//  A. V1 until 0.9.0 (whole-GPU, era.whole_gpu): init_gpu_memory = mem_get_info() is read before
//     init_worker_distributed_environment, but determine_available_memory charges every non-torch
//     byte in use after the profile (total - free - torch allocated: CUDA context, NCCL
//     communicators, their growth; idx:44087638, a 0.8.x copy). KV = T x u - (peak + all that).
//  B. 0.9.1 .. 0.10.2 (per-instance budget, PR #19312): init_snapshot = MemorySnapshot() and the
//     "Free memory on device" check come first, init_worker_distributed_environment after it
//     (idx:70421998 / idx:67128433888, 0.10.x copies: "# Initialize the distributed environment."
//     below the ValueError). The communicators are built after the snapshot, so their buffers
//     are non-torch growth in memory_profiling's non_torch_increase (after_profile -
//     before_create) and are charged to the gpu_memory_utilization budget; the startup check
//     sees the CUDA context alone.
//  C. 0.11.0 on: PR #25359 ("[BugFix] Fix OOM in vLLM replicas by ensuring consistent NCCL
//     memory accounting", merged 2025-09-22; in the weekly summary of 2025-09-26 with PR #25444,
//     the FULL_AND_PIECEWISE default of 0.11.0; 0.10.2 was released 2025-09-13, before it) moves
//     init_worker_distributed_environment above the snapshot ("Now take memory snapshot after
//     NCCL is initialized", idx:1384046). NCCL's buffers are in the baseline: outside the
//     budget, seen only by the startup check (free >= T x u); non_torch_increase keeps what
//     grows after it (lazily connected NCCL channels, all-reduce fusion workspaces, cuBLAS).
//  D. total_consumed accounting (0.26.1 on, era.total_consumed; vllm/utils/mem_utils.py,
//     idx:57477222335): total_consumed = init free - free after the profile (after gc +
//     empty_cache), non_kv = total_consumed + (torch peak - torch allocated after). The snapshot
//     is still taken after NCCL (C), so "consumed memory (weights + non-torch)" - weights is
//     everything left resident since the snapshot that is not weights: non-torch growth, the
//     model runner's persistent torch buffers and the allocator's segments empty_cache cannot
//     return. It stands where non_torch_increase stood (vllm_plan.cpp: R - W - A - NT - G).
// Each era's figures below are fitted on logs of that era only. V0 (< 0.8) takes era A's rule
// and is not re-derived: its own logs show more (PR #10511's sanity run, Llama-3-8B on H100:
// non_torch_memory 1.79 GiB at TP1, 3.58 GiB at TP2, Dec 2024).
// A group spread over nodes (--interconnect network, e.g. Ray with one GPU per node) builds no
// NVLS buffers and no custom all-reduce either ("Custom allreduce is disabled because this process
// group spans across nodes"): it takes the PCIe hosts' figures. Logged: gpt-oss-120b TP4 over four
// one-GPU Ray nodes on 0.10.1.1 (extra xvllm-094) left 0.78 GiB for activation + non-torch, its
// FlashInfer sampler 0.67 of it: ~0.11 GiB of growth, where the NVLink figure is 2.6.
Fabric fabric_of(const GpuSpec& g) {
  return g.vendor == "nvidia" && (g.interconnect == "pcie" || g.interconnect == "network") ? Fabric::Pcie : Fabric::NvLink;
}

// ---- PCIe hosts (Fabric::Pcie: GeForce / RTX workstation / L40S / A10 cards, data/gpus.json
// "interconnect": "pcie"). NCCL over PCIe builds no NVLS (NVLink SHARP) buffers -- those need
// NVSwitch on sm90+ -- and opens fewer channels (it sizes them by link bandwidth), and vLLM's
// custom all-reduce is off past two PCIe-only GPUs (custom_all_reduce.py: "not supported on more
// than two PCIe-only GPUs", logged on 8 x L40S). The NVLink figures below were fitted on H100 /
// H200 / GB200 hosts and charged a 4 x A10 TP4 0.8.5 run (xvllm-006, whole-GPU budget) 1.55 +
// 0.54 GiB where its 198,784 logged tokens leave 0.99 GiB for the profile peak and all non-torch
// memory together. Real PCIe figures (ESTIMATED from these, n small):
//  context + NCCL (T - F at start, or the context + the NCCL-inclusive non-torch of builds that
//  measure NCCL after the snapshot):
//    0.92-0.96 GiB  RTX PRO 6000 TP4, 2026 build, "Free memory on device (94.05/94.97 GiB)" (vllm-052)
//    0.70 GiB       8 x L40S TP8, 0.10.2: 44.42 - 43.93 = 0.49 context + 0.21 non-torch (NCCL is
//                   built after the snapshot in that build), public-code idx:38962983769 (xvllm-019)
//    0.70 / 0.65    V0 on 2 x RTX 4090 / 2 x RTX 3090-class: ~0.45 context + "non_torch_memory
//                   takes 0.25GiB" / 0.20 GiB (vllm#13061, vllm#14447; V0 reads its baseline before
//                   init_worker_distributed_environment, so that figure is NCCL + growth)
//  -> central the median 0.70 GiB, ends just past the extremes (0.9x .. 1.4x: 0.63 .. 0.98).
//  NCCL's buffers alone (+ the profile's growth), the 0.9.1-0.10.2 non-torch term: 0.17 .. 0.21
//  GiB over the 8 L40S ranks (0.21 on five), 0.25 / 0.20 at TP2 in V0 -- the same size at TP2
//  and TP8, so not scaled by the world size as the NVLink term is -> central 0.21, ends 0.8x ..
//  1.25x (0.17 .. 0.26).
//  Growth after NCCL init (0.11+ and the 0.8.x whole-GPU rule, where NCCL sits in the context
//  term): 0.09 GiB (OPT-2.7B TP4 on 24 GB GPUs, 2025-11-19, idx:34802511869), ~0.35 (xvllm-017,
//  0.19.0 on 4 x L40S: 39.98 requested - 33.98 weights - 5.11 KV = 0.89 GiB for peak + growth,
//  less the 0.54 GiB peak this file derives; INFERRED), bounded by the NCCL-inclusive totals
//  above (0.17 .. 0.25) -> central the median of {0.09, 0.20, 0.21, 0.25, 0.35} = 0.21 GiB, ends
//  the extremes (0.4x .. 1.7x: 0.09 .. 0.36).
// The total_consumed era (0.26.1+) keeps its one figure, which is a PCIe host's (vllm-052).
// Not fitted: NCCL collectives captured in CUDA graphs on PCIe (vllm PR #45517: 8.76 GiB on the
// last stage of TP2 x PP2 on 24 GB cards) -- graph-stage memory, outside these terms.
Estimate cuda_context(const Era& era, int tp, int pp, bool amd, Fabric fabric) {
  if (tp * pp <= 1) return context_and_nccl(tp, pp, amd);
  if (!era.whole_gpu && !era.nccl_before_snapshot) {
    // Era B: the startup check's free memory is before NCCL. T - F logged "Free memory on device
    // (139.21/139.81 GiB)" = 0.60 GiB (vllm-048, 0.10.2, H200 TP2), as one GPU's context (0.49 ..
    // 0.56, vllm_estimates cuda_context); 0.49 on 8 x L40S PCIe (xvllm-019), inside the same
    // range, so PCIe hosts take it too. The ends are the 1-GPU ones.
    return row(Const::ContextEraB, GiB, "CUDA context (0.9.1-0.10.2: NCCL is built after the startup snapshot, its buffers are charged as non-torch growth)");
  }
  if (fabric == Fabric::Pcie)
    return row(Const::ContextPcie, GiB,
                 era.whole_gpu ? "CUDA context + NCCL communicators over PCIe (charged to the whole-GPU budget before 0.9.1), fitted on PCIe hosts' logs (0.65 .. 0.96 GiB)"
                               : "CUDA context + NCCL communicators over PCIe before the startup snapshot (0.11+: outside the budget), fitted on PCIe hosts' logs (0.65 .. 0.96 GiB)");
  // Eras C/D (and A, where the whole of it is charged): context + the communicators, T - F of
  // "Free memory on device (F/T GiB)" in 0.11+ logs, all TP4: 0.96 (RTX PRO 6000 PCIe, vllm-052),
  // 1.55 (80 GB, vllm-071), 2.47 (GB200-class 184.31 GiB, v0.26.0 GLM-5.2-NVFP4 with a FlashInfer
  // MNNVL all-reduce; public-code idx:61511710941: "Free memory on device (181.84/184.31 GiB)").
  // Central the median, ends just past the extremes (0.6x, 1.6x). vllm-052's 0.96 is a PCIe
  // host's; PCIe hosts now take their own figure (above), these stay for NVLink/NVSwitch, AMD
  // and custom GPUs (central unchanged; without it the median would be 2.01). Era A reuses them: no 0.8.x log gives
  // the figure (INFERRED: the same init_worker_distributed_environment builds the same groups).
  // Not fitted: vllm PR #45517 reports 8.76 GiB on the last pipeline stage of TP2 x PP2 on 24 GB
  // consumer GPUs (NCCL over PCIe/host, asymmetric per rank); such hosts can exceed the high end.
  return row(Const::ContextNvlink, GiB,
               era.whole_gpu ? "CUDA context + NCCL communicators (charged to the whole-GPU budget before 0.9.1), fitted on 0.11+ startup free memory"
                             : "CUDA context + NCCL communicators before the startup snapshot (PR #25359, 0.11+: outside the budget), fitted on logged free memory at start");
}

Estimate uma_non_torch(const Estimate& nt) {
  // vllm/utils/mem_utils.py MemorySnapshot.measure (public copy idx:375835840): on CUDA devices of
  // capability (8,7), (11,0), (12,1) ("Orin, Thor, Spark") free_memory = psutil.virtual_memory()
  // .available, cuda_memory = total - free and non_torch = cuda_memory - torch reserved. The
  // non-torch increase over the profile therefore takes in whatever system memory the host used
  // meanwhile (the engine's own torch.compile / inductor work runs in that window). One log gives
  // the size: Qwen3-30B-A3B-FP8 on a DGX Spark, vLLM 0.13.0, u = 0.3 (xvllm-018): 36.51 requested
  // - 29.04 weights - 4.04 KV = 3.43 GiB for peak + non-torch after an 86 s cold compile, ~2 GiB
  // more than the 256-request profile run explains.
  // ESTIMATE of that host growth from the four DGX Spark logs (KV forecast - logged, less the
  // weights and CUDA-graph-estimate differences, with the profile run as modelled): 1.90 GiB
  // (xvllm-018, above), 1.85 (Qwen3-0.6B, 0.27.1, xvllm-041: "3.35 GiB for consumed memory (weights
  // + non-torch)" against 1.11 of weights and the discrete 0.39), 5.37 (Qwen3.5-35B-A3B-FP8,
  // 0.18.1rc1, xvllm-021) and 8.55 (Qwen3.6-27B-NVFP4 at 65,536 batched tokens, 0.23.1rc1,
  // xvllm-020); the two multimodal hybrids, whose profile run also builds and encodes the dummy
  // images on the host, take the most (what holds it is not known). Central: 1.9 GiB, what every
  // one of them shows at least; ends: the discrete figure (no host growth) .. +8.6 GiB (n = 4,
  // DGX Spark only; Orin / Thor read memory the same way but no log of theirs has been checked).
  // Until 2026-12 the central was the discrete figure with +2.5 GiB at the unfavourable end.
  Estimate e = nt;
  e.central = nt.central + static_cast<int64_t>(constant(Const::UmaHostGrowth).central * GiB);
  e.high = nt.high + static_cast<int64_t>(constant(Const::UmaHostGrowth).high * GiB);
  e.basis = nt.basis + "; unified memory: free memory is psutil's available system memory, so host growth during profiling counts "
                       "(+1.9 GiB, up to +8.6: ESTIMATE from 4 DGX Spark logs, 1.85 .. 8.55 GiB)";
  return e;
}

Estimate budget_context(const Era& era, int tp, int pp, bool amd, Fabric fabric) {
  Estimate all = cuda_context(era, tp, pp, amd, fabric);
  if (!era.v0_context_in_baseline) return all;
  // V0 0.6.5+ (PR #10511, vllm_era.cpp): the baseline of memory_profiling is total - the free
  // memory read in init_device after the context exists, so only what comes after it (NCCL on
  // a multi-GPU deployment) is in non_kv. Logged "non_torch_memory takes" on one GPU (the
  // increase alone, no context): 0.11 GiB (0.6.6.post1, T4, xvllm-016), 0.05 (OCI 22.07 GiB
  // card, xvllm-015), 0.03 (RTX 4060, vllm-017) -- against ~0.45 of context the earlier rule
  // charged. The multi-GPU remainder (context + NCCL minus one context) is not re-fitted (V0 PCIe
  // logs: 0.20-0.25 GiB, vllm_estimates non_torch_increase era B).
  Estimate one = context_and_nccl(1, 1, amd);
  Estimate e;
  e.central = std::max<int64_t>(0, all.central - one.central);
  e.low = std::max<int64_t>(0, all.low - one.low);
  e.high = std::max<int64_t>(0, all.high - one.high);
  // The difference of two ranges' ends need not bracket the difference of their centrals (PCIe:
  // 0.63 - 0.315 > 0.70 - 0.45): keep the central inside.
  e.low = std::min(e.low, e.central);
  e.high = std::max(e.high, e.central);
  e.basis = tp * pp <= 1 ? "no CUDA context in the budget (V0 0.6.5+: memory_profiling baseline, PR #10511)"
                         : all.basis + " less one GPU's CUDA context (V0 0.6.5+: in the memory_profiling baseline, PR #10511)";
  return e;
}

bool model_runner_v2(const Era& era, const ModelConfig& c) {
  // Model Runner V2 (vllm/v1/worker/gpu/model_runner.py) is the default for dense models from
  // 0.25.1: PR #44443 "[ModelRunner V2] Enable by default for all dense models" (merged
  // 2026-07-02), and vllm#49224 / PR #49233 ("Model Runner V2 became the default for **dense**
  // models in 0.25.1"). MoE models and the Mamba/GDN hybrids keep the V1 runner
  // (gpu_model_runner.py) in those releases: the 0.27.1 logs of Qwen3.8-27B (a GDN hybrid,
  // public-code 61316607224) print gpu_model_runner.py, the 0.27.1 logs of dense Qwen2.5-0.5B
  // (corpus vllm-053, xvllm-003) and the 0.31.0 log of Llama-3.1-8B (xvllm-001) print
  // model_runner.py. Later enrolments of MoE models (vllm#49224 comments: DeepSeek-V4 via
  // PR #51768, late 2026-08) are not modelled. Speculative decoding is not a condition (INFERRED:
  // vllm#50159 runs EAGLE on V2 with Gemma-4 on 0.26.0).
  // Every model family from 0.29.0: PR #53183 (merged 2026-08-27) makes V2 the default "across
  // vLLM's model families" with capability fallbacks, "the first tagged release with this default
  // will be v0.29.0" (vLLM blog, 2026-08-31); logs agree: a Qwen3.8-27B hybrid on 0.29.1rc1 prints
  // model_runner.py (corpus vllm-009), a Qwen3 MoE on 0.27.1 still gpu_model_runner.py (xvllm-033).
  // Fallbacks kept: --enable-lora (above) and those of the blog's list a deployment shows
  // (Era::v2_fallback). The blog's
  // earlier milestones (a Qwen3 canary of 2026-05-14, Llama / Mistral 06-02) are not taken as
  // release defaults: Qwen3-8B on 0.24.0 (xvllm-012) is forecast to 0.02% under V1 rules.
  // VLLM_USE_V2_MODEL_RUNNER=0 / 1 forces the choice (=1 from 0.19: INFERRED, the first release
  // after V2's opt-in debut of 2026-03-24 in the date table of vllm_era.cpp).
  if (era.v0) return false;
  if (era.v2_runner_env == 0) return false;
  if (era.v2_runner_env == 1 && has(Rule::V2RunnerEnv, era.version)) return true;
  if (era.lora || era.v2_fallback) return false;
  // 0.28.1rc/dev builds are main after 0.28.0, which V2-for-all reached on 2026-08-27: a
  // GLM-5.3-Flash (MoE hybrid) start on 0.28.1rc1.dev580 of 2026-09-16 logs model_runner.py
  // (public-code 69102865712).
  if (has(Rule::Mrv2AllFamilies, era.version)) return true;
  return has(Rule::Mrv2DenseDefault, era.version) && !c.is_moe() && !c.has_linear_attention();
}

std::string model_runner_basis(const Era& era, const ModelConfig& c) {
  if (era.v0) return "";
  const bool v2 = model_runner_v2(era, c);
  const char* which = v2 ? "Model Runner V2 (vllm/v1/worker/gpu/model_runner.py)" : "the V1 model runner (gpu_model_runner.py)";
  const char* why = era.v2_runner_env == 0                          ? "VLLM_USE_V2_MODEL_RUNNER=0"
                    : era.v2_runner_env == 1 && v2                  ? "VLLM_USE_V2_MODEL_RUNNER=1"
                    : era.lora                                      ? "--enable-lora falls back to it"
                    : era.v2_fallback && has(Rule::Mrv2DenseDefault, era.version) ? "a configuration V2 falls back from (n-gram or EAGLE3 + PP speculation, DeepSeek-V3.2/V4 on ROCm, DBO, elastic EP, logits processors, KV-sharing fast prefill)"
                    : v2 && has(Rule::Mrv2AllFamilies, era.version) ? "every model family from 0.29.0 (PR #53183)"
                    : v2                                            ? "dense models from 0.25.1 (PR #44443)"
                    : has(Rule::Mrv2DenseDefault, era.version) ? "MoE and hybrid models keep it until 0.29.0"
                                                                    : "V2 is the default from 0.25.1 (dense) / 0.29.0 (all)";
  return fmt::format("model runner: {}: {}", which, why);
}

Estimate non_torch_increase(const Era& era, int tp, int pp, Fabric fabric) {
  const int world = tp * pp;
  if (world <= 1 && era.total_consumed) {
    // Era D on one GPU: "Actual usage is C GiB for consumed memory (weights + non-torch)" less
    // "Model loading took W": 0.30 (0.27.1, Qwen2.5-0.5B, RTX 4090 WSL2, vllm-053), 0.56 (the same
    // host and build at u = 0.85, xvllm-003), 0.26 (0.31.0, Llama-3.1-8B, A100-80GB, xvllm-001),
    // 0.47 (2026-09 build, a Qwen3.8-27B hybrid on an RTX 3090, vllm-054). ESTIMATE, n = 4: the
    // median 0.385 GiB, ends the extremes (0.65x .. 1.5x). Larger than the 0.15 GiB of the earlier
    // eras' one-GPU growth because total_consumed also holds the model runner's persistent torch
    // buffers and the segments empty_cache() cannot return (vllm/utils/mem_utils.py, era D above).
    return row(Const::NonTorchConsumedOneGpu, GiB,
                 "consumed - weights (total_consumed accounting, 0.26.1+), 1 GPU: logged 0.26 .. 0.56 GiB, median 0.385 (ESTIMATE, n=4)");
  }
  if (world <= 1) return non_torch_growth(world);
  if (fabric == Fabric::Pcie && !era.total_consumed) {
    // PCIe figures: see "PCIe hosts" above cuda_context.
    if (!era.whole_gpu && !era.nccl_before_snapshot)
      return row(Const::NonTorchPcieEraB, GiB,
                   "non-torch growth in the budget over PCIe (0.9.1-0.10.2: NCCL communicators built after the snapshot, no NVLS buffers), "
                   "not scaled by the world size (logged 0.17 .. 0.21 GiB at TP8 on L40S, 0.20 / 0.25 at TP2 in V0)");
    return row(Const::NonTorchPcie, GiB,
                 "non-torch growth in profile_run after NCCL init over PCIe (logged 0.09 .. ~0.35 GiB, median 0.21)");
  }
  if (!era.whole_gpu && !era.nccl_before_snapshot) {
    // Era B: the communicators' buffers + later growth, in the budget. Logged / implied per
    // world size: 1.38 GiB at TP2 (vllm-048, 0.10.2 H200, "1.38 GiB for non-torch memory") =
    // 0.69 per rank; ~2.5 GiB at TP4 (vllm-001, July 2025 H100: 71.27 requested - 55.12 weights -
    // 8.11 available - ~5.5 sampler peak) = 0.63 per rank. PR #25359 itself reports ~4.5 GiB of
    // NCCL buffers in its setup (78.59 vs 74.07 GiB free, TP not stated; not fitted). Scaled by
    // the world size: NCCL's NVLS buffers are allocated per rank of the communicator
    // (channels x 2 x buffer size x ranks; INFERRED from NCCL's NVLS setup, n = 2 fits: a GUESS
    // for TP8 and for hosts without NVSwitch). 0.65 GiB x world, ends 0.15x .. 1.5x. The low end
    // is PCIe hosts: V0's worker.py measured the same quantity (baseline snapshot before
    // init_worker_distributed_environment, idx:70512571769) and logged "non_torch_memory takes
    // 0.25GiB" on 2 x RTX 4090 (vllm#13061) and 0.20 GiB on RTX 3090-class 23.58 GiB cards
    // (vllm#14447): no NVLS, no custom all-reduce past two PCIe GPUs.
    return row(Const::NonTorchEraBPerRank, GiB * world,
                 fmt::format("non-torch growth in the budget (0.9.1-0.10.2: NCCL communicators built after the snapshot), 0.65 GiB x {} ranks "
                             "(logged 1.38 at TP2, ~2.5 implied at TP4)",
                             world));
  }
  if (era.total_consumed) {
    // Era D: consumed - weights. 1.70 GiB (vllm-052, RTX PRO 6000 TP4: 56.89 consumed - 55.19
    // weights); vllm-080 (0.26.1rc0, TP3) logs 64.44 consumed against ~61.74 loaded, ~2.7 with a
    // 1.2 GiB draft model inside (not separable) -> the high end 1.6x. n = 1 clean figure.
    // vllm-071 (dated 2026-08-14, so read as 0.27 by the release table) still prints the L18a
    // "for non-torch memory" form (0.13 GiB): its build predates the total_consumed rewrite, and
    // this term overstates its non-torch by ~1.6 GiB (the era table's date cut is INFERRED).
    // Two-GPU logs since: 0.38 (2 x T4, 0.28.0: 7.54 consumed - 7.16 weights, xvllm-061) and 0.54
    // (2 x RTX 4090, 0.30.0, Qwen3.5-27B-FP8 with --language-model-only: 14.39 consumed against
    // 13.85 loaded without the vision tower, which the Qwen3.5 class does not build then; read as
    // 0.07 against the whole checkpoint until 2026-12, xvllm-060). Three and four ranks hold
    // several times more (NCCL's per-peer channel buffers; no per-peer figure is logged): 0.46 GiB
    // at TP2, 1.6 beyond (ESTIMATE, n = 4 hosts, two per size).
    if (world <= 2)
      return row(Const::NonTorchConsumedTwoGpus, GiB, "consumed - weights (total_consumed accounting, 0.26.1+), 2 GPUs: logged 0.38 .. 0.54 GiB (ESTIMATE, n=2)");
    return row(Const::NonTorchConsumedMoreGpus, GiB, "consumed - weights (total_consumed accounting, 0.26.1+: non-torch growth + persistent non-weight torch), 3+ GPUs (logged 1.70 at TP4, ~1.5 at TP3)");
  }
  // Eras A and C: growth after NCCL init only. Logged in 0.11+ ("non-torch forward increase
  // memory" / "for non-torch memory"): 0.54 and 0.55 GiB at TP2 on H100 (Qwen3-32B, Llama-3.3-
  // 70B-FP8, vllm-openai:v0.11.0; public-code idx:27349653019, whose TP1 runs log 0.13-0.14),
  // 0.09 (OPT-2.7B TP4 on 24 GB GPUs, 2025-11-19, idx:34802511869; a PCIe host, also in the PCIe
  // fit above), 0.13 (vllm-071, TP4 80 GB),
  // 0.95 (GLM-5.2-NVFP4 TP4 GB200-class, v0.26.0, idx:61511710941: the FlashInfer MNNVL
  // all-reduce fusion workspace is built during compile, after the snapshot). n = 5: central
  // the median 0.54 GiB, ends the extremes (0.16x .. 1.8x). Cross-check with era B (not a fit):
  // 0.11's TP2 growth 0.55 + NCCL at start (1.55 - 0.60 context) ~ 1.5 GiB against 0.10.2's
  // logged 1.38 at TP2. Era A (0.8.x) has no log of its own (vllm-073 bounds context + NCCL +
  // growth below ~0.6 GiB on PCIe A10s); it takes these (INFERRED).
  // Still a miss: vllm-035 (DeepSeek-V4-Flash, 0.26.0, H20 TP2) logs a 7.01 GiB KV pool; this
  // era's terms leave ~12.8 GiB (0.76 GiB more than the era-blind 1.3 GiB term did). The gap is
  // not NCCL's: the run had MTP on (draft weights, KV and activations absent from its flags) and
  // DeepSeek-V4's profile-run memory is not checked against a log that prints weights or peak.
  return row(Const::NonTorchAfterNccl, GiB, "non-torch growth in profile_run after NCCL init (lazy NCCL channels, all-reduce workspaces), multi-GPU (logged 0.09 .. 0.95 GiB, median 0.54)");
}

namespace {
// Bytes per logit entry alive together at the peak of vLLM's dummy sampler run
// (gpu_model_runner.py _dummy_sampler_run -> v1/sample/sampler.py -> ops/topk_topp_sampler.py),
// DERIVED from the tensors each path allocates, for R dummy requests x V vocab entries. The
// dummy metadata sets top_p = 0.9 and top_k = V - 1 with no_penalties=True, no logprobs, no
// bad words or allowed-token mask (PR #13594 and every later version read), so only the
// top-k/top-p path allocates per-logit tensors:
//   logits from compute_logits, model dtype (bf16)                                   2
//   Sampler.forward: logits.to(torch.float32)                                        4
//  PyTorch sort path (apply_top_k_top_p: logits.sort -> values fp32 + indices int64)  4 + 8
//   plus at::native launch_stable_sort_kernel's scratch (aten SortStable.cu):
//     R >= 128: segmented_sort_pairs: reverse_indices int64 8 + CUB SortPairs
//               alternate key/value buffers 4 + 8                                     20 -> 38 B
//     2..127:   segmented_sort_pairs_by_full_sort: int2 pairs x 2 (16) + keys_out 4
//               + CUB alternate buffers 12                                            32 -> 50 B
//     R = 1:    segmented_sort_large_segments: CUB alternate buffers 12               12 -> 30 B
//   (after the sort: masks 1 + 1, softmax copy 4, scatter 4 < the sort's scratch)
//  FlashInfer, 0.2.3+ API (top_k_top_p_sampling_from_logits): top_k_mask_logits
//   copy 4 + softmax probs 4                                                          -> 14 B
//  FlashInfer, pre-0.2.3 API (0.8.x forward_cuda): softmax probs 4 (+ [32, R] uniforms)  -> 10 B
//  Triton top-k/top-p (apply_top_k_top_p_triton, 2026): masks the fp32 logits in place
//   ([SMs, V] scratch, not per request); then softmax probs 4 + random_sample's
//   exponential q 4                                                                   -> 14 B
//  0.8.0-0.8.1 only: the inline profile-run metadata also held
//   prompt_token_ids = torch.ones_like(logits, dtype=int64)                           +8 B
// Which path runs is not in the deployment: it depends on the install (FlashInfer present,
// VLLM_USE_FLASHINFER_SAMPLER). The central is the path a pip install takes by default, the
// range ends are the other paths of that version.
struct SamplerPath {
  double central_bytes, low_bytes, high_bytes;
  std::string what;
};
double sort_bytes(int64_t reqs) {
  double scratch = reqs >= 128 ? 20 : (reqs >= 2 ? 32 : 12);
  return 2 + 4 + 4 + 8 + scratch;
}
SamplerPath sampler_path(const Era& era, int64_t reqs, FlashInferSampler fi, bool v2) {
  if (v2) {
    // Model Runner V2 (model_runner_v2 above): its _dummy_sampler_run (vllm/v1/worker/gpu/
    // model_runner.py, public-code 59216884377 / 24901595) calls its own Sampler with dummy
    // metadata and, per its NOTE(woosuk), "the sampler may skip top_k, top_p, and logprobs, using
    // less GPU memory than what is possible during actual execution". What stays per logit: the
    // model-dtype logits of compute_logits (2 B) and their float32 copy (4 B) = 6 B (DERIVED; the
    // in-place temperature / Gumbel sampling adds no [R, V] tensor, INFERRED). Checked, not
    // fitted: 0.27.1 Qwen2.5-0.5B on an RTX 4090 logs "0.31 GiB for peak activation" at
    // max_num_batched_tokens 8192 (vllm-053) and 0.25 GiB at 2048 (xvllm-003), where the 14 B of
    // the V1 path alone is 256 x 151,936 x 14 B = 0.51 GiB; 6 B gives 0.22 GiB + hidden states.
    // The high end is the V1 top-k/top-p figure (a build whose dummy run applies them).
    return {6, 6, 14, "Model Runner V2 dummy sampler without top-k/top-p: logits + fp32 copy 6 B/logit (V1 path 14 B)"};
  }
  // 0.8.0-0.8.1 only: the profile-run metadata's prompt_token_ids (version cut INFERRED).
  const double extra = has(Rule::SamplerPromptTokenIds, era.version) ? 8 : 0;
  const double sort = sort_bytes(reqs) + extra;
  const double fib = (has(Rule::FlashinferPre023Api, era.version) ? 10 : 14) + extra;  // FlashInfer: pre-0.2.3 API before 0.9
  if (!has(Rule::TritonTopkToppSampler, era.version) && !era.v0 && fi != FlashInferSampler::Unset) {
    // VLLM_USE_FLASHINFER_SAMPLER given (vllm/envs.py: bool(int(value)), None when unset), read
    // by v1/sample/ops/topk_topp_sampler.py TopKTopPSampler.__init__ by era:
    //  - 0.8.x (PR #11394's gate 'envs.VLLM_USE_FLASHINFER_SAMPLER is not False', with PR #14815
    //    in 0.8.0: an installed FlashInfer >= 0.2.3 is "not backward compatible" and falls back
    //    to forward_native whatever the variable says): =0 the PyTorch sort; =1 FlashInfer's
    //    pre-0.2.3 API (softmax probs, 10 B) when such a FlashInfer is installed, else the sort.
    //  - 0.9 .. 0.10 (the 0.2.3+ API, 'FlashInfer version >= 0.2.3 required'; same 'is not
    //    False' gate behind is_flashinfer_available): =0 the sort; =1 FlashInfer 14 B, the sort
    //    when FlashInfer is not installed ("FlashInfer is not available. Falling back").
    //  - 0.11 .. 0.15 (PR #26859, 2025-10-15: opt-in, 'if envs.VLLM_USE_FLASHINFER_SAMPLER:';
    //    PR #29415 raises on an unsupported GPU instead of falling back): =0 the sort; =1
    //    forward_cuda, FlashInfer 14 B.
    // So =0 is exactly the sort path (range = the derived figure), =1 is FlashInfer with the sort
    // as the unfavourable end where a build can still fall back to it (before 0.11).
    if (fi == FlashInferSampler::Off)
      return {sort, sort, sort, fmt::format("VLLM_USE_FLASHINFER_SAMPLER=0: PyTorch sort path {:.0f} B/logit", sort)};
    double hi = has(Rule::FlashinferSamplerUnlessFalse, era.version) ? sort : fib;
    return {fib, fib, hi,
            has(Rule::FlashinferSamplerUnlessFalse, era.version) ? fmt::format("VLLM_USE_FLASHINFER_SAMPLER=1: FlashInfer {:.0f} B/logit (the sort's {:.0f} B if this build falls back: "
                                             "FlashInfer missing{})",
                                             fib, sort, has(Rule::FlashinferPre023Api, era.version) ? " or >= 0.2.3" : "")
                               : fmt::format("VLLM_USE_FLASHINFER_SAMPLER=1: FlashInfer {:.0f} B/logit (opt-in, no fallback)", fib)};
  }
  if (!has(Rule::TritonTopkToppSampler, era.version)) {
    // 2025 builds (0.8 .. 0.15): pip wheels run the PyTorch sort (FlashInfer's sampler needs
    // the flashinfer package; a 0.8.x build turned it off for flashinfer >= 0.2.3, release
    // INFERRED). V0 (< 0.8) is not re-derived and takes the same figure (a GUESS). Checked, not
    // fitted: 38 B x 1,024 x 151,936 + hidden 8192 x 2048 x 2 = 5.54 GiB vs 5.58 logged
    // (vllm-048, 0.10.2 H200); gpt-oss-120b 38 B x 1,024 x 201,088 = 7.37 GiB vs act +
    // non-torch 7.44 (vllm-004). A FlashInfer install takes 14 B (10 B before 0.9):
    // Llama-3.2-1B 14 B x 256 x 128,256 + 16 MiB = 0.44 GiB vs 0.45 logged (vllm-019); the
    // vllm/vllm-openai:v0.10.2 image (FlashInfer installed, V1 default on while
    // VLLM_USE_FLASHINFER_SAMPLER is unset: 'is not False') left 0.55 GiB for peak + non-torch
    // at 256 requests x 151,936 (Qwen3-8B on L40S, xvllm-013; 14 B = 0.51 GiB).
    // vllm-073 (0.8.5, Qwen3-30B-A3B TP4 on A10, u = 0.7) sized a KV cache in reality. 0.8.5's
    // gpu_worker.py (whole GPU: T x u - torch peak incl. weights - every non-torch byte in use,
    // CUDA context and NCCL included; its exact text is what third-party patches of 0.8.5
    // match) leaves 15.39 - 14.24 = 1.15 GiB for peak + non-torch + KV, so that install cannot
    // have run this 1.38 GiB sort path (FlashInfer's 0.36 fits), and its context + NCCL + growth
    // were below ~0.6 GiB (PCIe A10s: no NVLS, no custom all-reduce past 2 PCIe GPUs) against
    // 2.1 estimated by the NVLink figures (context + NCCL 1.55 + growth 0.54); the PCIe figures
    // (cuda_context / non_torch_increase, Fabric::Pcie) charge 0.70 + 0.21 = 0.91. The forecast
    // still refuses it with the sort path's 1.38 GiB: FlashInfer's 10 B path (a FlashInfer
    // < 0.2.3 install, e.g. a container) or VLLM_USE_FLASHINFER_SAMPLER=1 would fit.
    // Before 0.11 the gate is 'is not False': an install with FlashInfer (the vllm/vllm-openai image;
    // "Using FlashInfer for top-p & top-k sampling" in its log) takes FlashInfer's path unasked --
    // the 0.10.1.1 logs of extra xvllm-094..097 and the 0.10.2 image of xvllm-013 did, pip installs
    // without it (xvllm-019, -098: "FlashInfer is not available") sort. The note says how to plan it.
    if (has(Rule::FlashinferSamplerUnlessFalse, era.version))
      return {sort, fib, sort,
              fmt::format("PyTorch sort path {:.0f} B/logit, as a pip install without FlashInfer runs it; an install with FlashInfer (the "
                          "vllm/vllm-openai image, whose log says 'Using FlashInfer for top-p & top-k sampling') takes {:.0f} B: "
                          "--env VLLM_USE_FLASHINFER_SAMPLER=1 plans that",
                          sort, fib)};
    return {sort, fib, sort, fmt::format("PyTorch sort path {:.0f} B/logit; FlashInfer path {:.0f} B", sort, fib)};
  }
  // 0.16+ (2026): Triton in-place top-k/top-p or FlashInfer, both 14 B. vllm PR #33538
  // ("[Kernel] Triton-based Top-k and Top-p sampler kernels", merged 2026-02-02; the later
  // PR #54502 describes its dispatch: batches of 8+ rows take the Triton kernel, the PyTorch sort
  // only below 8); the cut is placed at 0.16 (INFERRED: the release table in vllm_era.cpp dates
  // 0.15 2026-02-05, three days after the merge, and runpod-workers moved to 0.16.0 on
  // 2026-03-04; whether 0.15 carried it is not known). The dummy sampler run has max_num_seqs
  // rows. Logged: 0.19.1 on an A100-40GB (xvllm-010, Qwen3-8B, 256 dummy requests, uv pip
  // install): 35.45 requested - 15.27 weights - 19.36 KV = 0.82 GiB for peak + non-torch, below
  // the 1.38 GiB the sort alone takes (38 B x 256 x 151,936); 0.11 still sorted (vllm-005).
  // The cut was a GUESS at 0.21 before that log.
  // Logged per-logit figures around it: ~8 B (vllm-053, 256 requests; less than the tensors
  // above explain), ~17 B (vllm-029), ~23 B (vllm-071, 1,024 requests; more than they
  // explain). The ends are those logged extremes (6 B = logits + fp32 copy only; 24 B), a
  // GUESS until the cause is known.
  // VLLM_USE_FLASHINFER_SAMPLER does not move this figure: =1 takes FlashInfer (14 B), =0 the
  // native path, whose apply_top_k_top_p dispatches to the Triton kernel (apply_top_k_top_p_triton
  // when HAS_TRITON, same 14 B); only the label says which.
  const char* which = fi == FlashInferSampler::On    ? "VLLM_USE_FLASHINFER_SAMPLER=1: FlashInfer top-k/top-p 14 B/logit (logged 8..23 B)"
                      : fi == FlashInferSampler::Off ? "VLLM_USE_FLASHINFER_SAMPLER=0: native path = Triton top-k/top-p 14 B/logit (logged 8..23 B)"
                                                     : "Triton/FlashInfer top-k/top-p 14 B/logit (logged 8..23 B)";
  const EstimatedConstant& k = constant(Const::SamplerTopkTopp);
  return {k.central, k.low, k.high, which};
}
}  // namespace

FlashInferSampler flashinfer_sampler_env(const Deployment& d, const Era& era, std::vector<std::string>& notes) {
  const std::string* value = d.env_value("VLLM_USE_FLASHINFER_SAMPLER");
  if (!value) return FlashInferSampler::Unset;
  // vllm/envs.py: bool(int(os.environ["VLLM_USE_FLASHINFER_SAMPLER"])). Python's int() takes
  // surrounding whitespace, a sign and digits (underscores between digits); anything else raises.
  std::string t = *value;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  size_t i = 0;
  while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
  bool digits = i < t.size(), nonzero = false;
  for (size_t j = i; j < t.size() && digits; ++j) {
    if (t[j] == '_' && j > i && j + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[j - 1])) &&
        std::isdigit(static_cast<unsigned char>(t[j + 1])))
      continue;
    if (!std::isdigit(static_cast<unsigned char>(t[j]))) digits = false;
    else if (t[j] != '0') nonzero = true;
  }
  if (!digits)
    fail_input("--env", "VLLM_USE_FLASHINFER_SAMPLER",
               fmt::format("'{}' is not an integer (vllm/envs.py reads it as bool(int(value)): ValueError: invalid literal for int() with base 10)", *value));
  if (era.v0) {
    notes.push_back(fmt::format("environment VLLM_USE_FLASHINFER_SAMPLER={} is not modelled for V0 builds (< 0.8): the forecast is the same as without it", *value));
    return FlashInferSampler::Unset;
  }
  return nonzero ? FlashInferSampler::On : FlashInferSampler::Off;
}

Dsv4ProfileBuffers dsa_profile_buffers(const ModelConfig& c, int64_t L) {
  // DeepSeek-V3.2 / GLM-5 (DSA: MLA with a lightning indexer, no compression): the same dummy branch
  // of layers/sparse_attn_indexer.py as V4's C4A layers, with T = get_max_prefill_buffer_size =
  // max_model_len x 40 entries (mla/indexer.py: "Each entry is 128 fp8 bytes and 4 scale bytes for a
  // total of 132 bytes. For DeepSeek-V3.2, the max_model_len is 163840. 40 * 163840 * 132 = 865075200
  // bytes = 825 MB"): (T, index_head_dim) fp8 + (T, 4) scales + the 1 MiB radix top-k workspace, kept
  // by the WorkspaceManager; then the 512 MiB logits reservation, freed at once. DERIVED. Real log:
  // GLM-5.2-NVFP4 TP4 on GB200 at max_model_len 819,200, 0.26.0 (tests/data/extra xvllm-067): "6.31 GiB
  // for peak activation" where the forward / sampler peak is ~2.2 GiB and the buffer 4.03 GiB. The
  // sparse-MLA backend's own prefill workspace depends on the backend (flashmla_sparse: 5 x
  // max_model_len x 576 x 2 B) and is not added.
  Dsv4ProfileBuffers b;
  auto up256 = [](int64_t x) { return (x + 255) / 256 * 256; };
  const int64_t ihd = c.index_head_dim > 0 ? c.index_head_dim : 128;
  const int64_t T = L * 40;
  b.indexer_ws = up256(T * ihd) + up256(T * 4) + up256(1024 * 1024);
  b.workspace = b.indexer_ws;
  b.logits = 512LL * 1024 * 1024;
  return b;
}

Dsv4ProfileBuffers dsv4_profile_buffers(const ModelConfig& c, int64_t L, int64_t N, int pp_rank, int pp) {
  // DERIVED from vLLM's DeepSeek-V4 code (0.24+ as read), what the dummy forward of profile_run
  // (attn_metadata is not a dict) reserves per layer, in the one WorkspaceManager buffer of the
  // worker (v1/worker/workspace.py: get_simultaneous rounds each piece up to 256 B and grows a
  // single uint8 buffer to the largest request; it is never shrunk and stays allocated, locked,
  // after profiling, so it is part of the torch peak and of the memory outside the KV pool):
  //  - sparse indexer (C4A layers, compress ratio 4; layers/sparse_attn_indexer.py dummy branch):
  //    T = get_max_prefill_buffer_size // compress_ratio = max_model_len * 40 // 4 entries
  //    (mla/indexer.py: "40 is a magic number"; DeepseekV4Indexer.max_total_seq_len), as
  //    (T, index_head_dim) fp8 values + (T, 4) uint8 scales + RADIX_TOPK_WORKSPACE_SIZE 1 MiB;
  //    then torch.empty(VLLM_SPARSE_INDEXER_MAX_LOGITS_MB = 512 MiB by default) freed at once.
  //  - sparse MLA prefill gather (deepseek_v4_attention.py attention_impl dummy branch):
  //    (PREFILL_CHUNK_SIZE = 4, M, head_dim) bf16 with M = ceil(max_model_len / ratio) + window
  //    + max_num_batched_tokens (N = 0 on SWA-only layers), largest for the smallest ratio > 1.
  // The FP8 indexer cache is assumed (use_fp4_indexer_cache off, the default: the FP4 layout
  // would halve the values). One workspace lane assumed (use_workspace_lane not seen in V4).
  Dsv4ProfileBuffers b;
  auto up256 = [](int64_t x) { return (x + 255) / 256 * 256; };
  const int64_t hd = c.head_dim > 0 ? c.head_dim : 512;
  const int64_t ihd = c.index_head_dim > 0 ? c.index_head_dim : 128;
  const int64_t window = c.sliding_window > 0 ? c.sliding_window : 128;
  auto [l0, l1] = pp_indices(static_cast<int>(c.num_layers), std::max(1, pp), pp_rank);
  int64_t min_ratio = 0;
  bool c4 = false;
  for (int i = l0; i < l1; ++i) {
    int64_t r = i < static_cast<int>(c.layers.size()) ? c.layers[i].compress_ratio
                : i < static_cast<int>(c.compress_ratios.size()) ? c.compress_ratios[i] : 0;
    if (r > 1 && (min_ratio == 0 || r < min_ratio)) min_ratio = r;
    if (r == 4) c4 = true;
  }
  const int64_t n_comp = min_ratio > 1 ? (L + min_ratio - 1) / min_ratio : 0;
  b.gather_ws = up256(4 * (n_comp + window + N) * hd * 2);
  if (c4) {
    const int64_t T = L * 40 / 4;
    b.indexer_ws = up256(T * ihd) + up256(T * 4) + up256(1024 * 1024);
    b.logits = 512LL * 1024 * 1024;
  }
  b.workspace = std::max(b.indexer_ws, b.gather_ws);
  // ESTIMATE: the rest of V4's forward. With the derived buffers above and the generic
  // activation terms, two logged KV pools still came out smaller than the plan, by an amount
  // proportional to max_num_batched_tokens: 6.98 GiB at N = 16,384 (xvllm-011, DeepSeek-V4-Flash
  // TP2 EP on GH200, "available KV cache memory (5.44 GiB)") and 4.02 GiB at N = 8,192 (corpus
  // vllm-035, V4-Flash TP2 on H20, 7.01 GiB logged; MTP on, taken as 1 speculative token):
  // 447 and 515 KiB per token, least squares 460 KiB = 7.2 x the hc_mult x hidden fp32 row
  // (4 x 4,096 x 4 B = 64 KiB); 7.05 since these 1,024-sequence hosts capture 51 FULL graphs, not 35
  // (full_graph_count), which moves ~0.15 GiB of xvllm-011's shortfall into the graph estimate
  // (refit to keep its M at 12,984). What holds it is a GUESS: fp32 copies of the hyper-connection
  // streams in hc_pre / hc_post (the residual is [N, hc_mult, hidden]; the mixes and the
  // Sinkhorn normalisation run in fp32), so the term scales with hc_mult x hidden (V4-Pro's
  // 7,168-wide hidden included; not checked on a Pro log). n = 2; range 0.5 .. 1.2.
  if (c.hc_mult > 1) b.hc_temporaries = static_cast<int64_t>(7.05 * static_cast<double>(N * c.hc_mult * c.hidden_size * 4));
  return b;
}

Estimate activation_peak(const Era& era, const ModelConfig& c, const Parallel& par, int64_t N, int64_t S,
                         bool last_pp_rank, int64_t layers_on_rank, const Dsv4ProfileBuffers* v4, FlashInferSampler fi) {
  // profile_run = _dummy_run(max_num_batched_tokens) + _dummy_sampler_run(min(S, N) requests)
  // (vllm/v1/worker/gpu_model_runner.py): the larger of the forward's temporaries and the
  // sampler's logits at the bytes per logit of the top-k/top-p path that runs (sampler_path
  // above) -- engines/shared/process_terms.cpp profile_peak.
  // Checks: Qwen3-235B-FP8 TP4 N=8192 S=32 -> 0.77 GiB vs logged 0.76 (vllm-052).
  (void)layers_on_rank;
  const SamplerPath path = sampler_path(era, std::min(S, N), fi, model_runner_v2(era, c));
  // DeepSeek-V4: the indexer's logits reservation is alive with the layer's activations.
  const double v4_forward = v4 ? static_cast<double>(v4->logits + v4->hc_temporaries) : 0.0;
  Estimate e = profile_peak(c, par, N, S, last_pp_rank, SamplerBytes{path.central_bytes, path.low_bytes, path.high_bytes, path.what}, v4_forward);
  if (v4 && v4->workspace > 0) {
    // The workspace is held through the whole profile run (the sampler's peak included). Exact
    // by the code read; the low end is the prefill gather alone, for builds that size the
    // indexer reservation smaller (a later upstream change bounds it by the scheduler instead
    // of max_model_len x 40: a GUESS that 0.26 may already carry it).
    e.central += v4->workspace;
    e.low += std::min(v4->workspace, v4->gather_ws);
    e.high += v4->workspace;
    e.basis += fmt::format("; + sparse-attention workspace {:.2f} GiB kept (max of indexer K-gather {:.2f}, sparse-MLA prefill gather {:.2f}; "
                           "DERIVED) with the indexer's {:.0f} MiB logits reservation in the forward",
                           to_gib(v4->workspace), to_gib(v4->indexer_ws), to_gib(v4->gather_ws), static_cast<double>(v4->logits) / MiB);
  }
  if (v4 && v4->hc_temporaries > 0)
    e.basis += fmt::format("; forward includes {:.2f} GiB of hyper-connection temporaries (7.05 fp32 rows of hc_mult x hidden per token: "
                           "ESTIMATE from 2 DeepSeek-V4 logs, what holds it a GUESS)",
                           to_gib(v4->hc_temporaries));
  return e;
}

// torch.compile on a cold cache, Model Runner V2. A first start (or a fresh container) compiles the
// model inside profile_run -- "Compiling a graph for compile range (1, 2048) takes 17.57 s",
// "torch.compile took 38.96 s in total" -- and the profiled peak plus the non-torch memory hold
// about 1 GiB more than on a restart that loads the AOT artifact ("Directly load AOT compilation
// from path ...", "torch.compile took 0.30 s"). Two same-host pairs on vLLM 0.27.1, RTX 4090, API
// server at 2,048 batched tokens: Qwen3-8B peak activation 1.18 vs 0.19 GiB with the consumed
// memory equal (+0.99 GiB), Qwen3-1.7B 0.59 vs 0.09 GiB and 4.11 vs 3.55 GiB consumed (+1.06); a
// cold 0.29.0 Qwen3-14B start on an L40S sits 0.7 GiB over the warm forecast (tests/data/extra
// xvllm-111..115). ESTIMATE, n = 3, flat: no size dependence from 1.7B to 14B; which Inductor
// buffers hold it is not read. The V1 runner's terms were fitted on first-start logs (a 0.24.0
// Qwen3-8B pair, xvllm-012: the cold boot exact, the warm reboot 0.95 GiB more KV), so they
// already carry it; the V2 runner's on restarts.
Estimate cold_compile_overhead() {
  return row(Const::ColdCompile, GiB,
               "torch.compile on a cold cache compiles inside the profile run: +1.0 GiB (ESTIMATE from two 0.27.1 cold/warm pairs, "
               "0.99 and 1.06 GiB, and a 0.29.0 cold start)");
}

Estimate sampler_warmup(const Era& era, const ModelConfig& c, int64_t num_reqs, FlashInferSampler fi) {
  // _dummy_sampler_run after capture (gpu_worker compile_or_warm_up_model): _dummy_run with
  // num_tokens = min(max_num_seqs, max_num_batched_tokens), then the same sampler as in
  // profile_run, so the same bytes per logit (sampler_path), + last_hidden_states [R, h].
  const SamplerPath path = sampler_path(era, num_reqs, fi, model_runner_v2(era, c));
  const double rv = static_cast<double>(num_reqs) * static_cast<double>(c.vocab_size);
  const double hid = static_cast<double>(num_reqs) * static_cast<double>(c.hidden_size) * 2;
  const double v = rv * path.central_bytes + hid;
  if (v <= 0) return range(0, 1, 1, "sampler warm-up (no vocabulary)");
  // Same ends as the profile-run sampler term (10% over the worst path: a GUESS).
  double lo = std::min((rv * path.low_bytes + hid) / v, 0.95);
  double hi = std::max((rv * path.high_bytes + hid) / v, 1.1);
  return range(v, lo, hi, fmt::format("sampler warm-up with {} dummy requests ({})", num_reqs, path.what));
}


// Model Runner V2 from 0.29, a dense model: the real capture follows the estimator's own capture
// (two "Graph capturing finished" lines: Qwen3-14B on an L40S, 0.29.0, took 0.44 GiB profiling and
// 0.27 GiB for real, xvllm-115), which has already paid the first capture's one-time costs. The
// real one over the graphs this file forecasts, above 16 MiB: 0.076 MiB per (graph x layer)
// (xvllm-115, 86 x 40) and 0.078 (Llama-3.1-8B on an A100, 0.31.0, 86 x 32: "0.23 GiB for CUDAGraph
// memory", xvllm-001); leave-one-out each predicts the other within 3%. ESTIMATE, n = 2; 0.28's V2
// captures are not known to follow it (xvllm-061, 0.28.0 on two T4s, took 1.12 GiB).
Estimate v2_capture_after_profiling(int64_t layers, int64_t graphs) {
  const EstimatedConstant& k = constant(Const::V2CaptureAfterProfiling);
  const double central = k.central * MiB * static_cast<double>(graphs) * static_cast<double>(layers) + 16.0 * MiB;
  return range_of(k, central,
               fmt::format("CUDA graphs: {} captures over {} layers after Model Runner V2's profiling capture (0.29+): 0.077 MiB per (graph x layer) "
                           "+ 16 MiB (ESTIMATE, n=2 logs)",
                           graphs, layers));
}

Estimate cuda_graph_memory(const Era& era, const ModelConfig& c, int64_t layers, int64_t linear_layers, int64_t piecewise, int64_t full,
                           int tp, int64_t max_num_batched_tokens, GraphCost cost) {
  // Dense hybrids' GDN layers at the attention-layer cost (logged on 0.19.0 and 0.22.0). From 0.26
  // (vllm#50780, "since v0.26.0") the FULL warm-up adds a transient that grows with
  // max_num_batched_tokens. Until 2026-12 the 0.26+ dense hybrids took the MoE-hybrid figure
  // instead, which the logs since read put 3-5x too high at 2048-8192 tokens:
  //   Qwen3.5-27B-FP8 TP2 on 2 x RTX 4090, 0.30.0, 19 sizes at 2048: vLLM's estimate ~0.43 GiB (its
  //     utilization advisory 0.90 ~ 0.8819 x 23.6 GiB; xvllm-060) -- flat 0.47, MoE figure 1.43;
  //   a 64-layer (48 GDN) hybrid on an RTX 5090, vllm#52872: graph pool 0.52 GiB at 2048..4096,
  //     0.89 at 8192;
  //   Qwen3.8-27B, 0.27.1, DGX Spark, 86 graphs at 8192: estimate 1.56 GiB, flat 1.06, MoE figure
  //     7.85 (public-code 61316607224).
  // So: the flat cost, plus for FULL captures 0.11 GiB per 1,024 batched tokens above 4,096, per 48
  // GDN layers (both 8192-token figures: +0.37 and +0.50 over the 2048..4096 level). ESTIMATE,
  // n = 3 logs of 48-GDN-layer models; the scaling with the GDN layer count is a GUESS.
  // vllm#50780's "4 GiB on 0.26.1" (its batch size is not in the thread's excerpt) is not fitted.
  const bool dense_hybrid = !era.v0 && !c.is_moe() && linear_layers > 0;
  // Model Runner V2 captures a MoE hybrid's GDN layers at the flat attention-layer cost too (the
  // 1.88/tp figure is from V1 logs): Qwen3.6-35B-A3B-NVFP4 on an RTX 5090, 0.29.0, 5 + 4 graphs x
  // 40 layers, "0.08 GiB for CUDAGraph memory" -> 0.18 MiB per (graph x layer) above the 16 MiB of
  // fixed buffers (xvllm-068; the MoE figure gave 0.53 GiB), as the dense Qwen3.5-27B-FP8 on 0.30.0
  // implies ~0.22 (xvllm-060). INFERRED, n = 2.
  const bool gdn_as_attention = dense_hybrid || (linear_layers > 0 && model_runner_v2(era, c));
  if (cost == GraphCost::ByKind && model_runner_v2(era, c) && has(Rule::Mrv2CaptureAfterProfiling, era.version) && era.graph_estimate_applied && linear_layers == 0)
    return v2_capture_after_profiling(layers, piecewise + full);
  // A PIECEWISE capture costs 0.27 MiB per (graph x layer): the PIECEWISE-only releases (0.10.x,
  // 67 graphs) log 0.264 (Qwen2-7B, A100, xvllm-095/096), 0.282 (Qwen3-8B-FP8, xvllm-110), and the
  // fit's earlier 0.241 / 0.281 (vllm-055, Llama-3.2-1B). A FULL capture is one graph over every
  // layer, ~0.05 MiB per layer (~17 kernels x 3 KiB of graph objects, engines/graph_nodes.h): the
  // mixes left after 0.27 x PIECEWISE give 0.04 .. 0.08 (median 0.05) over nine logs (xvllm-003,
  // -111, -113, -118, -037, -024, vllm-019, -052, -058). Leave-one-out on the PIECEWISE three:
  // +3%, -6%. The single 0.19 this replaces was these mixes' average.
  const GraphUnit unit = cost == GraphCost::ByKind ? GraphUnit{constant(Const::GraphPiecewiseUnit).central, constant(Const::GraphFullUnit).central}
                                                   : GraphUnit{constant(Const::GraphPerGraphUnit).central, constant(Const::GraphPerGraphUnit).central};
  Estimate e = layer_graph_memory(c, layers, linear_layers, piecewise, full, tp, gdn_as_attention, unit);
  if (cost == GraphCost::ByKind) {
    // The range is the spread of the real captures against this forecast: observed / forecast
    // p10 0.59, p90 2.56 over the 42 logs validate reads (tests/data/extra + corpus, 2026-12-02;
    // its graph_gib leave_one_out block), so "at risk" is said where the logs say capture varies.
    e.low = static_cast<int64_t>(static_cast<double>(e.central) * constant(Const::GraphCaptureRange).low);
    e.high = static_cast<int64_t>(static_cast<double>(e.central) * constant(Const::GraphCaptureRange).high);
    e.basis += "; range x0.6 .. x2.5: the p10 .. p90 of 42 logged captures over this forecast";
  }
  if (dense_hybrid && has(Rule::HybridFullWarmupTransient, era.version) && full > 0 && max_num_batched_tokens > 4096) {
    const EstimatedConstant& k = constant(Const::HybridFullWarmup);
    const double t = k.central * GiB * static_cast<double>(max_num_batched_tokens - 4096) / 1024.0 * static_cast<double>(linear_layers) / 48.0;
    e.central += static_cast<int64_t>(t);
    e.low += static_cast<int64_t>(t * (k.low / k.central));
    e.high += static_cast<int64_t>(t * (k.high / k.central));
    e.basis += fmt::format("; + {:.2f} GiB FULL warm-up transient at max_num_batched_tokens {} (0.26+ dense hybrids, ESTIMATE n=3)", t / GiB,
                           max_num_batched_tokens);
  }
  return e;
}


Estimate nccl_graph_capture(const Era& era, const ModelConfig& c, int tp, Fabric fabric, bool across_nodes, int64_t graphs, int64_t layers) {
  // custom_all_reduce.py (CustomAllreduce.__init__) turns itself off for "more than two PCIe-only
  // GPUs" and for "this process group spans across nodes"; the all-reduces of every captured graph
  // are then NCCL kernels captured into it, and the captures take more than the flat cost. What the
  // V1 runner's captures took above this file's flat forecast, per (graph x layer):
  //   Qwen2.5-72B TP4, 4 x L40S, 0.19.0 (xvllm-017): 2.62 logged, 1.33 GiB over 86 x 80 -> 0.20 MiB
  //   Qwen3-235B-A22B-FP8 TP8, 8 x L40S, 0.10.2 (xvllm-019): 3.45 logged, 2.27 over 67 x 94 -> 0.37
  //   Qwen3-VL-30B-A3B TP4, 4 x RTX 3090, 0.11.0 (xvllm-091): 1.92 logged, 1.14 over 86 x 48 -> 0.28
  //   gpt-oss-120b TP4 over four one-GPU Ray nodes, 0.10.1.1 (xvllm-094): 1.88, 1.31 over 83 x 36 -> 0.45
  //   Qwen2-7B TP2 across two nodes, 0.10.1.1 (xvllm-098, a shape twin of Qwen2.5-7B): 1.00 against
  //     0.50 at TP1 on the same build (xvllm-095/096), 0.50 over 67 x 28 -> 0.27
  // ESTIMATE, n = 5: the median 0.28 MiB, ends 0.7x .. 1.6x. The mechanism (NCCL's per-graph
  // resources for each captured collective, two per layer) is INFERRED. Two PCIe GPUs keep custom
  // all-reduce where P2P works (not modelled: one T4 pair on Model Runner V2 took +0.28, an A100
  // pair without P2P +0.08); NVLink hosts keep it up to 8 GPUs; Model Runner V2 is not covered.
  // Not in 2026-08 builds: Qwen3-235B-A22B-FP8 TP4 on four RTX PRO 6000 (corpus vllm-052, V1
  // runner) took 0.32 GiB, below the flat cost, and the same host's 0.27.1 TP4 + EP start (extra
  // xvllm-031) left the KV its estimate allows without the term. The cut is placed after the last
  // release that shows it, 0.19.0 (INFERRED; what changed in 0.20 .. 0.26 was not read).
  Estimate e;
  if (era.v0 || !has(Rule::NcclInCapturedGraphs, era.version) || tp <= 1 || model_runner_v2(era, c) || layers <= 0 || graphs <= 0) return e;
  if (!(across_nodes || (fabric == Fabric::Pcie && tp > 2))) return e;
  return row(Const::NcclCapturedGraphs, MiB * static_cast<double>(graphs) * static_cast<double>(layers),
               fmt::format("NCCL all-reduces captured in {} graphs x {} layers (custom all-reduce off: {}): 0.28 MiB per graph x layer "
                           "(ESTIMATE, n=5 logs, 0.20 .. 0.45)",
                           graphs, layers, across_nodes ? "the group spans nodes" : "more than two PCIe GPUs"));
}

Estimate cuda_graph_estimate(const Era& era, const ModelConfig& c, const Estimate& capture, int64_t layers, int64_t graphs,
                             int64_t second_size) {
  // What profile_cudagraph_memory() returns (0.17+, logged "Estimated CUDA graph memory: X GiB
  // total"; subtracted from the KV budget from 0.21). The V1 runner (gpu_model_runner.py,
  // public-code 52016549297) captures the two largest sizes of each mode into a throwaway pool
  // and extrapolates: max over modes of the first capture + the second one's delta x (graphs - 1)
  // -- the same graph pool the real capture fills, so the capture forecast is its base (the logs
  // agree with their "took" within ~20%), scaled below where the extrapolation overshoots.
  if (!model_runner_v2(era, c)) {
    // The V1 estimate is not the capture. profile_cudagraph_memory extrapolates: per mode, the first
    // (largest) capture + max(the second one's delta, 1 MiB) x (graphs - 1), the modes' firsts
    // overlaid (max). The real capture's smaller sizes reuse the shared pool and cost less than the
    // second-largest did (vllm#45178: "the N graphs share one CUDA mempool and reuse freed blocks, so
    // the real pool << the linear sum"; PR #45197 quotes the line), so the estimate overshoots the
    // capture by what the second-largest graph's delta exceeds the average one.
    // Logged "Estimated CUDA graph memory" over this file's flat capture forecast, on builds whose
    // capture follows the flat cost (the part above the 16 MiB of fixed buffers; second-largest
    // PIECEWISE size 496 or 248): 1.23 (Qwen2.5-7B 0.22.0, 54 graphs, xvllm-037: 0.37 vs 0.30 GiB),
    // 1.21 (Qwen3.5-4B 0.22.0, xvllm-036: 0.64 vs 0.53), 1.47 (Qwen3.5-9B 0.19.0, xvllm-035: 0.78 vs
    // 0.53), 1.15 (Qwen3-235B-FP8 TP4 0.20.0, vllm-058: 1.10 vs 0.96), 0.88 (Qwen3-8B 0.21.0,
    // vllm-029: 0.52 vs 0.59). The logged estimate over the logged capture says the same: 1.19,
    // 1.16, 1.20, 1.15 (xvllm-037/036/035, vllm-058), 1.22 (xvllm-034), 1.21 (GLM-5.2-NVFP4 TP4,
    // 0.26.0, public-code 61511710941: "4.13 GiB (actual), 4.99 GiB (estimated)"). ESTIMATE, n = 5:
    // the median 1.21 of the first list rounded to the second's 1.18; ends 0.5x .. 1.6x.
    // Where the capture list is short and small the two agree: 0.98 (xvllm-020: 9 graphs up to 16
    // tokens), 1.00 (Qwen3.6-27B-FP8, 15 PIECEWISE graphs up to 96, public-code 55529542778), 1.02
    // (a Qwen3.6-35B-A3B quant, 23 graphs up to 112, public-code 56878676544), and Qwen3-0.6B-W4A16
    // (hidden 1024, 86 graphs up to 512, public-code 54318626907) logs 0.27 estimated = 0.27 taken.
    // What those share: the second-largest size's hidden-state tensor (size x hidden x 2 B) stays
    // within PyTorch's small-allocation class (CUDACachingAllocator kSmallSize, 1 MiB: such blocks
    // come from 2 MiB segments that the pool already holds), while 496 x 4096 x 2 B or 248 x 3584 x
    // 2 B are large blocks split from the largest graph's segments. The condition is a GUESS at the
    // mechanism that fits every pair above; it leaves the PIECEWISE lists of up to 64 tokens
    // (max_num_seqs 32, e.g. corpus vllm-052) at the capture forecast.
    // Not applied where the capture forecast is not the flat per-(graph x layer) cost (the MoE
    // hybrids' GDN figure, the dense hybrids from 0.26): their estimates are not at hand in that form.
    // Not modelled either: captures far above the flat cost (xvllm-010 A100-40GB 2.35 GiB, xvllm-017
    // 4 x L40S 2.73), where the extrapolated part is small beside the first capture (estimate /
    // actual 0.96, 1.04).
    const bool flat = !c.has_linear_attention() || !c.is_moe();
    const bool large_second = static_cast<double>(second_size) * static_cast<double>(c.hidden_size) * 2.0 > static_cast<double>(MiB);
    if (!flat || !large_second || capture.central <= static_cast<int64_t>(16 * MiB)) return capture;
    const double fixed = 16.0 * MiB;
    const EstimatedConstant& k = constant(Const::V1EstimateOverCapture);
    const double central = fixed + (static_cast<double>(capture.central) - fixed) * k.central;
    return range_of(k, central,
                 capture.basis + fmt::format("; vLLM's own estimate extrapolates the second-largest graph's delta ({} tokens x hidden {} "
                                             "is a large allocation) to every graph: x1.18 above the 16 MiB fixed buffers (ESTIMATE, n=5 "
                                             "logged estimates, 0.88 .. 1.47)",
                                             second_size, c.hidden_size));
  }
  Estimate e;
  if (has(Rule::Mrv2GraphEstimateZero, era.version)) {
    // Model Runner V2 until 0.27.x: "def profile_cudagraph_memory(self) -> int: # NOTE(woosuk):
    // It is TBD whether we keep this API or not. return 0" (vllm/v1/worker/gpu/model_runner.py,
    // PR #36520 "[Model Runner V2] Add dummy profile_cudagraph_memory API"; public-code
    // 60994428298). vllm#49224 (2026-07): "Model Runner V2 (now default for dense models) skips
    // CUDA graph memory reservation -- profile_cudagraph_memory() returns 0"; PR #49233, which
    // implemented it, was closed, and a comment of 2026-08-17 still sees 0 on the upstream image.
    // So nothing is subtracted and the graphs come out of the headroom above the budget. Logged:
    // 0.27.1 Qwen2.5-0.5B, "0.31 GiB for peak activation" (which holds the applied estimate)
    // where the forward alone is 0.25 GiB (vllm-053), and 0.25 GiB at max_num_batched_tokens
    // 2048 (xvllm-003). The 0.28 cut is INFERRED: the 0.28.0 Qwen3-14B log (xvllm-002) leaves
    // ~1.2 GiB that only an estimate explains.
    e.basis = "Model Runner V2 before 0.28: profile_cudagraph_memory() is a placeholder returning 0 (vllm#49224), nothing is reserved for CUDA graphs";
    return e;
  }
  // Model Runner V2 from 0.28 (INFERRED cut, above): vllm/v1/worker/gpu/cudagraph_utils.py
  // captures every PIECEWISE graph and samples the FULL ones into a throwaway pool, measured as a
  // free-memory delta around the whole span (warm-up transients included), then swaps the sampled
  // FULL cost for an extrapolation to all FULL graphs (PR #57865's diff quotes it: "measured -
  // sum(mem_samples) + full_estimate"). Its size is not derivable. Six logs give it per (graph x
  // layer) above 16 MiB of fixed buffers, with the graph counts this file forecasts:
  //   from the utilization advisory ("--gpu-memory-utilization=X is equivalent to Y without CUDA
  //   graph memory profiling": the estimate is (X - Y) x total):
  //     Nemotron-3.5-Lightning-30B-A3B-NVFP4, DGX Spark, 0.30.0, 86 x 52 (xvllm-070): 0.73 GiB -> 0.164;
  //     Qwen3-8B-FP8 + a draft model, L4, 0.29.0, 94 x 36 (xvllm-063): 0.73 GiB -> 0.215;
  //     Qwen3.5-27B-FP8 TP2, 2 x RTX 4090, 0.30.0, 30 x 64 (xvllm-060): ~0.43 GiB -> 0.221;
  //     Qwen3.6-35B-A3B-FP8, DGX Spark, 0.30.0, 86 x 40 (xvllm-071): 1.06 GiB -> 0.311;
  //   from budget arithmetic (less direct: the torch peak is itself estimated):
  //     0.28.0 Qwen3-14B, L40S, 86 x 40 (xvllm-002): 40.84 requested - 27.52 weights - 11.57 KV
  //       = 1.75 GiB, less consumed - weights (~0.385) and the torch peak (~0.24) -> ~1.12 GiB -> 0.33;
  //     0.31.0 Llama-3.1-8B, A100-80GB, 86 x 32 (xvllm-001): "1.44 GiB for peak activation" = torch
  //       peak (~0.20) + the applied estimate -> ~1.24 GiB -> 0.456 (the capture itself "took" 0.23).
  // Central the median, 0.27 MiB per (graph x layer) + 16 MiB, ends 0.6x .. 1.7x (the six span
  // 0.61x .. 1.69x). ESTIMATE, n=6. Until 2026-12 it was 0.40, fitted on the last two alone.
  const EstimatedConstant& k = constant(Const::V2Estimator);
  const double central = k.central * MiB * static_cast<double>(graphs) * static_cast<double>(layers) + 16.0 * MiB;
  return range_of(k, central,
               fmt::format("Model Runner V2 estimator (0.28+): {} graphs x {} layers x 0.27 MiB + 16 MiB (ESTIMATE, median of 6 logs, 0.16 .. 0.46; "
                           "the capture itself stays at 0.19 MiB per graph x layer)",
                           graphs, layers));
}

Estimate cuda_graph_memory_outputs_per_size(const ModelConfig& c, int64_t layers, const std::vector<int64_t>& sizes, int64_t act_bytes) {
  // V1 0.8 .. 0.10.0, piecewise capture (vllm/compilation/backends.py PiecewiseBackend: one
  // CUDA graph per (piece, captured size), all in one pool; only the last piece's output is
  // turned into a weak reference, so each earlier piece keeps its (size x hidden) output alive
  // for every size - the per-size cost vLLM PR #5074 describes for V0's graphs, TP x size x
  // hidden, before it shared an output buffer). So the memory grows with sum(sizes) x hidden x
  // layers instead of the flat per-(graph x layer) cost of later releases.
  // INFERRED from three 0.9.2 logs, "Graph capturing finished ... took X GiB" over
  // sum(sizes) x hidden x 2 B x layers (67 default sizes, sum 16,647):
  //   Qwen3-8B     2.24 GiB / (16,647 x 4096 x 2 x 36) = 0.487  (xvllm-004, public-code 58028398527)
  //   Qwen2-7B     1.56 GiB / (16,647 x 3584 x 2 x 28) = 0.496  (public-code 57905457843)
  //   Qwen2.5-0.5B 0.37 GiB / (16,647 x  896 x 2 x 24) = 0.530  (public-code 55921714709)
  // (16 MiB of fixed buffers taken off first). Factor 0.5 (GUESS for its cause: about one
  // retained output per layer of two pieces' worth); spread -3% .. +6%. One 0.9.2 log does not
  // fit: Qwen2.5-VL-7B on an L4 (public-code 70974742012, same 3584 x 28 shape as Qwen2-7B) took
  // 0.51 GiB, 0.33x this term; unexplained, so the low end of the range is 0.3x.
  double sum = 0;
  for (int64_t x : sizes) sum += static_cast<double>(x);
  const EstimatedConstant& k = constant(Const::OutputsPerSizeFactor);
  double central = k.central * sum * static_cast<double>(c.hidden_size) * static_cast<double>(act_bytes) * static_cast<double>(layers) + 16.0 * MiB;
  return range_of(k, central,
               fmt::format("CUDA graphs (V1 before 0.10.1): {} sizes summing to {:.0f} tokens x hidden {} x {} layers x 0.5 "
                           "(each size keeps its piecewise outputs; factor INFERRED from 3 logs of 0.9.2, a 4th at 0.33x)",
                           sizes.size(), sum, c.hidden_size, layers));
}

}  // namespace headroom::vllm
