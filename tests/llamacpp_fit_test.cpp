// llama.cpp's --fit (common/fit.cpp, src/engines/llamacpp/fit.cpp): the context step by era, the
// layers per device on several GPUs (dense and MoE) checked against an exhaustive search through
// the plan itself (the false-position search must find the most layers that keep each target),
// and the overrides it writes, in llama-fit-params' own form.
#include <gtest/gtest.h>

#include <algorithm>

#include "engines/llamacpp/llamacpp_constants.h"
#include "plan_test_util.h"

using namespace headroom;
using headroom::test::device;
using headroom::test::plus;
using headroom::test::run;

namespace {

constexpr int64_t MiB = 1 << 20;
// What the plan takes the GPU runtime to hold before llama.cpp reads free memory (an estimate, its
// central value) and --fit's default target (1024 MiB, common/arg.cpp).
const int64_t kRuntime = static_cast<int64_t>(llamacpp::constant(llamacpp::Const::RuntimeContext).central * MiB);
constexpr int64_t kTarget = 1024 * MiB;

// What fit projects a device to use: model + context + compute.
int64_t used(const DeviceMemory& d) {
  return d.model_buffer_bytes + d.kv_buffer_bytes + d.compute_buffer_bytes + d.recurrent_state_bytes + d.indexer_cache_bytes;
}
bool keeps_target(const DeviceMemory& d) { return used(d) <= d.capacity_bytes - kRuntime - kTarget; }

}  // namespace

TEST(LlamacppFit, OldBuildsShrinkTheContextByKvBytesPerToken) {
  // llamacpp-007 (b6895, tools/fit-params README): F16 Qwen3-30B-A3B on one RTX 4090. The log:
  // "context size reduced from 40960 to 4096 -> need 3456 MiB less memory in total" = 48 layers x
  // 4 KV heads x 128 x 2 (K, V) x 2 B x 36864 tokens; then experts of some layers go to the host.
  const std::vector<std::string> base = {"--engine", "llamacpp@b6895", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "F16", "--gpu", "rtx-4090"};
  const Forecast f = run(base);
  EXPECT_TRUE(test::has_prefix(f, "llama_params_fit_impl: cannot fulfill margin of 1024 MiB, need to reduce device memory by"));
  EXPECT_TRUE(test::has_line(f, "llama_params_fit_impl: context size reduced from 40960 to 4096 -> need 3456 MiB less memory in total"));
  EXPECT_TRUE(test::has_prefix(f, "llama_params_fit_impl: with only dense weights in device memory there is a total surplus of"));
  EXPECT_EQ(f.verdict, Verdict::Fits);
  EXPECT_EQ(f.kv_tokens, 4096);
  EXPECT_TRUE(keeps_target(device(f, "CUDA0")));
  EXPECT_GT(device(f, "CPU_Mapped").model_buffer_bytes, 20 * 1024 * MiB);  // most experts on the host
  // The overrides as llama-fit-params prints them: the first partial layer, then experts only.
  const std::string* ot = f.setting("--override-tensor");
  ASSERT_NE(ot, nullptr);
  EXPECT_NE(ot->find(R"(\.ffn_(up|down|gate_up|gate)_(ch|)exps=CPU)"), std::string::npos) << *ot;
  EXPECT_EQ(ot->rfind(R"(blk\.)", 0), 0u) << *ot;
  // Without fit the 57 GiB of weights are the failure; with -ngl set fit gives up on the layers.
  const Forecast off = run(plus(base, {"--fit", "off"}));
  ASSERT_TRUE(off.failure);
  EXPECT_EQ(off.failure->stage, StageId::Weights);
  const Forecast ngl = run(plus(base, {"-ngl", "99"}));
  EXPECT_TRUE(test::has_line(ngl, "llama_params_fit_impl: failed to fit params to free device memory: n_gpu_layers already set by user to 99, abort"));
  EXPECT_TRUE(std::any_of(ngl.notes.begin(), ngl.notes.end(), [](const std::string& n) { return n.find("-ngl auto (the default)") != std::string::npos; }));
  // -ngl auto is llama.cpp's default: fit still chooses (common/arg.cpp: auto = -1, all = -2).
  EXPECT_EQ(run(plus(base, {"-ngl", "auto"})).verdict, Verdict::Fits);
  EXPECT_TRUE(test::has_line(run(plus(base, {"-ngl", "all"})),
                             "llama_params_fit_impl: failed to fit params to free device memory: n_gpu_layers already set by user to -2, abort"));
  EXPECT_EQ(ngl.verdict, Verdict::Oom);
  // Builds before --fit plan the values as given.
  EXPECT_EQ(run({"--engine", "llamacpp@b6000", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "F16", "--gpu", "rtx-4090", "-ngl", "99"}).verdict,
            Verdict::Oom);
}

TEST(LlamacppFit, NewerBuildsInterpolateTheContextAndRoundTo256) {
  // PR #18372 (b7490+): the context between --fit-ctx and the model's, linear in the projected use,
  // rounded down to 256. Qwen3-8B Q8_0 on a 12 GB card: the 40960-token cache does not fit.
  const Forecast f = run({"--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q8_0", "--gpu", "rtx-4070"});
  EXPECT_TRUE(test::has_prefix(f, "llama_params_fit_impl: context size reduced from 40960 to "));
  EXPECT_TRUE(test::has_line(f, "llama_params_fit_impl: entire model can be fit by reducing context"));
  EXPECT_EQ(f.kv_tokens % 256, 0);
  EXPECT_GT(f.kv_tokens, 4096);
  EXPECT_LT(f.kv_tokens, 40960);
  EXPECT_TRUE(keeps_target(device(f, "CUDA0")));
  // 256 more tokens would not keep the target: the interpolation is exact for a linear cache.
  const Forecast more = run({"--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q8_0", "--gpu", "rtx-4070", "--fit", "off", "-c",
                             std::to_string(f.kv_tokens + 256)});
  EXPECT_FALSE(keeps_target(device(more, "CUDA0")));
  // An explicit -c 0 asks for the model's whole context: fit leaves it (PR #19070, b7810+).
  const Forecast full = run({"--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q8_0", "--gpu", "rtx-4070", "-c", "0"});
  EXPECT_TRUE(test::has_line(full, "llama_params_fit_impl: user has requested full context size of 40960 -> no change"));
  EXPECT_EQ(full.kv_tokens, 40960);
  EXPECT_LT(std::stoi(*full.setting("--n-gpu-layers")), 37);  // layers go to the host instead
  EXPECT_TRUE(keeps_target(device(full, "CUDA0")));
}

TEST(LlamacppFit, DenseLayersPerGpuAreTheMostThatKeepEachTarget) {
  // Qwen2.5-72B Q4_K_M (44 GiB) over two RTX 3090s at -c 8192: fit fills the last GPU first, then
  // the first, and leaves the rest on the host. An exhaustive search through the plan must agree.
  const std::vector<std::string> base = {"--engine", "llamacpp", "--model", "Qwen/Qwen2.5-72B-Instruct", "--quant", "Q4_K_M",
                                         "--gpu",    "rtx-3090,rtx-3090", "-c", "8192"};
  const Forecast f = run(base);
  ASSERT_NE(f.setting("--tensor-split"), nullptr);
  EXPECT_TRUE(test::has_line(f, "llama_params_fit_impl: filling dense layers back-to-front:"));
  const std::string ts = *f.setting("--tensor-split");
  const int a = std::stoi(ts.substr(0, ts.find(','))), b = std::stoi(ts.substr(ts.find(',') + 1));
  EXPECT_EQ(std::stoi(*f.setting("--n-gpu-layers")), a + b);
  EXPECT_LT(a + b, 81);  // not every layer fits
  EXPECT_EQ(f.setting("--override-tensor"), nullptr);  // dense: whole layers only
  auto with = [&](int n0, int n1) {
    return run(plus(base, {"--fit", "off", "-ngl", std::to_string(n0 + n1), "-ts", std::to_string(n0) + "," + std::to_string(n1)}));
  };
  // The last GPU: the most layers (counted from the output layer) that keep its target.
  EXPECT_TRUE(keeps_target(device(with(0, b), "CUDA1")));
  EXPECT_FALSE(keeps_target(device(with(0, b + 1), "CUDA1")));
  // The first GPU, with the last one's share fixed.
  const Forecast both = with(a, b);
  EXPECT_TRUE(keeps_target(device(both, "CUDA0")));
  EXPECT_TRUE(keeps_target(device(both, "CUDA1")));
  EXPECT_FALSE(keeps_target(device(with(a + 1, b), "CUDA0")));
  EXPECT_EQ(f.verdict, Verdict::Fits);
}

TEST(LlamacppFit, MoeOverSeveralGpusMovesExpertsNotLayers) {
  // Qwen3-30B-A3B Q8_0 (30 GiB) over two 12 GB RTX 3060s: the dense parts fit, so every layer is
  // offloaded and fit chooses which layers keep their experts (step 4), one layer partly on each
  // GPU overflowing to the next GPU or the host. Before, the plan kept every layer on the GPUs.
  const std::vector<std::string> base = {"--engine", "llamacpp", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q8_0", "--gpu", "rtx-3060,rtx-3060"};
  const Forecast f = run(base);
  EXPECT_TRUE(test::has_prefix(f, "llama_params_fit_impl: with only dense weights in device memory there is a total surplus of"));
  EXPECT_TRUE(test::has_line(f, "llama_params_fit_impl: converting dense-only layers to full layers and filling them front-to-back with "
                                "overflow to next device/system memory:"));
  EXPECT_EQ(f.verdict, Verdict::Fits);
  EXPECT_EQ(*f.setting("--n-gpu-layers"), "49");  // 48 blocks + output: all offloaded
  ASSERT_NE(f.setting("--tensor-split"), nullptr);
  ASSERT_NE(f.setting("--override-tensor"), nullptr);
  EXPECT_TRUE(keeps_target(device(f, "CUDA0")));
  EXPECT_TRUE(keeps_target(device(f, "CUDA1")));
  EXPECT_GT(device(f, "CPU_Mapped").model_buffer_bytes, 5 * 1024 * MiB);
  // Most of each GPU is used: within 1.5 GiB of the target (whole expert tensors of ~0.6 GiB move).
  for (const char* g : {"CUDA0", "CUDA1"}) EXPECT_GT(used(device(f, g)), device(f, g).capacity_bytes - kRuntime - kTarget - 1536 * MiB) << g;
  // The user's own placement stops fit at the layers (llama.cpp's message), as does -ts.
  const Forecast cmoe = run(plus(base, {"-ot", R"(blk\.0\.ffn_up_exps=CPU)"}));
  EXPECT_TRUE(test::has_prefix(cmoe, "llama_params_fit_impl: failed to fit params to free device memory: model_params::tensor_buft_overrides"));
  const Forecast split = run(plus(base, {"-ts", "1,1"}));
  EXPECT_TRUE(test::has_prefix(split, "llama_params_fit_impl: failed to fit params to free device memory: model_params::tensor_split"));
}

TEST(LlamacppFit, SlotsWithoutAUnifiedCacheEachGetTheModelsContextFromPr27496) {
  // -np 4 without -kvu: four KV streams. From PR #27496 (~b10545) fit resolves an unset context to
  // n_ctx_train x 4 = 163840 (40960 per slot); before, the 40960 tokens were shared (10240 a slot).
  const std::vector<std::string> base = {"--model", "Qwen/Qwen3-0.6B", "--quant", "Q8_0", "--gpu", "rtx-4090", "-np", "4"};
  const Forecast now = run(plus({"--engine", "llamacpp"}, base));
  EXPECT_TRUE(test::has_line(now, "llama_params_fit_impl: context size unset and KV cache not unified -> using 163840 for 4 sequences:"));
  EXPECT_EQ(now.kv_tokens, 163840);
  EXPECT_EQ(now.context_len, 40960);
  const Forecast before = run(plus({"--engine", "llamacpp@b10000"}, base));
  EXPECT_EQ(before.kv_tokens, 40960);
  EXPECT_EQ(before.context_len, 10240);
  // A unified cache (-kvu) is one stream: the model's context, shared.
  EXPECT_EQ(run(plus({"--engine", "llamacpp", "-kvu"}, base)).kv_tokens, 40960);
}

TEST(LlamacppFit, ADraftModelJoinsTheTargetFromPr23485) {
  // Qwen3-8B Q8_0 with a Qwen3-0.6B draft (-md) on a 12 GB RTX 4070, -c unset. Before PR #23485
  // (~b9270) fit sizes the context for the target alone and the draft contexts then run out of
  // memory; from it the draft's weights, context (at the model's whole context, llama.cpp#25408)
  // and compute buffer join the 1024 MiB target, so fit shrinks the target further and it fits.
  const std::vector<std::string> base = {"--model", "Qwen/Qwen3-8B", "--quant", "Q8_0", "--gpu", "rtx-4070", "-md", "Qwen/Qwen3-0.6B"};
  const Forecast before = run(plus({"--engine", "llamacpp@b9000"}, base));
  EXPECT_TRUE(test::has_line(before, "llama_params_fit_impl: entire model can be fit by reducing context"));
  ASSERT_TRUE(before.failure);
  EXPECT_EQ(before.failure->stage, StageId::DraftContexts);
  const Forecast now = run(plus({"--engine", "llamacpp"}, base));
  const double target = test::number_after(now, "llama_params_fit_impl: cannot meet free memory target of ");
  // 1024 MiB + the draft: 604 MiB of Q8_0 weights + 40960 cells x 28 layers x 2 x 1024 x 2 B (4480 MiB) + its compute buffer.
  EXPECT_GT(target, 1024 + 604 + 4480);
  EXPECT_LT(target, 1024 + 604 + 4480 + 1024);
  EXPECT_FALSE(now.failure);
  EXPECT_EQ(now.kv_tokens, 4096);
}

TEST(LlamacppFit, TheProjectorJoinsTheFirstGpusTargetFromPr21489) {
  // Qwen3.6-27B Q4_K_M with unsloth's mmproj-BF16.gguf on an RTX 3090, -c unset (llama.cpp#19980):
  // before PR #21489 (~b8690) fit sizes the context without the projector, which then fails to load;
  // from it the projector (888 MiB of BF16 weights) and its image compute buffer (250 MiB, a GUESS)
  // join the 1024 MiB target, and the start fits with a smaller context.
  const std::vector<std::string> base = {"--model", "Qwen/Qwen3.6-27B", "--quant", "Q4_K_M", "--gpu", "rtx-3090", "--mmproj", "mmproj-BF16.gguf"};
  const Forecast before = run(plus({"--engine", "llamacpp@b8600"}, base));
  ASSERT_TRUE(before.failure);
  EXPECT_EQ(before.failure->stage, StageId::Mmproj);
  const Forecast now = run(plus({"--engine", "llamacpp"}, base));
  EXPECT_FALSE(now.failure);
  const double target = test::number_after(now, "llama_params_fit_impl: cannot meet free memory target of ");
  EXPECT_NEAR(target, 1024 + 878 + 250, 2);  // the derived tower: 878.8 MiB (docs/llamacpp-plan.md)
  EXPECT_LT(now.kv_tokens, before.kv_tokens);
}
