// GPU catalog: names, aliases, capacities from real logs.
#include <gtest/gtest.h>

#include <utility>

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
  // H800: nvidia-smi total 81559 MiB (public-code id 40223502532) equals H100 SXM's; no torch figure
  // of its own was found, so the row takes the twin's. The same holds for the RTX 4080 SUPER (smi
  // 16376, id 60849670751 = the 4080's), the RTX 4070 / 4070 SUPER (12282 = the 4070 Ti's) and the
  // RTX 4090 D (24564, ids 42224084670, 33292527485 = the 4090's).
  const GpuSpec& h800 = require_gpu("NVIDIA H800");
  EXPECT_EQ(h800.capacity_bytes, require_gpu("h100").capacity_bytes);
  EXPECT_EQ(h800.smi_total_mib, 81559);
  EXPECT_NE(h800.source.find("INFERRED"), std::string::npos);
  const std::pair<const char*, const char*> twins[] = {{"NVIDIA GeForce RTX 4080 SUPER", "rtx-4080"},
                                                        {"NVIDIA GeForce RTX 4070", "rtx-4070-ti"},
                                                        {"NVIDIA GeForce RTX 4070 SUPER", "rtx-4070-ti"},
                                                        {"NVIDIA GeForce RTX 4090 D", "rtx-4090"}};
  for (const auto& [card, twin] : twins) {
    const GpuSpec& g = require_gpu(card);
    EXPECT_NE(g.name, twin) << card;
    EXPECT_EQ(g.capacity_bytes, require_gpu(twin).capacity_bytes) << card;
    EXPECT_EQ(g.smi_total_mib, require_gpu(twin).smi_total_mib) << card;
    EXPECT_NE(g.source.find("INFERRED"), std::string::npos) << card;
  }
}

TEST(GpuCatalog, FormerlyInferredRowsNowCarryLoggedTotals) {
  // L20 and L40 used to copy L40S's 44.39 GiB, H200 NVL the H200 SXM's 139.81, GH200 the H20's
  // 95.0, RTX A6000 a nameplate 47.41 (all INFERRED).
  // L20: torch OOM "GPU 0 has a total capacity of 44.42 GiB" on an L20 (public-code id 54023549296); L40: "NVIDIA L40 (44.40 GB VRAM, CUDA 12.8)"
  // (id 30399645506). nvidia-smi 46068 MiB on both (vllm#14011; ids 42914656906, 60430572081).
  const GpuSpec& l20 = require_gpu("NVIDIA L20");
  EXPECT_EQ(gib2(l20.capacity_bytes), "44.42");
  EXPECT_EQ(l20.smi_total_mib, 46068);
  const GpuSpec& l40 = require_gpu("NVIDIA L40");
  EXPECT_EQ(l40.name, "l40");
  EXPECT_EQ(gib2(l40.capacity_bytes), "44.40");
  EXPECT_EQ(l40.smi_total_mib, 46068);
  EXPECT_NE(require_gpu("l40s").capacity_bytes, l40.capacity_bytes);
  // H200 NVL: "NVIDIA H200 NVL (139.80 GiB)" (public-code id 57535072420); smi 143771 (id 52951295611).
  const GpuSpec& h200nvl = require_gpu("NVIDIA H200 NVL");
  EXPECT_EQ(h200nvl.name, "h200-nvl");
  EXPECT_EQ(gib2(h200nvl.capacity_bytes), "139.80");
  EXPECT_EQ(h200nvl.smi_total_mib, 143771);
  // H20: torch "total_memory=97285MB" quoted in kernel sources (public-code id 15982154570); the row
  // took 95.00 GiB rounded down (97280 MiB) before. Prints as 95.00 GiB either way (corpus sglang-041).
  const GpuSpec& h20 = require_gpu("NVIDIA H20");
  EXPECT_EQ(h20.capacity_bytes, int64_t{97285} * MiB);
  EXPECT_EQ(gib2(h20.capacity_bytes), "95.00");
  // GH200 480GB: "GPU 0 has a total capacity of 94.50 GiB" in an SGLang run on one GH200 (public-code id
  // 70920711276); the row copied H20's 95.0 before, though both show 97871 MiB in nvidia-smi.
  const GpuSpec& gh200 = require_gpu("NVIDIA GH200 480GB");
  EXPECT_EQ(gib2(gh200.capacity_bytes), "94.50");
  EXPECT_EQ(gh200.smi_total_mib, h20.smi_total_mib);
  EXPECT_LT(gh200.capacity_bytes, h20.capacity_bytes);
  // RTX A6000: torch "total_memory=48676MB" (public-code id 11265254500) = 47.54 GiB; was 47.41 from the nameplate.
  EXPECT_EQ(require_gpu("NVIDIA RTX A6000").capacity_bytes, int64_t{48676} * MiB);
  for (const char* n : {"l20", "l40", "h200-nvl", "h20", "gh200", "rtx-a6000"})
    EXPECT_EQ(require_gpu(n).source.find("INFERRED"), std::string::npos) << n;
}

TEST(GpuCatalog, DataCenterAndWorkstationRowsAddedFromLogs) {
  // A40: torch OOM "GPU 0 has a total capacity of 44.42 GiB" (public-code ids 20496072466, 71201291186;
  // "NVIDIA A40 (44.42 GiB visible)", id 70096149812); nvidia-smi "NVIDIA A40 ... 46068MiB" (id 20643033992).
  const GpuSpec& a40 = require_gpu("NVIDIA A40");
  EXPECT_EQ(a40.name, "a40");
  EXPECT_EQ(gib2(a40.capacity_bytes), "44.42");
  EXPECT_EQ(a40.capacity_bytes, int64_t{45486} * MiB);  // 44.42 x 1024 = 45486.08, rounded down to MiB
  EXPECT_EQ(a40.smi_total_mib, 46068);
  EXPECT_EQ(a40.sm, 86);
  EXPECT_FALSE(a40.fp8);
  EXPECT_EQ(a40.interconnect, "pcie");
  // Quadro RTX 8000: "(GPU 0; 47.46 GiB total capacity ...)" (github.com/Victarry/stable-dreambooth/issues/8).
  const GpuSpec& q8000 = require_gpu("Quadro RTX 8000");
  EXPECT_EQ(q8000.name, "quadro-rtx-8000");
  EXPECT_EQ(gib2(q8000.capacity_bytes), "47.46");
  EXPECT_EQ(q8000.smi_total_mib, 48601);
  EXPECT_EQ(q8000.sm, 75);
  // RTX PRO 5000 Blackwell 48 GB: "NVIDIA RTX PRO 5000 Blackwell (47.26 GiB)" (id 69345710720);
  // nvidia-smi "Total : 48935 MiB" (id 59267060125).
  const GpuSpec& pro5000 = require_gpu("NVIDIA RTX PRO 5000 Blackwell");
  EXPECT_EQ(pro5000.name, "rtx-pro-5000");
  EXPECT_EQ(gib2(pro5000.capacity_bytes), "47.26");
  EXPECT_EQ(pro5000.smi_total_mib, 48935);
  EXPECT_TRUE(pro5000.fp4);
  // Tesla P100 16GB: torch "total_memory=16280MB" (Colab; public-code id 3838030452), smi 16280 MiB.
  const GpuSpec& p100 = require_gpu("Tesla P100-PCIE-16GB");
  EXPECT_EQ(p100.capacity_bytes, int64_t{16280} * MiB);
  EXPECT_EQ(p100.sm, 60);
  // Tesla P40: "GPU 0 has a total capacity of 23.87 GiB" (github.com/ToTheBeginning/PuLID/issues/110).
  EXPECT_EQ(gib2(require_gpu("Tesla P40").capacity_bytes), "23.87");
  // RTX 4000 Ada (ECC off): "NVIDIA RTX 4000 Ada Generation (19.54 GB VRAM)" (id 66102678649), smi 20475.
  const GpuSpec& r4000 = require_gpu("NVIDIA RTX 4000 Ada Generation");
  EXPECT_EQ(gib2(r4000.capacity_bytes), "19.54");
  EXPECT_EQ(r4000.smi_total_mib, 20475);
  // RTX A4500: "2x NVIDIA RTX A4500 (19.60 GB each)" (id 29197936145), smi 20470.
  EXPECT_EQ(gib2(require_gpu("NVIDIA RTX A4500").capacity_bytes), "19.60");
}

TEST(GpuCatalog, GeForceRowsAddedFromLogs) {
  // RTX 4080: torch "total_memory=16049MB" (public-code id 22567041692); nvidia-smi 16376 MiB (id 37147423438).
  const GpuSpec& r4080 = require_gpu("NVIDIA GeForce RTX 4080");
  EXPECT_EQ(r4080.name, "rtx-4080");
  EXPECT_EQ(r4080.capacity_bytes, int64_t{16049} * MiB);
  EXPECT_EQ(gib2(r4080.capacity_bytes), "15.67");
  EXPECT_EQ(r4080.smi_total_mib, 16376);
  EXPECT_EQ(r4080.sm, 89);
  EXPECT_TRUE(r4080.fp8);
  EXPECT_FALSE(r4080.fp4);
  // RTX 4070 Ti SUPER: torch "total_memory=15974MB" with nvidia-smi "16376 MiB" in one report (id 62007510912).
  const GpuSpec& r4070tis = require_gpu("NVIDIA GeForce RTX 4070 Ti SUPER");
  EXPECT_EQ(r4070tis.capacity_bytes, int64_t{15974} * MiB);
  EXPECT_EQ(gib2(r4070tis.capacity_bytes), "15.60");
  EXPECT_EQ(r4070tis.smi_total_mib, 16376);
  // RTX 2080 Ti: "(GPU 0; 10.76 GiB total capacity ...)" (github.com/JDAI-CV/image-captioning/issues/11).
  const GpuSpec& r2080ti = require_gpu("NVIDIA GeForce RTX 2080 Ti");
  EXPECT_EQ(gib2(r2080ti.capacity_bytes), "10.76");
  EXPECT_EQ(r2080ti.smi_total_mib, 11019);
  EXPECT_EQ(r2080ti.sm, 75);
  // llama.cpp --list-devices on Linux prints cudaMemGetInfo's total: RTX 5070 Ti 15838 MiB (id 58759393116),
  // RTX 5060 Ti 15885 MiB (id 68853984110), RTX 4060 Ti 16GB 15944 MiB (id 57745939478), RTX 3090 Ti
  // 24111 MiB (id 71048554581).
  EXPECT_EQ(require_gpu("rtx-5070-ti").capacity_bytes, int64_t{15838} * MiB);
  EXPECT_EQ(require_gpu("NVIDIA GeForce RTX 5060 Ti").capacity_bytes, int64_t{15885} * MiB);
  EXPECT_EQ(require_gpu("NVIDIA GeForce RTX 4060 Ti").capacity_bytes, int64_t{15944} * MiB);
  EXPECT_EQ(require_gpu("NVIDIA GeForce RTX 3090 Ti").capacity_bytes, int64_t{24111} * MiB);
  EXPECT_EQ(require_gpu("rtx-5070-ti").sm, 120);
  // TITAN RTX: "8 x NVIDIA TITAN RTX (23.64GiB each)" (id 59081278588); smi 24220 MiB.
  EXPECT_EQ(gib2(require_gpu("TITAN RTX").capacity_bytes), "23.64");
}

TEST(GpuCatalog, JetsonUnifiedMemoryRows) {
  // llama.cpp --list-devices on the board prints cudaMemGetInfo's total of the shared memory:
  // "CUDA0: Orin (62840 MiB, ...)" on an AGX Orin 64GB (public-code id 69391417572), "CUDA0: NVIDIA Thor
  // (125771 MiB)" (id 65883488740). nvidia-smi has no memory total there, as on GB10.
  const GpuSpec& orin = require_gpu("Jetson AGX Orin");
  EXPECT_EQ(orin.name, "jetson-agx-orin-64gb");
  EXPECT_EQ(orin.capacity_bytes, int64_t{62840} * MiB);
  EXPECT_EQ(orin.sm, 87);
  EXPECT_EQ(orin.smi_total_mib, 0);
  const GpuSpec& thor = require_gpu("NVIDIA Thor");
  EXPECT_EQ(thor.name, "jetson-thor");
  EXPECT_EQ(thor.capacity_bytes, int64_t{125771} * MiB);
  EXPECT_EQ(gib2(thor.capacity_bytes), "122.82");
  EXPECT_EQ(thor.sm, 110);
  EXPECT_EQ(thor.smi_total_mib, 0);
  EXPECT_EQ(thor.interconnect, "network");
}

TEST(GpuCatalog, AliasesAsPeopleAndNvidiaSmiWriteThem) {
  const std::pair<const char*, const char*> cases[] = {
      {"a100-pcie-80gb", "a100-80gb-pcie"}, {"a100-80gb-pcie", "a100-80gb-pcie"},   {"NVIDIA A100-SXM4-80GB", "a100-80gb"},
      {"NVIDIA A100-SXM4-40GB", "a100-40gb"}, {"NVIDIA H100 80GB HBM3", "h100"}, {"NVIDIA H100 PCIe", "h100-pcie"},
      {"nvidia-a40", "a40"},               {"A40", "a40"},                    {"geforce-rtx-4080", "rtx-4080"},
      {"rtx4080", "rtx-4080"},             {"4080", "rtx-4080"},              {"RTX 4080 SUPER", "rtx-4080-super"},
      {"4080super", "rtx-4080-super"},     {"rtx-4070", "rtx-4070"},          {"4070ti-super", "rtx-4070-ti-super"},
      {"2080ti", "rtx-2080-ti"},           {"rtx-4090d", "rtx-4090-d"},       {"5060ti", "rtx-5060-ti"},
      {"rtx-4060-ti-16gb", "rtx-4060-ti"}, {"RTX 8000", "quadro-rtx-8000"},   {"tesla-p40", "p40"},
      {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"}, {"NVIDIA L40S", "l40s"}, {"AMD Instinct MI250", "mi250x"},
  };
  for (const auto& [alias, row] : cases) EXPECT_EQ(require_gpu(alias).name, row) << alias;
  // The RTX 4080 and its SUPER are separate rows; "4070" is not the 4070 Ti.
  EXPECT_NE(&require_gpu("4080"), &require_gpu("4080 super"));
  EXPECT_NE(&require_gpu("4070"), &require_gpu("4070 Ti"));
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

TEST(GpuCatalog, NamesAsReportsSpellThemFindTheirRow) {
  // nvidia-smi / torch names and report spellings that are no alias: the words decide.
  EXPECT_EQ(find_gpu("H100 80GB HBM3")->name, "h100");          // nvidia-smi name without "NVIDIA"
  EXPECT_EQ(find_gpu("H100 SXM5")->name, "h100");
  EXPECT_EQ(find_gpu("A100 40GB PCIe")->name, "a100-40gb-pcie");  // alias a100-pcie-40gb, words reordered: its own PCIe row
  EXPECT_EQ(find_gpu("AMD Instinct MI300X")->name, "mi300x");
  EXPECT_EQ(find_gpu("Tesla V100-SXM2-16GB")->name, "v100-16gb");
  EXPECT_EQ(find_gpu("NVIDIA RTX PRO 6000 Blackwell Workstation Edition")->name, "rtx-pro-6000");
  // nvidia-smi's names of the server and Max-Q cards (same 96 GB part).
  EXPECT_EQ(find_gpu("NVIDIA RTX PRO 6000 Blackwell Server Edition")->name, "rtx-pro-6000");
  EXPECT_EQ(find_gpu("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition")->name, "rtx-pro-6000");
  // Words that name no single row stay unknown.
  EXPECT_EQ(find_gpu("NVIDIA"), nullptr);
  EXPECT_EQ(find_gpu("RTX"), nullptr);
  EXPECT_EQ(find_gpu("H100 96GB"), nullptr);
}
