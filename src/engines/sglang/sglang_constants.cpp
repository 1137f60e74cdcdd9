// SGLang's estimated constants (sglang_constants.h): the figures sglang_estimates.cpp reads, with
// the logs each rests on. Derivations beside the code that uses them; cases in tests/data.
#include "engines/sglang/sglang_constants.h"

#include <iterator>

namespace headroom::sglang {

namespace {
using enum Evidence;
constexpr EstimatedConstant kRows[] = {
    {"sglang.init.context", 0.55, 0.40, 0.80, "GiB", Estimate, "sglang-025 sglang-037",
     "CUDA context before the weights, one GPU (31.37 - 16.47 - 14.39 on an RTX 5090; 0.60 on an H200)"},
    {"sglang.init.dgx_spark_host", 8.4, 6.7, 24.7, "GiB", Guess, "xsgl-022",
     "what the host OS holds of the DGX Spark's unified memory at start (vLLM logs on the box read 97-115 GiB free)"},
    {"sglang.init.amd_rccl", 3.5, 2.5, 4.0, "GiB", Estimate, "sglang-003", "context + RCCL, TP > 1 on AMD (MI300X TP8: 3.66)"},
    {"sglang.init.nvswitch", 2.45, 1.9, 2.9, "GiB", Estimate, "sglang-001 sglang-036 sglang-039",
     "context + NCCL (NVLS) + custom all-reduce, TP > 1 on NVSwitch boards"},
    {"sglang.init.pcie_3_4_ranks", 0.50, 0.35, 1.0, "GiB", Estimate, "xsgl-001 xsgl-003",
     "context + NCCL over PCIe, 3-4 ranks: custom all-reduce is off past two PCIe GPUs (3 ranks a GUESS: as 4)"},
    {"sglang.init.pcie_2_geforce", 0.70, 0.40, 1.0, "GiB", Estimate, "xsgl-013",
     "context + NCCL, two GeForce ranks whose custom all-reduce fails without peer access"},
    {"sglang.init.pcie_other", 1.67, 1.0, 2.2, "GiB", Estimate, "",
     "context + NCCL over PCIe, other sizes (GLM-5.2 TP8 on RTX PRO 6000, sglang#29562; the seed crash's 0.85 non-PyTorch)"},
    {"sglang.workspace.flashinfer", 0.60, 0.45, 0.75, "GiB", Estimate, "sglang-021 sglang-024 sglang-037",
     "FlashInfer workspace + cuBLAS: Memory pool end -> Capture begin (0.53 .. 0.66)"},
    {"sglang.workspace.other", 0.06, 0.01, 0.6, "GiB", Estimate, "sglang-001 sglang-025 sglang-028 sglang-031",
     "cuBLAS handle + backend buffers of FA3 / Triton / others (0.01 .. 0.07)"},
    {"sglang.fp4_moe_residue", 2.0, 1.0, 3.0, "GiB", Guess, "sglang-012",
     "FlashInfer FP4 MoE autotune residue on Blackwell (a 4 GiB request in sglang-012; vLLM's 1.85 GiB; the seed crash)"},
    {"sglang.graph.fixed", 0.06, 0.06, 0.06, "GiB", Estimate, "xsgl-011 xsgl-012",
     "capture's fixed cost (cuBLAS workspaces of the capture stream, input buffers, kernel modules): TP1 logs with the other terms near 0"},
    {"sglang.graph.per_allreduce", 150, 150, 150, "KiB per captured all-reduce", Estimate, "xsgl-001 xsgl-013 xsgl-018 xsgl-023",
     "what each all-reduce captured into a graph keeps (custom all-reduce or NCCL)"},
    {"sglang.graph.range", 1.0, 0.8, 1.3, "x the central", Estimate, "",
     "the capture estimate's ends: observed / forecast p10 0.88 .. p90 1.26 over the 14 logged captures of tests/data/extra/sglang.jsonl "
     "(2026-12-03, with FlashInfer's per-size wrappers; 1.44 before)"},
    {"sglang.prefill.sampling", 256, 256, 256, "MiB", Guess, "", "sampling / logits temporaries beside one prefill chunk's activations"},
    {"sglang.prefill.range", 1.0, 0.6, 1.6, "x the central", Guess, "", "the prefill-activation estimate's ends"},
    {"sglang.draft_capture.range", 1.0, 0.5, 2.0, "x the central", Guess, "", "the draft decode / extend capture estimates' ends (no log prints them)"},
    {"sglang.draft_capture.sampling_kernels", 8, 8, 8, "kernels per draft step", Guess, "", "top-k, softmax and index bookkeeping per draft step"},
};
static_assert(std::size(kRows) == static_cast<size_t>(Const::Count), "one row per Const, in the enum's order");
}  // namespace

const EstimatedConstant& constant(Const k) { return kRows[static_cast<size_t>(k)]; }
std::span<const EstimatedConstant> sglang_constants() { return kRows; }

}  // namespace headroom::sglang
