// `headroom doctor LOGFILE|- [deployment options to fill gaps] [--json]`.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/verbs.h"
#include "headroom/deployment.h"
#include "headroom/doctor.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/logscan.h"
#include "headroom/model.h"
#include "headroom/units.h"
#include "model/hub_env.h"

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
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The log's own value for an option, or nullopt when the log does not say (then the option fills
// a gap). Parallel sizes match the log's spellings of each engine.
std::optional<std::string> log_value(const LogScan& scan, const std::string& k) {
  auto flag = [&](std::initializer_list<const char*> names) -> std::optional<std::string> {
    for (const char* n : names)
      if (auto it = scan.flags.find(n); it != scan.flags.end()) return it->second;
    return std::nullopt;
  };
  if (k == "--engine") {
    if (scan.engine == LogEngine::Unknown) return std::nullopt;
    return std::string(log_engine_name(scan.engine)) + (scan.engine_version.empty() ? "" : "@" + scan.engine_version);
  }
  if (k == "--model") {
    // A Hub id the log names is the log's (the doctor reads it as before); a local path it names
    // counts only when it can be read here, else the option fills the gap.
    const auto m = flag({"--model-path", "--model"});
    if (!m || m->empty()) return std::nullopt;
    const bool hub_id = std::count(m->begin(), m->end(), '/') == 1 && (*m)[0] != '/' && (*m)[0] != '.' && (*m)[0] != '~';
    if (hub_id) return m;
    try {
      const hub::OfflineScope no_hub(true);
      load_model(*m);
      return m;
    } catch (const InputError&) {
      return std::nullopt;
    }
  }
  if (k == "--gpu" || k == "--gpu-memory") {
    for (const auto& o : scan.ooms)
      if (o.total > 0) return fmt::format("{:.2f} GiB per GPU", static_cast<double>(o.total) / GiB);
    if (scan.summary.total && scan.summary.total->value > 0) return fmt::format("{:.2f} GiB per GPU", static_cast<double>(scan.summary.total->value) / GiB);
    return std::nullopt;
  }
  if (k == "--tp") return flag({"--tp", "--tp-size", "--tensor-parallel-size", "--tp_size"});
  if (k == "--pp") return flag({"--pp", "--pp-size", "--pipeline-parallel-size", "--pp_size"});
  if (k == "--dp") return flag({"--dp", "--dp-size", "--data-parallel-size"});
  if (k == "--ep") return flag({"--ep", "--ep-size", "--expert-parallel-size", "--ep_size"});
  return flag({k.c_str()});
}

// The user's options against the log: each one the log also says either overrides it (the default:
// what the user gives explicitly wins) or, with --fill (the web form's defaults), is left out so that
// the log's value stays. Both are said, one line each.
Args weigh_options(const LogScan& scan, const Args& args, std::vector<std::string>& said) {
  const bool fill = args.has("--fill");
  std::vector<std::string> argv(args.positionals().begin(), args.positionals().end());
  for (const auto& [k, v] : args.options()) {
    if (k == "--fill") continue;
    const bool meta = k == "--json" || k == "--brief" || k == "--profile" || k == "--host-state" || k == "--env" || k == "--offline";
    const std::optional<std::string> logged = meta ? std::nullopt : log_value(scan, k);
    const bool same = logged && (lower(*logged) == lower(v) || (k == "--engine" && logged->rfind(v + "@", 0) == 0));
    if (logged && !same) {
      if (fill) {
        said.push_back(fmt::format("{} {} (filled in) not used: the log says {}", k, v, *logged));
        continue;
      }
      said.push_back(fmt::format("{} {} overrides the log's {}", k, v, *logged));
    }
    argv.push_back(k);
    if (!(is_boolean_flag(k) && v == "true")) argv.push_back(v);
  }
  return Args::parse(argv);
}
}  // namespace

int verb_doctor(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom doctor LOGFILE|- [--engine E] [--model ID] [--gpu NAME | --gpu-memory BYTES] [--tp N ...]\n"
           "                       [engine flags the log does not show] [--json]\n"
           "Reads a crash or startup log of SGLang / vLLM / TensorRT-LLM / llama.cpp, says which stage failed and why, and gives\n"
           "the fix with its forecast. Options fill what the log does not say and win over what it says (each\n"
           "such value is named); with --fill they only fill gaps and the log's values stay.\n";
    return kExitOk;
  }
  if (args.positionals().size() != 1) fail_input("command line", "LOGFILE", "exactly one log file (or - for standard input) expected");
  LogScan scan = scan_log_file(args.positionals().front());
  std::vector<std::string> weighed;
  Diagnosis d = diagnose(scan, with_env_profile(weigh_options(scan, args, weighed)));
  d.overrides = std::move(weighed);
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
