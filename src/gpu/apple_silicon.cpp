// Apple Silicon GPUs, parametric in chip and RAM: one GpuSpec per name asked for, kept for the
// life of the process so find_gpu can hand out a pointer as it does for catalog rows.
#include "gpu/apple_silicon.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <mutex>
#include <regex>
#include <vector>

#include "headroom/units.h"

namespace headroom::apple {

namespace {
// The unified-memory sizes each chip ships with (GB), from Apple's tech specs pages; a chip not
// listed here (M5 Pro/Max/Ultra) takes any size.
struct Lineup {
  std::string_view chip;
  std::vector<int> ram_gb;
};
const std::vector<Lineup>& lineups() {
  static const std::vector<Lineup> rows = {
      {"m1", {8, 16}},          {"m1-pro", {16, 32}},          {"m1-max", {32, 64}},         {"m1-ultra", {64, 128}},
      {"m2", {8, 16, 24}},      {"m2-pro", {16, 32}},          {"m2-max", {32, 64, 96}},     {"m2-ultra", {64, 128, 192}},
      {"m3", {8, 16, 24}},      {"m3-pro", {18, 36}},          {"m3-max", {36, 48, 64, 96, 128}}, {"m3-ultra", {96, 256, 512}},
      {"m4", {8, 16, 24, 32}},  {"m4-pro", {24, 48, 64}},      {"m4-max", {36, 48, 64, 128}}, {"m5", {16, 24, 32}},
  };
  return rows;
}

const Lineup* lineup(std::string_view chip) {
  for (const auto& l : lineups())
    if (l.chip == chip) return &l;
  return nullptr;
}

std::string display_chip(std::string_view chip) {  // "m3-max" -> "M3 Max"
  std::string out = "M" + std::string(chip.substr(1, 1));
  if (chip.size() > 3) {
    std::string tier(chip.substr(3));
    tier[0] = static_cast<char>(tier[0] - 'a' + 'A');
    out += " " + tier;
  }
  return out;
}

GpuSpec make_spec(const std::string& chip, int ram_gb) {
  GpuSpec g;
  g.name = fmt::format("apple-{}-{}gb", chip, ram_gb);
  g.display = fmt::format("Apple {} ({} GB unified memory)", display_chip(chip), ram_gb);
  g.aliases = {fmt::format("{}-{}gb", chip, ram_gb)};
  g.vendor = "apple";
  g.arch = "apple-" + chip.substr(0, 2);
  g.capacity_bytes = working_set_bytes(int64_t{ram_gb} * GiB);
  g.interconnect = "network";
  g.source = fmt::format("Metal recommendedMaxWorkingSetSize for {} GB of unified memory ({} of it), as llama.cpp prints it at "
                         "startup; the rule and its logged figures: docs/gpus.md",
                         ram_gb, ram_gb <= 32 ? "2/3" : "3/4");
  return g;
}
}  // namespace

int64_t working_set_bytes(int64_t ram_bytes) {
  constexpr int64_t kPage = 16384;  // Apple Silicon's page: the logged figures are whole pages
  const int64_t pages = ram_bytes / kPage, num = ram_bytes <= 32 * GiB ? 2 : 3, den = ram_bytes <= 32 * GiB ? 3 : 4;
  return (pages * num + den - 1) / den * kPage;
}

const GpuSpec* find(std::string_view key, std::string& why) {
  static const std::regex shape(R"(^(apple-)?(m[1-5](-(pro|max|ultra))?)(-([0-9]{1,4})-?gb)?$)");
  why.clear();
  const std::string k(key);
  std::smatch m;
  if (!std::regex_match(k, m, shape)) return nullptr;
  const std::string chip = m[2].str();
  const Lineup* known = lineup(chip);
  const std::string name = "apple-" + chip;
  if (!m[6].matched) {
    why = known ? fmt::format("give the memory, e.g. {0}-{1}gb or {0}-{2}gb", name, known->ram_gb.front(), known->ram_gb.back())
                : fmt::format("give the memory, e.g. {}-64gb", name);
    return nullptr;
  }
  const int ram_gb = std::stoi(m[6].str());
  if (known && std::find(known->ram_gb.begin(), known->ram_gb.end(), ram_gb) == known->ram_gb.end()) {
    why = fmt::format("Apple {} ships with {} GB of memory, not {} GB", display_chip(chip), fmt::join(known->ram_gb, ", "), ram_gb);
    return nullptr;
  }
  if (!known && (ram_gb < 8 || ram_gb > 1024)) {
    why = fmt::format("{} GB is not a Mac's memory size (8 to 1024)", ram_gb);
    return nullptr;
  }
  static std::mutex lock;
  static std::map<std::string, GpuSpec> made;  // node-based: pointers stay valid as it grows
  const std::lock_guard<std::mutex> hold(lock);
  auto it = made.find(fmt::format("{}-{}", chip, ram_gb));
  if (it == made.end()) it = made.emplace(fmt::format("{}-{}", chip, ram_gb), make_spec(chip, ram_gb)).first;
  return &it->second;
}

std::vector<std::string> lineup_names() {
  std::vector<std::string> out;
  for (const auto& l : lineups())
    for (int gb : l.ram_gb) out.push_back("apple-" + std::string(l.chip) + "-" + std::to_string(gb) + "gb");
  return out;
}

}  // namespace headroom::apple
