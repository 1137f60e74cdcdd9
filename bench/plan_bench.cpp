// Speed of one forecast (issue 3: well under a millisecond; tune and fit run it many times).
#include <benchmark/benchmark.h>

#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"

using namespace headroom;

static Deployment seed_deployment(const char* fraction) {
  return parse_deployment(Args::parse({"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8",
                                       "--mem-fraction-static", fraction}));
}

static void BM_PlanSglangSeedDetail(benchmark::State& st) {
  Deployment d = seed_deployment("0.88");
  plan(d);  // warm the layout cache
  for (auto _ : st) benchmark::DoNotOptimize(plan(d));
}
BENCHMARK(BM_PlanSglangSeedDetail)->Unit(benchmark::kMicrosecond);

static void BM_PlanSglangSeedSearch(benchmark::State& st) {
  Deployment d = seed_deployment("0.88");
  PlanOptions o;
  o.detail = false;
  plan(d, o);
  for (auto _ : st) benchmark::DoNotOptimize(plan(d, o));
}
BENCHMARK(BM_PlanSglangSeedSearch)->Unit(benchmark::kMicrosecond);

static void BM_PlanSglangLlama70bTp8(benchmark::State& st) {
  Deployment d = parse_deployment(Args::parse({"--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--tp", "8"}));
  PlanOptions o;
  o.detail = false;
  plan(d, o);
  for (auto _ : st) benchmark::DoNotOptimize(plan(d, o));
}
BENCHMARK(BM_PlanSglangLlama70bTp8)->Unit(benchmark::kMicrosecond);

static void BM_PlanVllmLlama70bTp8(benchmark::State& st) {
  Deployment d = parse_deployment(Args::parse({"--engine", "vllm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--tp", "8"}));
  PlanOptions o;
  o.detail = false;
  plan(d, o);
  for (auto _ : st) benchmark::DoNotOptimize(plan(d, o));
}
BENCHMARK(BM_PlanVllmLlama70bTp8)->Unit(benchmark::kMicrosecond);

static void BM_PlanVllmLlama70bTp8Detail(benchmark::State& st) {
  Deployment d = parse_deployment(Args::parse({"--engine", "vllm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--tp", "8"}));
  plan(d);
  for (auto _ : st) benchmark::DoNotOptimize(plan(d));
}
BENCHMARK(BM_PlanVllmLlama70bTp8Detail)->Unit(benchmark::kMicrosecond);

static void BM_PlanTrtllmLlama70bTp8(benchmark::State& st) {
  Deployment d = parse_deployment(Args::parse({"--engine", "trtllm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--tp", "8"}));
  PlanOptions o;
  o.detail = false;
  plan(d, o);
  for (auto _ : st) benchmark::DoNotOptimize(plan(d, o));
}
BENCHMARK(BM_PlanTrtllmLlama70bTp8)->Unit(benchmark::kMicrosecond);
