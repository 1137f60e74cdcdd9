// The one reading of ENGINE@VERSION (include/headroom/engine_version.h, docs/reference.md
// "Engine versions"): each form, the same meaning for every engine, and one line for the rest.
#include <gtest/gtest.h>

#include "headroom/deployment.h"
#include "headroom/engine_traits.h"
#include "headroom/engine_version.h"
#include "headroom/error.h"

using namespace headroom;
using Form = EngineVersion::Form;

TEST(EngineVersion, NewestWordsAndUndatedBuilds) {
  for (const char* v : {"", "latest", "newest", "main", "unknown", "nightly", "main@abc123", "unknown@"})
    for (EngineKind e : {EngineKind::VLLM, EngineKind::SGLang, EngineKind::TRTLLM, EngineKind::LlamaCpp})
      EXPECT_EQ(parse_engine_version(e, v).form, Form::Newest) << v;
  EXPECT_EQ(parse_engine_version(EngineKind::VLLM, "0.1.dev8+gabc").form, Form::Newest);
}

TEST(EngineVersion, Releases) {
  EXPECT_EQ(parse_engine_version(EngineKind::VLLM, "0.10.2").release, 1002);
  EXPECT_EQ(parse_engine_version(EngineKind::VLLM, "0.6.6.post1").release, 606);
  EXPECT_EQ(parse_engine_version(EngineKind::TRTLLM, "1.2.0rc2").release, 10200);
  EXPECT_EQ(parse_engine_version(EngineKind::SGLang, "0.5").release, 500);
  const EngineVersion fork = parse_engine_version(EngineKind::TRTLLM, "1.2.0rc2@fork");  // the number decides
  EXPECT_EQ(fork.form, Form::Release);
  EXPECT_EQ(fork.release, 10200);
}

TEST(EngineVersion, DatesMeanTheSameForEveryEngine) {
  // A day is that day; a month its 28th; a bare year 28 December (the newest release of the period).
  for (EngineKind e : {EngineKind::VLLM, EngineKind::SGLang, EngineKind::TRTLLM}) {
    EXPECT_EQ(parse_engine_version(e, "main@2025-10-16").date, 20251016);
    EXPECT_EQ(parse_engine_version(e, "docker@2025-04").date, 20250428);
    EXPECT_EQ(parse_engine_version(e, "unknown@2025").date, 20251228);
    EXPECT_EQ(parse_engine_version(e, "1.2.0rc2@2025-11-03").form, Form::Dated);  // a date wins over the number
  }
}

TEST(EngineVersion, LlamaCppBuilds) {
  EXPECT_EQ(parse_engine_version(EngineKind::LlamaCpp, "b8157").build, 8157);
  EXPECT_EQ(parse_engine_version(EngineKind::LlamaCpp, "B5622").build, 5622);
  EXPECT_EQ(parse_engine_version(EngineKind::LlamaCpp, "6895").form, Form::Build);
  EXPECT_THROW(parse_engine_version(EngineKind::LlamaCpp, "0.10.2"), InputError);
  EXPECT_THROW(parse_engine_version(EngineKind::LlamaCpp, "b1234567"), InputError);
}

TEST(EngineVersion, UnreadableTextIsOneLine) {
  for (const char* v : {"banana", "10.2.3", "0.x", "docker@yesterday"}) {
    try {
      parse_engine_version(EngineKind::VLLM, v);
      ADD_FAILURE() << v << " was read";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("vllm@"), std::string::npos) << msg;
      EXPECT_NE(msg.find("cannot read the version"), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

TEST(EngineTraits, NamesAliasesAndKnobsComeFromOneTable) {
  ASSERT_NE(traits_by_name("TensorRT-LLM"), nullptr);
  EXPECT_EQ(traits_by_name("TensorRT-LLM")->kind, EngineKind::TRTLLM);
  EXPECT_EQ(traits_by_name("llama.cpp")->kind, EngineKind::LlamaCpp);
  EXPECT_EQ(traits_by_name("vllm-openai"), nullptr);
  EXPECT_EQ(traits(EngineKind::SGLang).memory_flag, "--mem-fraction-static");
  EXPECT_EQ(traits(EngineKind::TRTLLM).tp_flag, "--tp_size");
  // parse_engine_spec reads the same table.
  EXPECT_EQ(parse_engine_spec("trt-llm@1.2.0rc2").first, EngineKind::TRTLLM);
  EXPECT_THROW(parse_engine_spec("vlm"), InputError);
}
