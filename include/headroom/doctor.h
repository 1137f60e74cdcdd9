// `headroom doctor`: a crash or startup log -> the deployment it came from, the failing stage
// and its cause, the arithmetic from the log's own numbers, the fix computed by the planner
// (with its forecast), and what will not help.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/cause.h"
#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/forecast.h"
#include "headroom/logscan.h"
#include "headroom/stage_basis.h"

namespace headroom {

struct DoctorFix {
  std::string flag;    // engine spelling, e.g. "--mem-fraction-static"; "PYTORCH_CUDA_ALLOC_CONF" for env
  std::string value;
  std::string effect;  // what it changes and its forecast outcome, one line
  bool together = false;  // applies with the fix before it (neither works alone); JSON "together": true
  std::string from = {};  // the value in force when the log failed, as the doctor read it or assumed it (the
                          // engine's default) where it computed the fix from it; "" otherwise. JSON "from"
};

struct Diagnosis {
  std::string engine;               // "sglang" | "vllm" | "trtllm" | "unknown"
  std::string stage = "none";       // CONTRACT stages, or "none" for a healthy start (never anything else)
  StageBasis stage_basis = StageBasis::Log;  // "log": a stage line, frame or engine message places it; "numbers": the
                                    // OOM message's figures against the forecast / the engine's budget;
                                    // "guess": no evidence, the likeliest stage given how far the log got
  std::string reached_stage;        // the furthest startup stage the log shows ("" if none)
  int rank = -1;
  std::optional<Cause> cause;       // stable code (CONTRACT doctor); JSON "" while unset
  std::string explanation;          // one paragraph
  std::vector<std::string> arithmetic;  // the numbers behind it, from the log
  std::vector<LogEvidence> evidence;
  std::vector<DoctorFix> fixes;     // ranked, best first
  std::optional<Forecast> forecast_after_fix;
  std::vector<std::string> will_not_help;
  std::vector<std::string> gaps;    // what the log did not say and was not given
  std::vector<std::string> calibration;  // healthy start: logged vs forecast
  std::vector<std::string> overrides;    // options given that the log also says: used over it, or (--fill) not used
  std::string command;              // the launch command with the fix applied, when known
};

// `args`: the doctor command line (LOGFILE positional + deployment options to fill gaps).
Diagnosis diagnose(const LogScan& scan, const Args& args);
// A deployment from a launch command as a user runs it (vllm serve ..., python -m
// sglang.launch_server ..., trtllm-serve ..., llama-server ...) with headroom options on top
// (--engine E@V, --gpu, --gpus, --host-state); InputError naming `source` when it is not one.
Deployment deployment_from_command(std::string_view command, const std::vector<std::string>& options, std::string_view source);
nlohmann::ordered_json diagnosis_json(const Diagnosis& d);
void print_diagnosis(std::ostream& out, const Diagnosis& d, const LogScan& scan);

}  // namespace headroom
