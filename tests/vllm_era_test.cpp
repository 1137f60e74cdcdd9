// vLLM rules that change by version era: the --kv-cache-memory suggestion line of gpu_worker.py
// in its three forms (replayed byte for byte from corpus logs with the figures those logs imply),
// --num-gpu-blocks-override before and after PR #41069, and the era cuts themselves.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "engines/vllm/vllm_rules.h"
#include "headroom/engine.h"
#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;
using namespace headroom::vllm;

namespace {
constexpr int64_t kBuffer = 150LL * 1024 * 1024;  // gpu_worker.py redundancy_buffer_memory
int64_t gib_bytes(double g) { return static_cast<int64_t>(std::llround(g * static_cast<double>(GiB))); }
}  // namespace

TEST(VllmSuggestionLine, TotalConsumedFormReplaysVllm052) {
  // vllm-052 (vllm-openai:latest, Aug 2026; RTX PRO 6000 TP4, u = 0.9). The two suggested byte
  // counts fix non_kv and the free memory exactly for a capacity of 95.01 GiB:
  //   requested = ceil(T x 0.9); non_kv = requested - 150 MiB - 29,407,858,586;
  //   free = 38,581,581,312 + non_kv + 150 MiB (= 94.05 GiB).
  // The logged split: graphs 0.32 GiB, peak activation 0.76 GiB, the rest consumed (56.89 GiB).
  KvSuggestion k;
  k.total = gib_bytes(95.01);
  k.utilization = 0.9;
  k.requested = static_cast<int64_t>(std::ceil(static_cast<double>(k.total) * 0.9));
  const int64_t non_kv = k.requested - kBuffer - 29407858586;
  k.free_at_start = 38581581312 + non_kv + kBuffer;
  k.graph_actual = gib_bytes(0.32);
  k.peak_activation = gib_bytes(0.76);
  k.weights = gib_bytes(55.19);  // "Model loading took 55.19 GiB memory"
  k.non_torch = non_kv - k.graph_actual - k.peak_activation - k.weights;
  // available_kv_cache_memory_bytes = requested - total_consumed - peak (the estimate is in the peak).
  k.kv_available = k.requested - (k.weights + k.non_torch) - k.peak_activation;
  int64_t to_req = 0, to_gpu = 0;
  const std::string line = kv_suggestion_line(era_for_version("latest@2026-08"), k, &to_req, &to_gpu);
  EXPECT_EQ(line,
            "Free memory on device (94.05/95.01 GiB) on startup. Desired GPU memory utilization is (0.9, 85.51 GiB). Actual usage is 56.89 GiB "
            "for consumed memory (weights + non-torch), 0.76 GiB for peak activation, and 0.32 GiB for CUDAGraph memory. Replace "
            "gpu_memory_utilization config with `--kv-cache-memory=29407858586` (27.39 GiB) to fit into requested memory, or "
            "`--kv-cache-memory=38581581312` (35.93 GiB) to fully utilize gpu memory. Current kv cache memory in use is 27.85 GiB.");
  // "In use" exceeds the fit figure by the captured graphs + the 150 MiB buffer: the fit figure
  // charges the graphs again on top of the estimate already inside the peak activation.
  EXPECT_EQ(k.kv_available - to_req, k.graph_actual + kBuffer);
}

TEST(VllmSuggestionLine, BytesFormReplaysVllm048) {
  // vllm-048 (0.10.2, H200 TP2, u = 0.9): requested = T x 0.9 as a float, int() in the line.
  // "Model loading took 74.2812 GiB"; peak 5.58, non-torch 1.38; the graphs are what the two
  // suggested byte counts leave (2.37 GiB); in use 47,878,721,024 bytes.
  KvSuggestion k;
  k.total = gib_bytes(139.81);
  k.utilization = 0.9;
  k.requested = static_cast<int64_t>(static_cast<double>(k.total) * 0.9);
  const int64_t non_kv = k.requested - kBuffer - 45175492096;
  k.free_at_start = 59540753920 + non_kv + kBuffer;
  k.weights = gib_bytes(74.2812);
  k.peak_activation = gib_bytes(5.58);
  k.non_torch = gib_bytes(1.38);
  k.graph_actual = non_kv - k.weights - k.peak_activation - k.non_torch;
  k.kv_available = 47878721024;
  EXPECT_EQ(kv_suggestion_line(era_for_version("0.10.2"), k),
            "Free memory on device (139.21/139.81 GiB) on startup. Desired GPU memory utilization is (0.9, 125.83 GiB). Actual usage is 74.28 "
            "GiB for weight, 5.58 GiB for peak activation, 1.38 GiB for non-torch memory, and 2.37 GiB for CUDAGraph memory. Replace "
            "gpu_memory_utilization config with `--kv-cache-memory=45175492096` to fit into requested memory, or "
            "`--kv-cache-memory=59540753920` to fully utilize gpu memory. Current kv cache memory in use is 47878721024 bytes.");
}

TEST(VllmSuggestionLine, GibFormKeepsTheGraphEstimateOutOfThePeakVllm071) {
  // vllm-071 (2026 build with the four-term line, CUDA-graph estimate on: "CUDA graph pool
  // memory: 1.34 GiB (actual), 1.32 GiB (estimated)"). The peak activation printed (5.66) does
  // not hold the estimate: in use = requested - 16.92 - 5.66 - 0.13 - 1.32 = 43.4 GiB.
  // Capacity 79.3265 GiB (printed 79.33) makes the free figure print as logged.
  KvSuggestion k;
  k.total = gib_bytes(79.3265);
  k.utilization = 0.85;
  k.requested = static_cast<int64_t>(std::ceil(static_cast<double>(k.total) * 0.85));
  const int64_t non_kv = k.requested - kBuffer - 46421742490;
  k.free_at_start = 57542425088 + non_kv + kBuffer;
  k.weights = gib_bytes(16.92);
  k.peak_activation = gib_bytes(5.66);
  k.non_torch = gib_bytes(0.13);
  k.graph_actual = non_kv - k.weights - k.peak_activation - k.non_torch;
  k.kv_available = k.requested - k.weights - k.peak_activation - k.non_torch - gib_bytes(1.32);
  const std::string line = kv_suggestion_line(era_for_version("0.21.0"), k);
  EXPECT_EQ(line.substr(0, line.find(" GiB.", line.find("in use is"))),
            "Free memory on device (77.78/79.33 GiB) on startup. Desired GPU memory utilization is (0.85, 67.43 GiB). Actual usage is 16.92 GiB "
            "for weight, 5.66 GiB for peak activation, 0.13 GiB for non-torch memory, and 1.34 GiB for CUDAGraph memory. Replace "
            "gpu_memory_utilization config with `--kv-cache-memory=46421742490` (43.23 GiB) to fit into requested memory, or "
            "`--kv-cache-memory=57542425088` (53.59 GiB) to fully utilize gpu memory. Current kv cache memory in use is 43.4");
}

TEST(VllmSuggestionLine, PlanPrintsTheBudgetAsInUseNotTheBlocks) {
  // The plan's own line: "in use" is the budget sized before capture (available_kv_cache_memory_bytes),
  // the same figure as "Available KV cache memory", not the blocks x page actually allocated.
  Forecast f = run({"--engine", "vllm@0.29.1", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"});
  std::string avail, in_use;
  for (const auto& l : f.log) {
    if (l.rfind("Available KV cache memory: ", 0) == 0) avail = l.substr(27, l.size() - 27 - 4);
    if (auto p = l.find("Current kv cache memory in use is "); p != std::string::npos) in_use = l.substr(p + 34, l.size() - p - 34 - 5);
  }
  ASSERT_FALSE(avail.empty());
  EXPECT_EQ(in_use, avail);
}

TEST(VllmOverride, BeforePr41069TheCheckUsesTheProfiledMemory) {
  // vllm-058 (0.20.0): --num-gpu-blocks-override 15000 x block 16 = "GPU KV cache size: 240,000
  // tokens" while 12.15 GiB were available. Same architecture (Qwen3-235B-A22B FP8, 94 layers,
  // 1 KV head per rank at TP4): 15,000 blocks x 94 x 8,192 B = 11,550,720,000 B allocated. The case's
  // Instruct-2507 checkpoint allows 262,144 tokens (the original's 40,960 would refuse 240,000).
  Forecast f = run({"--engine", "vllm@0.20.0", "--model", "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "--gpu", "h100", "--tp", "4", "--ep", "4",
                    "--enable-expert-parallel", "--max-num-batched-tokens", "32768", "--gpu-memory-utilization", "0.96", "--max-num-seqs", "128",
                    "--max-model-len", "240000", "--num-gpu-blocks-override", "15000"});
  EXPECT_EQ(f.kv_tokens, 240000);
  EXPECT_TRUE(has_line(f, "GPU KV cache size: 240,000 tokens"));
  EXPECT_TRUE(has_line(f, "Maximum concurrency for 240,000 tokens per request: 1.00x"));
  EXPECT_TRUE(has_prefix(f, "Overriding num_gpu_blocks="));
  int64_t kv = -1;
  for (const auto& st : f.ranks.front().stages)
    if (st.id == StageId::KvPool) kv = st.items.front().bytes;
  EXPECT_EQ(kv, 11550720000);
  // A small override still starts before 0.21: the capacity check ran on the profiled memory.
  Forecast g = run({"--engine", "vllm@0.20.0", "--model", "Qwen/Qwen3-235B-A22B-FP8", "--gpu", "h100", "--tp", "4", "--max-model-len", "32768",
                    "--num-gpu-blocks-override", "1000"});
  EXPECT_NE(g.verdict, Verdict::Refused);
  EXPECT_EQ(g.kv_tokens, 16000);
}

TEST(VllmOverride, FromPr41069TheCheckUsesTheOverride) {
  // 0.21+: available memory = 1,000 blocks x 94 x 8,192 B = 770,048,000 B (0.72 GiB) before the
  // checks; one 32,768-token request needs 2,048 blocks = 1,577,058,304 B (1.47 GiB): refused,
  // with 1,000 x 16 = 16,000 tokens as the estimated maximum model length.
  Forecast g = run({"--engine", "vllm@0.21.0", "--model", "Qwen/Qwen3-235B-A22B-FP8", "--gpu", "h100", "--tp", "4", "--max-model-len", "32768",
                    "--num-gpu-blocks-override", "1000"});
  ASSERT_TRUE(g.failure.has_value());
  EXPECT_EQ(g.verdict, Verdict::Refused);
  EXPECT_NE(g.failure->message.find("(1.47 GiB KV cache is needed, which is larger than the available KV cache memory (0.72 GiB)"), std::string::npos)
      << g.failure->message;
  EXPECT_NE(g.failure->message.find("the estimated maximum model length is 16000."), std::string::npos) << g.failure->message;
}

TEST(VllmEra, CutsOfTheSuggestionLineAndTheOverride) {
  EXPECT_FALSE(era_for_version("0.10.2").suggestion_gib);
  EXPECT_TRUE(era_for_version("0.11.0").suggestion_gib);
  EXPECT_FALSE(era_for_version("0.26.0").total_consumed);
  EXPECT_TRUE(era_for_version("0.26.1").total_consumed);  // vllm-080: a 0.26.1rc0 build prints the L18b line
  EXPECT_FALSE(era_for_version("0.20.0").override_sets_memory);
  EXPECT_TRUE(era_for_version("0.21.0").override_sets_memory);
  // 0.8.5 (vllm-073's era) sizes the KV cache against the whole GPU: gpu_worker.py subtracted
  // the torch peak and every non-torch byte in use on the device (CUDA context and NCCL included).
  EXPECT_TRUE(era_for_version("0.8.5").whole_gpu);
  EXPECT_FALSE(era_for_version("0.9.1").whole_gpu);
}

// ---- NCCL and the budget by era (vllm_estimates.cpp cuda_context / non_torch_increase by era).
// PR #25359 moved init_worker_distributed_environment above the init snapshot in 0.11.0.

TEST(VllmNcclEra, PR25359CutsBetween0102And011) {
  EXPECT_FALSE(era_for_version("0.10.2").nccl_before_snapshot);
  EXPECT_TRUE(era_for_version("0.11.0").nccl_before_snapshot);
  // 2025-09-22 merge: a build dated 2025-09-20 runs 0.10.2's order, one of 2025-10-05 0.11's.
  EXPECT_FALSE(era_for_version("main@2025-09-20").nccl_before_snapshot);
  EXPECT_TRUE(era_for_version("main@2025-10-05").nccl_before_snapshot);
}

TEST(VllmNcclEra, StartupCheckSeesTheContextAloneBefore011) {
  // vllm-048 (0.10.2, H200 TP2): "Free memory on device (139.21/139.81 GiB) on startup": 0.60 GiB
  // resident, one GPU's CUDA context; NCCL is built after that snapshot.
  const Estimate b = cuda_context(era_for_version("0.10.2"), 2, 1, false);
  EXPECT_NEAR(to_gib(b.central), 0.60, 0.01);
  EXPECT_LT(to_gib(b.high), 0.96);  // below every 0.11+ multi-GPU figure (NCCL not in it)
  // 0.11+ (NCCL before the snapshot), all TP4: 0.96 (vllm-052, RTX PRO 6000), 1.55 (vllm-071,
  // 80 GB), 2.47 (GLM-5.2-NVFP4 v0.26.0, 184.31 GiB, public-code idx 61511710941).
  const Estimate c = cuda_context(era_for_version("0.11.0"), 4, 1, false);
  EXPECT_NEAR(to_gib(c.central), 1.55, 0.01);
  EXPECT_LE(to_gib(c.low), 0.96);
  EXPECT_GE(to_gib(c.high), 2.47);
  // The plan replays vllm-048's figure: T 139.81 - 0.60.
  Forecast f = run({"--engine", "vllm@0.10.2", "--model", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--gpu", "h200", "--tp", "2",
                    "--max-model-len", "262144", "--max-num-batched-tokens", "8192"});
  EXPECT_TRUE(has_prefix(f, "Free memory on device (139.21/139.81 GiB) on startup."));
}

TEST(VllmNcclEra, NcclBuffersAreChargedToTheBudgetOnlyBefore011) {
  // 0.9.1-0.10.2: the communicators' buffers are non-torch growth. vllm-048 logs "1.38 GiB for
  // non-torch memory" at TP2; vllm-001 (TP4 H100, July 2025) implies ~2.5 GiB (71.27 requested -
  // 55.12 weights - 8.11 available - ~5.5 sampler peak).
  const Era b = era_for_version("0.10.2");
  EXPECT_NEAR(to_gib(non_torch_increase(b, 2, 1).central), 1.38, 0.1);
  const Estimate b4 = non_torch_increase(b, 4, 1);
  EXPECT_LE(to_gib(b4.low), 2.5);
  EXPECT_GE(to_gib(b4.high), 2.5);
  EXPECT_NEAR(to_gib(b4.central), 2.5, 0.15);
  // PCIe hosts measured the same quantity (V0, baseline before NCCL): 0.25 GiB on 2 x RTX 4090
  // (vllm#13061): inside the range at TP2.
  EXPECT_LE(to_gib(non_torch_increase(b, 2, 1).low), 0.25);
  // 0.11+: growth after NCCL init only: 0.54 / 0.55 (TP2 H100, v0.11.0, idx 27349653019), 0.09
  // (OPT-2.7B TP4, 2025-11, idx 34802511869), 0.13 (vllm-071, TP4), 0.95 (GLM-5.2-NVFP4 TP4 with a
  // FlashInfer MNNVL all-reduce workspace): the median, and below 0.10.2's NCCL-holding term.
  const Estimate c = non_torch_increase(era_for_version("0.11.0"), 4, 1);
  EXPECT_NEAR(to_gib(c.central), 0.54, 0.01);
  EXPECT_LT(to_gib(non_torch_increase(era_for_version("0.11.0"), 2, 1).central), 1.38 - 0.5);
  EXPECT_LE(to_gib(c.low), 0.09);
  EXPECT_GE(to_gib(c.high), 0.95);
  // total_consumed era: consumed - weights, 56.89 - 55.19 = 1.70 GiB (vllm-052, TP4), ~1.5 at TP3
  // (vllm-080): 1.6 from three ranks; two ranks hold 0.38 .. 0.54 (xvllm-061; xvllm-060 with its
  // vision tower not built under --language-model-only): 0.46.
  EXPECT_NEAR(to_gib(non_torch_increase(era_for_version("0.27.1"), 4, 1).central), 1.60, 0.01);
  EXPECT_NEAR(to_gib(non_torch_increase(era_for_version("0.27.1"), 2, 1).central), 0.46, 0.01);
  EXPECT_GE(to_gib(non_torch_increase(era_for_version("0.27.1"), 4, 1).high), 1.70);
  EXPECT_LE(to_gib(non_torch_increase(era_for_version("0.27.1"), 2, 1).low), 0.38);
  EXPECT_GE(to_gib(non_torch_increase(era_for_version("0.27.1"), 2, 1).high), 0.54);
  // One GPU has no NCCL: the same term in every era.
  EXPECT_EQ(non_torch_increase(b, 1, 1).central, non_torch_increase(era_for_version("0.11.0"), 1, 1).central);
}

TEST(VllmNcclEra, WholeGpuEraChargesContextAndNcclOnce) {
  // 0.8.x charges every non-torch byte in use (context + NCCL + growth) once: the context + NCCL
  // resident at start and the growth after it, as 0.11+ logs show them, not 0.10.2's growth term
  // (which holds NCCL's buffers a second time). vllm-073 (0.8.5, TP4 A10) bounds the total below
  // ~0.6 GiB on PCIe; the NVLink-fitted 2.1 still overstates it (the case stays a miss).
  const Era a = era_for_version("0.8.5");
  const Era c = era_for_version("0.11.0");
  EXPECT_EQ(cuda_context(a, 4, 1, false).central, cuda_context(c, 4, 1, false).central);
  EXPECT_EQ(non_torch_increase(a, 4, 1).central, non_torch_increase(c, 4, 1).central);
  EXPECT_NEAR(to_gib(cuda_context(a, 4, 1, false).central + non_torch_increase(a, 4, 1).central), 1.55 + 0.54, 0.01);
}

TEST(VllmNcclEra, Vllm001KvFromTheEraBudget) {
  // vllm-001 (vllm#21348, July 2025, Qwen3-235B-A22B-FP8 TP4 H100, u = 0.9): "GPU KV cache size:
  // 178,880 tokens". The 0.10 era charges NCCL's ~2.6 GiB per rank to the budget. In-sample: this
  // log is one of the two that fit the 0.65 GiB x world term, so this pins the arithmetic, not
  // an out-of-sample check.
  Forecast f = run({"--engine", "vllm@unknown@2025-07-22", "--model", "Qwen/Qwen3-235B-A22B-FP8", "--gpu", "h100", "--tp", "4"});
  EXPECT_NEAR(static_cast<double>(f.kv_tokens), 178880.0, 178880.0 * 0.03) << f.kv_tokens;
}

namespace {
double logged_gib(const Forecast& f, const std::string& prefix) {
  for (const auto& l : f.log)
    if (l.rfind(prefix, 0) == 0) return std::stod(l.substr(prefix.size()));
  return -1;
}
}  // namespace

TEST(VllmEnv, EstimateCudagraphsOffGivesTheEstimateBackToTheKvCache) {
  // gpu_worker.py determine_available_memory (0.21+): with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0
  // the profiled CUDA-graph estimate is no longer subtracted, and a warning replaces the info line.
  std::vector<std::string> base = {"--engine", "vllm@0.29.1", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"};
  Forecast on = run(base);
  auto off_args = base;
  off_args.insert(off_args.end(), {"--env", "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0"});
  Forecast off = run(off_args);
  const double est = logged_gib(on, "Estimated CUDA graph memory: ");
  ASSERT_GT(est, 0.1);
  EXPECT_NEAR(logged_gib(off, "Available KV cache memory: ") - logged_gib(on, "Available KV cache memory: "), est, 0.011);
  EXPECT_GT(off.kv_tokens, on.kv_tokens);
  EXPECT_TRUE(has_prefix(off, "CUDA graph memory profiling is disabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0)."));
  EXPECT_FALSE(has_prefix(on, "CUDA graph memory profiling is disabled"));
  // 0.17-0.20 (opt-in era, PR #30515): "=1" turns the subtraction on.
  Forecast v18 = run({"--engine", "vllm@0.18.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"});
  Forecast v18_on = run({"--engine", "vllm@0.18.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--env", "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1"});
  EXPECT_LT(v18_on.kv_tokens, v18.kv_tokens);
}

TEST(VllmEnv, BadValuesAndUnmodelledVariablesAreSaid) {
  EXPECT_NE(input_error({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--env", "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=2"})
                .find("is not 0 or 1"), std::string::npos);
  EXPECT_NE(input_error({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--env", "=1"}).find("is not NAME=VALUE"),
            std::string::npos);
  Forecast f = run({"--engine", "sglang", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--env", "SGLANG_ENABLE_TORCH_COMPILE=1"});
  bool noted = false;
  // SGLang's model notes the variables it does not read itself (sglang_plan.cpp), once.
  for (const auto& n : f.notes) noted = noted || n == "environment SGLANG_ENABLE_TORCH_COMPILE=1 is not modelled: the forecast is the same as without it";
  EXPECT_TRUE(noted);
}
