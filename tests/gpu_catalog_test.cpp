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
