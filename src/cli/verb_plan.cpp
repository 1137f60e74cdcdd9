// `headroom plan [deployment options] [--brief] [--json]`: one forecast, summary first (verdict,
// KV capacity, tightest moment, rules version, launch command), then the stage table.
#include <ostream>

#include "cli/verbs.h"
#include "headroom/advise.h"
#include "headroom/calibrate.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/host_plan.h"
#include "headroom/report.h"

namespace headroom {

namespace {
// `plan --host HOST.yaml [--host-state FILE] [--json]`: several servers on one host, in start order.
int plan_host_file(const Args& a, std::ostream& out) {
  const HostSpec spec = host_spec_from_args(a);
  const HostPlan p = plan_host(spec);
  if (a.has("--json")) out << host_plan_json(p).dump(2) << "\n";
  else print_host_plan(out, p, spec.source);
  return p.all_start ? kExitOk : kExitFails;
}
}  // namespace

int verb_plan(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom plan --host HOST.yaml [--host-state FILE|-|live] [--json]   (several servers sharing GPUs, in start order)\n"
           "       headroom plan [--engine sglang|vllm|trtllm|llamacpp[@VERSION][,...]] --model ID|DIR|config.json --gpu NAME\n"
           "                     [--gpu-memory BYTES] [--interconnect nvswitch|nvlink|pcie|xgmi|network] [--gpus N]\n"
           "                     [--tp N --pp N --ep N --dp N --enable-dp-attention]\n"
           "                     [engine flags as the engine spells them] [--env NAME=VALUE ...] [--brief] [--json]\n"
           "--env: an engine environment variable the run sets (e.g. VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0); ones not modelled are noted.\n"
           "--interconnect: how the GPUs reach each other, when the catalog row's fabric is not the host's (e.g. A100 PCIe cards: pcie).\n"
           "--engine with several engines (sglang,vllm): the side-by-side view of `headroom compare`.\n"
           "--host-state FILE|-|live: what nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free --format=csv (and\n"
           "  --query-compute-apps=pid,process_name,used_memory,gpu_uuid) print, or rocm-smi --showmeminfo vram --json: the plan starts\n"
           "  from the memory really free, as the engine treats memory it did not allocate; CUDA_VISIBLE_DEVICES (--env) picks the GPUs.\n"
           "--brief: only the summary (verdict, KV capacity, tightest moment, rules version, launch command).\n"
           "llama.cpp: --engine llamacpp[@bNNNN] --model FILE.gguf, or a catalog id with --quant Q4_K_M (the GGUF derived),\n"
           "  or a Hub GGUF repo's file: --model ORG/NAME:Q4_K_M or --model ORG/NAME --gguf FILE.gguf (its header, by Range requests);\n"
           "  llama-server's flags (-ngl -c -np -ts -sm -ot --cpu-moe -ctk -fa ...); --gpu a,b for cards of different kinds.\n"
           "example (the seed crash): headroom plan --engine sglang --model nvidia/GLM-5-NVFP4 --gpu rtx-pro-6000 --tp 8 --mem-fraction-static 0.95\n";
    return kExitOk;
  }
  if (args.has("--host")) return plan_host_file(args, out);
  // Issue 4's spelling of the cross-engine view: `plan --engine sglang,vllm ...` is `compare`.
  if (args.get_or("--engine", "").find(',') != std::string::npos) return verb_compare(args, out, err);
  const Args& a = args;
  if (!a.positionals().empty()) fail_input("command line", a.positionals().front(), "unexpected argument for 'headroom plan'");
  Deployment d = parse_deployment(a);
  attach_profile(a, d);
  Forecast f = plan(d);
  if (a.has("--json")) {
    auto j = forecast_json(f);
    j["launch_command"] = launch_command(d, d.flags);
    out << j.dump(2) << "\n";
  } else {
    print_forecast(out, f, launch_command(d, d.flags), a.has("--brief"));
  }
  return (f.verdict == Verdict::Fits || f.verdict == Verdict::AtRisk) ? kExitOk : kExitFails;
}

}  // namespace headroom
