// Pieces of the diagnosis shared by diagnose.cpp, doctor_classify.cpp and doctor_fixes.cpp.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "headroom/deployment.h"
#include "headroom/forecast.h"
#include "headroom/doctor.h"
#include "headroom/logscan.h"

namespace headroom {

struct RebuiltArgs {
  std::vector<std::string> args;  // CLI arguments for parse_deployment
  std::vector<std::string> gaps;
  EngineKind engine = EngineKind::SGLang;
  bool has_model = false;
};
RebuiltArgs rebuild_args(const LogScan& scan, const Args& user);

// Cause, explanation, arithmetic from the log's own numbers.
void classify(const LogScan& scan, const std::optional<Deployment>& dep, Diagnosis& dx);
// Evidence lines: the error, the memory lines of the failing rank.
void collect_evidence(const LogScan& scan, Diagnosis& dx);
// Fixes computed by the planner on the rebuilt, log-calibrated deployment.
void plan_fixes(const LogScan& scan, const Deployment& dep, Diagnosis& dx);
// Fixes when the deployment cannot be planned: directions from the log's numbers alone.
void static_fixes(const LogScan& scan, Diagnosis& dx);

std::string doctor_gib(int64_t bytes);
// The cause an out-of-memory failure at `stage` would have (for a log that stops there silently).
std::string stage_cause(const std::string& stage);
std::string effective_outcome(LogScan& sc, const std::optional<Forecast>& forecast, std::vector<std::string>& gaps);
// The first OOM report of the failing rank (or the first at all).
const LogOom* first_oom(const LogScan& scan);
// Sets dx.stage (always a CONTRACT stage) and dx.stage_basis for a failure effective_outcome
// left unplaced or placed by the OOM message alone (doctor_place.cpp); sc.failure_stage follows.
// Returns the sentence that says why, for the explanation ("" when the log places it).
std::string place_failure(LogScan& sc, const std::optional<Deployment>& dep, const std::optional<Forecast>& forecast, Diagnosis& dx);

}  // namespace headroom
