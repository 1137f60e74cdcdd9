// The SGLang forecast end to end on the seed deployment (shared/seed/README.md): GLM-5-NVFP4 on
// 8 x RTX PRO 6000 (94.97 GiB), TP 8. The real 0.95 launch died in CUDA-graph capture with
// "avail mem=0.96 GB" at capture begin; the 0.88 launch served with a ~425K-token KV cache.
#include <gtest/gtest.h>

#include <algorithm>

#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/units.h"

using namespace headroom;

static Forecast seed(const std::string& fraction, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8",
                             "--mem-fraction-static", fraction};
  a.insert(a.end(), extra.begin(), extra.end());
  return plan(parse_deployment(Args::parse(a)));
}

static int64_t free_after(const Forecast& f, const char* stage) {
  for (const auto& s : f.ranks.front().stages)
    if (name(s.id) == stage) return s.free_bytes_after;
  return -1;
}

TEST(SglangPlanSeed, FractionPoint95DiesInCapture) {
  Forecast f = seed("0.95");
  EXPECT_EQ(f.verdict, Verdict::Oom);
  ASSERT_TRUE(f.failure.has_value());
  EXPECT_EQ(f.failure->stage, StageId::CudaGraph);
  // Free memory at capture begin: the real run logged 0.96 GB; issue 28 holds the forecast to
  // within 0.3 GiB of it (an estimate: context/NCCL and the FP4 MoE warm-up residue; 1.05 now).
  double begin = to_gib(free_after(f, "workspaces"));
  EXPECT_NEAR(begin, 0.96, 0.3);
  EXPECT_EQ(*f.setting("--kv-cache-dtype"), "fp8_e4m3");  // DSA on SM120 -> fp8_e4m3
  EXPECT_EQ(*f.setting("--page-size"), "64");
}

TEST(SglangPlanSeed, FractionPoint88Fits) {
  Forecast f = seed("0.88");
  EXPECT_EQ(f.verdict, Verdict::Fits);
  // ~425K tokens reported by the real run; within 20%.
  EXPECT_NEAR(static_cast<double>(f.kv_tokens), 425000.0, 0.20 * 425000.0);
  EXPECT_EQ(f.kv_tokens % 64, 0);  // page-aligned (DSA page 64)
  EXPECT_GT(f.headroom_bytes, 0);
  // The run's reported capture extent (graphs up to batch 64, seed README) fits with more to spare
  // than the default 52 sizes up to 512: each captured all-reduce costs ~150 KiB (sglang_estimates.cpp).
  Forecast g = seed("0.88", {"--cuda-graph-max-bs", "64"});
  EXPECT_EQ(g.verdict, Verdict::Fits);
  EXPECT_GT(g.headroom_bytes, f.headroom_bytes);
}

TEST(SglangPlanSeed, KvPoolFollowsSglangFormula) {
  // tokens = floor_page(int((A - P(1-f)) * 2^30) // cell): a 0.07 step of f moves the pool by
  // 0.07 * P / cell tokens (P ~ 93.3 GiB, cell 61,464 B -> ~114K tokens).
  Forecast a = seed("0.95"), b = seed("0.88");
  double step = static_cast<double>(a.kv_tokens - b.kv_tokens);
  EXPECT_NEAR(step, 0.07 * 93.3 * 1073741824.0 / 61464.0, 2000.0);
}

TEST(SglangPlanSeed, DefaultFractionIsResolvedAndPrinted) {
  std::vector<std::string> a{"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8"};
  Forecast f = plan(parse_deployment(Args::parse(a)));
  // Newest rules for the seed GPU: reserve 14848 MiB of 97887 -> 0.848 (sglang_rules_test).
  EXPECT_EQ(*f.setting("--mem-fraction-static"), "0.848");
}

TEST(SglangPlanSeed, WeightsDoNotFitOnFourGpus) {
  std::vector<std::string> a{"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "4",
                             "--mem-fraction-static", "0.9"};
  Forecast f = plan(parse_deployment(Args::parse(a)));
  EXPECT_NE(f.verdict, Verdict::Fits);
}

TEST(SglangPlanFlags, RejectedAsSglangRejectsThem) {
  EXPECT_THROW(seed("1.5"), InputError);
  EXPECT_THROW(seed("0"), InputError);
  EXPECT_THROW(seed("abc"), InputError);
  EXPECT_THROW(seed("0.9", {"--kv-cache-dtype", "int3"}), InputError);
  EXPECT_THROW(seed("0.9", {"--frobnicate", "1"}), InputError);
  EXPECT_THROW(seed("0.9", {"--context-length", "9999999"}), InputError);  // longer than the model's 202752
  // 64 attention heads are not divisible by TP 3.
  std::vector<std::string> a{"--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "3"};
  EXPECT_THROW(plan(parse_deployment(Args::parse(a))), InputError);
}

TEST(SglangPlanEras, OlderEraUsesOldCaptureLogAndList) {
  Forecast f = seed("0.88", {});
  std::vector<std::string> a{"--engine", "sglang@0.4.8", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100"};
  Forecast old = plan(parse_deployment(Args::parse(a)));
  // Era 2 default for H100 TP1: reserve (9.5 + 0.5) * 1024 = 10240 MiB; (81559-10240)/81559 = 0.8745 -> 0.874.
  EXPECT_EQ(*old.setting("--mem-fraction-static"), "0.874");
  bool old_line = false;
  for (const auto& l : old.log) old_line = old_line || l.rfind("Capture cuda graph begin. This can take up to several minutes.", 0) == 0;
  EXPECT_TRUE(old_line);
  EXPECT_NE(f.era, old.era);
}

TEST(SglangPlanRefusal, NotEnoughMemoryMessage) {
  // Llama-3.1-70B bf16 (~131 GiB) on one H200 (139.81 GiB) at f = 0.5: weights exceed f * P.
  std::vector<std::string> a{"--engine", "sglang@0.5.4", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h200",
                             "--mem-fraction-static", "0.5"};
  Forecast f = plan(parse_deployment(Args::parse(a)));
  EXPECT_EQ(f.verdict, Verdict::Refused);
  ASSERT_TRUE(f.failure.has_value());
  EXPECT_EQ(f.failure->message, "Not enough memory. Please try to increase --mem-fraction-static.");
  // Newest wording names the minimum viable fraction.
  a[1] = "sglang";
  Forecast n = plan(parse_deployment(Args::parse(a)));
  EXPECT_NE(n.failure->message.find("Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.5"), std::string::npos);
}

TEST(SglangPlanCorpus, Qwen3_235bFp8OnFourH100) {
  // corpus sglang-002: --tp-size 4 --mem-fraction-static 0.93 on 4 x H100 -> "#tokens: 367404".
  std::vector<std::string> a{"--engine", "sglang@unknown@2025-07-22", "--model", "Qwen/Qwen3-235B-A22B-FP8", "--gpu", "h100",
                             "--tp", "4", "--mem-fraction-static", "0.93", "--quantization", "fp8"};
  Forecast f = plan(parse_deployment(Args::parse(a)));
  EXPECT_EQ(f.verdict, Verdict::Fits);
  EXPECT_NEAR(static_cast<double>(f.kv_tokens), 367404.0, 0.05 * 367404.0);
}

TEST(SglangPlan, CudaGraphBsTakesAListAsLaunchServerDoes) {
  // server_args.py: --cuda-graph-bs nargs="+" ("--cuda-graph-bs 1 2 4 8"): the decode capture list.
  const Forecast f = plan(parse_deployment(Args::parse({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--cuda-graph-bs", "1", "2", "4", "8"})));
  EXPECT_TRUE(std::any_of(f.log.begin(), f.log.end(), [](const std::string& l) { return l.find("bs=[1, 2, 4, 8]") != std::string::npos; }));
}

TEST(SglangPlan, OnlineFp8LoadsThe16BitWeightsFirst) {
  // --quantization fp8 on the bf16 Qwen3-8B: 6,945,767,424 linear elements (36 layers x 192,937,984,
  // as in vllm_load_extras_test.cpp) at 1 B instead of 2; SGLang quantizes after loading them all,
  // so Qwen3-32B (61.0 GiB in bf16) cannot load on a 44.4 GiB L40S even though 32 GiB would fit.
  auto weights_of = [](const Forecast& f) {
    for (const auto& it : f.ranks.front().stages.at(1).items)
      if (it.what == "model weights") return it.bytes;
    return int64_t{-1};
  };
  auto go = [](std::vector<std::string> a) { return plan(parse_deployment(Args::parse(a))); };
  const Forecast bf16 = go({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s"});
  const Forecast fp8 = go({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--quantization", "fp8"});
  EXPECT_EQ(weights_of(bf16) - weights_of(fp8), 6945767424);
  EXPECT_GT(fp8.kv_tokens, bf16.kv_tokens);
  const Forecast big = go({"--engine", "sglang", "--model", "Qwen/Qwen3-32B", "--gpu", "l40s", "--quantization", "fp8"});
  ASSERT_TRUE(big.failure.has_value());
  EXPECT_EQ(big.failure->stage, StageId::Weights);
}

TEST(SglangPlan, CpuOffloadGbMovesLayerWeightsOffTheGpu) {
  // --cpu-offload-gb 4: 4 x 1024^3 B of Qwen3-8B's decoder-layer weights stay in pinned CPU memory;
  // and no note calls the flag unmodelled.
  auto go = [](std::vector<std::string> a) { return plan(parse_deployment(Args::parse(a))); };
  auto weights_of = [](const Forecast& f) {
    for (const auto& it : f.ranks.front().stages.at(1).items)
      if (it.what == "model weights") return it.bytes;
    return int64_t{-1};
  };
  const Forecast a = go({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s"});
  const Forecast b = go({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--cpu-offload-gb", "4"});
  EXPECT_EQ(weights_of(a) - weights_of(b), 4LL * 1073741824);
  EXPECT_FALSE(std::any_of(b.notes.begin(), b.notes.end(), [](const std::string& n) { return n.find("not modelled") != std::string::npos; }));
  // Accepted server_args options without a memory effect plan as without them; LoRA is named.
  const Forecast c = go({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--schedule-conservativeness", "0.3", "--log-requests",
                         "--enable-metrics", "--enable-lora", "--max-lora-rank", "64"});
  EXPECT_EQ(c.kv_tokens, a.kv_tokens);
  EXPECT_TRUE(std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) { return n.rfind("--enable-lora is not modelled", 0) == 0; }));
  // The docs' LoRA notebook (tests/data/extra xsgl-040) passes --enable-lora-overlap-loading
  // (a store_true in server_args.py) and --max-lora-chunk-size: both accepted.
  const Forecast d = go({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--enable-lora", "--enable-lora-overlap-loading",
                         "--max-lora-chunk-size", "32"});
  EXPECT_EQ(d.kv_tokens, a.kv_tokens);
  EXPECT_TRUE(std::any_of(d.notes.begin(), d.notes.end(), [](const std::string& n) { return n.rfind("--enable-lora-overlap-loading is not modelled", 0) == 0; }));
}

TEST(SglangPlan, JsonModelOverrideArgsRewriteTheConfig) {
  // Qwen's long-context recipe: YaRN factor 4 over 32,768 positions. SGLang's get_context_length
  // ignores the factor when original_max_position_embeddings is given, so the derived length stays
  // 40,960 and --context-length 131072 needs SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1.
  const std::string yarn = R"({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})";
  auto go = [](std::vector<std::string> a) { return plan(parse_deployment(Args::parse(a))); };
  EXPECT_THROW(go({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--json-model-override-args", yarn,
                   "--context-length", "131072"}),
               InputError);
  // A shorter max_position_embeddings under text_config of Qwen3-VL-8B: merged into the text
  // config (its shapes kept: the KV bytes per token of 36 layers x 8 KV heads x 128 x 2 x 2 B), the
  // derived context 262,144 -> 65,536.
  const Forecast a = go({"--engine", "sglang", "--model", "Qwen/Qwen3-VL-8B-Instruct", "--gpu", "h100"});
  const Forecast b = go({"--engine", "sglang", "--model", "Qwen/Qwen3-VL-8B-Instruct", "--gpu", "h100", "--json-model-override-args",
                         R"({"text_config": {"max_position_embeddings": 65536}})"});
  EXPECT_EQ(a.context_len, 262144);
  EXPECT_EQ(b.context_len, 65536);
  EXPECT_NEAR(static_cast<double>(b.kv_tokens) / static_cast<double>(a.kv_tokens), 1.0, 0.01);  // same bytes per token
  EXPECT_TRUE(std::any_of(b.notes.begin(), b.notes.end(), [](const std::string& n) { return n == "config.json as --json-model-override-args rewrites it: text_config"; }));
  EXPECT_FALSE(std::any_of(b.notes.begin(), b.notes.end(), [](const std::string& n) { return n.find("--json-model-override-args is not modelled") != std::string::npos; }));
}

TEST(SglangPlan, DenseTp1AndDpLmHeadHoldWholeCopies) {
  // DeepSeek-V3 on 8 x H200 with DP attention (dp 8: attention-TP groups of one rank).
  // --moe-dense-tp-size 1: the 3 dense layers' MLPs (3 x 3 x 7168 x 18432 FP8 + 128 x 128 fp32 block
  // scales) whole on every rank instead of 1/8: +7/8 of 1,189,085,184 + 290,304 B per rank.
  // --enable-dp-lm-head: the 129,280 x 7,168 bf16 head sharded over the one-rank attention-TP group:
  // +7/8 of 1,853,358,080 B per rank.
  auto weights = [](std::vector<std::string> extra) {
    std::vector<std::string> a{"--engine", "sglang", "--model", "deepseek-ai/DeepSeek-V3", "--gpu", "h200", "--tp", "8", "--dp", "8",
                               "--enable-dp-attention"};
    a.insert(a.end(), extra.begin(), extra.end());
    const Forecast f = plan(parse_deployment(Args::parse(a)));
    for (const auto& it : f.ranks.front().stages.at(1).items)
      if (it.what == "model weights") return it.bytes;
    return int64_t{-1};
  };
  const int64_t base = weights({});
  const int64_t dense = 1189085184 + 290304;
  EXPECT_EQ(weights({"--moe-dense-tp-size", "1"}) - base, dense - dense / 8);
  EXPECT_EQ(weights({"--enable-dp-lm-head"}) - base, 1853358080 - 1853358080 / 8);
}

TEST(SglangPlan, RedundantExpertsAddPhysicalExperts) {
  // DeepSeek-R1 on 8 x H200, EP 8: --ep-num-redundant-experts 32 gives (256 + 32) / 8 = 36 experts per
  // rank, 4 more on each of 58 MoE layers at 44,050,944 B (FP8 3 x 7168 x 2048 + 10,752 B of scales).
  auto weights = [](std::vector<std::string> extra) {
    std::vector<std::string> a{"--engine", "sglang", "--model", "deepseek-ai/DeepSeek-R1", "--gpu", "h200", "--tp", "8", "--ep", "8"};
    a.insert(a.end(), extra.begin(), extra.end());
    const Forecast f = plan(parse_deployment(Args::parse(a)));
    for (const auto& it : f.ranks.front().stages.at(1).items)
      if (it.what == "model weights") return it.bytes;
    return int64_t{-1};
  };
  EXPECT_EQ(weights({"--ep-num-redundant-experts", "32"}) - weights({}), 10219819008);
}
