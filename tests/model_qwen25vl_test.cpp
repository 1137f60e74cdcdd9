// Model reader: Qwen2.5-VL (Qwen2_5_VLForConditionalGeneration) = Qwen2 text model (qkv bias, GQA)
// + the qwen2_5_vl vision tower (Conv3d patch embed without bias, RMSNorm blocks with a gated SwiGLU
// MLP, ln_q + two-linear merger). Parameter counts and checkpoint bytes against published figures
// (sources in data/models/Qwen/Qwen2.5-VL-*/facts.json), KV bytes per token by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "headroom/error.h"
#include "headroom/kv.h"
#include "headroom/model.h"

using namespace headroom;

namespace {
const TensorInfo* find_tensor(const Model& m, const std::string& name) {
  auto it = std::find_if(m.tensors.begin(), m.tensors.end(), [&](const TensorInfo& t) { return t.name == name; });
  return it == m.tensors.end() ? nullptr : &*it;
}
int64_t vision_params(const Model& m) {
  int64_t p = 0;
  for (const auto& t : m.tensors)
    if (t.role == TensorRole::Vision) p += t.params;
  return p;
}
}  // namespace

TEST(ModelQwen25VL, Qwen25VL7B_ParamsMatchPublished) {
  // Published: 8,292,166,656 parameters (Hugging Face numParameters for Qwen/Qwen2.5-VL-7B-Instruct, and a
  // transformers load printing the same count); visual 676,550,144, rest 7,615,616,512 (a freeze script's
  // printout); model.safetensors.index.json total_size 16,584,333,312. Sources: facts.json of the folder.
  // By hand, text (hidden 3584, 28 layers, 28 q / 4 kv heads of 128, intermediate 18944, vocab 152064, untied):
  //   layer: q 3584x3584 + 3584 bias = 12,848,640; k, v 512x3584 + 512 = 1,835,520 each; o 12,845,056;
  //          mlp 3 x 18944 x 3584 = 203,685,888; 2 norms 7,168 -> 233,057,792; x 28 = 6,525,618,176
  //   + final norm 3,584 + embed and lm_head 2 x 544,997,376 = 7,615,616,512.
  // Vision (hidden 1280, depth 32, intermediate 3420, merge 2 -> m = 5120, out 3584):
  //   patch_embed 1280 x 3 x 2 x 14 x 14 = 1,505,280 (no bias)
  //   block: norms 2,560; qkv 3840x1280 + 3840 = 4,919,040; proj 1,639,680; gate/up 2 x 4,381,020;
  //          down 4,378,880 -> 19,702,200 (the torchinfo figure per Qwen2_5_VLVisionBlock); x 32 = 630,470,400
  //   merger: ln_q 1,280; mlp.0 5120x5120 + 5120 = 26,219,520; mlp.2 3584x5120 + 3584 = 18,353,664
  //   -> 676,550,144.
  auto m = load_model("Qwen/Qwen2.5-VL-7B-Instruct");
  EXPECT_EQ(m->config.family, "llama");
  EXPECT_TRUE(m->config.attention_bias);
  EXPECT_EQ(m->config.vision.kind, "qwen2_5_vl");
  EXPECT_EQ(m->config.vision.params, 676'550'144);
  EXPECT_EQ(vision_params(*m), 676'550'144);  // the inventory spells out the same tensors
  EXPECT_EQ(m->params_total, 8'292'166'656);
  EXPECT_EQ(m->params_active, 7'615'616'512);  // per token: the text model
  EXPECT_EQ(m->checkpoint_bytes, 16'584'333'312);
  EXPECT_EQ(m->config.sliding_window, 0);  // null in this config; no windowed layers either way
}

TEST(ModelQwen25VL, Qwen25VL3B_ParamsMatchPublished) {
  // Published: 3,754,622,976 (sum of p.numel() after Qwen2_5_VLForConditionalGeneration.from_pretrained of 3B
  // checkpoints in public scripts; facts.json). By hand, text (hidden 2048, 36 layers, 16 q / 2 kv heads,
  // intermediate 11008, vocab 151936, tied embeddings):
  //   layer: q 4,196,352; k, v 524,544 each; o 4,194,304; mlp 67,633,152; norms 4,096 -> 77,076,992
  //          (the torchinfo figure per Qwen2_5_VLDecoderLayer); x 36 = 2,774,771,712
  //   + norm 2,048 + embed 311,164,928 (once: tied) = 3,085,938,688.
  // Vision as the 7B except merger mlp.2 2048x5120 + 2048 = 10,487,808 -> 668,684,288.
  auto m = load_model("Qwen/Qwen2.5-VL-3B-Instruct");
  EXPECT_TRUE(m->config.tie_word_embeddings);
  EXPECT_EQ(m->config.vision.params, 668'684'288);
  EXPECT_EQ(m->params_total, 3'754'622'976);
  EXPECT_EQ(m->params_active, 3'085'938'688);
  EXPECT_EQ(m->checkpoint_bytes, 2 * 3'754'622'976);  // BF16 throughout
  EXPECT_EQ(find_tensor(*m, "lm_head.weight"), nullptr);
}

TEST(ModelQwen25VL, VisionTensorsAsTheCheckpointNamesThem) {
  auto m = load_model("Qwen/Qwen2.5-VL-7B-Instruct");
  const TensorInfo* pe = find_tensor(*m, "visual.patch_embed.proj.weight");
  ASSERT_NE(pe, nullptr);
  EXPECT_EQ(pe->shape, (std::vector<int64_t>{1280, 3, 2, 14, 14}));
  EXPECT_EQ(find_tensor(*m, "visual.patch_embed.proj.bias"), nullptr);  // Conv3d(bias=False)
  EXPECT_EQ(find_tensor(*m, "visual.blocks.0.norm1.bias"), nullptr);    // RMSNorm: weight only
  ASSERT_NE(find_tensor(*m, "visual.blocks.31.mlp.gate_proj.bias"), nullptr);
  EXPECT_EQ(find_tensor(*m, "visual.blocks.31.mlp.down_proj.weight")->shape, (std::vector<int64_t>{1280, 3420}));
  EXPECT_EQ(find_tensor(*m, "visual.blocks.32.norm1.weight"), nullptr);  // depth 32
  EXPECT_EQ(find_tensor(*m, "visual.merger.mlp.2.weight")->shape, (std::vector<int64_t>{3584, 5120}));
  ASSERT_NE(find_tensor(*m, "model.layers.27.self_attn.k_proj.bias"), nullptr);  // Qwen2 qkv bias
  EXPECT_EQ(find_tensor(*m, "model.layers.0.self_attn.o_proj.bias"), nullptr);
  EXPECT_EQ(find_tensor(*m, "visual.blocks.0.attn.qkv.weight")->role, TensorRole::Vision);
}

TEST(ModelQwen25VL, KvBytesPerTokenAreTheTextModels) {
  // 7B: 28 layers x (K + V) x 4 kv heads x 128 x 2 bytes (BF16) = 57,344 per token at TP 1;
  // TP 2 splits the kv heads: 2 per rank -> 28,672. The vision tower keeps no KV cache.
  auto m = load_model("Qwen/Qwen2.5-VL-7B-Instruct");
  EXPECT_EQ(vllm_kv_per_token(m->config, Parallel{}, "auto", 90).total(), 57'344);
  EXPECT_EQ(sglang_kv_per_token(m->config, Parallel{}, "auto", 90).total(), 57'344);
  Parallel tp2;
  tp2.tp = 2;
  EXPECT_EQ(vllm_kv_per_token(m->config, tp2, "auto", 90).total(), 28'672);
  // 3B: 36 layers x 2 x 2 kv heads x 128 x 2 bytes = 36,864.
  auto s = load_model("Qwen/Qwen2.5-VL-3B-Instruct");
  EXPECT_EQ(vllm_kv_per_token(s->config, Parallel{}, "auto", 90).total(), 36'864);
}

TEST(ModelQwen25VL, NestedTextConfigAndInChannelsSpellingReadTheSame) {
  // Newer transformers saves nest the text model under text_config and add in_channels next to in_chans;
  // the counts must not change (7B dimensions; vision as above).
  const char* nested = R"({
    "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
    "tie_word_embeddings": false, "torch_dtype": "bfloat16",
    "text_config": {"hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28,
      "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064, "sliding_window": null,
      "use_sliding_window": false, "model_type": "qwen2_5_vl_text"},
    "vision_config": {"depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16,
      "in_channels": 3, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
      "temporal_patch_size": 2, "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31]}})";
  ModelConfig c = parse_model_config(nested, "nested/config.json");
  EXPECT_TRUE(c.attention_bias);
  EXPECT_EQ(c.hidden_size, 3584);
  EXPECT_EQ(c.vision.kind, "qwen2_5_vl");
  EXPECT_EQ(c.vision.params, 676'550'144);
}

TEST(ModelQwen25VL, MissingVisionFieldIsOneClearError) {
  const char* bad = R"({"architectures": ["Qwen2_5_VLForConditionalGeneration"], "hidden_size": 2048,
    "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 2, "vocab_size": 151936,
    "intermediate_size": 11008, "vision_config": {"depth": 32, "hidden_size": 1280, "intermediate_size": 3420}})";
  try {
    parse_model_config(bad, "bad/config.json");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("bad/config.json: vision_config"), std::string::npos) << w;
    EXPECT_NE(w.find("num_heads"), std::string::npos) << w;
    EXPECT_NE(w.find("missing"), std::string::npos) << w;
  }
}

// What SGLang's VLM memory adjustment sees (server_args.py adjust_mem_fraction_for_vlm:
// getattr(vision_config, "num_hidden_layers", 24)): Qwen towers spell their depth "depth"
// (transformers Qwen2_5_VLVisionConfig / Qwen3VLVisionConfig have no num_hidden_layers), so it
// reads the default; MoonViT's vt_num_hidden_layers is what Kimi-K2.5's real log shows it read
// (27 x 1152 in mem_fraction_static=0.8260405859375, tests/data/extra xsgl-005).
TEST(VisionConfigDepth, WhatSglangsVlmAdjustmentReads) {
  auto q25 = headroom::load_model("Qwen/Qwen2.5-VL-7B-Instruct");
  EXPECT_EQ(q25->config.vision.layers, 32);
  EXPECT_EQ(q25->config.vision.config_num_hidden_layers, 0);
  auto q3 = headroom::load_model("Qwen/Qwen3-VL-8B-Instruct");
  EXPECT_EQ(q3->config.vision.layers, 27);
  EXPECT_EQ(q3->config.vision.config_num_hidden_layers, 0);
  EXPECT_EQ(headroom::load_model("moonshotai/Kimi-K2.5")->config.vision.config_num_hidden_layers, 27);
}
