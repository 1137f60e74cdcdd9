// SGLang's --mem-fraction-static from a log's own figures, and the fraction that gives a failing
// stage the room it lacked. SGLang sizes its static pools as F x P, P being the memory free when
// the worker started (model_runner.py profile_max_num_token, 2024-2025: rest_memory =
// available_gpu_memory - total_gpu_memory * (1 - mem_fraction_static); the 2026 pool_configurator.py
// keeps the relation). Each 0.01 of F therefore moves P x 0.01 between the static pools and
// everything allocated after them (capture, workspaces, activations).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "doctor/doctor_internal.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

namespace {

// Memory outside PyTorch at the OOM (CUDA context, NCCL, cuBLAS): in use - allocated - cached.
int64_t non_torch_at_oom(const LogOom& o) {
  if (o.process_in_use < 0 || o.allocated < 0) return -1;
  int64_t v = o.process_in_use - o.allocated - std::max<int64_t>(0, o.reserved_unallocated);
  return v >= 0 ? v : -1;
}

}  // namespace

int64_t sglang_fraction_base(const LogScan& scan) {
  const auto& s = scan.summary;
  if (s.init_avail && s.init_avail->value > 0) return s.init_avail->value;
  const LogOom* oom = first_oom(scan);
  if (oom && oom->total > 0) {
    int64_t nt = non_torch_at_oom(*oom);
    return nt >= 0 && nt < oom->total ? oom->total - nt : oom->total;
  }
  return s.total ? s.total->value : 0;
}

// vLLM's budget (u x total) and TensorRT-LLM's share of the free memory are decided before capture;
// what runs outside them after a failed allocation is the rest of capture and the runtime peaks.
// The log bounds both: a capture never needs more than its whole footprint ("Graph capturing
// finished in S secs, took X GiB"), and the next allocation of the kind that failed is the request
// again. The 1 GiB GUESS stays the cap (it was the margin before: on a 22 GiB card it is 0.045 of the
// device, more than twice what the corpus's small-card capture OOMs lacked, e.g. vllm-009: 15 MiB
// short, 0.46 GiB of graphs).
int64_t budget_fix_margin(const LogScan& scan, const LogOom* oom) {
  int64_t m = oom && oom->request > 0 ? oom->request : kLogFixMargin;
  if (scan.summary.graph_bytes && scan.summary.graph_bytes->value > 0) m = std::max(m, scan.summary.graph_bytes->value);
  return std::min(m, kLogFixMargin);
}

std::optional<KnobEstimate> sglang_fraction_from_log(const LogScan& scan) {
  const auto& s = scan.summary;
  if (auto it = scan.flags.find("--mem-fraction-static"); it != scan.flags.end()) {
    try {
      return KnobEstimate{std::stod(it->second), true, "set on the command line or printed in the server arguments"};
    } catch (...) {
    }
  }
  if (s.mem_fraction_static) return KnobEstimate{s.mem_fraction_static->value, true, fmt::format("printed at line {}", s.mem_fraction_static->line)};
  const int64_t base = sglang_fraction_base(scan);
  if (base <= 0) return std::nullopt;
  // The pool's own sizing: F = 1 - (free after weights - KV bytes) / P.
  if (s.init_avail && s.post_weights_avail && s.kv_bytes && s.kv_bytes->value > 0) {
    double f = 1.0 - static_cast<double>(s.post_weights_avail->value - s.kv_bytes->value) / static_cast<double>(base);
    if (f > 0.05 && f < 1.0)
      return KnobEstimate{f, false, fmt::format("1 - (free after weights {} - KV cache {}) / free at start {}, SGLang's own sizing (lines {}, {}, {})",
                                                doctor_gib(s.post_weights_avail->value), doctor_gib(s.kv_bytes->value), doctor_gib(base),
                                                s.post_weights_avail->line, s.kv_bytes->line, s.init_avail->line)};
  }
  // An OOM report during capture: the static pools are PyTorch allocations, so the memory
  // PyTorch had allocated before capture began, over P, estimates F (an ESTIMATE: other tensors
  // allocated after the pool count in, the cached blocks SGLang counted against the pool do not).
  const LogOom* oom = first_oom(scan);
  if (oom && oom->allocated > 0 && s.graph_begin_avail && oom->free >= 0 && s.graph_begin_avail->value >= oom->free) {
    const int64_t taken = s.graph_begin_avail->value - oom->free;
    double f = static_cast<double>(oom->allocated - taken) / static_cast<double>(base);
    if (f > 0.05 && f < 1.0)
      return KnobEstimate{f, false, fmt::format("an ESTIMATE from the OOM report: ({} allocated by PyTorch - {} capture took) / {} the process could use",
                                                doctor_gib(oom->allocated), doctor_gib(taken), doctor_gib(base))};
  }
  return std::nullopt;
}

std::optional<LogKnobFix> sglang_fraction_fix(const LogScan& scan, double current, int64_t shortfall, int64_t margin) {
  const int64_t base = sglang_fraction_base(scan);
  if (base <= 0 || shortfall < 0) return std::nullopt;
  const double need = static_cast<double>(shortfall + margin);
  const double v = knob_step_down(current, shortfall + margin, static_cast<double>(base));
  if (v < 0.3) return std::nullopt;  // a static share this small leaves no KV cache worth serving: not a fix
  LogKnobFix r;
  r.value = v;
  r.freed = static_cast<int64_t>((current - v) * static_cast<double>(base));
  r.arithmetic = fmt::format("{:.3f} - ({} short + {} margin) / {} (the memory the fraction is a share of) = {:.4f}, rounded down to {:.2f}: "
                             "frees {} after the static pools",
                             current, doctor_gib(shortfall), doctor_gib(margin), doctor_gib(base), current - need / static_cast<double>(base), v,
                             doctor_gib(r.freed));
  const auto& s = scan.summary;
  if (s.kv_tokens && s.kv_bytes && s.kv_tokens->value > 0 && s.kv_bytes->value > 0) {
    const double per_token = static_cast<double>(s.kv_bytes->value) / static_cast<double>(s.kv_tokens->value);
    r.kv_tokens_lost = static_cast<int64_t>(std::ceil(static_cast<double>(r.freed) / per_token));
    r.kv_tokens_logged = s.kv_tokens->value;
  }
  return r;
}

bool sglang_log_fixes(const LogScan& scan, double frac, bool frac_implied, std::optional<Cause> cause, Diagnosis& dx) {
  const LogOom* oom = first_oom(scan);
  if (!oom || oom->request <= 0 || oom->free < 0) return false;
  int64_t shortfall = std::max<int64_t>(0, oom->request - oom->free);
  if (cause == Cause::OtherProcess)
    for (const auto& [pid, b] : oom->other_processes) shortfall += b;
  auto fx = sglang_fraction_fix(scan, frac, shortfall, kLogFixMargin);
  if (!fx) return false;
  const bool runtime = cause == Cause::ActivationPeak;
  dx.arithmetic.push_back(fmt::format("{} asked for {} with {} free: {} short; the fix adds a {} margin for {} (a GUESS)",
                                      runtime ? "the activation" : "capture", doctor_gib(oom->request), doctor_gib(oom->free), doctor_gib(shortfall),
                                      doctor_gib(kLogFixMargin), runtime ? "the rest of the step" : "the rest of capture and runtime peaks"));
  dx.arithmetic.push_back("--mem-fraction-static: " + fx->arithmetic);
  std::string cost;
  double lost_share = 0;
  if (fx->kv_tokens_lost && fx->kv_tokens_logged) {
    lost_share = static_cast<double>(*fx->kv_tokens_lost) / static_cast<double>(*fx->kv_tokens_logged);
    cost = fmt::format("; costs about {} of the {} KV tokens the log shows ({:.1f}%)", *fx->kv_tokens_lost, *fx->kv_tokens_logged, lost_share * 100);
  } else {
    cost = fmt::format("; costs {} of KV cache", doctor_gib(fx->freed));
  }
  const std::string implied = frac_implied ? fmt::format(" (from the implied {:.3f}: if you launched with another value, lower it by {:.2f})", frac, frac - fx->value)
                                           : "";
  const std::string basis = " (from the log's figures; --model and --gpu let the forecast confirm it)";
  DoctorFix fraction{"--mem-fraction-static", fmt::format("{:.2f}", fx->value),
                     fmt::format("frees {} after the static pools for {}{}{}{}", doctor_gib(fx->freed), runtime ? "activations" : "capture and runtime peaks",
                                 cost, implied, basis)};
  if (!runtime) {
    dx.fixes.push_back(fraction);
    const auto& bs = scan.summary.graph_bs;
    if (!bs.empty() && bs.back() > 1)
      dx.fixes.push_back({"--cuda-graph-max-bs", std::to_string(std::max<int64_t>(1, bs.back() / 2)),
                          "or keep the fraction and capture fewer, smaller graphs (slower decode at larger batches; how much it saves the log does not show)"});
    return true;
  }
  // Prefill activations grow with the chunk: the chunk whose failing request fits in what was free
  // (conservative: the step's other activations shrink with it too), as a power of two.
  int64_t chunk = 0;
  if (auto it = scan.flags.find("--chunked-prefill-size"); it != scan.flags.end()) try { chunk = std::stoll(it->second); } catch (...) {}
  if (chunk <= 0 && scan.summary.chunked_prefill_size) chunk = scan.summary.chunked_prefill_size->value;
  std::optional<DoctorFix> chunk_fix;
  if (chunk > 0) {
    const double fit = static_cast<double>(chunk) * static_cast<double>(oom->free) / static_cast<double>(oom->request);
    int64_t c = 1;
    while (c * 2 <= fit) c *= 2;
    if (c >= 256 && c < chunk) {  // below 256 tokens a chunk is mostly fixed buffers (a GUESS, as the TRT floor)
      dx.arithmetic.push_back(fmt::format("--chunked-prefill-size: {} x {} free / {} requested = {:.0f}, down to a power of two: {}", chunk,
                                          doctor_gib(oom->free), doctor_gib(oom->request), fit, c));
      chunk_fix = DoctorFix{"--chunked-prefill-size", std::to_string(c),
                            fmt::format("prefill in chunks of {} tokens instead of {}: the activation that failed shrinks to about {}; keeps the KV cache, "
                                        "costs prefill throughput on long prompts{}",
                                        c, chunk, doctor_gib(oom->request * c / chunk), basis)};
    }
  }
  // Smallest cost first: the fraction when it keeps at least 90% of the KV cache, else the chunk.
  if (chunk_fix && lost_share > 0.10) dx.fixes.push_back(*chunk_fix);
  dx.fixes.push_back(fraction);
  if (chunk_fix && lost_share <= 0.10) dx.fixes.push_back(*chunk_fix);
  return true;
}

std::optional<double> infer_sglang_fraction(const LogScan& scan, const Deployment& dep) {
  const auto& s = scan.summary;
  const bool at_capture = s.graph_begin_avail.has_value();
  const std::optional<LogFigure>& target = at_capture ? s.graph_begin_avail : s.pool_end_avail;
  if (!target) return std::nullopt;
  PlanOptions o;
  o.detail = false;
  if (s.init_avail) o.pre_load_free_bytes = s.init_avail->value;
  if (s.post_weights_avail) o.post_load_free_bytes = s.post_weights_avail->value;
  // Free memory where the log measured it, at fraction f (falls as f rises).
  auto free_at = [&](double f) -> std::optional<int64_t> {
    Deployment d = dep;
    d.flags.emplace_back("--mem-fraction-static", fmt::format("{:.4f}", f));
    try {
      Forecast fc = plan(d, o);
      if (fc.ranks.empty()) return std::nullopt;
      for (const auto& st : fc.ranks.front().stages)
        if (st.id == (at_capture ? StageId::Workspaces : StageId::KvPool)) return st.free_bytes_after;
    } catch (const InputError&) {
    }
    return std::nullopt;
  };
  // Below some fraction SGLang refuses (no KV cache): that side is "more free than logged".
  double lo = 0.30, hi = 0.99;
  auto fhi = free_at(hi);
  if (!fhi || *fhi > target->value) return std::nullopt;  // even 0.99 leaves more free than the log shows
  if (auto flo = free_at(lo); flo && *flo < target->value) return std::nullopt;
  for (int i = 0; i < 20; ++i) {
    double mid = (lo + hi) / 2;
    auto fm = free_at(mid);
    (!fm || *fm >= target->value ? lo : hi) = mid;
  }
  return std::round(lo * 1000) / 1000;
}

}  // namespace headroom
