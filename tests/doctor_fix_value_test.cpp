// doctor_fix_value (validate_fix_value.cpp): the doctor's first fix against the range the thread's
// resolution shows, and the doctor fixes it measures: vLLM's capture OOM from the log's own figures,
// chunked prefill turned off, and the hybrid models' Mamba block-count refusal. Values hand-computed
// from the figures in each log (sources cited per test).
#include <gtest/gtest.h>

#include "headroom/cli.h"
#include "headroom/doctor.h"
#include "headroom/logscan.h"
#include "headroom/validate.h"
#include "validate/validate_fix_value.h"

using namespace headroom;

namespace {

Diagnosis doctor(const std::string& log, std::vector<std::string> args) {
  return diagnose(scan_log_text(log, "fix_value.log"), Args::parse(args));
}

bool agrees(const std::string& flag, const std::string& ours, const std::string& failed, const std::string& working) {
  auto v = judge_fix_value(flag, ours, failed, working);
  EXPECT_TRUE(v.has_value()) << flag << " " << ours;
  return v && v->agree;
}

}  // namespace

TEST(DoctorFixValue, FractionBetweenFailedAndWorkingPlusTolerance) {
  // vllm-009: 0.98 failed, 0.97 worked: [0.95, 0.98) is in (0.97 - 0.02 tolerance), 0.98 itself is no change
  EXPECT_TRUE(agrees("--gpu-memory-utilization", "0.97", "0.98", "0.97"));
  EXPECT_TRUE(agrees("--gpu-memory-utilization", "0.95", "0.98", "0.97"));
  EXPECT_FALSE(agrees("--gpu-memory-utilization", "0.92", "0.98", "0.97"));
  EXPECT_FALSE(agrees("--gpu-memory-utilization", "0.98", "0.98", "0.97"));
  EXPECT_FALSE(agrees("--gpu-memory-utilization", "0.99", "0.98", "0.97"));  // the wrong way
  // vllm-083: 0.95 refused, 0.97 worked: (0.95, 0.99]
  EXPECT_TRUE(agrees("--gpu-memory-utilization", "0.96", "0.95", "0.97"));
  EXPECT_TRUE(agrees("--gpu-memory-utilization", "0.98", "0.95", "0.97"));
  EXPECT_FALSE(agrees("--gpu-memory-utilization", "0.995", "0.95", "0.97"));
  // the failed value unknown: the working value +- 0.02
  EXPECT_TRUE(agrees("--mem-fraction-static", "0.88", "", "0.9"));
  EXPECT_FALSE(agrees("--mem-fraction-static", "0.85", "", "0.9"));
}

TEST(DoctorFixValue, IntegerKnobsWithinAQuarterBeyondTheWorkingValue) {
  // xvllm-080: max seq len 262144 refused, the thread set 32768; vLLM's own estimate 231328 lies between
  EXPECT_TRUE(agrees("--max-model-len", "231328", "262144", "32768"));
  EXPECT_TRUE(agrees("--max-model-len", "26215", "262144", "32768"));   // 32768 / 1.25 = 26214.4
  EXPECT_FALSE(agrees("--max-model-len", "26214", "262144", "32768"));
  EXPECT_FALSE(agrees("--max-model-len", "262144", "262144", "32768"));
  // vllm-039: --max-num-seqs 1024 (V1's default) failed, 8 worked
  EXPECT_TRUE(agrees("--max-num-seqs", "256", "1024", "8"));
  EXPECT_FALSE(agrees("--max-num-seqs", "4", "1024", "8"));  // 8 / 1.25 = 6.4
  // no failed value: 188000 x / 1.25 = [150400, 235000]
  EXPECT_TRUE(agrees("--max-model-len", "150400", "", "188000"));
  EXPECT_FALSE(agrees("--max-model-len", "131072", "", "188000"));
}

TEST(DoctorFixValue, NonNumbersCompareAsText) {
  EXPECT_TRUE(agrees("--enable-chunked-prefill", "true", "", "true"));
  EXPECT_FALSE(agrees("--kv-cache-dtype", "fp8_e5m2", "", "fp8"));
  EXPECT_FALSE(agrees("--gpu-memory-utilization", "high", "0.9", "0.95"));
  EXPECT_FALSE(judge_fix_value("--max-model-len", "", "", "").has_value());
}

TEST(DoctorFixValue, VllmCaptureOomGetsTheUtilizationFromTheShortfall) {
  // corpus vllm-009 (vllm-project/vllm PR #57595, vLLM 0.29 dev): capture finished ("took 0.46 GiB"),
  // then 136 MiB was asked with 120.88 MiB free of 22.36 GiB at --gpu-memory-utilization 0.98.
  // Short 15.12 MiB; margin max(136 MiB, 0.46 GiB) = 0.46 GiB; 0.98 - 0.4748 / 22.36 = 0.9588 -> 0.95.
  // The thread: 0.97 boots. (The 1 GiB margin alone gave 0.92, a fifth of the KV cache for nothing.)
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB. GPU 0 has a total capacity of 22.36 GiB of which "
      "120.88 MiB is free. Including non-PyTorch memory, this process has 22.23 GiB memory in use. Of the allocated memory 21.51 GiB "
      "is allocated by PyTorch, and 118.00 MiB is reserved by PyTorch but unallocated. If this problem persists, try setting "
      "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0\n";
  const std::string head =
      "INFO  [gpu_worker.py:642]  Available KV cache memory: 2.97 GiB\n"
      "INFO  [kv_cache_utils.py]  GPU KV cache size: 150,745 tokens, Maximum concurrency for 124,000 tokens\n";
  Diagnosis d = doctor(head + "INFO  [model_runner.py]    Graph capturing finished in 1 secs, took 0.46 GiB\n" + oom,
                       {"--engine", "vllm", "--gpu-memory-utilization", "0.98"});
  EXPECT_EQ(d.stage, "cuda_graph");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes.front().flag, "--gpu-memory-utilization");
  EXPECT_EQ(d.fixes.front().value, "0.95");
  // Without the capture figure the margin is the request: 0.98 - (15.12 + 136) MiB / 22.36 GiB = 0.9734 -> 0.97.
  Diagnosis d2 = doctor(head + oom, {"--engine", "vllm", "--gpu-memory-utilization", "0.98"});
  ASSERT_FALSE(d2.fixes.empty());
  EXPECT_EQ(d2.fixes.front().value, "0.97");
}

TEST(DoctorFixValue, VllmChunkedPrefillOffIsTurnedBackOnFirst) {
  // corpus vllm-060 (noonghunna/club-3090 PR #708): --no-enable-chunked-prefill at --max-model-len 262144;
  // the profile run's _dummy_run asked 2.00 GiB with 1.08 GiB free. vLLM's SchedulerConfig sets
  // max_num_batched_tokens >= max_model_len when chunked prefill is off: the step is the whole context.
  const std::string log =
      "(EngineCore_DP0 pid=300) INFO 05-10 12:01:10 [gpu_model_runner.py:2653] Model loading took 13.3125 GiB and 60.1 seconds\n"
      "(EngineCore_DP0 pid=300) ERROR 05-10 12:01:40 [core.py:708] EngineCore failed to start.\n"
      "(EngineCore_DP0 pid=300) ERROR 05-10 12:01:40 [core.py:708] Traceback (most recent call last):\n"
      "(EngineCore_DP0 pid=300) ERROR 05-10 12:01:40 [core.py:708]   File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py\", line 3204, in profile_run\n"
      "(EngineCore_DP0 pid=300) ERROR 05-10 12:01:40 [core.py:708]     hidden_states, last_hidden_states = self._dummy_run(\n"
      "(EngineCore_DP0 pid=300) ERROR 05-10 12:01:40 [core.py:708] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
      "GPU 0 has a total capacity of 23.56 GiB of which 1.08 GiB is free. Including non-PyTorch memory, this process has 22.46 GiB memory "
      "in use. Of the allocated memory 21.80 GiB is allocated by PyTorch, and 213.00 MiB is reserved by PyTorch but unallocated.\n";
  Diagnosis d = doctor(log, {"--engine", "vllm", "--max-model-len", "262144", "--no-enable-chunked-prefill"});
  EXPECT_EQ(d.stage, "warmup");
  EXPECT_EQ(d.cause, Cause::ActivationPeak);
  ASSERT_GE(d.fixes.size(), 2u);
  EXPECT_EQ(d.fixes[0].flag, "--enable-chunked-prefill");
  EXPECT_EQ(d.fixes[0].value, "true");
  EXPECT_EQ(d.fixes[1].flag, "--max-num-seqs");
  EXPECT_EQ(d.fixes[1].value, "256");  // V1's default 1024 / 4
  EXPECT_EQ(d.fixes[1].from, "1024");
  // chunked prefill on: no such fix
  Diagnosis on = doctor(log, {"--engine", "vllm", "--max-model-len", "262144"});
  for (const auto& f : on.fixes) EXPECT_NE(f.flag, "--enable-chunked-prefill");
}

TEST(DoctorFixValue, VllmMambaBlockCountIsAMemoryRefusalWithTheEnginesBound) {
  // vllm/config/compilation.py resolve_cudagraph_mode_and_sizes (0.20 - 2026); the text as a user's
  // Docker log printed it (public code index id 56646367152: Qwen/Qwen3.5-4B at --gpu-memory-utilization 0.50).
  const std::string log =
      "(EngineCore pid=196) ERROR 06-01 09:00:00 [core.py:946] EngineCore failed to start.\n"
      "(EngineCore pid=196) ValueError: max_num_seqs (256) exceeds available Mamba cache blocks (73). Each decode sequence requires one "
      "Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 73 or increase gpu_memory_utilization.\n";
  Diagnosis d = doctor(log, {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "kv_pool");
  EXPECT_EQ(d.cause, Cause::StateCacheTooSmall);
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes.front().flag, "--max-num-seqs");
  EXPECT_EQ(d.fixes.front().value, "73");
  EXPECT_EQ(d.fixes.front().from, "256");
  // wrapped over three lines as posted (corpus vllm-024, 1024 over 939 blocks)
  Diagnosis w = doctor("ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (939).\n"
                       "Each decode sequence requires one Mamba cache block, so CUDA graph capture cannot\n"
                       "proceed. Please lower max_num_seqs to at most 939 or increase gpu_memory_utilization.\n",
                       {"--engine", "vllm"});
  EXPECT_EQ(w.cause, Cause::StateCacheTooSmall);
  ASSERT_FALSE(w.fixes.empty());
  EXPECT_EQ(w.fixes.front().value, "939");
}

TEST(DoctorFixValue, CorpusFixValuesWithinTheThreadsRange) {
  // validate's doctor_fix_value on the corpus, measured 2026-12-03: vllm 6/6 (vllm-009 0.95 for 0.97,
  // -021 23648 for 20000 from 29000, -039 and -040 --max-num-seqs 256 from 1024, -060 chunked prefill on,
  // -083 0.98 for 0.97 from 0.95); extra vllm 8/9 (xvllm-075: 0.98 with a shorter context where the thread
  // raised 0.7 to 0.9).
  auto j = validate_corpus(std::string(HEADROOM_TEST_DATA) + "/corpus/vllm.jsonl");
  EXPECT_EQ(j["doctor_fix_value"]["n"].get<int>(), 6);
  EXPECT_EQ(j["doctor_fix_value"]["agreement"].get<double>(), 1.0);
  auto x = validate_corpus(std::string(HEADROOM_TEST_DATA) + "/extra/vllm.jsonl");
  EXPECT_EQ(x["doctor_fix_value"]["n"].get<int>(), 9);
  EXPECT_GE(x["doctor_fix_value"]["agreement"].get<double>(), 0.88);
  // xvllm-075 (Qwen3-VL-8B on an RTX 5090, 0.7 refused with -1.79 GiB of KV, no fraction fits at 262,144):
  // from vLLM's default 0.9 up, the smallest utilization the forecast fits at a 32,768-token context is
  // 0.95 (0.90 - 0.94 are AT RISK there), then the longest context at it. It was 0.98 (the largest) with
  // 39,936. The thread: 0.9 with 32,000 served.
  for (const auto& r : x["per_case"]) {
    if (r["id"] != "xvllm-075") continue;
    ASSERT_TRUE(r.contains("doctor"));
    ASSERT_GE(r["doctor"]["fixes"].size(), 2u);
    EXPECT_EQ(r["doctor"]["fixes"][0], "--gpu-memory-utilization=0.95");
    EXPECT_EQ(r["doctor"]["fixes"][1], "--max-model-len=32768");
  }
}
