// tune for llama.cpp: the most context (every layer offloaded) or, when even a 4096-token context
// does not fit that way, the fewest MoE layers with their experts on the host (--n-cpu-moe) or else
// the most offloaded layers (-ngl) that keep every device the safety margin at the unfavourable end
// of the estimates. Each is monotone, so each is a bisection over plan().
// The context is searched in steps of 256 cells (llama.cpp pads n_ctx to 256 in recent builds).
#include <algorithm>
#include <climits>
#include <fmt/format.h>

#include "advise/tune_llamacpp.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

namespace {
constexpr int64_t kCtxStep = 256, kCtxFloor = 4096;  // llama.cpp's --fit stops at 4096 (--fit-ctx)

struct Try {
  int64_t value = 0;
  Forecast f;
  int64_t min_free_worst = 0;
  bool safe = false;
};

void set(Deployment& d, const std::string& flag, const std::string& value) {
  for (auto& [k, v] : d.flags)
    if (k == flag) {
      v = value;
      return;
    }
  d.flags.emplace_back(flag, value);
}

Try attempt(const Deployment& base, const std::string& flag, int64_t value, int64_t margin, int& plans) {
  Deployment d = base;
  set(d, flag, std::to_string(value));
  PlanOptions o;
  o.detail = false;
  Try t;
  t.value = value;
  t.f = plan(d, o);
  ++plans;
  t.min_free_worst = INT64_MAX;
  for (const auto& r : t.f.ranks)
    for (const auto& s : r.stages) t.min_free_worst = std::min({t.min_free_worst, s.free_worst, s.min_free_worst});
  if (t.min_free_worst == INT64_MAX) t.min_free_worst = 0;
  t.safe = !t.f.failure && t.min_free_worst >= margin;
  return t;
}

// The largest value in [lo, hi] (multiples of step) whose plan is safe; nullopt when lo is not.
std::optional<Try> largest_safe(const Deployment& d, const std::string& flag, int64_t lo, int64_t hi, int64_t step, int64_t margin, int& plans) {
  Try low = attempt(d, flag, lo, margin, plans);
  if (!low.safe) return std::nullopt;
  Try high = attempt(d, flag, hi, margin, plans);
  if (high.safe) return high;
  int64_t a = lo / step, b = hi / step;  // a safe, b not
  while (b - a > 1) {
    const int64_t mid = (a + b) / 2;
    Try t = attempt(d, flag, mid * step, margin, plans);
    if (t.safe) {
      a = mid;
      low = std::move(t);
    } else {
      b = mid;
    }
  }
  return low;
}

// The smallest value in [lo, hi] whose plan is safe (a knob that frees memory as it grows);
// nullopt when hi is not.
std::optional<Try> smallest_safe(const Deployment& d, const std::string& flag, int64_t lo, int64_t hi, int64_t margin, int& plans) {
  Try high = attempt(d, flag, hi, margin, plans);
  if (!high.safe) return std::nullopt;
  Try low = attempt(d, flag, lo, margin, plans);
  if (low.safe) return low;
  int64_t a = lo, b = hi;  // a not safe, b safe
  while (b - a > 1) {
    const int64_t mid = (a + b) / 2;
    Try t = attempt(d, flag, mid, margin, plans);
    if (t.safe) {
      b = mid;
      high = std::move(t);
    } else {
      a = mid;
    }
  }
  return high;
}

int64_t host_weights(const Forecast& f) {
  int64_t b = 0;
  for (const auto& x : f.devices)
    if (x.host) b += x.model_buffer_bytes;
  return b;
}

// What llama.cpp's own --fit (on by default) would choose for the deployment as given, in one line
// ("" when it is off, changes nothing or gives up), read from the plan's fit lines.
std::string own_fit_choice(const Deployment& d0, int& plans) {
  if (const std::string* f = d0.flag("--fit"); f && *f == "off") return "";
  const Forecast f = plan(d0);
  ++plans;
  auto logged = [&](std::string_view text) {
    return std::any_of(f.log.begin(), f.log.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  };
  const bool changed = logged("context size reduced") || logged("layers back-to-front");
  if (!logged("_fit_impl: ") || !changed || logged(", abort")) return "";
  std::string out = fmt::format("-c {} -ngl {}", *f.setting("--ctx-size"), *f.setting("--n-gpu-layers"));
  if (const std::string* ts = f.setting("--tensor-split")) out += " -ts " + *ts;
  if (const std::string* ot = f.setting("--override-tensor")) out += fmt::format(" and {} per-layer -ot overrides", std::count(ot->begin(), ot->end(), ',') + 1);
  return fmt::format("llama.cpp's own --fit (on by default) would start it with {} ({}: its margin is 1024 MiB at the central estimates; "
                     "`headroom plan` without -c / -ngl shows it); the launch above sets -c and -ngl, which fit then leaves alone",
                     out, f.verdict == Verdict::Fits ? "fits" : f.verdict == Verdict::AtRisk ? "at risk" : "does not fit");
}

TradeoffRow row(const Try& t, const std::string& flag, std::string label) {
  TradeoffRow r;
  r.knob = flag;
  r.value = std::to_string(t.value);
  r.label = std::move(label);
  r.verdict = t.f.verdict;
  r.safe = t.safe;
  r.kv_tokens = t.f.kv_tokens;
  r.concurrency = t.f.max_concurrency;
  r.capture_free_worst = t.min_free_worst;
  r.min_free_worst = t.min_free_worst;
  r.limit = name(t.f.failure ? t.f.failure->stage : StageId::ComputeBuffer);
  return r;
}
}  // namespace

TuneResult tune_llamacpp(const Deployment& d0, const TuneGoal& g) {
  TuneResult res;
  res.margin_bytes = g.margin_bytes.value_or(kDefaultMarginBytes);
  res.margin_default = !g.margin_bytes;
  res.keep_free_bytes = g.keep_free_bytes;
  if (g.target_concurrency) fail_input("command line", "--target-concurrency", "llama.cpp: set -np / --parallel; tune searches -c and -ngl");
  Deployment d = d0;
  d.capacity_bytes -= g.keep_free_bytes;
  for (auto& x : d.gpu_list) x.capacity_bytes -= g.keep_free_bytes;
  set(d, "--fit", "off");  // tune chooses -c and -ngl itself; the launch gives both, which fit leaves alone
  const int64_t margin = res.margin_bytes;
  // The model's layers and context as the plan resolves them with every layer offloaded.
  Deployment all = d;
  set(all, "--n-gpu-layers", "all");
  PlanOptions o;
  o.detail = false;
  const Forecast probe = plan(all, o);
  ++res.plans;
  const int n_all = std::stoi(*probe.setting("--n-gpu-layers"));
  Deployment ctx_model = all;
  for (auto it = ctx_model.flags.begin(); it != ctx_model.flags.end();)
    it = it->first == "--ctx-size" ? ctx_model.flags.erase(it) : it + 1;
  const int64_t n_ctx_train = plan(ctx_model, o).kv_tokens;
  ++res.plans;

  // A context given (-c or --target-context) is kept and the layers searched; otherwise the
  // context is searched with the layers given (or all), then the layers at 4096 if that fails.
  const std::string* given_ctx = d0.flag("--ctx-size");
  const std::string* given_ngl = d0.flag("--n-gpu-layers");
  const int64_t ngl = given_ngl ? std::stoi(*plan(d, o).setting("--n-gpu-layers")) : n_all;
  std::optional<Try> best;
  std::string knob;
  if (!g.target_context && !given_ctx) {
    knob = "--ctx-size";
    Deployment at_ngl = d;
    set(at_ngl, "--n-gpu-layers", std::to_string(ngl));
    best = largest_safe(at_ngl, knob, std::min(kCtxFloor, n_ctx_train), std::max(kCtxFloor, n_ctx_train), kCtxStep, margin, res.plans);
    if (best) res.recommended.emplace_back("--n-gpu-layers", std::to_string(ngl));
  }
  // A MoE model with every layer offloaded: the experts of the first K layers on the host (--n-cpu-moe)
  // keep every layer's attention on the GPU, which generates faster than fewer layers (-ngl).
  const bool placed = given_ngl || d0.flag("--cpu-moe") || d0.flag("--n-cpu-moe") || d0.flag("--override-tensor");
  if (!best && !placed) {
    Deployment at_ctx = all;
    const int64_t ctx = g.target_context ? *g.target_context : given_ctx ? std::stoll(*given_ctx) : std::min(kCtxFloor, n_ctx_train);
    set(at_ctx, "--ctx-size", std::to_string(ctx));
    Deployment every = at_ctx;
    set(every, "--n-cpu-moe", std::to_string(n_all));
    res.plans += 2;
    if (host_weights(plan(every, o)) > host_weights(plan(at_ctx, o))) {
      best = smallest_safe(at_ctx, "--n-cpu-moe", 0, n_all, margin, res.plans);
      if (best) {
        knob = "--n-cpu-moe";
        res.recommended.emplace_back("--n-gpu-layers", std::to_string(n_all));
        res.recommended.emplace_back("--ctx-size", std::to_string(ctx));
      }
    }
  }
  if (!best) {
    knob = "--n-gpu-layers";
    Deployment at_ctx = d;
    const int64_t ctx = g.target_context ? *g.target_context : given_ctx ? std::stoll(*given_ctx) : std::min(kCtxFloor, n_ctx_train);
    set(at_ctx, "--ctx-size", std::to_string(ctx));
    best = given_ngl ? largest_safe(at_ctx, knob, ngl, ngl, 1, margin, res.plans) : largest_safe(at_ctx, knob, 0, n_all, 1, margin, res.plans);
    res.recommended.emplace_back("--ctx-size", std::to_string(ctx));
  }
  res.primary_knob = knob;
  res.feasible = best.has_value();
  if (!best) {
    res.reason = "not even every layer on the host keeps the margin: the host's buffers or the GPU runtime do not fit";
    return res;
  }
  res.recommended.insert(res.recommended.begin(), {knob, std::to_string(best->value)});
  res.tradeoffs.push_back(row(*best, knob, "recommended"));
  res.kv_tokens = best->f.kv_tokens;
  res.context_len = best->f.context_len;
  res.concurrency = best->f.max_concurrency;
  res.min_free_worst = best->min_free_worst;
  Deployment launch = d0;
  for (const auto& [f, v] : res.recommended) set(launch, f, v);
  res.deployment = launch;
  res.forecast = plan(launch);
  ++res.plans;
  res.launch_flags = launch.flags;
  res.launch_command = launch_command(launch, launch.flags);
  res.notes.push_back(fmt::format("llama.cpp: {} searched for the {} value whose plan keeps {} free on every device at the worst end "
                                  "of the estimates (compute buffers, GPU runtime); with -c and -ngl set, llama.cpp's --fit changes neither",
                                  knob, knob == "--n-cpu-moe" ? "smallest" : "largest", human_bytes(margin)));
  if (knob == "--n-cpu-moe")
    res.notes.push_back(fmt::format("MoE: every layer stays on the GPUs and the routed experts of the first {} layers go to host memory "
                                    "(--n-cpu-moe, the fewest that keep the margin); fewer offloaded layers (-ngl) would move attention too",
                                    best->value));
  if (std::string own = own_fit_choice(d0, res.plans); !own.empty()) res.notes.push_back(std::move(own));
  if (res.margin_default) res.notes.push_back("the 1 GiB safety margin is a default GUESS (llama.cpp's own --fit keeps 1024 MiB); set it with --margin");
  return res;
}

}  // namespace headroom
