// SGLang startup lines (formats from sgl-project/sglang python/sglang/srt/model_executor/
// model_runner.py, mem_cache/memory_pool.py, model_executor/cuda_graph_runner.py and the 2026
// cuda_graph_setup.py / kv_cache_configurator.py; history in research/sglang-memory.md §1):
//   Init torch distributed begin.
//   Init torch distributed ends. [elapsed=.. s, ]mem usage=X GB
//   Load weight begin. avail mem=X GB
//   Load weight end. [elapsed=.. s, ]type=Cls, [dtype=.., | quant..., ]avail mem=X GB, mem usage=Y GB.
//   KV Cache is allocated. [dtype: .., ]#tokens: N, K size: X GB, V size: Y GB   (MLA: KV size: X GB)
//   SWAKVPool mem usage: X GB, ...
//   Memory pool end. avail mem=X GB
//   Capture cuda graph begin. This can take up to several minutes. avail mem=X GB
//   Capture target {prefill,decode,verify} CUDA graph begin. backend=.., bs=[..], avail mem=X GB
//   Capture cuda graph bs [1, 2, 4, 8]
//   Capturing batches (bs=B avail_mem=X GB)        (tqdm, rank 0)
//   Capture cuda graph end. Time elapsed: S s. mem usage=X GB. avail mem=Y GB.
//   Capture target decode CUDA graph end. elapsed=S s, mem usage=X GB, avail mem=Y GB.
//   max_total_num_tokens=N, chunked_prefill_size=C, max_prefill_tokens=P, max_running_requests=R, context_len=L[, available_gpu_mem=X GB]
//   Memory profiling: available_gpu_memory=A GB, total_gpu_memory=T GB, mem_fraction_static=F, rest_memory=R GB
//   Not enough memory. Please try to increase --mem-fraction-static.[ Current value: mem_fraction_static=F]
//   Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=F. Raise --mem-fraction-static above S ...
//   max_total_tokens=N is larger than the profiled value M. Use the profiled value instead.
//   Capture cuda graph failed: <error>   (also "Capture prefill/extend CUDA graph failed: <error>",
//       "Breakable CUDA graph failed.", 2026 "CUDA graph capture failed.")
//   AssertionError: Memory pool size is too small  /  max_running_request is zero   (tp_worker.py)
//   Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed max_mamba_cache_size=N
//       (total_rest_memory=X GB, mamba_cache_per_req=Y MB). ...
#include "doctor/log_parse.h"
#include "headroom/units.h"

namespace headroom::logscan_detail {

namespace {

// "Capture [phase] cuda graph begin/end" → phase: "" (old form = decode), "target decode",
// "target prefill", "target verify", "draft", "draft decode", "draft extend", "piecewise"...
std::string graph_phase(std::string_view body) {
  size_t cap = ifind(body, "capture ");
  size_t g = ifind(body, "cuda graph");
  if (cap == std::string_view::npos || g == std::string_view::npos || g < cap + 8) return "";
  std::string p(body.substr(cap + 8, g - cap - 8));
  while (!p.empty() && p.back() == ' ') p.pop_back();
  for (char& ch : p) ch = lower(ch);
  return p;
}

bool is_target(std::string_view phase) {
  return phase.empty() || phase.substr(0, 6) == "target" || phase == "piecewise" || phase == "prefill" || phase == "decode";
}

}  // namespace

void read_sglang(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  std::string_view b = l.body;

  if (k[kSglInitBegin]) {
    // "Init torch distributed begin." (model_runner.py init_torch_distributed): NCCL and the CUDA
    // context are being set up; an error before the matching end line is an init failure.
    c.keep(l, "sglang.init_torch_distributed_begin");
    c.stage(l, "init", true);
    c.score_sglang += 2;
  }
  if (k[kSglInitEnd]) {
    if (auto v = size_after(b, "mem usage=", GiB)) {
      set_first(c.fig(l.rank).init_used, *v, l.no);
      c.keep(l, "sglang.init_torch_distributed_end");
      c.stage(l, "init");
      c.score_sglang += 3;
    }
  }
  if (k[kSglLoadBegin]) {
    if (auto v = size_after(b, "avail mem=", GiB)) {
      set_first(c.fig(l.rank).init_avail, *v, l.no);
      c.keep(l, "sglang.load_weight_begin");
      c.stage(l, "weights", true);
      c.score_sglang += 3;
    }
  }
  if (k[kSglLoadEnd]) {
    auto avail = size_after(b, "avail mem=", GiB);
    auto used = size_after(b, "mem usage=", GiB);
    if (avail || used) {
      auto& f = c.fig(l.rank);
      int& n = c.state(l.rank).loads_seen;
      ++n;
      if (n == 1) {
        if (used) set_first(f.weights, *used, l.no);
        if (avail) set_first(f.post_weights_avail, *avail, l.no);
      } else if (used) {
        set_first(f.draft_weights, *used, l.no);
      }
      if (auto t = after(b, "type=")) {
        std::string_view cls = *t;
        size_t e = cls.find_first_of(", ");
        cls = cls.substr(0, e);
        if (c.scan.model_class.empty() && !cls.empty() && cls.size() < 120) c.scan.model_class = std::string(cls);
      }
      c.keep(l, "sglang.load_weight_end");
      c.stage(l, "kv_pool");
      c.score_sglang += 3;
    }
  }
  if (k[kSglKvAlloc]) {
    auto& f = c.fig(l.rank);
    auto tokens = int_after(b, "#tokens:");
    auto ks = size_after(b, "K size:", GiB);
    auto vs = size_after(b, "V size:", GiB);
    auto kv = size_after(b, "KV size:", GiB);
    int64_t bytes = -1;
    if (kv) bytes = *kv;
    else if (ks && vs) bytes = *ks + *vs;
    if (tokens || bytes >= 0) {
      if (!c.state(l.rank).pool_done) {
        if (tokens) set_first(f.kv_tokens, *tokens, l.no);
        if (bytes >= 0) {
          // Hybrid pools (full + SWA layers) log one allocation each: the pool is their sum.
          if (f.kv_bytes && f.kv_bytes->line != l.no) f.kv_bytes->value += bytes;
          else if (!f.kv_bytes) f.kv_bytes = LogFigure{bytes, l.no};
        }
      }
      c.keep(l, "sglang.kv_cache_allocated");
      c.stage(l, "kv_pool");
      c.score_sglang += 3;
    }
  }
  if (k[kSglPoolUsage]) {
    // "SWAKVPool mem usage: 77.63 GB, swa size: N, full size: M" — the whole pool, printed by SGLang.
    if (auto v = size_after(b, "pool mem usage:", GiB)) {
      if (!c.state(l.rank).pool_done) set_last(c.fig(l.rank).kv_bytes, *v, l.no);
      c.keep(l, "sglang.kv_pool_usage");
      c.score_sglang += 2;
    }
  }
  if (k[kSglPoolEnd]) {
    if (auto v = size_after(b, "avail mem=", GiB)) {
      set_first(c.fig(l.rank).pool_end_avail, *v, l.no);
      c.state(l.rank).pool_done = true;
      c.keep(l, "sglang.memory_pool_end");
      c.stage(l, "cuda_graph");
      c.score_sglang += 3;
    }
  }
  if (k[kSglGraphBegin]) {
    std::string phase = graph_phase(b);
    auto& f = c.fig(l.rank);
    auto avail = size_after(b, "avail mem=", GiB);
    if (is_target(phase)) {
      if (avail) set_first(f.graph_begin_avail, *avail, l.no);
      if (auto bs = after(b, "bs=")) {
        std::vector<int64_t> v;
        std::string_view t = *bs;
        if ((phase.empty() || phase.find("decode") != std::string::npos || phase.find("verify") != std::string::npos) &&
            take_int_list(t, v) && f.graph_bs.empty()) {
          f.graph_bs = std::move(v);
          f.graph_bs_line = l.no;
        }
      }
    }
    c.keep(l, phase.empty() ? "sglang.capture_cuda_graph_begin" : "sglang.capture_" + phase + "_begin");
    c.stage(l, "cuda_graph", true);
    c.score_sglang += 3;
  }
  if (k[kSglGraphBs]) {
    if (auto bs = after(b, "capture cuda graph bs")) {
      std::vector<int64_t> v;
      std::string_view t = *bs;
      if (take_int_list(t, v)) {
        auto& f = c.fig(l.rank);
        if (f.graph_bs.empty()) {
          f.graph_bs = std::move(v);
          f.graph_bs_line = l.no;
        }
        c.keep(l, "sglang.capture_cuda_graph_bs");
        c.score_sglang += 2;
      }
    }
  }
  if (k[kSglCapturing]) {
    // tqdm "Capturing batches (bs=512 avail_mem=3.12 GB): 0%|..." — keep the latest redraw.
    auto avail = size_after(b, "avail_mem=", GiB);
    if (avail) {
      auto& f = c.fig(l.rank);
      set_last(f.graph_progress_avail, *avail, l.no);
      if (auto bs = int_after(b, "bs=")) set_last(f.graph_progress_bs, *bs, l.no);
      c.keep(l, "sglang.capturing_batches");
      c.stage(l, "cuda_graph", true);
      c.score_sglang += 1;
    }
  }
  if (k[kSglGraphEnd]) {
    std::string phase = graph_phase(b);
    auto used = size_after(b, "mem usage=", GiB);
    auto avail = size_after(b, "avail mem=", GiB);
    if (used || avail) {
      auto& f = c.fig(l.rank);
      if (is_target(phase)) {
        if (used) {
          if (f.graph_bytes && c.state(l.rank).graph_from_sglang) f.graph_bytes->value += *used;
          else f.graph_bytes = LogFigure{*used, l.no};
          c.state(l.rank).graph_from_sglang = true;
        }
        if (avail) set_last(f.graph_end_avail, *avail, l.no);
      }
      c.keep(l, phase.empty() ? "sglang.capture_cuda_graph_end" : "sglang.capture_" + phase + "_end");
      c.stage(l, "warmup");
      c.score_sglang += 3;
    }
  }
  if (k[kSglSummary]) {
    auto& f = c.fig(l.rank);
    if (auto v = int_after(b, "max_total_num_tokens=")) set_first(f.max_total_num_tokens, *v, l.no);
    if (auto v = int_after(b, "max_running_requests=")) set_first(f.max_running_requests, *v, l.no);
    if (auto v = int_after(b, "context_len=")) set_first(f.context_len, *v, l.no);
    if (auto v = int_after(b, "chunked_prefill_size=")) set_first(f.chunked_prefill_size, *v, l.no);
    if (auto v = size_after(b, "available_gpu_mem=", GiB)) set_first(f.available_gpu_mem, *v, l.no);
    c.keep(l, "sglang.scheduler_summary");
    c.stage(l, "ready");
    c.score_sglang += 3;
  }
  if (k[kSglMemProfiling] && icontains(b, "available_gpu_memory=")) {
    auto& f = c.fig(l.rank);
    if (auto v = size_after(b, "total_gpu_memory=", GiB)) set_first(f.total, *v, l.no);
    if (auto v = num_after(b, "mem_fraction_static=")) set_first(f.mem_fraction_static, *v, l.no);
    c.keep(l, "sglang.memory_profiling");
    c.score_sglang += 2;
  }
  if (k[kSglNotEnough] && icontains(b, "mem-fraction-static")) {
    auto& e = c.error(l, "sglang_not_enough_memory");
    if (auto v = num_after(b, "mem_fraction_static=")) e.fraction = *v;
    c.keep(l, "sglang.not_enough_memory");
    c.fatal(l, "sglang_not_enough_memory", "kv_pool", Outcome::RefusedKv);
    c.score_sglang += 3;
  }
  if (k[kSglNoKv]) {
    auto& e = c.error(l, "sglang_weights_leave_no_kv");
    if (auto v = num_after(b, "--mem-fraction-static=")) e.fraction = *v;
    if (auto v = num_after(b, "--mem-fraction-static above")) e.suggested = *v;
    if (e.fraction) set_first(c.fig(l.rank).mem_fraction_static, *e.fraction, l.no);
    c.keep(l, "sglang.weights_leave_no_kv");
    c.fatal(l, "sglang_weights_leave_no_kv", "kv_pool", Outcome::RefusedKv);
    c.score_sglang += 3;
  }
  if (k[kSglProfiled]) {
    auto& e = c.error(l, "sglang_profiled_negative");
    if (auto v = int_after(b, "profiled value")) {
      e.value = *v;
      if (*v <= 0) c.fatal(l, "sglang_profiled_negative", "kv_pool", Outcome::RefusedKv);
    }
    if (auto v = int_after(b, "max_total_tokens=")) e.value2 = *v;
    c.keep(l, "sglang.profiled_value");
    c.score_sglang += 2;
  }
  if (k[kSglCaptureFailed] || (k[kSglGraphFailed] && !k[kSglCaptureFailed])) {
    // Every capture wrapper raises Exception("<wrapper>: {e}\n<hints>"): the wrapped error is on
    // this line (a following OOM line within a few lines upgrades it, log_torch.cpp).
    c.error(l, "sglang_capture_failed");
    c.keep(l, "sglang.capture_failed");
    const bool oom = icontains(b, "out of memory") || icontains(b, "OutOfMemoryError") || icontains(b, "_STATUS_ALLOC_FAILED");
    // One print of one failure ("Capture prefill CUDA graph failed: ..." then "Breakable CUDA graph
    // failed." two lines later) is one fatal event.
    const bool same = !c.fatals.empty() && c.fatals.back().kind == "sglang_capture_failed" && l.no - c.fatals.back().line <= 3;
    if (!same) c.fatal(l, "sglang_capture_failed", "cuda_graph", oom ? Outcome::OomGraph : Outcome::OtherError);
    else if (oom) c.fatals.back().outcome = Outcome::OomGraph;
    c.score_sglang += k[kSglCaptureFailed] ? 3 : 1;
  }
  if (k[kSglPoolTooSmall]) {
    // The pool holds too few tokens for one request (max_total_num_tokens - 1 <= 5) or the request
    // table none: SGLang's own check right after the pool, a KV-sizing refusal.
    c.error(l, "sglang_pool_too_small");
    c.keep(l, "sglang.pool_too_small");
    c.fatal(l, "sglang_pool_too_small", "kv_pool", Outcome::RefusedKv);
    c.score_sglang += 2;
  }
  if (k[kSglMambaNoMem]) {
    // The hybrid-state pool (mamba / linear attention) gets no slot after the weights: SGLang's
    // own refusal at KV sizing, negative total_rest_memory when the static share is too small.
    auto& e = c.error(l, "sglang_mamba_no_memory");
    if (auto v = int_after(b, "max_mamba_cache_size=")) e.value = *v;
    if (auto v = size_after(b, "total_rest_memory=", GiB)) e.value2 = *v;
    c.keep(l, "sglang.mamba_state_refusal");
    c.fatal(l, "sglang_mamba_no_memory", "kv_pool", Outcome::RefusedKv);
    c.score_sglang += 3;
  }
  if (k[kSglUnbalanced]) {
    c.error(l, "sglang_memory_unbalanced");
    c.keep(l, "sglang.memory_unbalanced");
    c.score_sglang += 2;
  }
  if (k[kSglPoolFull]) {
    c.keep(l, "sglang.kv_pool_full");
    c.score_sglang += 1;
  }
  if (k[kSglReady]) {
    c.keep(l, "sglang.ready");
    c.stage(l, "ready");
    c.score_sglang += 2;
  }
  if (k[kSglSchedExc]) {
    c.error(l, "scheduler_exception");
    c.keep(l, "sglang.scheduler_exception");
    c.fatal(l, "generic", "", Outcome::OtherError);
    c.score_sglang += 2;
  }
  if (k[kMarkSglangPath]) c.score_sglang += 1;
}

}  // namespace headroom::logscan_detail
