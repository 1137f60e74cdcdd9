// Speed of one forecast (issue 3: well under a millisecond; tune and fit run it many times).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"

using namespace headroom;

namespace {
const std::vector<std::string> kSeed{"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8",
                                     "--mem-fraction-static", "0.88"};
std::vector<std::string> llama70b_tp8(const char* engine) {
  return {"--engine", engine, "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--tp", "8"};
}

// One plan of `argv` per iteration, after one plan that warms the layout cache and plan memo.
// detail = false is how tune/fit call it (no log lines, no item lists).
void plan_loop(benchmark::State& st, const std::vector<std::string>& argv, bool detail) {
  Deployment d = parse_deployment(Args::parse(argv));
  PlanOptions o;
  o.detail = detail;
  plan(d, o);
  for (auto _ : st) benchmark::DoNotOptimize(plan(d, o));
}
}  // namespace

static void BM_PlanSglangSeedDetail(benchmark::State& st) { plan_loop(st, kSeed, true); }
BENCHMARK(BM_PlanSglangSeedDetail)->Unit(benchmark::kMicrosecond);

static void BM_PlanSglangSeedSearch(benchmark::State& st) { plan_loop(st, kSeed, false); }
BENCHMARK(BM_PlanSglangSeedSearch)->Unit(benchmark::kMicrosecond);

static void BM_PlanSglangLlama70bTp8(benchmark::State& st) { plan_loop(st, llama70b_tp8("sglang"), false); }
BENCHMARK(BM_PlanSglangLlama70bTp8)->Unit(benchmark::kMicrosecond);

static void BM_PlanVllmLlama70bTp8(benchmark::State& st) { plan_loop(st, llama70b_tp8("vllm"), false); }
BENCHMARK(BM_PlanVllmLlama70bTp8)->Unit(benchmark::kMicrosecond);

static void BM_PlanVllmLlama70bTp8Detail(benchmark::State& st) { plan_loop(st, llama70b_tp8("vllm"), true); }
BENCHMARK(BM_PlanVllmLlama70bTp8Detail)->Unit(benchmark::kMicrosecond);

static void BM_PlanTrtllmLlama70bTp8(benchmark::State& st) { plan_loop(st, llama70b_tp8("trtllm"), false); }
BENCHMARK(BM_PlanTrtllmLlama70bTp8)->Unit(benchmark::kMicrosecond);

// llama.cpp (issue 25: a plan well under a millisecond): llamacpp-010's deployment, a derived
// Q4_K_M table of a 128-expert model, two GPUs and an -ot rule.
static void BM_PlanLlamacppQwen3Moe(benchmark::State& st) {
  plan_loop(st, {"--engine", "llamacpp@b5622", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q4_K_M", "--gpu", "rtx-4090,rtx-5090", "-ngl",
                 "99", "-c", "16384", "-ot", ".ffn_.*_exps.=CPU"},
            false);
}
BENCHMARK(BM_PlanLlamacppQwen3Moe)->Unit(benchmark::kMicrosecond);

// llama.cpp's --fit over two GPUs for a MoE model: the context step and the layer searches (about
// 30 dry-run layouts), what a plan without -ngl / -c costs.
static void BM_PlanLlamacppFitMoeTwoGpus(benchmark::State& st) {
  plan_loop(st, {"--engine", "llamacpp", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q8_0", "--gpu", "rtx-3060,rtx-3060"}, false);
}
BENCHMARK(BM_PlanLlamacppFitMoeTwoGpus)->Unit(benchmark::kMicrosecond);
