// Several logs' fits -> one host profile: the logs must come from one GPU and one engine; terms at
// the same TP size are averaged, as are the scales (each log weighs the same).
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <fmt/format.h>

#include "headroom/calibrate.h"
#include "headroom/error.h"

namespace headroom {

namespace {
struct Mean {
  double sum = 0;
  int n = 0;
  void add(const std::optional<double>& v) {
    if (v) sum += *v, ++n;
  }
  void add(const std::optional<int64_t>& v) {
    if (v) sum += static_cast<double>(*v), ++n;
  }
  std::optional<double> scale() const { return n ? std::optional<double>(sum / n) : std::nullopt; }
  std::optional<int64_t> bytes() const { return n ? std::optional<int64_t>(static_cast<int64_t>(std::llround(sum / n))) : std::nullopt; }
};
}  // namespace

HostProfile combine_fits(const std::string& name, const std::vector<LogFit>& fits) {
  if (fits.empty()) fail_input("calibrate", "LOG", "give at least one startup log");
  HostProfile p;
  p.name = name;
  const Deployment& d0 = fits.front().deployment;
  p.terms.host = name;
  p.terms.gpu = d0.gpu.name;
  p.terms.capacity_bytes = d0.capacity_bytes;
  p.terms.engine = std::string(engine_kind_name(d0.engine));
  std::map<int, std::array<Mean, 4>> per_tp;
  Mean act, graph, gest;
  for (const auto& f : fits) {
    const Deployment& d = f.deployment;
    if (d.engine != d0.engine || d.gpu.name != d0.gpu.name || d.capacity_bytes != d0.capacity_bytes)
      fail_input(f.path, "", fmt::format("is a {} log on {} and {} one on {}: one profile holds one GPU and one engine (calibrate them apart)",
                                         engine_kind_name(d.engine), d.gpu.name, engine_kind_name(d0.engine), d0.gpu.name));
    auto& m = per_tp[std::max(1, d.par.tp)];
    m[0].add(f.at_tp.init_bytes);
    m[1].add(f.at_tp.after_load_extra_bytes);
    m[2].add(f.at_tp.before_capture_extra_bytes);
    m[3].add(f.at_tp.non_torch_bytes);
    act.add(f.activation_scale);
    graph.add(f.graph_scale);
    gest.add(f.graph_estimate_scale);
    if (p.engine_version.empty()) p.engine_version = f.engine_version;
    if (p.driver.empty()) p.driver = f.driver;
    p.logs.push_back({std::filesystem::absolute(f.path).string(), f.digest, f.bytes});
  }
  for (const auto& [tp, m] : per_tp)
    p.terms.per_tp[tp] = CalibrationAtTp{m[0].bytes(), m[1].bytes(), m[2].bytes(), m[3].bytes()};
  p.terms.activation_scale = act.scale();
  p.terms.graph_scale = graph.scale();
  p.terms.graph_estimate_scale = gest.scale();
  return p;
}

}  // namespace headroom
