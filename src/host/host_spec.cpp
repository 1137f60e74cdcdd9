// HOST.yaml for `plan --host`: the host's GPUs by index and its servers in start order, each
// with its GPUs and its launch command. Every key is checked; a typo gets "did you mean".
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>
#include <fstream>
#include <set>

#include "headroom/cli.h"
#include "headroom/error.h"
#include "headroom/host_plan.h"

namespace headroom {

namespace {
constexpr size_t kMaxBytes = 1 << 20, kMaxServers = 64, kMaxGpus = 1024;

void known_keys(const YAML::Node& map, std::initializer_list<std::string_view> keys, const std::string& source, const std::string& where) {
  std::vector<std::string> names(keys.begin(), keys.end());
  for (const auto& kv : map) {
    const std::string k = kv.first.Scalar();
    if (std::find(names.begin(), names.end(), k) != names.end()) continue;
    const std::string near = did_you_mean(k, names);
    fail_input(source, where + k, fmt::format("is not a key of a host file{}", near.empty() ? "" : "; did you mean " + near + "?"));
  }
}

std::string scalar(const YAML::Node& n, const std::string& source, const std::string& where) {
  if (!n || !n.IsScalar()) fail_input(source, where, "must be a string");
  return n.Scalar();
}

std::vector<GpuSpec> host_gpus(const YAML::Node& n, const std::string& source) {
  std::vector<GpuSpec> out;
  if (n.IsScalar()) return {require_gpu(n.Scalar())};
  if (!n.IsSequence() || n.size() == 0 || n.size() > kMaxGpus)
    fail_input(source, "gpus", "must list the host's GPUs by index, catalog names: gpus: [h100, h100]");
  for (size_t i = 0; i < n.size(); ++i) out.push_back(require_gpu(scalar(n[i], source, fmt::format("gpus[{}]", i))));
  return out;
}

HostServer server(const YAML::Node& n, size_t i, size_t host_gpus, const std::string& source) {
  const std::string at = fmt::format("servers[{}].", i);
  if (!n.IsMap()) fail_input(source, at.substr(0, at.size() - 1), "must be a map with name, gpus and command");
  known_keys(n, {"name", "gpus", "command", "engine", "env"}, source, at);
  HostServer s;
  s.name = scalar(n["name"], source, at + "name");
  s.command = scalar(n["command"], source, at + "command");
  if (n["engine"]) s.engine = scalar(n["engine"], source, at + "engine");
  const YAML::Node g = n["gpus"];
  if (!g || !g.IsSequence() || g.size() == 0) fail_input(source, at + "gpus", "must list the server's GPU indices: gpus: [0, 1]");
  for (size_t k = 0; k < g.size(); ++k) {
    int idx = -1;
    try {
      idx = g[k].as<int>();
    } catch (const YAML::Exception&) {
    }
    if (idx < 0 || static_cast<size_t>(idx) >= host_gpus)
      fail_input(source, fmt::format("{}gpus[{}]", at, k), fmt::format("'{}' is not a GPU index of this host (0..{})", g[k].Scalar(), host_gpus - 1));
    if (std::find(s.gpus.begin(), s.gpus.end(), idx) != s.gpus.end()) fail_input(source, fmt::format("{}gpus[{}]", at, k), "lists a GPU twice");
    s.gpus.push_back(idx);
  }
  if (const YAML::Node e = n["env"]) {
    if (!e.IsMap()) fail_input(source, at + "env", "must map NAME: VALUE");
    for (const auto& kv : e) s.env.push_back(kv.first.Scalar() + "=" + scalar(kv.second, source, at + "env." + kv.first.Scalar()));
  }
  return s;
}
}  // namespace

HostSpec parse_host_spec(const std::string& text, const std::string& source) {
  if (text.size() > kMaxBytes) fail_input(source, "size", fmt::format("{} bytes: a host file is at most {}", text.size(), kMaxBytes));
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {  // its message says "bad file"
    fail_input(source, fmt::format("line {}", e.mark.line + 1), fmt::format("nested deeper than {} levels", e.depth()));
  } catch (const YAML::Exception& e) {
    fail_input(source, fmt::format("line {}", e.mark.line + 1), e.msg);
  }
  if (!root.IsMap()) fail_input(source, "top level", "must be a map with gpus and servers");
  HostSpec spec;
  spec.source = source;
  try {
    known_keys(root, {"gpus", "servers"}, source, "");
    if (!root["gpus"]) fail_input(source, "gpus", "is required: the host's GPUs by index, e.g. gpus: [h100]");
    spec.gpus = host_gpus(root["gpus"], source);
    const YAML::Node servers = root["servers"];
    if (!servers || !servers.IsSequence() || servers.size() == 0 || servers.size() > kMaxServers)
      fail_input(source, "servers", fmt::format("must list 1 to {} servers in start order", kMaxServers));
    std::set<std::string> names;
    for (size_t i = 0; i < servers.size(); ++i) {
      spec.servers.push_back(server(servers[i], i, spec.gpus.size(), source));
      if (!names.insert(spec.servers.back().name).second)
        fail_input(source, fmt::format("servers[{}].name", i), fmt::format("'{}' names two servers", spec.servers.back().name));
    }
  } catch (const YAML::Exception& e) {
    fail_input(source, fmt::format("line {}", e.mark.line + 1), e.msg);
  }
  return spec;
}

HostSpec host_spec_from_args(const Args& args) {
  for (const auto& [k, v] : args.options())
    if (k != "--host" && k != "--host-state" && k != "--json")
      fail_input("command line", k, "goes in the host file's server commands with --host (only --host-state and --json go beside it)");
  HostSpec spec = read_host_spec(*args.get("--host"));
  if (auto hs = args.get("--host-state")) spec.state = read_host_state(*hs);
  return spec;
}

HostSpec read_host_spec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_input(path, "--host", "cannot be opened");
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return parse_host_spec(text, path);
}

}  // namespace headroom
