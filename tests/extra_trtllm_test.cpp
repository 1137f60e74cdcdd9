// Replays tests/data/extra/trtllm.jsonl - real TensorRT-LLM startup / crash logs from outside
// /work/shared/corpus (which has no TensorRT-LLM file) - through validate_corpus() and pins what
// the forecast achieved on them, so that a change to the TensorRT-LLM engine model that moves
// these numbers shows up in CI. Sources and inferences are in each case's `source` / `notes`.
//
// Measured 2026-11-30, second pass (17 cases; the first 9 are the first pass's):
//   17 cases, 9 covered (model in the catalog, GPU or capacity, parallelism known). Not covered:
//   xtrt-006 nvidia/Llama-3.1-8B-Instruct-FP8, xtrt-008/009 SmolLM2-135M on an RTX 4070 SUPER,
//   xtrt-011 Qwen3-8B-FP8 on an unnamed sm120 card, xtrt-012 Qwen1.5-7B, xtrt-013/017 Llama-2-7B,
//   xtrt-014 LLaVA-1.5-7B (their block arithmetic is checked in tests/trtllm_logs2_test.cpp).
// Catalog pass of 2026-11-30 (meta-llama/Llama-2-7b-hf added, data/models/INDEX.md): 11 covered.
//   xtrt-013 (0.12 engine, fp8 KV, H100): 240,832 vs 259,840 tokens logged, -7.3%; xtrt-017 (0.5.0,
//   A10, fraction 0.95): 17,488 vs 10,718, +63.2%. Both forecast "fits" and started: outcome 7/9 ->
//   9/11. kv_tokens n 7 -> 9, median 4.88% -> 5.14% (now xtrt-010, the middle of 9), p90 312.88% ->
//   204.19%. The measurements below are the first two passes'; the pins follow the 11-case figures.
//   kv_tokens |err| over the 7 covered cases with a logged pool (forecast vs "Allocated ... (N)"):
//     xtrt-016 Llama-3-8B 0.8.0 RTX 3090, max_tokens 2560: 0% (2,560 = 20 blocks of 128);
//     xtrt-015 same engine, fraction 0.9: -0.84% (60,160 vs 60,672; was -17.0% before the 0.8
//       runtime sized the pool before its execution context and blocks were 128 tokens);
//     xtrt-001 Qwen3-0.6B H100 1.2.1: +1.03%;
//     xtrt-007 Qwen2.5-VL-7B L20 0.21.0rc1: +4.88% (316,192 vs 301,472; +57.3% before the case
//       carried quickstart_multimodal.py's fraction 0.6 - the first pass left the L20 uncovered);
//     xtrt-010 Kimi-K2.5-NVFP4 8 x B300 TP8 1.3.0rc7: +5.14% (5,334,272 vs 5,073,376);
//     xtrt-003 Llama-3.1-8B FP8 engine RTX 5090 0.19.0: -9.26% (the catalog's BF16 weights);
//     xtrt-002 gpt-oss-120b DGX Spark 1.1.0rc3: +768% (49.78 GiB of unified memory in use outside
//       torch before profiling).
//   Median 4.88% (first pass: 9.26%, n=3).
//   weights_gib: xtrt-002 -4.3%, xtrt-004 -4.2%; median 4.24%. post_weights_avail: xtrt-004 0.82%.
//   outcome: 7/9 - xtrt-004 (KV cache creation failed on 8 x H200 with 108.86 GiB free; the thread
//     never established why) and xtrt-005 (rank 1's allocations landing on GPU 0 in 1.0.0rc3)
//     are failures the forecast says fit.
//   doctor stage: 2/2 - xtrt-005 'weights'; xtrt-004's "Executor creation failed due to
//     insufficient GPU memory ... could not be created: KV cache" read as a KV-pool OOM (log_trtllm.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>

#include "headroom/validate.h"
#include "validate_test_util.h"

using namespace headroom;

using headroom::test::case_row;

TEST(ExtraTrtllm, ReplayMetricsPinned) {
  auto j = validate_corpus(std::string(HEADROOM_TEST_DATA) + "/extra/trtllm.jsonl");
  std::cout << "extra trtllm: kv " << j["kv_tokens"].dump() << ", weights " << j["weights_gib"].dump() << ", outcome " << j["outcome"].dump()
            << ", doctor " << j["doctor_stage"].dump() << "\n";
  EXPECT_EQ(j["cases"].get<int>(), 17);
  EXPECT_EQ(j["covered"].get<int>(), 11);

  // Pool size: n and median |err| (%) of the forecast's tokens against "Allocated ... (N)".
  ASSERT_EQ(j["kv_tokens"]["n"].get<int>(), 9);
  // 5.14% measured (xtrt-010, the middle of 9; 4.88% for the 7 cases before Llama-2-7B was
  // catalogued); the estimated activation / non-torch terms move xtrt-007 and xtrt-010 (both
  // ~+5%): allowed up to 5.2%.
  EXPECT_LE(j["kv_tokens"]["median_abs_pct_err"].get<double>(), 5.2);
  // Weights per rank and free memory after them (GiB figures the logs print).
  ASSERT_EQ(j["weights_gib"]["n"].get<int>(), 2);
  EXPECT_LE(j["weights_gib"]["median_abs_pct_err"].get<double>(), 4.3);  // 4.24% measured
  ASSERT_EQ(j["post_weights_avail"]["n"].get<int>(), 1);
  EXPECT_LE(j["post_weights_avail"]["median_abs_pct_err"].get<double>(), 0.9);  // 0.82% measured
  // Outcome agreement (fits, or the failing stage).
  ASSERT_EQ(j["outcome"]["n"].get<int>(), 11);
  EXPECT_GE(j["outcome"]["agreement"].get<double>(), 0.818 - 1e-9);  // 9/11 measured (the JSON rounds to 0.818)
  // Doctor on the two crash logs.
  ASSERT_EQ(j["doctor_stage"]["n"].get<int>(), 2);
  EXPECT_GE(j["doctor_stage"]["agreement"].get<double>(), 1.0 - 1e-9);  // 2/2 measured
}

TEST(ExtraTrtllm, SecondPassCasesReplayed) {
  auto j = validate_corpus(std::string(HEADROOM_TEST_DATA) + "/extra/trtllm.jsonl");
  auto err = [&](const char* id, double logged) {
    const auto& r = case_row(j, id);
    EXPECT_TRUE(r["covered"].get<bool>()) << id;
    return (static_cast<double>(r["predicted"]["kv_tokens"].get<int64_t>()) - logged) / logged;
  };
  // xtrt-016: "Allocate 335544320 bytes for k/v cache." = max_tokens_in_paged_kv_cache 2,560 exactly.
  EXPECT_EQ(err("xtrt-016", 2560), 0.0);
  // xtrt-015: "Using 60672 tokens in paged KV cache." (TensorRT-LLM 0.8.0, RTX 3090): -0.84%.
  EXPECT_LT(std::abs(err("xtrt-015", 60672)), 0.02);
  // xtrt-007: "... (301472)" with quickstart_multimodal.py's fraction 0.6: +4.88%.
  EXPECT_LT(std::abs(err("xtrt-007", 301472)), 0.06);
  // xtrt-010: "Allocated 166.02 GiB for max tokens in paged KV cache (5073376)." (8 x B300): +5.14%.
  EXPECT_LT(std::abs(err("xtrt-010", 5073376)), 0.06);
}

TEST(ExtraTrtllm, BestReplayStaysWithinTwoPercent) {
  // xtrt-001 (Qwen3-0.6B architecture, H100, 1.2.1, LLM-API defaults): "Allocated 68.69 GiB for
  // max tokens in paged KV cache (643136)." The forecast's 649,792 tokens is +1.03%.
  auto j = validate_corpus(std::string(HEADROOM_TEST_DATA) + "/extra/trtllm.jsonl");
  const auto& r = case_row(j, "xtrt-001");
  ASSERT_TRUE(r["covered"].get<bool>());
  double pred = static_cast<double>(r["predicted"]["kv_tokens"].get<int64_t>());
  EXPECT_GT(pred, 643136.0);
  EXPECT_LT((pred - 643136.0) / 643136.0, 0.02);
  // xtrt-004: weights per rank within 5% of the logged 139.55 - 110.70 = 28.85 GiB.
  const auto& q = case_row(j, "xtrt-004");
  EXPECT_NEAR(q["predicted"]["weights_gib"].get<double>(), 28.85, 0.05 * 28.85);
  EXPECT_EQ(q["observed"]["outcome"], "oom_kv");
}
