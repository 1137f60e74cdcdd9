// --device CUDA2,CUDA1: the deployment restricted to those GPUs, in that order (device_select.h).
#include "engines/llamacpp/device_select.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <regex>

#include "headroom/error.h"

namespace headroom::llamacpp {

std::optional<DeviceName> parse_device_name(const std::string& name) {
  static const std::regex re(R"((CUDA|ROCm|Vulkan|SYCL|MTL|Metal)(\d+))");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return std::nullopt;
  const std::string digits = m[2].str();
  return DeviceName{m[1].str(), digits.size() > 6 ? 1000000 : std::stoi(digits)};  // more digits: no such device
}

namespace {
// "CUDA2" -> its position in `ids` (InputError naming `flag` when it is not one of them).
std::string position_of(const std::string& name, const std::vector<int>& ids, const char* flag) {
  const auto dev = parse_device_name(name);
  if (!dev) return name;
  const auto it = std::find(ids.begin(), ids.end(), dev->number);
  if (it == ids.end()) fail_input("command line", flag, fmt::format("{} is not one of the devices --device names (not modelled)", name));
  return dev->backend + std::to_string(it - ids.begin());
}

// -ot PATTERN=BUFFER[,PATTERN=BUFFER]: each buffer name mapped.
std::string map_overrides(const std::string& v, const std::vector<int>& ids) {
  std::string out;
  for (size_t at = 0; at <= v.size();) {
    const size_t end = std::min(v.find(',', at), v.size());
    const std::string rule = v.substr(at, end - at);
    const size_t eq = rule.rfind('=');
    out += (out.empty() ? "" : ",") + (eq == std::string::npos ? rule : rule.substr(0, eq + 1) + position_of(rule.substr(eq + 1), ids, "--override-tensor"));
    at = end + 1;
  }
  return out;
}
}  // namespace

std::vector<int> device_list(const Deployment& d) {
  const std::string* v = d.flag("--device");
  if (!v) return {};
  if (*v == "none")
    fail_input("command line", "--device", "none: every layer on the CPU, nothing on a GPU to plan (-ngl 0 keeps the weights on the host)");
  std::vector<int> ids;
  for (size_t at = 0; at <= v->size();) {
    const size_t end = std::min(v->find(',', at), v->size());
    const std::string name = v->substr(at, end - at);
    const auto dev = parse_device_name(name);
    if (!dev) fail_input("command line", "--device", fmt::format("'{}' is not a device such as CUDA0", name));
    const int host = dev->number;
    if (host >= d.gpus) fail_input("command line", "--device", fmt::format("{}: there are {} GPUs (--gpus)", name, d.gpus));
    if (std::find(ids.begin(), ids.end(), host) != ids.end()) fail_input("command line", "--device", fmt::format("{} is named twice", name));
    ids.push_back(host);
    at = end + 1;
  }
  return ids;
}

Deployment on_devices(const Deployment& d, const std::vector<int>& ids, std::vector<std::string>& notes) {
  Deployment r = d;
  r.gpus = static_cast<int>(ids.size());
  r.gpu_list.clear();
  r.held_by_others.clear();
  for (int host : ids) {
    r.gpu_list.push_back(d.gpu_list.empty() ? d.gpu : d.gpu_list[static_cast<size_t>(host)]);
    if (d.gpu_list.empty()) r.gpu_list.back().capacity_bytes = d.capacity_bytes;  // --gpu-memory's, when given
    r.held_by_others.push_back(d.held_by_others_on(static_cast<size_t>(host)));
  }
  for (auto& [flag, value] : r.flags) {
    if (flag == "--override-tensor") value = map_overrides(value, ids);
    if (flag == "--device-draft") value = position_of(value, ids, "--device-draft");
    if (flag == "--tensor-split") {  // llama.cpp reads one proportion per device it uses; the rest are ignored
      std::vector<std::string> parts;
      for (size_t at = 0; at <= value.size();) {
        const size_t end = std::min(value.find_first_of(",/", at), value.size());
        parts.push_back(value.substr(at, end - at));
        at = end + 1;
      }
      if (parts.size() > ids.size()) {
        notes.push_back(fmt::format("--tensor-split {}: llama.cpp reads the first {} proportions, one per --device", value, ids.size()));
        parts.resize(ids.size());
        value = fmt::format("{}", fmt::join(parts, ","));
      }
    }
  }
  return r;
}

}  // namespace headroom::llamacpp
