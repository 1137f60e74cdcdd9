// validate: what a case must carry to be planned. One GPU implies tp = 1 (corpus vllm-079 names
// 1 GPU and no tp); "env NAME=VALUE" in the notes reaches the plan also when the notes wrap it in
// parentheses (tests/data/extra/vllm.jsonl xvllm-007: "(env VLLM_USE_FLASHINFER_SAMPLER=0)").
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "headroom/validate.h"
#include "validate_test_util.h"

namespace headroom {
namespace {

TEST(ValidateCaseInputs, OneGpuMeansTp1AndTwoGpusNeedTheirTp) {
  auto path = test::write_corpus("case_inputs_tp.jsonl",
                           R"({"id": "one-no-tp", "engine": "vllm", "engine_version": "0.11.0", "model": "Qwen/Qwen3-8B", "gpu": "h100", "gpus": 1, "tp": null, "flags": {}, "observed": {"outcome": "ok"}})"
                           "\n"
                           R"({"id": "one-tp1", "engine": "vllm", "engine_version": "0.11.0", "model": "Qwen/Qwen3-8B", "gpu": "h100", "gpus": 1, "tp": 1, "flags": {}, "observed": {"outcome": "ok"}})"
                           "\n"
                           R"({"id": "two-no-tp", "engine": "vllm", "engine_version": "0.11.0", "model": "Qwen/Qwen3-8B", "gpu": "h100", "gpus": 2, "tp": null, "flags": {}, "observed": {"outcome": "ok"}})"
                           "\n");
  auto j = validate_corpus(path);
  std::remove(path.c_str());
  const auto& a = test::case_row(j, "one-no-tp");
  const auto& b = test::case_row(j, "one-tp1");
  ASSERT_TRUE(a["covered"].get<bool>());
  ASSERT_TRUE(b["covered"].get<bool>());
  EXPECT_EQ(a["predicted"]["kv_tokens"], b["predicted"]["kv_tokens"]);
  const auto& c = test::case_row(j, "two-no-tp");
  EXPECT_FALSE(c["covered"].get<bool>());
  EXPECT_EQ(c["reason"].get<std::string>(), "parallelism unknown");
}

TEST(ValidateCaseInputs, EnvInParenthesesReachesThePlan) {
  // vLLM 0.21+ charges the CUDA-graph estimate before sizing KV unless
  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0: the env moves kv_tokens, so each spelling is seen.
  auto c = [](const char* id, const char* notes) {
    return fmt::format(R"({{"id": "{}", "engine": "vllm", "engine_version": "0.21.0", "model": "Qwen/Qwen3-8B", "gpu": "h100", "gpus": 1, "tp": 1, )"
                       R"("flags": {{}}, "observed": {{"outcome": "ok"}}, "notes": "{}"}})"
                       "\n",
                       id, notes);
  };
  auto path = test::write_corpus("case_inputs_env.jsonl", c("none", "no env") + c("stop", "run with env VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.") +
                                                        c("paren", "the script (env VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0) then"));
  auto j = validate_corpus(path);
  std::remove(path.c_str());
  const auto kv_none = test::case_row(j, "none")["predicted"]["kv_tokens"].get<int64_t>();
  const auto kv_stop = test::case_row(j, "stop")["predicted"]["kv_tokens"].get<int64_t>();
  const auto kv_paren = test::case_row(j, "paren")["predicted"]["kv_tokens"].get<int64_t>();
  EXPECT_GT(kv_stop, kv_none);
  EXPECT_EQ(kv_paren, kv_stop);
}

}  // namespace
}  // namespace headroom
