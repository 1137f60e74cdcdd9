// The failing stage's cause, in a stable code, with the arithmetic from the log's own numbers
// and what will not help. Causes (CONTRACT doctor): static_fraction_too_high,
// static_fraction_too_low, weights_do_not_fit, graph_capture_headroom, activation_peak,
// kv_too_small_for_context, state_cache_too_small (vLLM's Mamba block count), fragmentation, other_process,
// not_oom.
#include <algorithm>
#include <fmt/format.h>

#include "doctor/doctor_internal.h"
#include "headroom/units.h"

namespace headroom {

const LogOom* first_oom(const LogScan& scan) {
  for (const auto& o : scan.ooms)
    if (scan.failure_line == 0 || o.line >= scan.failure_line - 200) return &o;
  return scan.ooms.empty() ? nullptr : &scan.ooms.front();
}

namespace {
std::optional<double> flag_double(const LogScan& scan, const std::optional<Deployment>& dep, const char* name) {
  if (dep)
    if (const std::string* v = dep->flag(name)) try { return std::stod(*v); } catch (...) {}
  auto it = scan.flags.find(name);
  if (it != scan.flags.end()) try { return std::stod(it->second); } catch (...) {}
  return std::nullopt;
}
const LogError* find_error(const LogScan& scan, std::string_view kind) {
  for (const auto& e : scan.errors) if (e.kind == kind) return &e;
  return nullptr;
}
// vLLM's two refusals about memory another process holds or releases: the startup check (the
// budget u x total exceeds the free memory, gpu_worker.py init_device) and the profiling assertion
// (free memory grew while vLLM profiled, determine_available_memory). Neither is an OOM, both are
// about memory: cause other_process. The startup check's fix is the utilization that the free
// memory covers, from the message's own figures (log_fixes: log_budget_fix).
void other_process_refusal(const LogScan& scan, const LogError& e, const std::string& knob, Diagnosis& dx) {
  const auto& s = scan.summary;
  dx.cause = Cause::OtherProcess;
  if (e.kind == "vllm_profiling_error") {
    dx.explanation = fmt::format(
        "vLLM stopped while sizing the KV cache (line {}): the GPU had more free memory after its profile run than before it, "
        "which happens when another process on the same GPU releases memory while vLLM measures. The KV budget is computed "
        "from that difference, so vLLM refuses. Start vLLM when no other process is loading or unloading on the GPU (or "
        "isolate it on its own GPU).",
        e.line);
    dx.will_not_help.push_back(fmt::format("changing {}: the measurement, not the budget, failed", knob));
    return;
  }
  dx.explanation = fmt::format(
      "vLLM refused at start-up (line {}): the memory it was asked to budget ({} x the device{}) is more than the GPU had free{}, "
      "so another process (or a previous instance) holds part of it. Free that memory, or lower {} to what is free.",
      e.line, knob, s.requested ? fmt::format(" = {}", doctor_gib(s.requested->value)) : std::string(),
      s.init_avail ? fmt::format(" ({})", doctor_gib(s.init_avail->value)) : std::string(), knob);
  if (s.init_avail && s.total && s.requested)
    dx.arithmetic.push_back(fmt::format("free at start {} of {}; asked for {}: {} short", doctor_gib(s.init_avail->value),
                                        doctor_gib(s.total->value), doctor_gib(s.requested->value),
                                        doctor_gib(s.requested->value - s.init_avail->value)));
  dx.will_not_help.push_back(fmt::format("raising {}: it asks for even more than is free", knob));
  dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: nothing was allocated yet; vLLM refused by arithmetic");
}

// vLLM's hybrid-model check (config/compilation.py resolve_cudagraph_mode_and_sizes, 0.20 - 2026):
// "max_num_seqs (N) exceeds available Mamba cache blocks (M). Each decode sequence requires one Mamba
// cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most M or increase
// gpu_memory_utilization." The blocks are what the memory budget left for the recurrent-state pool:
// a capacity refusal about memory, not an allocation that failed (the corpus counts it other_error).
// Cause state_cache_too_small; the fix is the engine's own bound M, which costs nothing but
// concurrency above M; raising the utilization buys blocks only in proportion to the budget.
void mamba_blocks_refusal(const LogError& e, const std::string& knob, Diagnosis& dx) {
  dx.cause = Cause::StateCacheTooSmall;
  dx.explanation = fmt::format(
      "vLLM refused at start-up (line {}): this hybrid (Mamba / linear-attention) model keeps one state block per running sequence, and the "
      "memory budget left {} blocks for {} sequences (--max-num-seqs). Nothing ran out of memory while allocating; the pool that memory "
      "bought holds fewer sequences than asked. Lower --max-num-seqs to the block count (the engine's own bound), or give the pool more "
      "memory ({}).",
      e.line, e.value ? std::to_string(*e.value) : std::string("fewer"), e.value2 ? std::to_string(*e.value2) : std::string("more"), knob);
  if (e.value && e.value2) dx.arithmetic.push_back(fmt::format("--max-num-seqs {} > {} Mamba cache blocks", *e.value2, *e.value));
  if (e.value && *e.value > 0) {
    dx.fixes.push_back({"--max-num-seqs", std::to_string(*e.value),
                        "the number of state blocks the budget holds, as vLLM printed it: the largest value that starts (costs concurrency above it only)"});
    if (e.value2) dx.fixes.back().from = std::to_string(*e.value2);
  }
  dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: nothing failed to allocate; vLLM refused by arithmetic");
}

}  // namespace

void classify(const LogScan& scan, const std::optional<Deployment>& dep, Diagnosis& dx) {
  const LogOom* oom = first_oom(scan);
  const bool sglang = dx.engine == "sglang";
  const std::string knob = sglang ? "--mem-fraction-static" : dx.engine == "vllm" ? "--gpu-memory-utilization" : "free_gpu_memory_fraction";
  const std::optional<double> frac = flag_double(scan, dep, knob.c_str());
  const auto& s = scan.summary;
  auto A = [&](std::string line) { dx.arithmetic.push_back(std::move(line)); };

  // The numbers of the OOM report, as the allocator printed them.
  if (oom && oom->total > 0) {
    A(fmt::format("GPU {}: total {}; {} free when {} was requested", oom->device, doctor_gib(oom->total), doctor_gib(oom->free),
                  doctor_gib(oom->request)));
    if (oom->allocated >= 0 && oom->process_in_use >= 0) {
      int64_t reserved = oom->allocated + std::max<int64_t>(0, oom->reserved_unallocated);
      A(fmt::format("this process: {} in use = {} allocated by PyTorch + {} reserved but unallocated + {} outside PyTorch (CUDA context, NCCL)",
                    doctor_gib(oom->process_in_use), doctor_gib(oom->allocated), doctor_gib(std::max<int64_t>(0, oom->reserved_unallocated)),
                    doctor_gib(oom->process_in_use - reserved)));
    }
    int64_t listed = 0;
    for (const auto& [pid, b] : oom->other_processes) listed += b;
    if (listed > 0 && oom->other_processes.size() > 1) A(fmt::format("processes listed on this GPU hold {}", doctor_gib(listed)));
  }

  const std::optional<Outcome>& outcome = scan.outcome;
  int64_t others = 0;
  if (oom) {
    bool self_skipped = false;  // torch lists this process among "Process P has X" when it cannot tell
    for (const auto& [pid, b] : oom->other_processes) {
      if (!self_skipped && b == oom->process_in_use) { self_skipped = true; continue; }
      others += b;
    }
  }
  const bool other_proc = others > GiB;

  if (!outcome || outcome == Outcome::Ok) {
    dx.stage = "none";
    dx.cause = Cause::NotOom;
    dx.explanation = "The log shows a healthy start: no out-of-memory error and no refusal. Below, each figure the engine printed is held against headroom's forecast for the same deployment.";
    return;
  }
  if (outcome == Outcome::NoError && !scan.failure_stage.empty() && dx.stage != "none") {
    // effective_outcome: the log stops inside a stage, with no error line.
    dx.cause = Cause::NoErrorInLog;
    bool cut_traceback = false;  // the stop is a traceback whose exception line is missing
    for (const auto& t : scan.tracebacks) cut_traceback = cut_traceback || (t.line == scan.failure_line && t.exception.empty());
    if (cut_traceback)
      dx.explanation = fmt::format(
          "The log holds a traceback (line {}) whose frames are in {}, but it ends before the exception line: the startup failed "
          "there and the log does not say with what. Include the lines after it to know whether it ran out of memory.",
          scan.failure_line, dx.stage);
    else
      dx.explanation = fmt::format(
          "The log stops during {} (line {}) without an error line: the process stopped there. Something ended it from outside "
          "the engine's own checks: the host's OOM killer or a container memory limit (no Python error is printed), an NCCL "
          "abort or a watchdog on another rank, a scheduler's time limit, or the log was cut at this point. Include the lines "
          "after it, or the error, to know which.",
          dx.stage, scan.failure_line);
    // vLLM captures CUDA graphs outside its --gpu-memory-utilization budget: what the budget
    // leaves of the device is all capture has. vLLM's own V0 capture message puts the need at
    // "1~3 GiB memory per GPU" (worker/model_runner.py, 0.4-0.5): GUESS threshold, 1 GiB.
    std::optional<double> u = frac;
    if (!u && s.gpu_memory_utilization) u = s.gpu_memory_utilization->value;
    if (dx.stage == "cuda_graph" && dx.engine == "vllm" && u && s.total && s.total->value > 0) {
      const int64_t outside = static_cast<int64_t>((1.0 - *u) * static_cast<double>(s.total->value));
      if (outside < GiB) {
        dx.cause = Cause::StaticFractionTooHigh;
        dx.explanation += fmt::format(
            " The log's own numbers point at memory: {} {} leaves {} of the {} device outside vLLM's budget, and CUDA-graph capture "
            "runs there (vLLM's capture message: graphs \"can take additional 1~3 GiB memory per GPU\"); a capture that ran out "
            "of it would stop here.",
            knob, *u, doctor_gib(outside), doctor_gib(s.total->value));
        A(fmt::format("outside the budget: (1 - {}) x {} = {} (GUESS: capture needs >= 1 GiB, from vLLM's own message)", *u,
                      doctor_gib(s.total->value), doctor_gib(outside)));
      }
    }
    return;
  }
  if (outcome == Outcome::NoError) {
    // effective_outcome: no error line, no finished startup, stopped between stages.
    int64_t last = 0;
    for (const auto& r : scan.ranks) last = std::max(last, r.stage_line);
    dx.cause = Cause::NoErrorInLog;
    if (dx.reached_stage.empty()) {
      dx.explanation = "The log holds an error line or a traceback, but neither the exception that ended it nor any startup line "
                       "or frame that places it: something failed, and the log does not say where or with what. Include the lines "
                       "around it.";
      return;
    }
    dx.explanation = fmt::format(
        "The log stops during {}{} without an error line and without a finished startup. Either the log was cut (include the "
        "lines after this point, or the error), or the process was killed from outside (the host's OOM killer, a container "
        "memory limit, a scheduler's time limit), which leaves no Python error. Below, the figures the log does show are held "
        "against the forecast; the fixes, if any, are those of running out of memory in {}, the stage placed below.",
        dx.reached_stage, last > 0 ? fmt::format(" (its last startup line is line {})", last) : "", dx.stage);
    return;
  }
  if (outcome == Outcome::OtherError) {
    dx.cause = Cause::NotOom;
    const LogError* e = scan.errors.empty() ? nullptr : &scan.errors.front();
    for (const auto& err : scan.errors)
      if (err.kind == "context_over_derived") e = &err;
    if (e && e->kind == "context_over_derived") {
      // The engine refused the context length before loading anything: the fix is the model's
      // own limit (the engine printed it), or its override variable when the checkpoint's rope
      // scaling really extends it (vLLM VLLM_ALLOW_LONG_MAX_MODEL_LEN, SGLang
      // SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN).
      const bool sgl = dx.engine == "sglang";
      const std::string flag = sgl ? "--context-length" : "--max-model-len";
      const std::string env = sgl ? "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" : "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1";
      dx.explanation = fmt::format(
          "The engine refused {} at start-up (line {}): {}is longer than the model's derived limit{}, which comes from the "
          "config's max_position_embeddings and its rope scaling. Nothing was loaded and nothing ran out of memory. Serve at most "
          "the limit, or, only if the checkpoint's rope scaling really supports more (e.g. YaRN you added to its config), set {}.",
          flag, e->line, e->value2 ? fmt::format("{} ", *e->value2) : std::string(),
          e->value ? fmt::format(" ({})", *e->value) : std::string(), env);
      if (e->value2 && e->value) A(fmt::format("{} {} > derived limit {}", flag, *e->value2, *e->value));
      if (e->value)
        dx.fixes.push_back({flag, std::to_string(*e->value), "the model's derived context limit as the engine printed it; the engine starts past this check"});
      dx.will_not_help.push_back(fmt::format("lowering {} or the CUDA-graph batch sizes: nothing ran out of memory", knob));
      return;
    }
    if (const LogError* m = find_error(scan, "vllm_mamba_blocks"); m && m->line == scan.failure_line) {
      mamba_blocks_refusal(*m, knob, dx);
      return;
    }
    for (const char* kind : {"vllm_free_memory_startup", "vllm_profiling_error"})
      if (const LogError* r = find_error(scan, kind); r && r->line == scan.failure_line) {
        other_process_refusal(scan, *r, knob, dx);
        return;
      }
    dx.explanation = fmt::format("The failure is not an out-of-memory error{}: memory flags will not fix it.",
                                 e ? fmt::format(" ({} at line {})", e->exception.empty() ? e->kind : e->exception, e->line) : "");
    // Where it is placed, and on what: the last startup line before it (no traceback frame names a stage).
    int64_t last = 0;
    for (const auto& r : scan.ranks)
      if (r.stage_line <= scan.failure_line) last = std::max(last, r.stage_line);
    bool by_frames = false;
    for (const auto& t : scan.tracebacks) by_frames = by_frames || (!t.stage.empty() && t.stage == dx.stage);
    if (last > 0 && !by_frames && !dx.stage.empty())
      dx.explanation += fmt::format(" It is placed in {}, the stage in progress at the log's last startup line before it (line {}).",
                                    dx.stage, last);
    dx.will_not_help.push_back(fmt::format("lowering {} or the CUDA-graph batch sizes: nothing ran out of memory", knob));
    dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: there is no allocation failure to avoid");
    return;
  }
  if (other_proc) {
    dx.cause = Cause::OtherProcess;
    dx.explanation = fmt::format("Another process holds {} of this GPU's memory, which the engine counted as free (or never saw). "
                                 "Stop it, or budget for it: the engine's fraction applies to memory it believes is its own.",
                                 doctor_gib(others));
    dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the memory is held by another process, not fragmented");
    return;
  }

  if (outcome == Outcome::Oom) {
    // An OOM report that nothing in the log places in a stage (effective_outcome).
    if (oom && oom->reserved_unallocated > 0 && oom->request > 0 && oom->reserved_unallocated >= oom->request &&
        oom->total > 0 && oom->reserved_unallocated >= oom->total / 20) {
      dx.cause = Cause::Fragmentation;
      dx.explanation = fmt::format("The request of {} failed although {} sat reserved but unallocated: free memory existed, split into "
                                   "blocks too small for it. The log does not say at which stage. Expandable segments let PyTorch grow "
                                   "one segment instead.",
                                   doctor_gib(oom->request), doctor_gib(oom->reserved_unallocated));
      return;
    }
    dx.cause = Cause::OomStageUnknown;
    dx.explanation = fmt::format(
        "The log holds an out-of-memory report but no line that places it in the startup (no stage line, traceback frame or "
        "engine message before it), so the stage below is a guess, and the fix depends on it. If it came after the static "
        "pools were allocated (CUDA-graph capture, warm-up, serving), the engine's budget left too little outside it: lower {}. "
        "If it came while loading the weights, they do not fit: spread them over more GPUs. Give --model and --gpu (and the flags "
        "the log does not show) so the forecast can place it, or include the startup lines before the error.",
        knob);
    if (oom && frac && oom->total > 0) {
      const int64_t held = oom->process_in_use >= 0 ? oom->process_in_use : oom->total - std::max<int64_t>(0, oom->free);
      A(fmt::format("the engine's budget {} x {} = {}; the process held {} when the request failed", *frac, doctor_gib(oom->total),
                    doctor_gib(static_cast<int64_t>(*frac * static_cast<double>(oom->total))), doctor_gib(held)));
    }
    if (oom && oom->request > 0 && oom->reserved_unallocated >= 0 && oom->reserved_unallocated < oom->request)
      dx.will_not_help.push_back(fmt::format("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: only {} was reserved but unallocated, "
                                             "less than the {} requested, so defragmenting cannot satisfy it",
                                             doctor_gib(oom->reserved_unallocated), doctor_gib(oom->request)));
    return;
  }

  if (outcome == Outcome::OomWeights && dx.stage == "init") {
    // Before the weights only the CUDA context, NCCL's buffers and the communicators exist: running
    // out there means the GPU was already nearly full when the engine started.
    dx.cause = Cause::OtherProcess;
    dx.explanation = "The GPU ran out of memory while the engine was still initializing (CUDA context, NCCL communicators and "
                     "buffers), before any weight was loaded: the memory was already taken when it started. Another process or a "
                     "previous instance that did not exit holds it (check nvidia-smi), or NCCL's buffers do not fit in what is left "
                     "(NCCL_BUFFSIZE, NVLS/NCCL_NVLS_ENABLE=0 on NVSwitch systems).";
    dx.will_not_help.push_back(fmt::format("changing {}: the engine applies it after initialization", knob));
    dx.will_not_help.push_back("a larger --tp / --pp: every GPU still needs its CUDA context and NCCL buffers first");
    return;
  }
  if (outcome == Outcome::OomWeights) {
    dx.cause = Cause::WeightsDoNotFit;
    dx.explanation = "The model's weights did not fit in GPU memory while loading: this happens before any KV budget or fraction applies. "
                     "Spread the weights over more GPUs (a larger --tp / --pp), use a smaller quantization, or a GPU with more memory.";
    dx.will_not_help.push_back(fmt::format("{}: weights are loaded before the engine applies it", knob));
    dx.will_not_help.push_back("--max-model-len / --context-length / --max-running-requests: they size the KV cache, which comes after the weights");
    dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the weights themselves exceed the memory");
    return;
  }

  if (outcome == Outcome::RefusedKv) {
    if (find_error(scan, "trtllm_kv_too_small")) {
      // TensorRT-LLM's KV cache manager: maxTokensInPagedKvCache < beam_width x tokensPerBlock x maxBlocksPerSeq.
      dx.cause = Cause::KvTooSmallForContext;
      dx.explanation = "TensorRT-LLM refused to start: the paged KV cache it could size holds fewer tokens than one sequence of the "
                       "engine's maximum length needs (beam width x tokens per block x blocks per sequence). Give the KV cache more "
                       "memory (a larger --kv_cache_free_gpu_memory_fraction, or max_tokens_in_paged_kv_cache) or use a shorter "
                       "maximum sequence length.";
      if (s.kv_tokens) A(fmt::format("KV cache tokens sized: {} (line {})", s.kv_tokens->value, s.kv_tokens->line));
      dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: nothing failed to allocate; the engine refused by arithmetic");
      return;
    }
    const LogError* maxlen = find_error(scan, "vllm_max_seq_len");
    if (maxlen) {
      dx.cause = Cause::KvTooSmallForContext;
      dx.explanation = fmt::format("vLLM refused to start: the KV cache cannot hold one request at --max-model-len{}. "
                                   "Either lower --max-model-len to what fits or give the KV cache more memory.",
                                   maxlen->value ? fmt::format(" (it estimates the longest that fits at {} tokens)", *maxlen->value) : "");
      if (maxlen->value) A(fmt::format("vLLM's own estimate of the maximum model length: {} tokens", *maxlen->value));
      dx.will_not_help.push_back("--max-num-seqs: one request at the full length must fit however few run at once");
      dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: nothing failed to allocate; vLLM refused by arithmetic");
      return;
    }
    bool kv_bytes_given = false;  // vLLM sized the KV cache from --kv-cache-memory-bytes, not from the fraction
    for (const auto& e : scan.evidence) kv_bytes_given = kv_bytes_given || e.kind == "vllm.kv_cache_memory_bytes";
    if (dx.engine == "vllm" && kv_bytes_given && s.kv_bytes && s.kv_bytes->value > 0) {
      // vllm/v1/core/kv_cache_utils.py get_kv_cache_configs(): with a positive fixed budget the
      // one refusal left is _check_enough_kv_cache_memory, one request at --max-model-len.
      dx.cause = Cause::KvTooSmallForContext;
      dx.explanation = fmt::format("vLLM reserved the {} that --kv-cache-memory-bytes asks for (memory profiling and "
                                   "--gpu-memory-utilization skipped) and then failed: with a fixed positive budget the refusal "
                                   "that follows is the check that one request at --max-model-len fits in it. Lower --max-model-len "
                                   "or raise --kv-cache-memory-bytes.",
                                   doctor_gib(s.kv_bytes->value));
      A(fmt::format("KV budget {} (line {}), fixed by --kv-cache-memory-bytes", doctor_gib(s.kv_bytes->value), s.kv_bytes->line));
      dx.will_not_help.push_back("--gpu-memory-utilization: vLLM ignores it when --kv-cache-memory-bytes is given");
      dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: nothing failed to allocate; vLLM refused by arithmetic");
      return;
    }
    int64_t act = s.activation ? s.activation->value : 0;
    int64_t kvb = s.kv_bytes ? s.kv_bytes->value : 0;
    if (dx.engine == "vllm" && act > 0 && s.weights && s.total && frac &&
        act > (static_cast<int64_t>(*frac * static_cast<double>(s.total->value)) - s.weights->value) / 4) {
      dx.cause = Cause::ActivationPeak;
      dx.explanation = fmt::format("vLLM's profile run peaked at {} of activations (at --max-num-batched-tokens / --max-num-seqs), "
                                   "which left no room for the KV cache inside --gpu-memory-utilization {}.", doctor_gib(act), *frac);
      A(fmt::format("budget {} x {} = {}; weights {}; peak activation {}; KV {}", *frac, doctor_gib(s.total->value),
                    doctor_gib(static_cast<int64_t>(*frac * static_cast<double>(s.total->value))), doctor_gib(s.weights->value), doctor_gib(act), doctor_gib(kvb)));
    } else {
      dx.cause = Cause::StaticFractionTooLow;
      dx.explanation = sglang
          ? fmt::format("SGLang refused to start: after the weights, {} leaves no memory for the KV cache. SGLang sizes the "
                        "pool as rest = free_after_weights - free_before_weights x (1 - f), which is <= 0 here.",
                        frac ? fmt::format("--mem-fraction-static {}", *frac) : std::string("the fraction in force"))
          : fmt::format("{} refused to start: the memory budget ({}) minus weights and activations leaves nothing for the KV cache.",
                        dx.engine, frac ? fmt::format("{} {}", knob, *frac) : knob);
      if (sglang && s.init_avail && s.post_weights_avail && frac) {
        double P = to_gib(s.init_avail->value), Aw = to_gib(s.post_weights_avail->value);
        A(fmt::format("P = {:.2f} GiB free before weights, A = {:.2f} GiB after; rest = A - P x (1 - f) = {:.2f} - {:.2f} x {:.3f} = {:.2f} GiB",
                      P, Aw, Aw, P, 1 - *frac, Aw - P * (1 - *frac)));
        A(fmt::format("smallest fraction that leaves a KV pool: 1 - A/P = {:.4f}", 1 - Aw / P));
      }
    }
    dx.will_not_help.push_back(fmt::format("lowering {} (what a CUDA out-of-memory hint would suggest): it shrinks the KV budget further", knob));
    dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: nothing failed to allocate; the engine refused by arithmetic");
    return;
  }

  if (outcome == Outcome::OomGraph) {
    const bool high = frac && (*frac >= 0.9 || (sglang && dep && *frac > 0.88));
    dx.cause = high ? Cause::StaticFractionTooHigh : Cause::GraphCaptureHeadroom;
    const int64_t begin = s.graph_begin_avail ? s.graph_begin_avail->value : -1;
    dx.explanation = fmt::format(
        "CUDA-graph capture ran out of memory. {} gave the static pools (weights + KV cache) so much that only {} was left "
        "when capture began; capture needs its batch buffers, the graphs' private memory pool and the warm-up's activations on top. "
        "Give the dynamic side more room: lower {} (or capture fewer batch sizes).",
        frac ? fmt::format("{} {}", knob, *frac) : knob, begin >= 0 ? doctor_gib(begin) : std::string("little"), knob);
    if (begin >= 0 && oom && oom->free >= 0 && oom->request > 0)
      A(fmt::format("capture used {} of the {} free at its start, then asked for {} more: it needed at least {}", doctor_gib(begin - oom->free),
                    doctor_gib(begin), doctor_gib(oom->request), doctor_gib(begin - oom->free + oom->request)));
    if (oom && oom->reserved_unallocated > 0)
      A(fmt::format("the {} reserved but unallocated is cached memory that cannot serve the capture: PyTorch cannot release cached blocks "
                    "while a CUDA graph is being captured, and the graph's private pool does not draw on the regular pool's free blocks",
                    doctor_gib(oom->reserved_unallocated)));
    dx.will_not_help.push_back(
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True as the cure (PyTorch's hint): the shortage is the non-static budget, not "
        "fragmentation; the reserved-but-unallocated memory belongs to pools the capture cannot draw from");
    dx.will_not_help.push_back(fmt::format("raising {}: it takes more from the same headroom capture needs", knob));
    if (sglang) dx.will_not_help.push_back("--chunked-prefill-size / --max-running-requests: they do not change what capture allocates at its start");
    return;
  }

  if (outcome == Outcome::OomKv) {
    dx.cause = Cause::StaticFractionTooHigh;
    // The pool caps, as each engine spells them: SGLang --max-total-tokens, vLLM
    // --kv-cache-memory-bytes, TensorRT-LLM KvCacheConfig.max_tokens / max_gpu_total_bytes.
    const char* cap = sglang ? "--max-total-tokens" : dx.engine == "trtllm" ? "--max_tokens / --max_gpu_total_bytes" : "--kv-cache-memory-bytes";
    dx.explanation = fmt::format("Allocating the KV cache itself failed: the pool was sized from a free-memory figure that was not really "
                                 "available when it was allocated. Lower {}, or cap the pool ({}).", knob, cap);
    dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the pool is one large allocation that exceeds free memory");
    return;
  }

  // oom_warmup / oom_runtime
  if (oom && oom->reserved_unallocated > 0 && oom->request > 0 && oom->reserved_unallocated >= oom->request &&
      oom->reserved_unallocated >= oom->total / 20 && dx.stage != "cuda_graph") {
    dx.cause = Cause::Fragmentation;
    dx.explanation = fmt::format("The request of {} failed although {} sat reserved but unallocated: free memory existed, split into "
                                 "blocks too small for it. Expandable segments let PyTorch grow one segment instead.",
                                 doctor_gib(oom->request), doctor_gib(oom->reserved_unallocated));
    dx.will_not_help.push_back("raising --max-model-len limits or the KV budget: the memory was there, only fragmented");
    return;
  }
  dx.cause = Cause::ActivationPeak;
  dx.explanation = fmt::format("Activations of a {} step ran out of memory after the KV cache took its budget. Process fewer tokens per "
                               "step (a smaller chunked prefill / max-num-batched-tokens / max-num-seqs) or give the dynamic side more room (lower {}).",
                               outcome == Outcome::OomWarmup ? "warm-up (profiling or sampler)" : "serving", knob);
  dx.will_not_help.push_back(fmt::format("raising {}: it leaves less for activations", knob));
  if (!(oom && oom->reserved_unallocated >= oom->request))
    dx.will_not_help.push_back("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the reserved-but-unallocated memory is smaller than the request, so defragmenting cannot satisfy it");
}

void collect_evidence(const LogScan& scan, Diagnosis& dx) {
  static const char* kinds_first[] = {"torch.oom", "error", "traceback"};
  std::vector<LogEvidence> ev;
  for (const auto& e : scan.evidence) {
    bool key = e.line == scan.failure_line;
    for (const char* k : kinds_first) key = key || e.kind.rfind(k, 0) == 0;
    if (key || e.kind.find("avail") != std::string::npos || e.kind.find("load_weight") != std::string::npos ||
        e.kind.find("kv_cache") != std::string::npos || e.kind.find("capture") != std::string::npos ||
        e.kind.find("memory_pool") != std::string::npos || e.kind.find("pool_end") != std::string::npos ||
        e.kind.find("server_args") != std::string::npos || e.kind.find("profil") != std::string::npos ||
        e.kind.find("refus") != std::string::npos || e.kind.find("graph") != std::string::npos ||
        e.kind.find("memory") != std::string::npos || e.kind.find("load") != std::string::npos ||
        e.kind.find("worker_method") != std::string::npos)
      ev.push_back(e);
  }
  if (ev.empty()) ev = scan.evidence;
  if (ev.size() > 24) {  // keep the failure and the lines before it
    std::vector<LogEvidence> tail(ev.end() - 24, ev.end());
    ev = tail;
  }
  dx.evidence = std::move(ev);
}

}  // namespace headroom
