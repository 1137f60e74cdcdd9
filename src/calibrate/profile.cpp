// Host profiles on disk: where they live ($XDG_CONFIG_HOME/headroom/profiles/NAME.json), their
// JSON form, and attaching one to a deployment (--profile NAME / HEADROOM_PROFILE) with the
// refusal of a profile fitted on another GPU or engine.
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <sstream>
#include <type_traits>

#include "headroom/calibrate.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace fs = std::filesystem;

namespace headroom {

namespace {
using J = nlohmann::ordered_json;

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

J tp_json(const CalibrationAtTp& t) {
  J o = J::object();
  if (t.init_bytes) o["init_bytes"] = *t.init_bytes;
  if (t.after_load_extra_bytes) o["after_load_extra_bytes"] = *t.after_load_extra_bytes;
  if (t.before_capture_extra_bytes) o["before_capture_extra_bytes"] = *t.before_capture_extra_bytes;
  if (t.non_torch_bytes) o["non_torch_bytes"] = *t.non_torch_bytes;
  return o;
}

// An optional integer (bytes) or number (a scale) field; InputError when present with another type.
template <class T>
std::optional<T> opt_num(const nlohmann::json& o, const char* key, const std::string& source) {
  if (!o.contains(key) || o[key].is_null()) return std::nullopt;
  if (!o[key].is_number()) fail_input(source, key, "must be a number");
  const T v = o[key].get<T>();
  if constexpr (std::is_floating_point_v<T>) {
    if (!(v > 0.0 && v < 100.0)) fail_input(source, key, fmt::format("scale {} is not a ratio between 0 and 100", v));
  } else {
    if (v < -(int64_t{1} << 40) || v > (int64_t{1} << 40)) fail_input(source, key, fmt::format("{} bytes is not a GPU's memory term", v));
  }
  return v;
}

std::string req_str(const nlohmann::json& j, const char* key, const std::string& source) {
  if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty()) fail_input(source, key, "missing (a profile names it)");
  return j[key].get<std::string>();
}
}  // namespace

std::string profile_dir() {
  if (auto x = env("XDG_CONFIG_HOME")) return (fs::path(*x) / "headroom" / "profiles").string();
  if (auto h = env("HOME")) return (fs::path(*h) / ".config" / "headroom" / "profiles").string();
  fail_input("profile", "XDG_CONFIG_HOME", "neither XDG_CONFIG_HOME nor HOME is set: no folder for host profiles");
}

void check_profile_name(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 100 && name[0] != '.' &&
                  std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'; });
  if (!ok) fail_input("--profile", name, "a profile name is letters, digits, '.', '_' or '-' (it names a file)");
}

std::string profile_path(const std::string& name) {
  check_profile_name(name);
  return (fs::path(profile_dir()) / (name + ".json")).string();
}

J profile_json(const HostProfile& p) {
  J logs = J::array();
  for (const auto& l : p.logs) logs.push_back({{"path", l.path}, {"digest", l.digest}, {"bytes", l.bytes}});
  J per_tp = J::object();
  for (const auto& [tp, t] : p.terms.per_tp) per_tp[std::to_string(tp)] = tp_json(t);
  J terms{{"per_tp", per_tp}};
  if (p.terms.activation_scale) terms["activation_scale"] = *p.terms.activation_scale;
  if (p.terms.graph_scale) terms["graph_scale"] = *p.terms.graph_scale;
  if (p.terms.graph_estimate_scale) terms["graph_estimate_scale"] = *p.terms.graph_estimate_scale;
  return J{{"name", p.name},         {"gpu", p.terms.gpu},       {"capacity_bytes", p.terms.capacity_bytes},
           {"engine", p.terms.engine}, {"engine_version", p.engine_version}, {"driver", p.driver},
           {"logs", logs},           {"terms", terms}};
}

HostProfile profile_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) fail_input(source, "", "a profile is a JSON object");
  HostProfile p;
  p.name = req_str(j, "name", source);
  p.terms.host = p.name;
  p.terms.gpu = req_str(j, "gpu", source);
  p.terms.engine = req_str(j, "engine", source);
  p.terms.capacity_bytes = opt_num<int64_t>(j, "capacity_bytes", source).value_or(0);
  if (j.contains("engine_version") && j["engine_version"].is_string()) p.engine_version = j["engine_version"];
  if (j.contains("driver") && j["driver"].is_string()) p.driver = j["driver"];
  if (j.contains("logs") && j["logs"].is_array())
    for (const auto& l : j["logs"])
      if (l.is_object() && l.contains("path") && l["path"].is_string())
        p.logs.push_back({l["path"].get<std::string>(), l.value("digest", std::string()), l.value("bytes", int64_t{0})});
  if (!j.contains("terms") || !j["terms"].is_object()) fail_input(source, "terms", "missing (a profile holds the fitted terms)");
  const auto& t = j["terms"];
  p.terms.activation_scale = opt_num<double>(t, "activation_scale", source);
  p.terms.graph_scale = opt_num<double>(t, "graph_scale", source);
  p.terms.graph_estimate_scale = opt_num<double>(t, "graph_estimate_scale", source);
  if (t.contains("per_tp")) {
    if (!t["per_tp"].is_object()) fail_input(source, "terms.per_tp", "must be an object keyed by TP size");
    for (const auto& [k, v] : t["per_tp"].items()) {
      int tp = 0;
      try {
        tp = std::stoi(k);
      } catch (...) {
      }
      if (tp < 1 || tp > 4096 || std::to_string(tp) != k) fail_input(source, "terms.per_tp", fmt::format("key '{}' is not a TP size", k));
      if (!v.is_object()) fail_input(source, "terms.per_tp." + k, "must be an object");
      CalibrationAtTp at;
      at.init_bytes = opt_num<int64_t>(v, "init_bytes", source);
      if (at.init_bytes && *at.init_bytes < 0) fail_input(source, "init_bytes", "memory before weights cannot be negative");
      at.after_load_extra_bytes = opt_num<int64_t>(v, "after_load_extra_bytes", source);
      at.before_capture_extra_bytes = opt_num<int64_t>(v, "before_capture_extra_bytes", source);
      at.non_torch_bytes = opt_num<int64_t>(v, "non_torch_bytes", source);
      p.terms.per_tp[tp] = at;
    }
  }
  return p;
}

HostProfile load_profile(const std::string& name) {
  const std::string path = profile_path(name);
  std::ifstream in(path);
  if (!in) fail_input("--profile", name, fmt::format("no profile {} (run headroom calibrate LOG --name {})", path, name));
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ss.str());
  } catch (const std::exception&) {
    fail_input(path, "", "not valid JSON (a host profile is written by headroom calibrate)");
  }
  return profile_from_json(j, path);
}

void save_profile(const HostProfile& p) {
  const std::string path = profile_path(p.name);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) fail_input(path, "", "cannot write the profile (is the folder writable?)");
    out << profile_json(p).dump(2) << "\n";
    if (!out) fail_input(path, "", "cannot write the profile");
  }
  fs::rename(tmp, path, ec);
  if (ec) fail_input(path, "", "cannot write the profile: " + ec.message());
}

std::string profile_name_from(const Args& args) {
  if (auto p = args.get("--profile")) return *p;
  return env("HEADROOM_PROFILE").value_or("");
}

void attach_profile(const Args& args, Deployment& d, bool check_gpu) {
  const std::string name = profile_name_from(args);
  if (name.empty()) return;
  HostProfile p = load_profile(name);
  const std::string engine(engine_kind_name(d.engine));
  if (p.terms.engine != engine)
    fail_input("--profile", name, fmt::format("fitted on {} logs, not {}: calibrate this engine's logs into another profile", p.terms.engine, engine));
  if (!check_gpu) {  // fit: the engines apply it to the candidates on the profile's GPU only
    d.calibration = std::make_shared<const Calibration>(p.terms);
    return;
  }
  if (p.terms.gpu != d.gpu.name)
    fail_input("--profile", name, fmt::format("fitted on {} ({}), not {}: a host's terms hold for its own GPU", p.terms.gpu,
                                              fmt::format("{:.2f} GiB", to_gib(p.terms.capacity_bytes)), d.gpu.name));
  // The capacity PyTorch reported on the host (as its logs print it) is the host's: taken unless
  // --gpu-memory says otherwise, and then it must agree.
  if (p.terms.capacity_bytes > 0 && !args.has("--gpu-memory")) d.capacity_bytes = p.terms.capacity_bytes;
  if (p.terms.capacity_bytes > 0 && std::llabs(p.terms.capacity_bytes - d.capacity_bytes) > 64 * MiB)
    fail_input("--profile", name, fmt::format("fitted at {:.2f} GiB capacity, the deployment has {:.2f} GiB", to_gib(p.terms.capacity_bytes),
                                              to_gib(d.capacity_bytes)));
  d.calibration = std::make_shared<const Calibration>(p.terms);
}

}  // namespace headroom
