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

TEST(CatalogLookup, SameNameUnderAnotherOwnerOrPathIsACopy) {
  auto m = load_model("/models/Qwen3-32B");
  EXPECT_EQ(m->checkpoint_bytes, load_model("Qwen/Qwen3-32B")->checkpoint_bytes);
  EXPECT_NE(m->resolved_note.find("using Qwen/Qwen3-32B (same repository name"), std::string::npos) << m->resolved_note;
  EXPECT_TRUE(load_model("Qwen/Qwen3-32B")->resolved_note.empty());
  EXPECT_TRUE(load_model("qwen/qwen3-32b")->resolved_note.empty());  // case only: the id itself
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
