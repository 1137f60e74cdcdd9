// TensorRT-LLM startup lines (NVIDIA/TensorRT-LLM cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp,
// tensorrt_llm/_torch/pyexecutor/_util.py; research/vllm-trtllm-llamacpp-memory.md §7):
//   [TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: T GiB, available: A GiB
//   [TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: N
//   [TensorRT-LLM][INFO] Number of tokens per block: N.
//   [TensorRT-LLM][INFO] [MemUsageChange] Allocated X GiB for max tokens in paged KV cache (N).
//   [TensorRT-LLM][INFO] [MemUsageChange] Allocated X MiB for execution context memory. / ... GB GPU memory for runtime buffers.
//   Memory used after loading model weights (inside torch) in memory usage profiling: X GiB
//   Memory dynamically allocated during inference (inside torch) in memory usage profiling: X GiB
//   Memory used outside torch (e.g., NCCL and CUDA graphs) in memory usage profiling: X GiB
//   Peak memory during memory usage profiling (torch + non-torch): P GiB, available KV cache memory when
//       calculating max tokens: K GiB, fraction is set F, ...
//   Estimated max memory in KV cache : X GiB
//   max_seq_len=N, max_num_requests=R, max_num_tokens=T, max_batch_size=B
//   Attention window size A exceeds upper bound B for available blocks. Reducing to B.
//   [TensorRT-LLM] TensorRT-LLM version: X
//   2023 (0.5-0.7): [TensorRT-LLM][INFO] Using N tokens in paged KV cache.
//                   maxTokensInPagedKvCache must be large enough to process at least 1 sequence to completion (...)
//   1.0+ PyTorch backend (py_executor_creator.py): Executor creation failed due to insufficient GPU memory.
//                   The following component could not be created: KV cache
#include "doctor/log_parse.h"
#include "headroom/units.h"

namespace headroom::logscan_detail {

void read_trtllm(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  std::string_view b = l.body;
  if (k[kMarkTrt] || k[kMarkTrtPkg]) c.score_trt += 1;

  if (k[kTMemUsageChange]) {
    if (icontains(b, "paged kv cache")) {
      auto& f = c.fig(l.rank);
      if (auto v = size_after(b, "allocated", GiB)) set_first(f.kv_bytes, *v, l.no);
      // the token count in the last parentheses
      size_t open = b.rfind('(');
      if (open != std::string_view::npos) {
        std::string_view s = b.substr(open + 1);
        int64_t n = 0;
        if (take_int(s, n) && !s.empty() && s.front() == ')') set_first(f.kv_tokens, n, l.no);
      }
      c.keep(l, "trtllm.kv_cache_allocated");
      c.stage(l, "kv_pool");
      c.score_trt += 3;
    } else {
      c.keep(l, "trtllm.mem_usage_change");
      c.score_trt += 2;
    }
  }
  if (k[kTPagedTokens] && !k[kTMemUsageChange]) {
    if (auto v = int_after(b, "using ")) {
      set_first(c.fig(l.rank).kv_tokens, *v, l.no);
      c.keep(l, "trtllm.kv_cache_tokens");
      c.stage(l, "kv_pool");
      c.score_trt += 3;
    }
  }
  if (k[kTOneSequence]) {
    // The pool cannot hold one sequence of the engine's max length: a refusal at KV sizing.
    c.error(l, "trtllm_kv_too_small");
    c.keep(l, "trtllm.kv_too_small_refusal");
    c.fatal(l, "trtllm_kv_too_small", "kv_pool", Outcome::RefusedKv);
    c.score_trt += 3;
  }
  if (k[kTExecutorOom]) {
    // py_executor_creator.py raises it when creating a component ran out of memory (or, in the
    // "might indicate" wording, hit NCCL's unhandled CUDA error). The component line that follows
    // names the stage; until then it is an OOM the traceback or the stage in progress places.
    c.error(l, "trtllm_executor_oom");
    c.keep(l, "trtllm.executor_oom");
    c.fatal(l, "trtllm_executor_oom", "", std::nullopt);
    c.score_trt += 3;
  }
  if (k[kTCouldNotCreate]) {
    // The component names the stage: the KV cache (or its temporary estimation pool), the model
    // (target or draft) weights, CUDA graphs; anything else is built after the weights (sampler,
    // drafter, executor) and counts as warm-up.
    std::string_view comp = b.substr(b.find(':') + 1);
    skip_spaces(comp);
    c.error(l, "trtllm_executor_oom");
    c.keep(l, "trtllm.component_not_created");
    std::string_view st = icontains(comp, "kv cache") ? "kv_pool" : icontains(comp, "model") ? "weights"
                          : icontains(comp, "cuda graph") ? "cuda_graph" : "warmup";
    const Outcome out = st == "kv_pool" ? Outcome::OomKv : st == "weights" ? Outcome::OomWeights : st == "cuda_graph" ? Outcome::OomGraph : Outcome::OomWarmup;
    // The explanation's first line (a few lines above) is the same failure: it gets the stage.
    if (!c.fatals.empty() && c.fatals.back().kind == "trtllm_executor_oom" && c.fatals.back().stage.empty() &&
        l.no - c.fatals.back().line <= 4) {
      c.fatals.back().stage = std::string(st);
      c.fatals.back().outcome = out;
    } else {
      c.fatal(l, "trtllm_executor_oom", st, out);
    }
    c.score_trt += 3;
  }
  if (k[kTMemCalc]) {
    auto& f = c.fig(l.rank);
    if (auto v = size_after(b, "total:", GiB)) set_first(f.total, *v, l.no);
    if (auto v = size_after(b, "available:", GiB)) set_first(f.init_avail, *v, l.no);
    c.keep(l, "trtllm.memory_usage_for_kv");
    c.stage(l, "kv_pool");
    c.score_trt += 3;
  }
  if (k[kTBlocksPrimary] || k[kTTokensPerBlock]) {
    c.keep(l, k[kTBlocksPrimary] ? "trtllm.kv_blocks" : "trtllm.tokens_per_block");
    c.score_trt += 2;
  }
  if (k[kTAfterWeights]) {
    if (icontains(b, "(inside torch)")) {
      if (auto v = size_after(b, "memory usage profiling:", GiB)) set_first(c.fig(l.rank).weights, *v, l.no);
    }
    c.keep(l, "trtllm.weights");
    c.stage(l, "warmup");
    c.score_trt += 3;
  }
  if (k[kTDynamic]) {
    if (auto v = size_after(b, "memory usage profiling:", GiB)) set_first(c.fig(l.rank).activation, *v, l.no);
    c.keep(l, "trtllm.activation");
    c.score_trt += 3;
  }
  if (k[kTOutsideTorch]) {
    if (auto v = size_after(b, "memory usage profiling:", GiB)) set_first(c.fig(l.rank).non_torch, *v, l.no);
    c.keep(l, "trtllm.outside_torch");
    c.score_trt += 3;
  }
  if (k[kTPeak]) {
    auto& f = c.fig(l.rank);
    if (auto v = num_after(b, "fraction is set")) set_first(f.mem_fraction_static, *v, l.no);
    if (auto v = size_after(b, "device total memory", GiB)) set_first(f.total, *v, l.no);
    c.keep(l, "trtllm.peak_memory");
    c.stage(l, "kv_pool");
    c.score_trt += 3;
  }
  if (k[kTEstimatedMax]) {
    c.keep(l, "trtllm.estimated_kv_memory");
    c.score_trt += 2;
  }
  if (k[kTMaxSeqLen] && icontains(b, "max_num_requests=")) {
    auto& f = c.fig(l.rank);
    if (auto v = int_after(b, "max_seq_len=")) set_first(f.context_len, *v, l.no);
    if (auto v = int_after(b, "max_num_requests=")) set_first(f.max_running_requests, *v, l.no);
    c.keep(l, "trtllm.limits");
    c.score_trt += 2;
  }
  if (k[kTWindow] && icontains(b, "attention window size")) {
    auto& e = c.error(l, "trtllm_window_reduced");
    if (auto v = int_after(b, "upper bound")) e.value = *v;
    if (auto v = int_after(b, "attention window size")) e.value2 = *v;
    c.keep(l, "trtllm.window_reduced");
    c.score_trt += 2;
  }
  if (k[kTVersion]) {
    if (auto a = after(b, "tensorrt-llm version:")) {
      std::string_view v = *a;
      skip_spaces(v);
      v = v.substr(0, v.find_first_of(" \t,"));
      c.version(v, l.no);
      c.keep(l, "trtllm.version");
      c.score_trt += 3;
    }
  }
}

}  // namespace headroom::logscan_detail
