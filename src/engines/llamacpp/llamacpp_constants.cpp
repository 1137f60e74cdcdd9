// llama.cpp's estimated constants (llamacpp_constants.h): the figures the plan and the compute
// estimate read, with the logs each rests on (docs/llamacpp-plan.md has the derivations).
#include "engines/llamacpp/llamacpp_constants.h"

#include <iterator>

namespace headroom::llamacpp {

namespace {
using enum Evidence;
constexpr EstimatedConstant kRows[] = {
    {"llamacpp.runtime_context", 450, 250, 750, "MiB", Estimate, "llamacpp-021",
     "what the GPU runtime holds beside llama.cpp's buffers (CUDA / HIP context, kernels loaded, cuBLAS handles): in use when "
     "llama.cpp reads free memory 264 (RTX 3090, ollama#17482), 472 (RTX 4090, llama.cpp#23679), 561 MiB (RTX PRO 6000, "
     "llamacpp-021); 'unaccounted' in the memory breakdown after loading 451 / 456 (RTX 4090, PR #15860), 703 .. 711 MiB "
     "(RTX PRO 6000 x 4, llamacpp-021); 300 (a GUESS) before 2026-12-03"},
    {"llamacpp.mmproj_compute", 250, 3, 500, "MiB", Guess, "",
     "the projector's image compute buffer: 2026 builds warm it up with a large image (248.10 MiB logged), older ones reserve a few MiB"},
    {"llamacpp.compute.residual_copies", 2, 2, 2, "f32 rows of (q width + n_embd) per token", Estimate, "llamacpp-027 llamacpp-010",
     "residual activations alive beside the attention scores in the compute graph: both logs give exactly 2"},
    {"llamacpp.compute.range", 1.0, 0.85, 1.30, "x the central", Guess, "llamacpp-013 llamacpp-015",
     "the compute-buffer estimate's ends: -013 lies 11% above the central, -015 (gpt-oss on Metal) twice it, outside"},
};
static_assert(std::size(kRows) == static_cast<size_t>(Const::Count), "one row per Const, in the enum's order");
}  // namespace

const EstimatedConstant& constant(Const k) { return kRows[static_cast<size_t>(k)]; }
std::span<const EstimatedConstant> llamacpp_constants() { return kRows; }

}  // namespace headroom::llamacpp
