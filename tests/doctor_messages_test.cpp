// doctor on each family of memory failure the engines print at start-up (docs/doctor-messages.md):
// one test per family, the message text copied from the engine's source or from a posted log (cited
// above each), in the engine's own log format. Each asserts the stage, the cause and the exit code 1
// of `headroom doctor`; none may read as "not_oom" or a healthy start when the log ran out of memory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "headroom/cli.h"
#include "headroom/doctor.h"
#include "headroom/logscan.h"

using namespace headroom;

namespace {

Diagnosis doctor(const std::string& log, std::vector<std::string> args) {
  return diagnose(scan_log_text(log, "messages.log"), Args::parse(args));
}

// `headroom doctor LOG --engine E` as a user runs it: the exit code.
int cli_exit(const std::string& log, const std::string& engine) {
  // Named by the test: ctest runs each test as its own process, in parallel, so a counter would collide.
  static int n = 0;
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const auto path = std::filesystem::temp_directory_path() / ("headroom_doctor_messages_" + test + "_" + std::to_string(++n) + ".log");
  std::ofstream(path, std::ios::binary) << log;
  std::ostringstream out, err;
  int rc = run_cli({"doctor", path.string(), "--engine", engine}, out, err);
  std::filesystem::remove(path);
  return rc;
}

void expect(const std::string& log, const std::string& engine, const std::string& stage, const std::string& causes) {
  Diagnosis d = doctor(log, {"--engine", engine});
  EXPECT_EQ(d.stage, stage) << d.explanation;
  EXPECT_NE(("|" + causes + "|").find("|" + std::string(d.cause ? name(*d.cause) : "") + "|"), std::string::npos) << (d.cause ? name(*d.cause) : "") << " vs " << causes << ": " << d.explanation;
  EXPECT_NE(d.cause, Cause::NotOom);
  EXPECT_EQ(cli_exit(log, engine), kExitFails);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// SGLang

TEST(DoctorMessages, SglangNotEnoughMemoryWithCurrentValue) {
  // python/sglang/srt/model_executor/pool_configurator.py MemoryPoolConfig.__post_init__ (2026):
  // "Not enough memory. Please try to increase --mem-fraction-static." + " Current value: mem_fraction_static={f}"
  expect("[2026-03-01 10:00:00 TP0] Load weight begin. avail mem=78.50 GB\n"
         "[2026-03-01 10:00:40 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=14.02 GB, mem usage=64.48 GB.\n"
         "[2026-03-01 10:00:40 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
         "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.8\n",
         "sglang", "kv_pool", "static_fraction_too_low");
}

TEST(DoctorMessages, SglangHybridStateCacheNegativeRestMemory) {
  // model_runner_kv_cache_mixin.py handle_max_mamba_cache (2026), one line as raised; the figures are a
  // posted run's (public code index id 65830671609: "Computed max_mamba_cache_size=-28 (total_rest_memory=-7.96 GB,
  // mamba_cache_per_req=146.81 MB)" at --mem-fraction-static 0.25).
  const std::string log =
      "[2026-05-02 09:12:01] Load weight end. type=Qwen3NextForCausalLM, avail mem=40.11 GB, mem usage=36.02 GB.\n"
      "[2026-05-02 09:12:01] RuntimeError: Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed "
      "max_mamba_cache_size=-28 (total_rest_memory=-7.96 GB, mamba_cache_per_req=146.81 MB). Try: (1) reduce --max-running-requests, "
      "(2) increase --mem-fraction-static, (3) reduce --speculative-num-draft-tokens, or (4) use GPUs with more memory.\n";
  expect(log, "sglang", "kv_pool", "static_fraction_too_low");
  LogScan scan = scan_log_text(log, "m.log");
  ASSERT_FALSE(scan.errors.empty());
  EXPECT_EQ(scan.errors.front().kind, "sglang_mamba_no_memory");
  EXPECT_EQ(scan.errors.front().value, -28);
}

TEST(DoctorMessages, SglangPoolTooSmallForOneRequest) {
  // managers/tp_worker.py TpModelWorker.__init__ (2024 - 2026, idx:74498457): assert max_req_len > 0 and
  // max_req_input_len > 0, "Memory pool size is too small" -- the pool sized, but for fewer than 6 tokens.
  expect("[2025-02-01 10:00:00 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=9.80 GB, mem usage=13.48 GB.\n"
         "[2025-02-01 10:00:00 TP0] KV Cache is allocated. #tokens: 3, K size: 0.00 GB, V size: 0.00 GB\n"
         "[2025-02-01 10:00:00 TP0] Memory pool end. avail mem=9.79 GB\n"
         "[2025-02-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
         "AssertionError: Memory pool size is too small\n",
         "sglang", "kv_pool", "static_fraction_too_low");
}

TEST(DoctorMessages, SglangCaptureFailedWrappingTheOom) {
  // cuda_graph_runner.py: raise Exception(f"Capture cuda graph failed: {e}\n{CUDA_GRAPH_CAPTURE_FAILED_MSG}"),
  // e a torch 2.5 OOM report (c10/cuda/CUDACachingAllocator.cpp wording).
  expect("[2025-09-01 11:00:00 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=1.02 GB\n"
         "[2025-09-01 11:00:09 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
         "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 79.19 GiB "
         "of which 301.06 MiB is free. Including non-PyTorch memory, this process has 78.88 GiB memory in use. Of the allocated memory "
         "76.30 GiB is allocated by PyTorch, with 120.00 MiB allocated in private pools (e.g., CUDA Graphs), and 1.21 GiB is reserved by "
         "PyTorch but unallocated.\n"
         "Possible solutions:\n"
         "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n",
         "sglang", "cuda_graph", "graph_capture_headroom|static_fraction_too_high");
}

TEST(DoctorMessages, SglangPrefillCaptureWrapperOfTheNewRunners) {
  // cuda_graph_runner/prefill_runner.py (2026): raise Exception(f"Capture prefill CUDA graph failed: {e}\n"
  // f"{PREFILL_CUDA_GRAPH_CAPTURE_FAILED_MSG}"), whose next line is "Fail when using backend: ... for prefill runner."
  expect("[2026-07-01 08:00:00 TP0] Capture target prefill CUDA graph begin. backend=breakable, bs=[1, 2, 4], avail mem=2.10 GB\n"
         "Exception: Capture prefill CUDA graph failed: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of "
         "139.81 GiB of which 1.02 GiB is free.\n"
         "Fail when using backend: breakable for prefill runner.\n",
         "sglang", "cuda_graph", "graph_capture_headroom|static_fraction_too_high");
}

TEST(DoctorMessages, SglangCaptureWrapperWithTheOomOnTheWrappedLine) {
  // The same wrapper pasted with the line broken after the colon: the OOM text on the next line is the
  // capture's (it was read as a non-memory capture failure before).
  Diagnosis d = doctor("[2025-09-01 11:00:00 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=0.95 GB\n"
                       "Exception: Capture cuda graph failed:\n"
                       "CUDA out of memory. Tried to allocate 694.00 MiB. GPU 4 has a total capacity of 94.97 GiB of which 247.44 MiB is free.\n",
                       {"--engine", "sglang"});
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_NE(d.cause, Cause::NotOom);
  EXPECT_TRUE(d.cause == Cause::GraphCaptureHeadroom || d.cause == Cause::StaticFractionTooHigh) << (d.cause ? name(*d.cause) : "");
}

TEST(DoctorMessages, SglangCaptureFailureSglangSaysIsNotMemory) {
  // cuda_graph_backend_utils/__init__.py cuda_graph_capture_failed_msg (2026): a non-OOM capture error gets
  // "This is not an out-of-memory error, so lowering --mem-fraction-static or --cuda-graph-max-bs-decode will not help."
  // The memory-words net must not turn it into an OOM.
  Diagnosis d = doctor("[2026-07-01 08:00:00 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=20.10 GB\n"
                       "Exception: Capture cuda graph failed: CUDA error: an illegal memory access was encountered\n"
                       "This is not an out-of-memory error, so lowering --mem-fraction-static or --cuda-graph-max-bs-decode will not help.\n",
                       {"--engine", "sglang"});
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_EQ(d.cause, Cause::NotOom);
}

// ---------------------------------------------------------------------------------------------
// vLLM

TEST(DoctorMessages, VllmNoAvailableMemoryForTheCacheBlocks) {
  // v1/core/kv_cache_utils.py check_enough_kv_cache_memory (research/vllm-trtllm-llamacpp-memory.md §5.3), 2026
  // form with the See-sentence; the Available line from gpu_worker.py.
  expect("(EngineCore_DP0 pid=211) INFO 03-02 10:00:01 [gpu_model_runner.py:2602] Model loading took 28.48 GiB and 12.1 seconds\n"
         "(EngineCore_DP0 pid=211) INFO 03-02 10:00:20 [gpu_worker.py:298] Available KV cache memory: -2.81 GiB\n"
         "(EngineCore_DP0 pid=211) ERROR 03-02 10:00:20 [core.py:708] ValueError: No available memory for the cache blocks. Try "
         "increasing `gpu_memory_utilization` when initializing the engine. See "
         "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.\n",
         "vllm", "kv_pool", "static_fraction_too_low|activation_peak");
}

TEST(DoctorMessages, VllmOneRequestAtMaxSeqLenDoesNotFit) {
  // kv_cache_utils.py (0.9.x "models's" typo), figures of a posted log (public code index id 28559968688):
  // "(40960), (10.00 GiB KV cache is needed, ... (1.25 GiB)", the estimate sentence given here.
  Diagnosis d = doctor(
      "ERROR 06-02 05:17:18 [core.py:387] ValueError: To serve at least one request with the models's max seq len (40960), (10.00 GiB "
      "KV cache is needed, which is larger than the available KV cache memory (1.25 GiB). Based on the available memory, the estimated "
      "maximum model length is 5120. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "kv_pool");
  EXPECT_EQ(d.cause, Cause::KvTooSmallForContext);
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes.front().flag, "--max-model-len");
  EXPECT_EQ(d.fixes.front().value, "5120");
}

TEST(DoctorMessages, VllmErrorInMemoryProfilingIsAnotherProcess) {
  // v1/worker/gpu_worker.py determine_available_memory: assert init free > free after profile, "Error in memory
  // profiling. Initial free memory {} GiB, current free memory {} GiB." (public code index id 57479429016)
  const std::string log =
      "(EngineCore_DP0 pid=77) INFO 05-11 12:00:01 [gpu_model_runner.py:1770] Model loading took 7.13 GiB and 4.2 seconds\n"
      "(EngineCore_DP0 pid=77) ERROR 05-11 12:00:09 [core.py:586] AssertionError: Error in memory profiling. Initial free memory "
      "14.31 GiB, current free memory 15.02 GiB. This happens when other processes sharing the same container release GPU memory "
      "while vLLM is profiling during initialization.\n";
  expect(log, "vllm", "kv_pool", "other_process");
  Diagnosis d = doctor(log, {"--engine", "vllm"});
  EXPECT_TRUE(d.fixes.empty()) << d.fixes.front().flag;  // no knob cures a measurement another process disturbed
}

TEST(DoctorMessages, VllmFreeMemoryOnStartupGetsTheUtilizationThatFits) {
  // gpu_worker.py init_device (§5.1): "Free memory on device (F/T GiB) on startup is less than desired GPU memory
  // utilization (u, R GiB)", figures of pytorch/pytorch#175666: (19.77/22.05 GiB) ... (0.9, 19.84 GiB).
  // Lowering the utilization is the cure, so it is not "not an OOM, memory flags will not help" (as it was read).
  const std::string log =
      "ERROR 02-10 09:00:00 [core.py:708] ValueError: Free memory on device (19.77/22.05 GiB) on startup is less than desired GPU "
      "memory utilization (0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n";
  expect(log, "vllm", "init", "other_process");
  Diagnosis d = doctor(log, {"--engine", "vllm"});
  ASSERT_EQ(d.fixes.size(), 1u);
  EXPECT_EQ(d.fixes[0].flag, "--gpu-memory-utilization");
  EXPECT_EQ(d.fixes[0].value, "0.89");  // floor(19.77 / 22.05 = 0.8966) to the hundredth
}

TEST(DoctorMessages, VllmPoolerWarmupOom) {
  // v1/worker/gpu_model_runner.py _dummy_pooler_run: "CUDA out of memory occurred when warming up pooler with {n}
  // dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine."
  expect("(EngineCore_DP0 pid=90) INFO 04-01 10:00:01 [gpu_model_runner.py:1770] Model loading took 1.10 GiB and 2.0 seconds\n"
         "(EngineCore_DP0 pid=90) ERROR 04-01 10:00:30 [core.py:586] RuntimeError: CUDA out of memory occurred when warming up pooler "
         "with 1024 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.\n",
         "vllm", "warmup", "activation_peak");
}

// ---------------------------------------------------------------------------------------------
// TensorRT-LLM

TEST(DoctorMessages, TrtllmExecutorOomWithoutItsComponentLine) {
  // _torch/pyexecutor/py_executor_creator.py _maybe_explain_if_oom, the excerpt cut before "The following component
  // could not be created": the KV sizing line before it places it (kvCacheManager.cpp's "Memory usage when calculating").
  expect("[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.10 GiB, available: 9.51 GiB\n"
         "[10/21/2025-09:07:21] [TRT-LLM] [E] Executor creation failed due to insufficient GPU memory.\n",
         "trtllm", "kv_pool", "static_fraction_too_high");
}

TEST(DoctorMessages, TensorrtAllocatorOutOfMemory) {
  // TensorRT's allocator (public code index id 1431734860, 2025-11): "Error Code 2: OutOfMemory (Requested size was
  // 71603093760 bytes.)" while a TensorRT engine's context is created after the weights.
  Diagnosis d = doctor("[11/07/2025-17:42:30] [TRT-LLM] [I] Loading weights concurrently: 100%\n"
                       "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 18.40 GiB for max tokens in paged KV cache (301056).\n"
                       "[11/07/2025-17:42:32] [TRT] [E] [myelinResourceManager.cpp::allocate::196] Error Code 2: OutOfMemory (Requested size "
                       "was 71603093760 bytes.)\n",
                       {"--engine", "trtllm"});
  EXPECT_NE(d.cause, Cause::NotOom);
  EXPECT_NE(d.cause, Cause::NoErrorInLog);  // what the line read as before it was recognised
  EXPECT_NE(d.stage, "none");
  LogScan scan = scan_log_text("[TRT] [E] [myelinResourceManager.cpp::allocate::196] Error Code 2: OutOfMemory (Requested size was "
                               "71603093760 bytes.)\n",
                               "t.log");
  ASSERT_EQ(scan.ooms.size(), 1u);
  EXPECT_EQ(scan.ooms[0].form, "tensorrt");
  EXPECT_EQ(scan.ooms[0].request, 71603093760);
}

// ---------------------------------------------------------------------------------------------
// PyTorch, NCCL, cuBLAS, and how logs are pasted

TEST(DoctorMessages, NcclOutOfMemoryDuringInitIsNotNotOom) {
  // torch ProcessGroupNCCL's DistBackendError text with NCCL >= 2.19's "Cuda failure %d '%s'" (src/include/checks.h),
  // and alloc.h's "Failed to CUDA calloc %ld bytes" warning, during SGLang's init_torch_distributed.
  const std::string log =
      "[2025-08-01 10:00:00 TP0] Init torch distributed begin.\n"
      "node1:1234:1234 [0] include/alloc.h:124 NCCL WARN Failed to CUDA calloc 10485760 bytes\n"
      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda "
      "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
      "ncclUnhandledCudaError: Call to CUDA function failed.\n"
      "Last error:\n"
      "Cuda failure 2 'out of memory'\n";
  Diagnosis d = doctor(log, {"--engine", "sglang"});
  EXPECT_EQ(d.stage, "init");
  EXPECT_EQ(d.cause, Cause::OtherProcess);
  EXPECT_TRUE(d.fixes.empty());
  EXPECT_EQ(cli_exit(log, "sglang"), kExitFails);
  LogScan scan = scan_log_text(log, "n.log");
  ASSERT_GE(scan.ooms.size(), 2u);
  EXPECT_EQ(scan.ooms[0].form, "nccl");
  EXPECT_EQ(scan.ooms[0].request, 10485760);
}

TEST(DoctorMessages, LoneNcclOutOfMemoryIsGuessedAtInit) {
  // NCCL's out-of-memory with no startup line: NCCL allocates its buffers when the communicators are created
  // (include/alloc.h "Failed to CUDA calloc"; checks.h before 2.19: "Cuda failure 'out of memory'"; torch's
  // ncclSystemError text), which every engine does at init. Before 2026-12-03 these were guessed as weights.
  for (const char* log : {"node1:123:456 [0] include/alloc.h:124 NCCL WARN Cuda failure 'out of memory'\n",
                          "RuntimeError: NCCL error: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
                          "device error.\nLast error:\nFailed to CUDA calloc 10485760 bytes\n"}) {
    SCOPED_TRACE(log);
    Diagnosis d = doctor(log, {"--engine", "vllm"});
    EXPECT_EQ(d.stage, "init");
    EXPECT_EQ(d.stage_basis, StageBasis::Guess);
    EXPECT_NE(d.cause, Cause::NotOom);
    EXPECT_EQ(cli_exit(log, "vllm"), kExitFails);
  }
}

TEST(DoctorMessages, PytorchCudaErrorIsNotReadAsLlamaCpp) {
  // PyTorch's C10_CUDA_CHECK text raised as a Python exception ("RuntimeError: CUDA error: out of memory" +
  // its "CUDA kernel errors might be asynchronously reported" note); llama.cpp's CUDA_CHECK prints the same
  // words bare. Before 2026-12-03 the vLLM log below got llama.cpp's --ubatch-size fix.
  const std::string log =
      "INFO 06-01 10:00:00 [gpu_model_runner.py:1770] Model loading took 14.99 GiB and 6.1 seconds\n"
      "(VllmWorker rank=0 pid=5) INFO 06-01 10:00:06 [gpu_model_runner.py:2000] Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   4%|\n"
      "RuntimeError: CUDA error: out of memory\n"
      "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n";
  LogScan scan = scan_log_text(log, "t.log");
  EXPECT_EQ(scan.engine, LogEngine::VLLM);
  Diagnosis d = doctor(log, {"--engine", "vllm"});
  EXPECT_EQ(d.engine, "vllm");
  EXPECT_EQ(d.stage, "cuda_graph");
  for (const auto& f : d.fixes) EXPECT_NE(f.flag, "--ubatch-size");
  // a bare one-line paste, the engine named by the user: theirs wins over the log's reading
  Diagnosis bare = doctor("RuntimeError: CUDA error: out of memory\n", {"--engine", "vllm"});
  EXPECT_EQ(bare.engine, "vllm");
  EXPECT_NE(bare.cause, Cause::NotOom);
  for (const auto& f : bare.fixes) EXPECT_NE(f.flag, "--ubatch-size");
}

TEST(DoctorMessages, LibraryAllocationFailuresAreOoms) {
  // cuBLAS (torch's CUDA check: "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"), the
  // expandable-segments driver check ("CUDA driver error: out of memory") and the cudaMallocAsync backend
  // ("Allocation on device 0 would exceed allowed memory. (out of memory)"), each inside vLLM's profile run.
  for (const char* err : {"RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
                          "torch.OutOfMemoryError: CUDA driver error: out of memory",
                          "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)",
                          "RuntimeError: HIP error: hipErrorOutOfMemory"}) {
    SCOPED_TRACE(err);
    const std::string log = std::string("INFO 06-01 10:00:00 [gpu_model_runner.py:1770] Model loading took 14.99 GiB and 6.1 seconds\n") +
                            "INFO 06-01 10:00:05 [gpu_worker.py:250] Available KV cache memory: 50.10 GiB\n" +
                            "INFO 06-01 10:00:05 [kv_cache_utils.py:716] GPU KV cache size: 410,400 tokens\n" +
                            "(VllmWorker rank=0 pid=5) INFO 06-01 10:00:06 [gpu_model_runner.py:2000] Capturing CUDA graphs (mixed "
                            "prefill-decode, PIECEWISE):   4%|\n" +
                            err + "\n";
    Diagnosis d = doctor(log, {"--engine", "vllm"});
    EXPECT_EQ(d.stage, "cuda_graph");
    EXPECT_TRUE(d.cause == Cause::GraphCaptureHeadroom || d.cause == Cause::StaticFractionTooHigh) << (d.cause ? name(*d.cause) : "");
  }
}

TEST(DoctorMessages, ExceptionSayingMemoryRanOutIsAnOom) {
  // A wrapper's own words for it (the safety net, log_torch.cpp): e.g. TensorRT-LLM's NCCL variant "Executor creation
  // failed with an error which might indicate insufficient GPU memory." is read by its reader; an unknown one
  // ("RuntimeError: Not enough memory to allocate the workspace") must not read as not_oom either.
  Diagnosis d = doctor("[2025-06-01 10:00:00 TP0] Load weight end. type=LlamaForCausalLM, avail mem=20.00 GB, mem usage=50.00 GB.\n"
                       "[2025-06-01 10:00:00 TP0] KV Cache is allocated. #tokens: 100000, K size: 6.00 GB, V size: 6.00 GB\n"
                       "[2025-06-01 10:00:00 TP0] Memory pool end. avail mem=7.50 GB\n"
                       "RuntimeError: Not enough memory to allocate the workspace\n",
                       {"--engine", "sglang"});
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_NE(d.cause, Cause::NotOom);
}

TEST(DoctorMessages, WrappedTorchOomReportIsJoined) {
  // The report DESIGN.md quotes, wrapped as an editor wraps a paste: its figures come from the continuation lines.
  LogScan scan = scan_log_text(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 694.00 MiB. GPU 4 has a total\n"
      "    capacity of 94.97 GiB of which 247.44 MiB is free. Including non-PyTorch memory, this process has 94.72 GiB memory in use.\n"
      "    Of the allocated memory 87.43 GiB is allocated by PyTorch, and\n"
      "    6.44 GiB is reserved by PyTorch but unallocated.\n",
      "w.log");
  ASSERT_EQ(scan.ooms.size(), 1u);
  const LogOom& o = scan.ooms[0];
  EXPECT_EQ(o.device, 4);
  EXPECT_EQ(o.request, int64_t{694} << 20);
  EXPECT_NEAR(static_cast<double>(o.total) / (1 << 30), 94.97, 0.005);
  EXPECT_NEAR(static_cast<double>(o.free) / (1 << 20), 247.44, 0.01);
  EXPECT_NEAR(static_cast<double>(o.reserved_unallocated) / (1 << 30), 6.44, 0.005);
  EXPECT_FALSE(o.truncated);
}

TEST(DoctorMessages, AnsiTimestampedMarkdownPasteReadsLikeThePlainLog) {
  // The seed's capture crash (DESIGN.md) as a GitHub comment: a "> " quote around a ```text fence, each line with a
  // kubectl --timestamps prefix and SGLang's colours (TP prefix in cyan, the error in red).
  const std::string plain =
      "[2026-01-28 23:59:40 TP4] Load weight begin. avail mem=93.60 GB\n"
      "[2026-01-28 23:59:41 TP4] Load weight end. type=GlmMoeDsaForCausalLM, avail mem=43.43 GB, mem usage=50.17 GB.\n"
      "[2026-01-28 23:59:42 TP4] KV Cache is allocated. #tokens: 425000, KV size: 43.00 GB\n"
      "[2026-01-28 23:59:42 TP4] Memory pool end. avail mem=1.09 GB\n"
      "[2026-01-28 23:59:42 TP4] Capture cuda graph begin. This can take up to several minutes. avail mem=0.96 GB\n"
      "[2026-01-28 23:59:50 TP4] Scheduler hit an exception: Traceback (most recent call last):\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 694.00 MiB. GPU 4 has a total capacity of 94.97 GiB of which "
      "247.44 MiB is free. Including non-PyTorch memory, this process has 94.72 GiB memory in use. Of the allocated memory 87.43 GiB "
      "is allocated by PyTorch, and 6.44 GiB is reserved by PyTorch but unallocated.\n";
  std::string pasted = "> ```text\n";
  std::istringstream in(plain);
  for (std::string line; std::getline(in, line);) {
    const size_t close = line.find(']');
    std::string coloured = line[0] == '[' ? "\x1b[36m" + line.substr(0, close + 1) + "\x1b[0m" + line.substr(close + 1)
                                          : "\x1b[31m" + line + "\x1b[0m";
    pasted += "> 2026-01-28T23:59:50.123456789Z " + coloured + "\n";
  }
  pasted += "> ```\n";
  Diagnosis a = doctor(plain, {"--engine", "sglang"});
  Diagnosis b = doctor(pasted, {"--engine", "sglang"});
  EXPECT_EQ(a.stage, "cuda_graph");
  EXPECT_EQ(b.stage, a.stage);
  EXPECT_EQ(b.cause, a.cause);
  EXPECT_EQ(b.stage_basis, a.stage_basis);
  ASSERT_FALSE(b.fixes.empty());
  ASSERT_FALSE(a.fixes.empty());
  EXPECT_EQ(b.fixes.front().flag, a.fixes.front().flag);
  EXPECT_EQ(b.fixes.front().value, a.fixes.front().value);
  EXPECT_EQ(cli_exit(pasted, "sglang"), kExitFails);
}

TEST(DoctorMessages, FailureWithoutMemoryMessageIsPlacedByItsLastStageAndSaysSo) {
  // A start-up that stops with a non-memory error right after SGLang's pool line: placed at the stage in progress
  // (capture), the explanation saying the failure is not a memory one.
  Diagnosis d = doctor("[2025-06-01 10:00:00 TP0] Memory pool end. avail mem=7.50 GB\n"
                       "[2025-06-01 10:00:01 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=7.40 GB\n"
                       "[2025-06-01 10:00:02 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
                       "AttributeError: 'NoneType' object has no attribute 'shape'\n",
                       {"--engine", "sglang"});
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_EQ(d.cause, Cause::NotOom);
  EXPECT_NE(d.explanation.find("not an out-of-memory error"), std::string::npos) << d.explanation;
  EXPECT_NE(d.explanation.find("placed in cuda_graph, the stage in progress at the log's last startup line before it (line 2)"),
            std::string::npos)
      << d.explanation;
}
