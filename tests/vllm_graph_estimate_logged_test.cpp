// vLLM's own CUDA-graph estimate ("Estimated CUDA graph memory: X GiB total", printed from 0.17 and
// subtracted from the KV budget from 0.21, PR #38284) forecast against the figure real startup logs
// print. The forecast is vllm_estimates.cpp cuda_graph_estimate: on the V1 runner the flat capture
// forecast (0.19 MiB per graph x layer + 16 MiB) with its per-graph part x 1.18 where the
// second-largest capture size's hidden states are a large allocation (> 1 MiB), because
// profile_cudagraph_memory extrapolates the second-largest graph's delta to every graph. Each case
// plans the logged deployment (the same flags as its jsonl case) and reads the predicted line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "plan_test_util.h"

using namespace headroom;
using headroom::test::run;

namespace {
// The GiB figure of the forecast's "Estimated CUDA graph memory" line; NAN when none is printed.
double estimate_gib(const Forecast& f) { return headroom::test::number_after(f, "Estimated CUDA graph memory: "); }

struct Logged {
  const char* id;
  double logged;  // "Estimated CUDA graph memory: X GiB total" as printed
  double forecast;  // what this model prints (pinned)
  std::vector<std::string> args;
};

// Every log at hand (extra file, visible corpus) that prints the estimate with a deployment the
// catalog covers. Sources are in the jsonl cases' `source` fields.
const std::vector<Logged>& logged() {
  static const std::vector<Logged> v = {
      // Flat-cost captures (their "took" within ~20% of 0.19 MiB per graph x layer):
      // xvllm-037, public-code 67144197265: Qwen2.5-7B 0.22.0, 35 + 19 graphs x 28 layers; capture
      // forecast 303.28 MiB -> 16 + 287.28 x 1.18 = 355.0 MiB = 0.35 GiB (logged 0.37, took 0.31).
      {"xvllm-037", 0.37, 0.35, {"--engine", "vllm@0.22.0", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "l40s", "--gpu-memory-utilization", "0.95",
                                 "--max-model-len", "4096", "--max-num-batched-tokens", "2048", "--max-num-seqs", "128"}},
      // xvllm-036, public-code 55770092662: Qwen3.5-4B 0.22.0 (dense GDN hybrid, its GDN layers at the
      // attention cost before 0.26), 86 x 32: capture 538.88 MiB -> 16 + 522.88 x 1.18 = 633.0 MiB
      // = 0.62 (logged 0.64, took 0.55).
      {"xvllm-036", 0.64, 0.62, {"--engine", "vllm@0.22.0", "--model", "Qwen/Qwen3.5-4B", "--gpu", "l40s", "--max-model-len", "1024",
                                 "--gpu-memory-utilization", "0.5", "--max-num-batched-tokens", "8192", "--max-num-seqs", "256"}},
      // xvllm-035, public-code 51781852921: Qwen3.5-9B 0.19.0, 86 x 32 -> 0.62 (logged 0.78, took 0.65;
      // 0.19 prints the estimate without charging it).
      {"xvllm-035", 0.78, 0.62, {"--engine", "vllm@0.19.0", "--model", "Qwen/Qwen3.5-9B", "--gpu", "l40s", "--max-num-batched-tokens", "8192",
                                 "--max-num-seqs", "256"}},
      // vllm-029 (LMCache#3430): Qwen3-8B 0.21.0 on an RTX A5000, 86 x 36: 588.24 x 1.18 + 16 =
      // 710.1 MiB = 0.69 (logged 0.52).
      {"vllm-029", 0.52, 0.69, {"--engine", "vllm@0.21.0", "--model", "Qwen/Qwen3-8B", "--gpu", "rtx-a5000", "--gpu-memory-utilization", "0.9764",
                                "--max-model-len", "16384"}},
      // vllm-058: Qwen3-235B-A22B-FP8 TP4+EP on H100, 0.20.0, 35 + 19 graphs x 94 layers: 964.44 x
      // 1.18 + 16 = 1,154.0 MiB = 1.13 (logged 1.10, took 0.96).
      {"vllm-058", 1.10, 1.13, {"--engine", "vllm@0.20.0", "--model", "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "--gpu", "h100", "--tp", "4",
                                "--enable-expert-parallel", "--max-num-batched-tokens", "32768", "--gpu-memory-utilization", "0.96",
                                "--max-num-seqs", "128", "--max-model-len", "240000", "--disable-custom-all-reduce",
                                "--num-gpu-blocks-override", "15000"}},
      // Captures far above the flat cost, not modelled (vllm_estimates.cpp graph_memory): Qwen3-8B
      // on an A100-40GB 0.19.1 (xvllm-010, took 2.44), Qwen3.5-9B fp8 + prefix caching 0.18.0
      // (xvllm-034, took 1.29). Qwen2.5-72B TP4 on PCIe L40S 0.19.0 (xvllm-017, took 2.62) now takes
      // the NCCL-in-graph term (nccl_graph_capture: custom all-reduce is off on four PCIe GPUs):
      // capture 3.17, estimate 16 + (3,230 MiB of capture above it) x 1.18 = 3.74 GiB (1.52 before).
      {"xvllm-010", 2.35, 0.69, {"--engine", "vllm@0.19.1", "--model", "Qwen/Qwen3-8B", "--gpu", "a100-40gb"}},
      {"xvllm-017", 2.73, 3.74, {"--engine", "vllm@0.19.0", "--model", "Qwen/Qwen2.5-72B-Instruct", "--gpu", "l40s", "--tp", "4", "--max-model-len", "8192"}},
      {"xvllm-034", 1.58, 0.62, {"--engine", "vllm@0.18.0", "--model", "Qwen/Qwen3.5-9B", "--gpu", "l40s", "--max-model-len", "65536", "--kv-cache-dtype",
                                 "fp8", "--enable-prefix-caching", "--max-num-batched-tokens", "8192", "--max-num-seqs", "256"}},
      // Hybrids whose first capture is not the flat cost: xvllm-020 (dense 27B hybrid, 0.23.1, FULL
      // graphs warmed up with 8,192 context tokens per request at max_num_batched_tokens 65536; its
      // sizes end at 16 tokens, so no x1.18: 9 x 64 x 0.19 + 16 = 125.4 MiB = 0.12) and xvllm-021
      // (MoE hybrid at TP1, where the 1.88 MiB / tp GDN figure fitted at TP2/TP4 overshoots).
      {"xvllm-020", 0.61, 0.12, {"--engine", "vllm@0.23.1", "--model", "nvidia/Qwen3.6-27B-NVFP4", "--gpu", "dgx-spark", "--gpu-memory-utilization", "0.70",
                                 "--max-model-len", "262144", "--max-num-seqs", "8", "--max-num-batched-tokens", "65536", "--kv-cache-dtype", "fp8",
                                 "--enable-prefix-caching"}},
      {"xvllm-021", 1.65, 4.91, {"--engine", "vllm@0.18.1", "--model", "Qwen/Qwen3.5-35B-A3B-FP8", "--gpu", "dgx-spark", "--max-num-batched-tokens", "2048"}},
  };
  return v;
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}
}  // namespace

TEST(VllmGraphEstimateLogged, EachCasePrintsThePinnedEstimate) {
  for (const auto& c : logged()) {
    SCOPED_TRACE(c.id);
    EXPECT_NEAR(estimate_gib(run(c.args)), c.forecast, 0.005);
  }
}

TEST(VllmGraphEstimateLogged, ErrorAgainstTheLoggedEstimates) {
  // |forecast - logged| / logged. All ten: 2.7% .. 197.6%, median 38.5% (42.4% when the estimate was
  // the capture forecast itself: 0.30 / 0.53 / 0.53 / 0.59 / 0.96 GiB for the first five, 0.59 / 1.29 /
  // 0.53 / 0.12 / 4.91 for the rest). The five flat-cost builds: -5.4%, -3.1%, -20.5%, +32.7%, +2.7%,
  // median 5.4% (before: -18.9%, -17.2%, -32.1%, +13.5%, -12.7%, median 17.2%). With the NCCL
  // term on xvllm-017 (-44.3% -> +37.0%) the median of all ten is 34.8%.
  std::vector<double> all, flat;
  for (size_t i = 0; i < logged().size(); ++i) {
    const auto& c = logged()[i];
    const double e = std::abs(estimate_gib(run(c.args)) - c.logged) / c.logged * 100;
    all.push_back(e);
    if (i < 5) flat.push_back(e);
  }
  EXPECT_NEAR(median(all), 34.8, 0.1);
  EXPECT_NEAR(median(flat), 5.4, 0.1);  // a change that moves either should be re-pinned, with its reason
}

TEST(VllmGraphEstimateLogged, TheCaptureItselfStaysTheFlatCost) {
  // The real capture ("took") is not the estimate: xvllm-037 forecast 0.30 GiB took (logged 0.31)
  // beside its 0.35 estimate, and the plan's comparison line prints both.
  const Forecast f = run(logged()[0].args);
  EXPECT_TRUE(test::has_line(f, "Graph capturing finished, took 0.30 GiB"));
  EXPECT_TRUE(test::has_prefix(f, "CUDA graph pool memory: 0.3 GiB (actual), 0.35 GiB (estimated)"));
}

TEST(VllmGraphEstimateLogged, ShortSmallCaptureListsKeepTheCapture) {
  // Where the second-largest size's hidden states fit PyTorch's small-allocation class (<= 1 MiB)
  // the logged estimate and capture agree (vllm_estimates.cpp cuda_graph_estimate), and the
  // forecast's estimate is the capture forecast:
  // - max_num_seqs 32 (corpus vllm-052's setting): PIECEWISE sizes up to 64, second-largest 56;
  //   56 x 4096 x 2 B = 458,752 B. Qwen3-8B on an H100, 0.22.0: the estimate's basis 11 + 7 graphs x
  //   36 layers x 0.19 + 16 = 139.1 MiB -> 0.14 GiB, the capture 36 x (11 x 0.27 + 7 x 0.05) + 16 =
  //   135.5 MiB -> 0.13.
  const Forecast small = run({"--engine", "vllm@0.22.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-num-seqs", "32"});
  EXPECT_NEAR(estimate_gib(small), 0.14, 0.005);
  EXPECT_TRUE(test::has_line(small, "Graph capturing finished, took 0.13 GiB"));
  // - hidden 1024: 496 x 1024 x 2 B = 1,015,808 B, just under 1 MiB. public-code 54318626907
  //   (Qwen3-0.6B-W4A16, 0.19.1, a ~31 GiB card) logs "0.27 GiB (actual), 0.27 GiB (estimated)".
  //   Qwen3-0.6B has the same 28 layers: 86 x 28 x 0.19 + 16 = 473.5 MiB = 0.46 for both (that
  //   capture itself came out at 0.27, below the flat cost).
  const Forecast tiny = run({"--engine", "vllm@0.19.1", "--model", "Qwen/Qwen3-0.6B", "--gpu", "rtx-5090"});
  EXPECT_NEAR(estimate_gib(tiny), 0.46, 0.005);
  // - the same Qwen3-8B at max_num_seqs 256 (second-largest 496: 3.9 MiB of hidden states):
  //   86 x 36 x 0.19 = 588.2 MiB x 1.18 + 16 = 710.1 MiB = 0.69 estimated against 36 x (51 x 0.27 +
  //   35 x 0.05) + 16 = 574.7 MiB = 0.56 captured.
  const Forecast big = run({"--engine", "vllm@0.22.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-num-seqs", "256"});
  EXPECT_NEAR(estimate_gib(big), 0.69, 0.005);
  EXPECT_TRUE(test::has_line(big, "Graph capturing finished, took 0.56 GiB"));
}
