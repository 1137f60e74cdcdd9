// vLLM's check of --max-model-len against the model's derived context limit
// (vllm/config/model.py _get_and_verify_max_len): the limit from max_position_embeddings and
// rope scaling, the refusal in each era's words (exit 2), and VLLM_ALLOW_LONG_MAX_MODEL_LEN.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "headroom/forecast.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
// A Qwen2.5-7B-shaped config with the rope_scaling block Qwen's model card tells users to add
// for long context (YaRN, factor 4 over the 32768 it was trained at).
std::string yarn_config(const std::string& original = "32768") {
  auto dir = std::filesystem::temp_directory_path() / ("headroom_vllm_max_len_test_" + original);
  std::filesystem::create_directories(dir);
  auto path = dir / "config.json";
  std::ofstream(path) << R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "torch_dtype": "bfloat16",
    "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
    "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768, "tie_word_embeddings": false,
    "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": )" << original << R"(, "type": "yarn"}})";
  return path.string();
}
}  // namespace

TEST(VllmMaxLen, LongerThanConfigIsRefusedInTheEnginesWords) {
  // Qwen3-8B's config has max_position_embeddings 40960 and no rope_scaling. The 2026 text is the
  // one a real 0.11+ log prints (pydantic ModelConfig, e.g. "... (max_position_embeddings=8192 or
  // model_max_length=None in model's config.json). To allow overriding this maximum, set the env
  // var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution.").
  std::string e = input_error({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-model-len", "65536"});
  EXPECT_NE(e.find("--max-model-len"), std::string::npos) << e;
  EXPECT_NE(e.find("User-specified max_model_len (65536) is greater than the derived max_model_len (max_position_embeddings=40960 or "
                   "model_max_length=None in model's config.json). To allow overriding this maximum, set the env var "
                   "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution."),
            std::string::npos)
      << e;
  // Before 0.11 the message ended "This may lead to incorrect model outputs or CUDA errors. To allow
  // overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" (a Qwen2.5-72B report:
  // "User-specified max_model_len (131072) is greater than the derived max_model_len (max_position_embeddings=32768 ...").
  e = input_error({"--engine", "vllm@0.9.2", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-model-len", "65536"});
  EXPECT_NE(e.find("This may lead to incorrect model outputs or CUDA errors."), std::string::npos) << e;
  // Exactly the limit plans.
  EXPECT_EQ(input_error({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-model-len", "40960"}), "");
}

TEST(VllmMaxLen, AllowLongEnvLetsItStartWithANote) {
  // vllm/envs.py: VLLM_ALLOW_LONG_MAX_MODEL_LEN is true for "1" or "true" (any case); "0" keeps the refusal.
  Forecast f = run({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-model-len", "65536", "--env",
                    "VLLM_ALLOW_LONG_MAX_MODEL_LEN=True"});
  EXPECT_EQ(*f.setting("--max-model-len"), "65536");
  EXPECT_NE(input_error({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-model-len", "65536", "--env",
                         "VLLM_ALLOW_LONG_MAX_MODEL_LEN=0"}),
            "");
}

TEST(VllmMaxLen, RopeScalingSetsTheDerivedLimit) {
  // YaRN: original_max_position_embeddings x factor = 32768 x 4 = 131072 is the default and the limit.
  const std::string cfg = yarn_config();
  Forecast f = run({"--engine", "vllm", "--model", cfg, "--gpu", "h100"});
  EXPECT_EQ(*f.setting("--max-model-len"), "131072");
  EXPECT_NE(input_error({"--engine", "vllm", "--model", cfg, "--gpu", "h100", "--max-model-len", "131073"}), "");
  // YaRN scales the original length, not max_position_embeddings, also when the original is written
  // as a float: 16384.0 x 4 = 65536 (x 4 of the 32768 key would be 131072).
  EXPECT_EQ(*run({"--engine", "vllm", "--model", yarn_config("16384.0"), "--gpu", "h100"}).setting("--max-model-len"), "65536");
  // llama3 rope already encodes the factor: Llama-3.1-8B's limit is its max_position_embeddings 131072, not x 8.
  EXPECT_EQ(*run({"--engine", "vllm", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100"}).setting("--max-model-len"), "131072");
  // DeepSeek-V4-Flash YaRN: 65536 x 16 = 1048576, printed in full as vLLM prints the length.
  std::string e = input_error({"--engine", "vllm", "--model", "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "b200", "--tp", "4", "--max-model-len", "2000000"});
  EXPECT_NE(e.find("(max_position_embeddings=1048576 or model_max_length=None"), std::string::npos) << e;
  // DeepSeek-V3 YaRN: 4096 x 40 = 163840 (= its max_position_embeddings).
  EXPECT_NE(input_error({"--engine", "vllm", "--model", "deepseek-ai/DeepSeek-V3", "--gpu", "h200", "--tp", "8", "--max-model-len", "163841"}),
            "");
}

TEST(VllmMaxLen, RopeScalingFromTheCommandLineRaisesTheDerivedLimit) {
  // Qwen3-8B: max_position_embeddings 40,960, no rope scaling in its config. Qwen's long-context
  // recipe passes YaRN factor 4 over 32,768 original positions: vLLM derives 32,768 x 4 = 131,072
  // (config/model.py _get_and_verify_max_len), so --max-model-len 131072 starts; without it it is refused.
  const std::string yarn = R"({"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768})";
  auto go = [](std::vector<std::string> extra) {
    std::vector<std::string> v{"--engine", "vllm@0.10.2", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"};
    v.insert(v.end(), extra.begin(), extra.end());
    return plan(parse_deployment(Args::parse(v)));
  };
  EXPECT_THROW(go({"--max-model-len", "131072"}), InputError);
  EXPECT_EQ(go({"--max-model-len", "131072", "--rope-scaling", yarn}).context_len, 131072);
  EXPECT_EQ(go({"--hf-overrides", R"({"rope_scaling":)" + yarn + "}"}).context_len, 131072);  // the default follows
}
