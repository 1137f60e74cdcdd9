// DeepSeek-V4's KV layout in vLLM 0.20-0.23 (engines/vllm/vllm_kv_dsv4_legacy.cpp), pinned by
// hand-computed blocks and the one real log of that era: vllm#44376 (v0.22, DeepSeek-V4-Flash on
// 2 x GH200, extra case xvllm-011), whose capacity check says "6.66 GiB KV cache is needed ...
// available KV cache memory (5.44 GiB) ... the estimated maximum model length is 13528".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engines/vllm/vllm_kv.h"
#include "engines/vllm/vllm_kv_dsv4_legacy.h"
#include "engines/vllm/vllm_rules.h"
#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/units.h"

using namespace headroom;
using namespace headroom::vllm;

namespace {
// xvllm-011 as validate replays it: LLM(model=DeepSeek-V4-Flash, tensor_parallel_size=2,
// enable_expert_parallel=True, max_model_len=30000, enable_prefix_caching=True,
// gpu_memory_utilization=0.95, kv_cache_dtype="fp8", block_size=256) on GH200s; the offline LLM
// class's max_num_batched_tokens default on a >= 70 GiB non-A100 GPU is 16384
// (vllm/engine/arg_utils.py get_batch_defaults, UsageContext.LLM_CLASS).
std::vector<std::string> xvllm011(const std::string& version) {
  return {"--engine", "vllm@" + version, "--model", "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "gh200", "--tp", "2",
          "--max-model-len", "30000", "--enable-prefix-caching", "--gpu-memory-utilization", "0.95", "--kv-cache-dtype", "fp8",
          "--block-size", "256", "--enable-expert-parallel", "--max-num-batched-tokens", "16384"};
}
KvLayout layout(const std::string& version) { return kv_sizing(parse_deployment(Args::parse(xvllm011(version)))).stages.front(); }
}  // namespace

TEST(VllmDsv4Legacy, FlashBlockByEra) {
  // Flash pages at block 256 (vllm_kv_test FlashPagesAndPackedBlockByHand): the full-MLA group
  // holds 21 x 37,440 (CSA latent) + 21 x 8,640 (indexer keys) + 20 x 1,728 (HCA latent); the
  // sliding groups 22 + 21 SWA caches, 21 + 21 C4 states, 20 C128 states, all padded to MLA pages.
  // 0.20-0.22 (_get_kv_cache_config_deepseek_v4 before PR #44454): one layer tuple
  // 37,440 + 8,640 + 1,728 = 47,808 B per slot, num_layer_tuples = the longest bucket = 22 slots
  // -> 1,051,776 B per block.
  KvLayout l22 = layout("0.22.0");
  EXPECT_EQ(l22.block_size, 256);
  EXPECT_EQ(l22.num_groups, 5);
  EXPECT_EQ(l22.page_bytes, 47808);
  EXPECT_EQ(l22.tensors, 22);
  EXPECT_EQ(l22.bytes_per_block_all(), 1051776);
  EXPECT_EQ(layout("0.20.0").bytes_per_block_all(), 1051776);
  // 5.44 GiB -> 5,841,155,522 // 1,051,776 = 5,553 blocks.
  EXPECT_EQ(num_blocks(l22, 5841155522LL), 5553);
  // 0.23 (PR #44454): each page size keeps its own slot count, 22 x 37,440 + 21 x 8,640 +
  // 20 x 1,728 = 1,039,680 B -- the block of the 0.24+ packed layout.
  KvLayout l23 = layout("0.23.0");
  EXPECT_EQ(l23.bytes_per_block_all(), 1039680);
  EXPECT_EQ(l23.bytes_per_block_all(), layout("0.26.0").bytes_per_block_all());
  // PR #44454's own measurement (DeepSeek-V4-Flash, 4 x B200, fp8): "KV cache: 333,437 tokens
  // (+1.16% vs main's 329,601)". Same memory, blocks in the ratio of the two block costs.
  const int64_t avail = 100LL * GiB;
  const double ratio = static_cast<double>(num_blocks(l23, avail)) / static_cast<double>(num_blocks(l22, avail));
  EXPECT_NEAR(ratio, 333437.0 / 329601.0, 2e-4);
}

TEST(VllmDsv4Legacy, ProBlockAsPr44577Describes) {
  // DeepSeek-V4-Pro (61 layers: 30 CSA ratio 4, 31 HCA ratio 128, one sliding-only): MLA page
  // counts 30 x 37,440 / 30 x 8,640 / 31 x 1,728 -> 31 layer tuples; SWA 61 -> groups of 31 + 30,
  // C4 states 30 + 30, C128 states 31. Before PR #44454: 31 slots x 47,808 B = 1,482,048 B per
  // block, allocated as 31 x 3 tensors of which one (the 31st slot of the 8,640 B size: 30 indexer
  // keys, 30 indexer states) holds no layer. PR #44577's description (written against that main,
  // 2026-06-04): "Previously: 92 NIXL regions ... Now: 1 region, 1 large RDMA transfer per block
  // (~1.48MB)".
  auto pro = [](const std::string& v) {
    return kv_sizing(parse_deployment(Args::parse({"--engine", "vllm@" + v, "--model", "deepseek-ai/DeepSeek-V4-Pro", "--gpu", "h200",
                                                    "--tp", "8", "--kv-cache-dtype", "fp8", "--block-size", "256"})))
        .stages.front();
  };
  KvLayout l22 = pro("0.22.0");
  EXPECT_EQ(l22.page_bytes, 47808);
  EXPECT_EQ(l22.tensors, 31);
  EXPECT_EQ(l22.bytes_per_block_all(), 1482048);
  // 0.23 (PR #44454): 31 x 37,440 + 30 x 8,640 + 31 x 1,728 = 1,473,408 B, the block the packed
  // layout of 0.24+ keeps (PR #48993, V4-Pro DEP8: "For the FlashMLA fp8_ds_mla layout, it
  // decreases from 1,473,408 bytes").
  EXPECT_EQ(pro("0.23.0").bytes_per_block_all(), 1473408);
}

TEST(VllmDsv4Legacy, CapacityCheckAsVllm44376) {
  // _max_memory_usage_bytes_from_groups at 30,000 tokens, max_num_batched_tokens 16,384:
  // 22 tuples x 47,808 B x pages (MLA cdiv(30000, 256) = 118; SWA 2 x (cdiv(127 + 16384, 64) + 1)
  // = 2 x 259; C4 states cdiv(7 + 16384, 4) + 1 = 4,099; C128 states cdiv(127 + 16384, 8) + 1 =
  // 2,065; 6,800 in all) = 7,152,076,800 B = 6.66 GiB, as logged.
  KvLayout l = layout("0.22.0");
  EXPECT_EQ(needed_bytes(l, 30000, 16384), 7152076800LL);
  EXPECT_EQ(gib_fmt(needed_bytes(l, 30000, 16384)), "6.66");
  // 13,528 tokens need 5,554 pages (53 + 2 x 213 + 3,383 + 1,692) = 5,841,563,904 B (5.4404 GiB),
  // 13,529 one C4-state page more: the logged 5.44 GiB lies between, and vLLM's binary search
  // lands on 13,528 for any available memory in [5,841,563,904, 5,842,615,680).
  EXPECT_EQ(estimate_max_model_len(l, 5841563904LL, 30000, 16384), 13528);
  EXPECT_EQ(estimate_max_model_len(l, 5842615679LL, 30000, 16384), 13528);
  // The figure replayed as printed, 5.44 GiB = 5,841,155,522 B (5,553 pages): 13,524, 0.03% under.
  EXPECT_EQ(estimate_max_model_len(l, 5841155522LL, 30000, 16384), 13524);
}

TEST(VllmDsv4Legacy, PlanRefusesLikeTheLog) {
  // The whole plan with the logged KV memory (what validate's max_model_len_given_memory does):
  // vLLM refuses the 30,000-token request with the figures of the log.
  auto argv = xvllm011("unknown@2026-06-03");  // the comment's date: 0.22 by the release table
  argv.insert(argv.end(), {"--kv-cache-memory-bytes", "5841155522"});
  Forecast f = plan(parse_deployment(Args::parse(argv)));
  ASSERT_TRUE(f.failure.has_value());
  EXPECT_EQ(f.failure->stage, StageId::KvPool);
  EXPECT_NE(f.failure->message.find("(6.66 GiB KV cache is needed"), std::string::npos) << f.failure->message;
  EXPECT_NE(f.failure->message.find("available KV cache memory (5.44 GiB)"), std::string::npos) << f.failure->message;
  EXPECT_NE(f.failure->message.find("estimated maximum model length is 13524."), std::string::npos) << f.failure->message;
}

TEST(VllmDsv4Legacy, NoDeepSeekV4Before020) {
  // V4 support arrived in 0.20.0 (PR #40860): an older build does not know the architecture.
  try {
    layout("0.19.1");
    FAIL() << "DeepSeek-V4 planned on vLLM 0.19.1";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--model");
    EXPECT_NE(e.problem().find("DeepseekV4ForCausalLM"), std::string::npos);
  }
  // 0.20.0 itself plans (the per-tuple block above).
  EXPECT_NO_THROW(layout("0.20.0"));
}
