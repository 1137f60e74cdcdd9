// Pieces of the diagnosis shared by diagnose.cpp, doctor_classify.cpp and doctor_fixes.cpp.
#pragma once
#include <cmath>
#include <optional>
#include <set>
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
  std::vector<std::string> notes;  // what was taken from the log over a bare option (not a gap)
  EngineKind engine = EngineKind::SGLang;
  bool has_model = false;
  // Flags the user set: the doctor's options, the launch line, vLLM's non-default dump. Values
  // from resolved dumps (SGLang's server_args, vLLM's Namespace) appear in a command only where
  // they differ from the engine's default (command_flags in doctor_fixes.cpp).
  std::set<std::string> user_set;
};
RebuiltArgs rebuild_args(const LogScan& scan, const Args& user);

// Cause, explanation, arithmetic from the log's own numbers.
void classify(const LogScan& scan, const std::optional<Deployment>& dep, Diagnosis& dx);
// Evidence lines: the error, the memory lines of the failing rank.
void collect_evidence(const LogScan& scan, Diagnosis& dx);
// Fixes computed by the planner on the rebuilt, log-calibrated deployment.
void plan_fixes(const LogScan& scan, const Deployment& dep, const std::set<std::string>& user_set, Diagnosis& dx);
// Fixes when the deployment cannot be planned: directions from the log's numbers alone.
void static_fixes(const LogScan& scan, Diagnosis& dx);

// SGLang's --mem-fraction-static as the log gives it (exact) or implies it (log_knob.cpp).
struct KnobEstimate {
  double value = 0;
  bool exact = false;
  std::string basis;  // which figures it rests on
};
std::optional<KnobEstimate> sglang_fraction_from_log(const LogScan& scan);
// P, the memory SGLang's fraction is a share of: free at start, else capacity less non-PyTorch.
int64_t sglang_fraction_base(const LogScan& scan);
// The fraction that frees `shortfall` + `margin` after the static pools, from `current`.
struct LogKnobFix {
  double value = 0;
  int64_t freed = 0;
  std::string arithmetic;
  std::optional<int64_t> kv_tokens_lost, kv_tokens_logged;  // from the log's own KV line
};
std::optional<LogKnobFix> sglang_fraction_fix(const LogScan& scan, double current, int64_t shortfall, int64_t margin);
// SGLang's fixes from the log's arithmetic alone (no model): the fraction that gives the failing
// stage the room it lacked, and for an activation peak the prefill chunk that fits. False when the
// log lacks the figures (the caller's generic directions apply).
bool sglang_log_fixes(const LogScan& scan, double frac, bool frac_implied, std::optional<Cause> cause, Diagnosis& dx);
// With the model known: the fraction at which the forecast reproduces the free memory the log
// printed at capture begin (else at pool end); nullopt when no fraction does.
std::optional<double> infer_sglang_fraction(const LogScan& scan, const Deployment& dep);
// A memory knob (a share of `share` bytes) lowered by enough to free `bytes`, rounded down to 0.01
// (the epsilon keeps an exact hundredth from rounding below itself).
inline double knob_step_down(double current, int64_t bytes, double share) {
  return std::floor((current - static_cast<double>(bytes) / share) * 100.0 + 1e-9) / 100.0;
}
inline constexpr int64_t kLogFixMargin = int64_t{1} << 30;  // rest of capture and runtime peaks (GUESS)
// The margin a log-only fix of vLLM's or TensorRT-LLM's budget adds to the shortfall (request - free)
// for what is still allocated after the failed request (log_knob.cpp): the larger of the failed
// request (the next allocation of its kind) and the capture footprint the log printed, at most
// kLogFixMargin. SGLang's fixes keep kLogFixMargin (log_knob.cpp sglang_fraction_fix).
int64_t budget_fix_margin(const LogScan& scan, const LogOom* oom);

std::string doctor_gib(int64_t bytes);
// The cause an out-of-memory failure at `stage` would have (for a log that stops there silently).
std::optional<Cause> stage_cause(const std::string& stage);
std::optional<Outcome> effective_outcome(LogScan& sc, const std::optional<Forecast>& forecast, std::vector<std::string>& gaps);
// The first OOM report of the failing rank (or the first at all).
const LogOom* first_oom(const LogScan& scan);
// Sets dx.stage (always a CONTRACT stage) and dx.stage_basis for a failure effective_outcome
// left unplaced or placed by the OOM message alone (doctor_place.cpp); sc.failure_stage follows.
// Returns the sentence that says why, for the explanation ("" when the log places it).
std::string place_failure(LogScan& sc, const std::optional<Deployment>& dep, const std::optional<Forecast>& forecast, Diagnosis& dx);

// llama.cpp (diagnose_llamacpp.cpp, doctor_llamacpp_fixes.cpp, doctor_llamacpp_plan.cpp): its logs
// name devices and buffers, not ranks and stages, so the diagnosis is its own.
Diagnosis diagnose_llamacpp(const LogScan& scan, const Args& args);
// The deployment the log implies when the model is readable here; nullopt with the reason in gaps.
std::optional<Deployment> rebuild_llamacpp(const LogScan& scan, const Args& user, std::vector<std::string>& gaps);
// Fixes from the log's numbers alone (request, free, buffers per layer / per cell), with arithmetic.
void llamacpp_static_fixes(const LogScan& scan, const LlamaFailure& f, Diagnosis& dx);
// Fixes the llama.cpp planner finds on the rebuilt deployment (none when its plan fits).
void llamacpp_plan_fixes(const LogScan& scan, const LlamaFailure& f, const Deployment& dep, Diagnosis& dx);

}  // namespace headroom
