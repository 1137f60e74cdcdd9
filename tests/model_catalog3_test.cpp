// Catalog additions of the fourth collection pass (data/models, INDEX.md "helper cfg"): the model reader
// reads google/gemma-3-12b-it — a sparse config that leaves vocab_size, head_dim and the context length to
// transformers' Gemma3TextConfig defaults — with its SigLIP vision tower, and reproduces the Hugging Face
// API's parameter total. KV bytes per token are pinned by hand for both engines.
#include <gtest/gtest.h>

#include "headroom/error.h"
#include "headroom/kv.h"
#include "headroom/model.h"
#include "parallel_test_util.h"

using namespace headroom;

using headroom::test::tp;

TEST(ModelCatalog3, Gemma3_12B_ReadsDefaultsOfGemma3TextConfig) {
  // The file names hidden 3840, 48 layers, 16 heads, 8 KV heads, window 1024, rope linear x8; the rest
  // comes from configuration_gemma3.py: vocab_size 262208, head_dim 256 (not 3840 / 16 = 240),
  // max_position_embeddings 131072, sliding_window_pattern 6 (every 6th layer global: 8 of 48).
  auto m = load_model("google/gemma-3-12b-it");
  const auto& c = m->config;
  EXPECT_EQ(c.family, "gemma3");
  EXPECT_EQ(c.vocab_size, 262'208);
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(c.num_attention_heads, 16);
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.max_position_embeddings, 131'072);
  EXPECT_EQ(c.sliding_window, 1024);
  EXPECT_EQ(c.count_layers(AttnKind::Full), 8);
  EXPECT_EQ(c.count_layers(AttnKind::Sliding), 40);
  EXPECT_EQ(c.layers[5].attn, AttnKind::Full);     // (5 + 1) % 6 == 0
  EXPECT_EQ(c.layers[4].attn, AttnKind::Sliding);
  EXPECT_EQ(c.rope_scaling_type, "linear");
  EXPECT_DOUBLE_EQ(c.rope_scaling_factor, 8.0);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.vision.config_num_hidden_layers, 27);  // what SGLang's VLM fraction adjustment reads
}

TEST(ModelCatalog3, Gemma3_12B_MatchesHfSafetensorsTotal) {
  // Hugging Face API safetensors.total of google/gemma-3-12b-it: 12,187,325,040 (facts.json).
  // Text, hand: layer = q 3840x4096 + k,v 3840x2048 each + o 4096x3840 = 47,185,920
  //   + mlp 3 x 3840x15360 = 176,947,200 + 4 RMSNorms x 3840 + q_norm, k_norm x 256 = 15,872
  //   = 224,148,992; x48 = 10,759,151,616; + tied embedding 262208x3840 = 1,006,878,720; + norm 3840
  //   = 11,766,034,176.
  // SigLIP tower: patch conv 1152x3x14x14 + 1152 = 678,528; positions (896/14)^2 = 4096 x 1152
  //   = 4,718,592; layer = 4 x (1152^2 + 1152) + fc1 4304x1152+4304 + fc2 1152x4304+1152
  //   + 2 LayerNorms x 2 x 1152 = 15,239,504; x27 = 411,466,608; post_layernorm 2,304
  //   -> 416,866,032. Projector 1152x3840 + soft-embedding norm 1152 = 4,424,832.
  // Total 11,766,034,176 + 416,866,032 + 4,424,832 = 12,187,325,040.
  auto m = load_model("google/gemma-3-12b-it");
  EXPECT_EQ(m->config.vision.kind, "gemma3_siglip");
  EXPECT_EQ(m->config.vision.params, 416'866'032 + 4'424'832);
  EXPECT_EQ(m->params_total, 12'187'325'040);
  EXPECT_EQ(m->checkpoint_bytes, 2 * 12'187'325'040);  // all BF16
}

TEST(ModelCatalog3, Gemma3_12B_KvBytesPerToken) {
  // One layer, bf16, TP1: K + V = 2 x 8 heads x 256 x 2 B = 8,192 B. 8 global layers -> 65,536 B;
  // 40 sliding layers -> 327,680 B (window-bounded pool). TP2 halves the heads: 32,768 + 163,840.
  auto m = load_model("google/gemma-3-12b-it");
  for (EngineKind e : {EngineKind::VLLM, EngineKind::SGLang}) {
    SCOPED_TRACE(static_cast<int>(e));
    auto one = kv_per_token(m->config, e, tp(1), "auto", 89);
    EXPECT_EQ(one.full_bytes, 65'536);
    EXPECT_EQ(one.swa_bytes, 327'680);
    EXPECT_EQ(one.full_layers, 8);
    EXPECT_EQ(one.swa_layers, 40);
    auto two = kv_per_token(m->config, e, tp(2), "auto", 89);
    EXPECT_EQ(two.full_bytes, 32'768);
    EXPECT_EQ(two.swa_bytes, 163'840);
  }
}

TEST(ModelCatalog3, Gemma3DefaultsApplyOnlyToGemma3) {
  // A Llama config without vocab_size is still one error line (no defaults outside Gemma-3).
  const char* llama = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
                          "num_attention_heads": 4, "intermediate_size": 128})";
  EXPECT_THROW(parse_model_config(llama, "llama.json"), InputError);
  // The same keys as a Gemma-3 text config read with Gemma3TextConfig's defaults: 4 KV heads, head_dim 256.
  const char* g3 = R"({"architectures": ["Gemma3ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
                       "num_attention_heads": 4, "intermediate_size": 128})";
  auto c = parse_model_config(g3, "g3.json");
  EXPECT_EQ(c.vocab_size, 262'208);
  EXPECT_EQ(c.num_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(c.sliding_window, 4096);
}

TEST(ModelCatalog3, Gemma3VisionHeadIsRefused) {
  // vision_use_head true would add SigLIP's pooling head, which is not modelled: one error line.
  const char* cfg = R"({"architectures": ["Gemma3ForConditionalGeneration"],
                        "text_config": {"hidden_size": 64, "num_hidden_layers": 2, "intermediate_size": 128},
                        "vision_config": {"hidden_size": 32, "image_size": 28, "patch_size": 14,
                                          "intermediate_size": 64, "num_attention_heads": 2,
                                          "num_hidden_layers": 1, "vision_use_head": true}})";
  EXPECT_THROW(parse_model_config(cfg, "g3vl.json"), InputError);
}

TEST(ModelCatalog3, Gemma3_4B_And_27B_MatchPublishedTotals) {
  // Same SigLIP tower as the 12B (416,866,032); projector 1152 x text hidden + 1152.
  // 4B: heads 8 / KV 4 / head_dim 256 by default. Layer = q 2560x2048 + k,v 2560x1024 each + o 2048x2560
  //   = 15,728,640 + mlp 3 x 2560x10240 = 78,643,200 + norms 4x2560 + 2x256 = 10,752 -> 94,382,592;
  //   x34 = 3,209,008,128; + tied embedding 262208x2560 = 671,252,480; + 2560 = 3,880,263,168;
  //   + 416,866,032 + 1152x2560 + 1152 = 2,950,272 -> 4,300,079,472 (facts.json: HF / transformers counts).
  // 27B: head_dim 128. Layer = q 5376x4096 + k,v 5376x2048 each + o 4096x5376 = 66,060,288
  //   + mlp 3 x 5376x21504 = 346,816,512 + norms 4x5376 + 2x128 = 21,760 -> 412,898,560; x62 =
  //   25,599,710,720; + 262208x5376 = 1,409,630,208; + 5376 = 27,009,346,304; + 416,866,032
  //   + 1152x5376 + 1152 = 6,194,304 -> 27,432,406,640 (facts.json).
  auto m4 = load_model("google/gemma-3-4b-it");
  EXPECT_EQ(m4->params_total, 4'300'079'472);
  EXPECT_EQ(m4->config.num_kv_heads, 4);
  auto m27 = load_model("google/gemma-3-27b-it");
  EXPECT_EQ(m27->params_total, 27'432'406'640);
  EXPECT_EQ(m27->config.head_dim, 128);
}

TEST(ModelCatalog3, Gemma3_4B_And_27B_KvBytesPerToken) {
  // 4B: layer = 2 x 4 KV heads x 256 x 2 B = 4,096 B; 34 layers, global when (i+1) % 6 == 0: 5 global
  //   (20,480 B) + 29 sliding (118,784 B).
  // 27B: layer = 2 x 16 x 128 x 2 B = 8,192 B; 62 layers: 10 global (81,920 B) + 52 sliding (425,984 B).
  auto m4 = load_model("google/gemma-3-4b-it");
  auto k4 = kv_per_token(m4->config, EngineKind::VLLM, tp(1), "auto", 90);
  EXPECT_EQ(k4.full_bytes, 20'480);
  EXPECT_EQ(k4.swa_bytes, 118'784);
  auto m27 = load_model("google/gemma-3-27b-it");
  auto k27 = kv_per_token(m27->config, EngineKind::SGLang, tp(1), "auto", 90);
  EXPECT_EQ(k27.full_bytes, 81'920);
  EXPECT_EQ(k27.swa_bytes, 425'984);
  EXPECT_EQ(k27.full_layers, 10);
}

TEST(ModelCatalog3, Llama2_7B_MatchesPublishedCountAndKv) {
  // Layer = 4 x 4096^2 + 3 x 4096x11008 + 2 x 4096 = 202,383,360; x32 = 6,476,267,520;
  //   + embedding and lm_head 2 x 32000x4096 = 262,144,000; + 4096 = 6,738,415,616 (facts.json).
  // KV fp16: 32 layers x 2 x 32 heads x 128 x 2 B = 524,288 B per token; fp8 halves it.
  auto m = load_model("meta-llama/Llama-2-7b-hf");
  EXPECT_EQ(m->params_total, 6'738'415'616);
  EXPECT_EQ(m->checkpoint_bytes, 2 * 6'738'415'616);  // float16
  EXPECT_EQ(m->config.max_position_embeddings, 4096);
  EXPECT_EQ(kv_per_token(m->config, EngineKind::VLLM, tp(1), "auto", 90).total(), 524'288);
  EXPECT_EQ(kv_per_token(m->config, EngineKind::VLLM, tp(1), "fp8", 90).total(), 262'144);
}

TEST(ModelCatalog3, MistralSmall31_MatchesPublishedCount) {
  // Text: layer = q 5120x4096 + k,v 5120x1024 each + o 4096x5120 = 52,428,800 + mlp 3 x 5120x32768
  //   = 503,316,480 + 2 norms 10,240 -> 555,755,520; x40 = 22,230,220,800; + embedding and untied lm_head
  //   2 x 131072x5120 = 1,342,177,280; + 5120 = 23,572,403,200.
  // Pixtral tower: patch_conv 1024x3x14x14 = 602,112 + ln_pre 1024; layer = 2 norms 2,048 + q/k/v/o
  //   4 x 1024x1024 + gated MLP 3 x 1024x4096 = 16,779,264; x24 = 402,702,336 -> 403,305,472.
  // Projector (multimodal_projector_bias false): norm 1024 + patch merger 4096x1024 + linear_1 1024x5120
  //   + linear_2 5120x5120 = 35,652,608. Total 24,011,361,280 (facts.json: keras-hub preset, HF table).
  auto m = load_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503");
  EXPECT_EQ(m->config.vision.kind, "pixtral");
  EXPECT_EQ(m->config.vision.params, 403'305'472 + 35'652'608);
  EXPECT_EQ(m->params_total, 24'011'361'280);
  EXPECT_FALSE(m->config.tie_word_embeddings);
  EXPECT_EQ(m->config.sliding_window, 0);  // sliding_window null: every layer full attention
  // KV bf16: 40 layers x 2 x 8 KV heads x 128 x 2 B = 163,840 B per token; TP4 -> 2 heads: 40,960 B.
  EXPECT_EQ(kv_per_token(m->config, EngineKind::VLLM, tp(1), "auto", 90).total(), 163'840);
  EXPECT_EQ(kv_per_token(m->config, EngineKind::SGLang, tp(4), "auto", 90).total(), 40'960);
}

TEST(ModelCatalog3, MistralSmall31ProjectorBiasAndFeatureLayersCount) {
  // multimodal_projector_bias true adds linear_1 and linear_2 biases (2 x text hidden); a
  // vision_feature_layer list of 2 doubles linear_1's input (2 x vision hidden x text hidden).
  // Tiny tower: hidden 8, 1 layer, intermediate 16, 2 heads x 4, patch 2, merge 2; text hidden 32.
  //   tower = 8x3x2x2 + 8 + (2x8 + 4x8x8 + 3x8x16) = 96 + 8 + 16 + 256 + 384 = 760
  //   projector = 8 + 8x(8x4) + (8x2x32 + 32) + (32x32 + 32) = 8 + 256 + 544 + 1,056 = 1,864.
  const char* cfg = R"({"architectures": ["Mistral3ForConditionalGeneration"], "multimodal_projector_bias": true,
                        "spatial_merge_size": 2, "vision_feature_layer": [-1, -2],
                        "text_config": {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4,
                                        "intermediate_size": 64, "vocab_size": 100},
                        "vision_config": {"hidden_size": 8, "num_hidden_layers": 1, "intermediate_size": 16,
                                          "num_attention_heads": 2, "head_dim": 4, "patch_size": 2}})";
  auto c = parse_model_config(cfg, "m3.json");
  EXPECT_EQ(c.vision.params, 760 + 1'864);
  EXPECT_EQ(c.vision.feature_layers, 2);
  EXPECT_TRUE(c.vision.projector_bias);
}
