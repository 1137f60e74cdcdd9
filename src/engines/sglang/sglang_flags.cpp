// The SGLang server flags headroom understands (spelled as python/sglang/srt/server_args.py
// spells them), and the ones it accepts as having no effect on memory.
#include <algorithm>

#include "headroom/engine.h"

namespace headroom {

const std::vector<std::string_view>& sglang_flags() {
  static const std::vector<std::string_view> flags{
      // memory and capacity
      "--mem-fraction-static", "--max-total-tokens", "--max-running-requests", "--max-prefill-tokens",
      "--chunked-prefill-size", "--context-length", "--kv-cache-dtype", "--page-size", "--dtype", "--quantization",
      "--cuda-graph-max-bs", "--cuda-graph-bs", "--disable-cuda-graph", "--disable-cuda-graph-padding",
      "--enable-torch-compile", "--torch-compile-max-bs", "--enable-piecewise-cuda-graph",
      "--disable-piecewise-cuda-graph", "--piecewise-cuda-graph-max-tokens", "--attention-backend",
      "--prefill-attention-backend", "--decode-attention-backend", "--swa-full-tokens-ratio",
      "--mamba-full-memory-ratio", "--max-mamba-cache-size", "--disable-radix-cache", "--enable-memory-saver",
      "--speculative-algorithm", "--speculative-num-steps", "--speculative-eagle-topk",
      "--speculative-num-draft-tokens", "--speculative-draft-model-path", "--moe-a2a-backend", "--enable-dp-lm-head",
      "--moe-dense-tp-size", "--moe-runner-backend", "--enable-ep-moe", "--enable-deepep-moe", "--fp4-gemm-backend",
      "--enable-two-batch-overlap", "--enable-symm-mem", "--disable-shared-experts-fusion", "--nnodes", "--node-rank",
      "--disaggregation-mode", "--enable-mixed-chunk", "--enable-hierarchical-cache", "--load-format",
      // no effect on GPU memory
      "--host", "--port", "--trust-remote-code", "--tool-call-parser", "--reasoning-parser", "--served-model-name",
      "--tokenizer-path", "--log-level", "--random-seed", "--api-key", "--chat-template", "--dist-init-addr",
      "--skip-server-warmup", "--revision", "--disable-overlap-schedule", "--schedule-policy", "--stream-interval",
      "--enable-metrics", "--watchdog-timeout", "--download-dir", "--model-loader-extra-config",
      "--disable-custom-all-reduce", "--enable-eplb", "--ep-num-redundant-experts", "--enable-mtp",
      // in the ServerArgs dumps of real logs (enable_p2p_check, enable_cache_report, sampling_backend):
      // a P2P access probe at start-up, cached-token counts in responses, the sampling kernels
      "--enable-p2p-check", "--enable-cache-report", "--sampling-backend",
      // in real launch commands (tests/data/extra xsgl-013/015/018): per-request logging, a host
      // (CPU) copy of the weights for release/resume_memory_occupation, and the older spelling of
      // --moe-runner-backend flashinfer_trtllm (a MoE kernel choice, weights the same size)
      "--log-requests", "--enable-weights-cpu-backup", "--enable-flashinfer-trtllm-moe",
      // routed-expert ids returned with each request (tests/data/extra xsgl-020): a device cache of
      // (tokens, layers, top-k) int32, "DeviceCache[routed_experts] allocated: shape=(8192, 48, 8),
      // size=12.00 MB" for Qwen3-30B-A3B - not modelled, 12 MB
      "--enable-return-routed-experts",
      // the mid-2025 spelling of --moe-runner-backend triton_kernel (PR #8258's launch command,
      // tests/data/extra xsgl-023): a MoE kernel choice, the weights keep their size
      "--enable-triton-kernel-moe",
      // Server, tokenizer, scheduling, logging and debugging options of server_args.py (0.4 ..
      // 0.5.x) that leave startup GPU memory as it is; hierarchical-cache sizes are host memory.
      "--schedule-conservativeness", "--grammar-backend", "--num-continuous-decode-steps", "--decode-log-interval",
      "--max-queued-requests", "--allow-auto-truncate", "--skip-tokenizer-init", "--is-embedding", "--enable-multimodal",
      "--mm-attention-backend", "--hicache-ratio", "--hicache-size", "--hicache-write-policy", "--hicache-io-backend",
      "--hicache-mem-layout", "--hicache-storage-backend", "--file-storage-path", "--disable-outlines-disk-cache",
      "--constrained-json-whitespace-pattern", "--dist-timeout", "--base-gpu-id", "--gpu-id-step", "--deepep-mode",
      "--deepep-config", "--disable-chunked-prefix-cache", "--triton-attention-reduce-in-fp32", "--enable-nan-detection",
      "--preferred-sampling-params", "--enable-priority-scheduling", "--crash-dump-folder", "--show-time-cost",
      "--bucket-time-to-first-token", "--bucket-inter-token-latency", "--bucket-e2e-request-latency",
      "--collect-tokens-histogram", "--model-impl", "--device", "--tokenizer-mode", "--allow-credentials",
      "--allowed-origins", "--sleep-on-idle", "--disable-hybrid-swa-memory", "--weight-loader-disable-mmap",
      "--flashinfer-mxfp4-moe-precision", "--delete-ckpt-after-loading", "--disable-fast-image-processor",
      "--keep-mm-feature-on-device", "--enable-request-time-stats-logging", "--prefill-round-robin-balance",
      "--max-micro-batch-size", "--enable-deterministic-inference", "--tool-server", "--radix-eviction-policy",
      "--speculative-draft-model-revision", "--numa-node", "--disaggregation-transfer-backend",
      "--disaggregation-bootstrap-port", "--disaggregation-ib-device", "--enable-metrics-for-all-schedulers",
      "--enable-tokenizer-batch-encode",
      "--disable-tokenizer-batch-decode", "--enable-custom-logit-processor", "--enable-dynamic-batch-tokenizer",
      "--enable-layerwise-nvtx-marker", "--enable-profile-cuda-graph", "--enable-cudagraph-gc", "--enable-nccl-nvls",
      "--enable-tokenizer-info-endpoint", "--export-metrics-to-file", "--log-requests-level", "--uvicorn-log-level",
      "--api-key-file", "--tp", "--dp", "--ep", "--pp", "--model", "--tokenizer-worker-num", "--kv-events-config",
      "--enable-trace", "--otlp-traces-endpoint", "--file-storage-pth", "--json-model-override-args",
      "--hybrid-kvcache-ratio", "--enable-lora", "--lora-paths", "--max-loras-per-batch", "--max-lora-rank",
      "--lora-target-modules", "--lora-backend", "--max-loaded-loras", "--lora-eviction-policy",
      "--enable-lora-overlap-loading", "--max-lora-chunk-size", "--mamba-ssm-dtype", "--cpu-offload-gb", "--enable-double-sparsity", "--enable-fp32-lm-head",
      "--modelopt-quant", "--modelopt-checkpoint-restore-path", "--modelopt-checkpoint-save-path"};
  return flags;
}

const std::vector<std::pair<std::string_view, std::string_view>>& sglang_unmodelled_flags() {
  // Accepted by server_args.py, memory effect not modelled: the plan runs without them and says so.
  static const std::vector<std::pair<std::string_view, std::string_view>> v{
      {"--hybrid-kvcache-ratio", "the older name of the SWA / full pool split"},
      {"--enable-lora", "LoRA adapter buffers"},
      {"--lora-paths", "LoRA adapter buffers"},
      {"--max-loras-per-batch", "LoRA adapter buffers"},
      {"--max-lora-rank", "LoRA adapter buffers"},
      {"--max-loaded-loras", "LoRA adapter buffers"},
      {"--enable-lora-overlap-loading", "LoRA adapter buffers"},
      {"--enable-double-sparsity", "the double-sparsity channel buffers"},
      {"--enable-fp32-lm-head", "float32 logits"},
      {"--modelopt-quant", "ModelOpt quantization at load"}};
  return v;
}

}  // namespace headroom
