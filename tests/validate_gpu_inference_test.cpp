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


// Corpus case vllm-019 (a public DEBUG startup log, Llama-3.2-1B, Aug 2025): no GPU named, but
// "Requested memory: 0.90 (util), 39.88 GiB" gives the capacity, 39.88 / 0.90 = 44.31 GiB; the pool
// it logs is 75,972 blocks x 16 = 1,215,552 tokens. A PyTorch OOM's "total capacity of" is read
// as printed.
TEST(ValidateGpuInference, CapacityFromTheTotalTheLogPrints) {
  auto path = test::write_corpus("gpu_total_raw.jsonl",
                           R"({"id": "req", "engine": "vllm", "engine_version": "0.10.1", "model": "meta-llama/Llama-3.2-1B", "gpu": null, "gpu_total_gib": null, "gpus": 1, "tp": 1, )"
                           R"("flags": {"--max-model-len": "131072"}, "observed": {"kv_tokens": 1215552, "outcome": "ok"}, )"
                           R"("raw": "DEBUG 08-06 10:25:44 [gpu_worker.py:262] Initial free memory: 43.82 GiB; Requested memory: 0.90 (util), 39.88 GiB"})"
                           "\n"
                           R"({"id": "oom", "engine": "vllm", "engine_version": "0.10.1", "model": "meta-llama/Llama-3.2-1B", "gpu": null, "gpu_total_gib": null, "gpus": 1, "tp": 1, )"
                           R"("flags": {}, "observed": {"outcome": "ok"}, )"
                           R"("raw": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.02 GiB is free."})"
                           "\n");
  auto j = validate_corpus(path);
  std::remove(path.c_str());
  const auto& r = test::case_row(j, "req");
  ASSERT_TRUE(r["covered"].get<bool>());
  EXPECT_EQ(r["note"].get<std::string>(), "capacity 44.31 GiB read from the log's 'Requested memory' line (requested / util)");
  EXPECT_NEAR(r["predicted"]["kv_tokens"].get<double>() / 1215552.0, 1.0, 0.03);
  const auto& o = test::case_row(j, "oom");
  ASSERT_TRUE(o["covered"].get<bool>());
  EXPECT_EQ(o["note"].get<std::string>(), "capacity 23.55 GiB read from the log's 'total capacity of' (PyTorch OOM)");
}

}  // namespace
}  // namespace headroom
