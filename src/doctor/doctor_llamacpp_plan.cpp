// llama.cpp fixes computed by the planner on the rebuilt deployment: the largest -ngl, the
// largest --ctx-size (steps of 256), q8_0 K/V, and the largest --ubatch-size (powers of two) at
// which plan_llamacpp fits every device (verdict fits, not at risk), each with its forecast; the first becomes
// forecast_after_fix. Empty when the rebuilt plan does not reproduce a failure (the static fixes
// then speak from the log's numbers).
#include <algorithm>
#include <fmt/format.h>

#include "doctor/doctor_internal.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

namespace {

Deployment with(const Deployment& d, const std::string& flag, const std::string& value) {
  Deployment out = d;
  for (auto& [k, v] : out.flags)
    if (k == flag) {
      v = value;
      return out;
    }
  out.flags.emplace_back(flag, value);
  return out;
}

std::optional<Forecast> fits(const Deployment& d) {
  try {
    PlanOptions o;
    o.files_elsewhere = true;
    o.detail = false;
    Forecast f = plan(d, o);
    if (!f.failure && f.verdict == Verdict::Fits) return f;  // not "at risk": the estimates' bad end fits too
  } catch (const InputError&) {
  }
  return std::nullopt;
}

// The largest value in [lo, hi] (in steps of `step`) at which `flag` fits; monotone in the value.
std::optional<std::pair<int64_t, Forecast>> largest(const Deployment& d, const std::string& flag, int64_t lo, int64_t hi, int64_t step) {
  std::optional<std::pair<int64_t, Forecast>> best;
  int64_t a = lo / step, b = hi / step;
  while (a <= b) {
    const int64_t m = a + (b - a) / 2;
    if (auto f = fits(with(d, flag, std::to_string(m * step)))) {
      best = std::make_pair(m * step, *f);
      a = m + 1;
    } else {
      b = m - 1;
    }
  }
  return best;
}

std::string effect(const Forecast& f, const std::string& what) {
  return fmt::format("{}: the llama.cpp plan fits every device, {:.2f} GiB left on the tightest", what, to_gib(f.headroom_bytes));
}

}  // namespace

void llamacpp_plan_fixes(const LogScan& s, const LlamaFailure& f, const Deployment& dep, Diagnosis& dx) {
  (void)f;
  Forecast base;
  try {
    PlanOptions o;
    o.files_elsewhere = true;
    o.detail = false;
    base = plan(dep, o);
  } catch (const InputError& e) {
    dx.gaps.push_back(std::string("the rebuilt deployment does not plan: ") + e.what());
    return;
  }
  if (!base.failure) {
    dx.gaps.push_back("the llama.cpp plan of the rebuilt deployment fits, where the log failed: the fixes come from the log's numbers");
    return;
  }
  dx.calibration.push_back(fmt::format("plan of the rebuilt deployment: fails at {} ({})", name(base.failure->stage), base.failure->message));
  const std::string* ngl = base.setting("--n-gpu-layers");
  const std::string* ctx = base.setting("--ctx-size");
  const std::string* ub = base.setting("--ubatch-size");
  const int64_t n_ngl = ngl ? std::stoll(*ngl) : 0, n_ctx = ctx ? std::stoll(*ctx) : 0, n_ub = ub ? std::stoll(*ub) : 512;
  std::vector<std::pair<DoctorFix, Forecast>> found;
  if (dx.stage != "weights" && n_ctx > 4096)
    if (auto r = largest(dep, "--ctx-size", 256, n_ctx - 256, 256))
      found.push_back({{"--ctx-size", std::to_string(r->first), effect(r->second, fmt::format("{} -> {} cells", n_ctx, r->first))}, r->second});
  if (dx.stage == "kv_pool" || dx.stage == "compute_buffer")
    if (auto q = fits(with(with(with(dep, "--cache-type-k", "q8_0"), "--cache-type-v", "q8_0"), "--flash-attn", "on")))
      found.push_back({{"--cache-type-k", "q8_0", effect(*q, "K and V as q8_0 (with -fa on)")}, *q});
  if ((dx.stage == "compute_buffer" || dx.stage == "runtime") && n_ub > 32)
    for (int64_t u = n_ub / 2; u >= 32; u /= 2)
      if (auto q = fits(with(dep, "--ubatch-size", std::to_string(u)))) {
        found.push_back({{"--ubatch-size", std::to_string(u), effect(*q, fmt::format("ubatch {} -> {}", n_ub, u))}, *q});
        break;
      }
  if (n_ngl > 0)
    if (auto r = largest(dep, "--n-gpu-layers", 0, n_ngl - 1, 1))
      found.push_back({{"--n-gpu-layers", std::to_string(r->first), effect(r->second, fmt::format("{} -> {} layers offloaded", n_ngl, r->first))}, r->second});
  // Weights first want layers moved; the later stages lose least by their own knob.
  if (dx.stage == "weights") std::reverse(found.begin(), found.end());
  for (auto& [fix, fc] : found) {
    if (dx.fixes.empty()) dx.forecast_after_fix = fc;
    dx.fixes.push_back(fix);
    if (fix.flag == "--cache-type-k") {
      dx.fixes.push_back({"--cache-type-v", "q8_0", "with the K cache", true});
      dx.fixes.push_back({"--flash-attn", "on", "a quantized V cache needs it", true});
    }
  }
  (void)s;
}

}  // namespace headroom
