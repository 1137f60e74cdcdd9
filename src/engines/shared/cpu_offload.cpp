// --cpu-offload-gb as vLLM and SGLang implement it (the same offloader): which decoder-layer
// weights of a rank move to pinned CPU memory.
#include "engines/shared/cpu_offload.h"

#include <algorithm>
#include <fmt/format.h>

#include "headroom/units.h"

namespace headroom {

CpuOffload cpu_offload(const RankWeights& w, int64_t offload_bytes, int64_t online_fp8_saved) {
  // vllm/model_executor/models/utils.py make_layers wraps each decoder layer of this rank in
  // maybe_offload_to_cpu, which moves its parameters one by one to pinned CPU memory (UVA views
  // where available) while _CPU_OFFLOAD_BYTES < _CPU_OFFLOAD_MAX_BYTES: the first layers' weights,
  // up to the limit (the last parameter moved whole may pass it: not modelled). Embeddings,
  // lm_head and the final norm stay. "Model loading took" counts what is left on the GPU.
  CpuOffload e;
  if (offload_bytes <= 0) return e;
  // Every parameter of the rank's decoder layers as loaded -- attention, MLP, experts, router,
  // linear-attention projections and the layers' norms; online FP8 halves the linears (all inside
  // the layers) before they are counted.
  const int64_t layers = w.layer_bytes - online_fp8_saved;
  e.bytes = std::clamp<int64_t>(offload_bytes, 0, std::max<int64_t>(0, layers));
  e.what = fmt::format("--cpu-offload-gb: {} of rank {}'s decoder-layer weights live in pinned CPU memory (maybe_offload_to_cpu: vLLM models/utils.py, SGLang "
                       "srt/utils; parameter by parameter from the first layer){}",
                       human_bytes(e.bytes), w.rank, e.bytes < offload_bytes ? ": every layer's weights, less than asked" : "");
  return e;
}

}  // namespace headroom
