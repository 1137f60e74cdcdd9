// `headroom rules --engine ENGINE[@VERSION] [--all] [--estimates] [--json]`: the memory rules in
// force for that version (issue 27), each with when it started and its source; --all adds the ones
// not in force; --estimates the engine's estimated constants with their ranges and evidence.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/verbs.h"
#include "headroom/deployment.h"
#include "headroom/error.h"
#include "headroom/estimates.h"
#include "headroom/rules.h"

namespace headroom {

namespace {
nlohmann::ordered_json status_json(const RuleStatus& s, EngineKind e) {
  nlohmann::ordered_json j = rule_json(*s.rule, e);
  j["in_force"] = s.in_force;
  return j;
}

// The engine's own table, then the shared terms it calls (vLLM and TensorRT-LLM's PyTorch backend).
std::vector<EstimatedConstant> constants_of(EngineKind e) {
  std::vector<EstimatedConstant> rows;
  for (const auto& r : estimated_constants(e)) rows.push_back(r);
  if (e == EngineKind::VLLM || e == EngineKind::TRTLLM)
    for (const auto& r : shared_estimated_constants()) rows.push_back(r);
  return rows;
}

int print_estimates(EngineKind e, bool json, std::ostream& out) {
  const std::vector<EstimatedConstant> rows = constants_of(e);
  if (json) {
    nlohmann::ordered_json j{{"engine", std::string(engine_kind_name(e))}, {"estimates", nlohmann::ordered_json::array()}};
    for (const auto& r : rows)
      j["estimates"].push_back({{"id", r.id}, {"central", r.central}, {"low", r.low}, {"high", r.high}, {"unit", r.unit},
                                {"evidence", evidence_name(r.evidence)}, {"cases", r.cases}, {"what", r.what}});
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  out << fmt::format("headroom rules --estimates: {}: {} estimated constants in tables\n", engine_kind_name(e), rows.size());
  for (const auto& r : rows)
    out << fmt::format("\n  {}  {} {} (range {} .. {})  {}\n      {}{}\n", r.id, r.central, r.unit, r.low, r.high, evidence_name(r.evidence), r.what,
                       r.cases.empty() ? "" : fmt::format("\n      cases: {}", r.cases));
  return kExitOk;
}
}  // namespace

int verb_rules(const Args& args, std::ostream& out, std::ostream& /*err*/) {
  if (args.has("--help")) {
    out << "usage: headroom rules --engine sglang|vllm|trtllm|llamacpp[@VERSION] [--all] [--estimates] [--json]\n"
           "The engine's memory rules in force for that version (what each changes, since when, its source);\n"
           "--all lists the rules of other versions too; --estimates the estimated constants (central, range, evidence, cases).\n"
           "`headroom diff` names the rules that differ between two versions.\n";
    return kExitOk;
  }
  for (const auto& [k, v] : args.options())
    if (k != "--engine" && k != "--all" && k != "--json" && k != "--estimates")
      fail_input("command line", k, "not an option of 'headroom rules' (--engine, --all, --estimates, --json)");
  if (!args.positionals().empty()) fail_input("command line", args.positionals().front(), "unexpected argument for 'headroom rules'");
  const std::optional<std::string> spec = args.get("--engine");
  if (!spec) fail_input("command line", "--engine", "is required (e.g. --engine vllm@0.10.2)");
  const auto [kind, version] = parse_engine_spec(*spec);
  if (args.has("--estimates")) return print_estimates(kind, args.has("--json"), out);
  const EngineRuleSet set = engine_rules(kind, version);
  const bool all = args.has("--all");
  size_t in_force = 0;
  for (const auto& s : set.rules) in_force += s.in_force ? 1 : 0;
  if (args.has("--json")) {
    nlohmann::ordered_json j{{"engine", set.engine}, {"version", set.version}, {"label", set.label}, {"reason", set.reason}};
    j["rules"] = nlohmann::ordered_json::array();
    for (const auto& s : set.rules)
      if (s.in_force || all) j["rules"].push_back(status_json(s, kind));
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  out << fmt::format("headroom rules: {} {}: {} of {} rules in force ({})\n", set.engine, set.version, in_force, set.rules.size(), set.label);
  out << fmt::format("  version read as: {}\n\n", set.reason);
  for (const auto& s : set.rules) {
    if (!s.in_force && !all) continue;
    const EngineRule& r = *s.rule;
    const std::string since = rule_point_text(r.since, kind), until = rule_point_text(r.until, kind);
    out << fmt::format("  {} {}\n      {}; {}{}{}\n      source: {}\n", s.in_force ? "+" : "-", r.id, r.what, since.empty() ? "from the start" : "since " + since,
                       until.empty() ? "" : ", until " + until, s.in_force ? "" : " (not in this version)", r.source);
  }
  if (!all && in_force < set.rules.size()) out << fmt::format("\n({} rules of other versions: --all)\n", set.rules.size() - in_force);
  return kExitOk;
}

}  // namespace headroom
