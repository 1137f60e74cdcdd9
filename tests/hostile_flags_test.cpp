// Checked arithmetic (issue 31): every flag value that used to wrap a byte or token product
// into a deployment that "fits" is refused, exit 2, one line naming the flag; the ceilings
// themselves plan without wrapping.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "headroom/cli.h"
#include "headroom/error.h"
#include "hostile_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {

void expect_refused_naming(const std::vector<std::string>& argv, const std::string& flag) {
  CliRun r = cli(argv);
  EXPECT_EQ(r.rc, kExitBadInput) << flag << ": " << r.out.substr(0, 300) << r.err;
  EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

std::vector<std::string> vllm(std::vector<std::string> extra, const std::string& engine = "vllm") {
  std::vector<std::string> v{"plan", "--engine", engine, "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--json"};
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}

}  // namespace

TEST(HostileFlags, OverflowingVllmFlagsAreRefusedNamingTheFlag) {
  expect_refused_naming(vllm({"--env", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", "--max-model-len", "4611686018427387904"}), "--max-model-len");
  expect_refused_naming(vllm({"--block-size", "9223372036854775807"}), "--block-size");
  expect_refused_naming(vllm({"--rope-scaling", R"({"rope_type":"yarn","factor":1e308,"original_max_position_embeddings":32768})"},
                             "vllm@0.10.2"),
                        "--rope-scaling");
  expect_refused_naming(vllm({"--enable-lora", "--max-lora-rank", "4611686018427387904"}), "--max-lora-rank");
  expect_refused_naming(vllm({"--enable-lora", "--max-loras", "4611686018427387904"}), "--max-loras");
  expect_refused_naming(vllm({"--max-num-batched-tokens", "4611686018427387904"}), "--max-num-batched-tokens");
  expect_refused_naming(vllm({"--max-num-batched-tokens", "4G"}), "--max-num-batched-tokens");  // human form too
}

TEST(HostileFlags, OverflowingSglangCudaGraphBsIsRefused) {
  expect_refused_naming({"plan", "--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--cuda-graph-bs", "1,2,66666666666666"},
                        "--cuda-graph-bs");
  expect_refused_naming({"plan", "--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--cuda-graph-bs", "0"}, "--cuda-graph-bs");
}

TEST(HostileFlags, TheCeilingsThemselvesPlanWithoutWrapping) {
  // At the ceilings the figures are huge but stay int64: no "fits" from a wrapped product.
  CliRun r = cli(vllm({"--env", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", "--max-model-len", "1073741824", "--max-num-batched-tokens", "1073741824"}));
  ASSERT_TRUE(r.rc == kExitOk || r.rc == kExitFails || r.rc == kExitBadInput) << r.rc << r.err;
  if (r.rc != kExitBadInput) {
    auto j = nlohmann::json::parse(r.out);
    EXPECT_NE(j["verdict"], "fits") << r.out.substr(0, 500);
    EXPECT_GE(j["kv_tokens"].get<int64_t>(), 0);
  }
  // A real deployment's values still plan: 32K context, 16K batched tokens, 8 LoRA adapters of rank 512.
  CliRun ok = cli(vllm({"--max-model-len", "32768", "--max-num-batched-tokens", "16384", "--enable-lora", "--max-lora-rank", "512", "--max-loras", "8"}));
  EXPECT_TRUE(ok.rc == kExitOk || ok.rc == kExitFails) << ok.err;
}
