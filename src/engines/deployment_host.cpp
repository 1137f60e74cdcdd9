// A deployment on a host whose GPUs already hold memory (--host-state, issue 29): which of the
// host's GPUs it runs on (CUDA_VISIBLE_DEVICES as the engines read it) and what others hold there.
#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engines/deployment_host.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

int64_t Deployment::held_by_others_max() const {
  int64_t most = 0;
  for (int64_t b : held_by_others) most = std::max(most, b);
  return most;
}

namespace {
// CUDA_VISIBLE_DEVICES: indices or GPU uuids, comma-separated; unset = the first `gpus` devices.
std::vector<const HostGpu*> visible_gpus(const Deployment& d, const HostState& h) {
  std::vector<const HostGpu*> out;
  const std::string* cvd = d.env_value("CUDA_VISIBLE_DEVICES");
  if (!cvd) {
    for (const auto& g : h.gpus)
      if (out.size() < static_cast<size_t>(d.gpus)) out.push_back(&g);
    if (out.size() < static_cast<size_t>(d.gpus))
      fail_input(h.source, "GPUs", fmt::format("lists {} GPU(s) but the deployment needs {}", h.gpus.size(), d.gpus));
    return out;
  }
  for (size_t at = 0; at <= cvd->size() && out.size() < static_cast<size_t>(d.gpus);) {
    const size_t end = std::min(cvd->find(',', at), cvd->size());
    const std::string id = cvd->substr(at, end - at);
    at = end + 1;
    int index = -1;
    const auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), index);
    const HostGpu* hit = nullptr;
    for (const auto& g : h.gpus)
      if ((ec == std::errc{} && p == id.data() + id.size() && g.index == index) || (!g.uuid.empty() && g.uuid == id)) hit = &g;
    if (!hit) fail_input("--env", "CUDA_VISIBLE_DEVICES", fmt::format("names GPU '{}', which {} does not list", id, h.source));
    out.push_back(hit);
  }
  if (out.size() < static_cast<size_t>(d.gpus))
    fail_input("--env", "CUDA_VISIBLE_DEVICES", fmt::format("makes {} GPU(s) visible but the deployment needs {}", out.size(), d.gpus));
  return out;
}
}  // namespace

const GpuSpec* host_default_gpu(const HostState& h) {
  const HostGpu& g = h.gpus.front();
  return find_gpu_for_host(g.name, g.total_bytes);
}

void apply_host_state(Deployment& d, const HostState& h) {
  const auto gpus = visible_gpus(d, h);
  d.held_by_others.clear();
  // Who holds it, where nvidia-smi's process table says (pids on this deployment's GPUs).
  std::vector<std::string> who;
  for (const auto& p : h.processes)
    for (const HostGpu* g : gpus)
      if (p.gpu_index == g->index && who.size() < 8) who.push_back(fmt::format("pid {} {}", p.pid, p.name));
  d.host_state_source = who.empty() ? h.source : fmt::format("{}: {}", h.source, fmt::join(who, ", "));
  for (size_t i = 0; i < gpus.size(); ++i) {
    const HostGpu& g = *gpus[i];
    const GpuSpec& spec = d.gpu_list.empty() ? d.gpu : d.gpu_list[i];
    const int64_t smi = spec.smi_total_mib * MiB;
    if (g.total_bytes > 0 && smi > 0 && std::abs(g.total_bytes - smi) * 50 > smi)
      fail_input(h.source, fmt::format("GPU {}", g.index),
                 fmt::format("has {} MiB ({}) but the deployment's GPU {} has {} MiB: give the host's GPU with --gpu", g.total_bytes / MiB,
                             g.name.empty() ? "unnamed" : g.name, spec.name, spec.smi_total_mib));
    const int64_t capacity = d.gpu_list.empty() ? d.capacity_bytes : spec.capacity_bytes;
    if (g.used_bytes >= capacity)
      fail_input(h.source, fmt::format("GPU {}", g.index), fmt::format("is full: {} GiB in use of {} GiB", gib2(g.used_bytes), gib2(capacity)));
    d.held_by_others.push_back(g.used_bytes);
  }
}

void sim_held_by_others(RankSim& sim, const Deployment& d, int64_t bytes) {
  // The label names short sources (the servers started before, in a host file); the note has the rest.
  const std::string& src = d.host_state_source;
  if (bytes > 0)
    sim.alloc(src.size() <= 20 && src.find('/') == std::string::npos ? fmt::format("held by other processes ({})", src) : "held by other processes", bytes);
}

void note_host_state(Forecast& f, const Deployment& d, std::string_view semantics) {
  if (d.host_state_source.empty()) return;
  std::vector<std::string> per_gpu;
  for (size_t i = 0; i < d.held_by_others.size(); ++i) per_gpu.push_back(fmt::format("GPU {} {} GiB", i, gib2(d.held_by_others[i])));
  f.notes.push_back(fmt::format("host state ({}): other processes hold {}; {}", d.host_state_source, fmt::join(per_gpu, ", "), semantics));
}

}  // namespace headroom
