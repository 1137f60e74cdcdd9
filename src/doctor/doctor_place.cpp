// Places a failure that no stage line, traceback frame or engine message places, so that the
// doctor's `stage` is always a CONTRACT stage, and says on what it rests (`stage_basis`):
//  b. "numbers": an OOM report with figures and a forecast of the deployment: the memory the
//     process held against the forecast's totals after the weights and after the KV pool;
//  c. "numbers" without a model: SGLang takes its static pools (weights + KV) within
//     mem_fraction_static x total before anything else, so a process holding more than that was
//     past them;
//  a. "guess": how far the log got (a log that got through the KV pool without any error line
//     failed later, at runtime; one that stopped earlier, in the next stage), or, for a lone OOM,
//     the stage each engine's start-up most often runs out in.
#include <algorithm>
#include <fmt/format.h>

#include "doctor/doctor_internal.h"
#include "engines/sglang/sglang_rules.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

namespace {

int order(const std::string& s) {
  static const char* o[] = {"init", "weights", "kv_pool", "cuda_graph", "warmup", "ready", "runtime"};
  for (int i = 0; i < 7; ++i)
    if (s == o[i]) return i;
  return -1;
}

bool truthy(const std::string& v) { return v == "true" || v == "True" || v == "1" || v.empty(); }

// CUDA graphs switched off by the flag each engine spells: SGLang --disable-cuda-graph, vLLM
// --enforce-eager (also printed as enforce_eager=True in its engine config line).
bool graphs_off(const LogScan& sc, const std::optional<Deployment>& dep) {
  for (const char* f : {"--disable-cuda-graph", "--enforce-eager"}) {
    if (auto it = sc.flags.find(f); it != sc.flags.end() && truthy(it->second)) return true;
    if (dep)
      if (const std::string* v = dep->flag(f); v && truthy(*v)) return true;
  }
  return false;
}

// The stage after the static pools: capture, or the warm-up where graphs are off.
std::string after_pools(const LogScan& sc, const std::optional<Deployment>& dep) { return graphs_off(sc, dep) ? "warmup" : "cuda_graph"; }

// One request of at least 2 GiB after SGLang's static pools, outside capture (no "Capture cuda graph
// failed" wrapper, nothing in CUDA graphs' private pools yet), and not SGLang's symmetric-memory pool
// (prealloc_symmetric_memory_pool: SGLANG_SYMM_MEM_PREALLOC_GB_SIZE whole GiB, 4 by default, set up
// after the KV pool with --enable-symm-mem or FlashInfer's TRT-LLM FP4 kernels), whose size is whole GiB.
bool later_pool_request(const LogOom& o, const LogScan& sc, const std::optional<Deployment>& dep) {
  // GUESS: 2 GiB, about three times the largest single capture block seen (the seed's 694 MiB).
  constexpr int64_t kPoolBlock = int64_t{2} << 30, kGiB = int64_t{1} << 30;
  if (o.request < kPoolBlock || o.request % kGiB == 0 || o.in_capture_failed || o.private_pools > 0) return false;
  if (sc.flags.count("--enable-symm-mem") || (dep && dep->flag("--enable-symm-mem"))) return false;
  return true;
}

// vLLM labels the profile run after the weights "warmup" ("Model loading took"), which comes
// before the KV pool; it is the post-capture warm-up only once the KV pool or capture was seen.
bool vllm_pre_kv(const LogScan& sc, const std::string& engine, const std::string& reached) {
  if (engine != "vllm" || reached != "warmup") return false;
  if (sc.summary.kv_tokens || sc.summary.kv_bytes || sc.summary.graph_bytes) return false;
  for (const auto& r : sc.ranks)
    if (r.stage == "kv_pool" || r.stage == "cuda_graph") return false;
  return true;
}

std::optional<double> fraction(const LogScan& sc, const std::optional<Forecast>& forecast, const char* knob) {
  if (auto it = sc.flags.find(knob); it != sc.flags.end()) try { return std::stod(it->second); } catch (...) {}
  if (std::string_view(knob) == "--mem-fraction-static" && sc.summary.mem_fraction_static) return sc.summary.mem_fraction_static->value;
  if (std::string_view(knob) == "--gpu-memory-utilization" && sc.summary.gpu_memory_utilization) return sc.summary.gpu_memory_utilization->value;
  if (forecast)
    if (const std::string* v = forecast->setting(knob)) try { return std::stod(*v); } catch (...) {}
  return std::nullopt;
}

// The largest mem_fraction_static SGLang picks by default on a device of `total` bytes, over the
// eras of its rule (engines/sglang/sglang_defaults.cpp, server_args.py / memory_hook.py), or of
// the log's version when it names one. The smallest reserve each era keeps is a single GPU's
// (more GPUs, DP attention, drafts and DeepEP only add to it) with that era's default chunked
// prefill and capture batch for this GPU.
double sglang_largest_default(int64_t total, const std::string& version) {
  std::vector<sglang::Era> eras = {sglang::Era::V2024, sglang::Era::Mid2025, sglang::Era::Late2025, sglang::Era::Y2026};
  if (!version.empty()) try { eras = {sglang::era_for_version(version).era}; } catch (const InputError&) {}
  double best = 0;
  for (auto e : eras)
    for (bool raised : {false, true}) {  // the 20-35 GiB tier before and after PR #37898
      sglang::DefaultInputs in;
      in.gpu_mem_mib = total / MiB;
      in.chunked_prefill_size = sglang::default_chunked_prefill_size(e, in.gpu_mem_mib, 1, raised);
      in.cuda_graph_max_bs = sglang::default_cuda_graph_max_bs(e, in.gpu_mem_mib, 1, false, raised);
      best = std::max(best, sglang::default_mem_fraction_static(e, in));
    }
  return best;
}

struct Placed {
  std::string stage;
  StageBasis basis = StageBasis::Guess;
  std::string why;
};

// Rule b: the process's memory when the request failed against the forecast's cumulative totals
// on the failing rank: below the weights' total it was still loading them; at (about) the total
// after the KV pool it was past the pool. The margin is 10% of the pool (GUESS: the pool's size is
// a forecast, not a log figure).
std::optional<Placed> by_forecast(const LogOom& o, const Forecast& f, const LogScan& sc, const std::optional<Deployment>& dep,
                                  std::vector<std::string>& arith) {
  if (f.ranks.empty() || (o.process_in_use < 0 && o.allocated < 0)) return std::nullopt;
  const RankForecast* r = &f.ranks.front();
  for (const auto& x : f.ranks)
    if (x.rank == o.device) r = &x;
  auto used_after = [&](StageId id) -> std::optional<int64_t> {
    for (const auto& s : r->stages)
      if (s.id == id) return r->capacity_bytes - s.free_bytes_after;
    return std::nullopt;
  };
  const auto init = used_after(StageId::Init), weights = used_after(StageId::Weights), kv = used_after(StageId::KvPool);
  if (!weights) return std::nullopt;
  // "this process has X in use" counts the CUDA context and NCCL; PyTorch's allocated bytes do not,
  // so they get the forecast's init total added.
  const bool in_use = o.process_in_use >= 0;
  const int64_t held = in_use ? o.process_in_use : o.allocated + init.value_or(0);
  const int64_t w = *weights, k = kv.value_or(*weights);
  Placed p;
  p.basis = StageBasis::Numbers;
  if (held < w) p.stage = "weights";
  else if (held >= w + (k - w) * 9 / 10) p.stage = after_pools(sc, dep);
  else p.stage = "kv_pool";
  arith.push_back(fmt::format("the process held {}{} when the request failed; the forecast of this deployment on rank {} holds {} "
                              "after the weights and {} after the KV pool",
                              doctor_gib(held), in_use ? "" : " (PyTorch's allocation + the forecast's init)", r->rank, doctor_gib(w),
                              doctor_gib(k)));
  p.why = held < w ? fmt::format("The OOM report's figures place it: the process held {}, less than the {} the forecast holds after the "
                                 "weights, so it ran out while loading them.",
                                 doctor_gib(held), doctor_gib(w))
          : p.stage == "kv_pool"
              ? fmt::format("The OOM report's figures place it: the process held {}, past the weights ({}) but short of the KV pool's "
                            "total ({}), so it ran out while the KV cache was being set up.",
                            doctor_gib(held), doctor_gib(w), doctor_gib(k))
              : fmt::format("The OOM report's figures place it: the process held {}, as much as the forecast holds with the weights "
                            "and the KV pool in place ({}), so it ran out after the static pools, in {}.",
                            doctor_gib(held), doctor_gib(k), p.stage == "cuda_graph" ? "CUDA-graph capture" : "the warm-up");
  return p;
}

// Rules c and the lone-OOM guess: no forecast to hold the figures against.
Placed by_engine(const LogOom* o, const LogScan& sc, const std::optional<Deployment>& dep, const std::optional<Forecast>& forecast,
                 const std::string& engine, std::vector<std::string>& arith) {
  Placed p;
  if (engine == "sglang" && o && o->total > 0) {
    std::optional<double> f = fraction(sc, forecast, "--mem-fraction-static");
    const bool given = f.has_value();
    if (!f) f = sglang_largest_default(o->total, sc.engine_version);
    // What the process held: its own figure when the report prints one; else the device's use
    // (total - free), which counts other processes too (SGLang runs one process per GPU, but the
    // log cannot show that none other was there): then only a guess.
    const bool own = o->process_in_use >= 0;
    const int64_t held = own ? o->process_in_use : (o->free >= 0 ? o->total - o->free : -1);
    if (held >= 0) {
      const int64_t line = static_cast<int64_t>(*f * static_cast<double>(o->total));
      arith.push_back(fmt::format("{} {} when the request failed; mem_fraction_static {}{} x {} = {}", own ? "this process held" : "the device had in use",
                                  doctor_gib(held), given ? "" : "at most ", fmt::format("{:.3f}", *f), doctor_gib(o->total), doctor_gib(line)));
      if (held > line && later_pool_request(*o, sc, dep)) {
        // GUESS: one request of GiB after the target's pools is a pool allocated after them (a
        // speculative draft worker's KV pool: its ModelRunner sets up its own pool once the target's
        // capture is done), not capture, whose single blocks are activations (the seed's: 694 MiB).
        p.stage = "kv_pool";
        p.basis = StageBasis::Guess;
        p.why = fmt::format("A guess: {} {}, past the {} the static pools may take, and the failed request is one block of {}: "
                            "capture allocates batch activations (the largest seen, 0.7 GiB), while a pool SGLang sets up after the "
                            "target's (a speculative draft worker's KV cache) allocates per-layer buffers of that size.",
                            own ? "the process held" : "the device had in use", doctor_gib(held), doctor_gib(line), doctor_gib(o->request));
        return p;
      }
      if (held > line) {
        p.stage = after_pools(sc, dep);
        p.basis = own ? StageBasis::Numbers : StageBasis::Guess;
        p.why = fmt::format(
            "SGLang takes its static pools (weights and KV cache) within mem_fraction_static x total before anything else; {} {}, "
            "more than the {} that {} allows them, so the OOM came after the pools, in {}{}.",
            own ? "the process held" : "the device had", doctor_gib(held), doctor_gib(line),
            given ? fmt::format("--mem-fraction-static {}", *f) : std::string("SGLang's largest default for this GPU"),
            p.stage == "cuda_graph" ? "CUDA-graph capture" : "the warm-up",
            own ? " (unless the weights alone exceed the device: give --model to check)"
                : "; this is a guess, since the device-wide figure may include other processes");
        return p;
      }
      p.stage = "weights";
      p.basis = StageBasis::Guess;
      p.why = fmt::format("A guess: {} {}, within the {} SGLang's static pools may take, so it was not past them; SGLang sizes the KV pool "
                          "from the memory free after the weights, so a shortage inside the budget most often comes while loading the "
                          "weights (or from memory another process holds).",
                          own ? "the process held" : "the device had in use", doctor_gib(held), doctor_gib(line));
      return p;
    }
  }
  // A lone OOM with no forecast. vLLM and TensorRT-LLM size the KV cache from the memory left
  // after the weights (vLLM under --gpu-memory-utilization x total, TensorRT-LLM as a fraction of
  // what is free), so the pool itself fits by construction, and a process above vLLM's budget is
  // past the KV pool only if the weights are known to fit; capture OOMs in SGLang are wrapped in
  // its own "Capture cuda graph failed" message. With nothing else known, a lone OOM during
  // start-up is most often the weights of a model that does not fit. (The request size does not
  // decide it: weight shards, per-layer KV buffers and SGLang's 4 GiB symmetric-memory pool after
  // the KV pool all reach GiB sizes.)
  if (o && o->form == "nccl") {
    // NCCL's own allocation failed (its communicator buffers, "Failed to CUDA calloc", "Cuda failure
    // 'out of memory'"): every engine creates its communicators while initialising the distributed
    // groups, before the weights (SGLang init_torch_distributed, vLLM init_distributed_environment and
    // its warm-up all-reduce), so with nothing else in the log, init is the likeliest stage.
    p.stage = "init";
    p.basis = StageBasis::Guess;
    p.why = "A guess: NCCL ran out of memory and nothing in the log places it; NCCL allocates its buffers when the engine "
            "creates its communicators, at initialisation, before any weight is loaded.";
    return p;
  }
  p.stage = "weights";
  p.basis = StageBasis::Guess;
  p.why = "A guess: the log holds an out-of-memory report and nothing that places it, and no model to hold its figures against. "
          "The engine sizes the KV cache from what the weights leave, so a lone start-up OOM is most often the weights of a model "
          "that does not fit on this many GPUs.";
  if (o && o->total > 0) {
    const int64_t held = o->process_in_use >= 0 ? o->process_in_use : (o->free >= 0 ? o->total - o->free : -1);
    if (auto u = engine == "vllm" ? fraction(sc, forecast, "--gpu-memory-utilization") : std::nullopt; u && held >= 0)
      arith.push_back(fmt::format("{} {} of {}; --gpu-memory-utilization {} x {} = {}", o->process_in_use >= 0 ? "this process held" : "the device had in use",
                                  doctor_gib(held), doctor_gib(o->total), *u, doctor_gib(o->total),
                                  doctor_gib(static_cast<int64_t>(*u * static_cast<double>(o->total)))));
  }
  return p;
}

}  // namespace

std::string place_failure(LogScan& sc, const std::optional<Deployment>& dep, const std::optional<Forecast>& forecast, Diagnosis& dx) {
  const LogOom* oom = first_oom(sc);
  // SGLang wraps an exception raised while capturing in its own "Capture cuda graph failed: ..."
  // (cuda_graph_runner.py CudaGraphRunner.__init__); an OOM report without it, whose process
  // already holds CUDA-graph private pools, came after capture: serving (the graphs' pools stay).
  if (oom && dx.engine == "sglang" && sc.failure_basis == StageBasis::Numbers && oom->private_pools > 0 && !oom->in_capture_failed) {
    dx.stage = "runtime";
    dx.stage_basis = StageBasis::Numbers;
    sc.failure_stage = "runtime";
    return fmt::format("The OOM report's figures place it: {} already sat in CUDA-graph private pools, so capture had run, and "
                       "SGLang reports a failure during capture as \"Capture cuda graph failed\", which this is not: the "
                       "server was past its start-up, serving.",
                       doctor_gib(oom->private_pools));
  }
  // Rule b first, also over a stage the OOM message alone suggested (logscan: private pools ->
  // capture, a request of >= 30% of the device -> KV pool).
  if (oom && forecast && (sc.failure_stage.empty() || sc.failure_basis == StageBasis::Numbers) &&
      (sc.outcome == Outcome::Oom || sc.failure_basis == StageBasis::Numbers)) {
    if (auto p = by_forecast(*oom, *forecast, sc, dep, dx.arithmetic)) {
      dx.stage = p->stage;
      dx.stage_basis = p->basis;
      sc.failure_stage = p->stage;
      return p->why;
    }
  }
  if (!sc.failure_stage.empty()) {
    dx.stage = sc.failure_stage;
    dx.stage_basis = sc.failure_basis.value_or(StageBasis::Log);
    if (dx.stage_basis == StageBasis::Numbers)
      return "The OOM report's own figures suggest the stage (CUDA-graph private pools in use, or a request as large as a KV pool "
             "tensor); nothing else in the log places it.";
    if (dx.stage_basis == StageBasis::Guess)
      return fmt::format("A guess: the log shows no startup lines, and the forecast of this deployment fails at '{}'.", dx.stage);
    return "";
  }
  if (sc.outcome == Outcome::Oom) {  // an OOM report nothing places (effective_outcome)
    Placed p = by_engine(oom, sc, dep, forecast, dx.engine, dx.arithmetic);
    if (p.basis == StageBasis::Guess && forecast && forecast->failure) {
      p.stage = name(forecast->failure->stage);
      p.why = fmt::format("A guess: nothing in the log places the OOM report; the forecast of this deployment fails at '{}' ({}).",
                          p.stage, forecast->failure->message);
    }
    dx.stage = p.stage;
    dx.stage_basis = p.basis;
    sc.failure_stage = p.stage;
    return p.why;
  }
  // No OOM: a log with no error line, or an error nothing places (effective_outcome "no_error").
  dx.stage_basis = StageBasis::Guess;
  const bool any_error = !sc.errors.empty() || !sc.tracebacks.empty() || !sc.ooms.empty();
  const std::string& reached = dx.reached_stage;
  int64_t last = 0;
  for (const auto& r : sc.ranks) last = std::max(last, r.stage_line);
  const std::string at = last > 0 ? fmt::format(" (line {})", last) : std::string();
  if (vllm_pre_kv(sc, dx.engine, reached)) {
    // vLLM's next step after loading the weights is EngineCore._initialize_kv_caches (profile
    // run, KV sizing and its checks); a failure there with no message of its own is most often
    // the KV cache refusal ("No available memory for the cache blocks", the max model length
    // check), since an OOM in the profile run prints its own report.
    dx.stage = "kv_pool";
    return fmt::format("A guess: {} after the weights were loaded{}; vLLM's next step sizes the KV cache from a profile run, and "
                       "a start-up that fails there without an OOM report is most often refused for the KV cache.",
                       any_error ? "the start-up failed, and the log does not say with what," : "the log stops", at);
  }
  // The readers label each startup line with the stage in progress after it ("Load weight end"
  // -> kv_pool, "Memory pool end" -> cuda_graph): `reached` is where the start-up was.
  const int o = order(reached);
  if (any_error) {
    if (o < 0) {
      dx.stage = "init";
      return "A guess: the log holds an error that nothing places, and no startup line; 'init' is the first stage.";
    }
    // An error (a cut traceback, a wrapper message) after the last stage line: it came while that
    // stage was in progress, as logscan places errors with no stage of their own.
    dx.stage = reached == "ready" ? "runtime" : reached;
    dx.stage_basis = StageBasis::Log;
    return fmt::format("The failure comes after the last startup line{}, while {} was in progress; what failed is not in the log.", at,
                       dx.stage);
  }
  // Rule a: no error line. A log that shows the KV pool sized or allocated (or a later stage) got
  // through its memory stages as far as shown: a failure the user reports came after, at runtime.
  // (vLLM's and TensorRT-LLM's kv_pool lines all size the pool; SGLang's "Load weight end" is
  // labelled kv_pool before any sizing, its KV lines carry figures.)
  bool kv_shown = sc.summary.kv_tokens || sc.summary.kv_bytes || sc.summary.pool_end_avail || o > order("kv_pool") ||
                  (o == order("kv_pool") && dx.engine != "sglang");
  for (const auto& r : sc.ranks) kv_shown = kv_shown || r.fig.kv_tokens || r.fig.kv_bytes;
  if (kv_shown) {
    dx.stage = "runtime";
    return fmt::format("A guess: there is no error in the log; it reached {}{} without a finished start-up, so its memory stages got "
                       "as far as the log shows. A failure after this is at runtime or in a stage the log does not show.",
                       reached == "kv_pool" ? "the KV pool" : reached, at);
  }
  dx.stage = o < 0 ? "init" : reached;
  return o < 0 ? "A guess: the log shows no failure and no startup line; 'init' is the first stage."
               : fmt::format("A guess: there is no error in the log; it stops{} with {} next, so a failure would be there.", at,
                             dx.stage);
}

}  // namespace headroom
