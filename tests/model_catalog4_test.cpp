// Catalog additions of the fifth collection pass (data/models, INDEX.md "Fifth pass"): four real
// config files of models that extra startup logs name. Each reproduces a count its source states
// (a tensor total, a checkpoint's total_size) and the KV bytes per token its logs imply.
#include <gtest/gtest.h>

#include "headroom/kv.h"
#include "headroom/model.h"
#include "parallel_test_util.h"

using namespace headroom;

using headroom::test::tp;

TEST(ModelCatalog4, Qwen2_7B_InstructMatchesItsReportedTensorTotal) {
  // The model report the config comes from sums its four safetensors files to 7,615,616,512
  // parameters in 339 tensors. By hand: layer = q 3584x3584 + 3584 bias, k and v 3584x512 + 512
  // bias each, o 3584x3584, MLP 3 x 3584x18944, 2 norms x 3584 = 233,057,792; x 28 = 6,525,618,176;
  // + embedding and untied lm_head 2 x 152064x3584 = 1,089,994,752; + final norm 3,584.
  auto m = load_model("Qwen/Qwen2-7B-Instruct");
  EXPECT_EQ(m->params_total, 7'615'616'512);
  EXPECT_EQ(m->tensors.size(), 339u);
  EXPECT_FALSE(m->config.tie_word_embeddings);
  // 28 layers x 4 KV heads x 128 x (K + V) x 2 B = 57,344 B: extra xvllm-096 logs 464,848 tokens in
  // "Available KV cache memory: 24.83 GiB" (464,848 x 57,344 B = 24.826 GiB).
  EXPECT_EQ(kv_per_token(m->config, EngineKind::VLLM, tp(1), "auto", 80).full_bytes, 57'344);
  EXPECT_EQ(kv_per_token(m->config, EngineKind::VLLM, tp(2), "auto", 80).full_bytes, 28'672);
}

TEST(ModelCatalog4, Qwen1_5_7B_MatchesItsIndexTotalSize) {
  // metadata.total_size of the same folder's model.safetensors.index.json: 15,442,649,088 B, all
  // BF16. No GQA: 32 KV heads, so 32 layers x 32 x 128 x 2 x 2 B = 524,288 B per token (extra
  // xtrt-012: 631 blocks x 64 tokens x 524,288 B = 19.72 GiB = 0.9 x the logged 21.89 GiB).
  auto m = load_model("Qwen/Qwen1.5-7B");
  EXPECT_EQ(m->checkpoint_bytes, 15'442'649'088);
  EXPECT_EQ(m->config.num_kv_heads, 32);
  EXPECT_EQ(kv_per_token(m->config, EngineKind::VLLM, tp(1), "auto", 80).full_bytes, 524'288);
}

TEST(ModelCatalog4, CoderAndHermesShareTheirBasesShapes) {
  // Qwen2.5-Coder-0.5B-Instruct differs from Qwen2.5-0.5B-Instruct only in max_window_layers (24 vs
  // 21, unused: use_sliding_window false), so the counts are equal (model card: 0.49B). Hermes-3 is
  // a Llama-3.1-8B fine-tune with the same shapes: 8,030,261,248 like meta-llama/Llama-3.1-8B-Instruct.
  auto coder = load_model("Qwen/Qwen2.5-Coder-0.5B-Instruct");
  auto base = load_model("Qwen/Qwen2.5-0.5B-Instruct");
  EXPECT_EQ(coder->params_total, base->params_total);
  EXPECT_EQ(coder->params_total, 494'032'768);
  EXPECT_TRUE(coder->config.tie_word_embeddings);
  auto hermes = load_model("NousResearch/Hermes-3-Llama-3.1-8B");
  EXPECT_EQ(hermes->params_total, 8'030'261'248);
  EXPECT_EQ(hermes->config.max_position_embeddings, 131'072);
  EXPECT_EQ(hermes->config.rope_scaling_type, "llama3");
}

TEST(ModelCatalog4, ByteExactQwenAndDistillConfigs) {
  // Sixth pass, each file byte-identical to a hash an independent manifest pins (facts.json).
  // Qwen3-30B-A3B-Instruct-2507 has Qwen3-30B-A3B's shapes with a 262,144-token native context
  // (rope_theta 1e7): the same parameters, a longer default --max-model-len.
  auto inst = load_model("Qwen/Qwen3-30B-A3B-Instruct-2507");
  auto base = load_model("Qwen/Qwen3-30B-A3B");
  EXPECT_EQ(inst->params_total, base->params_total);
  EXPECT_EQ(inst->params_active, base->params_active);
  EXPECT_EQ(inst->config.max_position_embeddings, 262'144);
  EXPECT_EQ(base->config.max_position_embeddings, 40'960);
  // The Thinking release's config.json has the same sha256 (pinned for its snapshot 144afc2f), and
  // its official -FP8 sibling is derived from it at lookup, as for every Qwen -FP8 pair.
  auto think = load_model("Qwen/Qwen3-30B-A3B-Thinking-2507");
  EXPECT_EQ(think->params_total, inst->params_total);
  auto think_fp8 = load_model("Qwen/Qwen3-30B-A3B-Thinking-2507-FP8");
  EXPECT_LT(think_fp8->checkpoint_bytes, think->checkpoint_bytes * 6 / 10);
  // DeepSeek-R1-Distill-Qwen-7B is Qwen2-7B-Instruct's geometry (rope_theta 1e4, 131,072 positions).
  auto distill = load_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B");
  EXPECT_EQ(distill->params_total, 7'615'616'512);
  EXPECT_EQ(distill->config.max_position_embeddings, 131'072);
  // Qwen2.5-0.5B (base): the report's 494,032,768 parameters in 290 tensors.
  auto small = load_model("Qwen/Qwen2.5-0.5B");
  EXPECT_EQ(small->params_total, 494'032'768);
  EXPECT_EQ(small->tensors.size(), 290u);
}

TEST(ModelCatalog4, Qwen3_4B_PairProvenByPinnedHashes) {
  // Both files match sha256 digests pinned for their Hub revisions (facts.json). Qwen3-4B: 36 layers,
  // hidden 2560, 32 / 8 heads of 128, MLP 9728, tied embeddings. By hand: layer = q 2560x4096 +
  // k, v 2 x 2560x1024 + o 4096x2560 + MLP 3 x 2560x9728 + 2 norms x 2560 + q/k norms 2 x 128
  // = 100,930,816; x 36 = 3,633,509,376; + embedding 151936x2560 = 388,956,160; + norm 2,560
  // = 4,022,468,096 -- 8,044,936,192 bf16 bytes in 36 x 11 + 2 = 398 tensors, the "398 tensors;
  // raw tensor bytes 8044936192" a manifest states for the real index (search-index id 62354515976).
  // The Instruct-2507 release differs only in context (262,144) and rope_theta.
  auto base = load_model("Qwen/Qwen3-4B");
  auto inst = load_model("Qwen/Qwen3-4B-Instruct-2507");
  EXPECT_EQ(base->params_total, 4'022'468'096);
  EXPECT_EQ(base->checkpoint_bytes, 8'044'936'192);
  EXPECT_EQ(base->tensors.size(), 398u);
  EXPECT_EQ(inst->params_total, base->params_total);
  EXPECT_EQ(base->config.max_position_embeddings, 40'960);
  EXPECT_EQ(inst->config.max_position_embeddings, 262'144);
  EXPECT_EQ(kv_per_token(base->config, EngineKind::VLLM, tp(1), "auto", 80).full_bytes, 36 * 8 * 128 * 2 * 2);
}

TEST(ModelCatalog4, HashSettledBaseAndSmallConfigs) {
  // Seventh pass: each file was assembled from a proven sibling plus quoted values and kept only
  // because its sha256 equals the digest independent manifests pin for the Hub revision
  // (facts.json). The Qwen3 Base releases share their instruct siblings' shapes (eos and context
  // differ), so the counts are equal.
  for (const char* size : {"0.6B", "1.7B", "8B"}) {
    SCOPED_TRACE(size);
    auto base = load_model(std::string("Qwen/Qwen3-") + size + "-Base");
    auto tuned = load_model(std::string("Qwen/Qwen3-") + size);
    EXPECT_EQ(base->params_total, tuned->params_total);
    EXPECT_EQ(base->config.max_position_embeddings, 32'768);
  }
  // Qwen2.5-1.5B-Instruct by hand: layer = q 1536x1536 + 1536 + k, v 2 x (1536x256 + 256) + o
  // 1536x1536 + MLP 3 x 1536x8960 + 2 norms x 1536 = 46,797,824; x 28 = 1,310,339,072; + tied
  // embedding 151936x1536 = 233,373,696; + norm 1,536 = 1,543,714,304 (the card's 1.54B). Its
  // model.safetensors is pinned at 3,087,467,144 bytes: the tensors' 3,087,428,608 + a 38,536 B header.
  EXPECT_EQ(load_model("Qwen/Qwen2.5-1.5B-Instruct")->params_total, 1'543'714'304);
  // DeepSeek-R1-Distill-Qwen-1.5B: the same shapes untied (+ lm_head 233,373,696) = 1,777,088,000.
  EXPECT_EQ(load_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B")->params_total, 1'777'088'000);
}

TEST(ModelCatalog4, EighthPassAndTheCorrectedQwen25_32B) {
  // The tt-metal copy of Qwen2.5-32B-Instruct said 131,072 positions; the Hub file (sha256 9c6772f1...,
  // the digest a cached snapshot and several rosters pin) says 32,768, vLLM's default --max-model-len.
  EXPECT_EQ(load_model("Qwen/Qwen2.5-32B-Instruct")->config.max_position_embeddings, 32'768);
  // gemma-2-2b-it by hand: 26 layers x (q 2304x2048 + k, v 2 x 2304x1024 + o 2048x2304 + MLP 3 x
  // 2304x9216 + 4 norms x 2304 = 77,865,984) = 2,024,515,584; + tied embedding 256000x2304
  // = 589,824,000; + norm 2,304 = 2,614,341,888.
  EXPECT_EQ(load_model("google/gemma-2-2b-it")->params_total, 2'614'341'888);
  // gemma-3-1b-it: 26 x (q 1152x1024 + k, v 2 x 1152x256 + o 1024x1152 + MLP 3 x 1152x6912 + 4 norms x
  // 1152 + q/k norms 2 x 256 = 26,842,112) = 697,894,912; + tied embedding 262144x1152 = 301,989,888;
  // + norm 1,152 = 999,885,952.
  EXPECT_EQ(load_model("google/gemma-3-1b-it")->params_total, 999'885'952);
  // Qwen2.5-14B-Instruct keeps the base's shapes.
  EXPECT_EQ(load_model("Qwen/Qwen2.5-14B-Instruct")->params_total, load_model("Qwen/Qwen2.5-14B")->params_total);
}

TEST(ModelCatalog4, NinthPassDistillsAndCorrections) {
  // The distills ship their base's config (same pinned digest for both): equal counts.
  EXPECT_EQ(load_model("deepseek-ai/DeepSeek-R1-Distill-Llama-8B")->params_total, load_model("meta-llama/Meta-Llama-3.1-8B")->params_total);
  EXPECT_EQ(load_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B")->params_total, load_model("Qwen/Qwen2.5-32B")->params_total);
  EXPECT_EQ(load_model("deepseek-ai/DeepSeek-R1-Distill-Llama-70B")->params_total, load_model("meta-llama/Llama-3.3-70B-Instruct")->params_total);
  // Mistral-Nemo: hidden 5120 with an explicit head_dim 128 (not 5120 / 32 = 160): 40 layers x (q 5120x4096
  // + k, v 2 x 5120x1024 + o 4096x5120 + MLP 3 x 5120x14336 + 2 norms x 5120 = 272,640,000) = 10,905,600,000;
  // + untied embedding and lm_head 2 x 131072x5120 = 1,342,177,280; + norm 5,120 = 12,247,782,400.
  auto nemo = load_model("mistralai/Mistral-Nemo-Instruct-2407");
  EXPECT_EQ(nemo->config.head_dim, 128);
  EXPECT_EQ(nemo->params_total, 12'247'782'400);
  // Mistral-Small-3.2 has 3.1's shapes; phi-4's Hub file has no sliding window.
  EXPECT_EQ(load_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506")->params_total,
            load_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503")->params_total);
  EXPECT_EQ(load_model("microsoft/phi-4")->config.sliding_window, 0);
}

TEST(ModelCatalog4, SmolLM2_135M_Instruct) {
  // Hash-proven (sha256 8eb740e8..., facts.json). By hand: 30 layers x (q 576x576 + k, v 2 x 576x192 + o
  // 576x576 + MLP 3 x 576x1536 + 2 norms x 576 = 3,540,096) = 106,202,880; + tied embedding 49152x576
  // = 28,311,552; + norm 576 = 134,515,008. KV: 30 x 3 heads x 64 x 2 x 2 B = 23,040 B per token.
  auto m = load_model("HuggingFaceTB/SmolLM2-135M-Instruct");
  EXPECT_EQ(m->params_total, 134'515'008);
  EXPECT_EQ(kv_per_token(m->config, EngineKind::VLLM, tp(1), "auto", 80).full_bytes, 23'040);
}
