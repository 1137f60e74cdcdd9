// vLLM startup lines, V1 and V0 (formats from vllm-project/vllm vllm/v1/worker/gpu_worker.py,
// gpu_model_runner.py, v1/core/kv_cache_utils.py, utils/mem_utils.py, V0 worker/worker.py and
// executor_base.py; table of versions in research/vllm-trtllm-llamacpp-memory.md §1.2, §5):
//   Model loading took X GiB [memory ]and S seconds            (V0: Loading model weights took X GB)
//   Initial free memory: X GiB; Requested memory: u (util), R GiB
//   Initial free memory X GiB, reserved Y GiB memory for KV Cache as specified by kv_cache_memory_bytes ...
//   Free memory after profiling: X GiB (total), Y GiB (within requested)
//   Memory profiling takes S seconds. Total non KV cache memory: X; torch peak memory increase: A;
//       non-torch forward increase memory: N; weights memory: W.
//   Available KV cache memory: X GiB
//   GPU KV cache size: N tokens[, Maximum concurrency for L tokens per request: Xx]
//   Maximum concurrency for L tokens per request: Xx
//   Estimated CUDA graph memory: X GiB total ; CUDA graph pool memory: X GiB (actual), Y GiB (estimated), ...
//   Graph capturing finished in S secs, took X GiB
//   Free memory on device (F/T GiB) on startup. Desired GPU memory utilization is (u, R GiB). Actual usage is
//       W GiB for weight, A GiB for peak activation, N GiB for non-torch memory, and G GiB for CUDAGraph memory
//       (later: W GiB for consumed memory (weights + non-torch), ...). ... Current kv cache memory in use is K GiB.
//   V0: the current vLLM instance can use total_gpu_memory (T GiB) x gpu_memory_utilization (u) = R GiB
//       model weights take W GiB; non_torch_memory takes N GiB; PyTorch activation peak memory takes A GiB;
//       the rest of the memory reserved for KV Cache is K GiB.
//       Memory profiling results: total_gpu_memory=T initial_memory_usage=.. peak_torch_memory=..
//       non_torch_memory=N kv_cache_size=K gpu_memory_utilization=u
//       # GPU blocks: N, # CPU blocks: M   /  # cuda blocks: N, # CPU blocks: M
//   Error in memory profiling. Initial free memory X GiB, current free memory Y GiB. ...   (an assertion)
// Errors: see LogError kinds and docs/doctor-messages.md.
#include "doctor/log_parse.h"
#include "headroom/units.h"

namespace headroom::logscan_detail {

namespace {

enum PendingKind { kPendToServe = 1, kPendFreeStartup = 2, kPendSampler = 3 };

// Parses the pieces of "To serve at least one request with the model's max seq len (L), (X GiB KV cache
// is needed, which is larger than the available KV cache memory (Y GiB). Based on the available memory,
// the estimated maximum model length is M." (possibly over several lines).
void parse_to_serve(Ctx& c, LogError& e, std::string_view t, const Line& l) {
  auto& f = c.fig(l.rank);
  if (auto v = int_after(t, "max seq len (")) {
    e.value2 = *v;
    set_first(f.context_len, *v, l.no);
  }
  if (auto p = ifind(t, "KV cache is needed"); p != std::string_view::npos) {
    // the number before it: "(4.54 GiB KV cache is needed" / "23.25 GiB KV cache is needed"
    size_t s = p;
    while (s > 0 && t[s - 1] != '(' && t[s - 1] != ',' && t[s - 1] != '\n' && p - s < 24) --s;
    std::string_view num = t.substr(s, p - s);
    int64_t bytes = 0;
    if (take_size(num, bytes, GiB)) set_first(f.kv_needed, bytes, l.no);
  }
  if (auto v = size_after(t, "available KV cache memory (", GiB)) set_first(f.kv_bytes, *v, l.no);
  if (auto v = int_after(t, "estimated maximum model length is")) {
    e.value = *v;
    set_first(f.estimated_max_model_len, *v, l.no);
  }
}

void parse_free_startup(Ctx& c, LogError* e, std::string_view t, const Line& l) {
  auto& f = c.fig(l.rank);
  if (auto a = after(t, "free memory on device")) {
    std::string_view s = *a;
    if (auto p = s.find('('); p != std::string_view::npos && p < 24) {
      s.remove_prefix(p + 1);
      double free_gib = 0, total_gib = 0;
      if (take_number(s, free_gib) && !s.empty() && s.front() == '/') {
        s.remove_prefix(1);
        if (take_number(s, total_gib)) {
          set_first(f.init_avail, to_bytes(free_gib, GiB), l.no);
          set_first(f.total, to_bytes(total_gib, GiB), l.no);
        }
      }
    }
  }
  // "(0.9, 19.84 GiB)" after "utilization"
  if (auto a = after(t, "memory utilization")) {
    std::string_view s = *a;
    if (auto p = s.find('('); p != std::string_view::npos && p < 8) {
      s.remove_prefix(p + 1);
      double u = 0;
      if (take_number(s, u) && !s.empty() && s.front() == ',') {
        s.remove_prefix(1);
        int64_t r = 0;
        set_first(f.gpu_memory_utilization, u, l.no);
        if (e) e->fraction = u;
        if (take_size(s, r, GiB)) set_first(f.requested, r, l.no);
      }
    }
  }
}

}  // namespace

void continue_pending(Ctx& c, const Line& l) {
  for (auto& p : c.pending) {
    if (p.left <= 0) continue;
    // A wrapped OOM report ends where another record starts: a new report, a traceback, another rank.
    if (p.kind == kPendTorchOom && (l.kw[kTriedToAllocate] || l.kw[kTraceback] || l.kw[kFrame] || l.kw[kOutOfMemory] ||
                                    (!l.rank.label.empty() && !(l.rank == p.rank)))) {
      p.left = 0;
      continue;
    }
    --p.left;
    if (p.text.size() < 4096) {
      p.text += ' ';
      p.text.append(l.body.substr(0, 1024));
    }
    Line pl = l;
    pl.no = p.line;
    pl.rank = p.rank;
    switch (p.kind) {
      case kPendToServe: {
        auto& e = c.error(pl, "vllm_max_seq_len");
        parse_to_serve(c, e, p.text, pl);
        if (e.value) p.left = 0;
        break;
      }
      case kPendFreeStartup: {
        auto& e = c.error(pl, "vllm_free_memory_startup");
        parse_free_startup(c, &e, p.text, pl);
        if (e.fraction) p.left = 0;
        break;
      }
      case kPendSampler: {
        auto& e = c.error(pl, "vllm_sampler_warmup_oom");
        if (auto v = int_after(p.text, "warming up sampler with")) e.value = *v;
        p.left = 0;
        break;
      }
      case kPendTorchOom:
        if (!continue_oom(c, p)) p.left = 0;
        break;
      default: p.left = 0;
    }
  }
  std::erase_if(c.pending, [](const Pending& p) { return p.left <= 0; });
}

void read_vllm(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  std::string_view b = l.body;
  auto pend = [&](int kind) {
    if (c.pending.size() < 8) c.pending.push_back(Pending{kind, l.no, l.rank, std::string(b.substr(0, 2048)), 3});
  };

  if (k[kVUsingV2Runner]) c.vllm_runner = 2;
  if (k[kVModelLoading] || k[kVLoadingWeights]) {
    auto v = k[kVModelLoading] ? size_after(b, "model loading took", GiB) : size_after(b, "loading model weights took", GiB);
    if (v) {
      set_first(c.fig(l.rank).weights, *v, l.no);
      // V0 says "Loading model weights took" from its own model_runner.py; "Model loading took"
      // from model_runner.py is Model Runner V2's.
      if (k[kVModelLoading] && c.vllm_runner == 0) {
        if (l.text.find("gpu_model_runner.py") != std::string_view::npos) c.vllm_runner = 1;
        else if (l.text.find("[model_runner.py") != std::string_view::npos) c.vllm_runner = 2;
      }
      c.keep(l, "vllm.model_loading");
      c.stage(l, "warmup");
      c.score_vllm += 3;
    }
  }
  if (k[kVInitialFree]) {
    auto& f = c.fig(l.rank);
    if (auto v = size_after(b, "initial free memory", GiB); v || (v = size_after(b, "initial free memory:", GiB))) {
      set_first(f.init_avail, *v, l.no);
      if (auto a = after(b, "requested memory:")) {
        std::string_view s = *a;
        double u = 0;
        if (take_number(s, u)) {
          set_first(f.gpu_memory_utilization, u, l.no);
          if (auto r = after(s, "(util),")) {
            int64_t bytes = 0;
            std::string_view rs = *r;
            if (take_size(rs, bytes, GiB)) set_first(f.requested, bytes, l.no);
          }
        }
      }
      if (k[kVReservedKv]) {
        // vllm/v1/worker/gpu_worker.py determine_available_memory(): --kv-cache-memory-bytes
        // given, profiling skipped; the KV budget is decided here (kv_pool stage), and the
        // engine's next step is get_kv_cache_configs() with its max-model-len check.
        if (auto r = size_after(b, "reserved", GiB)) set_first(f.kv_bytes, *r, l.no);
        c.stage(l, "kv_pool");
      }
      c.keep(l, k[kVReservedKv] ? "vllm.kv_cache_memory_bytes" : "vllm.initial_free_memory");
      c.score_vllm += 2;
    }
  }
  if (k[kVFreeAfter]) {
    c.keep(l, "vllm.free_after_profiling");
    c.score_vllm += 1;
  }
  if (k[kVProfTakes]) {
    auto& f = c.fig(l.rank);
    if (auto v = size_after(b, "torch peak memory increase:", GiB)) set_first(f.activation, *v, l.no);
    if (auto v = size_after(b, "non-torch forward increase memory:", GiB)) set_first(f.non_torch, *v, l.no);
    if (auto v = size_after(b, "weights memory:", GiB)) set_first(f.weights, *v, l.no);
    c.keep(l, "vllm.memory_profiling");
    c.score_vllm += 2;
  }
  if (k[kVInstanceCanUse]) {
    auto& f = c.fig(l.rank);
    if (auto v = size_after(b, "total_gpu_memory (", GiB)) set_first(f.total, *v, l.no);
    if (auto v = num_after(b, "gpu_memory_utilization (")) set_first(f.gpu_memory_utilization, *v, l.no);
    if (auto v = size_after(b, ") =", GiB)) set_first(f.requested, *v, l.no);
    c.keep(l, "vllm.v0_budget");
    c.score_vllm += 2;
    // V0 worker.py's breakdown inside memory_profiling (PR #10511, 0.6.5) until V0 left (0.11);
    // V0 was the default engine up to 0.7.3, whose rules the era table applies to any V0 log.
    c.version_hint("0.7.3", "V0's 'the current vLLM instance can use total_gpu_memory' breakdown (0.6.5 .. 0.7.3 as the default engine)", l.no);
  }
  if (k[kVWeightsTake]) {
    auto& f = c.fig(l.rank);
    if (auto v = size_after(b, "model weights take", GiB)) set_first(f.weights, *v, l.no);
    if (auto v = size_after(b, "non_torch_memory takes", GiB)) set_first(f.non_torch, *v, l.no);
    if (auto v = size_after(b, "activation peak memory takes", GiB)) set_first(f.activation, *v, l.no);
    if (auto v = size_after(b, "reserved for KV Cache is", GiB)) {
      set_first(f.kv_bytes, *v, l.no);
      if (*v <= 0) c.fatal(l, "vllm_no_cache_blocks", "kv_pool", Outcome::RefusedKv);
    }
    c.keep(l, "vllm.v0_breakdown");
    c.stage(l, "kv_pool");
    c.score_vllm += 2;
  }
  if (k[kVProfResults]) {
    auto& f = c.fig(l.rank);
    if (auto v = size_after(b, "total_gpu_memory=", GiB)) set_first(f.total, *v, l.no);
    if (auto v = size_after(b, "non_torch_memory=", GiB)) set_first(f.non_torch, *v, l.no);
    if (auto v = size_after(b, "kv_cache_size=", GiB)) set_first(f.kv_bytes, *v, l.no);
    if (auto v = num_after(b, "gpu_memory_utilization=")) set_first(f.gpu_memory_utilization, *v, l.no);
    c.keep(l, "vllm.v0_profiling_results");
    // The format V0 worker.py printed before PR #10511 replaced it (first release 0.6.5):
    // non_torch_memory there is every non-torch byte in use, the CUDA context included.
    if (b.find("initial_memory_usage=") != std::string_view::npos)
      c.version_hint("0.6.4", "V0's 'Memory profiling results: ... initial_memory_usage=' line (before PR #10511, 0.6.5)", l.no);
    c.stage(l, "kv_pool");
    c.score_vllm += 2;
  }
  if (k[kVAvailKv]) {
    // "Available KV cache memory: X GiB" (the worker) — the error form "(X GiB)" is parsed with its error.
    if (auto v = size_after(b, "available kv cache memory:", GiB)) {
      set_first(c.fig(l.rank).kv_bytes, *v, l.no);
      c.keep(l, "vllm.available_kv_cache_memory");
      c.stage(l, "kv_pool");
      c.score_vllm += 3;
      if (*v <= 0) c.fatal(l, "vllm_no_cache_blocks", "kv_pool", Outcome::RefusedKv);
    } else if (!k[kVToServe] && c.pending.empty()) {
      if (auto v2 = size_after(b, "available kv cache memory (", GiB)) {
        set_first(c.fig(l.rank).kv_bytes, *v2, l.no);
        c.keep(l, "vllm.available_kv_cache_memory");
      }
    }
  }
  if (k[kVKvSize]) {
    if (auto v = int_after(b, "gpu kv cache size:", true)) {
      set_first(c.fig(l.rank).kv_tokens, *v, l.no);
      c.keep(l, "vllm.gpu_kv_cache_size");
      c.stage(l, "kv_pool");
      c.score_vllm += 3;
    }
  }
  if (k[kVConcurrency]) {
    auto& f = c.fig(l.rank);
    if (auto v = int_after(b, "maximum concurrency for", true)) set_first(f.context_len, *v, l.no);
    if (auto v = num_after(b, "tokens per request:")) set_first(f.max_concurrency, *v, l.no);
    c.keep(l, "vllm.maximum_concurrency");
    c.score_vllm += 2;
  }
  if (k[kVGpuBlocks] || k[kVCudaBlocks]) {
    c.keep(l, "vllm.v0_blocks");
    c.score_vllm += 1;
    // V0 llm_engine.py _initialize_kv_caches logs the block count, then initialize_cache checks
    // and allocates the cache (worker.py raise_if_cache_size_invalid, _init_cache_engine).
    c.stage(l, "kv_pool");
    auto n = k[kVGpuBlocks] ? int_after(b, "# gpu blocks:") : int_after(b, "# cuda blocks:");
    if (n && *n <= 0) c.fatal(l, "vllm_no_cache_blocks", "kv_pool", Outcome::RefusedKv);
  }
  if (k[kVGraphEstimate]) {
    if (auto v = size_after(b, "estimated cuda graph memory:", GiB)) {
      set_first(c.fig(l.rank).graph_estimate, *v, l.no);
      c.keep(l, "vllm.estimated_cuda_graph_memory");
      c.score_vllm += 2;
    }
  }
  if (k[kVProfGraph]) {
    c.keep(l, "vllm.profiling_cuda_graph_memory");
    c.stage(l, "cuda_graph", true);
    c.score_vllm += 2;
  }
  if (k[kVGraphPool]) {
    auto& f = c.fig(l.rank);
    if (auto v = size_after(b, "cuda graph pool memory:", GiB)) set_first(f.graph_bytes, *v, l.no);
    if (auto a = after(b, "(actual),")) {
      std::string_view s = *a;
      int64_t e = 0;
      if (take_size(s, e, GiB)) set_first(f.graph_estimate, e, l.no);
    }
    c.keep(l, "vllm.cuda_graph_pool_memory");
    c.score_vllm += 2;
  }
  if (k[kVCapturingGraphs] || k[kVCapturingCudagraphs]) {
    c.keep(l, "vllm.capturing_cuda_graphs");
    c.stage(l, "cuda_graph", true);
    c.score_vllm += 1;
  }
  if (k[kVGraphFinished]) {
    if (auto v = size_after(b, "took", GiB)) set_first(c.fig(l.rank).graph_bytes, *v, l.no);
    c.keep(l, "vllm.graph_capturing_finished");
    c.stage(l, "warmup");
    c.score_vllm += 3;
  }
  if (k[kVFreeOnDevice]) {
    auto& f = c.fig(l.rank);
    bool refusal = icontains(b, "is less than desired");
    LogError* e = nullptr;
    if (refusal) {
      e = &c.error(l, "vllm_free_memory_startup");
      e->exception = icontains(b, "ValueError") ? "ValueError" : "";
      c.fatal(l, "vllm_free_memory_startup", "init", Outcome::OtherError);
      if (!icontains(b, "GiB)")) pend(kPendFreeStartup);
    }
    parse_free_startup(c, e, b, l);
    // "Actual usage is W GiB for weight, A GiB for peak activation, N GiB for non-torch memory, and G GiB for CUDAGraph memory"
    if (auto a = after(b, "actual usage is")) {
      std::string_view s = *a;
      for (int i = 0; i < 4; ++i) {
        int64_t bytes = 0;
        if (!take_size(s, bytes, GiB)) break;
        skip_spaces(s);
        if (s.substr(0, 4) != "for ") break;
        s.remove_prefix(4);
        if (s.substr(0, 6) == "weight") set_first(f.weights, bytes, l.no);
        else if (s.substr(0, 8) == "consumed") set_first(f.consumed, bytes, l.no);
        else if (s.substr(0, 4) == "peak") set_first(f.activation, bytes, l.no);
        else if (s.substr(0, 9) == "non-torch") set_first(f.non_torch, bytes, l.no);
        else if (s.substr(0, 9) == "CUDAGraph") set_first(f.graph_bytes, bytes, l.no);
        size_t comma = s.find(", ");
        if (comma == std::string_view::npos) break;
        s.remove_prefix(comma + 2);
        if (s.substr(0, 4) == "and ") s.remove_prefix(4);
      }
    }
    if (auto v = size_after(b, "current kv cache memory in use is", 1)) set_first(f.kv_bytes, *v, l.no);
    c.keep(l, refusal ? "vllm.free_memory_on_startup_refusal" : "vllm.memory_summary");
    if (!refusal) c.stage(l, "warmup");
    c.score_vllm += 3;
  }
  if (k[kContextOverDerived]) {
    // vLLM (config/model.py _get_and_verify_max_len): "User-specified max_model_len (L) is greater than
    // the derived max_model_len (max_position_embeddings=D or model_max_length=None ...)"; SGLang
    // (configs/model_config.py): "User-specified context_length (L) is greater than the derived
    // context_length (D)". value = D (the limit), value2 = L. Both are config errors, not memory.
    auto& e = c.error(l, "context_over_derived");
    e.exception = "ValueError";
    if (auto v = int_after(b, "max_model_len (")) e.value2 = *v;
    else if (auto v2 = int_after(b, "context_length (")) e.value2 = *v2;
    if (auto d = after(b, "derived ")) {
      std::string_view s = *d;
      size_t open = s.find('(');
      if (open != std::string_view::npos) {
        s.remove_prefix(open + 1);
        size_t eq = s.find('=');
        size_t close = s.find(')');
        if (eq != std::string_view::npos && (close == std::string_view::npos || eq < close)) s.remove_prefix(eq + 1);
        while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
        double v = 0;
        if (take_number(s, v) && v >= 1 && v < 1e13) e.value = static_cast<int64_t>(v);
      }
    }
    c.keep(l, "error.context_over_derived");
    c.fatal(l, "context_over_derived", "init", Outcome::OtherError);
  }
  if (k[kVToServe]) {
    auto& e = c.error(l, "vllm_max_seq_len");
    if (icontains(b, "ValueError")) e.exception = "ValueError";
    parse_to_serve(c, e, b, l);
    if (!e.value) pend(kPendToServe);
    c.keep(l, "vllm.max_seq_len_refusal");
    c.fatal(l, "vllm_max_seq_len", "kv_pool", Outcome::RefusedKv);
    c.score_vllm += 3;
  } else if ((k[kVKvNeeded] || k[kVEstMaxLen]) && c.pending.empty()) {
    // a continuation line seen without its first line
    auto& e = c.error(l, "vllm_max_seq_len");
    parse_to_serve(c, e, b, l);
    c.keep(l, "vllm.max_seq_len_refusal");
    c.fatal(l, "vllm_max_seq_len", "kv_pool", Outcome::RefusedKv);
  }
  if (k[kVStoredInKv]) {
    // V0: "The model's max seq len (L) is larger than the maximum number of tokens that can be stored in KV cache (N)."
    auto& e = c.error(l, "vllm_max_seq_len");
    auto& f = c.fig(l.rank);
    if (auto v = int_after(b, "max seq len (")) {
      e.value2 = *v;
      set_first(f.context_len, *v, l.no);
    }
    if (auto v = int_after(b, "stored in kv cache (")) {
      e.value = *v;
      set_first(f.kv_tokens, *v, l.no);
    }
    c.keep(l, "vllm.max_seq_len_refusal");
    c.fatal(l, "vllm_max_seq_len", "kv_pool", Outcome::RefusedKv);
    c.score_vllm += 2;
  }
  if (k[kVNoBlocks]) {
    c.error(l, "vllm_no_cache_blocks");
    c.keep(l, "vllm.no_available_memory_for_cache_blocks");
    c.fatal(l, "vllm_no_cache_blocks", "kv_pool", Outcome::RefusedKv);
    c.score_vllm += 3;
  }
  if (k[kVSamplerWarmup]) {
    auto& e = c.error(l, "vllm_sampler_warmup_oom");
    if (auto v = int_after(b, "warming up sampler with")) e.value = *v;
    else pend(kPendSampler);
    c.keep(l, "vllm.sampler_warmup_oom");
    c.fatal(l, "vllm_sampler_warmup_oom", "warmup", Outcome::OomWarmup);
    c.score_vllm += 3;
  }
  if (k[kVMamba] && icontains(b, "exceeds available")) {
    auto& e = c.error(l, "vllm_mamba_blocks");
    if (auto v = int_after(b, "max_num_seqs (")) e.value2 = *v;
    if (auto v = int_after(b, "mamba cache blocks (")) e.value = *v;
    c.keep(l, "vllm.mamba_cache_blocks");
    c.fatal(l, "vllm_mamba_blocks", "kv_pool", Outcome::OtherError);
    c.score_vllm += 2;
  }
  if (k[kVProfilingError]) {
    // determine_available_memory's assertion: the device's free memory grew while vLLM profiled, so
    // another process released memory meanwhile and the KV budget cannot be computed (kv_pool).
    auto& e = c.error(l, "vllm_profiling_error");
    e.exception = "AssertionError";
    auto& f = c.fig(l.rank);
    if (auto v = size_after(b, "initial free memory", GiB)) set_first(f.init_avail, *v, l.no);
    c.keep(l, "vllm.memory_profiling_error");
    c.fatal(l, "vllm_profiling_error", "kv_pool", Outcome::OtherError);
    c.score_vllm += 2;
  }
  if (k[kVLoadFailed]) {
    c.error(l, "vllm_load_failed");
    c.keep(l, "vllm.load_failed");
    c.fatal(l, "vllm_load_failed", "weights", Outcome::OomWeights);
    c.score_vllm += 3;
  }
  if (k[kVErrorLevel] && c.scan.errors.empty() && !l.rank.label.empty() && l.text.size() > l.body.size()) {
    // A worker's line at ERROR level (vllm/logger.py format "(Proc pid=N) ERROR MM-DD hh:mm:ss
    // [file:line] ..."), e.g. a message cut by the excerpt: the first one marks that something
    // failed there, even when its text does not say what.
    std::string_view head = l.text.substr(0, l.text.size() - l.body.size());
    if (head.find(") ERROR ") != std::string_view::npos) {
      c.error(l, "error_line");
      c.keep(l, "error.vllm_error_line");
    }
  }
  if (k[kVEngineFailed]) {
    c.error(l, "vllm_engine_failed");
    c.keep(l, "vllm.engine_core_failed");
    c.fatal(l, "generic", "", Outcome::OtherError);
    c.score_vllm += 2;
  }
  if (k[kVAutoFit]) {
    if (icontains(b, "cannot auto-fit")) {
      c.error(l, "vllm_autofit_failed");
      c.fatal(l, "vllm_autofit_failed", "kv_pool", Outcome::RefusedKv);
    } else if (auto v = int_after(b, " to ")) {
      set_first(c.fig(l.rank).context_len, *v, l.no);
    }
    c.keep(l, "vllm.auto_fit");
    c.score_vllm += 2;
  }
  if (k[kVCompileTakes]) {
    // vllm/compilation/monitor.py: printed when the first forward (the profile run of
    // determine_available_memory, after the weights) has compiled the model: that run is reached.
    c.keep(l, "vllm.compile_took");
    c.stage(l, "warmup");
    c.score_vllm += 1;
  }
  if (k[kVInitEngine] || k[kVStartupComplete]) {
    c.keep(l, k[kVInitEngine] ? "vllm.init_engine_took" : "vllm.startup_complete");
    c.stage(l, "ready");
    c.score_vllm += 1;
  }
  if (k[kMarkVllmPath] || k[kMarkEngineCore] || k[kMarkVllmWorker]) c.score_vllm += 1;
}

}  // namespace headroom::logscan_detail
