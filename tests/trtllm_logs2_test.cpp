// TensorRT-LLM rules checked against the real logs added to tests/data/extra/trtllm.jsonl in the
// second pass (xtrt-010..017): the tokens_per_block default of each release, the pre-0.9
// TensorRT-engine runtime that sized the KV pool before the execution context took memory, the
// estimation pool of 1.2.0rc2 (no max_seq_len floor yet) and the C++ manager's per-window line.
// Each test names its source; the figures are the logs' own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "engines/trtllm/trtllm_rules.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
const double G = static_cast<double>(GiB);
int64_t gib(double x) { return static_cast<int64_t>(x * G); }
int64_t tokens_in(const std::string& line) {  // "... (N)." -> N
  auto open = line.rfind('(');
  return open == std::string::npos ? -1 : std::stoll(line.substr(open + 1));
}
}  // namespace

TEST(TrtllmLogs2, DatedBuildsTakeTheReleaseLineOfTheirDate) {
  // Dated builds without a number take the release line of their date (kDatedReleases):
  // xtrt-004's 2025-07-08 issue ran 1.0.0rc1/rc3; "v1.2.0rc2 release" 2025-11-07; 1.3.0rc7 in 2026-03.
  EXPECT_EQ(trtllm::era_for_version("unknown@2025-07-08").version, 10000);
  EXPECT_EQ(trtllm::era_for_version("main@2025-11-07").version, 10200);
  EXPECT_EQ(trtllm::era_for_version("unknown@2026-03").version, 10300);
  EXPECT_EQ(trtllm::era_for_version("unknown@2024-05-20").default_tokens_per_block, 64);
  EXPECT_TRUE(trtllm::era_for_version("ngc@2025-09-01").pytorch_default);
  EXPECT_FALSE(trtllm::era_for_version("unknown@2025-03").pytorch_default);
  EXPECT_EQ(trtllm::era_for_version("unknown").version, 10300);
}

TEST(TrtllmLogs2, TokensPerBlockDefaultFollowsTheRelease) {
  // 0.8.0 trtllm-build log: "Set tokens_per_block to 128" (xtrt-015's README).
  EXPECT_EQ(trtllm::era_for_version("0.8.0").default_tokens_per_block, 128);
  // 0.12 / 0.13 runtime logs: "Number of tokens per block: 64."
  EXPECT_EQ(trtllm::era_for_version("0.13.0").default_tokens_per_block, 64);
  EXPECT_EQ(trtllm::era_for_version("0.18.2").default_tokens_per_block, 64);
  // 0.19.0 engine (TensorRT-LLM#4275) and 0.20.0 PyTorch (#6294) logs: 32.
  EXPECT_EQ(trtllm::era_for_version("0.19.0").default_tokens_per_block, 32);
  EXPECT_EQ(trtllm::era_for_version("1.2.1").default_tokens_per_block, 32);
  // Settings take it when no --tokens_per_block is given, and a given one wins.
  Forecast old = run({"--engine", "trtllm@0.13.0", "--model", "Qwen/Qwen3-8B", "--gpu", "a100-80gb", "--backend", "tensorrt", "--max_seq_len", "4096"});
  EXPECT_TRUE(std::find(old.settings.begin(), old.settings.end(), std::pair<std::string, std::string>{"--tokens_per_block", "64"}) != old.settings.end());
  EXPECT_EQ(old.kv_tokens % 64, 0);
  Forecast given = run({"--engine", "trtllm@0.13.0", "--model", "Qwen/Qwen3-8B", "--gpu", "a100-80gb", "--backend", "tensorrt", "--max_seq_len", "4096",
                        "--tokens_per_block", "16"});
  EXPECT_TRUE(std::find(given.settings.begin(), given.settings.end(), std::pair<std::string, std::string>{"--tokens_per_block", "16"}) != given.settings.end());
}

TEST(TrtllmLogs2, CppRuntimeBlocksFromTheLoggedAvailableMemory) {
  // TensorRT-LLM#2268 (0.13.0.dev, Qwen1.5-7B: 32 layers x 32 KV heads x 128 x 2 x 2 B = 524,288
  // B/token): "total: 39.39 GiB, available: 21.89 GiB", "Number of blocks in KV cache primary
  // pool: 631" - ceil(floor(0.9 x 21.89 GiB / 524,288) / 64) = 631; 32-token blocks would be 1,261.
  EXPECT_EQ(trtllm::blocks_for(static_cast<int64_t>(gib(21.89) * 0.9), 524288, 64), 631);
  EXPECT_EQ(trtllm::blocks_for(static_cast<int64_t>(gib(21.89) * 0.9), 524288, 32), 1261);
  // docs/source/reference/memory.md (Llama-2-7B FP8 weights + FP8 KV, 262,144 B/token): "available:
  // 70.48 GiB", "primary pool: 4060", "Allocated 63.44 GiB ... (259840)".
  // (259,840 tokens x 262,144 B = 63.44 GiB, the logged allocation: the per-token figure is right.)
  EXPECT_EQ(trtllm::blocks_for(static_cast<int64_t>(gib(70.48) * 0.9), 262144, 64), 4060);
  // Multimodal docs, LLaVA-1.5-7B TP2 (16 KV heads per rank, FP16: 262,144 B/token): "available:
  // 85.57 GiB" -> 9,858 blocks of 32 from the rounded figure, 9,859 logged (315,488 tokens): inside
  // the +-0.005 GiB rounding of 85.57 (+-18 tokens).
  int64_t b = trtllm::blocks_for(static_cast<int64_t>(gib(85.57) * 0.9), 262144, 32);
  EXPECT_EQ(b, 9858);
  // (315,488 tokens x 262,144 B = 77.02 GiB, the logged allocation.)
  EXPECT_EQ(trtllm::blocks_for(static_cast<int64_t>(gib(85.575) * 0.9), 262144, 32) * 32, 315488);
}

TEST(TrtllmLogs2, Llama3_8BOnRtx3090WithTheOldRuntime) {
  // xtrt-015 (llama3_inference README, TensorRT-LLM 0.8.0, GeForce RTX 3090): the BF16 engine
  // (15,316 MiB) and "Allocate 7952400384 bytes for k/v cache." / "Using 60672 tokens in paged KV
  // cache." = 474 blocks x 128 x 131,072 B. The execution context took nothing first ("GPU +0").
  Forecast f = run({"--engine", "trtllm@0.8.0", "--model", "meta-llama/Meta-Llama-3-8B-Instruct", "--gpu", "rtx-3090", "--backend", "tensorrt",
                    "--max_batch_size", "64", "--max_num_tokens", "12288", "--max_seq_len", "2048"});
  ASSERT_EQ(f.verdict, Verdict::Fits);
  EXPECT_EQ(f.kv_tokens % 128, 0);
  const double logged = 60672;
  double err = (static_cast<double>(f.kv_tokens) - logged) / logged;
  // 60,160 tokens (470 blocks): -0.84%, the CUDA context estimate (0.45 GiB) ~0.07 GiB above the log's.
  EXPECT_LT(std::abs(err), 0.02);
  const std::string bytes_line = "[TensorRT-LLM][INFO] Allocate " + std::to_string(f.kv_tokens * 131072) + " bytes for k/v cache. ";
  EXPECT_TRUE(has_line(f, bytes_line));
  EXPECT_TRUE(has_line(f, "[TensorRT-LLM][INFO] Using " + std::to_string(f.kv_tokens) + " tokens in paged KV cache."));
  EXPECT_FALSE(has_prefix(f, "[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache"));
  // Without the pre-0.9 rule (0.9 sizes after the execution context and buffers) the pool shrinks.
  Forecast later = run({"--engine", "trtllm@0.9.0", "--model", "meta-llama/Meta-Llama-3-8B-Instruct", "--gpu", "rtx-3090", "--backend", "tensorrt",
                        "--max_batch_size", "64", "--max_num_tokens", "12288", "--max_seq_len", "2048", "--tokens_per_block", "128"});
  EXPECT_LT(later.kv_tokens, f.kv_tokens);
}

TEST(TrtllmLogs2, OldRuntimeMaxTokensCapAndRefusal) {
  // xtrt-016 (same README, Triton 24.03 on the RTX 3090): max_tokens_in_paged_kv_cache 2560 wins
  // over the fraction: "Allocate 335544320 bytes for k/v cache." = 2,560 x 131,072 B (20 blocks).
  Forecast f = run({"--engine", "trtllm@0.8.0", "--model", "meta-llama/Meta-Llama-3-8B-Instruct", "--gpu", "rtx-3090", "--backend", "tensorrt",
                    "--max_batch_size", "32", "--max_num_tokens", "12288", "--max_seq_len", "2048", "--max_tokens", "2560",
                    "--kv_cache_free_gpu_memory_fraction", "0.5"});
  EXPECT_EQ(f.kv_tokens, 2560);
  EXPECT_TRUE(has_line(f, "[TensorRT-LLM][INFO] Allocate 335544320 bytes for k/v cache. "));
  // A cap below one max_seq_len sequence is refused by that runtime (TensorRT-LLM#542,
  // tensorrtllm_backend#168), not shrunk as 1.x does.
  Forecast r = run({"--engine", "trtllm@0.8.0", "--model", "meta-llama/Meta-Llama-3-8B-Instruct", "--gpu", "rtx-3090", "--backend", "tensorrt",
                    "--max_seq_len", "4096", "--max_tokens", "2560"});
  EXPECT_EQ(r.verdict, Verdict::Refused);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->message.rfind("[TensorRT-LLM][ERROR] maxTokensInPagedKvCache must be large enough to process at least 1 sequence", 0), 0u);
  Forecast shrink = run({"--engine", "trtllm@1.2.1", "--model", "meta-llama/Meta-Llama-3-8B-Instruct", "--gpu", "rtx-3090", "--max_seq_len", "4096",
                         "--max_tokens", "2560"});
  EXPECT_NE(shrink.verdict, Verdict::Refused);
  EXPECT_EQ(shrink.context_len, 2560);
}

TEST(TrtllmLogs2, EstimationPoolOf1_2_0rc2HasNoSequenceFloor) {
  // xtrt-011 (TensorRT-LLM 1.2.0rc2, nvidia/Qwen3-8B-FP8, FP8 KV 73,728 B/token, max_seq_len 9193):
  // "Max KV cache blocks per sequence: 288 [window size=8224], tokens per block=32, primary
  // blocks=257, secondary blocks=0, max sequence length=9193" then "Allocated 0.56 GiB for max
  // tokens in paged KV cache (8224)." - the one 8,192-token dummy request, no floor.
  trtllm::Settings s;
  s.era = trtllm::era_for_version("1.2.0rc2");
  s.max_batch_size = 2048;
  s.max_num_tokens = 8192;
  s.max_seq_len = 9193;
  EXPECT_EQ(trtllm::estimation_tokens(s, gib(20.0), 73728), 8224);
  // The 2026 floor (GUESS: from 1.3): one max_seq_len sequence + (graph batch - 1), >= max_batch_size.
  s.era = trtllm::era_for_version("1.3.0");
  s.cuda_graphs = false;
  EXPECT_EQ(trtllm::estimation_tokens(s, gib(20.0), 73728), 2048 * 32);  // max_batch_size blocks
  s.max_seq_len = 262144;
  EXPECT_EQ(trtllm::estimation_tokens(s, gib(200.0), 35136), 8192 * 32);  // ceil(262,145 / 32) - 1
  // The lines as the log prints them (the catalog's Qwen3-8B with an FP8 KV cache on a 32 GB card).
  Forecast f = run({"--engine", "trtllm@1.2.0rc2", "--model", "Qwen/Qwen3-8B", "--gpu", "rtx-5090", "--kv_cache_dtype", "fp8", "--max_seq_len", "9193"});
  ASSERT_EQ(f.verdict, Verdict::Fits);
  EXPECT_TRUE(has_line(f, "[TensorRT-LLM][INFO] Max KV cache blocks per sequence: 288 [window size=8224], tokens per block=32, primary blocks=257, "
                          "secondary blocks=0, max sequence length=9193"));
  EXPECT_TRUE(has_line(f, "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 0.56 GiB for max tokens in paged KV cache (8224)."));
  // The final pool's line: 288 blocks per sequence, window = max_seq_len when the pool holds it.
  const std::string final_prefix = "[TensorRT-LLM][INFO] Max KV cache blocks per sequence: 288 [window size=9193], tokens per block=32, primary blocks=";
  ASSERT_TRUE(has_prefix(f, final_prefix));
  for (const auto& l : f.log)
    if (l.rfind(final_prefix, 0) == 0) EXPECT_EQ(l.substr(l.size() - std::string(", secondary blocks=0, max sequence length=9193").size()), ", secondary blocks=0, max sequence length=9193");
}

TEST(TrtllmLogs2, KimiK25OnEightB300) {
  // xtrt-010 (TensorRT-LLM 1.3.0rc7 auto test report, 8 x B300, TP8, quickstart_advanced.py):
  // "Max KV cache blocks per sequence: 8192 [window size=262144], tokens per block=32, primary
  // blocks=158543, secondary blocks=0, max sequence length=262144" and "Allocated 166.02 GiB for
  // max tokens in paged KV cache (5073376)." (MLA + FP8 KV: 61 x 576 x 1 B = 35,136 B/token).
  Forecast f = run({"--engine", "trtllm@1.3.0rc7", "--model", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "b300", "--tp_size", "8", "--max_batch_size", "2048",
                    "--max_num_tokens", "8192", "--disable_cuda_graph"});
  ASSERT_EQ(f.verdict, Verdict::Fits);
  const std::string prefix = "[TensorRT-LLM][INFO] Max KV cache blocks per sequence: 8192 [window size=262144], tokens per block=32, primary blocks=";
  ASSERT_TRUE(has_prefix(f, prefix));
  int64_t alloc = -1;
  std::string alloc_line;
  for (const auto& l : f.log)
    if (l.rfind("[TensorRT-LLM][INFO] [MemUsageChange] Allocated ", 0) == 0) {
      alloc = tokens_in(l);  // the last one: the final pool
      alloc_line = l;
    }
  EXPECT_EQ(alloc, f.kv_tokens);
  // The pool's bytes are the forecast's tokens x 35,136 B (the log: 5,073,376 tokens, 166.02 GiB).
  EXPECT_NE(alloc_line.find("Allocated " + gib2(f.kv_tokens * 35136) + " GiB"), std::string::npos) << alloc_line;
  const double logged = 5073376;
  double err = (static_cast<double>(f.kv_tokens) - logged) / logged;
  // +4.80% (5,316,672 tokens; +5.14% before the 0.64 GiB PyTorch executor overhead): the profiled
  // peak is still ~8.8 GiB above the forecast's (ESTIMATED activation / MoE workspace terms; the
  // report prints no profiling lines to say which).
  EXPECT_GT(err, 0.0);
  EXPECT_LT(err, 0.05);
}
