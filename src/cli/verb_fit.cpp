// `headroom fit --model ... --engine ... [--target-context N --target-concurrency N]
// [--gpu NAME ...] [--max-gpus N] [--kv-cache-dtype X[,Y] ...] [--rank-by gpus|kv|headroom] [--nodes N]
// [--margin BYTES] [--keep-free BYTES] [--json]`: which GPUs, how many and which parallelism
// serve the workload, ranked, and why the others do not.
#include <algorithm>
#include <fmt/format.h>
#include <ostream>

#include "cli/verbs.h"
#include "headroom/advise.h"
#include "headroom/calibrate.h"
#include "headroom/deployment.h"
#include "headroom/error.h"
#include "headroom/gpu.h"

namespace headroom {

int verb_fit(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom fit [--engine sglang|vllm|trtllm[@VERSION]] --model ID|DIR|config.json\n"
           "                    [--target-context N] [--target-concurrency N] [--gpu NAME ...] [--max-gpus N (default 8)]\n"
           "                    [--kv-cache-dtype X[,Y] ...] [--rank-by gpus|kv|headroom] [--nodes N] [--margin BYTES] [--keep-free BYTES]\n"
           "                    [engine flags as the engine spells them] [--all] [--json]\n"
           "--max-model-len / --context-length / --max_seq_len N: the target context; --max-num-seqs / --max-running-requests N:\n"
           "the target concurrency (plan's spellings, for any engine). --all: every feasible and rejected deployment.\n"
           "Tries every GPU of the catalog (or those given) x 1, 2, 4, ... GPUs x the layouts the engine supports (TP, TP x PP,\n"
           "expert parallel, DP attention), tunes each and ranks the feasible ones (fewest GPUs, then TP within a node before PP,\n"
           "then most KV; --rank-by kv|headroom for others, --sort is the same). Single-GPU boxes (DGX Spark, Jetson) are tried\n"
           "one at a time unless --nodes N lets up to N of them serve together over the network.\n"
           "Exit: 0 some deployment is feasible, 1 none is, 2 bad input.\n";
    return kExitOk;
  }
  if (!args.positionals().empty()) fail_input("command line", args.positionals().front(), "unexpected argument for 'headroom fit'");
  for (std::string_view o : {"--tp", "--tp-size", "--tensor-parallel-size", "--pp", "--pp-size", "--pipeline-parallel-size", "--dp", "--dp-size",
                             "--data-parallel-size", "--ep", "--ep-size", "--expert-parallel-size", "--enable-dp-attention", "--gpus",
                             "--gpu-memory", "--enable-expert-parallel", "--fix"})
    if (args.has(o)) fail_input("command line", o, "fit chooses the GPUs and the parallelism itself (use 'headroom tune' for a given layout)");

  // plan's spellings of the targets: any engine's context flag is the target context, its
  // running-request cap the target concurrency (whatever engine fit runs, so no parser error).
  std::vector<std::string> argv;
  for (const auto& [k, v] : args.options()) {
    const bool ctx = k == "--max-model-len" || k == "--context-length" || k == "--max_seq_len";
    const bool seqs = k == "--max-num-seqs" || k == "--max-running-requests" || k == "--max_batch_size";
    if (ctx && !args.has("--target-context")) argv.push_back("--target-context=" + v);
    else if (seqs && !args.has("--target-concurrency")) argv.push_back("--target-concurrency=" + v);
    else if (!ctx && !seqs && k != "--all") argv.push_back(k + "=" + v);
  }
  const Args fa = Args::parse(argv);
  FitRequest req;
  req.goal = parse_tune_goal(fa);
  req.gpu_names = fa.get_all("--gpu");
  for (const auto& n : req.gpu_names) require_gpu(n);  // unknown names: exit 2 before any work
  if (auto m = fa.get_int("--max-gpus", 1, 1024)) req.max_gpus = static_cast<int>(*m);
  for (const auto& v : fa.get_all("--kv-cache-dtype"))
    for (size_t i = 0; i <= v.size();) {
      size_t j = v.find(',', i);
      if (j == std::string::npos) j = v.size();
      if (j > i) req.kv_dtypes.push_back(v.substr(i, j - i));
      i = j + 1;
    }
  if (auto m = fa.get_int("--nodes", 1, 64)) req.nodes = static_cast<int>(*m);
  std::string sort = fa.get_or("--rank-by", fa.get_or("--sort", "gpus"));
  if (sort == "gpus") req.sort = FitSort::Gpus;
  else if (sort == "kv") req.sort = FitSort::Kv;
  else if (sort == "headroom") req.sort = FitSort::Headroom;
  else fail_input("command line", fa.get("--rank-by") ? "--rank-by" : "--sort", "expects gpus, kv or headroom, got '" + sort + "'");

  std::string first_gpu = req.gpu_names.empty() ? gpu_catalog().front().name : req.gpu_names.front();
  req.base = parse_deployment(strip_options(fa, {"--gpu", "--max-gpus", "--kv-cache-dtype", "--sort", "--rank-by", "--nodes"}), {}, first_gpu);
  // A host profile holds for its own GPU: the candidates on it are calibrated, the others not.
  attach_profile(fa, req.base, false);
  if (req.base.calibration && !req.gpu_names.empty() &&
      std::find(req.gpu_names.begin(), req.gpu_names.end(), req.base.calibration->gpu) == req.gpu_names.end())
    fail_input("--profile", req.base.calibration->host, fmt::format("fitted on {}, which is not among the GPUs asked for", req.base.calibration->gpu));
  FitResult r = fit(req);
  if (req.base.calibration)
    r.notes.push_back(fmt::format("calibrated (host {}): the candidates on {} use the host's terms, the others the estimates",
                                  req.base.calibration->host, req.base.calibration->gpu));
  if (fa.has("--json")) {
    auto j = fit_json(r);
    if (req.base.calibration) j["calibrated_host"] = req.base.calibration->host;
    out << j.dump(2) << "\n";
  }
  else print_fit(out, r, args.has("--all"));
  return r.candidates.empty() ? kExitFails : kExitOk;
}

}  // namespace headroom
