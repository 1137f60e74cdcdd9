// validate: a case that names no GPU gets one from the first free-memory figure its log prints,
// when the GPU catalog leaves no doubt (src/validate/validate.cpp gpu_from_free_memory).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "headroom/validate.h"
#include "validate_test_util.h"

namespace headroom {
namespace {

// Corpus case sglang-001 (sgl-project/sglang PR #11716, 2025-10-16, Llama-3.3-70B TP8): the log's
// "Load weight begin. avail mem=137.34 GB" fits only the 139.81 GiB H200 (2.47 GiB for context +
// NCCL); the pool it then logs is "#tokens: 2795207".
TEST(ValidateGpuInference, SglangFreeMemoryAtStartNamesTheGpu) {
  auto path = test::write_corpus("gpu_infer.jsonl",
                           R"({"id": "a", "engine": "sglang", "engine_version": "main@2025-10-16", "model": "meta-llama/Llama-3.3-70B-Instruct", )"
                           R"("gpu": null, "gpu_total_gib": null, "gpus": 8, "tp": 8, "flags": {"--cuda-graph-max-bs": "512"}, )"
                           R"("observed": {"init_avail_gib": 137.34, "kv_tokens": 2795207, "outcome": "ok"}})"
                           "\n"
                           // 43.82 GiB free: L40S / L40 (44.39) or RTX 6000 Ada (47.37): same architecture, capacities 7 % apart.
                           R"({"id": "b", "engine": "vllm", "model": "Qwen/Qwen3-8B", "gpu": null, "tp": 1, "flags": {}, )"
                           R"("observed": {"init_avail_gib": 43.82, "kv_tokens": 300000, "outcome": "ok"}})"
                           "\n"
                           // 77.0 GiB free: A100-80GB (Ampere) or H100 (Hopper): engines pick different defaults.
                           R"({"id": "c", "engine": "sglang", "model": "Qwen/Qwen3-8B", "gpu": null, "tp": 1, "flags": {}, )"
                           R"("observed": {"init_avail_gib": 77.0, "outcome": "ok"}})"
                           "\n");
  auto j = validate_corpus(path);
  std::remove(path.c_str());
  const auto& a = test::case_row(j, "a");
  ASSERT_TRUE(a["covered"].get<bool>());
  EXPECT_EQ(a["note"].get<std::string>(), "GPU inferred: h200 (139.81 GiB) from the log's 137.34 GiB free at start");
  double kv = a["predicted"]["kv_tokens"].get<double>();
  EXPECT_NEAR(kv / 2795207.0, 1.0, 0.01);
  for (const char* id : {"b", "c"}) {
    const auto& r = test::case_row(j, id);
    EXPECT_FALSE(r["covered"].get<bool>()) << id;
    EXPECT_EQ(r["reason"].get<std::string>(), "GPU unknown") << id;
  }
}

}  // namespace
}  // namespace headroom
