// RoPE cos/sin tables in the per-rank weight bytes (engines/rope_tables.cpp), sizes computed by hand
// from the catalog configs and the engines' rotary_embedding sources; logged weights in comments.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engines/rope_tables.h"
#include "headroom/error.h"
#include "headroom/layout.h"
#include "headroom/model.h"

using namespace headroom;

namespace {
Parallel par(int tp, int pp = 1) {
  Parallel p;
  p.tp = tp;
  p.pp = pp;
  return p;
}
int64_t rope_component(const RankWeights& r) {
  for (const auto& [k, v] : r.by_component)
    if (k == "rope_tables") return v;
  return 0;
}
}  // namespace

TEST(RopeTables, Llama31_8B) {
  // max_position_embeddings 131,072, head_dim 128, rope_type llama3 (rows = max_position).
  // vLLM: bf16 -> 131,072 x 128 x 2 = 33,554,432 (32 MiB). Logged "Model loading took 14.9888 GiB"
  // (corpus vllm-021 / vllm-055) against 14.96 GiB of checkpoint tensors before this term.
  auto m = load_model("meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(m->config.rotary_dim, 128);
  const auto v = rope_table_bytes(m->config, EngineKind::VLLM, 0, 32);
  EXPECT_EQ(v.bytes, 33'554'432);
  EXPECT_NE(v.what.find("rotary_embedding/base.py"), std::string::npos) << v.what;
  // SGLang keeps the table FP32 on CUDA: 64 MiB.
  EXPECT_EQ(rope_table_bytes(m->config, EngineKind::SGLang, 0, 32).bytes, 67'108'864);
  EXPECT_EQ(rope_table_bytes(m->config, EngineKind::TRTLLM, 0, 32).bytes, 0);
  // Replicated on every TP rank.
  for (const auto& r : weights_per_rank(*m, EngineKind::VLLM, par(2))) EXPECT_EQ(rope_component(r), 33'554'432);
}

TEST(RopeTables, Llama32_1B) {
  // head_dim 64: 131,072 x 64 x 2 = 16,777,216. Logged 2.3185 GiB (corpus vllm-019) vs 2.30 before.
  auto m = load_model("meta-llama/Llama-3.2-1B");
  EXPECT_EQ(rope_table_bytes(m->config, EngineKind::VLLM, 0, 16).bytes, 16'777'216);
}

TEST(RopeTables, PartialRotaryQwen3Next) {
  // partial_rotary_factor 0.25 x head_dim 256 = 64; max_position 262,144; only the full-attention
  // layers (every 4th) use RoPE: 262,144 x 64 x 2 = 33,554,432. Corpus vllm-048 (TP 2) logged
  // 74.2812 GiB per rank against 74.25 before.
  auto m = load_model("Qwen/Qwen3-Next-80B-A3B-Instruct");
  EXPECT_EQ(m->config.rotary_dim, 64);
  EXPECT_EQ(rope_table_bytes(m->config, EngineKind::VLLM, 0, 48).bytes, 33'554'432);
  // Layers 0-2 are linear attention: a stage holding only them builds no table.
  EXPECT_EQ(rope_table_bytes(m->config, EngineKind::VLLM, 0, 3).bytes, 0);
}

TEST(RopeTables, Gemma4TwoTables) {
  // Gemma-4 31B: full-attention layers use "proportional" RoPE with global_head_dim 512 (table as wide
  // as the head, gemma4_rope.py), sliding layers a default table of head_dim 256; 262,144 positions:
  // 262,144 x (512 + 256) x 2 = 402,653,184 (0.375 GiB). Corpus vllm-031 logged 31.18 GiB vs 30.60.
  auto m = load_model("nvidia/Gemma-4-31B-IT-NVFP4");
  EXPECT_EQ(m->config.rotary_dim, 512);
  EXPECT_EQ(m->config.rope_local_rotary_dim, 256);
  EXPECT_EQ(rope_table_bytes(m->config, EngineKind::VLLM, 0, static_cast<int>(m->config.num_layers)).bytes, 402'653'184);
}

TEST(RopeTables, Gemma3LinearScaledGlobalTable) {
  // gemma-3-27b: rope_scaling linear factor 8 -> LinearScalingRotaryEmbedding builds 131,072 x 8 rows
  // of head_dim 128; sliding layers (rope_local_base_freq) a second 131,072-row table:
  // (1,048,576 + 131,072) x 128 x 2 = 301,989,888.
  auto m = load_model("google/gemma-3-27b-it");
  EXPECT_EQ(rope_table_bytes(m->config, EngineKind::VLLM, 0, static_cast<int>(m->config.num_layers)).bytes, 301'989'888);
}

TEST(RopeTables, YarnAndNoRope) {
  // gpt-oss-120b: yarn, original_max_position 4,096 x factor 32 = 131,072 rows, head_dim 64:
  // 131,072 x 64 x 2 = 16,777,216 on vLLM.
  auto g = load_model("openai/gpt-oss-120b");
  EXPECT_EQ(rope_table_bytes(g->config, EngineKind::VLLM, 0, 36).bytes, 16'777'216);
  // Nemotron-H attention has no positional encoding (nemotron_h.py NemotronHAttention).
  auto n = load_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
  EXPECT_EQ(n->config.rotary_dim, 0);
  EXPECT_EQ(rope_table_bytes(n->config, EngineKind::VLLM, 0, static_cast<int>(n->config.num_layers)).bytes, 0);
}

TEST(RopeTables, MultimodalRopeIsFourTimesLongerOnVllm) {
  // Qwen3-VL-8B: head_dim 128, 262,144 positions, multimodal RoPE. vLLM's MRotaryEmbedding builds
  // 4 x 262,144 rows (mrope.py cache_max_position_num): 1,048,576 x 128 x 2 = 268,435,456;
  // SGLang's keeps 262,144 rows in FP32: 262,144 x 128 x 4 = 134,217,728.
  auto m = load_model("Qwen/Qwen3-VL-8B-Instruct");
  EXPECT_TRUE(m->config.rope_mrope);
  EXPECT_EQ(rope_table_bytes(m->config, EngineKind::VLLM, 0, 36).bytes, 268'435'456);
  EXPECT_EQ(rope_table_bytes(m->config, EngineKind::SGLang, 0, 36).bytes, 134'217'728);
}

TEST(RopeTables, ConfigRotaryWidthAndBadFactor) {
  // A Llama-shaped config with partial_rotary_factor 0.5 (GLM-4.5 style, top level): head_dim 64 ->
  // rotary_dim 32; 4,096 positions x 32 x 2 B = 262,144 B on vLLM. A factor above 1 is refused, as
  // vLLM's get_rope refuses it ("must be between 0.0 and 1.0").
  const std::string dir = ::testing::TempDir() + "/rope_partial";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& factor) {
    std::ofstream(dir + "/config.json") << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 512, "num_hidden_layers": 2,
      "vocab_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 1024,
      "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "partial_rotary_factor": )" << factor << "}";
  };
  write("0.5");
  auto m = load_model(dir);
  EXPECT_EQ(m->config.rotary_dim, 32);
  EXPECT_EQ(rope_table_bytes(m->config, EngineKind::VLLM, 0, 2).bytes, 262'144);
  write("1.5");
  EXPECT_THROW(load_model(dir), InputError);
}
