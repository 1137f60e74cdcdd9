// The GPUs llama.cpp users run beyond the datacenter: Radeon, Arc and laptop rows with the totals
// their runtimes print; Apple Silicon by chip and memory (Metal's recommendedMaxWorkingSetSize);
// engines that do not run (or are not modelled) on Apple and Intel GPUs refuse in one line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "gpu/apple_silicon.h"
#include "headroom/cli.h"
#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/units.h"
#include "hostile_test_util.h"

using namespace headroom;

using test::cli;
using test::CliRun;

namespace {
std::string input_error(std::string_view gpu) {
  try {
    require_gpu(gpu);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

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
  // WSL llama.cpp: "RTX 5070 Laptop GPU, compute capability 12.0, VMM: yes, VRAM: 8150 MiB" (id 59968647534).
  EXPECT_EQ(require_gpu("NVIDIA GeForce RTX 5070 Laptop GPU").capacity_bytes, int64_t{8150} * MiB);
  EXPECT_NE(require_gpu("rtx-5070-laptop").name, require_gpu("rtx-5070").name);
  // Linux llama.cpp: "CUDA0: NVIDIA GeForce RTX 3060 Ti (7840 MiB, ...)" (id 68911545814), "RTX 3070 ... VRAM: 7819 MiB"
  // (id 68714327338); nvidia-smi 8192 MiB on both.
  EXPECT_EQ(require_gpu("NVIDIA GeForce RTX 3060 Ti").capacity_bytes, int64_t{7840} * MiB);
  EXPECT_EQ(require_gpu("3070").capacity_bytes, int64_t{7819} * MiB);
  EXPECT_EQ(require_gpu("3070").smi_total_mib, 8192);
  // "CUDA0: NVIDIA GeForce GTX 1080 Ti (11157 MiB, 10260 MiB free)" (id 56840531390); nvidia-smi 11264 MiB.
  const GpuSpec& g1080ti = require_gpu("NVIDIA GeForce GTX 1080 Ti");
  EXPECT_EQ(g1080ti.capacity_bytes, int64_t{11157} * MiB);
  EXPECT_EQ(g1080ti.sm, 61);
}

TEST(GpuReach, AppleWorkingSetIsTwoThirdsUpTo32GiBThreeQuartersAbove) {
  // Logged recommendedMaxWorkingSetSize (MB = 1e6 B; builds before mid-2024 printed MiB as "MB"):
  // 16 GB M4 (ggml CI): 11453.25 MB; 32 GB M1 Pro: 22906.50 MB (corpus llamacpp-019); 36 GB M4 Max:
  // 28991.03 MB; 48 GB M3 Max: 38654.71 MB; 64 GB M2 Max: 51539.61 MB; 128 GB M4 Max: 103079.22 MB
  // (corpus llamacpp-015). In MiB: 8 GB M2 5461.34 (chatglm.cpp#76), 16 GB M1 Pro 10922.67
  // (llama-cpp-python#687), 32 GB M2 Max 21845.34 (ollama#434), 64 GB M1 Max 49152.00 (llama.cpp#1870),
  // 96 GB M2 Max 73728.00 (llama.cpp#3213).
  const std::pair<int, double> logged_mb[] = {{16, 11453.25}, {32, 22906.50}, {36, 28991.03}, {48, 38654.71}, {64, 51539.61}, {128, 103079.22}};
  for (const auto& [gb, mb] : logged_mb) {
    const int64_t ws = apple::working_set_bytes(int64_t{gb} * GiB);
    EXPECT_NEAR(static_cast<double>(ws) / 1e6, mb, 0.005) << gb << " GB";  // printed with %.2f
  }
  const std::pair<int, double> logged_mib[] = {{8, 5461.34}, {16, 10922.67}, {32, 21845.34}, {64, 49152.00}, {96, 73728.00}};
  for (const auto& [gb, mib] : logged_mib)
    EXPECT_NEAR(static_cast<double>(apple::working_set_bytes(int64_t{gb} * GiB)) / static_cast<double>(MiB), mib, 0.005) << gb << " GB";
  // 2/3 of 32 GiB is 22906492245.3 B, which would print 22906.49: Metal rounds up to whole 16 KiB pages,
  // ceil(2097152 pages x 2 / 3) = 1398102 pages = 22906503168 B ("22906.50 MB", "21845.34" MiB).
  EXPECT_EQ(apple::working_set_bytes(int64_t{32} * GiB), int64_t{1398102} * 16384);
  EXPECT_EQ(apple::working_set_bytes(int64_t{32} * GiB), int64_t{22906503168});
  EXPECT_EQ(apple::working_set_bytes(int64_t{64} * GiB), int64_t{64} * GiB * 3 / 4);  // 3/4 is whole pages
}

TEST(GpuReach, AppleNamesResolveByChipAndMemory) {
  const GpuSpec& m3 = require_gpu("apple-m3-max-64gb");
  EXPECT_EQ(m3.name, "apple-m3-max-64gb");
  EXPECT_EQ(m3.display, "Apple M3 Max (64 GB unified memory)");
  EXPECT_EQ(m3.vendor, "apple");
  EXPECT_EQ(m3.arch, "apple-m3");
  EXPECT_EQ(m3.sm, 0);
  EXPECT_EQ(m3.smi_total_mib, 0);
  EXPECT_EQ(m3.interconnect, "network");
  EXPECT_EQ(m3.capacity_bytes, int64_t{64} * GiB * 3 / 4);
  EXPECT_EQ(&require_gpu("m3-max-64gb"), &m3);  // one spec per chip and size
  EXPECT_EQ(&require_gpu("Apple M3 Max 64GB"), &m3);
  EXPECT_EQ(require_gpu("m2-ultra-192gb").capacity_bytes, int64_t{192} * GiB * 3 / 4);
  EXPECT_EQ(require_gpu("apple-m1-16gb").capacity_bytes, int64_t{699051} * 16384);  // "11453.25 MB"
  EXPECT_EQ(require_gpu("apple-m1-16gb").display, "Apple M1 (16 GB unified memory)");
}

TEST(GpuReach, AppleChipWithoutMemoryNamesTheFix) {
  EXPECT_EQ(input_error("apple-m1-max"), "--gpu: apple-m1-max: give the memory, e.g. apple-m1-max-32gb or apple-m1-max-64gb");
  EXPECT_NE(input_error("m3-pro").find("apple-m3-pro-18gb or apple-m3-pro-36gb"), std::string::npos);
  EXPECT_NE(input_error("apple-m3-max-40gb").find("ships with 36, 48, 64, 96, 128 GB"), std::string::npos);
  EXPECT_EQ(find_gpu("apple-m1-max"), nullptr);  // find_gpu never throws
  CliRun r = cli({"plan", "--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--gpu", "apple-m1-max"});
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_NE(r.err.find("give the memory"), std::string::npos) << r.err;
}

TEST(GpuReach, GpusListsAnAppleNameAndSaysHowToSpellOne) {
  CliRun r = cli({"gpus", "m4-max-128gb"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.out.find("apple-m4-max-128gb"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 96.00 "), std::string::npos) << r.out;  // 3/4 of 128 GiB; llama.cpp: "/ 98304.00" MiB
  CliRun all = cli({"gpus"});
  EXPECT_NE(all.out.find("Apple Silicon: --gpu apple-CHIP-NNgb"), std::string::npos);
  // The JSON list (the web page's picker) ends with every chip and memory of the line-ups.
  CliRun js = cli({"gpus", "--json"});
  ASSERT_EQ(js.rc, kExitOk) << js.err;
  const auto gpus = nlohmann::json::parse(js.out)["gpus"];
  int apple = 0;
  for (const auto& g : gpus) {
    if (g["vendor"] != "apple") continue;
    ++apple;
    if (g["name"] == "apple-m3-max-64gb") EXPECT_EQ(g["capacity_bytes"].get<int64_t>(), headroom::apple::working_set_bytes(int64_t{64} << 30));
  }
  EXPECT_EQ(apple, static_cast<int>(headroom::apple::lineup_names().size()));
  EXPECT_GE(apple, 40);
}

TEST(GpuReach, LlamaCppPlanOnAMacUsesTheWorkingSet) {
  CliRun r = cli({"plan", "--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--gpu", "m3-max-36gb", "--json"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const int64_t ws = int64_t{36} * GiB * 3 / 4;  // 28991029248 B, "28991.03 MB" in llama.cpp's log
  ASSERT_TRUE(j.contains("devices")) << r.out.substr(0, 400);
  bool seen = false;
  for (const auto& d : j["devices"])
    if (!d["host"].get<bool>()) {
      EXPECT_EQ(d["capacity_bytes"].get<int64_t>(), ws);
      seen = true;
    }
  EXPECT_TRUE(seen);
  EXPECT_EQ(j["ranks"][0]["capacity_bytes"].get<int64_t>(), ws);
}

TEST(GpuReach, EnginesThatDoNotRunThereRefuseInOneLine) {
  for (const char* engine : {"vllm", "sglang"}) {
    CliRun r = cli({"plan", "--engine", engine, "--model", "Qwen/Qwen3-8B", "--gpu", "m3-max-64gb"});
    EXPECT_EQ(r.rc, kExitBadInput) << engine;
    EXPECT_NE(r.err.find("on Apple Silicon is not modelled"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("use --engine llamacpp"), std::string::npos) << r.err;
  }
  CliRun t = cli({"plan", "--engine", "trtllm", "--model", "Qwen/Qwen3-8B", "--gpu", "arc-a770"});
  EXPECT_EQ(t.rc, kExitBadInput);
  EXPECT_NE(t.err.find("TensorRT-LLM runs on NVIDIA GPUs only"), std::string::npos) << t.err;
  CliRun v = cli({"plan", "--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "b580"});
  EXPECT_EQ(v.rc, kExitBadInput);
  EXPECT_NE(v.err.find("Intel GPUs"), std::string::npos) << v.err;
}
