// The estimated constants of the terms every PyTorch engine shares (shared_constants.h), fitted on
// vLLM's startup logs: the figures and the cases each rests on.
#include "engines/shared/shared_constants.h"

#include <iterator>

namespace headroom::shared {

namespace {
using enum Evidence;
constexpr EstimatedConstant kRows[] = {
    {"shared.context.one_gpu", 0.45, 0.315, 0.6075, "GiB", Estimate, "vllm-019 vllm-054 vllm-082 vllm-009",
     "CUDA context before the budget check, one GPU: T - F = 0.49, 0.51, 0.56 logged; vllm-009 started at u = 0.98 (<= 0.45)"},
    {"shared.context.one_gpu_amd", 0.55, 0.385, 0.7425, "GiB", Guess, "", "the same on an AMD GPU (HIP context)"},
    {"shared.context.multi_gpu", 0.8, 0.48, 1.6, "GiB", Estimate, "vllm-048 vllm-052 vllm-071",
     "CUDA context + NCCL communicators, TP / PP > 1 (0.60 TP2, 0.96 and 1.55 TP4)"},
    {"shared.non_torch.one_gpu", 0.15, 0.015, 0.375, "GiB", Estimate, "vllm-019 vllm-017 vllm-053",
     "non-torch growth in a profiling forward (cuBLAS workspaces), one GPU: 0.02, 0.03, 0.30 logged"},
    {"shared.non_torch.multi_gpu", 1.3, 0.13, 2.6, "GiB", Estimate, "vllm-048 vllm-071 vllm-052 vllm-001",
     "non-torch growth with NCCL / custom all-reduce buffers: 0.13 .. 1.70 logged, ~2.5 implied by vllm-001"},
    {"shared.profile_peak.range", 1.0, 0.6, 1.6, "x the central", Estimate, "vllm-052",
     "the ends of a forward-set profile peak (a sampler-set peak takes its paths' ends instead)"},
    {"shared.graph.fixed_buffers", 16, 16, 16, "MiB", Estimate, "", "fixed buffers of a capture, beside graphs x layers x the engine's unit"},
    {"shared.graph.per_gdn_layer", 1.88, 1.88, 1.88, "MiB x (1 / tp) per (graph x Gated-DeltaNet layer)", Guess, "vllm-048 vllm-071",
     "MoE hybrids' linear-attention layers in the capture (n = 2)"},
    {"shared.graph.range", 1.0, 0.7, 1.6, "x the central", Estimate, "", "the ends of the per-(graph x layer) capture estimate"},
    {"shared.drafter_graph.range", 1.0, 0.5, 3.0, "x the central", Estimate, "xvllm-063", "the ends of a drafter's graph objects"},
    {"shared.graph_node_bytes", 3, 3, 3, "KiB per captured kernel node", Measured, "",
     "driver graph objects per kernel node: 80 KiB per graph per 27-kernel layer on an H200 (docs/measurements/h200-2026-11-30.md)"},
    {"shared.uma_capture_growth", 0.5, 0, 2.6, "GiB", Estimate, "xvllm-018 xvllm-020 xsgl-022",
     "host memory a capture adds on unified-memory devices, which both engines' free-memory delta counts: vLLM on DGX Spark +0.54, "
     "+0.51 GiB over the discrete forecast; SGLang +2.59 (a multimodal model, the high end)"},
};
static_assert(std::size(kRows) == static_cast<size_t>(Const::Count), "one row per Const, in the enum's order");
}  // namespace

const EstimatedConstant& constant(Const k) { return kRows[static_cast<size_t>(k)]; }
std::span<const EstimatedConstant> shared_constants() { return kRows; }

}  // namespace headroom::shared
