// vLLM's estimated constants (vllm_constants.h): the figures vllm_estimates.cpp reads, with the
// logs each rests on. Each row's derivation is in the comment above the code that reads it.
#include "engines/vllm/vllm_constants.h"

#include <iterator>

namespace headroom::vllm {

namespace {
using enum Evidence;
constexpr EstimatedConstant kRows[] = {
    {"vllm.context.era_b", 0.6, 0.45, 0.81, "GiB", Estimate, "vllm-048 xvllm-019",
     "CUDA context at the startup check, 0.9.1-0.10.2 multi-GPU (NCCL is built after the snapshot)"},
    {"vllm.context.pcie", 0.70, 0.63, 0.98, "GiB", Estimate, "vllm-052 xvllm-019", "CUDA context + NCCL over PCIe (0.65 .. 0.96 logged)"},
    {"vllm.context.nvlink", 1.55, 0.93, 2.48, "GiB", Estimate, "vllm-052 vllm-071",
     "CUDA context + NCCL communicators on NVLink / NVSwitch hosts, 0.11+ and the whole-GPU era (0.96 .. 2.47 logged)"},
    {"vllm.non_torch.consumed_one_gpu", 0.385, 0.25025, 0.5775, "GiB", Estimate, "vllm-053 xvllm-003 xvllm-001 vllm-054",
     "consumed - weights on one GPU, total_consumed accounting (0.26.1+): 0.26 .. 0.56 logged"},
    {"vllm.non_torch.pcie_era_b", 0.21, 0.168, 0.2625, "GiB", Estimate, "xvllm-019",
     "NCCL's buffers in the budget over PCIe, 0.9.1-0.10.2, not scaled by the world size (0.17 .. 0.21 at TP8)"},
    {"vllm.non_torch.pcie", 0.21, 0.084, 0.357, "GiB", Estimate, "xvllm-017", "non-torch growth after NCCL init over PCIe (0.09 .. ~0.35)"},
    {"vllm.non_torch.era_b_per_rank", 0.65, 0.0975, 0.975, "GiB per rank", Estimate, "vllm-048 vllm-001",
     "NCCL communicators' buffers + growth in the budget, 0.9.1-0.10.2 (1.38 at TP2, ~2.5 implied at TP4); per rank a GUESS past TP4"},
    {"vllm.non_torch.consumed_two_gpus", 0.46, 0.276, 0.69, "GiB", Estimate, "xvllm-061 xvllm-060",
     "consumed - weights at TP2, total_consumed accounting (0.38, 0.54 logged)"},
    {"vllm.non_torch.consumed_more_gpus", 1.6, 0.16, 2.72, "GiB", Estimate, "vllm-052 vllm-080",
     "consumed - weights at 3+ GPUs, total_consumed accounting (1.70 at TP4, ~1.5 at TP3)"},
    {"vllm.non_torch.after_nccl", 0.54, 0.0864, 0.972, "GiB", Estimate, "vllm-071",
     "non-torch growth after NCCL init, 0.11+ multi-GPU (0.09 .. 0.95 logged, median of 5)"},
    {"vllm.uma_host_growth", 1.9, 0, 8.6, "GiB over the discrete figure", Estimate, "xvllm-018 xvllm-041 xvllm-021 xvllm-020",
     "host memory growth during profiling that unified-memory devices count as non-torch (DGX Spark: 1.85 .. 8.55)"},
    {"vllm.cold_compile", 1.0, 0.7, 1.3, "GiB", Estimate, "xvllm-111 xvllm-112",
     "torch.compile on a cold cache inside Model Runner V2's profile run (0.99, 1.06 over warm restarts, a 0.29.0 cold start)"},
    {"vllm.graph.piecewise_unit", 0.27, 0.27, 0.27, "MiB per (graph x layer)", Estimate, "xvllm-095 xvllm-096 xvllm-110 vllm-055",
     "a PIECEWISE capture (0.24 .. 0.28 logged)"},
    {"vllm.graph.full_unit", 0.05, 0.05, 0.05, "MiB per (graph x layer)", Estimate, "xvllm-003 xvllm-111 xvllm-113 vllm-019 vllm-052 vllm-058",
     "a FULL capture: one graph over every layer (~17 kernels x 3 KiB); 0.04 .. 0.08 over nine logs"},
    {"vllm.graph.per_graph_unit", 0.19, 0.19, 0.19, "MiB per (graph x layer)", Estimate, "vllm-048 vllm-071",
     "one cost for every graph, the basis vLLM's own estimate was calibrated on"},
    {"vllm.graph.capture_range", 1.0, 0.6, 2.5, "x the central", Estimate, "",
     "the capture forecast's ends: observed / forecast p10 .. p90 over 42 logged captures (validate's graph_gib)"},
    {"vllm.graph.hybrid_full_warmup", 0.11, 0.055, 0.22, "GiB per 1,024 batched tokens above 4,096, per 48 GDN layers", Estimate, "",
     "the FULL warm-up transient of dense hybrids from 0.26 (n = 3)"},
    {"vllm.graph.nccl_captured", 0.28, 0.196, 0.448, "MiB per (graph x layer)", Estimate, "xvllm-019 xvllm-091 xvllm-094 xvllm-098",
     "NCCL all-reduces captured in the graphs where custom all-reduce is off (0.20 .. 0.45, n = 5)"},
    {"vllm.graph.v2_after_profiling", 0.077, 0.0462, 0.1925, "MiB per (graph x layer)", Estimate, "xvllm-115 xvllm-001",
     "Model Runner V2's real capture after its profiling capture (0.29+): 0.076, 0.078 logged"},
    {"vllm.graph.v1_estimate_over_capture", 1.18, 0.59, 1.888, "x the capture above 16 MiB", Estimate, "xvllm-037 xvllm-036 xvllm-035 vllm-058 vllm-029",
     "V1's profile_cudagraph_memory() over the capture it estimates (0.88 .. 1.47 logged)"},
    {"vllm.graph.v2_estimator", 0.27, 0.162, 0.459, "MiB per (graph x layer)", Estimate, "",
     "Model Runner V2's estimator (0.28+): median of 6 logs, 0.16 .. 0.46"},
    {"vllm.graph.outputs_per_size", 0.5, 0.15, 0.65, "x sizes x hidden x activation bytes x layers", Inferred, "",
     "V1 before 0.10.1: each size keeps its piecewise outputs (3 logs of 0.9.2, a 4th at 0.33x)"},
    {"vllm.sampler.topk_topp", 14, 6, 24, "B per logit", Estimate, "vllm-053 vllm-029 vllm-071",
     "the 2026 Triton / FlashInfer top-k/top-p sampler's logits in the profile run (8 .. 23 B logged)"},
};
static_assert(std::size(kRows) == static_cast<size_t>(Const::Count), "one row per Const, in the enum's order");
}  // namespace

const EstimatedConstant& constant(Const k) { return kRows[static_cast<size_t>(k)]; }
std::span<const EstimatedConstant> vllm_constants() { return kRows; }

}  // namespace headroom::vllm
