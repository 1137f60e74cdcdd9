// The GPU catalog, read once from the embedded data/gpus.json.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "gpu/apple_silicon.h"
#include "headroom/embedded.h"
#include "headroom/error.h"
#include "headroom/cli.h"
#include "headroom/gpu.h"
#include "headroom/units.h"

namespace headroom {

namespace {
std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Spelling variants: "RTX PRO 6000" == "rtx-pro-6000" == "rtx_pro_6000".
  for (char& c : o) if (c == ' ' || c == '_') c = '-';
  return o;
}

std::vector<GpuSpec> load_catalog() {
  auto text = embedded_file("gpus.json");
  if (!text) fail_input("data/gpus.json", "", "missing from the build");
  auto j = nlohmann::json::parse(*text);
  std::vector<GpuSpec> out;
  for (const auto& g : j.at("gpus")) {
    GpuSpec s;
    s.name = g.at("name").get<std::string>();
    s.display = g.at("display").get<std::string>();
    for (const auto& a : g.at("aliases")) s.aliases.push_back(lower(a.get<std::string>()));
    s.vendor = g.at("vendor").get<std::string>();
    s.arch = g.at("arch").get<std::string>();
    s.sm = g.at("sm").get<int>();
    s.capacity_bytes = g.at("capacity_bytes").get<int64_t>();
    s.smi_total_mib = g.at("smi_total_mib").get<int64_t>();
    s.fp8 = g.at("fp8").get<bool>();
    s.fp4 = g.at("fp4").get<bool>();
    s.bandwidth_tbs = g.at("bandwidth_tbs").get<double>();
    if (!g.contains("interconnect") || !g.at("interconnect").is_string() || !is_interconnect(g.at("interconnect").get<std::string>()))
      fail_input("data/gpus.json", s.name + ".interconnect", fmt::format("missing or not one of {}", fmt::join(kInterconnects, ", ")));
    s.interconnect = g.at("interconnect").get<std::string>();
    s.source = g.at("source").get<std::string>();
    out.push_back(std::move(s));
  }
  return out;
}
}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> catalog = load_catalog();
  return catalog;
}

bool is_interconnect(std::string_view s) {
  return std::find(std::begin(kInterconnects), std::end(kInterconnects), s) != std::end(kInterconnects);
}

namespace {
// A name as nvidia-smi, PyTorch, cloud consoles and reports spell it, reduced to the words that
// tell one catalog row from another: "NVIDIA H100 80GB HBM3" and "H100 SXM5" -> {h100, 80gb} /
// {h100}; "A100 40GB PCIe" -> {40gb, a100, pcie}. Vendor and brand words, the memory type and the
// SXM socket generation are dropped (no two rows differ only by them); "80G" reads as "80gb".
std::vector<std::string> name_words(std::string_view name) {
  static constexpr std::string_view kNoise[] = {"nvidia", "amd", "instinct", "geforce", "tesla", "hbm2", "hbm2e", "hbm3", "hbm3e",
                                               "gddr6", "gddr6x", "gddr7", "sxm", "sxm2", "sxm3", "sxm4", "sxm5", "sxm6", "gpu",
                                               "workstation", "edition"};
  std::vector<std::string> words;
  std::string key = lower(name), w;
  key += '-';
  for (char ch : key) {
    if (ch != '-') {
      w += ch;
      continue;
    }
    if (w.size() >= 2 && w.back() == 'g' && std::all_of(w.begin(), w.end() - 1, [](char d) { return std::isdigit(static_cast<unsigned char>(d)) != 0; }))
      w += 'b';
    if (!w.empty() && std::find(std::begin(kNoise), std::end(kNoise), w) == std::end(kNoise)) words.push_back(w);
    w.clear();
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}
}  // namespace

const GpuSpec* find_gpu(std::string_view name) {
  std::string key = lower(name);
  for (const auto& g : gpu_catalog()) {
    if (g.name == key) return &g;
    if (std::find(g.aliases.begin(), g.aliases.end(), key) != g.aliases.end()) return &g;
  }
  std::string why;  // Apple Silicon: a GPU per chip and memory size (apple_silicon.h)
  if (const GpuSpec* g = apple::find(key, why)) return g;
  if (!why.empty()) return nullptr;
  // Not spelled as a name or alias: the row whose name or an alias has the same words, if only one does.
  const auto words = name_words(name);
  if (words.empty()) return nullptr;
  const GpuSpec* pick = nullptr;
  for (const auto& g : gpu_catalog()) {
    bool same = name_words(g.name) == words;
    for (const auto& a : g.aliases) same = same || name_words(a) == words;
    if (!same) continue;
    if (pick && pick != &g) return nullptr;
    pick = &g;
  }
  return pick;
}

const GpuSpec* find_gpu_for_host(std::string_view reported_name, int64_t smi_total_bytes) {
  if (const GpuSpec* g = find_gpu(reported_name)) return g;
  // The row whose name words all appear in the reported name and whose nvidia-smi total is the
  // reported one (within 1%), the most specific such row ("A100 80GB PCIe": a100-80gb-pcie).
  const auto words = name_words(reported_name);
  const GpuSpec* pick = nullptr;
  size_t best = 0;
  for (const auto& g : gpu_catalog()) {
    const int64_t smi = g.smi_total_mib * MiB;
    if (smi_total_bytes > 0 && (smi <= 0 || std::abs(smi - smi_total_bytes) * 100 > smi_total_bytes)) continue;
    const auto own = name_words(g.name);
    if (own.empty() || !std::includes(words.begin(), words.end(), own.begin(), own.end())) continue;
    if (own.size() > best) best = own.size(), pick = &g;
  }
  return pick;
}

const GpuSpec& require_gpu(std::string_view name) {
  if (const GpuSpec* g = find_gpu(name)) return *g;
  std::string why;
  apple::find(lower(name), why);
  if (!why.empty()) fail_input("--gpu", std::string(name), why);
  std::vector<std::string> names;
  for (const auto& g : gpu_catalog()) {
    names.push_back(g.name);
    names.insert(names.end(), g.aliases.begin(), g.aliases.end());
  }
  const std::string near = did_you_mean(name, names);
  fail_input("--gpu", std::string(name),
             fmt::format("not in the GPU catalog{} ('headroom gpus' lists the {} known; or give --gpu-memory BYTES)",
                         near.empty() ? "" : "; did you mean " + near + "?", gpu_catalog().size()));
}

}  // namespace headroom
