// vLLM's MXFP4 MoE weights as loaded, by backend (vllm_plan.cpp mxfp4_expert_ratio, mirroring
// vllm/model_executor/layers/quantization/mxfp4.py): Marlin's padded experts before 0.11 and off
// sm90, the Triton backend's swizzled scales + fp32 biases on sm90 from 0.11, checked against the
// logged "Model loading took" of gpt-oss on H100.
#include <gtest/gtest.h>

#include <string>

#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
// The weights item of rank 0 ("model weights ..."), in GiB.
double weights_gib(const Forecast& f) {
  if (const Item* it = rank0_item(f, "model weights")) return to_gib(it->bytes);
  ADD_FAILURE() << "no weights item";
  return 0;
}
bool has_note(const Forecast& f, const std::string& part) {
  for (const auto& n : f.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST(VllmMxfp4, TritonBackendOnH100From011) {
  // gpt-oss-120b on one H100: "Model loading took 64.38 GiB" on vllm/vllm-openai:v0.11.0
  // (tests/data/extra/vllm.jsonl xvllm-024) and on 0.14.1 after "[mxfp4.py:165] Using Triton backend"
  // (vllm#33155). By hand: the checkpoint's 60.77 GiB + per expert (2,880 x 2,880, 128 experts x 36
  // layers) the swizzled scale copy 5,888 x 90 + 3,072 x 90 B and the biases again in fp32
  // (2 x 5,760 + 2 x 2,880 B): 4,608 x 823,680 B = 3.53 GiB -> 64.30 GiB, + the YaRN RoPE table
  // (4,096 x 32 rows x 64 x 2 B = 16 MiB, engines/rope_tables.cpp) = 64.32 GiB (-0.09%).
  Forecast f = run({"--engine", "vllm@0.11.0", "--model", "openai/gpt-oss-120b", "--gpu", "h100", "--max-model-len", "16000",
                    "--gpu-memory-utilization", "0.95"});
  EXPECT_NEAR(weights_gib(f), 64.32, 0.01);
  EXPECT_LT(std::abs(weights_gib(f) - 64.38) / 64.38, 0.002);
  EXPECT_TRUE(has_note(f, "Triton backend")) << "the GUESS about the install must be said";
  // gpt-oss-20b (24 layers x 32 experts): logged 13.47 GiB (xvllm-023); 12.82 + 0.57 + 0.016 (RoPE)
  // = 13.42 (-0.4%).
  Forecast s = run({"--engine", "vllm@0.11.0", "--model", "openai/gpt-oss-20b", "--gpu", "h100", "--max-model-len", "16000"});
  EXPECT_NEAR(weights_gib(s), 13.42, 0.01);
}

TEST(VllmMxfp4, MarlinBefore011AndWhenAsked) {
  // vllm-004 (2025-08-20, H100, "...leveraging the Marlin kernel"): "Model loading took 65.9651 GiB";
  // Marlin pads hidden 2,880 -> 3,072 and the intermediate 2,880 -> 2,944: 60.77 + 9.0% of 56.8 GiB,
  // + 16 MiB RoPE table = 65.92 GiB.
  Forecast old = run({"--engine", "vllm@0.10.1", "--model", "openai/gpt-oss-120b", "--gpu", "h100", "--max-model-len", "16000"});
  EXPECT_NEAR(weights_gib(old), 65.92, 0.01);
  EXPECT_FALSE(has_note(old, "Triton backend"));
  // VLLM_MXFP4_USE_MARLIN=1 (vllm/envs.py, bool(int())) takes Marlin on 0.11 too.
  Forecast forced = run({"--engine", "vllm@0.11.0", "--model", "openai/gpt-oss-120b", "--gpu", "h100", "--max-model-len", "16000",
                         "--env", "VLLM_MXFP4_USE_MARLIN=1"});
  EXPECT_NEAR(weights_gib(forced), 65.92, 0.01);
  EXPECT_FALSE(has_note(forced, "is not modelled"));
  // An A100 (sm80) is outside triton_kernels' sm90..sm10x range: Marlin whatever the version.
  Forecast a100 = run({"--engine", "vllm@0.11.0", "--model", "openai/gpt-oss-20b", "--gpu", "a100-80gb", "--max-model-len", "16000"});
  Forecast a100_old = run({"--engine", "vllm@0.10.1", "--model", "openai/gpt-oss-20b", "--gpu", "a100-80gb", "--max-model-len", "16000"});
  EXPECT_DOUBLE_EQ(weights_gib(a100), weights_gib(a100_old));
}

TEST(VllmMxfp4, UnreadableBackendVariableIsOneLineError) {
  const std::string e = input_error({"--engine", "vllm@0.11.0", "--model", "openai/gpt-oss-20b", "--gpu", "h100", "--env",
                                     "VLLM_MXFP4_USE_MARLIN=yes"});
  EXPECT_NE(e.find("VLLM_MXFP4_USE_MARLIN"), std::string::npos) << e;
  EXPECT_NE(e.find("not an integer"), std::string::npos) << e;
}
