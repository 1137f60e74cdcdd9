// PyTorch out-of-memory reports in all their versions (CUDA, HIP, XPU, generic), the caching
// allocator's OOM warning, raw CUDA/cuBLAS/NCCL errors, Python tracebacks and exception lines.
// OOM templates: pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp by version, summarised in
// research/allocator-runtime.md §2.2.
#include <algorithm>

#include "doctor/log_parse.h"
#include "headroom/units.h"

namespace headroom::logscan_detail {

namespace {

bool is_ident(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

// The size printed just before position `pos` ("... 87.43 GiB is allocated"): walks back over
// spaces, the unit and the number.
std::optional<int64_t> size_before(std::string_view t, size_t pos) {
  if (pos == std::string_view::npos || pos > t.size()) return std::nullopt;
  size_t e = pos;
  while (e > 0 && t[e - 1] == ' ') --e;
  size_t u = e;
  while (u > 0 && ((t[u - 1] >= 'a' && t[u - 1] <= 'z') || (t[u - 1] >= 'A' && t[u - 1] <= 'Z'))) --u;
  size_t n = u;
  while (n > 0 && t[n - 1] == ' ') --n;
  size_t s = n;
  while (s > 0 && ((t[s - 1] >= '0' && t[s - 1] <= '9') || t[s - 1] == '.')) --s;
  if (s == n) return std::nullopt;
  std::string_view num = t.substr(s, e - s);
  int64_t bytes = 0;
  if (!take_size(num, bytes)) return std::nullopt;
  return bytes;
}

// Python exception type at the start of a body: "torch.OutOfMemoryError: ..." → "torch.OutOfMemoryError".
std::string_view exception_type(std::string_view body) {
  size_t i = 0;
  while (i < body.size() && (is_ident(body[i]) || body[i] == '.')) ++i;
  if (i == 0 || i >= body.size() || body[i] != ':') return {};
  std::string_view name = body.substr(0, i);
  std::string_view last = name.substr(name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1);
  auto ends = [&](std::string_view suf) { return last.size() >= suf.size() && last.substr(last.size() - suf.size()) == suf; };
  if (ends("Error") || ends("Exception") || last == "KeyboardInterrupt" || last == "SystemExit") return name;
  return {};
}

void parse_oom_message(std::string_view t, LogOom& o) {
  size_t tried = ifind(t, "tried to allocate");
  // backend: the word before "out of memory"
  size_t oom = ifind(t, "out of memory");
  if (oom != std::string_view::npos && oom >= 4) {
    size_t s = oom - 1;
    while (s > 0 && t[s - 1] != ' ' && t[s - 1] != ':' && t[s - 1] != '\'' && t[s - 1] != '"') --s;
    std::string_view w = t.substr(s, oom - 1 - s);
    if (w == "CUDA" || w == "HIP" || w == "XPU" || w == "MPS" || w == "NPU" || w == "MTIA") o.backend = std::string(w);
  }
  if (tried != std::string_view::npos) {
    std::string_view r = t.substr(tried + 17);
    int64_t b = 0;
    if (take_size(r, b)) o.request = b;
  }
  if (auto p = ifind(t, "has a total capac"); p != std::string_view::npos) {
    o.form = "torch2.1+";
    if (auto d = int_after(t.substr(0, p), "GPU ")) o.device = static_cast<int>(*d);
    std::string_view r = t.substr(p);
    if (auto q = ifind(r, " of "); q != std::string_view::npos) {
      std::string_view s = r.substr(q + 4);
      int64_t b = 0;
      if (take_size(s, b)) o.total = b;
    }
    if (auto v = size_after(r, "of which")) o.free = *v;
    // processes: "Including non-PyTorch memory, this process has X memory in use." / "Process P has X memory in use."
    if (auto v = size_after(t, "this process has")) o.process_in_use = *v;
    for (size_t q = t.find("Process "); q != std::string_view::npos; q = t.find("Process ", q + 8)) {
      std::string_view s = t.substr(q + 8);
      int64_t pid = 0, bytes = 0;
      if (!take_int(s, pid)) continue;
      if (s.substr(0, 5) != " has ") continue;
      s.remove_prefix(5);
      if (!take_size(s, bytes)) continue;
      if (o.other_processes.size() < 32) o.other_processes.emplace_back(pid, bytes);
    }
    if (o.process_in_use < 0 && !o.other_processes.empty()) {
      // In containers the server's own PID does not match, so its usage shows as "Process N has ..."
      for (const auto& [pid, bytes] : o.other_processes) o.process_in_use = std::max(o.process_in_use, bytes);
    }
    if (auto v = size_before(t, ifind(t, " allowed;"))) o.allowed = *v;
    if (auto v = size_after(t, "of the allocated memory")) o.allocated = *v;
    if (icontains(t, "private pools")) {
      if (auto v = size_after(t, "by PyTorch, with")) o.private_pools = *v;
    }
    if (auto p2 = ifind(t, "is reserved by PyTorch but unallocated"); p2 != std::string_view::npos) {
      if (auto v = size_before(t, p2)) o.reserved_unallocated = *v;
    } else {
      o.truncated = true;
    }
  } else if (auto g = ifind(t, "(GPU "); g != std::string_view::npos) {
    // <= 2.0: "(GPU 0; 14.76 GiB total capacity; 13.58 GiB already allocated; 7.75 MiB free;
    //          [L allowed; ]13.86 GiB reserved in total by PyTorch)" — before ~1.5 "C cached)"
    o.form = "torch<=2.0";
    std::string_view s = t.substr(g + 5);
    int64_t d = 0;
    if (take_int(s, d)) o.device = static_cast<int>(d);
    if (auto v = size_before(t, ifind(t, "total capacity"))) o.total = *v;
    if (auto v = size_before(t, ifind(t, "already allocated"))) o.allocated = *v;
    if (auto v = size_before(t, ifind(t, " free;"))) o.free = *v;
    if (auto v = size_before(t, ifind(t, " allowed;"))) o.allowed = *v;
    if (auto v = size_before(t, ifind(t, "reserved in total by PyTorch"))) {
      if (o.allocated >= 0) o.reserved_unallocated = *v - o.allocated;
    } else if (auto c = size_before(t, ifind(t, " cached)"))) {
      o.reserved_unallocated = *c;
    } else {
      o.truncated = true;
    }
  } else {
    o.form = "other";
    if (auto d = int_after(t, "GPU ")) o.device = static_cast<int>(*d);
    o.truncated = tried != std::string_view::npos;
  }
  o.hint_expandable_segments = icontains(t, "expandable_segments");
}

}  // namespace

std::string_view stage_of_function(std::string_view frame) {
  // frame = "file.py:function"
  size_t colon = frame.rfind(':');
  std::string_view file = colon == std::string_view::npos ? std::string_view() : frame.substr(0, colon);
  std::string_view fn = colon == std::string_view::npos ? frame : frame.substr(colon + 1);
  auto in = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), fn) != names.end();
  };
  if (in({"capture", "capture_model", "_capture_cudagraphs", "capture_one_batch_size", "init_cuda_graphs",
          "init_device_graphs", "capture_cuda_graphs", "capture_graphs", "_capture_graph", "capture_end",
          "profile_cudagraph_memory", "init_piecewise_cuda_graphs",
          // TensorRT-LLM _torch/pyexecutor/model_engine.py
          "_capture_generation_cuda_graphs", "_capture_piecewise_cuda_graphs"}) ||
      file == "cuda_graph_runner.py" || file == "cuda_graph_setup.py" || file == "piecewise_cuda_graph_runner.py" ||
      file == "graphs.py" || file == "cuda_graph.py")
    return "cuda_graph";
  if (in({"init_memory_pool", "init_memory_pools", "alloc_memory_pool", "_create_buffers", "initialize_kv_cache",
          "initialize_kv_cache_tensors", "_allocate_kv_cache_tensors", "_reshape_kv_cache_tensors",
          "initialize_from_config", "_init_cache_engine", "_allocate_kv_cache", "allocate_kv_cache",
          "check_enough_kv_cache_memory", "get_kv_cache_configs", "get_kv_cache_config",
          // TensorRT-LLM _torch/pyexecutor/_util.py KvCacheCreator
          "_create_kv_cache_manager", "build_managers",
          // vLLM V0 llm_engine.py / worker.py
          "_initialize_kv_caches", "initialize_cache"}) ||
      file == "memory_pool.py" || file == "kv_cache_configurator.py" || file == "cache_engine.py")
    return "kv_pool";
  if (in({"load_model", "load_weights", "load_weight", "get_model", "_load_weights", "load_weights_and_postprocess",
          "weight_loader", "process_weights_after_loading", "load_single_module",
          // the model's constructor allocating its parameters (vLLM model_loader _initialize_model,
          // quantization methods' create_weights)
          "_initialize_model", "create_weights"}) ||
      file == "loader.py" || file == "default_loader.py" || file == "weight_utils.py")
    return "weights";
  if (in({"profile_run", "_dummy_run", "_dummy_sampler_run", "_dummy_pooler_run", "determine_available_memory",
          "determine_num_available_blocks", "kernel_warmup", "compile_or_warm_up_model", "warm_up_model",
          "_warmup", "warmup", "profile_max_num_token"}))
    return "warmup";
  if (in({"init_torch_distributed", "init_device", "init_distributed_environment", "initialize_model_parallel",
          "init_process_group", "init_worker_distributed_environment"}))
    return "init";
  if (in({"event_loop_normal", "event_loop_overlap", "run_batch", "forward_batch_generation", "execute_model",
          "step_with_batch_queue", "sample_tokens",
          // SGLang tp_worker_overlap_thread.py, and 2024 controller_single.py / tp_worker.py
          "forward_thread_func", "loop_for_forward", "exposed_step", "forward_decode_batch", "forward_fill_batch",
          "forward_prefill_batch",
          // serving calls: vLLM LLM.generate / AsyncLLMEngine, TensorRT-LLM ModelRunnerCpp.generate
          "generate", "generate_async", "engine_step", "run_engine_loop"}))
    return "runtime";
  return {};
}

namespace {

int stage_rank(std::string_view s) {
  if (s == "cuda_graph") return 6;
  if (s == "kv_pool") return 5;
  if (s == "weights") return 4;
  if (s == "warmup") return 3;
  if (s == "init") return 2;
  if (s == "runtime") return 1;
  return 0;
}

// The open traceback a line belongs to: same rank, else (unprefixed line) the latest one.
OpenTraceback* open_for(Ctx& c, const Line& l) {
  for (auto it = c.open_tb.rbegin(); it != c.open_tb.rend(); ++it) {
    const LogTraceback& tb = c.scan.tracebacks[it->index];
    if (l.rank.label.empty() || tb.rank == l.rank || tb.rank.label.empty()) {
      if (l.no - it->last_line > 400) return nullptr;  // stale
      return &*it;
    }
  }
  return nullptr;
}

OpenTraceback* open_traceback(Ctx& c, const Line& l) {
  if (c.scan.tracebacks.size() >= 32) return nullptr;
  LogTraceback tb;
  tb.line = l.no;
  tb.rank = l.rank;
  c.scan.tracebacks.push_back(std::move(tb));
  if (c.open_tb.size() >= 16) c.open_tb.erase(c.open_tb.begin());
  c.open_tb.push_back(OpenTraceback{c.scan.tracebacks.size() - 1, l.no});
  return &c.open_tb.back();
}

void close_traceback(Ctx& c, OpenTraceback* ot, const Line& l, std::string_view exc) {
  LogTraceback& tb = c.scan.tracebacks[ot->index];
  tb.end_line = l.no;
  tb.exception = std::string(exc);
  size_t idx = ot->index;
  std::erase_if(c.open_tb, [&](const OpenTraceback& o) { return o.index == idx; });
}

// SGLang's capture wrapper printed on the line(s) just before this one ("Capture cuda graph failed:"
// at the end of a wrapped line, the OOM text on the next): the OOM is the capture's. Upgrades that
// fatal event, which was read as a non-memory capture failure.
bool capture_failed_just_before(Ctx& c, const Line& l) {
  for (auto it = c.fatals.rbegin(); it != c.fatals.rend(); ++it) {
    if (l.no - it->line > 3) break;
    if (it->kind == "sglang_capture_failed" && it->line < l.no && (l.rank.label.empty() || it->rank.label.empty() || it->rank == l.rank)) {
      it->outcome = Outcome::OomGraph;
      return true;
    }
  }
  return false;
}

}  // namespace

bool continue_oom(Ctx& c, Pending& p) {
  // p.text is the report so far; the line just appended may complete it. The report is the
  // latest OOM of its line.
  for (auto it = c.scan.ooms.rbegin(); it != c.scan.ooms.rend(); ++it) {
    if (it->line != p.line) continue;
    LogOom o;
    o.line = it->line;
    o.rank = it->rank;
    o.in_capture_failed = it->in_capture_failed;
    parse_oom_message(p.text, o);
    if (o.total > 0 || o.request > 0) {
      if (it->device >= 0 && o.device < 0) o.device = it->device;
      *it = std::move(o);
    }
    return it->truncated;
  }
  return false;
}

void read_torch(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  std::string_view b = l.body;
  std::string_view t = l.text;

  // ---- tracebacks
  if (k[kTraceback]) {
    open_traceback(c, l);
    c.keep(l, "traceback");
  }
  if (k[kFrame]) {
    // File "/path/to/file.py", line 123, in func
    size_t p = ifind(t, "file \"");
    size_t q = p == std::string_view::npos ? p : t.find('"', p + 6);
    if (q != std::string_view::npos) {
      std::string_view path = t.substr(p + 6, q - p - 6);
      std::string_view file = path.substr(path.find_last_of("/\\") == std::string_view::npos ? 0 : path.find_last_of("/\\") + 1);
      std::string_view rest = t.substr(q + 1);
      if (auto in = rest.find(", in "); in != std::string_view::npos && rest.substr(0, 7) == ", line ") {
        std::string_view fn = rest.substr(in + 5);
        size_t e = 0;
        while (e < fn.size() && (is_ident(fn[e]) || fn[e] == '<' || fn[e] == '>' || fn[e] == '.')) ++e;
        fn = fn.substr(0, e);
        OpenTraceback* ot = open_for(c, l);
        if (!ot) ot = open_traceback(c, l);  // an excerpt that starts inside a traceback
        if (ot) {
          LogTraceback& tb = c.scan.tracebacks[ot->index];
          ot->last_line = l.no;
          std::string frame = std::string(file) + ":" + std::string(fn);
          std::string_view st = stage_of_function(frame);
          if (stage_rank(st) > stage_rank(tb.stage)) tb.stage = std::string(st);
          if (tb.functions.size() < 64) tb.functions.push_back(std::move(frame));
        }
        c.keep(l, "traceback.frame");
      }
    }
  } else if (k[kCodeCall]) {
    // A frame's source line ("    cuda_graph_memory_bytes = self.model_runner.capture_model()"),
    // or an IPython frame ("---> 49 self.gpu_cache = self._allocate_kv_cache(...)", "File
    // [path:64](link), in CacheEngine._allocate_kv_cache(self, ...)"): the function it calls is the
    // next frame's, which an excerpt may have cut. An indented or IPython line with no traceback
    // open is an excerpt that starts inside one.
    OpenTraceback* ot = open_for(c, l);
    // Indented source line: the body (message_body strips the prefix and the spaces after it) stood
    // behind two or more spaces in the line ("[multiproc_executor.py:470]     self.model_runner...").
    const bool indented = b.data() >= t.data() + 2 && b.data() <= t.data() + t.size() && b.data()[-1] == ' ' && b.data()[-2] == ' ';
    if (!ot && (t.find("---> ") != std::string_view::npos || b.substr(0, 2) == "  " || indented || ifind(t, "file [") != std::string_view::npos))
      ot = open_traceback(c, l);
    if (ot) {
      LogTraceback& tb = c.scan.tracebacks[ot->index];
      for (size_t p = b.find('('); p != std::string_view::npos; p = b.find('(', p + 1)) {
        size_t s = p;
        while (s > 0 && is_ident(b[s - 1])) --s;
        if (s == p) continue;
        std::string frame = ":" + std::string(b.substr(s, p - s));
        std::string_view st = stage_of_function(frame);
        if (stage_rank(st) > stage_rank(tb.stage)) tb.stage = std::string(st);
      }
      ot->last_line = l.no;
    }
  }

  // ---- exception lines ("ValueError: ...", "torch.OutOfMemoryError: ...")
  std::string_view exc;
  if (k[kErrorColon] || k[kExceptionColon]) {
    exc = exception_type(b);
    if (!exc.empty()) {
      if (OpenTraceback* ot = open_for(c, l)) close_traceback(c, ot, l, exc);
    }
  }

  // ---- PyTorch OOM report
  bool oom_line = false;
  if (k[kTriedToAllocate] || (k[kOutOfMemory] && !k[kVSamplerWarmup])) {
    bool real = k[kTriedToAllocate] || icontains(t, "OutOfMemoryError") || icontains(t, "CUDA out of memory") ||
                icontains(t, "HIP out of memory") || icontains(t, "XPU out of memory") ||
                ifind(b, "Out of memory") == 0;
    // TensorRT-LLM's C++ runtime: "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, ...): out of
    // memory (.../tllmBuffers.h:112)" (common/cudaUtils.h check()); TensorRT's "Cuda Runtime (out of memory)"
    // "CUDA driver error: out of memory" (expandable segments' cuMemCreate, c10 driver checks), and the
    // cudaMallocAsync backend's "Allocation on device N would exceed allowed memory. (out of memory)"
    bool raw_error = icontains(t, "CUDA error: out of memory") || icontains(t, "HIP error: out of memory") ||
                     icontains(t, "driver error: out of memory") || icontains(t, "would exceed allowed memory") ||
                     (icontains(t, "runtime error in") && icontains(t, "): out of memory")) || icontains(t, "Cuda Runtime (out of memory)");
    // NCCL "Cuda failure 'out of memory'" / "Cuda failure 2 'out of memory'" (NCCL >= 2.19)
    bool nccl = icontains(t, "failure 'out of memory'") || (k[kCudaFailure] && icontains(t, "'out of memory'"));
    if (real || raw_error || nccl) {
      LogOom o;
      o.line = l.no;
      o.rank = l.rank;
      if (raw_error) {
        o.form = "cuda_error";
        o.backend = icontains(t, "HIP error") ? "HIP" : "CUDA";
      } else if (nccl) {
        o.form = "nccl";
      } else {
        parse_oom_message(t, o);
      }
      o.in_capture_failed = k[kSglCaptureFailed] || k[kSglGraphFailed] || capture_failed_just_before(c, l);
      oom_line = true;
      // A report wrapped over several lines (a pasted log, an editor's wrap): the next lines complete it.
      if (o.truncated && (o.form == "other" || o.form == "torch2.1+") && c.pending.size() < 8)
        c.pending.push_back(Pending{kPendTorchOom, l.no, l.rank, std::string(t.substr(0, 2048)), 4});
      // vLLM 2026 appends this hint to OOMs raised during CUDA-graph capture (vllm-project/vllm
      // PR #57595, research/vllm-trtllm-llamacpp-memory.md §5.6): the wording names the stage.
      std::string_view st = icontains(t, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS") ? "cuda_graph" : "";
      // The OOM carried by a dead serving engine's message ("Engine loop is not running ...:
      // OutOfMemoryError('...')", vllm/engine/multiprocessing/__init__.py): a request was being served.
      if (k[kEngineDead]) st = "runtime";
      if (c.scan.ooms.size() < 64) {
        c.scan.ooms.push_back(std::move(o));
        c.fatal(l, "oom", st, std::nullopt, c.scan.ooms.back().device, static_cast<int64_t>(c.scan.ooms.size() - 1));
      }
      c.keep(l, "torch.oom");
    }
  }
  if (k[kCcaOom]) {
    // "[rank1]:[W906 ..] memory allocation failed with OOM on device 1 while trying to allocate N bytes (free: F, total: T)."
    LogOom o;
    o.line = l.no;
    o.rank = l.rank;
    o.form = "cca_warning";
    o.backend = "CUDA";
    if (auto d = int_after(t, "on device")) o.device = static_cast<int>(*d);
    if (auto v = size_after(t, "trying to allocate", 1)) o.request = *v;
    if (auto v = int_after(t, "free:")) o.free = *v;
    if (auto v = int_after(t, "total:")) o.total = *v;
    if (c.scan.ooms.size() < 64) {
      c.scan.ooms.push_back(std::move(o));
      c.fatal(l, "oom", "", std::nullopt, c.scan.ooms.back().device, static_cast<int64_t>(c.scan.ooms.size() - 1));
    }
    c.keep(l, "torch.allocator_oom");
    oom_line = true;
  }
  // Library and runtime allocation failures (cuBLAS reports a failed workspace allocation as
  // NOT_INITIALIZED, as SGLang's own capture hint says), NCCL's failed device allocations, and
  // TensorRT's allocator.
  const bool lib_alloc = (k[kCublasAlloc] && icontains(t, "CUBLAS_STATUS_NOT_INITIALIZED")) || k[kAllocErrorCode] ||
                         k[kNcclCalloc] || k[kTrtAllocFailed];
  if (lib_alloc && !oom_line) {
    LogOom o;
    o.line = l.no;
    o.rank = l.rank;
    o.form = k[kNcclCalloc] ? "nccl" : k[kTrtAllocFailed] ? "tensorrt" : "cublas";
    o.backend = icontains(t, "hip") ? "HIP" : "CUDA";
    if (k[kTrtAllocFailed]) {
      if (auto v = int_after(t, "requested amount of gpu memory (")) o.request = *v;
      else if (auto v2 = int_after(t, "requested size was ")) o.request = *v2;
    }
    if (k[kNcclCalloc]) {
      if (auto v = int_after(t, "calloc ")) o.request = *v;
      else if (auto v2 = int_after(t, "malloc ")) o.request = *v2;
    }
    o.in_capture_failed = k[kSglCaptureFailed] || k[kSglGraphFailed] || capture_failed_just_before(c, l);
    if (c.scan.ooms.size() < 64) {
      c.scan.ooms.push_back(std::move(o));
      c.fatal(l, "oom", "", std::nullopt, -1, static_cast<int64_t>(c.scan.ooms.size() - 1));
    }
    c.keep(l, "torch.library_alloc_failed");
    oom_line = true;
  }

  // ---- NCCL and CUDA errors
  if (k[kNcclError] || k[kNcclUnhandled] || k[kNcclSystem] || k[kNcclInternal] || k[kNcclInvalid] || k[kNcclRemote] ||
      k[kWatchdog]) {
    if (!oom_line) {
      c.error(l, "nccl");
      c.keep(l, "nccl.error");
      c.fatal(l, "generic", "", Outcome::OtherError);
    }
  } else if (k[kNcclWarn]) {
    c.keep(l, "nccl.warn");
  }
  if (k[kCudaErrorColon] && !oom_line) {
    auto& e = c.error(l, "cuda_error");
    e.exception = std::string(exc);
    c.keep(l, "cuda.error");
    c.fatal(l, "generic", "", Outcome::OtherError);
  }

  // ---- a build tool's error line ("collect2: error: ld returned 1 exit status", "foo.cu(12): error: ..."):
  // Triton / Inductor / FlashInfer JIT builds fail this way, a failure that is not a memory one
  if (exc.empty() && !oom_line && k[kErrorColon] && ifind(b, ": error: ") != std::string_view::npos &&
      ifind(b, "out of memory") == std::string_view::npos) {
    c.error(l, "tool_error");
    c.keep(l, "error.tool");
  }

  // ---- any other exception line
  if (!exc.empty() && !oom_line && !k[kCudaErrorColon]) {
    bool specific = k[kSglNotEnough] || k[kSglNoKv] || k[kSglCaptureFailed] || k[kSglGraphFailed] || k[kSglMambaNoMem] || k[kSglPoolTooSmall] ||
                    k[kVToServe] || k[kVNoBlocks] || k[kVFreeOnDevice] || k[kVSamplerWarmup] || k[kVMamba] || k[kVLoadFailed] ||
                    k[kVAutoFit] || k[kVStoredInKv] || k[kContextOverDerived] || k[kVProfilingError] || k[kTExecutorOom];
    // A line a reader recorded (its error is this line's): the exception type is added to it.
    if (specific && !c.scan.errors.empty() && c.scan.errors.back().line == l.no) {
      c.scan.errors.back().exception = std::string(exc);
    } else if (k[kMemoryWords] && !icontains(b, "not an out-of-memory")) {
      // An exception whose own words say memory ran out, in a form no reader knows (a wrapper's
      // "RuntimeError: Not enough memory to ...", "insufficient GPU memory"): an OOM nothing else
      // describes, placed like any other (its traceback, else the stage in progress).
      LogOom o;
      o.line = l.no;
      o.rank = l.rank;
      o.form = "other";
      if (c.scan.ooms.size() < 64) {
        c.scan.ooms.push_back(std::move(o));
        c.fatal(l, "oom", "", std::nullopt, -1, static_cast<int64_t>(c.scan.ooms.size() - 1));
      }
      auto& e = c.error(l, "memory_words");
      e.exception = std::string(exc);
      c.keep(l, "error.memory_words");
    } else {
      auto& e = c.error(l, "exception");
      e.exception = std::string(exc);
      c.keep(l, "exception");
      c.fatal(l, "generic", "", Outcome::OtherError);
    }
  }
}

}  // namespace headroom::logscan_detail
