// `headroom diff --engine E@V1 --to E@V2 [deployment options] [--json]`: one deployment under two
// releases of the same engine (for users who upgrade): verdicts, KV capacity, the settings in
// force that differ, stage by stage on rank 0, and the rules (the engine's rule table, rules.h)
// in force in one release and not the other, with their sources.
#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/verbs.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/engine_traits.h"
#include "headroom/error.h"
#include "headroom/rules.h"
#include "headroom/units.h"

namespace headroom {

namespace {

using J = nlohmann::ordered_json;

// The rules (rules.h tables) in force in `a`'s version and not in `b`'s.
std::vector<const EngineRule*> only_in(const EngineRuleSet& a, const EngineRuleSet& b) {
  std::vector<const EngineRule*> out;
  for (size_t i = 0; i < a.rules.size() && i < b.rules.size(); ++i)
    if (a.rules[i].in_force && !b.rules[i].in_force) out.push_back(a.rules[i].rule);
  return out;
}

J rules_json(const std::vector<const EngineRule*>& rules, EngineKind e) {
  J out = J::array();
  for (const EngineRule* r : rules) out.push_back(rule_json(*r, e));
  return out;
}

struct StageRow {
  StageId id;
  int64_t from = 0, to = 0;
};
// Rank 0's stages (net bytes of each stage's items), in the order either release runs them.
std::vector<StageRow> stage_rows(const Forecast& a, const Forecast& b) {
  std::vector<StageRow> rows;
  auto add = [&](const Forecast& f, bool first) {
    if (f.ranks.empty()) return;
    for (const auto& st : f.ranks.front().stages) {
      int64_t sum = 0;
      for (const auto& it : st.items) sum += it.bytes;
      auto r = std::find_if(rows.begin(), rows.end(), [&](const StageRow& x) { return x.id == st.id; });
      if (r == rows.end()) r = rows.insert(rows.end(), StageRow{st.id, 0, 0});
      (first ? r->from : r->to) += sum;
    }
  };
  add(a, true);
  add(b, false);
  return rows;
}

struct SettingRow {
  std::string flag, from, to;
};
std::vector<SettingRow> setting_rows(const Forecast& a, const Forecast& b) {
  std::vector<SettingRow> rows;
  for (const auto& [k, v] : a.settings) {
    const std::string* w = b.setting(k);
    if (!w || *w != v) rows.push_back({k, v, w ? *w : "-"});
  }
  for (const auto& [k, v] : b.settings)
    if (!a.setting(k)) rows.push_back({k, "-", v});
  return rows;
}

std::string signed_bytes(int64_t d) { return (d > 0 ? "+" : d < 0 ? "-" : "") + human_bytes(d < 0 ? -d : d); }

J side_json(const Forecast& f) {
  return J{{"engine", f.engine}, {"version", f.version}, {"rules", f.era}, {"verdict", std::string(verdict_name(f.verdict))},
           {"kv_tokens", f.kv_tokens}, {"failure_stage", f.failure ? J(name(f.failure->stage)) : J(nullptr)}};
}

}  // namespace

int verb_diff(const Args& args, std::ostream& out, std::ostream& /*err*/) {
  if (args.has("--help")) {
    out << "usage: headroom diff --engine ENGINE@VERSION --to [ENGINE@]VERSION [deployment options] [--json]\n"
           "One deployment under two releases of the same engine: verdicts, KV capacity, the settings in force that differ,\n"
           "stage by stage on rank 0, and the rules in force in one release and not the other (see 'headroom rules').\n";
    return kExitOk;
  }
  if (!args.positionals().empty()) fail_input("command line", args.positionals().front(), "unexpected argument for 'headroom diff'");
  const auto from_spec = args.get("--engine");
  const auto to_arg = args.get("--to");
  if (!from_spec || !to_arg) fail_input("command line", from_spec ? "--to" : "--engine", "diff needs --engine ENGINE@VERSION and --to [ENGINE@]VERSION");
  const auto [kind, from_version] = parse_engine_spec(*from_spec);
  const std::string engine_name = from_spec->substr(0, from_spec->find('@'));
  // --to names an engine (vllm@0.10.2, sglang) or gives the version alone (0.10.2, main@2026-03-15, b8157).
  const std::string to_spec = traits_by_name(to_arg->substr(0, to_arg->find('@'))) ? *to_arg : engine_name + "@" + *to_arg;
  if (parse_engine_spec(to_spec).first != kind)
    fail_input("command line", "--to", fmt::format("'{}' is another engine; 'headroom compare' puts engines side by side", *to_arg));

  std::vector<std::string> base;
  for (const auto& [k, v] : args.options()) {
    if (k == "--engine" || k == "--to" || k == "--json") continue;
    base.push_back(k);
    if (!(is_boolean_flag(k) && v == "true")) base.push_back(v);
  }
  auto plan_with = [&](const std::string& spec) {
    std::vector<std::string> argv{"--engine", spec};
    argv.insert(argv.end(), base.begin(), base.end());
    return plan(parse_deployment(Args::parse(argv)));
  };
  const Forecast a = plan_with(*from_spec), b = plan_with(to_spec);
  const EngineRuleSet ra = engine_rules(kind, from_version), rb = engine_rules(kind, parse_engine_spec(to_spec).second);
  const auto gone = only_in(ra, rb), added = only_in(rb, ra);
  const auto stages = stage_rows(a, b);
  const auto settings = setting_rows(a, b);
  const int64_t dkv = b.kv_tokens - a.kv_tokens;

  if (args.has("--json")) {
    J j{{"from", side_json(a)}, {"to", side_json(b)}, {"kv_tokens", {{"from", a.kv_tokens}, {"to", b.kv_tokens}, {"delta", dkv}}}};
    j["stages"] = J::array();
    for (const auto& s : stages)
      j["stages"].push_back({{"name", name(s.id)}, {"from_bytes", s.from}, {"to_bytes", s.to}, {"delta_bytes", s.to - s.from}});
    j["settings"] = J::array();
    for (const auto& s : settings) j["settings"].push_back({{"flag", s.flag}, {"from", s.from}, {"to", s.to}});
    j["rules"] = {{"only_from", rules_json(gone, kind)}, {"only_to", rules_json(added, kind)}};
    out << j.dump(2) << "\n";
    return b.verdict == Verdict::Oom || b.verdict == Verdict::Refused ? kExitFails : kExitOk;
  }
  out << fmt::format("headroom diff: {} {} -> {}\n", a.engine, a.version, b.version);
  out << fmt::format("verdict: {} -> {}\n", verdict_name(a.verdict), verdict_name(b.verdict));
  out << fmt::format("KV cache: {} -> {} tokens ({}{})\n", a.kv_tokens, b.kv_tokens, dkv >= 0 ? "+" : "",
                     a.kv_tokens > 0 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(dkv) / static_cast<double>(a.kv_tokens)) : std::to_string(dkv));
  out << fmt::format("rules: {}\n    -> {}\n", a.era.substr(0, a.era.find("; ")), b.era.substr(0, b.era.find("; ")));
  for (const EngineRule* r : gone) out << fmt::format("  only in {}: {} ({}; {})\n", a.version, r->id, r->what, r->source);
  for (const EngineRule* r : added) out << fmt::format("  only in {}: {} ({}; {})\n", b.version, r->id, r->what, r->source);
  if (!settings.empty()) {
    out << "settings in force that differ:\n";
    for (const auto& s : settings) out << fmt::format("  {:<36} {} -> {}\n", s.flag, s.from, s.to);
  }
  out << fmt::format("\nrank 0, stage by stage:\n  {:<14} {:>12} {:>12} {:>12}\n", "stage", a.version.substr(0, 12), b.version.substr(0, 12), "change");
  for (const auto& s : stages)
    out << fmt::format("  {:<14} {:>12} {:>12} {:>12}\n", name(s.id), human_bytes(s.from), human_bytes(s.to), signed_bytes(s.to - s.from));
  return b.verdict == Verdict::Oom || b.verdict == Verdict::Refused ? kExitFails : kExitOk;
}

}  // namespace headroom
