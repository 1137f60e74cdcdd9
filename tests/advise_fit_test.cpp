// headroom fit: which GPUs, how many and which layout serve a workload. Expectations are
// worked by hand from the checkpoint sizes and KV cells (arithmetic next to each case).
#include <gtest/gtest.h>

#include <sstream>

#include "headroom/advise.h"
#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/error.h"

using namespace headroom;

namespace {

FitRequest request(const std::string& engine, const std::string& model, std::vector<std::string> gpus, int64_t ctx, int64_t conc) {
  FitRequest req;
  req.base = parse_deployment(Args::parse({"--engine", engine, "--model", model, "--gpu", gpus.empty() ? "h100" : gpus.front()}));
  req.gpu_names = std::move(gpus);
  req.goal.target_context = ctx;
  req.goal.target_concurrency = conc;
  return req;
}

const FitCandidate* find(const std::vector<FitCandidate>& v, const std::string& gpu, int n, int tp, int pp = 1, int dp = 1, int ep = 1) {
  for (const auto& c : v)
    if (c.gpu == gpu && c.gpus == n && c.par.tp == tp && c.par.pp == pp && c.par.dp == dp && c.par.ep == ep) return &c;
  return nullptr;
}

bool any_feasible_with(const FitResult& r, const std::string& gpu, int n) {
  for (const auto& c : r.candidates)
    if (c.gpu == gpu && c.gpus == n) return true;
  return false;
}

}  // namespace

TEST(AdviseFit, Glm5OnRtxPro6000) {
  // GLM-5-NVFP4 is ~441 GB + a 20 GB BF16 MTP layer (tests/data/seed/README.md): on 4 GPUs that
  // is > 100 GiB per GPU > 94.97 GiB; on 8 about 51 GiB, and 131,072 x 2 = 262,144 tokens of the
  // 61,464 B cell take 15 GiB of the ~40 GiB left (the real 8-GPU run held ~425K tokens at 0.88).
  FitResult r = fit(request("sglang", "nvidia/GLM-5-NVFP4", {}, 131072, 2));
  const FitCandidate* eight = find(r.candidates, "rtx-pro-6000", 8, 8);
  ASSERT_NE(eight, nullptr) << "8 x RTX PRO 6000 TP 8 should be feasible";
  EXPECT_GE(eight->kv_tokens, 2 * 131072);
  EXPECT_EQ(eight->verdict, Verdict::Fits);
  EXPECT_NE(eight->launch_command.find("--tp-size 8"), std::string::npos);
  const FitCandidate* four = find(r.rejected, "rtx-pro-6000", 4, 4);
  ASSERT_NE(four, nullptr);
  EXPECT_EQ(four->reason.rfind("weights do not fit", 0), 0u) << four->reason;
  EXPECT_FALSE(any_feasible_with(r, "rtx-pro-6000", 4));
  // Ranked: fewest GPUs first.
  for (size_t i = 1; i < r.candidates.size(); ++i) EXPECT_LE(r.candidates[i - 1].gpus, r.candidates[i].gpus);
  EXPECT_GT(r.plans, r.evaluated);
}

TEST(AdviseFit, Llama70bDenseOnH100AndH200) {
  // Llama-3.1-70B BF16: 70.55B params x 2 B = 131.4 GiB. SGLang cell 80 layers x 8 KV heads x
  // 128 x 2 (K, V) x 2 B = 327,680 B, / TP. Target 131,072 x 2 = 262,144 tokens.
  //  1 x H100 (79.19 GiB): 131.4 > 79.19 -> weights do not fit.
  //  2 x H100 TP 2: 65.7 GiB weights, ~12.5 GiB left after weights: even all of it holds
  //    12.5 GiB / 163,840 B = 81,920 tokens < 262,144 -> KV too small.
  //  4 x H100 TP 4: 32.9 GiB weights, ~45 GiB left; ~37 GiB of KV / 81,920 B = ~485K tokens -> fits.
  //  1 x H200 (139.8 GiB): ~7.4 GiB after weights -> < 46K tokens -> KV too small.
  //  2 x H200 TP 2: ~73 GiB after weights; ~59 GiB of KV / 163,840 B = ~387K tokens -> fits, and
  //    with 2 GPUs it ranks first.
  FitResult r = fit(request("sglang", "meta-llama/Llama-3.1-70B-Instruct", {"h100", "h200"}, 131072, 2));
  const FitCandidate* h100x1 = find(r.rejected, "h100", 1, 1);
  ASSERT_NE(h100x1, nullptr);
  EXPECT_EQ(h100x1->reason.rfind("weights do not fit", 0), 0u) << h100x1->reason;
  const FitCandidate* h100x2 = find(r.rejected, "h100", 2, 2);
  ASSERT_NE(h100x2, nullptr);
  EXPECT_NE(h100x2->reason.find("KV"), std::string::npos) << h100x2->reason;
  EXPECT_NE(find(r.candidates, "h100", 4, 4), nullptr);
  EXPECT_FALSE(any_feasible_with(r, "h200", 1));
  ASSERT_NE(find(r.candidates, "h200", 2, 2), nullptr);
  ASSERT_FALSE(r.candidates.empty());
  EXPECT_EQ(r.candidates.front().gpu, "h200");
  EXPECT_EQ(r.candidates.front().gpus, 2);
}

TEST(AdviseFit, Qwen3MoeFp8OnH100AndH200) {
  // Qwen3-235B-A22B-FP8: ~235B FP8 params + BF16 embeddings/lm_head (2 x 151,936 x 4,096 x 2 B)
  // = ~221 GiB. Cell 94 layers x 4 KV heads x 128 x 2 x 2 B = 192,512 B (/ TP while TP <= 4).
  // Target 32,768 x 4 = 131,072 tokens.
  //  2 x H100: 110 GiB per GPU > 79.19 -> weights do not fit; 1 x H200: 221 > 139.8 -> same.
  //  2 x H200 TP 2: ~28 GiB after weights; ~14 GiB KV / 96,256 B = ~156K tokens >= 131,072.
  //  4 x H100 TP 4: 55 GiB weights, ~23 GiB after; ~15 GiB / 48,128 B = ~335K tokens.
  FitResult r = fit(request("sglang", "Qwen/Qwen3-235B-A22B-FP8", {"h100", "h200"}, 32768, 4));
  const FitCandidate* h100x2 = find(r.rejected, "h100", 2, 2);
  ASSERT_NE(h100x2, nullptr);
  EXPECT_EQ(h100x2->reason.rfind("weights do not fit", 0), 0u) << h100x2->reason;
  const FitCandidate* h200x1 = find(r.rejected, "h200", 1, 1);
  ASSERT_NE(h200x1, nullptr);
  EXPECT_EQ(h200x1->reason.rfind("weights do not fit", 0), 0u) << h200x1->reason;
  EXPECT_NE(find(r.candidates, "h200", 2, 2), nullptr);
  EXPECT_NE(find(r.candidates, "h100", 4, 4), nullptr);
  EXPECT_EQ(r.candidates.front().gpus, 2);
  // The MoE layouts are tried: expert parallel and DP attention.
  bool ep = false, dpa = false;
  for (const auto* v : {&r.candidates, &r.rejected})
    for (const auto& c : *v) {
      ep = ep || c.par.ep > 1;
      dpa = dpa || c.par.dp_attention;
    }
  EXPECT_TRUE(ep);
  EXPECT_TRUE(dpa);
}

TEST(AdviseFit, SortByKv) {
  FitRequest req = request("sglang", "meta-llama/Llama-3.1-70B-Instruct", {"h100", "h200"}, 131072, 2);
  req.sort = FitSort::Kv;
  FitResult r = fit(req);
  for (size_t i = 1; i < r.candidates.size(); ++i)
    EXPECT_GE(r.candidates[i - 1].kv_tokens * r.candidates[i - 1].groups, r.candidates[i].kv_tokens * r.candidates[i].groups);
}

TEST(AdviseFit, CliJsonAndExitCodes) {
  std::ostringstream out, err;
  int rc = run_cli({"fit", "--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--target-context", "131072", "--target-concurrency", "2",
                    "--gpu", "rtx-pro-6000", "--json"},
                   out, err);
  EXPECT_EQ(rc, kExitOk) << err.str();
  auto j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j["candidates"].is_array());
  ASSERT_FALSE(j["candidates"].empty());
  const auto& c = j["candidates"][0];
  for (const char* key : {"gpu", "gpus", "tp", "pp", "ep", "dp", "kv_tokens", "verdict"}) EXPECT_TRUE(c.contains(key)) << key;
  ASSERT_TRUE(j["rejected"].is_array());
  for (const auto& x : j["rejected"]) EXPECT_TRUE(x.contains("reason"));
  // Nothing serves it on 2 GPUs at most: exit 1.
  std::ostringstream o2, e2;
  EXPECT_EQ(run_cli({"fit", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--max-gpus", "2"}, o2, e2), kExitFails);
  // Bad input: exit 2.
  std::ostringstream o3, e3;
  EXPECT_EQ(run_cli({"fit", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "voodoo-5"}, o3, e3), kExitBadInput);
  EXPECT_EQ(run_cli({"fit", "--model", "nvidia/GLM-5-NVFP4", "--target-context", "1000000"}, o3, e3), kExitBadInput);
  EXPECT_EQ(run_cli({"fit", "--model", "nvidia/GLM-5-NVFP4", "--max-gpus", "0"}, o3, e3), kExitBadInput);
  EXPECT_EQ(run_cli({"fit", "--model", "nvidia/GLM-5-NVFP4", "--tp", "8"}, o3, e3), kExitBadInput);
  EXPECT_EQ(run_cli({"fit", "--model", "nvidia/GLM-5-NVFP4", "--sort", "price"}, o3, e3), kExitBadInput);
  // An option the engine does not know is wrong in every layout: one error, not 700 rejections.
  std::ostringstream o4, e4;
  EXPECT_EQ(run_cli({"fit", "--engine", "vllm", "--model", "Qwen/Qwen3-32B", "--context-len", "32768"}, o4, e4), kExitBadInput);
  EXPECT_NE(e4.str().find("unrecognized arguments: --context-len 32768"), std::string::npos);
}

TEST(AdviseFit, ContradictoryTargetsEveryEngine) {
  // One clear line on stderr and exit 2 for each engine model: a context beyond the model's
  // (Qwen3-235B-A22B-FP8: max_position_embeddings 40,960), no GPU allowed, a GPU not in the
  // catalog, absurd values.
  for (const char* engine : {"sglang", "vllm", "trtllm"}) {
    SCOPED_TRACE(engine);
    const std::vector<std::string> base{"fit", "--engine", engine, "--model", "Qwen/Qwen3-235B-A22B-FP8"};
    for (const auto& extra : std::vector<std::vector<std::string>>{{"--target-context", "131072"},
                                                                   {"--max-gpus", "0"},
                                                                   {"--gpus", "0"},
                                                                   {"--gpu", "voodoo-5"},
                                                                   {"--target-concurrency", "0"},
                                                                   {"--target-context", "0"},
                                                                   {"--kv-cache-dtype", "fp9"},
                                                                   {"--margin", "-1"}}) {
      std::ostringstream out, err;
      EXPECT_EQ(run_cli([&] {
                  auto a = base;
                  a.insert(a.end(), extra.begin(), extra.end());
                  return a;
                }(),
                        out, err),
                kExitBadInput)
          << extra.front() << " " << extra.back();
      const std::string e = err.str();
      EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
    }
  }
}

TEST(AdviseFit, Llama70bDenseVllmAndTrtllm) {
  // The same arithmetic as Llama70bDenseOnH100AndH200, for vLLM and TensorRT-LLM (both hold the
  // 327,680 B/token cell, / TP): 131.42 GiB of BF16 weights, target 131,072 x 2 = 262,144 tokens.
  //  1 x H100: 131.42 > 79.19 GiB -> weights do not fit.
  //  2 x H100 TP 2: 65.71 GiB weights leave < 13.5 GiB; 262,144 x 163,840 B = 40 GiB -> no.
  //  1 x H200: 8.4 GiB after weights < 262,144 x 327,680 B = 80 GiB -> no.
  //  4 x H100 TP 4: 32.9 GiB weights, ~46 GiB left >= 262,144 x 81,920 B = 20 GiB -> fits.
  //  2 x H200 TP 2: 65.7 GiB weights, ~74 GiB left >= 40 GiB -> fits; 2 GPUs rank first.
  for (const char* engine : {"vllm", "trtllm"}) {
    SCOPED_TRACE(engine);
    FitResult r = fit(request(engine, "meta-llama/Llama-3.1-70B-Instruct", {"h100", "h200"}, 131072, 2));
    const FitCandidate* h100x1 = find(r.rejected, "h100", 1, 1);
    ASSERT_NE(h100x1, nullptr);
    // vLLM also holds the 32 MiB RoPE table (131,072 x 128 x 2 B, engines/rope_tables.cpp): 131.45 GiB.
    const std::string want = std::string("weights do not fit: ") + (std::string(engine) == "vllm" ? "131.45" : "131.42") + " GiB per GPU > 79.19 GiB";
    EXPECT_EQ(h100x1->reason.rfind(want, 0), 0u) << h100x1->reason;
    ASSERT_NE(find(r.rejected, "h100", 2, 2), nullptr);
    EXPECT_FALSE(any_feasible_with(r, "h100", 2));
    EXPECT_FALSE(any_feasible_with(r, "h200", 1));
    const FitCandidate* h100x4 = find(r.candidates, "h100", 4, 4);
    ASSERT_NE(h100x4, nullptr);
    EXPECT_GE(h100x4->kv_tokens, 262144);
    const FitCandidate* h200x2 = find(r.candidates, "h200", 2, 2);
    ASSERT_NE(h200x2, nullptr);
    EXPECT_GE(h200x2->kv_tokens, 262144);
    ASSERT_FALSE(r.candidates.empty());
    EXPECT_EQ(r.candidates.front().gpu, "h200");
    EXPECT_EQ(r.candidates.front().gpus, 2);
  }
}

TEST(AdviseFit, Qwen3MoeFp8VllmAndTrtllm) {
  // As Qwen3MoeFp8OnH100AndH200 for vLLM and TensorRT-LLM: ~220 GiB of weights; 32,768 x 4 =
  // 131,072 tokens of 192,512 B / TP. 1 GPU of either and 2 x H100 (110 GiB per GPU > 79.19):
  // weights do not fit. 2 x H200 TP 2 (~30 GiB left) and 4 x H100 TP 4 (~24 GiB left) hold it.
  for (const char* engine : {"vllm", "trtllm"}) {
    SCOPED_TRACE(engine);
    FitResult r = fit(request(engine, "Qwen/Qwen3-235B-A22B-FP8", {"h100", "h200"}, 32768, 4));
    for (auto [gpu, n] : {std::pair<const char*, int>{"h100", 1}, {"h200", 1}, {"h100", 2}}) {
      const FitCandidate* c = find(r.rejected, gpu, n, n);
      ASSERT_NE(c, nullptr) << gpu << " x " << n;
      EXPECT_EQ(c->reason.rfind("weights do not fit", 0), 0u) << c->reason;
      EXPECT_FALSE(any_feasible_with(r, gpu, n));
    }
    EXPECT_NE(find(r.candidates, "h200", 2, 2), nullptr);
    EXPECT_NE(find(r.candidates, "h100", 4, 4), nullptr);
    ASSERT_FALSE(r.candidates.empty());
    EXPECT_EQ(r.candidates.front().gpus, 2);
    bool ep = false;
    for (const auto* v : {&r.candidates, &r.rejected})
      for (const auto& c : *v) ep = ep || c.par.ep > 1;
    EXPECT_TRUE(ep);  // the MoE layouts are tried
  }
}

TEST(AdviseFit, TrtllmShrunkContextMissesTheTarget) {
  // TensorRT-LLM shrinks max_seq_len to the tokens the pool holds instead of refusing: 1 x H200
  // holds ~19K tokens of Llama-3.1-70B (8.4 GiB after 131.42 GiB of weights, 327,680 B/token),
  // so even one request of 131,072 tokens is not served: rejected for the context.
  FitResult r = fit(request("trtllm", "meta-llama/Llama-3.1-70B-Instruct", {"h200"}, 131072, 1));
  const FitCandidate* one = find(r.rejected, "h200", 1, 1);
  ASSERT_NE(one, nullptr);
  EXPECT_NE(one->reason.find("< target context 131072"), std::string::npos) << one->reason;
}

// llama.cpp (issue 25 item 7): its layers spread over n cards of one kind, every layer on the
// GPUs, a target concurrency as that many slots each holding the target context. Qwen3-32B
// Q4_K_M at 32768 x 4: KV = 64 layers x 8 KV heads x 128 x 2 (K, V) x 2 B x 131,072 cells = 32 GiB,
// with ~18.6 GiB of weights: more than 2 x 23.64 GiB RTX 4090s, within 4.
TEST(AdviseFit, LlamacppSpreadsLayersAndCountsSlots) {
  FitRequest req;
  req.base = parse_deployment(Args::parse({"--engine", "llamacpp", "--model", "Qwen/Qwen3-32B", "--quant", "Q4_K_M", "--gpu", "rtx-4090"}));
  req.gpu_names = {"rtx-4090"};
  req.goal.target_context = 32768;
  req.goal.target_concurrency = 4;
  req.max_gpus = 4;
  const FitResult r = fit(req);
  ASSERT_EQ(r.candidates.size(), 1u);
  const FitCandidate& c = r.candidates.front();
  EXPECT_EQ(c.gpus, 4);
  EXPECT_TRUE(c.layer_split);
  EXPECT_EQ(c.kv_tokens, 131072);
  EXPECT_DOUBLE_EQ(c.concurrency, 4.0);
  EXPECT_NE(c.launch_command.find("--parallel 4 --ctx-size 131072"), std::string::npos) << c.launch_command;
  ASSERT_EQ(r.rejected.size(), 2u);  // 1 and 2 cards
  EXPECT_EQ(r.rejected[1].gpus, 2);
}

// The cache is the context asked for on any card, so the best card is the smallest that holds it.
TEST(AdviseFit, LlamacppPrefersTheSmallestCardThatHoldsTheContext) {
  FitRequest req;
  req.base = parse_deployment(Args::parse({"--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--gpu", "h100"}));
  req.gpu_names = {"h100", "rtx-4090", "rtx-3060"};
  req.goal.target_context = 8192;
  req.max_gpus = 1;
  const FitResult r = fit(req);
  ASSERT_EQ(r.candidates.size(), 3u);
  EXPECT_EQ(r.candidates[0].gpu, "rtx-3060");  // 12 GB holds ~4.7 GiB of weights + 1.1 GiB of KV
  EXPECT_EQ(r.candidates[2].gpu, "h100");
}
