// SGLang's check of --context-length against the model's derived context length
// (python/sglang/srt/configs/model_config.py get_context_length and the ValueError after it),
// with SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN turning the refusal into a warning.
#include <gtest/gtest.h>

#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

TEST(SglangContextLength, LongerThanDerivedIsRefusedUnlessTheEnvAllowsIt) {
  // Qwen3-8B: max_position_embeddings 40960, no rope_scaling -> derived 40960. SGLang's text, as a
  // deployment note quotes it: fails closed with "User-specified context_length (...) is greater than
  // the derived context_length" unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 is set.
  std::string e = input_error({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--context-length", "65536"});
  EXPECT_NE(e.find("User-specified context_length (65536) is greater than the derived context_length (40960)."), std::string::npos) << e;
  EXPECT_NE(e.find("set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"), std::string::npos) << e;
  EXPECT_EQ(input_error({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--context-length", "40960"}), "");
  // get_bool_env_var: "true" in any case allows it; "0" does not.
  Forecast f = run({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--context-length", "65536", "--env",
                    "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=TRUE"});
  EXPECT_NE(f.verdict, Verdict::Refused);
  EXPECT_NE(input_error({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--context-length", "65536", "--env",
                         "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=0"}),
            "");
}

TEST(SglangContextLength, RopeFactorOnlyWhenTheOriginalLengthIsNotNamed) {
  // DeepSeek-V3's YaRN block names original_max_position_embeddings (4096 x 40 = 163840 is already
  // max_position_embeddings), so SGLang keeps 163840 rather than multiplying by 40 again.
  EXPECT_NE(input_error({"--engine", "sglang", "--model", "deepseek-ai/DeepSeek-V3", "--gpu", "h200", "--tp", "8", "--context-length",
                         "163841"}),
            "");
  EXPECT_EQ(input_error({"--engine", "sglang", "--model", "deepseek-ai/DeepSeek-V3", "--gpu", "h200", "--tp", "8", "--context-length",
                         "163840"}),
            "");
}
