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


TEST(ValidateCaseInputs, EnvironmentTheVllmLogStatesReachesThePlan) {
  // Two facts no flag carries, stated by vLLM's own lines (extra xvllm-094: gpt-oss-120b TP4 over
  // four one-GPU Ray nodes, 0.10.1.1): FlashInfer's sampler in use (VLLM_USE_FLASHINFER_SAMPLER=1:
  // 14 B per logit, not the sort's 38) and a group across nodes (--interconnect network: the PCIe
  // hosts' NCCL figures). Each one raises the forecast pool; a variable the notes set wins.
  auto c = [](const char* id, const char* raw, const char* notes) {
    return fmt::format(R"({{"id": "{}", "engine": "vllm", "engine_version": "0.10.1.1", "model": "openai/gpt-oss-120b", "gpu": "a100-80gb", )"
                       R"("gpus": 4, "tp": 4, "flags": {{"--gpu-memory-utilization": "0.8", "--max-model-len": "16384"}}, )"
                       R"("observed": {{"outcome": "ok"}}, "raw": "{}", "notes": "{}"}})"
                       "\n",
                       id, raw, notes);
  };
  const char* fi = "INFO [topk_topp_sampler.py:49] Using FlashInfer for top-p & top-k sampling.";
  const char* nodes = "WARNING [custom_all_reduce.py:85] Custom allreduce is disabled because this process group spans across nodes.";
  auto path = test::write_corpus("case_inputs_logenv.jsonl",
                                 c("plain", "", "") + c("fi", fi, "") + c("nodes", nodes, "") +
                                     c("fi-but-env0", fi, "run with env VLLM_USE_FLASHINFER_SAMPLER=0."));
  auto j = validate_corpus(path);
  std::remove(path.c_str());
  auto kv = [&](const char* id) { return test::case_row(j, id)["predicted"]["kv_tokens"].get<int64_t>(); };
  EXPECT_GT(kv("fi"), kv("plain"));
  EXPECT_GT(kv("nodes"), kv("plain"));
  EXPECT_EQ(kv("fi-but-env0"), kv("plain"));
}

TEST(ValidateCaseInputs, ParallelismFromTheRecordedFlagsAndNumbersAsStrings) {
  // tp null but the launch command's --tensor-parallel-size recorded: planned at that TP, the same
  // forecast as the filled field; "tp": "2" (a string) reads as 2; a TP in neither stays unknown.
  auto path = test::write_corpus("case_inputs_tp_flags.jsonl",
                           R"({"id": "field", "engine": "vllm", "engine_version": "0.11.0", "model": "Qwen/Qwen3-32B", "gpu": "h100", "gpus": 2, "tp": 2, "flags": {}, "observed": {"outcome": "ok"}})"
                           "\n"
                           R"({"id": "flag", "engine": "vllm", "engine_version": "0.11.0", "model": "Qwen/Qwen3-32B", "gpu": "h100", "gpus": 2, "tp": null, "flags": {"--tensor-parallel-size": "2"}, "observed": {"outcome": "ok"}})"
                           "\n"
                           R"({"id": "string", "engine": "vllm", "engine_version": "0.11.0", "model": "Qwen/Qwen3-32B", "gpu": "h100", "gpus": 2, "tp": "2", "flags": {}, "observed": {"outcome": "ok"}})"
                           "\n"
                           R"({"id": "sglang-flag", "engine": "sglang", "engine_version": "0.5.4", "model": "Qwen/Qwen3-32B", "gpu": "h100", "gpus": null, "tp": null, "flags": {"--tp-size": 2}, "observed": {"outcome": "ok"}})"
                           "\n"
                           R"({"id": "none", "engine": "vllm", "engine_version": "0.11.0", "model": "Qwen/Qwen3-32B", "gpu": "h100", "gpus": 2, "tp": null, "flags": {"--max-model-len": "8192"}, "observed": {"outcome": "ok"}})"
                           "\n");
  auto j = validate_corpus(path);
  std::remove(path.c_str());
  const auto& field = test::case_row(j, "field");
  ASSERT_TRUE(field["covered"].get<bool>());
  EXPECT_GT(field["predicted"]["kv_tokens"].get<int64_t>(), 100000);
  EXPECT_EQ(test::case_row(j, "flag")["predicted"]["kv_tokens"], field["predicted"]["kv_tokens"]);
  EXPECT_EQ(test::case_row(j, "string")["predicted"]["kv_tokens"], field["predicted"]["kv_tokens"]);
  EXPECT_TRUE(test::case_row(j, "sglang-flag")["covered"].get<bool>());
  EXPECT_EQ(test::case_row(j, "none")["reason"].get<std::string>(), "parallelism unknown");
}

TEST(ValidateCaseInputs, FlagValuesOfEveryJsonType) {
  // A record's flags as numbers, booleans, objects or null: numbers and objects pass as the engine
  // reads them (an object as its JSON text), true as a bare flag, null as not given; underscores
  // and short aliases as vLLM spells them.
  auto path = test::write_corpus(
      "case_inputs_json_types.jsonl",
      R"({"id": "plain", "engine": "vllm", "engine_version": "0.11.0", "model": "Qwen/Qwen3-VL-8B-Instruct", "gpu": "l40s", "gpus": 1, "tp": 1, "flags": {"--max-model-len": "32768", "--enforce-eager": "true", "--limit-mm-per-prompt": "{\"image\": 0, \"video\": 0}"}, "observed": {"outcome": "ok"}})"
      "\n"
      R"({"id": "typed", "engine": "vllm", "engine_version": "0.11.0", "model": "Qwen/Qwen3-VL-8B-Instruct", "gpu": "l40s", "gpus": 1, "tp": 1, "flags": {"--max_model_len": 32768, "--enforce-eager": true, "--quantization": null, "--limit-mm-per-prompt": {"image": 0, "video": 0}}, "observed": {"outcome": "ok"}})"
      "\n");
  auto j = validate_corpus(path);
  std::remove(path.c_str());
  const auto& plain = test::case_row(j, "plain");
  ASSERT_TRUE(plain["covered"].get<bool>());
  EXPECT_EQ(test::case_row(j, "typed")["predicted"]["kv_tokens"], plain["predicted"]["kv_tokens"]);
  EXPECT_EQ(test::case_row(j, "typed")["predicted"]["weights_gib"], plain["predicted"]["weights_gib"]);
}

TEST(ValidateCaseInputs, VagueVersionTakesTheOneTheLogShows) {
  // Corpus vllm-021 (vllm#10517) is recorded "unknown@2024", which brackets to 0.6.5 (PR #10511: the
  // CUDA context out of the budget); its own line is the pre-0.6.5 one-line "Memory profiling
  // results: ... initial_memory_usage=...", whose non_torch_memory=0.35GiB holds the context. On
  // 0.6.4 rules the refusal's pool is 23,488 tokens (logged 23,648; 27,168 on 0.6.5 rules). A printed
  // version ("vLLM API server version 0.6.5") wins over the format; a numeric record version is kept.
  const char* results = "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB "
                        "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90";
  auto c = [&](const char* id, const char* version, const std::string& raw) {
    return fmt::format(R"({{"id": "{}", "engine": "vllm", "engine_version": {}, "model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "rtx-3090", )"
                       R"("gpu_total_gib": 23.58, "gpus": 1, "tp": 1, "flags": {{"--gpu-memory-utilization": "0.9", "--max-model-len": "29000"}}, )"
                       R"("observed": {{"outcome": "refused_kv", "kv_tokens": 23648}}, "raw": "{}"}})"
                       "\n",
                       id, version, raw);
  };
  auto path = test::write_corpus("case_inputs_version.jsonl", c("format", "\"unknown@2024\"", results) + c("null", "null", results) +
                                                                c("stamp", "\"unknown@2024\"", std::string("vLLM API server version 0.6.5\\n") + results) +
                                                                c("numeric", "\"0.6.5\"", results) + c("no-log", "\"unknown@2024\"", "") +
                                                                c("garbled", "null", std::string("vLLM API server version 99.99.1\\n") + results));
  auto j = validate_corpus(path);
  std::remove(path.c_str());
  auto kv = [&](const char* id) { return test::case_row(j, id)["predicted"]["kv_tokens"].get<int64_t>(); };
  EXPECT_EQ(kv("format"), 23488);
  EXPECT_EQ(kv("null"), 23488);
  EXPECT_NE(test::case_row(j, "format")["note"].get<std::string>().find("0.6.4 rules INFERRED"), std::string::npos);
  EXPECT_EQ(kv("stamp"), 27168);
  EXPECT_NE(test::case_row(j, "stamp")["note"].get<std::string>().find("version 0.6.5 as the log prints it"), std::string::npos);
  EXPECT_EQ(kv("numeric"), 27168);
  EXPECT_EQ(kv("no-log"), 27168);
  // A stamp that is no release number is not used: the line format still tells.
  EXPECT_EQ(kv("garbled"), 23488);
}

TEST(ValidateCaseInputs, TorchCompileCacheStateTheLogShowsReachesThePlan) {
  // Extra xvllm-111 / -112 (0.27.1, Qwen3-8B, RTX 4090): the first start compiles ("torch.compile
  // took 38.96 s in total"), the restart loads ("Directly load AOT compilation from path ...",
  // "torch.compile took 0.30 s"). A cold start plans 1 GiB less KV; no line, the restart's plan.
  auto c = [](const char* id, const char* raw) {
    return fmt::format(R"({{"id": "{}", "engine": "vllm", "engine_version": "0.27.1", "model": "Qwen/Qwen3-8B", "gpu": "rtx-4090", )"
                       R"("gpu_total_gib": 23.52, "gpus": 1, "tp": 1, "flags": {{"--max-model-len": "8192"}}, "observed": {{"outcome": "ok"}}, "raw": "{}"}})"
                       "\n",
                       id, raw);
  };
  auto path = test::write_corpus("case_inputs_compile.jsonl",
                                 c("cold", "INFO [monitor.py:53] torch.compile took 38.96 s in total") +
                                     c("graph", "INFO [backends.py:393] Compiling a graph for compile range (1, 2048) takes 17.57 s") +
                                     c("warm", "INFO [decorators.py:311] Directly load AOT compilation from path /root/.cache/vllm/x\\n"
                                               "INFO [monitor.py:53] torch.compile took 0.30 s in total") +
                                     c("quick", "INFO [monitor.py:53] torch.compile took 0.30 s in total") + c("none", ""));
  auto j = validate_corpus(path);
  std::remove(path.c_str());
  auto kv = [&](const char* id) { return test::case_row(j, id)["predicted"]["kv_tokens"].get<int64_t>(); };
  EXPECT_EQ(kv("none"), 41888);
  EXPECT_EQ(kv("warm"), 41888);
  EXPECT_EQ(kv("quick"), 41888);
  EXPECT_EQ(kv("cold"), 34608);
  EXPECT_EQ(kv("graph"), 34608);
}

}  // namespace
}  // namespace headroom
