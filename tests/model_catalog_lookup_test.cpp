// Catalog stand-ins (src/model/catalog_lookup.cpp): an id not in data/models is answered by a
// same-named copy or an official -FP8 sibling derived from its base, and each says so; anything
// else is still refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "headroom/embedded.h"
#include "headroom/error.h"
#include "headroom/model.h"
#include "model/model_internal.h"

namespace headroom {
namespace {

using model_detail::catalog_index;
using model_detail::with_fp8_block_quantization;

// Every <name>-FP8 in the catalog whose base <name> is there and falls under the rule: the base's config
// plus the block-FP8 quantization_config must give the real -FP8 file's checkpoint bytes exactly
// (this is the evidence behind deriving the -FP8 siblings the catalog lacks).
TEST(CatalogLookup, DerivedFp8MatchesEveryRealPairExactly) {
  namespace fs = std::filesystem;
  // One folder per process: ctest runs of several build dirs at once must not share the file.
  fs::path dir = fs::temp_directory_path() / ("headroom_fp8_pairs_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  int pairs = 0;
  for (const auto& [k, id] : catalog_index()) {
    if (id.size() < 5 || id.substr(id.size() - 4) != "-FP8") continue;
    std::string base = id.substr(0, id.size() - 4);
    if (!catalog_index().count(k.substr(0, k.size() - 4))) continue;
    if (!model_detail::derives_fp8_block_sibling(base)) continue;
    auto base_cfg = embedded_file("models/" + base + "/config.json");
    ASSERT_TRUE(base_cfg);
    fs::path p = dir / "config.json";
    std::ofstream(p) << with_fp8_block_quantization(*base_cfg, base);
    auto derived = load_model(p.string());
    auto real = load_model(id);
    EXPECT_EQ(derived->checkpoint_bytes, real->checkpoint_bytes) << id;
    EXPECT_EQ(derived->params_total, real->params_total) << id;
    ++pairs;
  }
  // Qwen3-235B-A22B, Qwen3-30B-A3B, Qwen3-32B, Qwen3-Coder-30B-A3B-Instruct, Qwen3-Next-80B-A3B-Instruct,
  // Qwen3-VL-30B-A3B-Instruct, Qwen3-VL-32B-Thinking, GLM-5, GLM-5.1, GLM-5.2, GLM-5.3, and Qwen3.x
  // pairs added later: at least the 11 present when the rule was written.
  EXPECT_GE(pairs, 11);
  fs::remove_all(dir);
}

TEST(CatalogLookup, Fp8SiblingOfQwenIsDerivedAndSaysSo) {
  auto m = load_model("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8");
  EXPECT_NE(m->resolved_note.find("derived from Qwen/Qwen3-235B-A22B-Instruct-2507"), std::string::npos) << m->resolved_note;
  EXPECT_EQ(m->config.hf_id, "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8");
  EXPECT_EQ(m->config.quant.method, QuantMethod::Fp8Block);
  // Same layer shapes as Qwen3-235B-A22B, whose real -FP8 config gives 236,445,455,360 bytes.
  EXPECT_EQ(m->checkpoint_bytes, load_model("Qwen/Qwen3-235B-A22B-FP8")->checkpoint_bytes);
  EXPECT_EQ(m->checkpoint_bytes, 236445455360);
  ASSERT_FALSE(m->notes.empty());
  EXPECT_EQ(m->notes.front(), m->resolved_note);
}

// The evidence behind deriving Google's Gemma bases from NVIDIA's ModelOpt NVFP4 copies: the one
// catalog pair (google/gemma-4-26B-A4B, nvidia/Gemma-4-26B-A4B-NVFP4) -- the copy's config without
// its quantization_config and without its hf_quant_config.json gives the real base's parameters and
// checkpoint bytes exactly.
TEST(CatalogLookup, GemmaBaseFromItsNvfp4CopyMatchesTheRealPair) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("headroom_nvfp4_base_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto copy_cfg = embedded_file("models/nvidia/Gemma-4-26B-A4B-NVFP4/config.json");
  ASSERT_TRUE(copy_cfg);
  fs::path p = dir / "config.json";
  std::ofstream(p) << model_detail::without_quantization(*copy_cfg, "nvidia/Gemma-4-26B-A4B-NVFP4");
  auto derived = load_model(p.string());
  auto real = load_model("google/gemma-4-26B-A4B");
  EXPECT_EQ(derived->config.quant.method, QuantMethod::None);
  EXPECT_EQ(derived->params_total, real->params_total);
  EXPECT_EQ(derived->checkpoint_bytes, real->checkpoint_bytes);
  EXPECT_LT(load_model("nvidia/Gemma-4-26B-A4B-NVFP4")->checkpoint_bytes, real->checkpoint_bytes);  // the copy itself is not
  fs::remove_all(dir);
}

TEST(CatalogLookup, Gemma4ThirtyOneBItIsDerivedFromNvidiasCopyAndSaysSo) {
  // google/gemma-4-31B-it's own config.json was not found (only links to it): the catalog has
  // nvidia/Gemma-4-31B-IT-NVFP4, ModelOpt's copy of it.
  auto m = load_model("google/gemma-4-31B-it");
  EXPECT_NE(m->resolved_note.find("derived from nvidia/Gemma-4-31B-IT-NVFP4"), std::string::npos) << m->resolved_note;
  EXPECT_EQ(m->config.hf_id, "google/gemma-4-31B-it");
  EXPECT_EQ(m->config.quant.method, QuantMethod::None);
  EXPECT_TRUE(m->config.quant.kv_cache_quant.empty());  // the FP8 KV of hf_quant_config.json is the copy's, not Google's
  auto copy = load_model("nvidia/Gemma-4-31B-IT-NVFP4");
  EXPECT_EQ(m->params_total, copy->params_total);
  EXPECT_GT(m->checkpoint_bytes, copy->checkpoint_bytes);
  // The real checkpoint's tensor bytes, as hf-mem reads them from its safetensors metadata
  // (alvarobartt/hf-mem PR #61, 2026-05-06: `hf-mem --model-id google/gemma-4-31B-it ... --json-output`
  // -> "memory": 62546177752): the derived config's 1,188 tensors give exactly that.
  EXPECT_EQ(m->checkpoint_bytes, 62546177752);
  ASSERT_FALSE(m->notes.empty());
  EXPECT_EQ(m->notes.front(), m->resolved_note);
  // Not for other owners: DeepSeek's base is FP8 itself (nvidia/DeepSeek-V3.1-NVFP4 replaced that).
  EXPECT_FALSE(model_detail::derives_base_from_nvfp4_copy("deepseek-ai/DeepSeek-V3.1"));
  EXPECT_THROW(load_model("deepseek-ai/DeepSeek-V3.1"), InputError);
  EXPECT_FALSE(model_detail::derives_base_from_nvfp4_copy("google/gemma-4-31B-it-NVFP4"));
}

TEST(CatalogLookup, SameNameUnderAnotherOwnerOrPathIsACopy) {
  auto m = load_model("/models/Qwen3-32B");
  EXPECT_EQ(m->checkpoint_bytes, load_model("Qwen/Qwen3-32B")->checkpoint_bytes);
  EXPECT_NE(m->resolved_note.find("using Qwen/Qwen3-32B (same repository name"), std::string::npos) << m->resolved_note;
  EXPECT_TRUE(load_model("Qwen/Qwen3-32B")->resolved_note.empty());
  EXPECT_TRUE(load_model("qwen/qwen3-32b")->resolved_note.empty());  // case only: the id itself
}

TEST(CatalogLookup, QwenAwqSiblingIsTheBaseInAutoAwqFourBit) {
  // Qwen/Qwen2.5-7B-Instruct-AWQ from Qwen/Qwen2.5-7B-Instruct: every decoder Linear (in, out) as
  // AutoAWQ's GEMM layout, qweight in*out/8 int32 + qzeros (in/128)*(out/8) int32 + scales
  // (in/128)*out fp16; q/k/v biases, norms, embeddings and lm_head in fp16. Per layer
  // 121,098,240 B (q, o 3584x3584; k, v 3584x512; gate, up 3584x18944; down 18944x3584), x 28 + 2 x
  // 152,064 x 3,584 x 2 + 7,168 = 5,570,747,392 B (by hand).
  auto m = load_model("Qwen/Qwen2.5-7B-Instruct-AWQ");
  EXPECT_EQ(m->checkpoint_bytes, 5570747392);
  EXPECT_EQ(m->config.quant.method, QuantMethod::Awq);
  EXPECT_NE(m->resolved_note.find("derived from Qwen/Qwen2.5-7B-Instruct's config plus the 4-bit AWQ"), std::string::npos) << m->resolved_note;
  // Not for other owners, nor for vision models (whose towers each release keeps its own way).
  EXPECT_THROW(load_model("meta-llama/Llama-3.1-8B-Instruct-AWQ"), InputError);
  EXPECT_FALSE(model_detail::derives_awq_sibling("Qwen/Qwen2.5-VL-7B-Instruct"));
  EXPECT_TRUE(model_detail::derives_awq_sibling("Qwen/Qwen3-8B"));
  EXPECT_FALSE(model_detail::derives_awq_sibling("Qwen/Qwen3-8B-FP8"));
}

TEST(CatalogLookup, OtherOwnersAndUnknownNamesAreStillRefused) {
  // Meta publishes no block-FP8 siblings: not derived.
  EXPECT_THROW(load_model("meta-llama/Llama-3.3-70B-Instruct-FP8"), InputError);
  // GLM-4.x -FP8 checkpoints are compressed-tensors, not block FP8 (zai-org/GLM-4.5-Air-FP8).
  EXPECT_THROW(load_model("zai-org/GLM-4.7-FP8"), InputError);
  EXPECT_FALSE(model_detail::derives_fp8_block_sibling("zai-org/GLM-4.5-Air"));
  EXPECT_TRUE(model_detail::derives_fp8_block_sibling("zai-org/GLM-5"));
  // A dated re-release is not its base: DeepSeek-V4-Flash-0731 stores about 8x the KV bytes per
  // token of DeepSeek-V4-Flash at the same flags (vllm#51041, corpus vllm-036).
  EXPECT_THROW(load_model("deepseek-ai/DeepSeek-V4-Flash-0731"), InputError);
  EXPECT_THROW(load_model("someone/No-Such-Model"), InputError);
}

}  // namespace
}  // namespace headroom
