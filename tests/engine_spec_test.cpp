// --engine ENGINE[@VERSION]: the engine names and the version spellings real logs and launch
// commands carry (release tags with a 'v', "unknown" when a report does not say).
#include <gtest/gtest.h>

#include "headroom/deployment.h"
#include "headroom/error.h"

using namespace headroom;

TEST(EngineSpec, ReleaseTagsWithAVAreTheRelease) {
  // docker vllm/vllm-openai:v0.11.0, sglang's git tag v0.5.4, TensorRT-LLM's v1.0.0.
  EXPECT_EQ(parse_engine_spec("vllm@v0.11.0"), std::make_pair(EngineKind::VLLM, std::string("0.11.0")));
  EXPECT_EQ(parse_engine_spec("sglang@v0.5.4"), std::make_pair(EngineKind::SGLang, std::string("0.5.4")));
  EXPECT_EQ(parse_engine_spec("TensorRT-LLM@V1.0.0"), std::make_pair(EngineKind::TRTLLM, std::string("1.0.0")));
  // Not a version after the 'v': left for the engine's own parser to refuse.
  EXPECT_EQ(parse_engine_spec("vllm@vllm-build").second, "vllm-build");
}

TEST(EngineSpec, UnknownVersionIsTheNewestRules) {
  EXPECT_EQ(parse_engine_spec("vllm@unknown").second, "latest");
  EXPECT_EQ(parse_engine_spec("sglang@Nightly").second, "latest");
  // A dated unknown build keeps its date (the era is read from it).
  EXPECT_EQ(parse_engine_spec("vllm@unknown@2025-10-03").second, "unknown@2025-10-03");
}

TEST(EngineSpec, BadSpecsAreInputErrors) {
  EXPECT_THROW(parse_engine_spec("vllm@"), InputError);
  EXPECT_THROW(parse_engine_spec("tgi"), InputError);
  EXPECT_THROW(parse_engine_spec("llama.cpp"), InputError);
}
