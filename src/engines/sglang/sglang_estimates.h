// The estimated terms of SGLang's startup (what SGLang itself never computes, only measures):
// CUDA context + NCCL before weights, attention-backend workspaces, CUDA-graph capture,
// runtime activations. Each is a central value with a [low, high] range, calibrated on the
// real logs in tests/data/corpus/sglang.jsonl (case ids cited next to each constant).
#pragma once
#include <cstdint>
#include <string>

#include "engines/shared/estimate.h"
#include "headroom/gpu.h"
#include "headroom/model.h"

namespace headroom::sglang {

using headroom::Estimate;  // engines/shared/estimate.h: central, low, high and what it rests on

// Free memory taken before weights: CUDA context + NCCL/custom all-reduce for tp x pp ranks.
Estimate init_overhead(const GpuSpec& gpu, int world_size);
// Allocations between "Memory pool end" and "Capture cuda graph begin" (cuBLAS handle,
// attention-backend workspace).
Estimate backend_workspace(const std::string& attention_backend);
// FP4 MoE kernels on Blackwell: FlashInfer autotuning / warm-up before capture leaves cached,
// fragmented blocks that the capture cannot reuse. Zero for other models and GPUs.
Estimate fp4_moe_warmup_residue(const ModelConfig& c, const GpuSpec& gpu);
// CUDA-graph capture beyond the exact metadata / output-logits buffers: the private graph pool's
// peak (largest batch), graph objects, captured all-reduces (tp = the MLP/MoE TP size, attn_tp the
// attention TP size; both 1 on one rank) and a fixed part. nccl_captured: custom all-reduce is off
// (custom_allreduce_off), so the graphs capture NCCL's all-reduces.
Estimate graph_capture(const ModelConfig& c, int tp, int attn_tp, int64_t max_bs, int64_t n_graphs, int64_t tokens_per_bs,
                       bool nccl_captured = false);
// FlashInfer's wrappers kept per captured batch size (`wrapper_sets` = graphs x wrappers per graph):
// each allocates its own 8 MiB int workspace on the device (flashinfer decode.py / prefill.py).
Estimate flashinfer_graph_wrappers(int64_t wrapper_sets);
// SGLang turns its custom all-reduce off on more than two PCIe-only NVIDIA GPUs (custom_all_reduce.py).
bool custom_allreduce_off(const GpuSpec& gpu, int tp);
// Speculative decoding's draft graphs, captured after the target's into the same graph pool: the
// draft-decode runner (one graph per batch size running the draft model speculative_num_steps - 1
// times on bs x topk tokens) and the draft-extend runner (bs x num_draft_tokens tokens).
struct DraftSpec {
  int64_t layers = 0, steps = 1, topk = 1, draft_tokens = 1;
  bool eagle3 = false;  // EAGLE-3 heads take three target hidden states
};
struct DraftCapture {
  Estimate decode, extend;
};
DraftCapture draft_capture(const ModelConfig& c, int tp, const DraftSpec& spec, int64_t max_bs, int64_t n_graphs);
// Runtime peak of one prefill chunk of `tokens` tokens after capture.
Estimate prefill_activations(const ModelConfig& c, int tp, int64_t tokens, int64_t context_len);

// Caching-allocator slack (reserved - allocated) at the peak of one prefill chunk, played
// through the allocator model (src/alloc, PyTorch's CUDACachingAllocator rules with the
// default PYTORCH_CUDA_ALLOC_CONF) with the per-token tensors of prefill_activations().
Estimate prefill_allocator_slack(const ModelConfig& c, int tp, int64_t tokens);

}  // namespace headroom::sglang
