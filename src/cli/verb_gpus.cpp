// `headroom gpus [NAME ...] [--json]`: the GPU catalog, or the rows whose name, alias or display
// name contains one of the NAMEs (an Apple Silicon name with its memory: that GPU). A figure the
// catalog does not have prints as "-".
#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/verbs.h"
#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/units.h"
#include "gpu/apple_silicon.h"

namespace headroom {

int verb_gpus(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom gpus [NAME ...] [--json]\n"
           "NAME: only the GPUs whose name, alias or display name contains it (case-insensitive), e.g. headroom gpus h100\n";
    return kExitOk;
  }
  args.reject_unknown({"--json"}, "gpus");
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::vector<const GpuSpec*> rows;
  for (const auto& g : gpu_catalog()) {
    bool keep = args.positionals().empty();
    for (const auto& want : args.positionals()) {
      const std::string w = lower(want);
      keep = keep || lower(g.name).find(w) != std::string::npos || lower(g.display).find(w) != std::string::npos;
      for (const auto& a : g.aliases) keep = keep || lower(a).find(w) != std::string::npos;
    }
    if (keep) rows.push_back(&g);
  }
  // Apple Silicon has no rows (a GPU per chip and memory): a name with its memory shows that GPU,
  // and the JSON list (what the web page offers) ends with every chip and memory of the line-ups.
  for (const auto& want : args.positionals())
    if (const GpuSpec* g = find_gpu(want); g && g->vendor == "apple") rows.push_back(g);
  if (args.positionals().empty() && args.has("--json"))
    for (const auto& name : apple::lineup_names())
      if (const GpuSpec* g = find_gpu(name)) rows.push_back(g);
  if (rows.empty()) {
    std::vector<std::string> names;
    for (const auto& g : gpu_catalog()) names.push_back(g.name);
    const std::string near = did_you_mean(args.positionals().front(), names);
    fail_input("gpus", args.positionals().front(), "no GPU in the catalog matches" + (near.empty() ? std::string() : "; did you mean " + near + "?"));
  }
  if (args.has("--json")) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const GpuSpec* gp : rows) {
      const GpuSpec& g = *gp;
      arr.push_back({{"name", g.name}, {"display", g.display}, {"aliases", g.aliases}, {"vendor", g.vendor},
                     {"arch", g.arch}, {"sm", g.sm}, {"capacity_bytes", g.capacity_bytes},
                     {"smi_total_mib", g.smi_total_mib}, {"fp8", g.fp8}, {"fp4", g.fp4},
                     {"bandwidth_tbs", g.bandwidth_tbs}, {"interconnect", g.interconnect}, {"source", g.source}});
    }
    out << nlohmann::ordered_json{{"gpus", arr}}.dump(2) << "\n";
    return kExitOk;
  }
  size_t width = 4;
  for (const GpuSpec* g : rows) width = std::max(width, g->name.size());
  out << fmt::format("{:<{}} {:>10} {:>11} {:>6} {:>4} {:>4} {:>7}  {}\n", "name", width, "torch GiB", "smi MiB", "arch", "FP8", "FP4", "TB/s", "aliases");
  for (const GpuSpec* gp : rows) {
    const GpuSpec& g = *gp;
    std::string al;
    for (const auto& a : g.aliases) al += (al.empty() ? "" : ", ") + a;
    out << fmt::format("{:<{}} {:>10} {:>11} {:>6} {:>4} {:>4} {:>7}  {}\n", g.name, width, g.capacity_bytes > 0 ? gib2(g.capacity_bytes) : "-",
                       g.smi_total_mib > 0 ? std::to_string(g.smi_total_mib) : "-", g.sm ? fmt::format("sm{}", g.sm) : g.arch.empty() ? "-" : g.arch,
                       g.fp8 ? "yes" : "no", g.fp4 ? "yes" : "no", g.bandwidth_tbs > 0 ? fmt::format("{:.3f}", g.bandwidth_tbs) : "-", al);
  }
  if (args.positionals().empty())
    out << "Apple Silicon: --gpu apple-CHIP-NNgb, e.g. apple-m3-max-64gb (Metal's working set for that memory; docs/gpus.md)\n";
  return kExitOk;
}

}  // namespace headroom
