// vLLM's KV cache for Gemma 4 (Gemma4ForConditionalGeneration, model_type gemma4 / gemma4_text) by
// era, pinned to the figures real reports print:
//   - vllm_kv.cpp layer_specs / kv_layout: 5 sliding (window 1024, num_key_value_heads x head_dim)
//     : 1 full layer (num_global_key_value_heads x global_head_dim; attention_k_eq_v still stores K
//     and V: vLLM model_executor/models/gemma4.py loads k_proj into both slots of qkv_proj and its
//     Attention keeps a K and a V cache), pages unified by raising the full layers' block size;
//   - the 0.20-era token report (num_blocks // groups x block) against the 0.21 one
//     (int(concurrency x max_model_len)): vllm#43308's "~10x" between 0.20.0 and 0.21.0;
//   - the 0.26 sliding admission bound (window - 1 + max_concurrent_batches x mnbt, PR #47728):
//     vllm#49878.
// The model is the catalog's nvidia/Gemma-4-31B-IT-NVFP4 with --kv-cache-dtype bfloat16: its
// text_config is Gemma-4-31B's (60 layers, 16 x 256 sliding, 4 x 512 global, k_eq_v), the KV
// geometry every Gemma-4-31B checkpoint in these threads shares.
#include <gtest/gtest.h>

#include <cmath>

#include "engines/vllm/vllm_kv.h"
#include "engines/vllm/vllm_rules.h"
#include "engines/vllm/vllm_settings.h"
#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/error.h"
#include "headroom/units.h"

using namespace headroom;
using namespace headroom::vllm;

namespace {

std::vector<std::string> gemma31b(const std::string& version, std::vector<std::string> more = {}, const std::string& gpu = "h100") {
  std::vector<std::string> a{"--engine", "vllm@" + version, "--model", "nvidia/Gemma-4-31B-IT-NVFP4", "--gpu", gpu,
                             "--kv-cache-dtype", "bfloat16", "--max-model-len", "262144"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}
KvSizing sizing(const std::vector<std::string>& argv) { return kv_sizing(parse_deployment(Args::parse(argv))); }
// "GPU KV cache size" for a logged "Available KV cache memory: X GiB", at both ends of the
// interval X +- 0.005 GiB the log rounds from.
std::pair<int64_t, int64_t> tokens_for_gib2(const KvSizing& k, double x) {
  const long double g = static_cast<long double>(GiB);
  int64_t lo = static_cast<int64_t>(std::ceil((x - 0.005L) * g)), hi = static_cast<int64_t>(std::ceil((x + 0.005L) * g)) - 1;
  return {kv_tokens_for_memory(k, lo), kv_tokens_for_memory(k, hi)};
}
constexpr int64_t kPage = 16 * 16 * 256 * 2 * 2;  // sliding layer, block 16: 16 heads x (K + V) 256 x bf16 = 262,144 B

}  // namespace

TEST(VllmGemma4, ThirtyOneBLayoutIsTenLayerGroupsOfQuarterMiBPages) {
  // Sliding layer: 16 KV heads x (256 + 256) x 2 B = 16,384 B/token -> 262,144 B per block of 16.
  // Full layer (k_eq_v): 4 heads x (512 + 512) x 2 B = 8,192 B/token -> 131,072 B at block 16, so
  // unify_kv_cache_spec_page_size doubles its block to 32. 50 sliding + 10 full layers: group size
  // 10 (min layer count), 5 sliding groups + 1 full group sharing 10 tensors -- vllm#49878's
  // "unified KV page size is 256 KiB ... five sliding-window groups plus one full-attention group".
  KvSizing k = sizing(gemma31b("0.26.0", {"--max-num-batched-tokens", "32768"}));
  const KvLayout& l = k.stages.front();
  EXPECT_EQ(l.page_bytes, kPage);
  EXPECT_EQ(l.tensors, 10);
  EXPECT_EQ(l.num_groups, 6);
  EXPECT_TRUE(l.hybrid);
  int sliding = 0, full = 0;
  for (const auto& g : l.groups) {
    if (g.kind == SpecKind::Sliding) {
      ++sliding;
      EXPECT_EQ(g.block_size, 16);
      EXPECT_EQ(g.window, 1024);
    } else {
      ++full;
      EXPECT_EQ(g.kind, SpecKind::Full);
      EXPECT_EQ(g.block_size, 32);
    }
  }
  EXPECT_EQ(sliding, 5);
  EXPECT_EQ(full, 1);
}

TEST(VllmGemma4, V026InFlightBoundMatchesVllm49878) {
  // vllm#49878 ("Dramatic KV cache size increase (~40%) for Gemma4 from v0.25.1 to v0.26"; corpus
  // vllm-067): --max-num-batched-tokens 32768, 49.0 GiB reserved by --kv-cache-memory-bytes. The
  // in-thread analysis (frank-2077, 2026-07-26): full group 8192 blocks; each sliding group
  // ceil((1023 + 32768) / 16) + 1 = 2113 blocks on 0.25.1 -> (8192 + 5 x 2113) x 256 KiB x 10 =
  // 45.79 GiB; after PR #47728 async scheduling holds two batches in flight: ceil((1023 + 65536) /
  // 16) + 1 = 4161 -> (8192 + 5 x 4161) x 256 KiB x 10 = 70.79 GiB, "the estimated maximum model
  // length is 58,368". 8192 full blocks of 32 tokens = max_model_len 262,144 (the config default).
  const int64_t L = 262144, N = 32768, avail = 49 * GiB;
  KvSizing old_k = sizing(gemma31b("0.25.1", {"--max-num-batched-tokens", "32768"}));
  KvSizing new_k = sizing(gemma31b("0.26.0", {"--max-num-batched-tokens", "32768"}));
  EXPECT_EQ(old_k.stages.front().in_flight_batches, 1);
  EXPECT_EQ(new_k.stages.front().in_flight_batches, 2);
  const int64_t need_old = needed_bytes(old_k.stages.front(), L, N), need_new = needed_bytes(new_k.stages.front(), L, N);
  EXPECT_EQ(need_old, (8192 + 5 * 2113) * 10 * kPage);
  EXPECT_EQ(need_new, (8192 + 5 * 4161) * 10 * kPage);
  EXPECT_NEAR(static_cast<double>(need_old) / GiB, 45.79, 0.005);
  EXPECT_NEAR(static_cast<double>(need_new) / GiB, 70.79, 0.005);
  EXPECT_LE(need_old, avail);  // 0.25.1 started
  EXPECT_GT(need_new, avail);  // 0.26.0: "EngineCore failed to start."
  EXPECT_EQ(estimate_max_model_len(new_k.stages.front(), avail, L, N), 58368);
  // One request at L = 58,368 needs cdiv(58368, 32) + 5 x (58368 / 16 + 1) = 1824 + 18,245 =
  // 20,069 blocks of 2.5 MiB (<= 49 GiB = 20,070.4 blocks); one token more needs 20,075.
  EXPECT_EQ(needed_bytes(new_k.stages.front(), 58368, N), int64_t{20069} * 10 * kPage);
  EXPECT_GT(needed_bytes(new_k.stages.front(), 58369, N), avail);
}

TEST(VllmGemma4, MaxConcurrentBatchesFollowsAsyncSchedulingAndPp) {
  // vllm/config/vllm.py max_concurrent_batches: async scheduling (default on) -> 2 on one stage;
  // off -> pp size; with PP on the V1 runner -> pp. check_and_set_default_async_scheduling turns it
  // off for speculative methods outside EAGLE / MTP / ngram_gpu / DSpark (ngram here) and refuses
  // an explicit --async-scheduling with them.
  const std::vector<std::string> n{"--max-num-batched-tokens", "32768"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), n.begin(), n.end());
    return sizing(gemma31b("0.26.0", more)).stages.front().in_flight_batches;
  };
  EXPECT_EQ(with({"--no-async-scheduling"}), 1);
  EXPECT_EQ(with({"--speculative-config", R"({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4})"}), 1);
  EXPECT_EQ(with({"--speculative-config", R"({"method": "eagle3", "model": "some/eagle3-head", "num_speculative_tokens": 2})"}), 2);
  EXPECT_EQ(with({"--pp", "2", "--gpus", "2"}), 2);
  EXPECT_EQ(with({"--pp", "4", "--gpus", "4"}), 4);
  EXPECT_THROW(with({"--async-scheduling", "--speculative-config", R"({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4})"}),
               InputError);
  // Without async scheduling 0.26.0 needs what 0.25.1 did (45.79 GiB above).
  KvSizing off = sizing(gemma31b("0.26.0", {"--no-async-scheduling", "--max-num-batched-tokens", "32768"}));
  EXPECT_EQ(needed_bytes(off.stages.front(), 262144, 32768), (8192 + 5 * 2113) * 10 * kPage);
}

TEST(VllmGemma4, V020TokenReportMatchesHfMem61Log) {
  // alvarobartt/hf-mem PR #61 (2026-05-06), google/gemma-4-31B-it in bf16 on vLLM: "Available KV
  // cache memory: 24.54 GiB" -> "GPU KV cache size: 26,800 tokens". Hybrid layout above: blocks =
  // floor(floor(X / 262,144) / 10) = 10,049..10,053 over X in [24.535, 24.545) GiB; the 0.20 report
  // num_blocks // 6 groups x block 16 = 1,674..1,675 x 16 = 26,784..26,800. Charging every layer
  // as full attention (50 x 16 KiB + 10 x 8 KiB = 880 KiB per token) would give about 29,230 tokens, so
  // 0.20 already grouped Gemma 4 as a sliding/full hybrid: the "treating all layers as global" of
  // vllm#43308 was the token report, not the pool (vllm-metal #505 / tt-xla #5727 were plugins
  // that did charge every layer in full).
  KvSizing k = sizing(gemma31b("0.20.0"));
  auto [lo, hi] = tokens_for_gib2(k, 24.54);
  EXPECT_EQ(lo, 26784);
  EXPECT_EQ(hi, 26800);  // the logged figure lies in the interval
  // The thread's own model id: google/gemma-4-31B-it (derived from NVIDIA's NVFP4 copy, see
  // model_catalog_lookup_test.cpp) with --kv-cache-dtype left at auto, i.e. its bf16 dtype.
  KvSizing it = sizing({"--engine", "vllm@0.20.0", "--model", "google/gemma-4-31B-it", "--gpu", "h100", "--max-model-len", "262144"});
  EXPECT_EQ(it.stages.front().page_bytes, kPage);
  EXPECT_EQ(tokens_for_gib2(it, 24.54), std::make_pair(int64_t{26784}, int64_t{26800}));
}

TEST(VllmGemma4, ReportFormulaChangeIsVllm43308TenfoldJump) {
  // vllm#43308 (cyankiwi/gemma-4-31B-it-AWQ-4bit, A100 80GB, --gpu-memory-utilization 0.9): "~55k"
  // tokens on 0.20.0, "~525k" on 0.21.0 with "~50 GB" of KV memory either way (rounded figures
  // only). Same pool, two reports: 50 GiB = 20,480 blocks of 2.5 MiB; 0.20: 20,480 // 6 x 16 =
  // 54,608 ("~55k"); 0.21 (A100: max_num_batched_tokens 2048): per request cdiv(262144, 32) +
  // 5 x (cdiv(1023 + 2048, 16) + 1) = 8192 + 965 = 9,157 blocks -> int(20,480 / 9,157 x 262,144) =
  // 586,295. The thread's 525k / 55k = 9.5x sits below 10.7x because 0.21 also subtracts the
  // CUDA-graph estimate from the same 0.9 budget (PR #38284), i.e. less KV memory than on 0.20.
  const int64_t avail = 50 * GiB;
  KvSizing v20 = sizing(gemma31b("0.20.0", {}, "a100-80gb"));
  KvSizing v21 = sizing(gemma31b("0.21.0", {}, "a100-80gb"));
  EXPECT_EQ(v21.max_num_batched_tokens, 2048);
  EXPECT_EQ(kv_tokens_for_memory(v20, avail), 54608);
  EXPECT_EQ(kv_tokens_for_memory(v21, avail), 586295);
}

TEST(VllmGemma4, PerTokenHeadCachePadsGlobalPages) {
  // gemma4.py Gemma4Attention: with int8_per_token_head / fp8_per_token_head a sliding head stores
  // 2 x 256 + 8 = 520 B per token (fp32 scale for K and V), a 512-wide global head 2 x 512 + 8 =
  // 1032, padded to 1040 "(520*2)" (kv_cache_page_size_padded = block x heads x 1040). Sliding page
  // 16 x 16 heads x 520 = 133,120 B; global 16 x 4 x 1040 = 66,560, so its block doubles to 32.
  // Unpadded (4 x 1032 x 16 = 66,048) the pages would not divide and vLLM could not unify them.
  KvSizing k = sizing({"--engine", "vllm@0.26.0", "--model", "nvidia/Gemma-4-31B-IT-NVFP4", "--gpu", "h100", "--kv-cache-dtype",
                       "fp8_per_token_head", "--max-model-len", "262144"});
  const KvLayout& l = k.stages.front();
  EXPECT_EQ(l.page_bytes, 16 * 16 * 520);
  EXPECT_EQ(l.num_groups, 6);
  for (const auto& g : l.groups) EXPECT_EQ(g.block_size, g.kind == SpecKind::Full ? 32 : 16);
}

TEST(VllmGemma4, TwoL4Tp2ReportMatchesGemmaForgeLog) {
  // gemma-forge journal (kenrollins.github.io, 'NVFP4 31B on L4 has minimal KV cache headroom';
  // extra corpus xvllm-050): nvidia/Gemma-4-31B-IT-NVFP4, tensor_parallel_size=2 on two L4,
  // max_model_len=4096, FP8 KV: "vLLM allocates 10,432 tokens of KV cache total" and "At
  // max_model_len=4096, vLLM can handle 3.58x concurrent requests" (build of 2026-04-09: 0.19 rules).
  // Per rank: sliding 8 heads x (256 + 256) x 1 B = 4,096 B/token -> page 65,536 at block 16; full
  // 2 heads x (512 + 512) x 1 B = 2,048 B/token -> block 32. Both figures come from one num_blocks:
  // the pre-0.21 report num_blocks // 6 x 16 = 10,432 holds for num_blocks 3,912..3,917, and the
  // concurrency num_blocks / (cdiv(4096, 32) + 5 x (cdiv(1023 + 2048, 16) + 1)) = num_blocks / 1,093
  // gives 3.579..3.584 ("3.58x") on the same range, with max_num_batched_tokens 2048 (the API
  // server's default on a card under 70 GiB). K-only global layers (block 64: 64 + 965 = 1,029
  // blocks per request) would print 3.80x; the 0.21 report would print int(3.58 x 4096) = 14,663.
  KvSizing k = sizing({"--engine", "vllm@main@2026-04-09", "--model", "nvidia/Gemma-4-31B-IT-NVFP4", "--gpu", "l4", "--tp", "2",
                       "--gpus", "2", "--max-model-len", "4096"});
  const KvLayout& l = k.stages.front();
  EXPECT_FALSE(k.era.tokens_from_concurrency);
  EXPECT_EQ(k.max_num_batched_tokens, 2048);
  EXPECT_EQ(l.page_bytes, 65536);
  EXPECT_EQ(l.tensors, 10);
  EXPECT_EQ(l.num_groups, 6);
  for (int64_t blocks : {3912, 3917}) {
    EXPECT_EQ(kv_tokens_for_memory(k, blocks * l.bytes_per_block_all()), 10432) << blocks;
    EXPECT_NEAR(max_concurrency(l, blocks, 4096, 2048), 3.58, 0.005) << blocks;
  }
  EXPECT_EQ(kv_tokens_for_memory(k, 3911 * l.bytes_per_block_all()), 10416);
  EXPECT_EQ(kv_tokens_for_memory(k, 3918 * l.bytes_per_block_all()), 10448);
}

TEST(VllmGemma4, TwentySixBA4BLayoutIsFiveTensorsOfOneEighthMiBPages) {
  // google/gemma-4-26B-A4B (30 layers: 25 sliding with 8 KV heads x 256, 5 full with
  // num_global_key_value_heads 2 x 512, attention_k_eq_v), bf16 KV: sliding 8 x (256 + 256) x 2 B =
  // 8,192 B/token -> 131,072 B at block 16; full 2 x (512 + 512) x 2 B = 4,096 B/token -> block 32.
  // Group size 5 (the full layers' count): 5 sliding groups + 1 full group over 5 tensors. The
  // myoceane.fr A100 run (corpus vllm-033; the same host's gpt-oss run prints 0.19.0; max_model_len
  // 131072) logged "Available KV cache memory: 21.5 GiB": 21.5 GiB / (5 x 131,072 B) = 35,225.6 ->
  // 35,225 blocks -> 0.19's report 35,225 // 6 x 16 = 93,920 tokens (the post quotes no token line).
  KvSizing k = sizing({"--engine", "vllm@0.19.0", "--model", "google/gemma-4-26B-A4B", "--gpu", "a100-80gb", "--max-model-len", "131072"});
  const KvLayout& l = k.stages.front();
  EXPECT_EQ(l.page_bytes, 131072);
  EXPECT_EQ(l.tensors, 5);
  EXPECT_EQ(l.num_groups, 6);
  for (const auto& g : l.groups) EXPECT_EQ(g.block_size, g.kind == SpecKind::Full ? 32 : 16);
  EXPECT_EQ(num_blocks(l, static_cast<int64_t>(21.5 * GiB)), 35225);
  EXPECT_EQ(kv_tokens_for_memory(k, static_cast<int64_t>(21.5 * GiB)), 93920);
}
