// What `headroom calibrate` prints: per log, the default and the calibrated forecast against the
// log (KV tokens, free memory at capture begin), answer first; then each term, fitted or fixed.
#include <cmath>
#include <fmt/format.h>
#include <ostream>

#include "calibrate/calibrate_report.h"
#include "headroom/units.h"

namespace headroom {

namespace {
using J = nlohmann::ordered_json;
double r2(double x) { return std::round(x * 100) / 100; }
double r3(double x) { return std::round(x * 1000) / 1000; }

J term_json(const FittedTerm& t) {
  J o{{"name", t.name}, {"source", t.source}, {"how", t.how}};
  o["value"] = t.value ? J(t.name.find("scale") != std::string::npos ? r3(*t.value) : *t.value) : J(nullptr);
  return o;
}
std::string term_text(const FittedTerm& t) {
  if (!t.value) return fmt::format("{}: {} ({})", t.name, t.source, t.how);
  const double g = std::abs(*t.value) < GiB / 200.0 ? 0.0 : *t.value / GiB;  // no "-0.00"
  const std::string v = t.name.find("scale") != std::string::npos ? fmt::format("x {:.3f}", *t.value) : fmt::format("{:+.2f} GiB", g);
  return fmt::format("{} {}: {} ({})", t.name, v, t.source, t.how);
}
std::string cap_text(const std::optional<double>& e) { return e ? fmt::format("{:+.2f} GiB", *e) : std::string("n/a"); }
}  // namespace

J calibration_json(const CalibrationRun& run) {
  J logs = J::array();
  for (const auto& r : run.rows) {
    J terms = J::array();
    for (const auto& t : r.fit.terms) terms.push_back(term_json(t));
    J cap = nullptr;
    if (r.fit.capture_begin_free) {
      cap = {{"logged_gib", r2(to_gib(*r.fit.capture_begin_free))}, {"basis", r.fit.capture_begin_basis}};
      if (r.before.capture_begin_gib) cap["default_error_gib"] = r2(*r.before.capture_begin_gib);
      if (r.after.capture_begin_gib) cap["calibrated_error_gib"] = r2(*r.after.capture_begin_gib);
    }
    logs.push_back({{"path", r.fit.path},
                    {"tp", r.fit.deployment.par.tp},
                    {"args", r.fit.args},
                    {"kv_tokens", {{"logged", r.fit.kv_tokens}, {"default", r.before.kv_tokens}, {"calibrated", r.after.kv_tokens},
                                   {"default_error_pct", r2(r.before.kv_pct)}, {"calibrated_error_pct", r2(r.after.kv_pct)}}},
                    {"capture_begin_free", cap},
                    {"terms", terms}});
  }
  return J{{"profile", run.profile.name}, {"path", run.path}, {"logs", logs}, {"saved", profile_json(run.profile)}};
}

void print_calibration(std::ostream& out, const CalibrationRun& run) {
  const auto& p = run.profile;
  out << fmt::format("profile {} ({} on {}, {} log{}) saved to {}\n", p.name, p.terms.engine, p.terms.gpu, p.logs.size(), p.logs.size() == 1 ? "" : "s",
                     run.path);
  out << fmt::format("use it: headroom plan ... --profile {}  (or HEADROOM_PROFILE={})\n\n", p.name, p.name);
  out << fmt::format("{:<40} {:>10} {:>18} {:>18} {:>22}\n", "log", "KV logged", "default", "calibrated", "capture-begin free err");
  for (const auto& r : run.rows) {
    std::string name = r.fit.path.size() > 40 ? "..." + r.fit.path.substr(r.fit.path.size() - 37) : r.fit.path;
    out << fmt::format("{:<40} {:>10} {:>10} {:>+6.1f}% {:>10} {:>+6.1f}% {:>10} -> {}\n", name, r.fit.kv_tokens, r.before.kv_tokens, r.before.kv_pct,
                       r.after.kv_tokens, r.after.kv_pct, cap_text(r.before.capture_begin_gib), cap_text(r.after.capture_begin_gib));
  }
  for (const auto& r : run.rows) {
    out << fmt::format("\n{} (TP {}):\n", r.fit.path, r.fit.deployment.par.tp);
    for (const auto& t : r.fit.terms) out << "  - " << term_text(t) << "\n";
    if (!r.fit.capture_begin_basis.empty()) out << "  - free at capture begin: " << r.fit.capture_begin_basis << "\n";
  }
}

}  // namespace headroom
