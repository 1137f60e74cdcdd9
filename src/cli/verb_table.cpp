// The verb table and run_cli(): dispatch, --help/--version, and the exit-code contract.
#include <ostream>

#include "cli/verbs.h"
#include "headroom/error.h"
#include "headroom/version.h"
#include "model/hub_env.h"
#include "model/hub_model.h"

namespace headroom {

const std::vector<VerbInfo>& verb_table() {
  static const std::vector<VerbInfo> table{
      {"plan", "forecast a deployment's GPU memory, stage by stage, as the engine will run it", verb_plan},
      {"tune", "the engine flags with the most KV cache that keep every stage safe, the trade-offs, the launch command", verb_tune},
      {"fit", "which GPUs, how many and which parallelism serve a model at a target context and concurrency", verb_fit},
      {"doctor", "read a crash or startup log: where the memory went, the fix and its forecast", verb_doctor},
      {"calibrate", "fit this host's terms from its own SGLang / vLLM startup logs into a profile (--profile NAME)", verb_calibrate},
      {"validate", "measure the forecasts against a corpus of real engine logs", verb_validate},
      {"gpus", "list the GPU catalog (capacity as PyTorch and nvidia-smi report it)", verb_gpus},
      {"serve", "serve the web page and its JSON API on a local port", verb_serve},
      {"replay", "replay a PyTorch memory snapshot through the caching-allocator model", verb_replay},
      {"compare", "one deployment under sglang, vllm and trtllm side by side, and the knob values for equal KV", verb_compare},
      {"diff", "one deployment under two releases of an engine: what changes, stage by stage, and the rules behind it", verb_diff},
      {"rules", "the memory rules an engine version follows: what each changes, since when, its source", verb_rules},
      {"model", "parameters, checkpoint bytes, and per-rank weight and KV bytes of a model", verb_model},
  };
  return table;
}

static void print_help(std::ostream& out) {
  out << "headroom " << kVersion << " - GPU memory forecasts for LLM serving engines\n\n"
      << "usage: headroom <verb> [options]\n       headroom --version | --help | <verb> --help\n\nverbs:\n";
  for (const auto& v : verb_table()) out << "  " << v.name << std::string(10 - std::min<size_t>(9, v.name.size()), ' ') << v.summary << "\n";
  out << "\n--model takes a local folder or config.json, a Hugging Face id (ORG/NAME[@REVISION]: the local Hugging Face cache,\n"
         "headroom's cache, the bundled catalog, then the Hub; HF_TOKEN, HF_ENDPOINT, HF_HOME, HF_HUB_CACHE, XDG_CACHE_HOME are read).\n"
         "--offline (any verb) or HF_HUB_OFFLINE=1: no request to the Hub.\n";
  out << "\nexit codes: 0 ok/fits, 1 the forecast says it fails, 2 bad input, 3 internal error\n";
}

int run_cli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  try {
    if (argv.empty() || argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
      print_help(out);
      return argv.empty() ? kExitBadInput : kExitOk;
    }
    if (argv[0] == "--version") {
      out << "headroom " << kVersion << "\n";
      return kExitOk;
    }
    for (const auto& v : verb_table()) {
      if (v.name == argv[0]) {
        // --offline (any verb): no request to the Hub on this call, as HF_HUB_OFFLINE=1 (hub_env.h).
        std::vector<std::string> rest;
        bool offline = false;
        for (auto it = argv.begin() + 1; it != argv.end(); ++it) {
          if (*it == "--offline") offline = true;
          else rest.push_back(*it);
        }
        // A verb that needs a deployment, given none: its usage, not an example (exit 2).
        if (rest.empty() && (v.name == "plan" || v.name == "tune" || v.name == "fit" || v.name == "compare" || v.name == "diff")) {
          v.fn(Args::parse({"--help"}), err, err);
          return kExitBadInput;
        }
        if (offline && v.name == "serve") hub::set_process_offline(true);  // every request the server answers
        hub::OfflineScope scope(offline);
        hub::ResolutionMemo memo;  // a model named by Hub id is resolved once per call
        Args args = Args::parse(rest);
        return v.fn(args, out, err);
      }
    }
    std::vector<std::string> names;
    for (const auto& v : verb_table()) names.emplace_back(v.name);
    const std::string near = did_you_mean(argv[0], names);
    fail_input("command line", argv[0], near.empty() ? "unknown verb (see 'headroom --help')" : "unknown verb; did you mean '" + near + "'? (see 'headroom --help')");
  } catch (const InputError& e) {
    err << "headroom: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "headroom: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace headroom
