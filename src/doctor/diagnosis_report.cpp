// The doctor's output: the CONTRACT JSON and the report a person reads.
#include <fmt/format.h>
#include <ostream>
#include <sstream>

#include "headroom/doctor.h"
#include "headroom/report.h"
#include "headroom/utf8.h"

namespace headroom {

namespace {

// Every string in the document as valid UTF-8: log text is any bytes, and nlohmann's dump()
// throws on invalid UTF-8 (issue 31: exit 3, HTTP 500).
void repair_strings(nlohmann::ordered_json& j) {
  if (j.is_string()) {
    auto& s = j.get_ref<std::string&>();
    if (!is_valid_utf8(s)) s = valid_utf8(s);
  } else if (j.is_structured()) {
    for (auto& v : j) repair_strings(v);
  }
}

void print_diagnosis_text(std::ostream& out, const Diagnosis& d, const LogScan& scan);
nlohmann::ordered_json diagnosis_json_raw(const Diagnosis& d);

}  // namespace

nlohmann::ordered_json diagnosis_json(const Diagnosis& d) {
  nlohmann::ordered_json j = diagnosis_json_raw(d);
  repair_strings(j);
  return j;
}

void print_diagnosis(std::ostream& out, const Diagnosis& d, const LogScan& scan) {
  std::ostringstream text;
  print_diagnosis_text(text, d, scan);
  out << valid_utf8(text.str());
}

namespace {

nlohmann::ordered_json diagnosis_json_raw(const Diagnosis& d) {
  using J = nlohmann::ordered_json;
  J ev = J::array();
  for (const auto& e : d.evidence) ev.push_back({{"line", e.line}, {"text", e.text}, {"kind", e.kind}});
  J fix = J::array();
  for (const auto& f : d.fixes) {
    fix.push_back({{"flag", f.flag}, {"value", f.value}, {"effect", f.effect}});
    if (f.together) fix.back()["together"] = true;
    if (!f.from.empty()) fix.back()["from"] = f.from;
  }
  J j{{"engine", d.engine},
           {"stage", d.stage},
           {"stage_basis", name(d.stage_basis)},
           {"reached_stage", d.reached_stage.empty() ? J(nullptr) : J(d.reached_stage)},
           {"rank", d.rank},
           {"cause", d.cause ? name(*d.cause) : ""},
           {"explanation", d.explanation},
           {"arithmetic", d.arithmetic},
           {"evidence", ev},
           {"fix", fix},
           {"command", d.command.empty() ? J(nullptr) : J(d.command)},
           {"forecast_after_fix", d.forecast_after_fix ? forecast_json(*d.forecast_after_fix) : J(nullptr)},
           {"will_not_help", d.will_not_help},
           {"calibration", d.calibration},
           {"gaps", d.gaps}};
  j["overrides"] = d.overrides;
  return j;
}

void print_diagnosis_text(std::ostream& out, const Diagnosis& d, const LogScan& scan) {
  out << fmt::format("headroom doctor: {} ({} lines read)\n", scan.source, scan.stats.lines);
  out << fmt::format("engine: {}{}\n", d.engine, scan.engine_version.empty() ? "" : " " + scan.engine_version);
  const std::string gpu = d.rank >= 0 ? fmt::format(", GPU {}", d.rank) : "";
  if (d.stage == "none") out << "stage:  none (healthy start)\n";
  else if (d.stage_basis == StageBasis::Guess)
    out << fmt::format("stage:  {} (a GUESS: nothing in the log places the failure{}{})\n", d.stage,
                       d.reached_stage.empty() ? "" : "; the log reaches " + d.reached_stage, gpu);
  else if (d.stage_basis == StageBasis::Numbers)
    out << fmt::format("stage:  {} (placed by the OOM report's figures{})\n", d.stage, gpu);
  else out << fmt::format("stage:  {}{}\n", d.stage, d.rank >= 0 ? fmt::format(" (GPU {})", d.rank) : "");
  out << fmt::format("cause:  {}\n\n{}\n", d.cause ? name(*d.cause) : "", d.explanation);
  if (!d.arithmetic.empty()) {
    out << "\nthe numbers:\n";
    for (const auto& a : d.arithmetic) out << "  - " << a << "\n";
  }
  if (!d.evidence.empty()) {
    out << "\nevidence:\n";
    for (const auto& e : d.evidence) out << fmt::format("  {:>7}: {}\n", e.line, utf8_prefix(e.text, 220));
  }
  if (!d.calibration.empty()) {
    out << "\ncalibration (what the log said, what the forecast said, which the fixes use):\n";
    for (const auto& c : d.calibration) out << "  " << c << "\n";
  }
  if (!d.fixes.empty()) {
    out << "\nfix (best first):\n";
    int i = 1;
    for (const auto& f : d.fixes) {
      if (f.together) out << fmt::format("     + {}{}{}\n       {}\n", f.flag, f.flag.rfind("--", 0) == 0 ? " " : "=", f.value, f.effect);
      else out << fmt::format("  {}. {}{}{}\n     {}\n", i++, f.flag, f.flag.rfind("--", 0) == 0 ? " " : "=", f.value, f.effect);
    }
  }
  if (!d.command.empty()) out << "\ncommand:\n  " << d.command << "\n";
  if (!d.will_not_help.empty()) {
    out << "\nwill not help:\n";
    for (const auto& w : d.will_not_help) out << "  - " << w << "\n";
  }
  if (!d.overrides.empty()) {
    out << "\nyour options against the log:\n";
    for (const auto& o : d.overrides) out << "  - " << o << "\n";
  }
  if (!d.gaps.empty()) {
    out << "\nnot known:\n";
    for (const auto& g : d.gaps) out << "  - " << g << "\n";
  }
  if (d.forecast_after_fix && !d.forecast_after_fix->ranks.empty()) {
    out << "\nforecast after the fix:\n";
    print_forecast(out, *d.forecast_after_fix);
  }
}

}  // namespace

}  // namespace headroom
