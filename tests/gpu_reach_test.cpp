// The GPUs llama.cpp users run beyond the datacenter: Radeon, Arc and laptop rows with the totals
// their runtimes print.
#include <gtest/gtest.h>

#include <string>

#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/units.h"

using namespace headroom;

TEST(GpuReach, RadeonRowsCarryTheHipTotal) {
  // llama.cpp ROCm: "ggml_cuda_init: found 1 ROCm devices (Total VRAM: 24560 MiB): Device 0: AMD Radeon
  // RX 7900 XTX, gfx1100 ..." (public-code id 67523112105); "(Total VRAM: 20464 MiB) ... RX 7900 XT" (AMD's
  // ROCm docs, id 59909727140); "ROCm0: AMD Radeon RX 9070 (16304 MiB, ...)" (id 69513485081).
  const GpuSpec& xtx = require_gpu("7900xtx");
  EXPECT_EQ(xtx.name, "rx-7900-xtx");
  EXPECT_EQ(xtx.capacity_bytes, int64_t{24560} * MiB);
  EXPECT_EQ(xtx.vendor, "amd");
  EXPECT_EQ(require_gpu("AMD Radeon RX 7900 XTX").name, "rx-7900-xtx");  // as rocm-smi and llama.cpp name it
  EXPECT_EQ(require_gpu("radeon-rx-7900-xt").capacity_bytes, int64_t{20464} * MiB);
  EXPECT_EQ(require_gpu("AMD Radeon RX 7900 XT").name, "rx-7900-xt");
  EXPECT_EQ(require_gpu("rx9070").capacity_bytes, int64_t{16304} * MiB);
  EXPECT_EQ(require_gpu("rx-6700-xt").capacity_bytes, int64_t{12272} * MiB);
  // Strix Halo: the GTT-inclusive Vulkan total of a 128 GB machine (corpus llamacpp-009).
  const GpuSpec& halo = require_gpu("Radeon 8060S Graphics");
  EXPECT_EQ(halo.capacity_bytes, int64_t{113909} * MiB);
  EXPECT_NE(halo.source.find("BIOS"), std::string::npos);
}

TEST(GpuReach, ArcAndLaptopRows) {
  // SYCL: "using device SYCL0 (Intel(R) Arc(TM) A770 Graphics) - 15473 MiB free" with free = total
  // (ggml CI arc770, id 55647244095).
  const GpuSpec& a770 = require_gpu("Intel(R) Arc(TM) A770 Graphics");
  EXPECT_EQ(a770.name, "arc-a770");
  EXPECT_EQ(a770.capacity_bytes, int64_t{15473} * MiB);
  EXPECT_EQ(a770.vendor, "intel");
  EXPECT_EQ(require_gpu("b580").capacity_bytes, int64_t{12216} * MiB);
  // "RTX 4070 Laptop GPU ... VRAM: 7785 MiB" (id 56559337132); nvidia-smi 8188 MiB. The desktop 4070 is its own row.
  const GpuSpec& r4070m = require_gpu("NVIDIA GeForce RTX 4070 Laptop GPU");
  EXPECT_EQ(r4070m.name, "rtx-4070-laptop");
  EXPECT_EQ(r4070m.capacity_bytes, int64_t{7785} * MiB);
  EXPECT_EQ(r4070m.smi_total_mib, 8188);
  EXPECT_NE(&r4070m, &require_gpu("rtx-4070"));
  EXPECT_EQ(require_gpu("rtx-4050-laptop").capacity_bytes, int64_t{6083706880});
  EXPECT_EQ(require_gpu("4060-laptop").capacity_bytes, int64_t{8187} * MiB);
}
