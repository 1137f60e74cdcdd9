// DeepSeek-V4 weights as SGLang loads them (src/engines/sglang/sglang_dsv4_weights.cpp): wo_a in
// BF16, the FP4 experts' float32 loader scales left by the Marlin repack in July 2026 builds, the
// RoPE tables built at init, the embedding replicated under DP attention, the MTP draft's own
// embedding/head, and SGLang's "Loaded weights leave no GPU memory" refusal with its minimum fraction.
// Byte counts are worked by hand from the checkpoint configs (data/models/...); real logs are cited.
#include <gtest/gtest.h>

#include <cmath>
#include <fmt/format.h>

#include "engines/sglang/sglang_dsv4.h"
#include "headroom/layout.h"
#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;
using namespace headroom::sglang;

namespace {
int64_t weights_item(const Forecast& f) {
  for (const auto& s : f.ranks.at(0).stages)
    if (s.id == StageId::Weights)
      for (const auto& i : s.items)
        if (i.what == "model weights") return i.bytes;
  return -1;
}
Dsv4Inputs hopper(int date) {
  Dsv4Inputs in;
  in.sm = 90;
  in.date = date;
  return in;
}
}  // namespace

TEST(SglangDsv4, BuildDateFromTheVersionString) {
  EXPECT_EQ(build_date("deepseek-v4-hopper@2026-07"), 20260701);
  EXPECT_EQ(build_date("unknown@2026-04-26"), 20260426);
  EXPECT_EQ(build_date("0.5.15.post1"), 0);
  EXPECT_EQ(build_date(""), 0);
}

TEST(SglangDsv4, ProTp8HopperJuly2026RankExtra) {
  // deepseek-ai/DeepSeek-V4-Pro (expert_dtype fp4, FP8 block linears with E8M0 scales), TP8, H200,
  // the 2026-07 deepseek-v4-hopper image, MoE runner unnamed (Marlin on SM90).
  const auto m = load_model("deepseek-ai/DeepSeek-V4-Pro");
  const ModelConfig& c = m->config;
  Parallel par;
  par.tp = 8;
  const Dsv4Weights w = dsv4_weight_rules(c, hopper(20260701));
  EXPECT_TRUE(w.wo_a_bf16);
  EXPECT_TRUE(w.marlin_scale_leak);
  EXPECT_EQ(w.moe_backend, "marlin");
  const Dsv4RankExtra x = dsv4_rank_extra(c, par, w, 0, 61, true);
  // wo_a [16 x 1024, 128 x 512 / 16] = [16384, 4096], column-parallel /8: BF16 2048 x 4096 x 2 = 16,777,216 B
  //   instead of FP8 (67,108,864 + E8M0 scale 128 x 32 = 4,096) / 8 = 8,389,120 B: +8,388,096 B x 61 = 511,673,856.
  // FP32 expert scales: 384 experts x (w13 2 x 384 x 7168/32 + w2 7168 x 384/32) x 4 B
  //   = 384 x (172,032 + 86,016) x 4 = 396,361,728 B per layer x 61 = 24,178,065,408.
  // RoPE: layers 0-60 are all compressed (ratio 4/128; the list's 0 is the MTP entry), one key:
  //   freqs_cis 1,048,576 x 32 x 8 B = 268,435,456 + cos_sin_cache 65,536 x 16 x 64 x 4 B = 268,435,456.
  EXPECT_EQ(x.main_bytes, 511'673'856 + 24'178'065'408 + 536'870'912);
  // Draft: one layer of wo_a and scales, the ratio-0 RoPE key (536,870,912), own embedding + head
  //   2 x 129,280/8 x 7168 x 2 B = 463,339,520.
  EXPECT_EQ(x.draft_bytes, 8'388'096 + 396'361'728 + 536'870'912 + 463'339'520);
}

TEST(SglangDsv4, StaleScalesMatchTheFixsMeasuredSaving) {
  // sglang#29797 (2026-07-01): DeepSeek-V4-Pro TP16 / DP8, --moe-runner-backend marlin, "Load weight
  // end ... mem usage=79.05 GB" before the fix, 67.57 GB after: 11.48 GiB per GPU. The stale FP32
  // scales at TP16: 384 x (2 x 192 x 224 + 7168 x 6) x 4 B = 198,180,864 B per layer x 61 =
  // 12,089,032,704 B = 11.26 GiB, 1.9% under the measured saving.
  const auto m = load_model("deepseek-ai/DeepSeek-V4-Pro");
  Parallel par;
  par.tp = 16;
  par.dp = 8;
  par.dp_attention = true;
  Dsv4Inputs in = hopper(20260701);
  in.moe_runner_backend = "marlin";
  Dsv4Weights leak = dsv4_weight_rules(m->config, in);
  in.date = 20260801;
  Dsv4Weights fixed = dsv4_weight_rules(m->config, in);
  const int64_t saving = dsv4_rank_extra(m->config, par, leak, 0, 61, true).main_bytes -
                         dsv4_rank_extra(m->config, par, fixed, 0, 61, true).main_bytes;
  EXPECT_EQ(saving, 12'089'032'704);
  EXPECT_NEAR(to_gib(saving) / (79.05 - 67.57), 1.0, 0.025);
}

TEST(SglangDsv4, RulesByBuildAndGpu) {
  const auto m = load_model("deepseek-ai/DeepSeek-V4-Pro");
  const ModelConfig& c = m->config;
  // The stale scales: sglang#29797 (2026-07-01) to the cleanup in main (2026-07-21); newest: none.
  EXPECT_FALSE(dsv4_weight_rules(c, hopper(20260801)).marlin_scale_leak);
  EXPECT_FALSE(dsv4_weight_rules(c, hopper(0)).marlin_scale_leak);
  EXPECT_FALSE(dsv4_weight_rules(c, hopper(20260515)).marlin_scale_leak);
  // Another runner named: no Marlin repack.
  Dsv4Inputs fi = hopper(20260710);
  fi.moe_runner_backend = "flashinfer_mxfp4";
  EXPECT_FALSE(dsv4_weight_rules(c, fi).marlin_scale_leak);
  // wo_a: Hopper BF16 unless SGLANG_OPT_FP8_WO_A_GEMM=1 on a build with PR #28983 (2026-06-29).
  Dsv4Inputs opt = hopper(20260710);
  opt.env_fp8_wo_a_gemm = true;
  EXPECT_FALSE(dsv4_weight_rules(c, opt).wo_a_bf16);
  opt.date = 20260601;
  EXPECT_TRUE(dsv4_weight_rules(c, opt).wo_a_bf16);
  // Blackwell: FP8 from PR #25181 (2026-05-14), BF16 before.
  Dsv4Inputs b200;
  b200.sm = 100;
  EXPECT_FALSE(dsv4_weight_rules(c, b200).wo_a_bf16);
  b200.date = 20260501;
  EXPECT_TRUE(dsv4_weight_rules(c, b200).wo_a_bf16);
  // SGLANG_DSV4_FP4_EXPERTS=0 on an FP4 checkpoint: no FP4 rules.
  Dsv4Inputs off = hopper(20260710);
  off.env_fp4_experts = false;
  EXPECT_FALSE(dsv4_weight_rules(c, off).marlin_scale_leak);
}

TEST(SglangDsv4, Sglang027RefusalWithMinimumViableFraction) {
  // sglang-027 (InferenceX #2128): 8 x H200, --tp 8 --mem-fraction-static 0.88, image
  // deepseek-v4-hopper (2026-07). Log: "Load weight end. quant=fp8, fmt=e4m3, avail mem=12.25 GB,
  // mem usage=125.65 GB." then "Loaded weights leave no GPU memory for the KV cache under
  // --mem-fraction-static=0.88. Raise --mem-fraction-static above 0.912 (minimum viable = 1 -
  // available/pre = 0.9113)".
  Forecast f = run({"--engine", "sglang@deepseek-v4-hopper@2026-07", "--model", "deepseek-ai/DeepSeek-V4-Pro", "--gpu", "h200", "--gpus",
                    "8", "--tp", "8", "--mem-fraction-static", "0.88", "--quantization", "fp8"});
  ASSERT_EQ(f.verdict, Verdict::Refused);
  const int64_t w = weights_item(f);
  const auto base = weights_per_rank(*load_model("deepseek-ai/DeepSeek-V4-Pro"), EngineKind::SGLang, Parallel{8, 1, 1, 1, false});
  EXPECT_EQ(w, base.at(0).bytes + 25'226'610'176);  // the hand-worked extra of ProTp8HopperJuly2026RankExtra
  // Within 0.5% of the logged 125.65 GiB (was 101.93 GiB, -19%, before SGLang's load-time terms).
  EXPECT_NEAR(to_gib(w) / 125.65, 1.0, 0.005) << to_gib(w);
  // SGLang's line, with its minimum 1 - A/P from this forecast's own P and A (A = P - w).
  ASSERT_TRUE(f.failure);
  const double P = to_gib(f.ranks.at(0).capacity_bytes - f.ranks.at(0).stages.at(0).items.at(0).bytes);
  const double m = 1.0 - (P - to_gib(w)) / P;
  const std::string want = fmt::format(
      "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88. Raise --mem-fraction-static above {:.3f} "
      "(minimum viable = 1 - available/pre = {:.4f}). If using speculative decoding, draft weights are now counted.",
      std::ceil(1000.0 * m) / 1000.0, m);
  EXPECT_EQ(f.failure->message, want);
  // The logged minimum 0.9113 needs P = 12.25 / (1 - 0.9113) = 138.1 GiB free before loading; this
  // forecast's P comes from the estimated init overhead, so its minimum lands within 0.005.
  EXPECT_NEAR(m, 0.9113, 0.005);

  // The MTP script (EAGLE with the checkpoint's next-n layer): "DeepseekV4ForCausalLMNextN draft adds
  // mem usage=3.07 GB", minimum 0.9335. The draft: layout 1,857,443,236 B + 1,404,960,256 B
  // (ProTp8HopperJuly2026RankExtra) = 3,262,403,492 B = 3.04 GiB; counted before the KV check.
  Forecast s = run({"--engine", "sglang@deepseek-v4-hopper@2026-07", "--model", "deepseek-ai/DeepSeek-V4-Pro", "--gpu", "h200", "--gpus",
                    "8", "--tp", "8", "--mem-fraction-static", "0.88", "--speculative-algorithm", "EAGLE"});
  ASSERT_EQ(s.verdict, Verdict::Refused);
  int64_t draft = -1;
  for (const auto& st : s.ranks.at(0).stages)
    for (const auto& i : st.items)
      if (i.what == "draft (MTP) weights") draft = i.bytes;
  EXPECT_EQ(draft, base.at(0).mtp_bytes + 1'404'960'256);
  EXPECT_NEAR(to_gib(draft) / 3.07, 1.0, 0.02);
  const double ms = to_gib(w + draft) / P;
  EXPECT_NE(s.failure->message.find(fmt::format("(minimum viable = 1 - available/pre = {:.4f})", ms)), std::string::npos) << s.failure->message;
  EXPECT_NEAR(ms, 0.9335, 0.005);
}

TEST(SglangDsv4, DpAttentionFp8ExpertsTp16) {
  // sgl-project/DeepSeek-V4-Pro-FP8 (FP8 experts, F32 block scales), --tp 16 --dp 16
  // --enable-dp-attention, SGLANG_DSV4_FP4_EXPERTS=0, Hopper: attention TP = 1.
  const auto m = load_model("sgl-project/DeepSeek-V4-Pro-FP8");
  Parallel par;
  par.tp = 16;
  par.dp = 16;
  par.dp_attention = true;
  Dsv4Inputs in = hopper(20260426);
  in.env_fp4_experts = false;
  const Dsv4Weights w = dsv4_weight_rules(m->config, in);
  EXPECT_TRUE(w.wo_a_bf16);
  EXPECT_FALSE(w.marlin_scale_leak);
  const Dsv4RankExtra x = dsv4_rank_extra(m->config, par, w, 0, 61, true);
  // wo_a whole per rank: BF16 16384 x 4096 x 2 = 134,217,728 - (FP8 67,108,864 + F32 scale 4,096 x 4) = 67,092,480 x 61.
  // RoPE one key 536,870,912. Embedding: full 129,280 x 7168 x 2 = 1,853,358,080 - 1/16 share 115,834,880.
  EXPECT_EQ(x.main_bytes, 67'092'480LL * 61 + 536'870'912 + 1'853'358'080 - 115'834'880);

  // sglang-042's command line: the variable SGLang's V4 loader reads is modelled, not noted as
  // ignored; one it does not read is noted once.
  Forecast f = run({"--engine", "sglang@unknown@2026-04-26", "--model", "sgl-project/DeepSeek-V4-Pro-FP8", "--gpu", "h200", "--gpus", "16",
                    "--tp", "16", "--dp", "16", "--enable-dp-attention", "--cuda-graph-max-bs", "8", "--env", "SGLANG_DSV4_FP4_EXPERTS=0",
                    "--env", "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=128"});
  int fp4_notes = 0, deepep_notes = 0;
  for (const auto& n : f.notes) {
    fp4_notes += n.find("SGLANG_DSV4_FP4_EXPERTS") != std::string::npos;
    deepep_notes += n.find("SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=128") != std::string::npos;
  }
  EXPECT_EQ(fp4_notes, 0);
  EXPECT_EQ(deepep_notes, 1);
  const auto base = weights_per_rank(*m, EngineKind::SGLang, par);
  EXPECT_EQ(weights_item(f), base.at(0).bytes + x.main_bytes);
}
