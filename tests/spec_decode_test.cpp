// Speculative decoding in the three engines' plans (issue 28): the draft weights, the draft KV
// pool and the draft / verify capture are items of their own, and capture grows with them; a
// setting that moves capture memory unmodelled (an uncounted drafter, DeepEP) caps the verdict
// at at_risk.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "plan_test_util.h"

namespace headroom::test {
namespace {

const std::vector<std::string> kSglang = {"--engine", "sglang", "--model", "deepseek-ai/DeepSeek-V3", "--gpu", "h200", "--tp", "8"};
const std::vector<std::string> kEagle = {"--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                                         "--speculative-num-draft-tokens", "4"};
const std::vector<std::string> kVllm = {"--engine", "vllm", "--model", "deepseek-ai/DeepSeek-V3", "--gpu", "h200", "--tp", "8"};
const std::vector<std::string> kTrt = {"--engine", "trtllm", "--model", "deepseek-ai/DeepSeek-V3", "--gpu", "h200", "--tp", "8"};

int64_t stage_bytes(const Forecast& f, const std::string& stage) {
  int64_t sum = 0;
  for (const auto& st : f.ranks.at(0).stages)
    if (name(st.id) == stage)
      for (const auto& it : st.items) sum += it.bytes;
  return sum;
}

const Item& item(const Forecast& f, const std::string& prefix) {
  const Item* it = rank0_item(f, prefix);
  if (!it) throw std::runtime_error("no item " + prefix);
  return *it;
}

// DeepSeek-V3's MLA cache: (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B = 1152 B per layer and
// token; its one MTP module is one more such layer.
constexpr int64_t kMlaLayerBytes = 1152;

TEST(SpecDecode, SglangEagleShowsDraftWeightsKvAndGraphs) {
  const Forecast base = run(kSglang), f = run(plus(kSglang, kEagle));
  EXPECT_GT(item(f, "draft (MTP) weights").bytes, 0);
  // 2026 rules: one token count for both pools, the draft's 1152 B per token (page 1: tokens + 1 rows).
  EXPECT_EQ(item(f, "draft KV cache").bytes, (f.kv_tokens + 1) * kMlaLayerBytes);
  // Draft decode graphs, by hand (sglang_estimates.cpp draft_capture): 67 sizes up to 512, topk 1,
  // 3 steps. Graph objects 67 x (2 forwards x 30 kernels x 3 KiB + 3 steps x 8 x 3 KiB) = 16,884 KiB,
  // static buffers 512 x (7168 x 2 + 8 x 6) = 7,364,608 B; the draft's activations (512 tokens)
  // stay below the verify graphs' peak (2,048 tokens), so the pool does not grow.
  EXPECT_EQ(item(f, "draft decode graphs").bytes, 16884 * 1024 + 7364608);
  // Draft extend: 67 x (30 x 3 KiB + 24 KiB) = 7,638 KiB + 2048 x (7168 x 2 + 24) B of inputs.
  EXPECT_EQ(item(f, "draft extend graphs").bytes, 7638 * 1024 + 2048 * 14360);
  EXPECT_GT(stage_bytes(f, "cuda_graph"), stage_bytes(base, "cuda_graph"));
}

TEST(SpecDecode, VllmMtpShowsDraftWeightsKvAndGraphs) {
  const Forecast base = run(kVllm), f = run(plus(kVllm, {"--speculative-config", R"({"method":"mtp","num_speculative_tokens":1})"}));
  const int64_t mtp = item(f, "draft (MTP) weights").bytes;
  EXPECT_EQ(item(f, "model weights").bytes, item(base, "model weights").bytes);  // the target's part is unchanged
  // The MTP layer is one more tensor of the same page in every block: 1/61 of the target's pool.
  const Item& kv = item(f, "KV cache");
  const Item& draft_kv = item(f, "draft KV cache");
  EXPECT_EQ(kv.bytes, draft_kv.bytes * 61);
  // The drafter runs in each of the 51 piecewise captures: graph objects of 51 x 1 layer x 30
  // kernels (dense 12 + MoE 10 + MLA 8) x 3 KiB = 4,700,160 B.
  const Item& g = item(f, "drafter CUDA graphs (51 piecewise)");
  EXPECT_EQ(g.bytes, 51 * 30 * 3072);
  EXPECT_GT(stage_bytes(f, "cuda_graph"), stage_bytes(base, "cuda_graph"));
  // The same MTP module as SGLang loads.
  EXPECT_EQ(mtp, item(run(plus(kSglang, kEagle)), "draft (MTP) weights").bytes);
}

TEST(SpecDecode, TrtllmMtpShowsDraftWeightsKvAndGraphs) {
  const Forecast base = run(kTrt);
  const Forecast f = run(plus(kTrt, {"--speculative_config", R"({"decoding_type":"MTP","num_nextn_predict_layers":3})"}));
  EXPECT_EQ(item(f, "draft (MTP) weights").bytes, item(run(plus(kSglang, kEagle)), "draft (MTP) weights").bytes);
  // MTP Eagle one-model: one KV layer for the module (get_num_spec_layers), 1152 B per token.
  EXPECT_NE(item(f, "draft KV layers (1152 B per token)").what.find("1152"), std::string::npos);
  EXPECT_NE(item(f, "paged KV cache").what.find(" 70272 B"), std::string::npos);
  // Three MTP passes inside each captured graph: 30 kernels x 3 KiB of graph objects each.
  const Item& graphs = item(f, "CUDA graphs");
  int n = 0;
  ASSERT_EQ(std::sscanf(graphs.what.c_str(), "CUDA graphs (%d batch sizes)", &n), 1);
  EXPECT_EQ(item(f, "drafter in the graphs (MTP, 4 tokens/request)").bytes, static_cast<int64_t>(n) * 3 * 30 * 3072);
  EXPECT_GT(stage_bytes(f, "warmup"), stage_bytes(base, "warmup"));
  EXPECT_LT(f.kv_tokens, base.kv_tokens);
}

TEST(SpecDecode, TrtllmSpeculativeConfigErrorsAreOneLine) {
  EXPECT_THROW(run(plus(kTrt, {"--speculative_config", "not json"})), InputError);
  EXPECT_THROW(run(plus(kTrt, {"--speculative_config", R"({"decoding_type":5})"})), InputError);
  EXPECT_THROW(run(plus(kTrt, {"--speculative_config", R"({"decoding_type":"MTP","num_nextn_predict_layers":1000})"})), InputError);
  // A model with no MTP module cannot run MTP.
  EXPECT_THROW(run({"--engine", "trtllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--speculative_config", R"({"decoding_type":"MTP"})"}),
               InputError);
}

bool has_note(const Forecast& f, const std::string& part) {
  return std::any_of(f.notes.begin(), f.notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

TEST(SpecDecode, UncountedDraftersAreAtMostAtRisk) {
  const std::vector<std::string> qwen = {"--model", "Qwen/Qwen3-8B", "--gpu", "h100"};
  // Without a drafter each of these plans fits with room to spare.
  EXPECT_EQ(run(plus({"--engine", "vllm"}, qwen)).verdict, Verdict::Fits);
  EXPECT_EQ(run(plus({"--engine", "trtllm"}, qwen)).verdict, Verdict::Fits);
  EXPECT_EQ(run(plus({"--engine", "sglang"}, qwen)).verdict, Verdict::Fits);
  // vLLM: an EAGLE-3 head named by a repo the plan does not read.
  const Forecast v = run(plus(plus({"--engine", "vllm"}, qwen), {"--speculative-config", R"({"method":"eagle3","model":"x/y","num_speculative_tokens":3})"}));
  EXPECT_EQ(v.verdict, Verdict::AtRisk);
  EXPECT_TRUE(has_note(v, "'eagle3' drafter's weights"));
  // TensorRT-LLM: Eagle3's speculative_model_dir is not read.
  const Forecast t = run(plus(plus({"--engine", "trtllm"}, qwen), {"--speculative_config", R"({"decoding_type":"Eagle3","max_draft_len":3})"}));
  EXPECT_EQ(t.verdict, Verdict::AtRisk);
  // SGLang: EAGLE3 with no draft model path.
  const Forecast g = run(plus(plus({"--engine", "sglang"}, qwen), {"--speculative-algorithm", "EAGLE3"}));
  EXPECT_EQ(g.verdict, Verdict::AtRisk);
  EXPECT_TRUE(has_note(g, "--speculative-algorithm EAGLE3: the draft model's weights, KV and graphs are not counted"));
  // n-gram drafting holds no model: unchanged.
  EXPECT_EQ(run(plus(plus({"--engine", "vllm"}, qwen), {"--speculative-config", R"({"method":"ngram","num_speculative_tokens":3})"})).verdict,
            Verdict::Fits);
}

TEST(SpecDecode, DeepEpBuffersAreNamedAndCapTheVerdict) {
  // Corpus sglang-042 (sglang#23769): DeepSeek-V4-Pro-FP8 on 16 x H200 with DeepEP's dispatch size
  // set by SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=128 died in CUDA-graph capture even at
  // --cuda-graph-max-bs 8. DeepEP's buffers are not modelled; the plan may not say "fits".
  const Forecast f = run({"--engine", "sglang@unknown@2026-04-26", "--model", "sgl-project/DeepSeek-V4-Pro-FP8", "--tp", "16", "--dp", "16",
                          "--enable-dp-attention", "--nnodes", "2", "--cuda-graph-max-bs", "8", "--gpu", "h200", "--env",
                          "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=128"});
  EXPECT_EQ(f.verdict, Verdict::AtRisk);
  EXPECT_TRUE(has_note(f, "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=128: sizes DeepEP's buffers"));
  const Forecast g = run({"--engine", "sglang", "--model", "deepseek-ai/DeepSeek-V3", "--gpu", "h200", "--tp", "8", "--moe-a2a-backend", "deepep"});
  EXPECT_NE(g.verdict, Verdict::Fits);
  EXPECT_TRUE(has_note(g, "--moe-a2a-backend deepep: the all-to-all dispatch buffers"));
}

}  // namespace
}  // namespace headroom::test
