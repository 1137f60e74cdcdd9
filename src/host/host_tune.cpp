// tune_host(): memory settings that let every server of a host file start. In start order, each
// server keeps its own value where it can; it is raised only to the least value at which it
// starts, and lowered only as far as the servers after it need to start at their least values.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <fmt/format.h>

#include "advise/search.h"
#include "headroom/host_plan.h"

namespace headroom {

HostTuneResult tune_host(const HostSpec& spec, bool strict);

namespace {
using Flags = std::vector<std::vector<std::pair<std::string, std::string>>>;

// The engine's share-of-memory flag (its spelling), or "" where it has none (llama.cpp sizes by context).
std::string knob_of(const Deployment& d) {
  if (d.engine == EngineKind::LlamaCpp) return "";
  const advise::EngineKnobs& k = advise::knobs_for(d.engine);
  if (!k.kv_bytes.empty() && d.flag(k.kv_bytes)) return "";  // an absolute KV budget: no share to move
  // TensorRT-LLM takes either spelling: the one the command used is the one to change.
  if (d.engine == EngineKind::TRTLLM && d.flag("--free_gpu_memory_fraction")) return "--free_gpu_memory_fraction";
  return k.fraction;
}

std::string two(double v) { return fmt::format("{:.2f}", v); }

struct Search {
  const HostSpec& spec;
  bool strict = true;  // a server counts as started only when it fits (not at risk)
  int plans = 0;

  // Whether server j starts with the settings in `f` (servers after j not started).
  bool starts(const Flags& f, size_t j) {
    HostSpec prefix = spec;
    prefix.servers.resize(j + 1);
    ++plans;
    const HostPlan plan = plan_host(prefix, f);  // held: servers.back() refers into it
    const ServerPlan& s = plan.servers.back();
    return strict ? s.forecast.verdict == Verdict::Fits : s.started;
  }
  // The least value (hundredths) at which server j starts, or -1: a coarse pass, then the step below.
  int least(Flags& f, size_t j, const std::string& knob) {
    auto with = [&](int h) {
      f[j] = {{knob, two(h / 100.0)}};
      return starts(f, j);
    };
    int hit = -1;
    for (int h = 5; h <= 95 && hit < 0; h += 5)
      if (with(h)) hit = h;
    if (hit < 0) return -1;
    int lo = hit - 5;  // lo does not start (or is 0); bisect (lo, hit]
    while (hit - lo > 1) {
      const int mid = (lo + hit) / 2;
      if (mid > 0 && with(mid)) hit = mid;
      else lo = mid;
    }
    f[j] = {{knob, two(hit / 100.0)}};
    return hit;
  }
  // Whether servers j.. all start, each at its least value (set into f).
  bool rest_start(Flags f, size_t j, const std::vector<std::string>& knobs) {
    for (; j < spec.servers.size(); ++j) {
      if (knobs[j].empty() ? !starts(f, j) : least(f, j, knobs[j]) < 0) return false;
    }
    return true;
  }
};
}  // namespace

HostTuneResult tune_host(const HostSpec& spec, bool strict) {
  HostTuneResult r;
  const HostPlan given = plan_host(spec);
  Flags f(spec.servers.size());
  std::vector<std::string> knobs;
  for (const auto& s : given.servers) knobs.push_back(knob_of(s.deployment));
  Search search{spec, strict};
  r.feasible = true;
  for (size_t i = 0; i < spec.servers.size() && r.feasible; ++i) {
    const std::string& knob = knobs[i];
    if (knob.empty()) {  // nothing to move: it starts with what the ones before left, or nothing does
      r.feasible = search.starts(f, i);
      if (!r.feasible) r.notes.push_back(fmt::format("'{}' has no memory share to tune and does not start after the servers before it", spec.servers[i].name));
      continue;
    }
    const std::string* now = given.servers[i].forecast.setting(knob);
    int own = 90;  // GUESS where the forecast does not list the value in force: 0.9, the engines' usual default
    try {
      if (now) own = std::clamp(static_cast<int>(std::lround(std::stod(*now) * 100)), 1, 99);
    } catch (const std::exception&) {
    }
    const int lo = search.least(f, i, knob);
    if (lo < 0) {
      r.feasible = false;
      r.notes.push_back(fmt::format("'{}' does not start at any {} from 0.05 to 0.95 after the servers before it", spec.servers[i].name, knob));
      break;
    }
    // The largest value in [lo, max(own, lo)] at which it starts and the rest still can.
    auto ok = [&](int h) {
      Flags g = f;
      g[i] = {{knob, two(h / 100.0)}};
      return search.starts(g, i) && search.rest_start(g, i + 1, knobs);
    };
    int good = -1, a = lo, b = std::max(own, lo);
    if (ok(b)) good = b;
    else if (ok(a)) {
      good = a;
      while (b - a > 1) {
        const int mid = (a + b) / 2;
        if (ok(mid)) good = a = mid;
        else b = mid;
      }
    }
    if (good < 0) {
      r.feasible = false;
      r.notes.push_back(fmt::format("the servers after '{}' do not all start even with its {} at its least, {}", spec.servers[i].name, knob, two(lo / 100.0)));
      break;
    }
    f[i] = {{knob, two(good / 100.0)}};
    r.changes.push_back(HostTuneChange{spec.servers[i].name, knob, now ? *now : "", two(good / 100.0)});
  }
  r.plan = plan_host(spec, f);
  r.plans = search.plans;
  r.feasible = r.feasible && r.plan.all_start;
  return r;
}

HostTuneResult tune_host(const HostSpec& spec) {
  HostTuneResult r = tune_host(spec, true);
  if (r.feasible) return r;
  HostTuneResult risky = tune_host(spec, false);  // no setting where all fit: where all at least start
  if (!risky.feasible) return r;
  risky.plans += r.plans;
  risky.notes.insert(risky.notes.begin(), "no setting lets every server fit with the estimates' ranges; these start at risk");
  return risky;
}

}  // namespace headroom
