// tune and fit plan one deployment many times with only the memory budget changed; the vLLM and
// TensorRT-LLM engine models keep what does not depend on the budget for the last deployment
// planned (engines/plan_memo.h) and simulate ranks with the same terms once. These tests pin
// that neither changes a forecast: the same deployment planned fresh, after other deployments,
// after another budget, with and without detail gives the same numbers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engines/plan_memo.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"

using namespace headroom;

namespace {

Deployment dep(std::vector<std::string> argv) { return parse_deployment(Args::parse(argv)); }

Forecast quick(const Deployment& d) {
  PlanOptions o;
  o.detail = false;
  return plan(d, o);
}

// Everything tune and fit read from a forecast, and every stage's free memory on every rank.
void expect_same(const Forecast& a, const Forecast& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.verdict, b.verdict);
  EXPECT_EQ(a.kv_tokens, b.kv_tokens);
  EXPECT_EQ(a.context_len, b.context_len);
  EXPECT_EQ(a.max_running_requests, b.max_running_requests);
  EXPECT_EQ(a.max_concurrency, b.max_concurrency);
  EXPECT_EQ(a.headroom_bytes, b.headroom_bytes);
  EXPECT_EQ(a.settings, b.settings);
  ASSERT_EQ(a.failure.has_value(), b.failure.has_value());
  if (a.failure) {
    EXPECT_EQ(a.failure->stage, b.failure->stage);
    EXPECT_EQ(a.failure->rank, b.failure->rank);
    EXPECT_EQ(a.failure->request_bytes, b.failure->request_bytes);
    EXPECT_EQ(a.failure->free_bytes, b.failure->free_bytes);
  }
}

// The stage minima over ranks (what tune's search reads): equal with and without detail.
struct StageMin {
  StageId id;
  int64_t after, worst, best;
  bool operator==(const StageMin&) const = default;
};
std::vector<StageMin> minima(const Forecast& f) {
  std::vector<StageMin> out;
  for (const auto& r : f.ranks)
    for (const auto& s : r.stages) {
      auto it = std::find_if(out.begin(), out.end(), [&](const StageMin& m) { return m.id == s.id; });
      if (it == out.end()) out.push_back({s.id, s.free_bytes_after, s.free_worst, s.free_best});
      else {
        it->after = std::min(it->after, s.free_bytes_after);
        it->worst = std::min(it->worst, s.free_worst);
        it->best = std::min(it->best, s.free_best);
      }
    }
  std::sort(out.begin(), out.end(), [](const StageMin& x, const StageMin& y) { return x.id < y.id; });
  return out;
}

const std::vector<std::string> kVllmLlama{"--engine", "vllm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--tp", "4"};
const std::vector<std::string> kTrtQwen{"--engine", "trtllm", "--model", "Qwen/Qwen3-235B-A22B-FP8", "--gpu", "h200", "--tp", "4", "--pp", "2"};

std::vector<std::string> with(std::vector<std::string> a, std::vector<std::string> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST(AdvisePlanReuse, SameButBudget) {
  Deployment a = dep(with(kVllmLlama, {"--gpu-memory-utilization", "0.9", "--max-num-seqs", "64"}));
  Deployment b = dep(with(kVllmLlama, {"--gpu-memory-utilization", "0.8", "--max-num-seqs", "64"}));
  const std::vector<std::string_view> budget{"--gpu-memory-utilization"};
  EXPECT_TRUE(same_but_budget(a, b, budget));
  EXPECT_FALSE(same_but_budget(a, b, {}));
  Deployment c = dep(with(kVllmLlama, {"--gpu-memory-utilization", "0.9", "--max-num-seqs", "32"}));
  EXPECT_FALSE(same_but_budget(a, c, budget));  // another flag's value
  Deployment e = a;
  e.par.tp = 8;
  EXPECT_FALSE(same_but_budget(a, e, budget));
  e = a;
  e.capacity_bytes -= 1;  // --keep-free plans on less memory
  EXPECT_FALSE(same_but_budget(a, e, budget));
  e = a;
  e.gpu.sm = 100;
  EXPECT_FALSE(same_but_budget(a, e, budget));
  e = a;
  e.model = std::make_shared<const Model>(*a.model);  // a copy is another model
  EXPECT_FALSE(same_but_budget(a, e, budget));
}

TEST(AdvisePlanReuse, VllmBudgetSweepMatchesFreshPlans) {
  // Fresh: each utilization planned right after an unrelated deployment (nothing to reuse).
  const Deployment other = dep({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h200"});
  std::vector<Forecast> fresh;
  for (const char* u : {"0.5", "0.8", "0.9", "0.97", "0.99"}) {
    quick(other);
    fresh.push_back(quick(dep(with(kVllmLlama, {"--gpu-memory-utilization", u}))));
  }
  // Reused: the same values one after the other, and back down.
  int i = 0;
  for (const char* u : {"0.5", "0.8", "0.9", "0.97", "0.99"}) expect_same(quick(dep(with(kVllmLlama, {"--gpu-memory-utilization", u}))), fresh[i++], u);
  expect_same(quick(dep(with(kVllmLlama, {"--gpu-memory-utilization", "0.8"}))), fresh[1], "0.8 again");
  // The utilization's row of the settings follows the value planned.
  EXPECT_EQ(*fresh[3].setting("--gpu-memory-utilization"), "0.97");
  // Bad budgets are refused as before, on a reused deployment too.
  EXPECT_THROW(quick(dep(with(kVllmLlama, {"--gpu-memory-utilization", "1.5"}))), InputError);
  EXPECT_THROW(quick(dep(with(kVllmLlama, {"--gpu-memory-utilization", "0"}))), InputError);
  expect_same(quick(dep(with(kVllmLlama, {"--gpu-memory-utilization", "0.9"}))), fresh[2], "after a refused budget");
}

TEST(AdvisePlanReuse, VllmKvBytesBudget) {
  const std::vector<std::string> base{"--engine", "vllm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h200", "--tp", "2"};
  Forecast a = quick(dep(with(base, {"--kv-cache-memory-bytes", "20G"})));
  Forecast b = quick(dep(with(base, {"--kv-cache-memory-bytes", "40G"})));
  quick(dep({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"}));
  expect_same(quick(dep(with(base, {"--kv-cache-memory-bytes", "20G"}))), a, "20G fresh");
  // 40 GiB of KV at 163,840 B per token per rank (80 layers x 8 KV heads / TP 2 x 128 x 2 x 2 B)
  // is twice 20 GiB: 20 x 2^30 / 163,840 = 131,072 tokens, 40 GiB 262,144 (whole blocks of 16).
  EXPECT_EQ(a.kv_tokens, 131072);
  EXPECT_EQ(b.kv_tokens, 262144);
  EXPECT_EQ(*b.setting("--kv-cache-memory-bytes"), "42949672960");  // vLLM's human_readable_int: G = 2^30
}

TEST(AdvisePlanReuse, DetailDoesNotChangeNumbers) {
  for (const auto& argv : {with(kVllmLlama, {"--gpu-memory-utilization", "0.9"}), with(kVllmLlama, {"--gpu-memory-utilization", "0.99"}),
                           std::vector<std::string>{"--engine", "vllm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "b200", "--tp", "4", "--pp", "2"},
                           std::vector<std::string>{"--engine", "vllm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--tp", "1"},
                           with(kTrtQwen, {"--kv_cache_free_gpu_memory_fraction", "0.9"}), with(kTrtQwen, {"--kv_cache_free_gpu_memory_fraction", "0.5"}),
                           std::vector<std::string>{"--engine", "trtllm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--tp", "1"}}) {
    Deployment d = dep(argv);
    Forecast full = plan(d);
    Forecast q = quick(d);
    expect_same(q, full, argv[1] + " " + argv[7]);
    EXPECT_EQ(minima(q), minima(full));
    // With detail every rank is reported (ranks with the same terms are copies), in rank order.
    ASSERT_EQ(full.ranks.size(), static_cast<size_t>(d.par.tp * d.par.pp));
    for (size_t r = 0; r < full.ranks.size(); ++r) EXPECT_EQ(full.ranks[r].rank, static_cast<int>(r));
    EXPECT_FALSE(full.log.empty());
    EXPECT_TRUE(q.log.empty());
  }
}

TEST(AdvisePlanReuse, TrtllmFractionSweepMatchesFreshPlans) {
  const Deployment other = dep({"--engine", "trtllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"});
  std::vector<Forecast> fresh;
  for (const char* x : {"0.1", "0.5", "0.9", "0.95"}) {
    quick(other);
    fresh.push_back(quick(dep(with(kTrtQwen, {"--kv_cache_free_gpu_memory_fraction", x}))));
  }
  int i = 0;
  for (const char* x : {"0.1", "0.5", "0.9", "0.95"}) expect_same(quick(dep(with(kTrtQwen, {"--kv_cache_free_gpu_memory_fraction", x}))), fresh[i++], x);
  EXPECT_LT(fresh[0].kv_tokens, fresh[1].kv_tokens);
  EXPECT_LT(fresh[1].kv_tokens, fresh[2].kv_tokens);
  EXPECT_EQ(*fresh[1].setting("--kv_cache_free_gpu_memory_fraction"), "0.5");
  EXPECT_THROW(quick(dep(with(kTrtQwen, {"--kv_cache_free_gpu_memory_fraction", "1.0"}))), InputError);
  // The other spelling is the same budget.
  expect_same(quick(dep(with(kTrtQwen, {"--free_gpu_memory_fraction", "0.5"}))), fresh[1], "--free_gpu_memory_fraction");
}
