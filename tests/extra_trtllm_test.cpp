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
// Third pass, 2026-12-01 (18 cases, 12 covered): xtrt-018 (trtllm-bench README log, Llama-2-7B FP8
//   engine on an H100, 0.12.0.dev, fraction 0.99, max_batch_size 4096) added; xtrt-006 / xtrt-007
//   carry --backend pytorch (both ran the PyTorch backend; before 1.0 the default was the engine).
//   A TensorRT engine's execution context (32 x hidden B per max_num_tokens token) and runtime
//   buffers + decoder (20 B per sequence x vocab entry) are fitted on TensorRT-LLM's own
//   "[MemUsageChange] Allocated ..." lines (src/engines/trtllm/trtllm_estimates.cpp) instead of
//   vLLM's profile-run model, and --quantization FP8 plans an FP8-built engine of the BF16 catalog
//   checkpoint (xtrt-003, xtrt-013, xtrt-018). kv_tokens, forecast vs logged:
//     xtrt-003 -9.26% -> +0.45% (in-sample: the 0.15+ decoder figure is taken from this log);
//     xtrt-013 -7.32% -> -0.81%; xtrt-018 -5.51% (new; its log's pool is 229,376 B per token where
//     Llama-2-7B's FP8 KV is 262,144 B, and its 5.49 GB of runtime buffers + decoder are the
//     estimate's unfavourable end: the two pull opposite ways).
//   kv_tokens n 9 -> 10, median 5.14% -> 3.01%, p90 204.19% -> 133.68% (xtrt-002's DGX Spark and
//   xtrt-017's 0.5.0 engine stay the two large ones). outcome 9/11 -> 10/12. weights, post-weights
//   and doctor unchanged.
// Fourth pass, 2026-12-01: no further TensorRT-LLM PyTorch-backend startup log with the
//   profiling lines was found in the public indexes (exact-string search for the log's own
//   phrases finds xtrt-002 and synthetic test fixtures only; GitHub issues and pages gave the
//   threads already here). xtrt-008/009 carry their GPU (rtx-4070-super, now in the catalog) and
//   stay uncovered for the model. The PyTorch executor's overhead beyond vLLM's terms is fitted on
//   the three single-GPU logs (xtrt-001 0.79 GiB, xtrt-008 0.49 GiB replayed from the model's
//   config, xtrt-007 1.34 GiB): 0.64 GiB per rank, 0.45 .. 1.35 (trtllm_estimates.cpp;
//   tests/trtllm_overhead_test.cpp). kv_tokens: xtrt-001 +1.03% -> +0.19%, xtrt-007 +4.99% ->
//   +2.61%, xtrt-010 +5.14% -> +4.80% (its ~9.5 GiB gap on 8 x B300 stays unexplained, n = 1);
//   median 3.01% -> 1.73% (the middle two of 10 now xtrt-015 0.84% and xtrt-007 2.61%), p90
//   133.68% -> 132.71%. Outcome, weights, doctor unchanged.
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
  // Fourth pass (2026-12-01, later): xtrt-019, a 0.8.0 engine under Triton on an RTX 3090 whose device held
  // ~4 GiB more than the 15.3 GiB engine before the pool was sized (31,616 tokens logged, 60,160
  // forecast: the engine's activation memory from build settings the post does not show), and
  // xtrt-020, gpt-oss-120b in MLPerf's scale-out script failing to create its KV cache with 200 GiB
  // free (spec-decode resources, not a memory budget: an outcome miss).
  // Fifth pass (2026-12-01, helper): seven logs, six of integer-quantized TensorRT engines now
  // planned from their 16-bit checkpoints (--quantization in QuantAlgo spelling, trtllm_estimates.cpp
  // engine_quant): xtrt-023 Llama-2-7B SmoothQuant on an A100 80GB (0.8) 133,120 vs 132,608
  // (+0.39%), xtrt-024 Llama-3-8B INT4-AWQ TP2 on H100 (0.13) 1,108,416 vs 1,101,440 (+0.63%;
  // its hang is not a memory outcome), xtrt-025 QwQ-32B INT4 weight-only on an A100 40GB (1.0.0rc4)
  // starts as logged (20.98 GiB available vs 20.44), xtrt-026 Qwen2.5-7B INT4-AWQ on a 5.67 GiB
  // RTX 3050 (1.2.1): logged "available: 0.03 GiB" then a cudaMalloc OOM, forecast ~0.17 GiB short
  // already for the execution context (oom_warmup vs oom_kv: an outcome miss, the estimated CUDA
  // context and execution context on a small card). Not covered: GLM-4-9B and Qwen2.5-Coder-0.5B
  // (not in the catalog), a DeepSeek-V3 W4AFP8 checkpoint (no id).
  // Fifth catalog pass: Qwen1.5-7B and Qwen2.5-Coder-0.5B-Instruct now have their real configs:
  // xtrt-012 (a Qwen1.5-7B fine-tune's engine, build flags not posted) 32,768 vs 40,384 (-19%) and
  // xtrt-022 (the 0.5B INT8 engine whose 773 MiB execution context is not modelled) +70%.
  // Tenth pass: SmolLM2-135M-Instruct's real config (hash-proven) covers xtrt-008 / -009: 415,904 vs
  // 422,048 (-1.5%) and 115,552 vs 117,216 (-1.4%), fitted on nothing.
  EXPECT_EQ(j["cases"].get<int>(), 27);
  EXPECT_EQ(j["covered"].get<int>(), 22);

  // Pool size: n and median |err| (%) of the forecast's tokens against "Allocated ... (N)".
  ASSERT_EQ(j["kv_tokens"]["n"].get<int>(), 17);
  // 0.84% measured over 13 (xtrt-015; 2.61% over the 11 before the fifth pass, 1.73% over the 10
  // before xtrt-019's +90%; 3.01% before the PyTorch executor overhead term, 5.14% over the 9 cases
  // of the second pass).
  EXPECT_LE(j["kv_tokens"]["median_abs_pct_err"].get<double>(), 1.47);  // 1.46% over 17 (2.61% over 15 before SmolLM2)
  // Weights per rank and free memory after them (GiB figures the logs print).
  ASSERT_EQ(j["weights_gib"]["n"].get<int>(), 2);
  EXPECT_LE(j["weights_gib"]["median_abs_pct_err"].get<double>(), 4.3);  // 4.24% measured
  ASSERT_EQ(j["post_weights_avail"]["n"].get<int>(), 1);
  EXPECT_LE(j["post_weights_avail"]["median_abs_pct_err"].get<double>(), 0.9);  // 0.82% measured
  // Outcome agreement (fits, or the failing stage).
  ASSERT_EQ(j["outcome"]["n"].get<int>(), 21);
  EXPECT_GE(j["outcome"]["agreement"].get<double>(), 0.81 - 1e-9);  // 17/21 measured (the new starts agree)
  // Doctor on the crash logs: 3/3, then xtrt-026's pool allocation and xtrt-027's warm-up (fifth pass).
  ASSERT_EQ(j["doctor_stage"]["n"].get<int>(), 5);
  EXPECT_GE(j["doctor_stage"]["agreement"].get<double>(), 1.0 - 1e-9);  // 5/5 measured
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
  // xtrt-007: "... (301472)" with quickstart_multimodal.py's fraction 0.6: +2.61% (+4.99% before
  // the PyTorch executor overhead term).
  EXPECT_LT(std::abs(err("xtrt-007", 301472)), 0.03);
  // xtrt-010: "Allocated 166.02 GiB for max tokens in paged KV cache (5073376)." (8 x B300): +4.80%.
  EXPECT_LT(std::abs(err("xtrt-010", 5073376)), 0.05);
}

TEST(ExtraTrtllm, BestReplayStaysWithinTwoPercent) {
  // xtrt-001 (Qwen3-0.6B architecture, H100, 1.2.1, LLM-API defaults): "Allocated 68.69 GiB for
  // max tokens in paged KV cache (643136)." The forecast's 644,384 tokens is +0.19% (649,792, +1.03%,
  // before the PyTorch executor overhead term).
  auto j = validate_corpus(std::string(HEADROOM_TEST_DATA) + "/extra/trtllm.jsonl");
  const auto& r = case_row(j, "xtrt-001");
  ASSERT_TRUE(r["covered"].get<bool>());
  double pred = static_cast<double>(r["predicted"]["kv_tokens"].get<int64_t>());
  EXPECT_LT(std::abs(pred - 643136.0) / 643136.0, 0.005);
  // xtrt-004: weights per rank within 5% of the logged 139.55 - 110.70 = 28.85 GiB.
  const auto& q = case_row(j, "xtrt-004");
  EXPECT_NEAR(q["predicted"]["weights_gib"].get<double>(), 28.85, 0.05 * 28.85);
  EXPECT_EQ(q["observed"]["outcome"], "oom_kv");
}

TEST(ExtraTrtllm, ThirdPassEngineCasesReplayed) {
  auto j = validate_corpus(std::string(HEADROOM_TEST_DATA) + "/extra/trtllm.jsonl");
  auto err = [&](const char* id, double logged) {
    const auto& r = case_row(j, id);
    EXPECT_TRUE(r["covered"].get<bool>()) << id;
    return (static_cast<double>(r["predicted"]["kv_tokens"].get<int64_t>()) - logged) / logged;
  };
  // xtrt-013 (docs memory.md, FP8 Llama-2-7B engine): "Allocated 63.44 GiB ... (259840)": -0.81%
  // (-7.32% with the BF16 checkpoint's weights and vLLM's profile-run terms).
  EXPECT_LT(std::abs(err("xtrt-013", 259840)), 0.02);
  // xtrt-003 (TensorRT-LLM#4275, FP8 Llama-3.1-8B engine, RTX 5090): "... (263008)": +0.45%.
  EXPECT_LT(std::abs(err("xtrt-003", 263008)), 0.02);
  // xtrt-018 (trtllm-bench README, max_batch_size 4096, fraction 0.99): "... (294848)": -5.51%
  // (the log's own 229,376 B per token and its large decoder pull opposite ways).
  EXPECT_LT(std::abs(err("xtrt-018", 294848)), 0.06);
}
