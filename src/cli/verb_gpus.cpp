// `headroom gpus [--json]`: the GPU catalog.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/verbs.h"
#include "headroom/gpu.h"
#include "headroom/units.h"

namespace headroom {

int verb_gpus(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom gpus [--json]\n";
    return kExitOk;
  }
  args.reject_unknown({"--json"}, "gpus");
  if (args.has("--json")) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& g : gpu_catalog()) {
      arr.push_back({{"name", g.name}, {"display", g.display}, {"aliases", g.aliases}, {"vendor", g.vendor},
                     {"arch", g.arch}, {"sm", g.sm}, {"capacity_bytes", g.capacity_bytes},
                     {"smi_total_mib", g.smi_total_mib}, {"fp8", g.fp8}, {"fp4", g.fp4},
                     {"bandwidth_tbs", g.bandwidth_tbs}, {"interconnect", g.interconnect}, {"source", g.source}});
    }
    out << nlohmann::ordered_json{{"gpus", arr}}.dump(2) << "\n";
    return kExitOk;
  }
  out << fmt::format("{:<14} {:>10} {:>11} {:>6} {:>4} {:>4} {:>7}  {}\n", "name", "torch GiB", "smi MiB", "arch", "FP8", "FP4", "TB/s", "aliases");
  for (const auto& g : gpu_catalog()) {
    std::string al;
    for (const auto& a : g.aliases) al += (al.empty() ? "" : ", ") + a;
    out << fmt::format("{:<14} {:>10} {:>11} {:>6} {:>4} {:>4} {:>7.3f}  {}\n", g.name, gib2(g.capacity_bytes), g.smi_total_mib,
                       g.sm ? fmt::format("sm{}", g.sm) : g.arch, g.fp8 ? "yes" : "no", g.fp4 ? "yes" : "no", g.bandwidth_tbs, al);
  }
  return kExitOk;
}

}  // namespace headroom
