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
      "--enable-triton-kernel-moe"};
  return flags;
}

}  // namespace headroom
