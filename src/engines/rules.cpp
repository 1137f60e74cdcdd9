// engine_rules(): an engine's rule table with what is in force for one version, as the engine
// model reads that version (each engine's own version parser decides release or build date).
#include "headroom/rules.h"

#include <fmt/format.h>

#include "engines/llamacpp/llamacpp_log.h"
#include "engines/llamacpp/llamacpp_rule_table.h"
#include "engines/sglang/sglang_rule_table.h"
#include "engines/trtllm/trtllm_rule_table.h"
#include "engines/trtllm/trtllm_rules.h"
#include "engines/vllm/vllm_rule_table.h"
#include "engines/vllm/vllm_rules.h"
#include "headroom/llamacpp_plan.h"

namespace headroom {

namespace {
// Before `p` for a version: by release where both have one, else by date; a newest version is
// never before a stated point.
bool before(const RuleVersion& v, const RulePoint& p) {
  if (v.newest) return false;
  if (v.release > 0 && p.release > 0) return v.release < p.release;
  if (v.date > 0 && p.date > 0) return v.date < p.date;
  return false;  // the point is not stated in the version's terms: taken as reached
}

EngineRuleSet with_table(std::span<const EngineRule> table, const RuleVersion& v) {
  EngineRuleSet s;
  for (const auto& r : table) s.rules.push_back({&r, rule_in_force(r, v)});
  return s;
}
}  // namespace

bool rule_in_force(const EngineRule& r, const RuleVersion& v) {
  const bool since_open = r.since.release == 0 && r.since.date == 0, until_open = r.until.release == 0 && r.until.date == 0;
  if (!since_open && before(v, r.since)) return false;
  if (until_open) return true;
  if (v.newest) return false;
  return before(v, r.until);
}

std::string rule_point_text(const RulePoint& p, EngineKind engine) {
  auto rel = [&](int v) {
    return engine == EngineKind::LlamaCpp ? fmt::format("b{}", v) : fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
  };
  auto day = [](int d) { return fmt::format("{:04}-{:02}-{:02}", d / 10000, (d / 100) % 100, d % 100); };
  if (p.release > 0 && p.date > 0) return rel(p.release) + " / " + day(p.date);
  if (p.release > 0) return rel(p.release);
  if (p.date > 0) return day(p.date);
  return "";
}

nlohmann::ordered_json rule_json(const EngineRule& r, EngineKind engine) {
  return {{"id", r.id}, {"since", rule_point_text(r.since, engine)}, {"until", rule_point_text(r.until, engine)}, {"what", r.what}, {"source", r.source}};
}

EngineRuleSet engine_rules(EngineKind engine, const std::string& version) {
  EngineRuleSet s;
  switch (engine) {
    case EngineKind::VLLM: {
      const vllm::Era era = vllm::era_for_version(version);
      s = with_table(vllm::rule_table(), RuleVersion{era.version, 0, false});
      s.label = era.label, s.reason = era.reason;
      break;
    }
    case EngineKind::SGLang: {
      const sglang::EraInfo era = sglang::era_for_version(version);
      s = with_table(sglang::rule_table(), sglang::rule_version(era));
      s.label = era.label, s.reason = era.reason;
      break;
    }
    case EngineKind::TRTLLM: {
      const trtllm::Era era = trtllm::era_for_version(version);
      s = with_table(trtllm::rule_table(), RuleVersion{era.version, 0, false});
      s.label = era.label, s.reason = era.reason;
      break;
    }
    case EngineKind::LlamaCpp: {
      const int build = llamacpp::parse_build(version);
      s = with_table(llamacpp::rule_table(), RuleVersion{build, 0, build == 0});
      s.label = llamacpp::era_name(build);
      s.reason = build == 0 ? "newest known rules (no build given)" : fmt::format("build b{}", build);
      break;
    }
  }
  s.engine = std::string(engine_kind_name(engine));
  s.version = version.empty() ? "newest" : version;
  return s;
}

}  // namespace headroom
