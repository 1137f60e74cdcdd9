// Speed of tune and fit (issue 6 targets: tune < 100 ms; fit >= 100,000 candidate deployments
// per second on one core, a candidate being one plan() of a distinct deployment), and of the
// single plan() both are built on. Every engine: SGLang, vLLM, TensorRT-LLM.
//   *Warm: per-rank weight layouts already built (they are cached per model x parallelism and
//          every GPU type and knob value reuses them) -- the steady state of a search.
//   *Cold: a fresh copy of the model each iteration, so every layout is built inside the timing
//          (the first fit of a process).
// plans_per_s counts plan() calls per CPU second (Google Benchmark divides rates by CPU time).
#include <benchmark/benchmark.h>

#include <memory>

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

void tune_bench(benchmark::State& state, std::vector<std::string> argv, int64_t ctx, int64_t conc) {
  Deployment d = parse_deployment(Args::parse(argv));
  TuneGoal g;
  g.target_context = ctx;
  g.target_concurrency = conc;
  int64_t plans = 0;
  for (auto _ : state) {
    TuneResult r = tune(d, g);
    plans += r.plans;
    benchmark::DoNotOptimize(r);
  }
  state.counters["plans_per_tune"] = static_cast<double>(plans) / static_cast<double>(state.iterations());
}

void BM_TuneSeed(benchmark::State& state) {
  tune_bench(state, {"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8"}, 131072, 2);
}
BENCHMARK(BM_TuneSeed)->Unit(benchmark::kMillisecond);

void BM_TuneVllmLlama70b(benchmark::State& state) {
  tune_bench(state, {"--engine", "vllm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--tp", "4"}, 131072, 8);
}
BENCHMARK(BM_TuneVllmLlama70b)->Unit(benchmark::kMillisecond);

void BM_TuneTrtllmQwen3Moe(benchmark::State& state) {
  tune_bench(state, {"--engine", "trtllm", "--model", "Qwen/Qwen3-235B-A22B-FP8", "--gpu", "h200", "--tp", "4"}, 32768, 8);
}
BENCHMARK(BM_TuneTrtllmQwen3Moe)->Unit(benchmark::kMillisecond);

void fit_bench(benchmark::State& state, const char* engine, const char* model, std::vector<std::string> gpus, int64_t ctx, int64_t conc,
               bool cold = false) {
  FitRequest req;
  req.base = parse_deployment(Args::parse({"--engine", engine, "--model", model, "--gpu", "h100"}));
  req.gpu_names = std::move(gpus);
  req.goal.target_context = ctx;
  req.goal.target_concurrency = conc;
  int64_t plans = 0, evaluated = 0;
  // Per-rank weight layouts are built once per model x parallelism (engines/layout_cache) and
  // reused by every GPU type and knob value; warm: build them before timing.
  if (!cold) benchmark::DoNotOptimize(fit(req));
  const std::shared_ptr<const Model> original = req.base.model;
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      req.base.model = std::make_shared<const Model>(*original);  // a new model: no cached layout
      state.ResumeTiming();
    }
    FitResult r = fit(req);
    plans += r.plans;
    evaluated += r.evaluated;
    benchmark::DoNotOptimize(r);
  }
  state.counters["plans_per_s"] = benchmark::Counter(static_cast<double>(plans), benchmark::Counter::kIsRate);
  state.counters["deployments"] = static_cast<double>(evaluated) / static_cast<double>(state.iterations());
}

constexpr const char* kGlm5 = "nvidia/GLM-5-NVFP4";
constexpr const char* kLlama70b = "meta-llama/Llama-3.1-70B-Instruct";
constexpr const char* kQwen3Moe = "Qwen/Qwen3-235B-A22B-FP8";

void BM_FitGlm5Catalog(benchmark::State& state) { fit_bench(state, "sglang", kGlm5, {}, 131072, 2); }
BENCHMARK(BM_FitGlm5Catalog)->Unit(benchmark::kMillisecond);
void BM_FitGlm5CatalogCold(benchmark::State& state) { fit_bench(state, "sglang", kGlm5, {}, 131072, 2, true); }
BENCHMARK(BM_FitGlm5CatalogCold)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_FitLlama70bVllm(benchmark::State& state) { fit_bench(state, "vllm", kLlama70b, {"h100", "h200", "b200", "a100-80gb"}, 131072, 2); }
BENCHMARK(BM_FitLlama70bVllm)->Unit(benchmark::kMillisecond);
void BM_FitLlama70bVllmCatalog(benchmark::State& state) { fit_bench(state, "vllm", kLlama70b, {}, 131072, 2); }
BENCHMARK(BM_FitLlama70bVllmCatalog)->Unit(benchmark::kMillisecond);
void BM_FitLlama70bVllmCatalogCold(benchmark::State& state) { fit_bench(state, "vllm", kLlama70b, {}, 131072, 2, true); }
BENCHMARK(BM_FitLlama70bVllmCatalogCold)->Unit(benchmark::kMillisecond)->Iterations(5);
void BM_FitQwen3MoeVllmCatalog(benchmark::State& state) { fit_bench(state, "vllm", kQwen3Moe, {}, 32768, 8); }
BENCHMARK(BM_FitQwen3MoeVllmCatalog)->Unit(benchmark::kMillisecond);

void BM_FitLlama70bTrtllmCatalog(benchmark::State& state) { fit_bench(state, "trtllm", kLlama70b, {}, 131072, 2); }
BENCHMARK(BM_FitLlama70bTrtllmCatalog)->Unit(benchmark::kMillisecond);
void BM_FitLlama70bTrtllmCatalogCold(benchmark::State& state) { fit_bench(state, "trtllm", kLlama70b, {}, 131072, 2, true); }
BENCHMARK(BM_FitLlama70bTrtllmCatalogCold)->Unit(benchmark::kMillisecond)->Iterations(5);
void BM_FitQwen3MoeTrtllmCatalog(benchmark::State& state) { fit_bench(state, "trtllm", kQwen3Moe, {}, 32768, 8); }
BENCHMARK(BM_FitQwen3MoeTrtllmCatalog)->Unit(benchmark::kMillisecond);

void BM_FitQwen3MoeSglangCatalog(benchmark::State& state) { fit_bench(state, "sglang", kQwen3Moe, {}, 32768, 8); }
BENCHMARK(BM_FitQwen3MoeSglangCatalog)->Unit(benchmark::kMillisecond);

}  // namespace
