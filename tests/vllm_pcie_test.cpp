// vLLM on PCIe hosts and the VLLM_USE_FLASHINFER_SAMPLER variable:
//  - the GPU catalog's interconnect classes (data/gpus.json) and the --interconnect override;
//  - the multi-GPU CUDA context + NCCL and non-torch terms of vllm_estimates.cpp on PCIe hosts,
//    era by era, against the real PCIe figures they were fitted on (each cited below);
//  - a real 8 x L40S vLLM 0.10.2 start (tests/data/extra/vllm.jsonl xvllm-019) planned end to end;
//  - the sampler path VLLM_USE_FLASHINFER_SAMPLER selects (v1/sample/ops/topk_topp_sampler.py by era).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engines/vllm/vllm_rules.h"
#include "headroom/gpu.h"
#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using headroom::test::input_error;
using headroom::test::run;
using vllm::era_for_version;
using vllm::Estimate;
using vllm::Fabric;
using vllm::FlashInferSampler;

namespace {
double gib_of(int64_t b) { return static_cast<double>(b) / static_cast<double>(GiB); }
bool brackets(const Estimate& e, double gib) { return gib_of(e.low) <= gib + 1e-9 && gib - 1e-9 <= gib_of(e.high); }
}  // namespace

TEST(GpuInterconnect, CatalogClassesAndFabric) {
  for (const auto& g : gpu_catalog()) EXPECT_TRUE(is_interconnect(g.interconnect)) << g.name << ": '" << g.interconnect << "'";
  // vLLM's own log on 8 x L40S: "Custom allreduce is disabled because it's not supported on more
  // than two PCIe-only GPUs" (public-code idx:38962983769).
  EXPECT_EQ(require_gpu("l40s").interconnect, "pcie");
  EXPECT_EQ(require_gpu("rtx-3090").interconnect, "pcie");
  EXPECT_EQ(require_gpu("h100").interconnect, "nvswitch");    // HGX H100 SXM5
  EXPECT_EQ(require_gpu("h100-pcie").interconnect, "pcie");
  EXPECT_EQ(require_gpu("h100-nvl").interconnect, "nvlink");  // bridged PCIe cards
  EXPECT_EQ(require_gpu("mi300x").interconnect, "xgmi");
  EXPECT_EQ(vllm::fabric_of(require_gpu("a10")), Fabric::Pcie);
  EXPECT_EQ(vllm::fabric_of(require_gpu("b200")), Fabric::NvLink);
  // AMD PCIe cards and custom GPUs keep the figures fitted before (no PCIe RCCL log read).
  EXPECT_EQ(vllm::fabric_of(require_gpu("mi210")), Fabric::NvLink);
  EXPECT_EQ(vllm::fabric_of(GpuSpec{}), Fabric::NvLink);
}

TEST(GpuInterconnect, OverrideOnTheCommandLine) {
  Deployment d = parse_deployment(Args::parse({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "a100-80gb", "--interconnect", "pcie"}));
  EXPECT_EQ(d.gpu.interconnect, "pcie");
  EXPECT_EQ(require_gpu("a100-80gb").interconnect, "nvswitch");  // the catalog row is untouched
  EXPECT_NE(input_error({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--interconnect", "infiniband"})
                .find("'infiniband' is not one of nvswitch, nvlink, pcie, xgmi, network"),
            std::string::npos);
}

TEST(GpuInterconnect, AGroupAcrossNodesTakesThePcieFigures) {
  // One GPU per node (Ray): no NVLS, no custom all-reduce ("this process group spans across
  // nodes"). Extra xvllm-094, gpt-oss-120b TP4 on four one-A100-80GB nodes, 0.10.1.1, u = 0.8:
  // "Available KV cache memory: 45.32 GiB" = 0.8 x 79.15 - 17.22 weights - 0.78 of activation
  // (FlashInfer's sampler ~0.67: "Using FlashInfer for top-p & top-k sampling") + non-torch.
  GpuSpec net = require_gpu("a100-80gb");
  net.interconnect = "network";
  EXPECT_EQ(vllm::fabric_of(net), Fabric::Pcie);
  auto avail = [](std::vector<std::string> extra) {
    std::vector<std::string> a{"--engine", "vllm@0.10.1.1", "--model", "openai/gpt-oss-120b", "--gpu", "a100-80gb", "--tp", "4",
                               "--gpu-memory-utilization", "0.8", "--max-model-len", "16384", "--env", "VLLM_USE_FLASHINFER_SAMPLER=1"};
    a.insert(a.end(), extra.begin(), extra.end());
    return headroom::test::number_after(run(a), "Available KV cache memory: ");
  };
  EXPECT_NEAR(avail({"--interconnect", "network"}), 45.32, 0.01 * 45.32);  // 45.24 GiB
  EXPECT_LT(avail({}), 45.32 - 2.0);                                        // the NVLink host's 2.6 GiB of NCCL growth
}

TEST(VllmPcie, NcclBuffersIn0102AreFlatAndSmall) {
  // 0.9.1-0.10.2 build NCCL after the startup snapshot, so "GiB for non-torch memory" holds the
  // communicators' buffers. 8 x L40S TP8, 0.10.2 (xvllm-019): 0.17 .. 0.21 GiB over the ranks;
  // V0 on 2 x RTX 4090 0.25 (vllm#13061), 2 x RTX 3090-class 0.20 (vllm#14447).
  const auto b = era_for_version("0.10.2");
  Estimate p8 = vllm::non_torch_increase(b, 8, 1, Fabric::Pcie);
  EXPECT_NEAR(gib_of(p8.central), 0.21, 0.005);
  EXPECT_TRUE(brackets(p8, 0.17));
  EXPECT_TRUE(brackets(p8, 0.25));
  EXPECT_EQ(vllm::non_torch_increase(b, 2, 1, Fabric::Pcie).central, p8.central);  // not scaled by the world size
  // The NVLink term scales with the ranks (0.65 GiB x 8 = 5.2 GiB): 25x the logged PCIe figure.
  EXPECT_NEAR(gib_of(vllm::non_torch_increase(b, 8, 1).central), 5.2, 0.01);
  // The startup check still sees the CUDA context alone: 44.42 - 43.93 = 0.49 GiB logged.
  EXPECT_TRUE(brackets(vllm::cuda_context(b, 8, 1, false, Fabric::Pcie), 0.49));
}

TEST(VllmPcie, ContextAndNcclFrom011) {
  // Context + NCCL at start on PCIe: 0.92-0.96 (RTX PRO 6000 TP4, vllm-052), 0.70 (L40S TP8
  // 0.10.2: 0.49 + 0.21), 0.70 / 0.65 (V0 TP2 4090 / 3090: ~0.45 + 0.25 / 0.20): median 0.70.
  const auto c = era_for_version("0.11.0");
  Estimate ctx = vllm::cuda_context(c, 4, 1, false, Fabric::Pcie);
  EXPECT_NEAR(gib_of(ctx.central), 0.70, 0.005);
  EXPECT_TRUE(brackets(ctx, 0.65));
  EXPECT_TRUE(brackets(ctx, 0.96));
  EXPECT_LT(ctx.high, vllm::cuda_context(c, 4, 1, false).central);  // below the NVLink host's 1.55 GiB
  // Growth after NCCL init: 0.09 (OPT-2.7B TP4 on 24 GB GPUs, idx:34802511869) .. ~0.35
  // (xvllm-017, 0.19.0 on 4 x L40S, INFERRED): median 0.21.
  Estimate nt = vllm::non_torch_increase(c, 4, 1, Fabric::Pcie);
  EXPECT_NEAR(gib_of(nt.central), 0.21, 0.005);
  EXPECT_TRUE(brackets(nt, 0.09));
  EXPECT_TRUE(brackets(nt, 0.35));
  // The total_consumed era's figure is already a PCIe host's (vllm-052, 1.70): the same for both.
  const auto d = era_for_version("0.27.1");
  EXPECT_EQ(vllm::non_torch_increase(d, 4, 1, Fabric::Pcie).central, vllm::non_torch_increase(d, 4, 1).central);
}

TEST(VllmPcie, V0BudgetChargesNcclAlone) {
  // V0 0.6.5+ keeps one GPU's context in its profiling baseline: the budget's context term is
  // context + NCCL - one context = 0.70 - 0.45 = 0.25 GiB on PCIe, the 0.25 GiB "non_torch_memory
  // takes" of 2 x RTX 4090 (vllm#13061). The ends must still bracket the central.
  Estimate e = vllm::budget_context(era_for_version("0.7.3"), 2, 1, false, Fabric::Pcie);
  EXPECT_NEAR(gib_of(e.central), 0.25, 0.005);
  EXPECT_LE(e.low, e.central);
  EXPECT_GE(e.high, e.central);
}

TEST(VllmPcie, EightL40SOn0102) {
  // xvllm-019 (public-code idx:38962983769): vLLM 0.10.2, Qwen3-235B-A22B-Instruct-2507-FP8, TP8 +
  // expert parallel on 8 x L40S (44.42 GiB), max_model_len 32768, u 0.9. Logged per rank: 27.72
  // GiB weights, 1.4 peak activation, 0.17-0.21 non-torch, 10.64-10.68 GiB KV, 237,344-238,256
  // tokens. The PCIe figures forecast 239,216 tokens (+0.8% against the smallest rank); the
  // NVLink figures (0.65 GiB x 8 ranks of NCCL buffers) forecast 127,888 (-46%). With the 64 MiB RoPE
  // table per rank (262,144 x 128 x 2 B, engines/rope_tables.cpp; weights 27.65 -> 27.72 GiB, as
  // logged): 237,824 (+0.2%) and 126,496.
  const std::vector<std::string> a = {"--engine", "vllm@0.10.2", "--model", "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "--gpu", "l40s",
                                      "--gpu-memory", "44.42GiB", "--tp", "8", "--enable-expert-parallel", "--max-model-len", "32768"};
  Forecast f = run(a);
  EXPECT_EQ(f.kv_tokens, 237824);
  EXPECT_LT(std::abs(static_cast<double>(f.kv_tokens) - 237344.0) / 237344.0, 0.01);
  auto nv = a;
  nv.insert(nv.end(), {"--interconnect", "nvswitch"});
  EXPECT_EQ(run(nv).kv_tokens, 126496);
}

namespace {
Estimate peak(const std::string& version, int64_t reqs, FlashInferSampler fi) {
  return vllm::activation_peak(era_for_version(version), test::sampler_toy(), Parallel{}, 8192, reqs, true, 2, nullptr, fi);
}
}  // namespace

TEST(VllmFlashInferSamplerEnv, ZeroForcesTheSortBefore016) {
  // 0.10.2, 1,024 requests, =0: the PyTorch sort, 38 B/logit: 1,024 x 151,936 x 38 + hidden
  // 8192 x 2048 x 2 = 5,945,688,064; no FlashInfer end any more (0.95x .. 1.1x margins only).
  Estimate e = peak("0.10.2", 1024, FlashInferSampler::Off);
  EXPECT_EQ(e.central, 5945688064);
  EXPECT_NEAR(static_cast<double>(e.low), 5945688064.0 * 0.95, 4.0);
  EXPECT_NEAR(static_cast<double>(e.high), 5945688064.0 * 1.1, 4.0);
}

TEST(VllmFlashInferSamplerEnv, OneTakesFlashInferByEra) {
  // 0.10.2 =1: FlashInfer 14 B: 1,024 x 151,936 x 14 + 33,554,432 = 2,211,708,928; a 0.10 build
  // without FlashInfer falls back to the sort (5,945,688,064) -- the unfavourable end.
  Estimate b = peak("0.10.2", 1024, FlashInferSampler::On);
  EXPECT_EQ(b.central, 2211708928);
  EXPECT_EQ(b.high, 5945688064);
  // 0.8.5 =1: the pre-0.2.3 API, probs only, 10 B: 256 x 151,936 x 10 + 33,554,432 = 422,510,592;
  // the sort (1,511,587,840) if the installed FlashInfer is >= 0.2.3 (PR #14815).
  Estimate a = peak("0.8.5", 256, FlashInferSampler::On);
  EXPECT_EQ(a.central, 422510592);
  EXPECT_EQ(a.high, 1511587840);
  // 0.11+ opt-in (PR #26859) never falls back: 14 B, 256 x 151,936 x 14 + 33,554,432 = 578,093,056.
  Estimate c = peak("0.11.0", 256, FlashInferSampler::On);
  EXPECT_EQ(c.central, 578093056);
  EXPECT_NEAR(static_cast<double>(c.high), 578093056.0 * 1.1, 4.0);
  // Unset keeps the pip-install default (the sort) as before.
  EXPECT_EQ(peak("0.10.2", 1024, FlashInferSampler::Unset).central, 5945688064);
}

TEST(VllmFlashInferSamplerEnv, From016BothValuesAre14Bytes) {
  // 0.16+: =1 FlashInfer, =0 the native path whose apply_top_k_top_p runs the Triton kernel:
  // both 14 B (578,093,056 at 256 requests), as unset. 0.24.0: the dense toy model still runs the
  // V1 runner there (Model Runner V2 and its own sampler from 0.25.1, vllm_graph_estimate_test.cpp).
  for (auto fi : {FlashInferSampler::Off, FlashInferSampler::On, FlashInferSampler::Unset}) {
    Estimate e = peak("0.24.0", 256, fi);
    EXPECT_EQ(e.central, 578093056);
  }
  EXPECT_NE(peak("0.24.0", 256, FlashInferSampler::Off).basis.find("Triton"), std::string::npos);
}

TEST(VllmFlashInferSamplerEnv, ReadFromEnvAsVllmDoes) {
  auto kv = [](const std::string& value) {
    std::vector<std::string> a = {"--engine", "vllm@0.10.2", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"};
    if (!value.empty()) a.insert(a.end(), {"--env", "VLLM_USE_FLASHINFER_SAMPLER=" + value});
    return run(a);
  };
  Forecast unset = kv(""), off = kv("0"), on = kv("1");
  // The default is the sort (unset): =0 changes nothing; =1 frees (38 - 14) x 1,024 dummy
  // requests (H100's max_num_seqs) x 151,936 B = 3,733,979,136 B of profile peak for the KV pool:
  // Qwen3-8B holds 36 x 8 x 128 x 2 x 2 = 147,456 B per token -> 25,322 tokens (to the block of 16).
  EXPECT_EQ(off.kv_tokens, unset.kv_tokens);
  EXPECT_NEAR(static_cast<double>(on.kv_tokens - unset.kv_tokens), 25322.0, 16.0);
  for (const auto& n : on.notes) EXPECT_EQ(n.find("VLLM_USE_FLASHINFER_SAMPLER=1 is not modelled"), std::string::npos) << n;
  // envs.py: bool(int(value)); "true" raises ValueError -> one error line, exit 2.
  EXPECT_NE(input_error({"--engine", "vllm@0.10.2", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--env", "VLLM_USE_FLASHINFER_SAMPLER=true"})
                .find("is not an integer"),
            std::string::npos);
  // V0 (< 0.8) is not modelled: a note, the same forecast.
  Forecast v0 = run({"--engine", "vllm@0.7.3", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--env", "VLLM_USE_FLASHINFER_SAMPLER=1"});
  EXPECT_TRUE(std::any_of(v0.notes.begin(), v0.notes.end(), [](const std::string& n) {
    return n.find("VLLM_USE_FLASHINFER_SAMPLER=1 is not modelled for V0") != std::string::npos;
  }));
}
