// doctor's placement of failures the log does not place (doctor_place.cpp, issue 5): `stage` is
// always a CONTRACT stage and `stage_basis` says what it rests on: "log", "numbers" (the OOM
// report's figures against the forecast or the engine's budget) or "guess" (how far the log got).
// Each log line below is in the format of a real log, named at the test.
#include <gtest/gtest.h>

#include <string>

#include "headroom/cli.h"
#include "headroom/doctor.h"
#include "headroom/logscan.h"

using namespace headroom;

namespace {

Diagnosis run(const std::string& log, std::vector<std::string> args) {
  LogScan scan = scan_log_text(log, "place");
  return diagnose(scan, Args::parse(args));
}

bool has(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v)
    if (s.find(needle) != std::string::npos) return true;
  return false;
}

// PyTorch 2.1+ OOM report, the form of corpus vllm-068 (SemiAnalysisAI/InferenceX PR #1461) with
// the process's figure given by the test.
std::string torch_oom(const std::string& request, const std::string& total, const std::string& free, const std::string& in_use) {
  return "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + request + ". GPU 0 has a total capacity of " + total +
         " of which " + free + " is free. Including non-PyTorch memory, this process has " + in_use + " memory in use.\n";
}

}  // namespace

// ---- rule a: no error line, the log reached the KV pool: a failure came later, at runtime (guess)

TEST(DoctorPlace, NoErrorAfterKvPoolIsARuntimeGuess) {
  // corpus vllm-029 (LMCache/LMCache#3430): V1 0.21 stops after KV sizing; the thread's OOM came at runtime.
  Diagnosis d = run(
      "(EngineCore pid=4108) INFO 05-28 08:00:26 [gpu_worker.py:462] Available KV cache memory: 6.37 GiB\n"
      "(EngineCore pid=4108) INFO 05-28 08:00:26 [kv_cache_utils.py:1710] GPU KV cache size: 46,368 tokens\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "runtime");
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);
  EXPECT_EQ(d.reached_stage, "kv_pool");
  EXPECT_EQ(d.cause, Cause::NoErrorInLog);
  EXPECT_NE(d.explanation.find("no error in the log"), std::string::npos) << d.explanation;
  // A guess gives no confident fix: each one says it depends on the guessed stage.
  for (const auto& f : d.fixes) EXPECT_EQ(f.effect.rfind("if the failure was in runtime", 0), 0u) << f.effect;
  EXPECT_EQ(diagnosis_json(d)["stage_basis"], "guess");
}

TEST(DoctorPlace, NoErrorBeforeKvPoolIsTheNextStage) {
  // SGLang model_runner.py "Load weight end" (format of corpus sglang logs, e.g. sglang#1479), then nothing.
  Diagnosis d = run("[2024-10-22 06:31:40 TP0] Load weight end. type=Phi3ForCausalLM, dtype=torch.bfloat16, avail mem=14.21 GB\n",
                    {"--engine", "sglang"});
  // the readers label a line with the stage in progress after it: the KV pool is next
  EXPECT_EQ(d.reached_stage, "kv_pool");
  EXPECT_EQ(d.stage, "kv_pool");
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);
}

TEST(DoctorPlace, VllmFailureAfterTheWeightsWithNoMessageIsAKvGuess) {
  // vllm-project/vllm#14574 (V1 CI): "Model loading took", then EngineCore's traceback, cut
  // before its exception (the title: "No available memory for the cache blocks").
  Diagnosis d = run(
      "INFO 03-10 08:07:20 [gpu_model_runner.py:1067] Model loading took 0.2389 GB and 0.977005 seconds\n"
      "ERROR 03-10 08:07:20 [core.py:302] EngineCore hit an exception: Traceback (most recent call last):\n"
      "ERROR 03-10 08:07:20 [core.py:302]   File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py\", line 294, in "
      "run_engine_core\n"
      "ERROR 03-10 08:07:20 [core.py:302]     engine_core = EngineCoreProc(*args, **kwargs)\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "kv_pool");
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);
}

// ---- rule b: OOM figures against the forecast of a known deployment

TEST(DoctorPlace, OomFiguresBelowTheWeightsAreWeights) {
  // Qwen3-8B in bf16 is 15.26 GiB of weights (catalog config); a process holding 10 GiB was still loading them.
  Diagnosis d = run(torch_oom("1.16 GiB", "79.19 GiB", "500.00 MiB", "10.00 GiB"),
                    {"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"});
  EXPECT_EQ(d.stage, "weights");
  EXPECT_EQ(d.stage_basis, StageBasis::Numbers);
  EXPECT_EQ(d.cause, Cause::WeightsDoNotFit);
  EXPECT_TRUE(has(d.arithmetic, "the process held 10.00 GiB")) << d.explanation;
}

TEST(DoctorPlace, OomFiguresPastTheKvPoolAreCapture) {
  // 0.9 x 79.19 GiB = 71.27 GiB is vLLM's budget for weights + activations + KV: a process at
  // 78 GiB is past the KV pool, in capture (graphs are on by default) ...
  const std::string log = torch_oom("512.00 MiB", "79.19 GiB", "300.00 MiB", "78.00 GiB");
  Diagnosis d = run(log, {"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"});
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_EQ(d.stage_basis, StageBasis::Numbers);
  // ... and in the warm-up when --enforce-eager switches them off.
  Diagnosis e = run(log, {"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--enforce-eager"});
  EXPECT_EQ(e.stage, "warmup");
  EXPECT_EQ(e.stage_basis, StageBasis::Numbers);
}

TEST(DoctorPlace, OomFiguresBetweenWeightsAndPoolAreTheKvPool) {
  Diagnosis d = run(torch_oom("8.00 GiB", "79.19 GiB", "1.00 GiB", "30.00 GiB"),
                    {"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"});
  EXPECT_EQ(d.stage, "kv_pool");
  EXPECT_EQ(d.stage_basis, StageBasis::Numbers);
}

// ---- rule c: no model; SGLang's static pools sit within mem_fraction_static x total

TEST(DoctorPlace, SglangProcessAboveItsFractionIsPastThePools) {
  // corpus sglang-012 (NVIDIA/srt-slurm#172): 181.77 of 184.00 GiB in use at --mem-fraction-static
  // 0.95, whose pools take at most 0.95 x 184.00 = 174.80 GiB.
  const std::string log =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 3 has a total capacity of 184.00 GiB of which "
      "2.21 GiB is free. Including non-PyTorch memory, this process has 181.77 GiB memory in use.\n";
  Diagnosis d = run(log, {"--engine", "sglang", "--mem-fraction-static", "0.95", "--tp-size", "4"});
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_EQ(d.stage_basis, StageBasis::Numbers);
  EXPECT_EQ(d.cause, Cause::StaticFractionTooHigh);
  EXPECT_TRUE(has(d.arithmetic, "174.80 GiB")) << d.explanation;
  Diagnosis e = run(log, {"--engine", "sglang", "--mem-fraction-static", "0.95", "--disable-cuda-graph"});
  EXPECT_EQ(e.stage, "warmup");
}

TEST(DoctorPlace, SglangProcessWithinItsFractionIsAWeightsGuess) {
  // Same report with 150 GiB in use: below 0.95 x 184 = 174.80 GiB, inside the static budget.
  Diagnosis d = run(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 3 has a total capacity of 184.00 GiB of which "
      "2.21 GiB is free. Including non-PyTorch memory, this process has 150.00 GiB memory in use.\n",
      {"--engine", "sglang", "--mem-fraction-static", "0.95"});
  EXPECT_EQ(d.stage, "weights");
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);
  EXPECT_EQ(d.cause, Cause::OomStageUnknown);  // a guessed stage keeps the fixes of both readings
}

TEST(DoctorPlace, SglangAllocatorWarningWithoutFractionComparesTheLargestDefault) {
  // corpus sglang-033 (sgl-project/sglang#38202): c10's allocator warning has no per-process
  // figure; the device had 287431131136 - 3779919872 bytes (264.17 GiB) in use, above the largest
  // default fraction SGLang picks for a 274,116 MiB GPU on one rank: memory_hook.py's reserve
  // 512 + 1.5 x 16,384 (chunked prefill) + 1/8 x 1024 + 2 x 512 (capture bs) = 26,240 MiB,
  // (274,116 - 26,240) / 274,116 = 0.904 (the 2025 eras give 0.904 and 0.880, 2024 0.88).
  Diagnosis d = run(
      "[rank1]:[W906 07:46:05.008634648 CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 1 while trying to "
      "allocate 4334813184 bytes (free: 3779919872, total: 287431131136).\n",
      {"--engine", "sglang", "--enable-dp-attention"});
  // Past the pools, and one block of 4.04 GiB (not whole GiB): a pool set up after the target's (the
  // thread's draft KV pool), not capture, whose blocks are activations (the seed's largest: 694 MiB).
  EXPECT_EQ(d.stage, "kv_pool");
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);  // device-wide use may include other processes
  EXPECT_TRUE(has(d.arithmetic, "at most 0.904 x 267.69 GiB = 241.99 GiB")) << d.explanation;
  // corpus sglang-012: 4.00 GiB exactly, SGLang's symmetric-memory pool (SGLANG_SYMM_MEM_PREALLOC_GB_SIZE)
  // after the KV pool: the post-pool stage, as before.
  Diagnosis symm = run(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 3 has a total capacity of 184.00 GiB of which "
      "2.21 GiB is free. Including non-PyTorch memory, this process has 181.77 GiB memory in use.\n",
      {"--engine", "sglang", "--mem-fraction-static", "0.95"});
  EXPECT_EQ(symm.stage, "cuda_graph");
}

TEST(DoctorPlace, VllmLoneOomWithoutModelIsAWeightsGuess) {
  // corpus vllm-068 (InferenceX PR #1461): no model, TP8, --gpu-memory-utilization 0.95.
  Diagnosis d = run(torch_oom("1008.00 MiB", "139.81 GiB", "993.44 MiB", "138.83 GiB"),
                    {"--engine", "vllm", "--gpu-memory-utilization", "0.95", "--tensor-parallel-size", "8"});
  EXPECT_EQ(d.stage, "weights");
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);
  EXPECT_EQ(d.cause, Cause::OomStageUnknown);
  EXPECT_NE(d.explanation.find("A guess"), std::string::npos);
}

// ---- readers: wordings that place a failure

TEST(DoctorPlace, DeadServingEngineCarriesARuntimeOom) {
  // RooCodeInc/Roo-Code#6541: vLLM's "Engine loop is not running" relaying a HIP OOM; the 26 MiB
  // in HIP-graph pools show graphs were captured, the dead engine shows it was serving.
  Diagnosis d = run(
      "Engine loop is not running. Inspect the stacktrace to find the original error: OutOfMemoryError('HIP out of memory. Tried to "
      "allocate 1.63 GiB. GPU 0 has a total capacity of 63.98 GiB of which 1.18 GiB is free. Of the allocated memory 57.09 GiB is "
      "allocated by PyTorch, with 26.00 MiB allocated in private pools (e.g., HIP Graphs), and 1.23 GiB is reserved by PyTorch but "
      "unallocated.').\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "runtime");
  EXPECT_EQ(d.stage_basis, StageBasis::Log);
}

TEST(DoctorPlace, TensorRtLlmCppRuntimeOomIsAnOom) {
  // NVIDIA/TensorRT-LLM#3636 (release 0.18): generate() -> forwardAsync's cudaMallocAsync fails.
  Diagnosis d = run(
      "  File \"/home/ss/.local/lib/python3.12/site-packages/tensorrt_llm/runtime/model_runner_cpp.py\", line 766, in generate\n"
      "    return self._initialize_and_fill_output(\n"
      "RuntimeError: Encountered an error in forwardAsync function: [TensorRT-LLM][ERROR] CUDA runtime error in "
      "::cudaMallocAsync(ptr, n, mMemPool->getPool(), mCudaStream->get()): out of memory "
      "(/home/jenkins/agent/workspace/LLM/release-0.18/L0_Test-x86_64/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:125)\n",
      {"--engine", "trtllm"});
  EXPECT_EQ(d.stage, "runtime");
  EXPECT_NE(d.cause, Cause::NotOom);
}
