// TensorRT-LLM forecasts replayed against real startup logs (issue 4, item 2), and the
// predicted log lines checked against the real text (issue: "TensorRT-LLM's KV allocation
// lines"). Each case names its source; the error of the forecast is stated where the log
// names a model in data/models, a GPU and the parallelism.
//
// Logs found (corpus `issues`/`pages`/`code`, 2026-11-30) and what each can check:
//  A. TensorRT-LLM 1.2.1, H100 80GB HBM3, Qwen/Qwen3-Reranker-0.6B (Qwen3ForCausalLM, the
//     Qwen3-0.6B architecture: 28 layers, 8 KV heads x 128, bf16), LLM API defaults, TP1:
//     "[MemUsageChange] Allocated 68.69 GiB for max tokens in paged KV cache (643136)."
//     Full replay (headroom forecast vs the logged tokens): 649,792 vs 643,136 = +1.03% tokens,
//     +0.72 GiB (the forecast's profiled peak without the temporary pool is 2.07 GiB where the
//     log implies about 2.87 GiB: 79.19 - 68.69 / 0.9; the estimated terms are 0.8 GiB short). Source: a public benchmark write-up (inference/tensorrtllm README,
//     "What a healthy run looks like").
//  B. TensorRT-LLM 1.1.0rc3, DGX Spark (GB10), openai/gpt-oss-120b, trtllm-serve with
//     max_batch_size 64: the full memory-profiling block (NVIDIA DGX Spark playbook
//     "TensorRT-LLM for GPT-OSS 120B", 2025-12-20). Not replayable end to end: 49.78 GiB of the
//     unified memory was in use outside torch before the profiling run (the OS and other
//     processes share it), which no forecast of the deployment can know; the rules and the
//     log text are checked against it below. Its weights: logged 63.52 GiB inside torch,
//     headroom 60.77 GiB (-2.75 GiB, -4.3%); its device total 119.70 GiB vs the catalog's
//     dgx-spark 121.69 GiB (neither file is this engine's).
//  C. TensorRT-LLM 0.19.0, RTX 5090, Llama-3.1-8B-Instruct FP8 + FP8 KV, TensorRT engine
//     (C++ runtime), fraction 0.9 (NVIDIA/TensorRT-LLM issue #4275, comment 2941155249):
//     "total: 31.84 GiB, available: 17.83 GiB", "primary pool: 8219", "Allocated 16.05 GiB ...
//     (263008)". The engine's activation memory is fixed when it is built (trtllm-build
//     --max_num_tokens 1024 --max_batch_size 2048), so only the KV rules are replayed: 0.9 x
//     17.83 GiB gives 8,217 blocks vs 8,219 logged (-0.02%, inside the rounding of 17.83).
// Over the logs whose KV figure a rule or forecast reproduces: tokens error median 0.02%
// (C 0.02%, B's rule check 0.07%), max 1.03% (A, the only end-to-end forecast).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engines/trtllm/trtllm_rules.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
size_t index_of_prefix(const Forecast& f, const std::string& p) {
  for (size_t i = 0; i < f.log.size(); ++i)
    if (f.log[i].rfind(p, 0) == 0) return i;
  return f.log.size();
}
}  // namespace

// A: the end-to-end replay.
TEST(TrtllmLogs, Qwen3_0_6BOnH100ReplayedWithinTwoPercent) {
  Forecast f = run({"--engine", "trtllm@1.2.1", "--model", "Qwen/Qwen3-0.6B", "--gpu", "h100"});
  EXPECT_EQ(f.verdict, Verdict::Fits);
  const double logged = 643136;  // "Allocated 68.69 GiB for max tokens in paged KV cache (643136)."
  double err = (static_cast<double>(f.kv_tokens) - logged) / logged;
  // Forecast 644,384 tokens: +0.19% (649,792, +1.03%, before the PyTorch executor overhead that
  // this log's 0.79 GiB gap is one of three fits of; ESTIMATED terms).
  EXPECT_GT(err, 0.0);
  EXPECT_LT(err, 0.005);
  // 643,136 x 114,688 B = 68.69 GiB: the bytes per token (2 x 8 x 128 x 2 B x 28 layers) agree.
  EXPECT_EQ(gib2(643136LL * 114688), "68.69");
  EXPECT_TRUE(has_prefix(f, "Peak memory during memory usage profiling (torch + non-torch): "));
  EXPECT_NE(std::find_if(f.log.begin(), f.log.end(), [](const std::string& l) { return l.find("kv size per token is 114688.") != std::string::npos; }),
            f.log.end());
}

// B: the rules against the logged figures.
TEST(TrtllmLogs, GptOss120bSparkRulesReproduceTheLoggedPool) {
  // "Peak memory ...: 113.65 GiB, available KV cache memory when calculating max tokens: 5.95 GiB,
  // fraction is set 0.8999999761581421, kv size is 73728. device total memory 119.70 GiB, , tmp
  // kv_mem 0.56 GiB": available = (119.70 - 113.65 + 0.56) x 0.9 = 5.95 GiB, the temporary pool
  // added back (the peak includes it).
  const double G = static_cast<double>(GiB);
  int64_t budget = trtllm::kv_budget(static_cast<int64_t>(119.70 * G), static_cast<int64_t>((113.65 - 0.56) * G), 0.8999999761581421, std::nullopt, 73728, 0);
  EXPECT_EQ(gib2(budget), "5.95");
  // 36 layers x 2 x 8 KV heads x 64 x 2 B = 73,728 B/token (every layer full-length in the V1 manager).
  // From the rounded GiB figures: 86,638 tokens -> 2,708 blocks = 86,656 tokens; logged max_tokens
  // 86,711 -> 86,720 (the two-decimal GiB figures move this by +-200 tokens: -0.07%).
  int64_t blocks = trtllm::blocks_for(budget, 73728, 32);
  EXPECT_NEAR(static_cast<double>(blocks * 32), 86720.0, 200.0);
  // The logged max_tokens itself: ceil(86,711 / 32) = 2,710 blocks = 86,720 tokens, and
  // 86,720 x 73,728 B = "Allocated 5.95 GiB".
  EXPECT_EQ(trtllm::blocks_for(86711LL * 73728 + 100, 73728, 32) * 32, 86720);
  EXPECT_EQ(gib2(86720LL * 73728), "5.95");
  // The estimation run's temporary pool: one dummy request of max_num_tokens 8,192 (+1 generated)
  // = ceil(8,193 / 32) = 257 blocks = 8,224 tokens ("... max_tokens are set (to 0.8999999761581421
  // and 8224 ...", "Allocated 0.56 GiB for max tokens in paged KV cache (8224).").
  trtllm::Settings s;
  s.era = trtllm::era_for_version("1.1.0rc3");
  s.max_batch_size = 64;
  s.max_num_tokens = 8192;
  s.max_seq_len = 131072;
  EXPECT_EQ(trtllm::estimation_tokens(s, static_cast<int64_t>(60.0 * G), 73728), 8224);
  EXPECT_EQ(gib2(8224LL * 73728), "0.56");
}

TEST(TrtllmLogs, GptOss120bSparkLinesInTheLoggedText) {
  // The same deployment planned (1.1 rules): the lines whose wording and order the real log shows.
  Forecast f = run({"--engine", "trtllm@1.1.0rc3", "--model", "openai/gpt-oss-120b", "--gpu", "dgx-spark", "--max_batch_size", "64"});
  EXPECT_TRUE(has_line(f, "Both free_gpu_memory_fraction and max_tokens are set (to 0.8999999761581421 and 8224, respectively). The smaller value will be used."));
  EXPECT_TRUE(has_line(f, "Attention window size 131072 exceeds upper bound 8224 for available blocks. Reducing to 8224."));
  EXPECT_TRUE(has_line(f, "Adjusted max_attention_window_vec to [8224]"));
  EXPECT_TRUE(has_line(f, "Adjusted window size 131072 to 8224 in blocks_per_window"));
  EXPECT_TRUE(has_line(f, "Adjusted max_seq_len to 8224"));
  EXPECT_TRUE(has_line(f, "[TensorRT-LLM][INFO] Number of tokens per block: 32."));
  EXPECT_TRUE(has_line(f, "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 0.56 GiB for max tokens in paged KV cache (8224)."));
  EXPECT_TRUE(has_line(f, "max_seq_len=8224, max_num_requests=64, max_num_tokens=8192, max_batch_size=64"));
  // The 2025 peak-line form with the float32 fraction and the temporary pool.
  size_t peak = index_of_prefix(f, "Peak memory during memory usage profiling (torch + non-torch): ");
  ASSERT_LT(peak, f.log.size());
  EXPECT_NE(f.log[peak].find(", fraction is set 0.8999999761581421, kv size is 73728. device total memory "), std::string::npos);
  EXPECT_NE(f.log[peak].find(" GiB, , tmp kv_mem 0.56 GiB"), std::string::npos);
  // Order: temporary pool, profiling lines, estimate, final manager (the PyTorch path prints no
  // "Number of blocks in KV cache primary pool" line; that is the C++ runtime's).
  EXPECT_LT(index_of_prefix(f, "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 0.56 GiB"), index_of_prefix(f, "Memory used after loading model weights (inside torch)"));
  EXPECT_LT(peak, index_of_prefix(f, "Estimated max memory in KV cache : "));
  EXPECT_FALSE(has_prefix(f, "[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool"));
  EXPECT_EQ(f.log.back().rfind("max_seq_len=131072, max_num_requests=64, max_num_tokens=8192, max_batch_size=64", 0), 0u);
}

// C: the C++ runtime's rule.
TEST(TrtllmLogs, Llama31_8BFp8On5090CppRuntimeBlocks) {
  // FP8 KV: 2 x 8 KV heads x 128 x 1 B x 32 layers = 65,536 B/token.
  ModelConfig c;
  c.num_layers = 32;
  c.num_attention_heads = 32;
  c.num_kv_heads = 8;
  c.head_dim = 128;
  c.layers.assign(32, LayerInfo{});
  trtllm::Settings s;
  s.kv_elem_bytes = 1;
  int64_t bpt = trtllm::bytes_per_token(c, s, 0);
  EXPECT_EQ(bpt, 65536);
  // "available: 17.83 GiB" x 0.9 / 65,536 = 262,914 tokens -> 8,217 blocks; logged 8,219 (17.83
  // is rounded: 17.825..17.835 gives 8,214..8,219).
  int64_t blocks = trtllm::blocks_for(static_cast<int64_t>(17.83 * static_cast<double>(GiB) * 0.9), bpt, 32);
  EXPECT_EQ(blocks, 8217);
  EXPECT_NEAR(static_cast<double>(blocks), 8219.0, 5.0);
  // "Allocated 16.05 GiB for max tokens in paged KV cache (263008)": 8,219 x 32 x 65,536 B.
  EXPECT_EQ(gib2(8219LL * 32 * bpt), "16.05");
}

TEST(TrtllmLogs, NoRoomForOneBlockIsTheManagersAssertion) {
  // resource_manager.py get_max_atten_window_upper_bound asserts max_blocks_per_seq > 0.
  Forecast f = run({"--engine", "trtllm@1.2.1", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max_gpu_total_bytes", "1000"});
  EXPECT_EQ(f.verdict, Verdict::Refused);
  ASSERT_TRUE(f.failure.has_value());
  EXPECT_EQ(f.failure->message.rfind("AssertionError: Impossible to fit in any sequence in kvCache", 0), 0u);
}

TEST(TrtllmLogs, CppRuntimeLinesInTheLoggedText) {
  // Case C's deployment under 0.19 rules (TensorRT engine, C++ runtime by default before 1.0):
  // the lines the log shows, in its order; values differ (the catalog has the bf16 checkpoint).
  Forecast f = run({"--engine", "trtllm@0.19.0", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "rtx-5090", "--kv_cache_dtype", "fp8",
                    "--max_batch_size", "2048", "--max_num_tokens", "1024", "--max_seq_len", "2048"});
  ASSERT_EQ(f.verdict, Verdict::Fits);
  size_t usage = index_of_prefix(f, "[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: ");
  ASSERT_LT(usage + 4, f.log.size());
  EXPECT_NE(f.log[usage].find(" GiB, available: "), std::string::npos);
  EXPECT_EQ(f.log[usage + 1].rfind("[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: ", 0), 0u);
  EXPECT_EQ(f.log[usage + 2], "[TensorRT-LLM][INFO] Number of blocks in KV cache secondary pool: 0, onboard blocks to primary memory before reuse: true");
  EXPECT_EQ(f.log[usage + 3], "[TensorRT-LLM][INFO] Number of tokens per block: 32.");
  EXPECT_EQ(f.log[usage + 4].rfind("[TensorRT-LLM][INFO] [MemUsageChange] Allocated ", 0), 0u);
  // The executor of a TensorRT engine prints no Python "max_seq_len=..." summary.
  EXPECT_FALSE(has_prefix(f, "max_seq_len="));
  // 65,536 B/token (FP8 KV) in the allocation line: tokens x 65,536 B.
  const std::string& alloc = f.log[usage + 4];
  auto open = alloc.rfind('(');
  int64_t tokens = std::stoll(alloc.substr(open + 1));
  EXPECT_EQ(tokens, f.kv_tokens);
  EXPECT_NE(alloc.find("Allocated " + gib2(tokens * 65536) + " GiB"), std::string::npos);
}
