// GPU catalog: names, aliases, capacities from real logs.
#include <gtest/gtest.h>

#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/units.h"

using namespace headroom;

TEST(GpuCatalog, RtxPro6000MatchesSeedCrash) {
  // Seed crash: "GPU 4 has a total capacity of 94.97 GiB".
  const GpuSpec& g = require_gpu("RTX-PRO-6000");
  EXPECT_EQ(gib2(g.capacity_bytes), "94.97");
  EXPECT_EQ(g.smi_total_mib, 97887);
  EXPECT_EQ(g.sm, 120);
  EXPECT_TRUE(g.fp4);
}

TEST(GpuCatalog, AliasesAreCaseInsensitive) {
  EXPECT_EQ(require_gpu("H200").name, "h200");
  EXPECT_EQ(require_gpu("a100").name, "a100-80gb");
  EXPECT_EQ(require_gpu("RTX PRO 6000").name, "rtx-pro-6000");
  EXPECT_EQ(gib2(require_gpu("h100").capacity_bytes), "79.19");
}

TEST(GpuCatalog, UnknownGpuIsInputError) {
  EXPECT_THROW(require_gpu("voodoo-5"), InputError);
}

TEST(Units, ParseBytes) {
  EXPECT_EQ(parse_bytes("1GiB", "t", "f"), GiB);
  EXPECT_EQ(parse_bytes("97887MiB", "t", "f"), 97887 * MiB);
  EXPECT_EQ(parse_bytes("80GB", "t", "f"), 80'000'000'000);
  EXPECT_EQ(parse_bytes("12345", "t", "f"), 12345);
  EXPECT_THROW(parse_bytes("-5GiB", "t", "f"), InputError);
  EXPECT_THROW(parse_bytes("5 parsecs", "t", "f"), InputError);
  EXPECT_THROW(parse_bytes("1e400GiB", "t", "f"), InputError);
}

TEST(GpuCatalog, WorkstationAndDesktopCardsFromLogs) {
  // RTX A5000: torch OOM lines "GPU 0 has a total capacity of 23.68 GiB" (corpus vllm-029 runs on one);
  // nvidia-smi 24564 MiB with ECC off.
  const GpuSpec& a5000 = require_gpu("RTX A5000");
  EXPECT_EQ(a5000.name, "rtx-a5000");
  EXPECT_EQ(gib2(a5000.capacity_bytes), "23.68");
  EXPECT_EQ(a5000.smi_total_mib, 24564);
  EXPECT_EQ(a5000.sm, 86);
  EXPECT_FALSE(a5000.fp8);
  // RTX 5060 (8 GB desktop): llama.cpp prints "CUDA0: NVIDIA GeForce RTX 5060 (7708 MiB, ...)" = 7.53 GiB;
  // nvidia-smi 8151 MiB.
  const GpuSpec& r5060 = require_gpu("rtx5060");
  EXPECT_EQ(r5060.capacity_bytes, int64_t{7708} * MiB);
  EXPECT_EQ(gib2(r5060.capacity_bytes), "7.53");
  EXPECT_EQ(r5060.smi_total_mib, 8151);
  EXPECT_EQ(r5060.sm, 120);
}

TEST(GpuCatalog, DgxSparkUnifiedMemory) {
  // vLLM on DGX Spark: "Free memory on device cuda:0 (101.3/121.69 GiB) on startup is less than desired
  // GPU memory utilization (0.87, 105.87 GiB)": total 121.69 GiB; 0.87 x total prints as 105.87.
  const GpuSpec& g = require_gpu("GB10");
  EXPECT_EQ(g.name, "dgx-spark");
  EXPECT_EQ(gib2(g.capacity_bytes), "121.69");
  EXPECT_EQ(gib2(static_cast<int64_t>(0.87 * static_cast<double>(g.capacity_bytes))), "105.87");
  EXPECT_EQ(g.smi_total_mib, 0);  // nvidia-smi: memory "Not Supported" on GB10
  EXPECT_EQ(g.sm, 121);
  EXPECT_EQ(require_gpu("DGX Spark").name, "dgx-spark");
}

TEST(GpuCatalog, DatacenterRowsFromLogs) {
  // Tesla T4: vLLM "GPU 0 has a total capacity of 14.58 GiB" (public-code ids 7776285456, 23189065620;
  // github.com/mbzuai-oryx/GeoPixel/issues/5); nvidia-smi "Tesla T4 ... 15360MiB".
  const GpuSpec& t4 = require_gpu("Tesla T4");
  EXPECT_EQ(t4.name, "t4");
  EXPECT_EQ(gib2(t4.capacity_bytes), "14.58");
  EXPECT_EQ(t4.smi_total_mib, 15360);
  EXPECT_EQ(t4.sm, 75);
  EXPECT_FALSE(t4.fp8);
  EXPECT_EQ(&require_gpu("T4"), &t4);
  // A800 80GB: "GPU 0 has a total capacity of 79.33 GiB" on 8x A800 (github.com/MoonshotAI/Kimi-VL/issues/51);
  // nvidia-smi "NVIDIA A800-SXM4-80GB ... 81920MiB", the A100 80GB board's total.
  const GpuSpec& a800 = require_gpu("NVIDIA A800-SXM4-80GB");
  EXPECT_EQ(a800.name, "a800-80gb");
  EXPECT_EQ(gib2(a800.capacity_bytes), "79.33");
  EXPECT_EQ(a800.smi_total_mib, require_gpu("a100-80gb").smi_total_mib);
  EXPECT_EQ(a800.sm, 80);
  EXPECT_EQ(require_gpu("a800").name, "a800-80gb");
  // V100 32GB: "(GPU 0; 31.74 GiB total capacity ...)" (github.com/liucongg/ChatGLM-Finetuning/issues/73);
  // nvidia-smi "Tesla V100-SXM2-32GB ... 32768MiB".
  const GpuSpec& v100 = require_gpu("Tesla V100-SXM2-32GB");
  EXPECT_EQ(v100.name, "v100-32gb");
  EXPECT_EQ(gib2(v100.capacity_bytes), "31.74");
  EXPECT_EQ(v100.smi_total_mib, 32768);
  EXPECT_EQ(v100.sm, 70);
}

TEST(GpuCatalog, DesktopRowsFromLogs) {
  // RTX 4070 Ti: "(GPU 0; 11.70 GiB total capacity ...)" and nvidia-smi "12282MiB" in one report
  // (github.com/Kwai-Kolors/Kolors/issues/11).
  const GpuSpec& r4070ti = require_gpu("NVIDIA GeForce RTX 4070 Ti");
  EXPECT_EQ(r4070ti.name, "rtx-4070-ti");
  EXPECT_EQ(gib2(r4070ti.capacity_bytes), "11.70");
  EXPECT_EQ(r4070ti.smi_total_mib, 12282);
  // RTX 5080: vLLM on 8x 5080 "GPU 0 has a total capacity of 15.48 GiB" (vllm#14452); nvidia-smi 16303 MiB
  // (README of extra case xsgl-011, public-code id 47444754202).
  const GpuSpec& r5080 = require_gpu("5080");
  EXPECT_EQ(r5080.name, "rtx-5080");
  EXPECT_EQ(gib2(r5080.capacity_bytes), "15.48");
  EXPECT_EQ(r5080.smi_total_mib, 16303);
  EXPECT_EQ(r5080.sm, 120);
  EXPECT_TRUE(r5080.fp4);
  // RTX 3060 12GB: "(GPU 0; 11.76 GiB total capacity ...)" (github.com/TencentARC/PhotoMaker/issues/47).
  EXPECT_EQ(gib2(require_gpu("NVIDIA GeForce RTX 3060").capacity_bytes), "11.76");
  // RTX A4000: "GPU 0 has a total capacity of 15.61 GiB" (github.com/DengKaiCQ/VGGT-Long/issues/6).
  EXPECT_EQ(gib2(require_gpu("NVIDIA RTX A4000").capacity_bytes), "15.61");
}

TEST(GpuCatalog, Mi250xGcdIsTheRocminfoPool) {
  // rocminfo on an MI250X GCD (LUMI, 110 CUs; public-code id 3802618881) and on an MI210 (ROCm
  // legacy-rocm-build#2595): VRAM pool "67092480(0x3ffc000) KB"; HIP OOM lines print it as 63.98 GiB.
  const GpuSpec& g = require_gpu("AMD Instinct MI250X");
  EXPECT_EQ(g.name, "mi250x");
  EXPECT_EQ(g.capacity_bytes, int64_t{67092480} * 1024);
  EXPECT_EQ(gib2(g.capacity_bytes), "63.98");
  EXPECT_EQ(g.vendor, "amd");
  EXPECT_EQ(require_gpu("AMD Instinct MI210").capacity_bytes, g.capacity_bytes);
}

TEST(GpuCatalog, InferredRowsShareTheirTwinsMemory) {
  // H800 and L20: nvidia-smi totals 81559 MiB (public-code id 40223502532) and 46068 MiB (vllm#14011)
  // equal H100 SXM's and L40S's; no torch figure of their own was found, so the rows take the twin's.
  const GpuSpec& h800 = require_gpu("NVIDIA H800");
  EXPECT_EQ(h800.capacity_bytes, require_gpu("h100").capacity_bytes);
  EXPECT_EQ(h800.smi_total_mib, 81559);
  EXPECT_NE(h800.source.find("INFERRED"), std::string::npos);
  const GpuSpec& l20 = require_gpu("NVIDIA L20");
  EXPECT_EQ(l20.capacity_bytes, require_gpu("l40s").capacity_bytes);
  EXPECT_EQ(l20.smi_total_mib, 46068);
  EXPECT_NE(l20.source.find("INFERRED"), std::string::npos);
}

TEST(GpuCatalog, EveryAliasNamesItsOwnRow) {
  // A name or alias that two rows claim would resolve to whichever comes first.
  for (const auto& g : gpu_catalog()) {
    EXPECT_EQ(find_gpu(g.name), &g) << g.name;
    for (const auto& a : g.aliases) EXPECT_EQ(find_gpu(a), &g) << a << " (row " << g.name << ")";
  }
}

TEST(GpuCatalog, V100SizesAreSeparateRows) {
  // V100 16GB: "(GPU 0; 15.77 GiB total capacity ...)" on Azure NC6s_v3 (public-code id 7048187110);
  // nvidia-smi "Tesla V100-SXM2-16GB ... 16384MiB". The 32 GB part is its own row (31.74 GiB).
  const GpuSpec& v16 = require_gpu("Tesla V100-SXM2-16GB");
  EXPECT_EQ(v16.name, "v100-16gb");
  EXPECT_EQ(gib2(v16.capacity_bytes), "15.77");
  EXPECT_EQ(v16.smi_total_mib, 16384);
  EXPECT_EQ(require_gpu("Tesla V100-PCIE-16GB").name, "v100-16gb");
  EXPECT_EQ(require_gpu("v100").name, "v100-32gb");
}
