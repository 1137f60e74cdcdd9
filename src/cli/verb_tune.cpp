// `headroom tune [deployment options] [--target-context N] [--target-concurrency N]
// [--keep-free BYTES] [--margin BYTES] [--fix FLAG ...] [--json]`: the engine flags that
// maximise KV capacity with every stage safe, the trade-off table and the launch command.
#include <ostream>

#include "cli/verbs.h"
#include "headroom/advise.h"
#include "headroom/calibrate.h"
#include "headroom/deployment.h"
#include "headroom/error.h"
#include "headroom/host_plan.h"

namespace headroom {

int verb_tune(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom tune --host HOST.yaml [--host-state FILE|-|live] [--json]   (the shares that let every server start)\n"
           "       headroom tune [--engine sglang|vllm|trtllm[@VERSION]] --model ID|DIR|config.json --gpu NAME [--gpu-memory BYTES]\n"
           "                     [--gpus N] [--tp N --pp N --ep N --dp N --enable-dp-attention] [engine flags as the engine spells them]\n"
           "                     [--target-context N] [--target-concurrency N] [--keep-free BYTES] [--margin BYTES]\n"
           "                     [--fix FLAG ...] [--json]\n"
           "Searches the engine's own knobs (SGLang --mem-fraction-static, --cuda-graph-max-bs, --chunked-prefill-size,\n"
           "--max-running-requests, --kv-cache-dtype; vLLM --gpu-memory-utilization or --kv-cache-memory-bytes, --max-num-seqs,\n"
           "--max-num-batched-tokens, --max-cudagraph-capture-size, --kv-cache-dtype; TensorRT-LLM free_gpu_memory_fraction,\n"
           "max_batch_size, max_num_tokens) for the most KV capacity with every stage's worst-case free memory >= the margin.\n"
           "--fix FLAG (e.g. --fix cuda-graph-max-bs, repeatable) keeps that flag as given. BYTES: 2GiB, 512MiB, 1073741824.\n"
           "Exit: 0 a safe setting exists, 1 none does, 2 bad input.\n";
    return kExitOk;
  }
  if (!args.positionals().empty()) fail_input("command line", args.positionals().front(), "unexpected argument for 'headroom tune'");
  if (args.has("--host")) {  // several servers on one host: the shares that let all of them start
    const HostSpec spec = host_spec_from_args(args);
    const HostTuneResult r = tune_host(spec);
    if (args.has("--json")) out << host_tune_json(r).dump(2) << "\n";
    else print_host_tune(out, r, spec.source);
    return r.feasible ? kExitOk : kExitFails;
  }
  TuneGoal goal = parse_tune_goal(args);
  Deployment d = parse_deployment(strip_options(args));
  attach_profile(args, d);
  TuneResult r = tune(d, goal);
  if (args.has("--json")) {
    auto j = tune_json(r);
    if (d.calibration) j["calibrated_host"] = d.calibration->host;
    out << j.dump(2) << "\n";
  } else {
    if (d.calibration) out << "calibrated (host " << d.calibration->host << "): the host's terms replace the estimates (docs/calibrate.md)\n";
    print_tune(out, r);
  }
  return r.feasible ? kExitOk : kExitFails;
}

}  // namespace headroom
