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
