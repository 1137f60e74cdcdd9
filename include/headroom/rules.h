// Engine rules as data (issue 27): each engine's memory-relevant behaviour changes as named rows
// {id, since, until, what, source}, in the style of llama.cpp's llama-arch.cpp tables. The engine
// models read their era flags from these rows; `headroom rules` and `headroom diff` print them.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/parallel.h"

namespace headroom {

// A point in an engine's history: a release (a.b.c as a*10000 + b*100 + c) and/or the date its
// change reached main (yyyymmdd, for dated builds of main); 0 = not stated.
struct RulePoint {
  int release = 0;
  int date = 0;
};

struct EngineRule {
  std::string_view id;      // "vllm.per_instance_budget"
  RulePoint since, until;   // in force from `since` to before `until`; {0, 0} = open on that side
  std::string_view what;    // what it changes in memory
  std::string_view source;  // the engine PR / file, or how it was inferred
};

// Where a version sits, as the engine model read it: a release, a build date, or the newest rules.
struct RuleVersion {
  int release = 0, date = 0;
  bool newest = false;
};
bool rule_in_force(const EngineRule& r, const RuleVersion& v);

struct RuleStatus {
  const EngineRule* rule;
  bool in_force;
};
struct EngineRuleSet {
  std::string engine, version;  // as asked
  std::string label, reason;    // the era label and how the version was read
  std::vector<RuleStatus> rules;  // the whole table, in order
};
// The engine's table for `version` ("" = newest); InputError for a version the engine cannot read.
EngineRuleSet engine_rules(EngineKind engine, const std::string& version);
// "0.9.1", "2025-06-10", "0.9.1 / 2025-06-10" (llama.cpp: "b6895"), "" for an open end.
std::string rule_point_text(const RulePoint& p, EngineKind engine);
// {id, since, until, what, source} as `headroom rules` and `headroom diff` print a row.
nlohmann::ordered_json rule_json(const EngineRule& r, EngineKind engine);

}  // namespace headroom
