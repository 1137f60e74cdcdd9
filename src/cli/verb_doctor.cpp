// `headroom doctor LOGFILE|- [deployment options to fill gaps] [--json]`.
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "cli/verbs.h"
#include "headroom/deployment.h"
#include "headroom/doctor.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/logscan.h"

namespace headroom {

namespace {
// HEADROOM_PROFILE as --profile (diagnose() reads only the option: validate diagnoses corpus logs).
Args with_env_profile(const Args& args) {
  const char* env = std::getenv("HEADROOM_PROFILE");
  if (args.has("--profile") || !env || !*env) return args;
  std::vector<std::string> argv(args.positionals().begin(), args.positionals().end());
  for (const auto& [k, v] : args.options()) {
    argv.push_back(k);
    if (!(is_boolean_flag(k) && v == "true")) argv.push_back(v);
  }
  argv.insert(argv.end(), {"--profile", env});
  return Args::parse(argv);
}
}  // namespace

int verb_doctor(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom doctor LOGFILE|- [--engine E] [--model ID] [--gpu NAME | --gpu-memory BYTES] [--tp N ...]\n"
           "                       [engine flags the log does not show] [--json]\n"
           "Reads a crash or startup log of SGLang / vLLM / TensorRT-LLM / llama.cpp, says which stage failed and why, and gives\n"
           "the fix with its forecast. Options fill what the log does not say; they win over the log.\n";
    return kExitOk;
  }
  if (args.positionals().size() != 1) fail_input("command line", "LOGFILE", "exactly one log file (or - for standard input) expected");
  LogScan scan = scan_log_file(args.positionals().front());
  Diagnosis d = diagnose(scan, with_env_profile(args));
  if (args.has("--json")) out << diagnosis_json(d).dump(2) << "\n";
  else print_diagnosis(out, d, scan);
  // 1 when the diagnosis finds a failure; a log with no failure in it (healthy, or cut before
  // any error) is 0.
  // A log that stops between stages with no error shows no failure (its stage is a guess of where
  // one would be); one that stops inside a stage, or holds an error, does.
  return d.stage == "none" || (d.cause == Cause::NoErrorInLog && d.stage_basis == StageBasis::Guess && scan.errors.empty() && scan.tracebacks.empty())
             ? kExitOk
             : kExitFails;
}

}  // namespace headroom
