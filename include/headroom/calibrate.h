// `headroom calibrate LOG... [--name NAME]`: fit this host's terms (CUDA context + NCCL, memory
// outside the model after weights and before capture, non-torch growth, activation and graph
// scales) from its own startup logs, save them as a profile, and say how far the default and the
// calibrated forecasts are from each log. `--profile NAME` / HEADROOM_PROFILE load one.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/calibration.h"
#include "headroom/cli.h"
#include "headroom/deployment.h"

namespace headroom {

struct ProfileLog {
  std::string path;
  std::string digest;  // "fnv1a64:HEX" of the file's bytes
  int64_t bytes = 0;
};

// One term as one log gave it: how it was obtained ("logged", "fitted", "model default").
struct FittedTerm {
  std::string name;    // "init", "after_load_extra", "before_capture_extra", "non_torch", "activation_scale", ...
  std::string source;  // "logged" | "fitted" | "model default"
  std::string how;     // the log lines / arithmetic
  std::optional<double> value;  // bytes or a ratio; unset for a model default
};

struct HostProfile {
  std::string name;
  std::string engine_version, driver;  // as the logs print them ("" when they do not)
  std::vector<ProfileLog> logs;
  Calibration terms;  // terms.host = name, terms.gpu, terms.capacity_bytes, terms.engine
};

// $XDG_CONFIG_HOME/headroom/profiles (else ~/.config/headroom/profiles); InputError when neither is set.
std::string profile_dir();
std::string profile_path(const std::string& name);
// A profile name: letters, digits, '.', '_', '-' (it is a file name).
void check_profile_name(const std::string& name);
nlohmann::ordered_json profile_json(const HostProfile& p);
HostProfile profile_from_json(const nlohmann::json& j, const std::string& source);  // InputError when malformed
HostProfile load_profile(const std::string& name);  // InputError: missing or malformed
void save_profile(const HostProfile& p);             // InputError when it cannot be written

// --profile NAME (else HEADROOM_PROFILE): loads it onto d.calibration; InputError when the
// profile is missing or malformed, or was fitted on another GPU or engine. No-op without either.
void attach_profile(const Args& args, Deployment& d, bool check_gpu = true);
// The profile name --profile or HEADROOM_PROFILE gives ("" for none).
std::string profile_name_from(const Args& args);

// One log's fit.
struct LogFit {
  std::string path;
  Deployment deployment;
  std::vector<std::string> args;  // the deployment's arguments as rebuilt from the log
  std::vector<FittedTerm> terms;
  CalibrationAtTp at_tp;
  std::optional<double> activation_scale, graph_scale, graph_estimate_scale;
  std::string engine_version, driver;  // as the log prints them ("" when it does not)
  std::string digest;                   // "fnv1a64:HEX" of the file
  int64_t bytes = 0;
  // What the log printed, for the comparison.
  int64_t kv_tokens = 0;
  std::optional<int64_t> capture_begin_free;  // SGLang: logged; vLLM: derived from the logged figures
  std::string capture_begin_basis;
};
// Reads one log and fits its terms; `user`: the deployment options given on the command line.
// InputError when the log cannot be read, its deployment cannot be rebuilt, or it lacks the
// figures the engine's terms need (one line naming what is missing).
LogFit fit_log(const std::string& path, const Args& user);
// The profile that combines the fits (per TP: the mean; scales: the mean). All must share GPU and engine.
HostProfile combine_fits(const std::string& name, const std::vector<LogFit>& fits);

// How far a forecast is from a log: KV tokens (%), free memory at capture begin (GiB).
struct LogErrors {
  int64_t kv_tokens = 0;
  double kv_pct = 0;
  std::optional<int64_t> capture_begin_free;
  std::optional<double> capture_begin_gib;  // forecast - log
};
// The fit's deployment planned with `cal` (nullptr: the model's estimates) against its log.
LogErrors errors_against(const LogFit& fit, const Calibration* cal);

}  // namespace headroom
