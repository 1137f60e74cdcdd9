// `headroom calibrate LOG... [--name NAME] [deployment options] [--json]`: fits this host's terms
// from its own startup logs (calibrate.h), saves the profile, prints how far the default and the
// calibrated forecasts are from each log.
#include <ostream>

#include "calibrate/calibrate_report.h"
#include "cli/verbs.h"
#include "headroom/calibrate.h"
#include "headroom/error.h"

namespace headroom {

int verb_calibrate(const Args& args, std::ostream& out, std::ostream& err) {
  (void)err;
  if (args.has("--help")) {
    out << "usage: headroom calibrate LOG... [--name NAME] [--engine E] [--model ID] [--gpu NAME | --gpu-memory BYTES] [--tp N ...]\n"
           "                          [engine flags the logs do not show] [--json]\n"
           "Fits this host's terms (SGLang: CUDA context + NCCL, memory after weights and at capture begin, CUDA graphs;\n"
           "vLLM: CUDA context, non-torch growth, activation peak, CUDA graphs) from its own SGLang / vLLM startup logs,\n"
           "saves them as $XDG_CONFIG_HOME/headroom/profiles/NAME.json (default NAME: GPU-ENGINE) and shows how far the\n"
           "default and the calibrated forecasts are from each log. Use it with --profile NAME (or HEADROOM_PROFILE) on\n"
           "plan, tune, fit, compare and doctor. Options fill what the logs do not say, for every log.\n";
    return kExitOk;
  }
  if (args.positionals().empty()) fail_input("command line", "LOG", "give one or more startup logs of this host (SGLang or vLLM)");
  CalibrationRun run;
  std::vector<LogFit> fits;
  for (const auto& path : args.positionals()) fits.push_back(fit_log(path, args));
  const auto& d0 = fits.front().deployment;
  const std::string name = args.get_or("--name", d0.gpu.name + "-" + std::string(engine_kind_name(d0.engine)));
  check_profile_name(name);
  run.profile = combine_fits(name, fits);
  for (auto& f : fits) {
    CalibrationRow row;
    row.before = errors_against(f, nullptr);
    row.after = errors_against(f, &run.profile.terms);
    row.fit = std::move(f);
    run.rows.push_back(std::move(row));
  }
  save_profile(run.profile);
  run.path = profile_path(name);
  if (args.has("--json")) out << calibration_json(run).dump(2) << "\n";
  else print_calibration(out, run);
  return kExitOk;
}

}  // namespace headroom
