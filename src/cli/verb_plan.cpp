// `headroom plan [deployment options] [--json]`: one forecast. Without any option it plans
// the seed deployment (GLM-5-NVFP4 on 8 x RTX PRO 6000, TP 8, --mem-fraction-static 0.95).
#include <ostream>

#include "cli/verbs.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/report.h"

namespace headroom {

int verb_plan(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom plan [--engine sglang|vllm|trtllm[@VERSION][,...]] --model ID|DIR|config.json --gpu NAME\n"
           "                     [--gpu-memory BYTES] [--interconnect nvswitch|nvlink|pcie|xgmi|network] [--gpus N]\n"
           "                     [--tp N --pp N --ep N --dp N --enable-dp-attention]\n"
           "                     [engine flags as the engine spells them] [--env NAME=VALUE ...] [--json]\n"
           "--env: an engine environment variable the run sets (e.g. VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0); ones not modelled are noted.\n"
           "--interconnect: how the GPUs reach each other, when the catalog row's fabric is not the host's (e.g. A100 PCIe cards: pcie).\n"
           "--engine with several engines (sglang,vllm): the side-by-side view of `headroom compare`.\n"
           "With no options: the seed deployment (nvidia/GLM-5-NVFP4, 8 x rtx-pro-6000, --tp 8, --mem-fraction-static 0.95).\n";
    return kExitOk;
  }
  // Issue 4's spelling of the cross-engine view: `plan --engine sglang,vllm ...` is `compare`.
  if (args.get_or("--engine", "").find(',') != std::string::npos) return verb_compare(args, out, err);
  Args a = args;
  if (args.options().empty() || (args.options().size() == 1 && args.has("--json"))) {
    std::vector<std::string> seed{"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8",
                                  "--mem-fraction-static", "0.95"};
    if (args.has("--json")) seed.push_back("--json");
    a = Args::parse(seed);
    if (!args.has("--json")) out << "(no deployment given: planning the seed deployment — headroom plan --engine sglang --model nvidia/GLM-5-NVFP4 --gpu rtx-pro-6000 --tp 8 --mem-fraction-static 0.95)\n\n";
  }
  if (!a.positionals().empty()) fail_input("command line", a.positionals().front(), "unexpected argument for 'headroom plan'");
  Deployment d = parse_deployment(a);
  Forecast f = plan(d);
  if (a.has("--json")) out << forecast_json(f).dump(2) << "\n";
  else print_forecast(out, f);
  return (f.verdict == Verdict::Fits || f.verdict == Verdict::AtRisk) ? kExitOk : kExitFails;
}

}  // namespace headroom
