// One setting of the primary knob planned and judged against the safety margin, and the
// bisection for the largest safe value. A fraction that is too high runs a later stage out of
// memory (or, at its worst-case estimates, below the margin); one that is too low leaves the
// KV pool empty or too small (the engine refuses). Larger values never free memory for the
// later stages, so "too high" is an upper set of the grid and bisection finds its edge.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "advise/search.h"
#include "headroom/engine_traits.h"
#include "headroom/units.h"

namespace headroom::advise {

std::string Primary::format(double x) const {
  if (bytes) return std::to_string(static_cast<int64_t>(x));
  // The grid is in hundredths (or finer); print as a person writes it: 0.88, 0.885.
  std::string s = fmt::format("{:.4f}", x);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

int Primary::steps() const { return step > 0 ? static_cast<int>(std::floor((hi - lo) / step + 1e-9)) : 0; }

double Primary::at(int i) const {
  double x = lo + step * i;
  if (!bytes) x = std::round(x * 10000.0) / 10000.0;
  return std::min(x, hi);
}

Primary primary_for(const Deployment& d, const TuneGoal& g, int64_t real_capacity) {
  const EngineKnobs& k = knobs_for(d.engine);
  Primary p;
  if (!k.kv_bytes.empty() && (d.flag(k.kv_bytes) || d.flag("--kv-cache-memory")) && !is_fixed(g, k.kv_bytes)) {
    // The user sizes vLLM's KV cache in bytes: tune that instead of the utilization.
    p.flag = d.flag(k.kv_bytes) ? k.kv_bytes : "--kv-cache-memory";
    p.bytes = true;
    p.step = 64.0 * static_cast<double>(MiB);
    p.lo = p.step;
    p.hi = std::floor(static_cast<double>(d.capacity_bytes) / p.step) * p.step;
    return p;
  }
  p.flag = k.fraction;
  p.lo = k.lo;
  p.hi = k.hi;
  p.step = k.step;
  if (d.engine == EngineKind::VLLM && real_capacity > d.capacity_bytes && d.capacity_bytes > 0)
    p.scale = static_cast<double>(real_capacity) / static_cast<double>(d.capacity_bytes);
  return p;
}

namespace {

Point summarize(const Forecast& f, int64_t margin) {
  Point pt;
  pt.verdict = f.verdict;
  pt.kv_tokens = f.kv_tokens;
  pt.max_running = f.max_running_requests;
  pt.context = f.context_len;
  pt.failure = f.failure;
  pt.min_free_worst = INT64_MAX;
  pt.capture_free_worst = INT64_MAX;
  for (const auto& r : f.ranks) {
    int64_t after_init = r.capacity_bytes;
    for (const auto& s : r.stages) {
      // The stage's lowest point: a temporary freed within it (vLLM's sampler warm-up) peaks there.
      const int64_t low_point = std::min(s.free_worst, s.min_free_worst);
      if (low_point < pt.min_free_worst) {
        pt.min_free_worst = low_point;
        pt.limit = name(s.id);
      }
      if (s.id == StageId::Init) after_init = s.free_bytes_after;
      if (s.id == StageId::Weights) {
        pt.weights_bytes = std::max(pt.weights_bytes, after_init - s.free_bytes_after);
        if (s.free_bytes_after < 0) pt.weights_overflow = true;
      }
      if (s.id == StageId::CudaGraph) pt.capture_free_worst = std::min(pt.capture_free_worst, low_point);
    }
  }
  if (pt.min_free_worst == INT64_MAX) pt.min_free_worst = 0;
  if (pt.capture_free_worst == INT64_MAX) pt.capture_free_worst = pt.min_free_worst;  // no capture (eager)

  switch (f.verdict) {
    case Verdict::Refused:
      // No room left for the KV pool (SGLang "Not enough memory", vLLM "No available memory for
      // the cache blocks"): the fraction is too low. vLLM's start-up check "free memory ... is
      // less than desired GPU memory utilization" (stage init) means it is too high.
      pt.side = (f.failure && f.failure->stage == StageId::Init) ? Side::High : Side::Low;
      break;
    case Verdict::Oom:
      pt.side = Side::High;
      break;
    case Verdict::AtRisk:
    case Verdict::Fits:
      if (pt.min_free_worst < margin) pt.side = Side::High;
      // Every stage keeps its margin yet the engine model says at risk: at the unfavourable
      // estimates the engine would refuse a KV pool that small (vLLM) -- too low.
      else if (f.verdict == Verdict::AtRisk || f.kv_tokens <= 0) pt.side = Side::Low;
      else pt.side = Side::Ok;
      break;
  }
  if (pt.weights_overflow) pt.side = Side::High;  // no value helps; callers read weights_overflow
  if (f.failure && pt.side != Side::Ok) pt.limit = name(f.failure->stage);
  pt.safe = pt.side == Side::Ok;
  return pt;
}

}  // namespace

Point evaluate(Deployment& d, const Primary& p, double x, int64_t margin, const PlanOptions& opt, int* plans, Forecast* keep, Memo* memo) {
  if (p.bytes) {
    set_flag(d, p.flag, std::to_string(static_cast<int64_t>(x)));
  } else {
    double planned = x * p.scale;
    if (planned > 1.0) {  // the budget would exceed what --keep-free leaves: too high
      Point pt;
      pt.x = x;
      pt.side = Side::High;
      pt.verdict = Verdict::Refused;
      pt.limit = "init";
      return pt;
    }
    set_flag(d, p.flag, p.scale == 1.0 ? p.format(x) : fmt::format("{:.6f}", planned));
  }
  std::string key;
  if (memo && !keep) {
    for (const auto& [k, v] : d.flags) key += k + '\x1f' + v + '\x1e';
    if (auto it = memo->find(key); it != memo->end()) return it->second;
  }
  Forecast f = plan(d, opt);
  if (plans) ++*plans;
  Point pt = summarize(f, margin);
  pt.x = x;
  if (keep) *keep = std::move(f);
  else if (memo) memo->emplace(std::move(key), pt);
  return pt;
}

PrimaryResult search_primary(Deployment& d, const Primary& p, int64_t margin, int* plans, Memo* memo, std::optional<double> known_ok) {
  PrimaryResult r;
  PlanOptions opt;
  opt.detail = false;
  auto eval = [&](int i) {
    r.tried.push_back(evaluate(d, p, p.at(i), margin, opt, plans, nullptr, memo));
    return r.tried.back();
  };
  // Bisect (lo not High, hi High) down to adjacent steps; r.best follows the highest non-High.
  auto bisect = [&](int lo, int hi) {
    while (hi - lo > 1) {
      int mid = lo + (hi - lo) / 2;
      Point pt = eval(mid);
      if (pt.side == Side::High) {
        hi = mid;
      } else {
        lo = mid;
        r.best = pt;
      }
    }
  };
  const int n = p.steps();
  if (known_ok && n > 0) {
    int lo = std::clamp(static_cast<int>(std::lround((*known_ok - p.lo) / p.step)), 0, n);
    Point start = eval(lo);
    if (start.side != Side::High) {
      // Gallop up: lo + 1, lo + 2, lo + 4, ... until a High value (or the top), then bisect.
      r.best = start;
      r.found = true;
      int hi = -1;
      for (int stride = 1; lo < n; stride *= 2) {
        int probe = std::min(n, lo + stride);
        Point pt = eval(probe);
        if (pt.side == Side::High) {
          hi = probe;
          break;
        }
        lo = probe;
        r.best = pt;
      }
      if (hi >= 0) bisect(lo, hi);
      return r;
    }
    // The hint was wrong (the change did not lower memory use): plain bisection.
  }
  Point top = eval(n);
  if (top.side != Side::High || top.weights_overflow || n == 0) {
    r.found = top.side != Side::High;
    r.best = top;
    return r;
  }
  Point bottom = eval(0);
  if (bottom.side == Side::High) {
    r.best = bottom;
    return r;
  }
  r.best = bottom;
  bisect(0, n);  // 0 is not High, n is High
  r.found = true;
  return r;
}

std::string shortfall(const Point& pt, const Deployment& d, const Primary& p, const TuneGoal& g) {
  const std::optional<int64_t>& target_concurrency = g.target_concurrency;
  if (pt.weights_overflow)
    return fmt::format("weights do not fit: {} GiB per GPU > {} GiB", gib2(pt.weights_bytes), gib2(d.capacity_bytes));
  if (pt.side == Side::High) {
    if (pt.failure || pt.min_free_worst < 0)
      return fmt::format("out of memory at {}{} at {} {}", pt.limit.empty() ? "start-up" : pt.limit, pt.failure ? "" : " (worst case)", p.flag,
                         p.format(pt.x));
    return fmt::format("worst-case free memory at {} ({} GiB) below the margin at {} {}", pt.limit, gib2(pt.min_free_worst), p.flag, p.format(pt.x));
  }
  if (pt.side == Side::Low) {
    if (pt.verdict == Verdict::Refused)
      return fmt::format("weights ({} GiB per GPU) leave no room for the KV cache at any safe {}", gib2(pt.weights_bytes), p.flag);
    return fmt::format("KV cache too small for one {}-token request at the unfavourable estimates", pt.context);
  }
  if (g.target_context && pt.context > 0 && pt.context < *g.target_context)
    return fmt::format("the engine would serve at most {} tokens per request < target context {}", pt.context, *g.target_context);
  const int groups = kv_groups(d);
  if (target_concurrency && pt.context > 0) {
    int64_t per_group = pt.kv_tokens / pt.context;
    if (per_group * groups < *target_concurrency) {
      if (groups > 1)
        return fmt::format("KV holds only {} tokens per DP group x {} < target {} x {}", pt.kv_tokens, groups, *target_concurrency, pt.context);
      return fmt::format("KV holds only {} tokens < target {} x {}", pt.kv_tokens, *target_concurrency, pt.context);
    }
    if (pt.max_running > 0 && pt.max_running * groups < *target_concurrency)
      return fmt::format("the engine caps running requests at {} < target {}", pt.max_running * groups, *target_concurrency);
  }
  return {};
}

namespace {
Forecast plan_at(Deployment d, std::string_view flag, double value) {
  set_flag(d, flag, fmt::format("{:.4f}", value));
  PlanOptions o;
  o.detail = false;
  return plan(d, o);
}
}  // namespace

KvReach least_fraction_for_kv(const Deployment& d, int64_t target) {
  const EngineKnobs& k = knobs_for(d.engine);
  const EngineTraits& t = traits(d.engine);  // the values the engine accepts for its memory flag
  KvReach r;
  r.most_at = t.memory_hi;
  // Down the accepted range in hundredths (the knob's grid step) to the first value that holds it.
  const int per_unit = static_cast<int>(std::lround(1.0 / k.step));
  const auto first = first_fitting_down(static_cast<int>(std::lround(t.memory_hi * per_unit)), static_cast<int>(std::lround(t.memory_lo * per_unit)), 1,
                                        per_unit, [&](double v) -> std::optional<Forecast> {
                                          Forecast f = plan_at(d, k.fraction, v);
                                          if (f.kv_tokens > r.most_tokens) r.most_tokens = f.kv_tokens, r.most_at = v;
                                          return f.kv_tokens >= target ? std::optional<Forecast>(std::move(f)) : std::nullopt;
                                        });
  if (!first) return r;
  double up = first->first;
  double lo = t.memory_lo;
  for (int i = 0; i < 24 && up - lo > 1e-4; ++i) {
    const double mid = (lo + up) / 2;
    if (plan_at(d, k.fraction, mid).kv_tokens >= target) up = mid;
    else lo = mid;
  }
  r.found = true;
  r.value = up;
  r.at = plan_at(d, k.fraction, up);
  return r;
}

}  // namespace headroom::advise
