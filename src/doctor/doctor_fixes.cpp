// The fixes: engine knobs searched with the planner on the rebuilt deployment, calibrated with
// the log's own figures (free memory before/after weights, free memory at capture begin, the
// least memory capture was seen to need). Without a deployment, directions and values come from
// the log's numbers alone (static_fixes).
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

#include "advise/search.h"
#include "headroom/engine_traits.h"

#include "doctor/doctor_internal.h"
#include "headroom/advise.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

namespace {

Deployment with_flag(const Deployment& d, const std::string& name, const std::string& value) {
  Deployment c = d;
  c.flags.erase(std::remove_if(c.flags.begin(), c.flags.end(), [&](const auto& f) { return f.first == name; }), c.flags.end());
  if (!value.empty()) c.flags.emplace_back(name, value);
  return c;
}

std::optional<Forecast> try_plan(const Deployment& d, const PlanOptions& o) {
  try {
    return plan(d, o);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

bool ok(const std::optional<Forecast>& f) { return f && f->verdict == Verdict::Fits; }

// The memory, tensor-parallel and context-length flags as each engine spells them (engine_traits.h):
// a fix must paste into that engine's command. (llama.cpp's fixes are doctor_llamacpp_fixes.cpp's.)
std::string knob_of(EngineKind k) { return std::string(traits(k).memory_flag); }
std::string tp_flag(std::string_view engine) {
  const EngineTraits* t = traits_by_name(engine);
  return t && !t->tp_flag.empty() ? std::string(t->tp_flag) : "--tensor-parallel-size";
}
std::string context_flag(std::string_view engine) {
  const EngineTraits* t = traits_by_name(engine);
  return t ? std::string(t->context_flag) : "--max-model-len";
}

// Largest value of the engine's memory knob whose forecast fits (worst case of every estimate).
constexpr int kTopFractionMilli = 980;  // the highest knob value a fix proposes (the engines' own ceiling is 1)
constexpr double kVllmDefaultUtilization = 0.9;  // vLLM CacheConfig.gpu_memory_utilization, every version
std::optional<std::pair<double, Forecast>> best_fraction(const Deployment& d, const PlanOptions& o) {
  const std::string knob = knob_of(d.engine);
  return advise::first_fitting_down(kTopFractionMilli, 300, 5, 1000.0, [&](double v) -> std::optional<Forecast> {
    auto f = try_plan(with_flag(d, knob, fmt::format("{:.3f}", v)), o);
    return ok(f) ? f : std::nullopt;
  });
}

// The first halving of an integer flag, from `start`, whose forecast fits (advise::first_fitting_halving).
std::optional<std::pair<int64_t, Forecast>> first_halving_that_fits(const Deployment& d, const PlanOptions& o, const std::string& flag,
                                                                    int64_t start, int64_t floor) {
  return advise::first_fitting_halving(start, floor, [&](int64_t v) -> std::optional<Forecast> {
    auto f = try_plan(with_flag(d, flag, std::to_string(v)), o);
    return ok(f) ? f : std::nullopt;
  });
}

std::string fmt_frac(double v) {
  std::string s = fmt::format("{:.3f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string effect_of(const Forecast& f) {
  return fmt::format("forecast: {}, KV cache {} tokens ({:.2f} requests at {} tokens), {} free at steady state", verdict_name(f.verdict),
                     f.kv_tokens, f.max_concurrency, f.context_len, human_bytes(f.headroom_bytes));
}

std::optional<int64_t> int_flag(const Deployment& d, const Forecast& f, const char* name) {
  const std::string* v = d.flag(name);
  if (!v) v = f.setting(name);
  if (!v) return std::nullopt;
  try {
    return std::stoll(*v);
  } catch (...) {
    return std::nullopt;
  }
}

// The command to paste: advise's launch_command (engine spelling, --env as shell assignments)
// with the first (recommended) fix applied (and the fixes marked together with it), and an
// allocator setting as its environment.
std::string command_with_fix(const Deployment& d, const FlagList& user_flags, const std::vector<DoctorFix>& fixes) {
  FlagList flags = user_flags;
  bool first = true;
  for (const auto& fx : fixes) {
    if (fx.flag.rfind("--", 0) != 0) continue;
    if (!first && !fx.together) break;  // the first (recommended) fix and those that go with it
    first = false;
    flags.erase(std::remove_if(flags.begin(), flags.end(), [&](const auto& f) { return f.first == fx.flag; }), flags.end());
    flags.emplace_back(fx.flag, fx.value);
  }
  std::string cmd = headroom::launch_command(d, flags);
  for (const auto& fx : fixes)
    if (fx.flag == "PYTORCH_CUDA_ALLOC_CONF") cmd = "PYTORCH_CUDA_ALLOC_CONF=" + fx.value + " " + cmd;
  return cmd;
}

bool same_value(const std::string& a, const std::string& b) {
  if (a == b) return true;
  try {
    size_t ia = 0, ib = 0;
    double x = std::stod(a, &ia), y = std::stod(b, &ib);
    if (ia == a.size() && ib == b.size()) return std::fabs(x - y) <= 1e-9 * std::max(1.0, std::fabs(x));
  } catch (...) {
  }
  auto lower = [](std::string s) { for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c))); return s; };
  return lower(a) == lower(b);
}

// The flags of the user's own command: those they set (launch line, non-default dump, the doctor's
// options) and, from a resolved dump, the values that differ from the engine's default in force.
FlagList command_flags(const Deployment& dep, const std::set<std::string>& user_set) {
  Deployment bare = dep;
  bare.flags.clear();
  for (const auto& f : dep.flags)
    if (user_set.count(f.first)) bare.flags.push_back(f);
  std::optional<Forecast> defaults = try_plan(bare, PlanOptions{});
  FlagList out;
  for (const auto& [k, v] : dep.flags) {
    if (user_set.count(k)) { out.emplace_back(k, v); continue; }
    const std::string* d = defaults ? defaults->setting(k) : nullptr;
    if (d && !same_value(*d, v)) out.emplace_back(k, v);
  }
  return out;
}

// The knob value that frees what the OOM report shows was missing (request - free) plus the
// margin, and the arithmetic. What a step of the knob frees: SGLang's fraction and vLLM's
// utilization are shares of the device (SGLang: of the memory free at start); TensorRT-LLM's
// fraction is a share of the memory free after the profile run, which the forecast's KV pool at
// the current value estimates (an ESTIMATE).
std::optional<std::pair<double, std::string>> fraction_from_shortfall(const Deployment& dep, const Forecast& base, const LogScan& scan,
                                                                      const std::string& knob, double cur) {
  const LogOom* oom = first_oom(scan);
  if (!oom || oom->request <= 0 || oom->free < 0 || cur <= 0) return std::nullopt;
  const int64_t margin = dep.engine == EngineKind::SGLang ? kLogFixMargin : budget_fix_margin(scan, oom);
  const int64_t need = std::max<int64_t>(0, oom->request - oom->free) + margin;
  double share = 0;
  if (dep.engine == EngineKind::SGLang) share = static_cast<double>(sglang_fraction_base(scan));
  else if (dep.engine == EngineKind::VLLM) share = static_cast<double>(oom->total > 0 ? oom->total : dep.capacity_bytes);
  else if (!base.ranks.empty())
    for (const auto& st : base.ranks.front().stages)
      if (st.id == StageId::KvPool) {
        int64_t t = 0;
        for (const auto& i : st.items) t += i.bytes;
        share = static_cast<double>(t) / cur;
      }
  if (share <= 0) return std::nullopt;
  const double v = knob_step_down(cur, need, share);
  if (v < 0.1) return std::nullopt;
  return std::make_pair(v, fmt::format("{} - ({} short + {} margin) / {} per unit of {} = {}", fmt_frac(cur), doctor_gib(need - margin),
                                       doctor_gib(margin), doctor_gib(static_cast<int64_t>(share)), knob, fmt_frac(v)));
}

}  // namespace

// The cause an out-of-memory failure at `stage` would have (classify's mapping), for a log that
// stops there without an error.
std::optional<Cause> stage_cause(const std::string& stage) {
  if (stage == "init" || stage == "weights") return Cause::WeightsDoNotFit;
  if (stage == "kv_pool" || stage == "cuda_graph") return Cause::StaticFractionTooHigh;
  if (stage == "warmup" || stage == "runtime") return Cause::ActivationPeak;
  return std::nullopt;
}

// vLLM's refusals about memory another process holds (classify: other_process_refusal): the
// startup check's fix is the largest utilization whose budget the free memory covers, from the
// message's own figures: u <= free / total, to the hundredth below. True when it applies (the
// profiling assertion has no knob that cures it: true with no fix).
static bool log_budget_fix(const LogScan& scan, Diagnosis& dx) {
  if (dx.cause != Cause::OtherProcess) return false;
  if (dx.stage == "init" && !scan.ooms.empty()) return true;  // an OOM before the weights: no knob cures it (classify)
  const LogError* startup = nullptr;
  bool profiling = false;
  for (const auto& e : scan.errors) {
    if (e.line != scan.failure_line) continue;
    if (e.kind == "vllm_free_memory_startup") startup = &e;
    if (e.kind == "vllm_profiling_error") profiling = true;
  }
  if (profiling) return true;
  const auto& s = scan.summary;
  if (!startup || !s.init_avail || !s.total || s.total->value <= 0) return false;
  const double share = static_cast<double>(s.init_avail->value) / static_cast<double>(s.total->value);
  double u = std::floor(share * 100.0 + 1e-9) / 100.0;
  if (u * static_cast<double>(s.total->value) > static_cast<double>(s.init_avail->value - 64 * MiB)) u -= 0.01;
  dx.fixes.push_back({"--gpu-memory-utilization", fmt_frac(u),
                      fmt::format("the budget the free memory covers: {} free of {} = {:.4f} of the device (from the log's own figures); or "
                                  "free the memory the other process holds",
                                  doctor_gib(s.init_avail->value), doctor_gib(s.total->value), share)});
  return true;
}

void plan_fixes(const LogScan& scan, const Deployment& dep, const std::set<std::string>& user_set, Diagnosis& dx) {
  const auto& s = scan.summary;
  if (log_budget_fix(scan, dx)) {
    dx.command = command_with_fix(dep, command_flags(dep, user_set), dx.fixes);
    return;
  }
  PlanOptions o;
  o.detail = true;
  if (dep.engine == EngineKind::SGLang) {
    if (s.init_avail) o.pre_load_free_bytes = s.init_avail->value;
    if (s.post_weights_avail) o.post_load_free_bytes = s.post_weights_avail->value;
  }
  const FlagList user_flags = command_flags(dep, user_set);
  auto base = try_plan(dep, o);
  if (!base) {
    dx.gaps.push_back("the rebuilt deployment could not be planned");
    static_fixes(scan, dx);
    return;
  }
  // Calibrate: what the log shows in use before capture beyond the model, and the least
  // memory capture was seen to need.
  const LogOom* oom = first_oom(scan);
  if (dep.engine == EngineKind::SGLang && s.graph_begin_avail && !base->ranks.empty()) {
    for (const auto& st : base->ranks.front().stages)
      if (st.id == StageId::Workspaces) {
        int64_t extra = st.free_bytes_after - s.graph_begin_avail->value;
        if (extra > 64 * MiB) {
          o.extra_before_capture_bytes = extra;
          dx.arithmetic.push_back(fmt::format("the log shows {} free at capture begin where the model of this deployment expects {}: "
                                              "{} more was in use (flags or allocations the log does not show); the fix below keeps it",
                                              doctor_gib(s.graph_begin_avail->value), doctor_gib(st.free_bytes_after), doctor_gib(extra)));
        }
      }
    if (dx.stage == "cuda_graph" && oom && oom->free >= 0 && oom->request > 0)
      o.graph_floor_bytes = s.graph_begin_avail->value - oom->free + oom->request;
  }
  auto calibrated = try_plan(dep, o);
  if (calibrated) base = calibrated;

  const bool no_error = dx.cause == Cause::NoErrorInLog;
  {
    // Per figure: what the log said, what the uncalibrated forecast said, and which the fixes use
    // (SGLang's free memory before / after weights and at capture begin replace the estimates).
    const bool sg = dep.engine == EngineKind::SGLang;
    auto cmp = [&](const char* what, std::optional<LogFigure> logged, std::optional<int64_t> forecast, bool bytes) {
      if (!logged || !forecast) return;
      double l = static_cast<double>(logged->value), f = static_cast<double>(*forecast);
      std::string lv = bytes ? doctor_gib(logged->value) : std::to_string(logged->value);
      std::string fv = bytes ? doctor_gib(*forecast) : std::to_string(*forecast);
      const std::string w = what;
      const bool used = sg && (w == "free before weights" || w == "free after weights" ||
                               (w == "free at capture begin" && o.extra_before_capture_bytes > 0));
      dx.calibration.push_back(fmt::format("{:<28} logged {:>14}  forecast {:>14}  ({:+.1f}%)  used: {:<8} line {}", what, lv, fv,
                                           l != 0 ? (f - l) / l * 100 : 0.0, used ? "logged" : "forecast", logged->line));
    };
    PlanOptions raw;  // the uncalibrated forecast, to show how far the model is from this setup
    auto pure = try_plan(dep, raw);
    if (pure && !pure->ranks.empty()) {
      const auto& r0 = pure->ranks.front();
      auto free_after = [&](StageId st) -> std::optional<int64_t> {
        for (const auto& x : r0.stages) if (x.id == st) return x.free_bytes_after;
        return std::nullopt;
      };
      auto sum = [&](StageId st) -> std::optional<int64_t> {
        for (const auto& x : r0.stages)
          if (x.id == st) { int64_t t = 0; for (const auto& i : x.items) t += i.bytes; return t; }
        return std::nullopt;
      };
      cmp("free before weights", s.init_avail, free_after(StageId::Init), true);
      cmp("weights", s.weights, sum(StageId::Weights), true);
      cmp("free after weights", s.post_weights_avail, free_after(StageId::Weights), true);
      cmp("KV cache tokens", s.kv_tokens, pure->kv_tokens, false);
      cmp("free at memory pool end", s.pool_end_avail, free_after(StageId::KvPool), true);
      cmp("free at capture begin", s.graph_begin_avail, free_after(StageId::Workspaces), true);
      cmp("CUDA-graph memory", s.graph_bytes, sum(StageId::CudaGraph), true);
      if (dep.engine == EngineKind::VLLM) cmp("KV cache memory", s.kv_bytes, sum(StageId::KvPool), true);
    }
    if (no_error) {  // the forecast says whether this deployment should start; the fixes below are conditional
      if (pure && pure->failure)
        dx.arithmetic.push_back(fmt::format("headroom's forecast of this deployment fails at stage '{}' on rank {}: {}", name(pure->failure->stage),
                                            pure->failure->rank, pure->failure->message));
      else if (pure)
        dx.arithmetic.push_back(fmt::format("headroom's forecast of this deployment starts ({}, KV cache {} tokens): the log's stop is not "
                                            "explained by the startup's own memory", verdict_name(pure->verdict), pure->kv_tokens));
      if (pure && !pure->failure) {  // nothing failed in the log, nothing fails in the forecast: no fix to offer
        dx.forecast_after_fix = *base;
        dx.command = command_with_fix(dep, user_flags, {});
        return;
      }
    }
  }
  if (dx.stage == "none") {
    if (auto best = best_fraction(dep, o); best) {
      const std::string knob = knob_of(dep.engine);
      double cur = 0;
      if (const std::string* v = base->setting(knob)) try { cur = std::stod(*v); } catch (...) {}
      if (best->first > cur + 0.015 && best->second.kv_tokens > base->kv_tokens)
        dx.fixes.push_back({knob, fmt_frac(best->first), "optional, more KV capacity within the forecast's margins; " + effect_of(best->second)});
      dx.forecast_after_fix = dx.fixes.empty() ? *base : best->second;
    } else {
      dx.forecast_after_fix = *base;
    }
    dx.command = command_with_fix(dep, user_flags, dx.fixes);
    return;
  }

  if (dx.cause == Cause::OomStageUnknown) {  // the forecast fits: the fix for each reading, from the log's numbers
    static_fixes(scan, dx);
    dx.forecast_after_fix = *base;
    dx.command = command_with_fix(dep, user_flags, {});
    return;
  }
  const std::string knob = knob_of(dep.engine);
  const bool sglang = dep.engine == EngineKind::SGLang;
  // A log that stops without an error: the fixes for running out of memory where it stopped,
  // each said to depend on that.
  const std::string if_oom = !no_error ? ""
                             : dx.stage_basis == StageBasis::Guess ? fmt::format("if the failure was in {} and ran out of memory: ", dx.stage)
                                                         : "if it ran out of memory there: ";
  auto add = [&](const std::string& flag, const std::string& value, const Forecast& f, const std::string& why) {
    dx.fixes.push_back({flag, value, if_oom + why + "; " + effect_of(f)});
    if (!dx.forecast_after_fix) dx.forecast_after_fix = f;
  };
  auto best = best_fraction(dep, o);
  const std::optional<Cause> cause = no_error ? stage_cause(dx.stage) : dx.cause;
  // Causes whose cure is a smaller static share: a "fix" that raises the fraction (the forecast
  // fitting where the log failed) would point the wrong way, so it is not offered.
  const bool lower_only = cause == Cause::StaticFractionTooHigh || cause == Cause::GraphCaptureHeadroom || cause == Cause::OtherProcess ||
                          cause == Cause::ActivationPeak;
  double cur_frac = 0;
  if (const std::string* v = base->setting(knob)) try { cur_frac = std::stod(*v); } catch (...) {}
  auto add_fraction = [&](const std::string& why) {
    if (!best) return;
    if (lower_only && cur_frac > 0 && best->first >= cur_frac) {
      // The forecast fits where the log failed: the log's own shortfall sizes the step down.
      if (auto v = fraction_from_shortfall(dep, *base, scan, knob, cur_frac)) {
        if (auto f = try_plan(with_flag(dep, knob, fmt_frac(v->first)), o))
          add(knob, fmt_frac(v->first), *f,
              fmt::format("the forecast fits at {} {} where the log failed; from the log's figures: {}", knob, fmt_frac(cur_frac), v->second));
        return;
      }
      dx.gaps.push_back(fmt::format("the forecast fits at {} {} where the log failed: no lower value is computed", knob, fmt_frac(cur_frac)));
      return;
    }
    add(knob, fmt_frac(best->first), best->second, why);
  };

  // SGLang: the value the log's own arithmetic gives (what the doctor says with no model), held
  // against the calibrated forecast, so the reader sees whether the forecast confirms it.
  if (sglang && cur_frac > 0 && !no_error && oom && oom->request > 0 && oom->free >= 0 &&
      (cause == Cause::StaticFractionTooHigh || cause == Cause::GraphCaptureHeadroom || cause == Cause::ActivationPeak))
    if (auto lf = sglang_fraction_fix(scan, cur_frac, std::max<int64_t>(0, oom->request - oom->free), kLogFixMargin)) {
      auto f = try_plan(with_flag(dep, knob, fmt_frac(lf->value)), o);
      const bool confirmed = ok(f) && best && std::fabs(best->first - lf->value) < 0.0151;
      dx.arithmetic.push_back(fmt::format("from the log's figures alone: {} {} ({}); the calibrated forecast at {}: {}{}", knob, fmt_frac(lf->value),
                                          lf->arithmetic, fmt_frac(lf->value), f ? verdict_name(f->verdict) : "not planned",
                                          confirmed ? " - confirmed"
                                          : best    ? fmt::format(" - it counts peaks the log had not reached, and gives {}", fmt_frac(best->first))
                                                    : std::string()));
    }
  if (cause == Cause::Fragmentation) {
    dx.fixes.push_back({"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True",
                        "lets PyTorch grow one segment instead of leaving free memory split into blocks too small for the request"});
  }
  if (cause == Cause::StaticFractionTooHigh || cause == Cause::GraphCaptureHeadroom || cause == Cause::OtherProcess) {
    add_fraction(fmt::format("the largest {} whose forecast keeps room for capture and runtime peaks", knob));
    if (sglang) {
      auto cur_bs = int_flag(dep, *base, "--cuda-graph-max-bs");
      if (auto r = first_halving_that_fits(dep, o, "--cuda-graph-max-bs", cur_bs ? *cur_bs / 2 : 256, 1))
        add("--cuda-graph-max-bs", std::to_string(r->first), r->second, "or keep the fraction and capture fewer batch sizes");
    } else if (dep.engine == EngineKind::VLLM) {
      auto f = try_plan(with_flag(dep, "--enforce-eager", "true"), o);
      if (f && f->verdict != Verdict::Oom) add("--enforce-eager", "true", *f, "or skip CUDA graphs (slower decode)");
    }
  } else if (cause == Cause::StaticFractionTooLow) {
    add_fraction(fmt::format("the largest {} that leaves a KV cache and still fits every later stage", knob));
    if (dep.engine == EngineKind::VLLM) {
      auto cur = int_flag(dep, *base, "--max-num-seqs");
      if (auto r = first_halving_that_fits(dep, o, "--max-num-seqs", cur ? *cur / 2 : 256, 8))
        add("--max-num-seqs", std::to_string(r->first), r->second, "a smaller profiled sampler/activation peak");
    }
    if (!best) {
      Deployment d2 = dep;
      d2.par.tp *= 2;
      d2.gpus = std::max(d2.gpus, d2.par.tp * d2.par.pp);
      if (auto f = try_plan(d2, o); f && f->verdict != Verdict::Refused)
        add(tp_flag(engine_kind_name(dep.engine)), std::to_string(d2.par.tp), *f, "no fraction works on this many GPUs: spread the weights over twice as many");
      // No fraction fits at this context: the longest context at which one does, with that
      // fraction (both are needed). Halving from the forecast's context, then the largest multiple
      // of 1,024 below the next halving step that still fits at that fraction.
      const std::string lenflag = context_flag(engine_kind_name(dep.engine));
      for (int64_t len = base->context_len / 2; len >= 1024 && dep.engine != EngineKind::TRTLLM; len /= 2) {
        Deployment dl = with_flag(dep, lenflag, std::to_string(len));
        if (auto top = try_plan(with_flag(dl, knob, fmt::format("{:.3f}", kTopFractionMilli / 1000.0)), o); !top || top->verdict == Verdict::Refused)
          continue;
        auto b = best_fraction(dl, o);
        if (!b) continue;
        // The smallest change first: a vLLM run below the engine's default utilization (0.9 in every
        // version, CacheConfig) is raised to the smallest value from the default up that fits at this
        // context, and the context is then the longest at that value; the largest fraction the
        // forecast allows (up to 0.98) leaves no margin for what it does not see (a display, another process).
        if (dep.engine == EngineKind::VLLM && cur_frac > 0 && cur_frac < kVllmDefaultUtilization)
          for (int m = static_cast<int>(kVllmDefaultUtilization * 100 + 0.5); m < static_cast<int>(b->first * 100 + 0.5); ++m)
            if (auto d = try_plan(with_flag(dl, knob, fmt::format("{:.3f}", m / 100.0)), o); ok(d)) {
              b = std::make_pair(m / 100.0, *d);
              break;
            }
        int64_t lo = len, hi = std::min<int64_t>(len * 2 - 1024, base->context_len);
        const std::string fv = fmt::format("{:.3f}", b->first);
        while (lo + 1024 <= hi) {
          int64_t mid = (lo + hi + 1024) / 2 / 1024 * 1024;
          if (mid <= lo) break;
          if (ok(try_plan(with_flag(with_flag(dep, lenflag, std::to_string(mid)), knob, fv), o))) lo = mid; else hi = mid - 1024;
        }
        auto f = try_plan(with_flag(with_flag(dep, lenflag, std::to_string(lo)), knob, fv), o);
        if (!ok(f)) break;
        add(knob, fmt_frac(b->first), *f, fmt::format("no fraction fits at a {}-token context: raise it together with a shorter context", base->context_len));
        add(lenflag, std::to_string(lo), *f, fmt::format("the longest context that fits at {} {}", knob, fmt_frac(b->first)));
        dx.fixes.back().together = true;
        break;
      }
    }
  } else if (cause == Cause::KvTooSmallForContext) {
    const std::string lenflag = context_flag(engine_kind_name(dep.engine));
    // The longest context the log's own KV memory holds: vLLM's "estimated maximum model length
    // is M" when printed (kv_cache_utils.py estimate_max_model_len), else L x available / needed
    // from "max seq len (L), (X GiB KV cache is needed ... available KV cache memory (Y GiB)" (the
    // older message without M) rounded down to 16 tokens: exact when the KV grows in proportion to
    // the length (full attention), an upper bound otherwise.
    int64_t from_log = 0;
    std::string from_log_why;
    const LogError* v0_capacity = nullptr;  // V0: "... the maximum number of tokens that can be stored in KV cache (N)"
    for (const auto& e : scan.errors)
      if (e.kind == "vllm_max_seq_len" && e.value && *e.value > 0 && !s.estimated_max_model_len && !s.kv_needed) v0_capacity = &e;
    if (s.estimated_max_model_len && s.estimated_max_model_len->value > 0) {
      from_log = s.estimated_max_model_len->value;
      from_log_why = "the longest context vLLM itself estimated from the KV memory it had";
    } else if (v0_capacity) {
      // V0 worker.py raise_if_cache_size_invalid refuses max_model_len > block_size x num_gpu_blocks,
      // the N it printed: N itself passes the check.
      from_log = *v0_capacity->value;
      from_log_why = fmt::format("the most tokens vLLM's KV cache holds, as it printed (line {}): its check passes at that length",
                                 v0_capacity->line);
    } else if (dep.engine == EngineKind::VLLM && s.kv_needed && s.kv_bytes && s.context_len && s.kv_needed->value > 0 &&
               s.kv_bytes->value > 0 && s.kv_bytes->value < s.kv_needed->value) {
      from_log = static_cast<int64_t>(static_cast<double>(s.context_len->value) * static_cast<double>(s.kv_bytes->value) /
                                      static_cast<double>(s.kv_needed->value)) / 16 * 16;
      from_log_why = fmt::format("the longest context the log's {} of KV memory holds, taking KV to grow in proportion to length ({} x {} / {})", doctor_gib(s.kv_bytes->value),
                                 s.context_len->value, doctor_gib(s.kv_bytes->value), doctor_gib(s.kv_needed->value));
    }
    if (from_log >= 16)
      if (auto f = try_plan(with_flag(dep, lenflag, std::to_string(from_log)), o)) {
        // V0's printed capacity passes its KV check; a length at which the forecast runs out of
        // memory in a later stage is not offered (the search below picks one that holds).
        if (v0_capacity && !s.estimated_max_model_len && (f->verdict == Verdict::Oom || f->verdict == Verdict::Refused))
          from_log = 0;
        else
          add(lenflag, std::to_string(from_log), *f, from_log_why);
      }
    // Else the longest context whose single request fits in the forecast.
    // Fits in the worst case first; failing that (a stage the length does not touch, e.g. vLLM's
    // sampler warm-up after the pool, is at risk at every length), the longest whose one request
    // the KV cache holds even at the unfavourable estimates, its forecast saying "at risk".
    int64_t found = 0;
    for (bool accept_risk : {false, true}) {
      int64_t lo = 1024, hi = base->context_len > 0 ? base->context_len : 131072;
      if (from_log >= 16 || found > 0) break;
      while (lo <= hi) {
        int64_t mid = (lo + hi) / 2 / 1024 * 1024;
        if (mid < 1024) break;
        auto f = try_plan(with_flag(dep, lenflag, std::to_string(mid)), o);
        if (ok(f) || (accept_risk && f && f->verdict == Verdict::AtRisk && !f->refused_at_worst)) { found = mid; lo = mid + 1024; } else { hi = mid - 1024; }
      }
    }
    if (found > 0)
      if (auto f = try_plan(with_flag(dep, lenflag, std::to_string(found)), o))
        add(lenflag, std::to_string(found), *f, "the longest context one request can hold");
    // vLLM's KV budget is what --gpu-memory-utilization leaves after the weights and the profile
    // run's activation peak, which grows with --max-num-batched-tokens (gpu_worker.py
    // determine_available_memory): a smaller batch keeps the length.
    if (dep.engine == EngineKind::VLLM)
      if (auto cur = int_flag(dep, *base, "--max-num-batched-tokens"); cur && *cur > 2048)
        if (auto r = first_halving_that_fits(dep, o, "--max-num-batched-tokens", *cur / 2, 2048))
          add("--max-num-batched-tokens", std::to_string(r->first), r->second,
              "or keep the length: a smaller profiled activation peak leaves the KV cache more");
    bool kv_bytes_given = dep.flag("--kv-cache-memory-bytes") != nullptr;  // vLLM then ignores the fraction
    for (const auto& e : scan.evidence) kv_bytes_given = kv_bytes_given || e.kind == "vllm.kv_cache_memory_bytes";
    if (!kv_bytes_given) add_fraction(fmt::format("or keep the length and give the KV cache more memory with {}", knob));
  } else if (cause == Cause::ActivationPeak) {
    if (sglang) {
      auto cp = int_flag(dep, *base, "--chunked-prefill-size");
      if (auto r = first_halving_that_fits(dep, o, "--chunked-prefill-size", cp && *cp > 0 ? *cp / 2 : 4096, 512))
        add("--chunked-prefill-size", std::to_string(r->first), r->second, "smaller prefill chunks, smaller activation peak");
    } else {
      // vLLM's profile run is sized by max_num_seqs / max_num_batched_tokens, TensorRT-LLM's by
      // max_batch_size / max_num_tokens (its dummy requests fill max_num_tokens).
      static constexpr std::array<const char*, 2> kVllm{"--max-num-seqs", "--max-num-batched-tokens"}, kTrt{"--max_num_tokens", "--max_batch_size"};
      for (const char* fl : dep.engine == EngineKind::TRTLLM ? kTrt : kVllm) {
        auto cur = int_flag(dep, *base, fl);
        if (auto r = first_halving_that_fits(dep, o, fl, cur ? *cur / 2 : 256, 8)) add(fl, std::to_string(r->first), r->second, "a smaller profiled peak");
      }
      if (dep.flag("--no-enable-chunked-prefill"))
        if (auto f = try_plan(with_flag(with_flag(dep, "--no-enable-chunked-prefill", ""), "--enable-chunked-prefill", "true"), o))
          add("--enable-chunked-prefill", "true", *f, "prefill long prompts in chunks instead of at once");
      auto len = int_flag(dep, *base, "--max-model-len");
      if (len && *len > 8192)
        if (auto f = try_plan(with_flag(dep, "--max-model-len", std::to_string(*len / 2)), o))
          add("--max-model-len", std::to_string(*len / 2), *f, "shorter sequences, smaller per-request peaks");
    }
    add_fraction(fmt::format("or lower {} to leave the activations more room", knob));
  } else if (cause == Cause::WeightsDoNotFit) {
    Deployment d2 = dep;
    d2.par.tp *= 2;
    d2.gpus = std::max(d2.gpus, d2.par.tp * d2.par.pp);
    if (auto f = try_plan(d2, o)) add(tp_flag(engine_kind_name(dep.engine)), std::to_string(d2.par.tp), *f, "spread the weights over twice as many GPUs");
  }
  if (dx.fixes.empty() && !no_error) {
    dx.gaps.push_back("no setting of the engine's knobs fits in the forecast; see the forecast below");
    dx.forecast_after_fix = *base;
    // The log's own arithmetic still holds where the forecast finds nothing (its figures win over the
    // estimates): the fix it gives, said to rest on the log alone.
    if (cause != Cause::WeightsDoNotFit && cause != Cause::NotOom) static_fixes(scan, dx);
    for (auto& f : dx.fixes) {
      const std::string note = " (from the log's numbers alone; give --model and --gpu for a planned value and its forecast)";
      if (auto p = f.effect.find(note); p != std::string::npos)
        f.effect.replace(p, note.size(), " (from the log's numbers alone: the forecast of this deployment finds no setting that fits)");
    }
  }
  dx.command = command_with_fix(dep, user_flags, dx.fixes);
}

void static_fixes(const LogScan& scan, Diagnosis& dx) {
  if (log_budget_fix(scan, dx)) return;
  const auto& s = scan.summary;
  const LogOom* oom = first_oom(scan);
  const bool sglang = dx.engine == "sglang";
  const std::string knob = sglang ? "--mem-fraction-static" : dx.engine == "vllm" ? "--gpu-memory-utilization" : "--kv_cache_free_gpu_memory_fraction";
  std::optional<double> frac;
  if (auto it = scan.flags.find(knob); it != scan.flags.end()) try { frac = std::stod(it->second); } catch (...) {}
  if (s.mem_fraction_static && !frac) frac = s.mem_fraction_static->value;
  // SGLang's fraction when neither given nor printed: implied by the log's figures (log_knob.cpp).
  std::optional<KnobEstimate> implied;
  if (sglang) implied = sglang_fraction_from_log(scan);
  if (!frac && implied) {
    frac = implied->value;
    dx.arithmetic.push_back(fmt::format("--mem-fraction-static is not in the log; {:.3f} is implied: {}", implied->value, implied->basis));
  }
  if (s.gpu_memory_utilization && !frac) frac = s.gpu_memory_utilization->value;
  // Neither given nor printed: vLLM's default (CacheConfig.gpu_memory_utilization = 0.9 in every
  // version). SGLang's default depends on the GPU, the parallelism and the version: not assumed.
  if (!frac && dx.engine == "vllm") frac = 0.9;
  const std::string note = " (from the log's numbers alone; give --model and --gpu for a planned value and its forecast)";
  const bool no_error = dx.cause == Cause::NoErrorInLog;
  const std::string if_oom = !no_error ? ""
                             : dx.stage_basis == StageBasis::Guess ? fmt::format("if the failure was in {} and ran out of memory: ", dx.stage)
                                                         : "if it ran out of memory there: ";
  auto add = [&](const std::string& flag, const std::string& value, const std::string& effect) {
    dx.fixes.push_back({flag, value, if_oom + effect + note});
  };
  const std::optional<Cause> cause = no_error ? stage_cause(dx.stage) : dx.cause;
  int64_t total = oom && oom->total > 0 ? oom->total : (s.total ? s.total->value : 0);

  if (cause == Cause::Fragmentation) add("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", "reuses the reserved-but-unallocated memory");
  if (cause == Cause::OomStageUnknown) {
    // One fix per reading of the stage (classify explains why the log does not decide).
    if (frac) {
      int64_t need = GiB;  // margin for the rest of capture and runtime peaks (GUESS)
      if (oom && oom->request > 0) need += oom->request;
      double base = total > 0 ? static_cast<double>(total) : 80.0 * GiB;
      double v = std::floor((*frac - static_cast<double>(need) / base) * 100.0) / 100.0;
      add(knob, fmt_frac(std::max(0.3, v)),
          fmt::format("if the OOM came after the static pools (capture, warm-up, serving): frees about {} outside the engine's budget",
                      doctor_gib(static_cast<int64_t>((*frac - std::max(0.3, v)) * base))));
    }
    int tp = 1;
    for (const char* k : {"--tp-size", "--tensor-parallel-size", "--tp", "--tp_size"})
      if (auto it = scan.flags.find(k); it != scan.flags.end()) try { tp = std::stoi(it->second); } catch (...) {}
    add(tp_flag(dx.engine), std::to_string(tp * 2),
        "if the OOM came while loading the weights: spreads them over twice as many GPUs");
    // The reading of the guessed stage first (doctor_place.cpp); both stay, each conditional.
    if (dx.stage == "weights" && dx.fixes.size() == 2) std::swap(dx.fixes[0], dx.fixes[1]);
    return;
  }
  if (sglang && frac && (cause == Cause::StaticFractionTooHigh || cause == Cause::GraphCaptureHeadroom || cause == Cause::OtherProcess ||
                         cause == Cause::ActivationPeak) && sglang_log_fixes(scan, *frac, implied && !implied->exact && *frac == implied->value, cause, dx))
    return;
  if ((cause == Cause::StaticFractionTooHigh || cause == Cause::GraphCaptureHeadroom || cause == Cause::OtherProcess) && frac) {
    // What was missing (request - free, as the OOM report shows it) plus the margin for what still
    // comes; SGLang's fallback (no figures for sglang_log_fixes) keeps the whole request + 1 GiB.
    int64_t need = kLogFixMargin;
    if (oom && oom->request > 0) need += oom->request;
    if (!sglang && oom && oom->request > 0 && oom->free >= 0) {
      const int64_t margin = budget_fix_margin(scan, oom);
      need = std::max<int64_t>(0, oom->request - oom->free) + margin;
      dx.arithmetic.push_back(fmt::format("{} asked for {} with {} free: {} short; the fix adds {} for what still comes (the larger of the request "
                                          "and the capture the log shows, at most 1 GiB)",
                                          dx.stage == "cuda_graph" ? "capture" : "the allocation", doctor_gib(oom->request), doctor_gib(oom->free),
                                          doctor_gib(std::max<int64_t>(0, oom->request - oom->free)), doctor_gib(margin)));
    }
    if (cause == Cause::OtherProcess && oom) for (const auto& [pid, b] : oom->other_processes) need += b;
    double base = total > 0 ? static_cast<double>(total) : 80.0 * GiB;
    double v = knob_step_down(*frac, need, base);
    if (!sglang && total > 0)
      dx.arithmetic.push_back(fmt::format("{}: {} - {} / {} = {}", knob, fmt_frac(*frac), doctor_gib(need), doctor_gib(total), fmt_frac(std::max(0.3, v))));
    add(knob, fmt_frac(std::max(0.3, v)), fmt::format("frees about {} for capture and runtime", doctor_gib(static_cast<int64_t>((*frac - v) * base))));
    if (sglang && !s.graph_bs.empty() && s.graph_bs.back() > 1) add("--cuda-graph-max-bs", std::to_string(std::max<int64_t>(1, s.graph_bs.back() / 2)), "captures fewer, smaller graphs");
    if (dx.engine == "vllm") add("--enforce-eager", "true", "skips CUDA-graph capture (slower decode)");
  } else if (cause == Cause::StaticFractionTooLow) {
    const LogError* e = nullptr;
    for (const auto& x : scan.errors) if (x.suggested) { e = &x; break; }
    if (e && e->suggested) add(knob, fmt_frac(std::ceil((*e->suggested + 0.02) * 100) / 100), "the engine's own minimum plus room for a KV cache");
    else if (sglang && s.init_avail && s.post_weights_avail)
      add(knob, fmt_frac(std::min(0.98, std::ceil((1.0 - to_gib(s.post_weights_avail->value) / to_gib(s.init_avail->value) + 0.05) * 100) / 100)),
          "1 - A/P plus 5% of P for the KV cache");
    else if (frac) {
      double v = std::min(0.98, *frac + 0.05);
      if (dx.engine == "vllm") {  // V1's default max_num_seqs (1024) inflates the profiled sampler/activation peak on small cards
        int64_t cur = 1024;
        if (auto it = scan.flags.find("--max-num-seqs"); it != scan.flags.end()) try { cur = std::stoll(it->second); } catch (...) {}
        if (cur > 64) {
          add("--max-num-seqs", std::to_string(std::max<int64_t>(8, cur / 4)), "a smaller profiled sampler/activation peak");
          dx.fixes.back().from = std::to_string(cur);
        }
      }
      if (s.kv_bytes && s.kv_bytes->value < 0 && total > 0) v = std::min(0.98, std::ceil((*frac + (-static_cast<double>(s.kv_bytes->value) + GiB) / static_cast<double>(total)) * 100) / 100);
      add(knob, fmt_frac(v), "a larger budget for the KV cache");
    }
  } else if (cause == Cause::KvTooSmallForContext) {
    for (const auto& e : scan.errors)
      if (e.kind == "vllm_max_seq_len" && e.value) { add("--max-model-len", std::to_string(*e.value), "vLLM's own estimate of the longest context that fits"); break; }
    bool kv_bytes_given = false;  // the fraction is ignored then (classify)
    for (const auto& e : scan.evidence) kv_bytes_given = kv_bytes_given || e.kind == "vllm.kv_cache_memory_bytes";
    if (frac && !kv_bytes_given) add(knob, fmt_frac(std::min(0.98, *frac + 0.03)), "or more memory for the KV cache");
  } else if (cause == Cause::ActivationPeak) {
    if (sglang) add("--chunked-prefill-size", "4096", "smaller prefill chunks");
    else if (dx.engine == "trtllm") {
      // The profiling run's dummy requests fill max_num_tokens (default 8192); halved, with a floor
      // of 256 tokens (GUESS: below that the profiled peak is mostly fixed buffers).
      int64_t cur = 8192;
      if (auto it = scan.flags.find("--max_num_tokens"); it != scan.flags.end()) try { cur = std::stoll(it->second); } catch (...) {}
      add("--max_num_tokens", std::to_string(std::max<int64_t>(256, cur / 2)), "a smaller profiled activation peak");
    } else {
      auto it = scan.flags.find("--max-num-seqs");
      int64_t cur = 1024;
      if (it != scan.flags.end()) try { cur = std::stoll(it->second); } catch (...) {}
      // Chunked prefill off: vLLM sets max_num_batched_tokens to at least max_model_len
      // (config/scheduler.py, V0 and V1), so the profile run prefills a whole max-length sequence in
      // one step and its activations scale with the context. Chunking brings the step back to the
      // default token budget: the fix that costs least, before any knob that shrinks the cache or the batch.
      auto chunk_off = scan.flags.find("--enable-chunked-prefill");
      if (scan.flags.count("--no-enable-chunked-prefill") || (chunk_off != scan.flags.end() && chunk_off->second == "false")) {
        std::string len = "max_model_len";
        if (auto l = scan.flags.find("--max-model-len"); l != scan.flags.end()) len = l->second;
        add("--enable-chunked-prefill", "true",
            fmt::format("prefill in chunks: with chunked prefill off, the profiled step holds {} tokens (max_num_batched_tokens >= max_model_len)", len));
        dx.fixes.back().from = "false";
      }
      add("--max-num-seqs", std::to_string(std::max<int64_t>(1, cur / 4)), "a smaller profiled peak");
      dx.fixes.back().from = std::to_string(cur);
      if (auto l = scan.flags.find("--max-model-len"); l != scan.flags.end())
        try { add("--max-model-len", std::to_string(std::stoll(l->second) * 3 / 4), "shorter sequences"); } catch (...) {}
    }
    if (frac) add(knob, fmt_frac(std::max(0.3, *frac - 0.03)), "more room for activations");
  } else if (cause == Cause::WeightsDoNotFit) {
    int tp = 1;
    for (const char* k : {"--tp-size", "--tensor-parallel-size", "--tp_size"})
      if (auto it = scan.flags.find(k); it != scan.flags.end()) try { tp = std::stoi(it->second); } catch (...) {}
    add(tp_flag(dx.engine), std::to_string(tp * 2), "spreads the weights over twice as many GPUs");
  }
}

}  // namespace headroom
