// Per-rank weight layout (SGLang / vLLM sharding rules) and KV bytes per token through the
// kv_per_token dispatcher, with the hand arithmetic in comments.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "headroom/error.h"
#include "headroom/kv.h"
#include "headroom/layout.h"
#include "headroom/model.h"
#include "parallel_test_util.h"

using namespace headroom;

using headroom::test::tp;

namespace {
int64_t component(const RankWeights& r, const std::string& name) {
  for (const auto& [k, v] : r.by_component)
    if (k == name) return v;
  return 0;
}
}  // namespace

TEST(PpLayerRange, MirrorsGetPpIndices) {
  // vllm/distributed/utils.py get_pp_indices: 61 // 4 = 15 each, remainder 1 goes to the stage
  // before the last: [15, 15, 16, 15].
  EXPECT_EQ(pp_layer_range(61, 4, 0, EngineKind::VLLM), std::make_pair(0, 15));
  EXPECT_EQ(pp_layer_range(61, 4, 2, EngineKind::VLLM), std::make_pair(30, 46));
  EXPECT_EQ(pp_layer_range(61, 4, 3, EngineKind::VLLM), std::make_pair(46, 61));
  // 78 // 8 = 9, remainder 6 -> stages 1..6 get 10: [9, 10, 10, 10, 10, 10, 10, 9].
  EXPECT_EQ(pp_layer_range(78, 8, 0, EngineKind::SGLang), std::make_pair(0, 9));
  EXPECT_EQ(pp_layer_range(78, 8, 1, EngineKind::SGLang), std::make_pair(9, 19));
  EXPECT_EQ(pp_layer_range(78, 8, 7, EngineKind::SGLang), std::make_pair(69, 78));
  EXPECT_THROW(pp_layer_range(4, 8, 0, EngineKind::SGLang), InputError);
}

TEST(WeightsPerRank, Llama70B_Tp8_Exact) {
  // Per layer per rank (BF16): attention (8192x8192/8 + 2 x 1024x8192/8 + 8192x8192/8) x 2 B = 37,748,736;
  // MLP 3 x 28672 x 8192 / 8 x 2 B = 176,160,768; 2 norms replicated 32,768.
  // Vocab 128256 (a multiple of 64) / 8 = 16032 rows x 8192 x 2 B = 262,668,288 for embed and lm_head.
  // 80 x 213,942,272 + 2 x 262,668,288 + 16,384 (final norm) = 17,640,734,720.
  // Plus the RoPE cos/sin table on every rank (engines/rope_tables.cpp): 131,072 positions x 128 in
  // BF16 on vLLM (33,554,432), FP32 on SGLang (67,108,864).
  auto m = load_model("meta-llama/Llama-3.1-70B-Instruct");
  for (EngineKind e : {EngineKind::SGLang, EngineKind::VLLM}) {
    auto ranks = weights_per_rank(*m, e, tp(8));
    ASSERT_EQ(ranks.size(), 8u);
    const int64_t rope = e == EngineKind::VLLM ? 33'554'432 : 67'108'864;
    for (const auto& r : ranks) {
      EXPECT_EQ(r.bytes, 17'640'734'720 + rope);
      EXPECT_EQ(component(r, "rope_tables"), rope);
    }
  }
}

TEST(WeightsPerRank, KvHeadsReplicatedWhenFewerThanTp) {
  // Llama-3.1-8B has 8 KV heads; at TP 16 each rank holds one head: k_proj 128 x 4096 x 2 B = 1 MiB,
  // v_proj the same, vs q_proj 4096 x 4096 x 2 / 16 = 2 MiB.
  auto m = load_model("meta-llama/Meta-Llama-3.1-8B");
  auto r16 = weights_per_rank(*m, EngineKind::VLLM, tp(16));
  auto r8 = weights_per_rank(*m, EngineKind::VLLM, tp(8));
  // Attention per layer: TP8 = (4 + 1 + 1 + 4) MiB = 10 MiB... per rank q 4 MiB, k 1, v 1, o 4;
  // TP16 = q 2 + k 1 + v 1 + o 2 = 6 MiB. x 32 layers.
  EXPECT_EQ(component(r8[0], "attention"), 32 * 10 * (int64_t{1} << 20));
  EXPECT_EQ(component(r16[0], "attention"), 32 * 6 * (int64_t{1} << 20));
}

TEST(WeightsPerRank, MlaLowRankProjectionsReplicated) {
  // DeepSeek-V3 (FP8 block): q_a_proj [1536, 7168] F8 + scales [12, 56] F32 = 11,010,048 + 2,688 B and
  // kv_a_proj_with_mqa [576, 7168] + [5, 56] F32 = 4,128,768 + 1,120 B sit whole on every rank.
  auto m = load_model("deepseek-ai/DeepSeek-V3");
  auto r1 = weights_per_rank(*m, EngineKind::SGLang, tp(1));
  auto r8 = weights_per_rank(*m, EngineKind::SGLang, tp(8));
  const int64_t low_rank_per_layer = 11'010'048 + 2'688 + 4'128'768 + 1'120;
  // attention(TP8) - (attention(TP1) - low rank)/8 is the replicated low-rank part (x 61 layers),
  // up to the per-rank rounding of the split tensors.
  int64_t a1 = component(r1[0], "attention"), a8 = component(r8[0], "attention");
  int64_t replicated = a8 - (a1 - 61 * low_rank_per_layer) / 8;
  EXPECT_NEAR(static_cast<double>(replicated), 61.0 * low_rank_per_layer, 61.0 * 64);
}

TEST(WeightsPerRank, ExpertParallelAndUnevenExperts) {
  // Qwen3-30B-A3B: 128 experts; TP4 x EP4 (32 whole experts per rank) = TP4 (each expert / 4).
  auto m = load_model("Qwen/Qwen3-30B-A3B");
  auto a = weights_per_rank(*m, EngineKind::SGLang, tp(4, 1, 4));
  auto b = weights_per_rank(*m, EngineKind::SGLang, tp(4, 1, 1));
  EXPECT_EQ(component(a[0], "experts"), component(b[0], "experts"));
  // Mixtral, 8 experts over EP 3 (vLLM determine_expert_map): ranks 0,1 hold 3 experts, rank 2 holds 2.
  auto mx = load_model("mistralai/Mixtral-8x7B-v0.1");
  Parallel p = tp(3, 1, 3);
  auto r = weights_per_rank(*mx, EngineKind::VLLM, p);
  // one expert = 3 x 14336 x 4096 x 2 B = 352,321,536 B; x 32 layers.
  EXPECT_EQ(component(r[0], "experts"), 3 * 32 * int64_t{352'321'536});
  EXPECT_EQ(component(r[2], "experts"), 2 * 32 * int64_t{352'321'536});
}

TEST(WeightsPerRank, PipelineStagesSplitLayersEmbeddingAndHead) {
  auto m = load_model("meta-llama/Meta-Llama-3.1-8B");
  auto r = weights_per_rank(*m, EngineKind::VLLM, tp(1, 2));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_GT(component(r[0], "embedding"), 0);
  EXPECT_EQ(component(r[0], "lm_head"), 0);
  EXPECT_EQ(component(r[1], "embedding"), 0);
  EXPECT_GT(component(r[1], "lm_head"), 0);
  // 32 layers split 16/16, nothing replicated at TP1 but the RoPE table each stage builds
  // (131,072 x 128 x 2 B on vLLM).
  EXPECT_EQ(r[0].bytes + r[1].bytes, m->checkpoint_bytes + 2 * 33'554'432);
}

TEST(WeightsPerRank, VocabPaddedToMultipleOf64) {
  // vocab 1000 -> padded 1024 -> 256 rows per rank at TP4; 256 x 256 hidden x 2 B = 131,072 B.
  std::string cfg = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 256, "num_hidden_layers": 2,
    "vocab_size": 1000, "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 512, "torch_dtype": "bfloat16"})";
  std::string dir = ::testing::TempDir() + "/vocab_pad";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/config.json") << cfg; }
  auto m = load_model(dir);
  auto r = weights_per_rank(*m, EngineKind::SGLang, tp(4));
  EXPECT_EQ(component(r[0], "embedding"), 131'072);
  EXPECT_EQ(component(r[3], "lm_head"), 131'072);
}

TEST(WeightsPerRank, DpAttentionSplitsAttentionByAttnTp) {
  // SGLang --enable-dp-attention with tp 8, dp 8: attention TP = 1 -> every rank holds the whole
  // attention (except MLA is already replicated for q_a/kv_a) and a replicated embedding.
  auto m = load_model("deepseek-ai/DeepSeek-V3");
  Parallel p = tp(8);
  p.dp = 8;
  p.dp_attention = true;
  auto dp = weights_per_rank(*m, EngineKind::SGLang, p);
  auto one = weights_per_rank(*m, EngineKind::SGLang, tp(1));
  EXPECT_EQ(component(dp[0], "attention"), component(one[0], "attention"));
  EXPECT_EQ(component(dp[0], "embedding"), component(one[0], "embedding"));
}

TEST(WeightsPerRank, BadParallelismIsInputError) {
  auto m = load_model("Qwen/Qwen3-30B-A3B");
  EXPECT_THROW(weights_per_rank(*m, EngineKind::SGLang, tp(4, 1, 3)), InputError);   // ep does not divide tp
  EXPECT_THROW(weights_per_rank(*m, EngineKind::SGLang, tp(1, 100)), InputError);    // more stages than layers
}

TEST(KvPerToken, IssueTargetsThroughDispatcher) {
  Parallel one = tp(1), eight = tp(8);
  // DeepSeek-V3 bf16 MLA: 61 layers x (512 + 64) x 2 B = 70,272 B, the same at any TP.
  auto v3 = load_model("deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(kv_per_token(v3->config, EngineKind::SGLang, one, "bfloat16", 90).total(), 70'272);
  EXPECT_EQ(kv_per_token(v3->config, EngineKind::SGLang, eight, "bfloat16", 90).total(), 70'272);
  // DeepSeek-V3.2 fp8: 61 x (656 B fp8_ds_mla + 132 B indexer) = 48,068 B.
  auto v32 = load_model("deepseek-ai/DeepSeek-V3.2");
  EXPECT_EQ(kv_per_token(v32->config, EngineKind::SGLang, one, "fp8_e4m3", 90).total(), 48'068);
  // GLM-5 fp8: 78 x (656 + 132) = 61,464 B.
  auto glm = load_model("zai-org/GLM-5-FP8");
  EXPECT_EQ(kv_per_token(glm->config, EngineKind::SGLang, eight, "fp8_e4m3", 120).total(), 61'464);
  // Llama-3.1-70B bf16 at TP8: 80 layers x 2 (K, V) x 1 head x 128 x 2 B = 40,960 B per rank.
  auto llama = load_model("meta-llama/Llama-3.1-70B-Instruct");
  EXPECT_EQ(kv_per_token(llama->config, EngineKind::SGLang, eight, "bfloat16", 90).total(), 40'960);
  EXPECT_THROW(kv_per_token(llama->config, EngineKind::LlamaCpp, eight, "auto", 90), InputError);
}

TEST(KvPerToken, Gemma4PerLayerHeadDimAndKvHeads) {
  // vLLM gemma4.py Gemma4DecoderLayer: full-attention layers use global_head_dim 512 and, with
  // attention_k_eq_v, num_global_key_value_heads; sliding layers head_dim 256 and num_key_value_heads.
  // vLLM's Attention still caches K and V for k_eq_v layers (V = K), so both count.
  // gemma-4-26B-A4B bf16: full 5 layers x 2 heads x (512 + 512) x 2 B = 20,480 B;
  //                       sliding 25 layers x 8 heads x (256 + 256) x 2 B = 204,800 B (window 1024).
  auto m = load_model("google/gemma-4-26B-A4B");
  auto k = kv_per_token(m->config, EngineKind::VLLM, tp(1), "auto", 90);
  EXPECT_EQ(k.full_bytes, 20'480);
  EXPECT_EQ(k.swa_bytes, 204'800);
  // TP 2: 2 global KV heads -> 1 per rank; 8 sliding -> 4 per rank: both halve.
  auto k2 = kv_per_token(m->config, EngineKind::VLLM, tp(2), "auto", 90);
  EXPECT_EQ(k2.full_bytes, 10'240);
  EXPECT_EQ(k2.swa_bytes, 102'400);
}

TEST(WeightsPerRank, Gemma4KEqVLayersGetAVSlotInVllmAndSglang) {
  // The checkpoint has no v_proj on the 5 full-attention layers; both engines' QKVParallelLinear
  // allocates the V slot and loads k_proj into it (vLLM gemma4.py _weight_iterator; SGLang
  // gemma4_causal.py load_weights should_dup_k_to_v): + 5 x (2 x 512 x 2816 x 2 B) = 28,835,840 B
  // at TP 1 (vocab 262144 is a multiple of 64: no padding otherwise).
  auto m = load_model("google/gemma-4-26B-A4B");
  auto v = weights_per_rank(*m, EngineKind::VLLM, tp(1));
  auto s = weights_per_rank(*m, EngineKind::SGLang, tp(1));
  // Plus the RoPE tables (engines/rope_tables.cpp): full layers' proportional table 262,144 x 512 and
  // sliding layers' 262,144 x 256, BF16 on vLLM (402,653,184), FP32 on SGLang (805,306,368).
  EXPECT_EQ(s[0].bytes, m->checkpoint_bytes + 28'835'840 + 805'306'368);
  EXPECT_EQ(v[0].bytes, m->checkpoint_bytes + 28'835'840 + 402'653'184);
}

TEST(KvPerToken, MiMoV2FlashSlidingLayersHaveMoreKvHeads) {
  // vLLM mimo_v2_flash.py: K head_dim 192, V head_dim 128 (FlashAttentionDiffKVBackend, head_size_v).
  // bf16, TP 1: full 9 layers x 4 heads x (192 + 128) x 2 B = 23,040 B;
  //             sliding 39 layers x 8 heads x 320 x 2 B = 199,680 B (window 128).
  auto m = load_model("XiaomiMiMo/MiMo-V2-Flash");
  auto k = kv_per_token(m->config, EngineKind::VLLM, tp(1), "bfloat16", 90);
  EXPECT_EQ(k.full_bytes, 23'040);
  EXPECT_EQ(k.swa_bytes, 199'680);
}

TEST(WeightsPerRank, GemmaReplicatedPartsPerEngine) {
  // SGLang builds Gemma-3's and Gemma-4's embed_tokens as a plain nn.Embedding
  // (srt/models/gemma3_causal.py Gemma3TextScaledWordEmbedding; gemma4_causal.py reuses it), so at TP 2
  // each rank holds all 262,144 x 5,376 x 2 B = 2,818,572,288 B of google/gemma-4-31B-it's table
  // (tied: also its lm_head); vLLM's VocabParallelEmbedding gives each rank half. Observed: SGLang's
  // "weight_size/GPU 31.66 GB" for this model at H100 TP=2 (pyc96/sglang PR #10, 2026-05-24), where
  // the vocab-parallel split gave 29.29 GiB.
  auto m = load_model("google/gemma-4-31B-it");
  auto sg = weights_per_rank(*m, EngineKind::SGLang, tp(2));
  auto vl = weights_per_rank(*m, EngineKind::VLLM, tp(2));
  EXPECT_EQ(component(sg[0], "embedding"), int64_t{2818572288});
  EXPECT_EQ(component(sg[1], "embedding"), int64_t{2818572288});
  EXPECT_EQ(component(vl[0], "embedding"), int64_t{1409286144});
  // attention_k_eq_v: both engines allocate the global layers' V slot and fill it with k_proj (SGLang
  // gemma4_causal.py load_weights should_dup_k_to_v): 10 layers x 4 heads x 512 x 5,376 x 2 B =
  // 220,200,960 B beyond the checkpoint, 110,100,480 per rank at TP 2.
  EXPECT_EQ(component(sg[0], "attention"), component(vl[0], "attention"));
  int64_t ckpt_attention = 0;
  for (const auto& t : m->tensors)
    if (tensor_role_component(t.role) == "attention") ckpt_attention += t.bytes;
  EXPECT_EQ(component(weights_per_rank(*m, EngineKind::SGLang, tp(1))[0], "attention") - ckpt_attention, int64_t{220200960});
  // vLLM's Gemma-4 vision tower (transformers' module with its nn.Linear swapped for ReplicatedLinear,
  // gemma4_mm.py recursive_replace_linear) is whole on every rank: TP 2 holds what TP 1 does.
  EXPECT_EQ(component(vl[0], "vision"), component(weights_per_rank(*m, EngineKind::VLLM, tp(1))[0], "vision"));
  EXPECT_GT(component(vl[0], "vision"), int64_t{1} << 30);
  // Not other families: Qwen3's embedding stays vocab-parallel on SGLang.
  auto q = load_model("Qwen/Qwen3-8B");
  EXPECT_EQ(component(weights_per_rank(*q, EngineKind::SGLang, tp(2))[0], "embedding"),
            component(weights_per_rank(*q, EngineKind::VLLM, tp(2))[0], "embedding"));
}
