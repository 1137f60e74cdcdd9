// Several servers sharing one host's GPUs (issue 29 item 3): `headroom plan --host HOST.yaml`
// plans the servers in start order, each with the memory the ones before it left, under its
// own engine's rules; `tune --host` finds the memory settings that let all of them start.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/forecast.h"
#include "headroom/gpu.h"
#include "headroom/host_state.h"

namespace headroom {

struct HostServer {
  std::string name;
  std::vector<int> gpus;        // host GPU indices, in the server's device order
  std::string command;          // the launch command as the user runs it
  std::string engine;           // "vllm@0.11.0"; empty = the command's engine, newest rules
  std::vector<std::string> env; // NAME=VALUE
};

struct HostSpec {
  std::string source;
  std::vector<GpuSpec> gpus;    // one per host GPU index
  std::vector<HostServer> servers;
  std::optional<HostState> state;  // --host-state: memory in use before the first server
};

// `plan --host` / `tune --host`: the host file, and --host-state beside it; any other option is
// refused (it belongs in a server's command).
HostSpec host_spec_from_args(const Args& args);
// Reads HOST.yaml; InputError (file, key path, problem) on anything it cannot use.
HostSpec read_host_spec(const std::string& path);
HostSpec parse_host_spec(const std::string& yaml_text, const std::string& source);

struct ServerPlan {
  std::string name;
  std::vector<int> gpus;
  Deployment deployment;
  Forecast forecast;
  std::vector<int64_t> held_before;  // per server GPU: what others held when it started
  std::vector<int64_t> holds;        // per server GPU: its own memory once started (0 if it failed)
  bool started = false;
};

struct GpuMoment {
  std::string after;                 // "start" (before any server) or the server just started
  std::vector<std::pair<std::string, int64_t>> held;  // "other processes" then servers, in order
  int64_t free_bytes = 0;
};

struct GpuTimeline {
  int index = 0;
  GpuSpec gpu;
  int64_t capacity_bytes = 0;
  std::vector<GpuMoment> moments;
};

struct HostPlan {
  std::vector<ServerPlan> servers;  // in start order
  std::vector<GpuTimeline> gpus;
  bool all_start = false;
};

// `flags[i]`: extra engine flags for server i (tune's candidates), after its command's own.
HostPlan plan_host(const HostSpec& spec, const std::vector<std::vector<std::pair<std::string, std::string>>>& flags = {});

struct HostTuneChange {
  std::string server, flag, from, to;  // from: the value in force before ("" = not known)
};
struct HostTuneResult {
  bool feasible = false;
  std::vector<HostTuneChange> changes;  // one per server with a memory share, in start order
  HostPlan plan;                        // the host with the changes
  std::vector<std::string> notes;       // why not, when infeasible
  int plans = 0;                        // forecasts the search made
};
// `tune --host`: in start order, each server's share flag (vLLM --gpu-memory-utilization, SGLang
// --mem-fraction-static, TensorRT-LLM's free-memory fraction) kept where it can be, raised to the
// least value at which it starts, lowered as far as the servers after it need.
HostTuneResult tune_host(const HostSpec& spec);

nlohmann::ordered_json host_plan_json(const HostPlan& p);
void print_host_plan(std::ostream& out, const HostPlan& p, const std::string& source);
nlohmann::ordered_json host_tune_json(const HostTuneResult& r);
void print_host_tune(std::ostream& out, const HostTuneResult& r, const std::string& source);

}  // namespace headroom
