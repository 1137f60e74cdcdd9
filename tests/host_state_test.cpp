// --host-state (issue 29 item 2): nvidia-smi / rocm-smi text read exactly, garbled text refused in
// one line, and each engine's own treatment of memory another process holds, worked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "headroom/host_state.h"
#include "headroom/units.h"
#include "hostile_test_util.h"
#include "plan_test_util.h"

namespace headroom::test {
namespace {

const std::string kData = HEADROOM_TEST_DATA "/host/";

HostState host(const std::string& file) { return read_host_state(kData + file); }

TEST(HostState, ReadsBothNvidiaSmiQueriesWithUuids) {
  const HostState h = host("h100-x2.csv");
  ASSERT_EQ(h.gpus.size(), 2u);
  EXPECT_EQ(h.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h.gpus[0].total_bytes, 81559 * MiB);
  EXPECT_EQ(h.gpus[0].used_bytes, 30722 * MiB);
  EXPECT_EQ(h.gpus[1].used_bytes, 4 * MiB);
  ASSERT_EQ(h.processes.size(), 1u);
  EXPECT_EQ(h.processes[0].pid, 41231);
  EXPECT_EQ(h.processes[0].used_bytes, 30712 * MiB);
  EXPECT_EQ(h.processes[0].gpu_index, 0);  // by uuid
}

TEST(HostState, ReadsCapturedWindowsOutputWithSeparatorAndNaProcesses) {
  const HostState h = host("rtx-pro-6000-windows.csv");
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].index, 0);
  EXPECT_EQ(h.gpus[0].used_bytes, 71977 * MiB);
  EXPECT_EQ(h.gpus[0].free_bytes, 24622 * MiB);
  ASSERT_EQ(h.processes.size(), 2u);
  EXPECT_EQ(h.processes[1].name, "C:\\Windows\\explorer.exe");
  EXPECT_EQ(h.processes[1].used_bytes, 0);    // [N/A] under WDDM
  EXPECT_EQ(h.processes[1].gpu_index, 0);     // one GPU: no uuid needed
}

TEST(HostState, ReadsCapturedSessionWithPromptsAndNoProcesses) {
  const HostState h = host("rtx-5060-ti.txt");
  ASSERT_EQ(h.gpus.size(), 1u);
  EXPECT_EQ(h.gpus[0].used_bytes, 1 * MiB);
  EXPECT_EQ(h.gpus[0].free_bytes, (16311 - 1) * MiB);  // no memory.free column: total - used
  EXPECT_TRUE(h.processes.empty());
}

TEST(HostState, ReadsNoUnitsAndRocmSmi) {
  const HostState a = parse_host_state("index, memory.total [MiB], memory.used [MiB]\n0, 81920, 51792\n", "t");
  EXPECT_EQ(a.gpus.at(0).used_bytes, 51792 * MiB);
  const HostState r = host("mi300x-rocm.json");
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].total_bytes, 206141652992);
  EXPECT_EQ(r.gpus[0].used_bytes, 30 * GiB);
}

TEST(HostState, GarbledTextIsOneLineNamingTheLine) {
  auto problem = [](const std::string& text) {
    try {
      parse_host_state(text, "hs.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(problem("hello world\n"), "hs.csv: line 1: 'hello world' is not nvidia-smi CSV (--query-gpu=index,name,memory.total,memory.used,memory.free --format=csv)");
  EXPECT_EQ(problem("index, memory.used [MiB]\n0, lots MiB\n"), "hs.csv: line 2 memory.used: 'lots' is not a memory size in MiB");
  EXPECT_EQ(problem("pid, process_name, used_gpu_memory [MiB]\n1, x, 5 MiB\n").find("hs.csv: GPU table: missing"), 0u);
  EXPECT_EQ(problem("{\"card0\": {}}").find("hs.csv: card0.VRAM Total Memory (B): is missing"), 0u);
  EXPECT_EQ(problem(std::string(2 << 20, 'x')).find("hs.csv: size:"), 0u);
  EXPECT_EQ(problem("index, memory.used [MiB]\n0, 1 MiB\n0, 2 MiB\n"), "hs.csv: index: GPU 0 is listed twice");
}

TEST(HostState, GarbledFileExitsTwoThroughTheCli) {
  TempFile f("hs-garbled.csv", "index, memory.used [MiB]\n\x01\x02 binary, junk\n");
  const CliRun r = cli({"plan", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100", "--host-state", f.path.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(HostState, TheHostsGpuIsTheDefaultAndAMismatchIsRefused) {
  const Deployment d = parse_deployment(Args::parse({"--model", "Qwen/Qwen2.5-7B-Instruct", "--host-state", kData + "rtx-pro-6000-windows.csv"}));
  EXPECT_EQ(d.gpu.name, "rtx-pro-6000");
  ASSERT_EQ(d.held_by_others.size(), 1u);
  EXPECT_EQ(d.held_by_others[0], 71977 * MiB);
  EXPECT_THROW(parse_deployment(Args::parse({"--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "a100-40gb", "--host-state", kData + "h100-x2.csv"})),
               InputError);
}

TEST(HostState, CudaVisibleDevicesPicksTheHostsGpu) {
  const Deployment d = parse_deployment(Args::parse({"--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100", "--host-state", kData + "h100-x2.csv",
                                                     "--env", "CUDA_VISIBLE_DEVICES=1"}));
  EXPECT_EQ(d.held_by_others, std::vector<int64_t>{4 * MiB});
  EXPECT_THROW(parse_deployment(Args::parse({"--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100", "--host-state", kData + "h100-x2.csv",
                                             "--env", "CUDA_VISIBLE_DEVICES=3"})),
               InputError);
  EXPECT_THROW(parse_deployment(Args::parse({"--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100", "--tp", "4", "--host-state", kData + "h100-x2.csv"})),
               InputError);
}

TEST(HostState, LiveWithoutTheDriverLibraryIsOneLine) {
  // This test machine has no NVIDIA driver; where it has one, `live` reads the GPUs instead.
  try {
    const HostState h = read_host_state("live");
    EXPECT_FALSE(h.gpus.empty());
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("libnvidia-ml.so.1"), std::string::npos);
  }
}

// SGLang: rest = A - P x (1 - f) with P and A both free memory, so O held elsewhere takes O x f
// out of the pool: 30722 MiB x 0.8 / 57,344 B per token (Qwen2.5-7B: 28 layers x 4 KV heads x 128
// x 2 x 2 B) = 449,420 tokens fewer.
TEST(HostState, SglangPoolComesFromTheFreeMemoryNotTheCardTotal) {
  const std::vector<std::string> base = {"--engine", "sglang", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100", "--mem-fraction-static", "0.8"};
  const Forecast empty = run(base), shared = run(plus(base, {"--host-state", kData + "h100-x2.csv"}));
  const double expected = 30722.0 * MiB * 0.8 / 57344.0;
  EXPECT_NEAR(static_cast<double>(empty.kv_tokens - shared.kv_tokens), expected, 2.0);
  EXPECT_EQ(shared.ranks.at(0).stages.at(0).items.at(0).bytes, 30722 * MiB);
}

// vLLM from 0.9.1: the budget is the card's total x u whatever others hold, so KV does not move;
// the startup check F0 >= T x u refuses once others leave too little free.
TEST(HostState, VllmPerInstanceBudgetKeepsKvOrRefusesAtStartup) {
  const std::vector<std::string> base = {"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100"};
  const std::vector<std::string> hs = {"--host-state", kData + "h100-x2.csv"};
  const Forecast half = run(plus(base, {"--gpu-memory-utilization", "0.5"}));
  const Forecast half_shared = run(plus(plus(base, {"--gpu-memory-utilization", "0.5"}), hs));
  EXPECT_EQ(half_shared.kv_tokens, half.kv_tokens);
  EXPECT_EQ(half_shared.verdict, Verdict::Fits);
  // 0.7 x 79.19 GiB = 55.4 GiB requested; free at start 79.19 - 30.00 - context < 49.2 GiB.
  const Forecast big = run(plus(plus(base, {"--gpu-memory-utilization", "0.7"}), hs));
  EXPECT_EQ(big.verdict, Verdict::Refused);
  ASSERT_TRUE(big.failure);
  EXPECT_EQ(big.failure->message.find("ValueError: Free memory on device"), 0u) << big.failure->message;
}

// vLLM before 0.9.1 (V1): the non-torch term is the whole GPU's, so what others hold comes out
// of KV byte for byte (blocks of 16 tokens x 57,344 B = 917,504 B).
TEST(HostState, VllmWholeGpuEraChargesOthersToKv) {
  const std::vector<std::string> base = {"--engine", "vllm@0.8.5", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100",
                                         "--gpu-memory-utilization", "0.9"};
  const Forecast empty = run(base), shared = run(plus(base, {"--host-state", kData + "h100-x2.csv"}));
  const double blocks = 30722.0 * MiB / 917504.0;
  EXPECT_NEAR(static_cast<double>(empty.kv_tokens - shared.kv_tokens) / 16.0, blocks, 1.0);
}

// TensorRT-LLM: KV = (total - peak) x fraction with the peak read off the whole card.
TEST(HostState, TrtllmFractionIsOfWhatIsFreeAfterOthers) {
  const std::vector<std::string> base = {"--engine", "trtllm", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100"};
  const Forecast empty = run(base), shared = run(plus(base, {"--host-state", kData + "h100-x2.csv"}));
  const double tokens = 30722.0 * MiB * 0.9 / 57344.0;  // free_gpu_memory_fraction 0.9 (default)
  EXPECT_NEAR(static_cast<double>(empty.kv_tokens - shared.kv_tokens), tokens, 64.0);  // whole 32-token blocks, both ends
}

// llama.cpp reads each device's free memory: a 16 GB card with 12 GiB held cannot take an 8B
// model's ~4.6 GiB of Q4_K_M weights plus context that fits on the empty card.
TEST(HostState, LlamacppDeviceWithOthersRunsOutAtLoad) {
  const std::vector<std::string> base = {"--engine", "llamacpp", "--model", "Qwen/Qwen2.5-7B-Instruct", "--quant", "Q4_K_M", "--gpu", "rtx-5060-ti",
                                         "-ngl", "99", "-c", "8192"};
  EXPECT_EQ(run(base).verdict, Verdict::Fits);
  TempFile hs("hs-5060.csv", "index, name, memory.total [MiB], memory.used [MiB]\n0, NVIDIA GeForce RTX 5060 Ti, 16311 MiB, 12288 MiB\n");
  const Forecast f = run(plus(base, {"--host-state", hs.path.string()}));
  EXPECT_EQ(f.verdict, Verdict::Oom);
  EXPECT_EQ(f.ranks.at(0).stages.at(0).items.at(0).what.rfind("held by other processes", 0), 0u);
}

}  // namespace
}  // namespace headroom::test
