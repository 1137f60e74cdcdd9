// TensorRT-LLM's estimated constants (trtllm_constants.h): the figures trtllm_estimates.cpp and
// trtllm_plan.cpp read, with the logs each rests on (derivations beside the code that uses them).
#include "engines/trtllm/trtllm_constants.h"

#include <iterator>

namespace headroom::trtllm {

namespace {
using enum Evidence;
constexpr EstimatedConstant kRows[] = {
    {"trtllm.exec_context_per_token", 32, 27.2, 38.4, "x hidden_size B per max_num_tokens token", Estimate, "xtrt-018 xtrt-015",
     "a TensorRT engine's execution context (getDeviceMemorySizeV2): 29..36 x hidden logged; the scaling with hidden_size a GUESS"},
    {"trtllm.runtime_buffers", 20, 17, 46, "B per (sequence x vocabulary entry)", Estimate, "xtrt-003 xtrt-018",
     "runtime buffers + decoder of the C++ runtime for max_batch_size sequences: 18, 20 and 45 B logged"},
    {"trtllm.pytorch_executor_overhead", 0.64, 0.45, 1.35, "GiB", Estimate, "xtrt-001 xtrt-008 xtrt-009 xtrt-007",
     "the PyTorch executor's profiled peak beyond the shared terms (sampler, runtime buffers, kernel modules, allocator leftovers); one constant per rank a GUESS"},
    {"trtllm.graph_unit", 0.19, 0.19, 0.19, "MiB per (graph x layer)", Estimate, "",
     "PyTorch-backend CUDA graphs at vLLM's 86-graph average (shared.graph.* ranges); not refitted for TensorRT-LLM"},
    {"trtllm.sampler_bytes", 14, 6, 24, "B per logit", Estimate, "", "the profile step's sampler at vLLM's 2026 top-k/top-p figure; not re-derived for TensorRT-LLM"},
    {"trtllm.unified_memory_outside_torch", 0, 0, 0.42, "x the device's memory", Guess, "xtrt-002",
     "on unified memory what the host holds counts outside torch: the unfavourable end (49.78 of 119.70 GiB on a DGX Spark)"},
};
static_assert(std::size(kRows) == static_cast<size_t>(Const::Count), "one row per Const, in the enum's order");
}  // namespace

const EstimatedConstant& constant(Const k) { return kRows[static_cast<size_t>(k)]; }
std::span<const EstimatedConstant> trtllm_constants() { return kRows; }

}  // namespace headroom::trtllm
