// --engine ENGINE[@VERSION]: the engine names and the version spellings real logs and launch
// commands carry (release tags with a 'v', "unknown" when a report does not say).
#include <gtest/gtest.h>

#include "headroom/deployment.h"
#include "headroom/engine.h"
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
  EXPECT_THROW(parse_engine_spec("tensorrt"), InputError);
  // llama.cpp is the fourth engine (issue 25): both spellings, a build after '@'.
  EXPECT_EQ(parse_engine_spec("llama.cpp").first, EngineKind::LlamaCpp);
  EXPECT_EQ(parse_engine_spec("llamacpp@b8157").second, "b8157");
}

TEST(EngineSpec, DockerTagsBareDatesAndNgcContainers) {
  // A docker image as reports paste it: the tag is the version.
  EXPECT_EQ(parse_engine_spec("sglang@lmsysorg/sglang:v0.5.2-cu126").second, "0.5.2-cu126");
  EXPECT_EQ(parse_engine_spec("vllm@vllm/vllm-openai:v0.11.0").second, "0.11.0");
  // A bare date dates an unnumbered build.
  EXPECT_EQ(parse_engine_spec("vllm@2025-08-01").second, "unknown@2025-08-01");
  EXPECT_EQ(parse_engine_spec("trtllm@2026-03").second, "unknown@2026-03");
  // NGC monthly containers: nvcr.io/nvidia/vllm:26.01-py3 (xvllm-018 ran "26.01", vLLM 0.13.0),
  // tritonserver:24.02-trtllm-python-py3 (TensorRT-LLM release/0.8): the first of that month.
  EXPECT_EQ(parse_engine_spec("vllm@26.01").second, "ngc@2026-01-01");
  EXPECT_EQ(parse_engine_spec("trtllm@nvcr.io/nvidia/tritonserver:24.02-trtllm-python-py3").second, "ngc@2024-02-01");
  // How it was built, not which version: the newest rules. Any other word stays the engine's to refuse.
  EXPECT_EQ(parse_engine_spec("sglang@source").second, "latest");
  EXPECT_EQ(parse_engine_spec("vllm@Docker").second, "latest");
  EXPECT_EQ(parse_engine_spec("vllm@banana").second, "banana");
  // Release numbers are left alone ("0.10" is not a YY.MM container).
  EXPECT_EQ(parse_engine_spec("vllm@0.10.2").second, "0.10.2");
  EXPECT_EQ(parse_engine_spec("trtllm@1.2.0rc2").second, "1.2.0rc2");
}

TEST(EngineSpec, DatedBuildWordsAndBareYears) {
  // Nightly / dev labels with a date read as builds of that day; a bare year as its newest release.
  EXPECT_EQ(parse_engine_spec("vllm@nightly-2026-03-01").second, "unknown@2026-03-01");
  EXPECT_EQ(parse_engine_spec("vllm@nightly-20260301").second, "unknown@2026-03-01");
  EXPECT_EQ(parse_engine_spec("sglang@dev-2025-10").second, "unknown@2025-10");
  EXPECT_EQ(parse_engine_spec("vllm@2025").second, "unknown@2025");
  EXPECT_THROW(plan(parse_deployment(Args::parse({"--engine", "vllm@sglang-0.5.2", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"}))), InputError);
}
