// Catalog additions of the third collection pass (data/models, see INDEX.md): each new config is
// read by the model reader and its parameter count is pinned against a published figure (the
// Hugging Face API's safetensors total, a model report's summed safetensors) or, where none was
// found, against the hand arithmetic written next to it.
#include <gtest/gtest.h>

#include "headroom/model.h"

using namespace headroom;

TEST(ModelCatalog2, Llama32_1B_Instruct_MatchesHfSafetensorsTotal) {
  // Hugging Face API record of meta-llama/Llama-3.2-1B-Instruct (sha 9213176..., copied in
  // daniel-p-green/alain-ai-learning-platform out/research-meta-llama-llama-3-2-1b-instruct/
  // sources/huggingface/model.json): "safetensors":{"parameters":{"BF16":1235814400}}.
  // Hand: layer = q 2048x2048 + k,v 512x2048 each + o 2048x2048 + mlp 3x8192x2048 + 2 norms
  //       = 60,821,504; x16 = 973,144,064; + tied embedding 128256x2048 = 262,668,288; + 2048.
  auto m = load_model("meta-llama/Llama-3.2-1B-Instruct");
  EXPECT_EQ(m->params_total, 1'235'814'400);
  EXPECT_EQ(m->checkpoint_bytes, int64_t{2} * 1'235'814'400);  // BF16
  EXPECT_EQ(m->config.num_layers, 16);
}

TEST(ModelCatalog2, Llama32_3B_Instruct_HandCount) {
  // layer = q 3072x3072 + k,v 1024x3072 each + o 3072x3072 + mlp 3x8192x3072 + 2 norms
  //       = 100,669,440; x28 = 2,818,744,320; + tied embedding 128256x3072 = 394,002,432; + 3072.
  auto m = load_model("meta-llama/Llama-3.2-3B-Instruct");
  EXPECT_EQ(m->params_total, 3'212'749'824);
  EXPECT_EQ(m->checkpoint_bytes, 2 * 3'212'749'824);
}

TEST(ModelCatalog2, Qwen25_3B_Instruct_MatchesReportParamTotal) {
  // Model report quoting the config (search-index file id 62693603738): '参数总量: 3,085,938,688'
  // over 434 BF16 tensors. Hand: layer = q 2048x2048+2048 + k,v 256x2048+256 each
  //       + o 2048x2048 + mlp 3x11008x2048 + 2 norms = 77,076,992; x36 + tied 151936x2048 + 2048.
  auto m = load_model("Qwen/Qwen2.5-3B-Instruct");
  EXPECT_EQ(m->params_total, 3'085'938'688);
  EXPECT_EQ(m->checkpoint_bytes, 2 * 3'085'938'688);
}

TEST(ModelCatalog2, Qwen25_32B_And_Coder32B_SameShapesAsQwq) {
  // Hand: layer = q 5120x5120+5120 + k,v 1024x5120+1024 each + o 5120x5120 + mlp 3x27648x5120
  //       + 2 norms = 487,605,248; x64 = 31,206,735,872; + embed and lm_head 2x152064x5120
  //       + 5120 = 32,763,876,352. The same shapes' published totals: the Hugging Face API's
  // safetensors total of deepseek-ai/DeepSeek-R1-Distill-Qwen-32B (alain-ai-learning-platform
  // out/research-deepseek-ai-deepseek-r1-distill-qwen-32b/sources/huggingface/model.json:
  // "total":32763876352) and the QwQ-32B report's 32,763,876,352.
  for (const char* id : {"Qwen/Qwen2.5-32B", "Qwen/Qwen2.5-Coder-32B-Instruct"}) {
    SCOPED_TRACE(id);
    auto m = load_model(id);
    EXPECT_EQ(m->params_total, 32'763'876'352);
    EXPECT_EQ(m->checkpoint_bytes, 2 * 32'763'876'352);
  }
}
