// GPU memory vLLM adds to the checkpoint's tensors while loading the model, inside the window
// that "Model loading took X GiB" measures (gpu_model_runner.py load_model: the loader and
// load_lora_model both run under DeviceMemoryProfiler): LoRA adapter slots and the FP8 scales
// the Marlin kernels re-lay on GPUs without FP8 compute; and what online FP8 quantization
// (--quantization fp8 on a 16-bit checkpoint) takes off the weights and holds while loading.
#pragma once
#include <cstdint>
#include <string>

#include "headroom/gpu.h"
#include "headroom/layout.h"
#include "headroom/model.h"

namespace headroom::vllm {

struct LoraSettings {
  bool enabled = false;
  int64_t max_rank = 16;      // --max-lora-rank (LoRAConfig.max_lora_rank default 16)
  int64_t max_loras = 1;      // --max-loras (LoRAConfig.max_loras default 1)
  bool fully_sharded = false; // --fully-sharded-loras
  int elem_bytes = 2;         // --lora-dtype auto = the model dtype
};

struct LoadExtra {
  int64_t bytes = 0;
  std::string what;  // one note line saying what was added and from which rule; empty when nothing
};

// The stacked LoRA A/B buffers of the linears on decoder layers [first, last) of one TP rank.
LoadExtra lora_buffers(const ModelConfig& c, const LoraSettings& l, int tp, int first, int last);

// FP8 weights on a GPU below sm89: vLLM runs them through Marlin (W8A16) and re-lays block
// scales as per-group bf16 scales. fp8_bytes: this rank's FP8 weight bytes.
LoadExtra fp8_marlin_scales(const ModelConfig& c, const GpuSpec& gpu, int64_t fp8_bytes);

// Online dynamic FP8 (--quantization fp8 on an unquantized 16-bit checkpoint) for one rank:
// `saved` comes off its weights (the Linear and expert weights go from 2 B to 1 B per element),
// `load_transient` is the 16-bit copy held at the load's peak and freed by the end of load_model.
struct OnlineFp8 {
  int64_t saved = 0;
  int64_t load_transient = 0;
  std::string what;
};
OnlineFp8 online_fp8(const RankWeights& w, int vllm_version, int layers_on_rank);

}  // namespace headroom::vllm
