// plan_host(): the servers of a host file started one after another; each is planned by its own
// engine model with what the servers before it (and --host-state) hold on its GPUs, and what it
// holds once started is read off its forecast's last stage on each rank.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "headroom/doctor.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/host_plan.h"
#include "headroom/units.h"

namespace headroom {

namespace {
constexpr std::string_view kOthers = "other processes";

// What the host state says is in use on each of the file's GPUs.
std::vector<int64_t> initial_use(const HostSpec& spec) {
  std::vector<int64_t> use(spec.gpus.size(), 0);
  if (!spec.state) return use;
  for (size_t i = 0; i < spec.gpus.size(); ++i) {
    const HostGpu* g = nullptr;
    for (const auto& h : spec.state->gpus)
      if (h.index == static_cast<int>(i)) g = &h;
    if (!g) fail_input(spec.state->source, fmt::format("GPU {}", i), fmt::format("is in {} but not in the host state", spec.source));
    const int64_t smi = spec.gpus[i].smi_total_mib * MiB;
    if (g->total_bytes > 0 && smi > 0 && std::abs(g->total_bytes - smi) * 50 > smi)
      fail_input(spec.state->source, fmt::format("GPU {}", i), fmt::format("has {} MiB but {} says {} ({} MiB)", g->total_bytes / MiB, spec.source,
                                                                           spec.gpus[i].name, spec.gpus[i].smi_total_mib));
    use[i] = g->used_bytes;
  }
  return use;
}

std::vector<std::string> server_options(const HostSpec& spec, const HostServer& s) {
  std::vector<std::string> names;
  for (int g : s.gpus) names.push_back(spec.gpus[static_cast<size_t>(g)].name);
  const bool one_kind = std::all_of(names.begin(), names.end(), [&](const std::string& n) { return n == names.front(); });
  std::vector<std::string> o = {"--gpu", one_kind ? names.front() : fmt::format("{}", fmt::join(names, ",")), "--gpus", std::to_string(s.gpus.size())};
  if (!s.engine.empty()) o.insert(o.end(), {"--engine", s.engine});
  for (const auto& e : s.env) o.insert(o.end(), {"--env", e});
  return o;
}

// A started server's own memory on each of its GPUs: each rank's use at its last stage, less
// what others held there when it started (the rank's first item).
std::vector<int64_t> own_memory(const Forecast& f, size_t gpus) {
  std::vector<int64_t> own(gpus, 0);
  for (const auto& r : f.ranks) {
    if (r.rank < 0 || static_cast<size_t>(r.rank) >= gpus || r.stages.empty()) continue;
    const auto& first = r.stages.front().items;
    const int64_t held = !first.empty() && first.front().what.rfind("held by other processes", 0) == 0 ? first.front().bytes : 0;
    own[static_cast<size_t>(r.rank)] = std::max<int64_t>(0, r.capacity_bytes - r.stages.back().free_bytes_after - held);
  }
  return own;
}

GpuMoment moment(std::string after, const std::vector<std::pair<std::string, int64_t>>& held, int64_t capacity) {
  GpuMoment m{std::move(after), held, capacity};
  for (const auto& [who, b] : held) m.free_bytes -= b;
  return m;
}
}  // namespace

HostPlan plan_host(const HostSpec& spec, const std::vector<std::vector<std::pair<std::string, std::string>>>& flags) {
  HostPlan out;
  const std::vector<int64_t> start = initial_use(spec);
  std::vector<std::vector<std::pair<std::string, int64_t>>> held(spec.gpus.size());
  for (size_t g = 0; g < spec.gpus.size(); ++g) {
    if (start[g] > 0) held[g].emplace_back(kOthers, start[g]);
    out.gpus.push_back(GpuTimeline{static_cast<int>(g), spec.gpus[g], spec.gpus[g].capacity_bytes, {moment("start", held[g], spec.gpus[g].capacity_bytes)}});
  }
  out.all_start = true;
  for (size_t i = 0; i < spec.servers.size(); ++i) {
    const HostServer& s = spec.servers[i];
    const std::string where = fmt::format("{} servers[{}] ({})", spec.source, i, s.name);
    ServerPlan sp{s.name, s.gpus, deployment_from_command(s.command, server_options(spec, s), where), {}, {}, {}, false};
    Deployment& d = sp.deployment;
    if (i < flags.size())
      for (const auto& f : flags[i]) {  // replaces the command's value (the launch line shows one)
        std::erase_if(d.flags, [&](const auto& g) { return g.first == f.first; });
        d.flags.push_back(f);
      }
    std::vector<std::string> before;
    for (int g : s.gpus) {
      int64_t sum = 0;
      for (const auto& [who, b] : held[static_cast<size_t>(g)]) {
        sum += b;
        if (std::find(before.begin(), before.end(), who) == before.end()) before.push_back(who);
      }
      sp.held_before.push_back(sum);
    }
    d.held_by_others = sp.held_before;
    d.host_state_source = before.empty() ? "" : fmt::format("{}", fmt::join(before, ", "));
    sp.forecast = plan(d);
    sp.started = sp.forecast.verdict == Verdict::Fits || sp.forecast.verdict == Verdict::AtRisk;
    sp.holds = sp.started ? own_memory(sp.forecast, s.gpus.size()) : std::vector<int64_t>(s.gpus.size(), 0);
    out.all_start = out.all_start && sp.started;
    for (size_t k = 0; k < s.gpus.size(); ++k) {
      const size_t g = static_cast<size_t>(s.gpus[k]);
      if (sp.started) held[g].emplace_back(s.name, sp.holds[k]);
      out.gpus[g].moments.push_back(moment(s.name, held[g], out.gpus[g].capacity_bytes));
    }
    out.servers.push_back(std::move(sp));
  }
  return out;
}

}  // namespace headroom
