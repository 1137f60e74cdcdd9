// Speed of tune and fit (issue 6 targets: tune < 100 ms; fit >= 100,000 candidate deployments
// per second on one core, a candidate being one plan() of a distinct deployment), and of the
// single plan() both are built on.
#include <benchmark/benchmark.h>

#include "headroom/advise.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"

using namespace headroom;

namespace {

Deployment seed() {
  return parse_deployment(Args::parse({"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8"}));
}

void BM_PlanQuick(benchmark::State& state) {
  Deployment d = seed();
  d.flags.emplace_back("--mem-fraction-static", "0.88");
  PlanOptions opt;
  opt.detail = false;
  for (auto _ : state) benchmark::DoNotOptimize(plan(d, opt));
  state.counters["plans_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PlanQuick)->Unit(benchmark::kMicrosecond);

void BM_TuneSeed(benchmark::State& state) {
  Deployment d = seed();
  TuneGoal g;
  g.target_context = 131072;
  g.target_concurrency = 2;
  int64_t plans = 0;
  for (auto _ : state) {
    TuneResult r = tune(d, g);
    plans += r.plans;
    benchmark::DoNotOptimize(r);
  }
  state.counters["plans_per_tune"] = static_cast<double>(plans) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_TuneSeed)->Unit(benchmark::kMillisecond);

void fit_bench(benchmark::State& state, const char* engine, const char* model, std::vector<std::string> gpus, int64_t ctx, int64_t conc) {
  FitRequest req;
  req.base = parse_deployment(Args::parse({"--engine", engine, "--model", model, "--gpu", "h100"}));
  req.gpu_names = std::move(gpus);
  req.goal.target_context = ctx;
  req.goal.target_concurrency = conc;
  int64_t plans = 0, evaluated = 0;
  // Per-rank weight layouts are built once per model x parallelism (engines/layout_cache) and
  // reused by every GPU type and knob value; build them before timing candidate evaluation.
  benchmark::DoNotOptimize(fit(req));
  for (auto _ : state) {
    FitResult r = fit(req);
    plans += r.plans;
    evaluated += r.evaluated;
    benchmark::DoNotOptimize(r);
  }
  state.counters["plans_per_s"] = benchmark::Counter(static_cast<double>(plans), benchmark::Counter::kIsRate);
  state.counters["deployments"] = static_cast<double>(evaluated) / static_cast<double>(state.iterations());
}

void BM_FitGlm5Catalog(benchmark::State& state) { fit_bench(state, "sglang", "nvidia/GLM-5-NVFP4", {}, 131072, 2); }
BENCHMARK(BM_FitGlm5Catalog)->Unit(benchmark::kMillisecond);

void BM_FitLlama70bVllm(benchmark::State& state) {
  fit_bench(state, "vllm", "meta-llama/Llama-3.1-70B-Instruct", {"h100", "h200", "b200", "a100-80gb"}, 131072, 2);
}
BENCHMARK(BM_FitLlama70bVllm)->Unit(benchmark::kMillisecond);

}  // namespace
