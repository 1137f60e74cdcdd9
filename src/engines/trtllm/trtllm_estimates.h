// TensorRT-engine (C++ runtime) memory terms that TensorRT-LLM's source does not compute in
// closed form -- the engine's execution-context (activation) memory is TensorRT's
// getDeviceMemorySizeV2() of the built engine, the runtime buffers and the decoder are sized by
// TrtGptModelInflightBatching::createBuffers / createDecoder -- fitted on TensorRT-LLM's own
// "[MemUsageChange] Allocated ..." log lines (trtllm_estimates.cpp lists the logs), the weights
// of a TensorRT engine built with quantized linear layers from a 16-bit checkpoint, and what the
// PyTorch backend's profiled peak holds beyond the terms shared with vLLM's model.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "engines/trtllm/trtllm_rules.h"
#include "engines/shared/estimate.h"
#include "headroom/layout.h"
#include "headroom/model.h"

namespace headroom::trtllm {

// "[MemUsageChange] Allocated X MiB for execution context memory." of an engine built for
// max_num_tokens (ESTIMATE, n = 3 logs: bytes per max_num_tokens token ~ 32 x hidden_size).
Estimate trt_execution_context(const ModelConfig& c, int64_t max_num_tokens);
// "Allocated X GPU memory for runtime buffers." + "... for decoder." for max_batch_size
// sequences (ESTIMATE, n = 3 logs: 20 B per sequence per vocabulary entry, 18..45 B logged).
Estimate trt_runtime_buffers(const ModelConfig& c, int64_t max_batch_size);
// The engine quantization of an upper-case QuantAlgo name (trtllm_rules.h EngineQuant); nullopt for
// an algorithm headroom does not model.
std::optional<EngineQuant> engine_quant(const std::string& algo_upper);
// The names engine_quant accepts, for messages.
std::string engine_quant_names();
// Weights of such an engine per rank: the linears at q.bytes_per_weight; embedding, lm_head, norms
// and the MoE router stay 16-bit. Throws InputError when the checkpoint is not 16-bit (its own
// quantization is what the engine holds).
int64_t engine_quant_weights(const ModelConfig& c, const RankWeights& w, const EngineQuant& q);
// PyTorch backend: the part of KvCacheCreator's profiled peak (torch peak + memory outside torch,
// tensorrt_llm/_torch/pyexecutor/_util.py) that the CUDA-context, activation, non-torch-growth and
// CUDA-graph terms shared with vLLM's model (engines/shared/process_terms.h) leave out, per rank (ESTIMATE, n = 3 logs: 0.49 ..
// 1.34 GiB; trtllm_estimates.cpp lists them).
Estimate pytorch_executor_overhead();

}  // namespace headroom::trtllm
