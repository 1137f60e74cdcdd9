// doctor on logs with no error line: one that stops inside a stage (its begin line, and neither
// its end line nor a later stage's line after it) names that stage; one that stops between two
// stages is placed by a guess (stage_basis "guess", doctor_place.cpp): runtime once the KV pool was
// shown, else the stage in progress; one that ends with a finished start is "none".
// Line formats, from the engines' sources:
//   SGLang model_runner.py        "Load weight begin. avail mem=X GB" / "Load weight end. type=.., avail mem=X GB, mem usage=Y GB."
//                                 "Memory pool end. avail mem=X GB"
//   SGLang cuda_graph_runner.py   "Capture cuda graph begin. This can take up to several minutes. avail mem=X GB"
//                                 "Capture cuda graph end. Time elapsed: S s. mem usage=X GB. avail mem=Y GB."
//   SGLang http_server.py         "The server is fired up and ready to roll!"
//   vLLM/SGLang weight_utils.py   tqdm "Loading safetensors checkpoint shards:  40% Completed | 2/5 [..]"
//   vLLM gpu_model_runner.py      "Starting to load model <name>...", "Model loading took X GiB and S seconds",
//                                 tqdm "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  45%|..."
//   vLLM default_loader.py        "Loading weights took S seconds"
//   vLLM gpu_worker.py            "Available KV cache memory: X GiB"; kv_cache_utils.py "GPU KV cache size: N tokens"
//   vLLM api_server.py            "Starting vLLM API server 0 on http://0.0.0.0:8000"
//   vLLM V0 worker.py             "the current vLLM instance can use total_gpu_memory (T) x gpu_memory_utilization (u) = R"
//   vLLM V0 model_runner.py       "Capturing cudagraphs for decoding. This may lead to unexpected consequences ..."
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
  return diagnose(scan_log_text(log, "stop.log"), Args::parse(args));
}
}  // namespace

TEST(DoctorStop, SglangInsideCaptureNamesCapture) {
  const std::string log =
      "[2025-06-01 10:00:01 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=61.20 GB, mem usage=15.27 GB.\n"
      "[2025-06-01 10:00:02 TP0] KV Cache is allocated. #tokens: 413207, K size: 25.22 GB, V size: 25.22 GB\n"
      "[2025-06-01 10:00:02 TP0] Memory pool end. avail mem=10.42 GB\n"
      "[2025-06-01 10:00:03 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=10.30 GB\n";
  LogScan scan = scan_log_text(log, "stop.log");
  ASSERT_EQ(scan.ranks.size(), 1u);
  EXPECT_EQ(scan.ranks[0].stage, "cuda_graph");
  EXPECT_TRUE(scan.ranks[0].stage_open);
  Diagnosis d = diagnose(scan, Args::parse({"--engine", "sglang"}));
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_EQ(d.cause, Cause::NoErrorInLog);
  EXPECT_NE(d.explanation.find("stops during cuda_graph (line 4) without an error line"), std::string::npos) << d.explanation;
  EXPECT_NE(d.explanation.find("OOM killer"), std::string::npos);
  // the begin line is among the evidence
  bool begin = false;
  for (const auto& e : d.evidence) begin = begin || e.line == 4;
  EXPECT_TRUE(begin);
}

TEST(DoctorStop, SglangInsideWeightLoading) {
  Diagnosis d = doctor(
      "[2025-06-01 10:00:00 TP0] Load weight begin. avail mem=78.50 GB\n"
      "Loading safetensors checkpoint shards:  40% Completed | 2/5 [00:03<00:04,  1.52s/it]\n",
      {"--engine", "sglang"});
  EXPECT_EQ(d.stage, "weights");
  EXPECT_EQ(d.cause, Cause::NoErrorInLog);
}

TEST(DoctorStop, SglangBetweenStagesIsAGuess) {
  // After "Load weight end" SGLang sizes the pool with no line of its own: the log stops
  // between stages, nothing places a failure; the pool, next, is the guess.
  Diagnosis d = doctor(
      "[2025-06-01 10:00:01 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=61.20 GB, mem usage=15.27 GB.\n",
      {"--engine", "sglang"});
  EXPECT_EQ(d.stage, "kv_pool");
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);
  EXPECT_EQ(d.reached_stage, "kv_pool");
  EXPECT_EQ(d.cause, Cause::NoErrorInLog);
  // after the capture's end line: between capture and warm-up
  d = doctor(
      "[2025-06-01 10:00:03 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=10.30 GB\n"
      "[2025-06-01 10:00:40 TP0] Capture cuda graph end. Time elapsed: 37.10 s. mem usage=1.02 GB. avail mem=9.28 GB.\n",
      {"--engine", "sglang"});
  EXPECT_EQ(d.stage, "runtime");  // past the pools and capture, no error: a later failure
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);
  EXPECT_EQ(d.reached_stage, "warmup");
}

TEST(DoctorStop, AnotherRanksLaterLineMeansBetween) {
  // TP1 began capture, TP0 already ended it: the furthest rank is between stages.
  Diagnosis d = doctor(
      "[2025-06-01 10:00:03 TP1] Capture cuda graph begin. This can take up to several minutes. avail mem=10.30 GB\n"
      "[2025-06-01 10:00:03 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=10.31 GB\n"
      "[2025-06-01 10:00:40 TP0] Capture cuda graph end. Time elapsed: 37.10 s. mem usage=1.02 GB. avail mem=9.28 GB.\n",
      {"--engine", "sglang", "--tp", "2"});
  EXPECT_EQ(d.stage, "runtime");
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);
}

TEST(DoctorStop, VllmV1InsideCaptureAndInsideLoading) {
  Diagnosis d = doctor(
      "(EngineCore_DP0 pid=2201) INFO 09-02 11:20:31 [gpu_worker.py:298] Available KV cache memory: 35.68 GiB\n"
      "(EngineCore_DP0 pid=2201) INFO 09-02 11:20:31 [kv_cache_utils.py:1087] GPU KV cache size: 519,648 tokens\n"
      "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  45%|████▌     | 30/67 [00:08<00:10,  3.55it/s]\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_EQ(d.cause, Cause::NoErrorInLog);
  d = doctor(
      "(EngineCore_DP0 pid=2201) INFO 09-02 11:18:02 [gpu_model_runner.py:2338] Starting to load model Qwen/Qwen3-32B...\n"
      "Loading safetensors checkpoint shards:  53% Completed | 9/17 [00:21<00:19,  2.43s/it]\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "weights");
  // the weights are in: "Loading weights took" then "Model loading took" end the stage
  d = doctor(
      "(EngineCore_DP0 pid=2201) INFO 09-02 11:18:02 [gpu_model_runner.py:2338] Starting to load model Qwen/Qwen3-32B...\n"
      "(EngineCore_DP0 pid=2201) INFO 09-02 11:18:45 [default_loader.py:267] Loading weights took 42.80 seconds\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "weights");  // in progress after "Loading weights took": a guess
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);
  EXPECT_EQ(d.reached_stage, "weights");
}

TEST(DoctorStop, VllmHealthyStartIsNone) {
  Diagnosis d = doctor(
      "(EngineCore_DP0 pid=2201) INFO 09-02 11:20:31 [gpu_worker.py:298] Available KV cache memory: 35.68 GiB\n"
      "(EngineCore_DP0 pid=2201) INFO 09-02 11:20:31 [kv_cache_utils.py:1087] GPU KV cache size: 519,648 tokens\n"
      "(APIServer pid=2100) INFO 09-02 11:21:05 [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8000\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "none");
  EXPECT_EQ(d.cause, Cause::NotOom);
}

TEST(DoctorStop, VllmV0CaptureWithNoRoomOutsideTheBudgetIsAMemoryCause) {
  // The lines of vllm-project/vllm#15598 (corpus vllm-023, Ray V0): 0.98 x 44.53 GiB leaves
  // (1 - 0.98) x 44.53 = 0.89 GiB outside vLLM's budget, where capture runs.
  Diagnosis d = doctor(
      "(RayWorkerWrapper pid=1463574, ip=192.168.10.60) INFO 03-27 10:29:01 [worker.py:267] the current vLLM instance can use "
      "total_gpu_memory (44.53GiB) x gpu_memory_utilization (0.98) = 43.64GiB [repeated 30x across cluster]\n"
      "(RayWorkerWrapper pid=1861983) INFO 03-27 10:29:03 [model_runner.py:1442] Capturing cudagraphs for decoding. This may lead "
      "to unexpected consequences if the model is not static.\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_EQ(d.cause, Cause::StaticFractionTooHigh);
  bool outside = false;
  for (const auto& a : d.arithmetic) outside = outside || a.find("= 0.89 GiB") != std::string::npos;
  EXPECT_TRUE(outside);
  // the same stop at 0.90 (4.45 GiB outside): no memory cause in the numbers
  d = doctor(
      "(RayWorkerWrapper pid=1463574) INFO 03-27 10:29:01 [worker.py:267] the current vLLM instance can use total_gpu_memory "
      "(44.53GiB) x gpu_memory_utilization (0.90) = 40.08GiB\n"
      "(RayWorkerWrapper pid=1463574) INFO 03-27 10:29:03 [model_runner.py:1442] Capturing cudagraphs for decoding. This may lead "
      "to unexpected consequences if the model is not static.\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_EQ(d.cause, Cause::NoErrorInLog);
}

TEST(DoctorFrames, TrtllmCaptureFramesNameCapture) {
  // A TensorRT-LLM PyTorch-backend OOM whose traceback runs through model_engine.py warmup ->
  // _capture_generation_cuda_graphs (function names from tensorrt_llm/_torch/pyexecutor/
  // model_engine.py; the line numbers and figures are illustrative): capture, not warm-up.
  Diagnosis d = doctor(
      "Traceback (most recent call last):\n"
      "  File \"/usr/local/lib/python3.12/dist-packages/tensorrt_llm/_torch/pyexecutor/model_engine.py\", line 812, in warmup\n"
      "    self._capture_generation_cuda_graphs(resource_manager)\n"
      "  File \"/usr/local/lib/python3.12/dist-packages/tensorrt_llm/_torch/pyexecutor/model_engine.py\", line 1034, in "
      "_capture_generation_cuda_graphs\n"
      "    self.forward(batch, new_tensors_device=None, resource_manager=resource_manager)\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.19 GiB of which "
      "1.10 GiB is free. Including non-PyTorch memory, this process has 78.08 GiB memory in use. Of the allocated memory 74.20 GiB "
      "is allocated by PyTorch, and 2.10 GiB is reserved by PyTorch but unallocated.\n",
      {"--engine", "trtllm"});
  EXPECT_EQ(d.stage, "cuda_graph");
}

TEST(DoctorFrames, CutTracebackNamesTheCalledStage) {
  // A V1 worker traceback cut after its source line "self.model_runner.capture_model()"
  // (gpu_worker.py compile_or_warm_up_model): the call names the stage the frames alone do not.
  LogScan scan = scan_log_text(
      "(Worker_TP0 pid=99) ERROR 04-09 20:31:10 [multiproc_executor.py:949] WorkerProc hit an exception.\n"
      "(Worker_TP0 pid=99) ERROR 04-09 20:31:10 [multiproc_executor.py:949] Traceback (most recent call last):\n"
      "(Worker_TP0 pid=99) ERROR 04-09 20:31:10 [multiproc_executor.py:949]   File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/"
      "worker/gpu_worker.py\", line 588, in compile_or_warm_up_model\n"
      "(Worker_TP0 pid=99) ERROR 04-09 20:31:10 [multiproc_executor.py:949]     cuda_graph_memory_bytes = self.model_runner.capture_model()\n",
      "cut-tb");
  ASSERT_EQ(scan.tracebacks.size(), 1u);
  EXPECT_EQ(scan.tracebacks[0].stage, "cuda_graph");
  EXPECT_EQ(diagnose(scan, Args::parse({"--engine", "vllm"})).stage, "cuda_graph");
}

TEST(DoctorFrames, FailedWorkerMethodNamesItsStage) {
  // vLLM V0 multiproc_worker_utils.py: "Exception in worker ... while processing method init_device".
  Diagnosis d = doctor(
      "(VllmWorkerProcess pid=761) ERROR 07-24 08:26:01 multiproc_worker_utils.py:226] Exception in worker VllmWorkerProcess while "
      "processing method load_model: CUDA error: an illegal memory access was encountered, Traceback (most recent call last):\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "weights");
  EXPECT_EQ(d.cause, Cause::NotOom);
}

TEST(DoctorFrames, EngineCoreInitializationFailedAfterKvSizing) {
  // The API server's message (vllm/v1/engine/utils.py wait_for_engine_startup) right after the
  // worker sized its KV cache: the engine died at KV sizing.
  Diagnosis d = doctor(
      "(EngineCore_DP0 pid=2201) INFO 09-02 11:20:31 [gpu_worker.py:298] Available KV cache memory: 1.20 GiB\n"
      "(EngineCore_DP0 pid=2201) INFO 09-02 11:20:31 [kv_cache_utils.py:1087] GPU KV cache size: 9,808 tokens\n"
      "(APIServer pid=2100) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "kv_pool");
}

TEST(DoctorStop, TracebackThatNothingPlacesIsNotAHealthyStart) {
  // Frames of no known stage and no exception line (a cut excerpt): a failure, place unknown.
  Diagnosis d = doctor(
      "Traceback (most recent call last):\n"
      "  File \"/opt/app/serve.py\", line 12, in main\n"
      "    run()\n",
      {"--engine", "sglang"});
  EXPECT_EQ(d.stage, "init");  // no startup line: the first stage, a guess
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);
  EXPECT_EQ(d.cause, Cause::NoErrorInLog);
}

TEST(DoctorStop, V0ErrorWhileCapturingAfterTheWeightsIsCapture) {
  // V0 lines as vllm-project/vllm#7593 printed them, then a worker's ERROR line cut by the
  // excerpt (illustrative). vLLM's post-weights profile run is labelled "warmup", which orders
  // after capture; the error came while capture was running, and capture is the stage.
  Diagnosis d = doctor(
      "INFO 08-19 07:51:03 model_runner.py:732] Loading model weights took 2.3463 GB\n"
      "INFO 08-19 07:51:08 distributed_gpu_executor.py:56] # GPU blocks: 22982, # CPU blocks: 6241\n"
      "(VllmWorkerProcess pid=13109) INFO 08-19 07:51:12 model_runner.py:1024] Capturing the model for CUDA graphs. This may "
      "lead to unexpected consequences if the model is not static.\n"
      "(VllmWorkerProcess pid=13109) ERROR 08-19 07:51:20 multiproc_worker_utils.py:226] Exception in worker VllmWorkerProcess "
      "while proc\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "cuda_graph");
  // without the ERROR line the log stops inside capture, and capture is how far it got
  d = doctor(
      "INFO 08-19 07:51:03 model_runner.py:732] Loading model weights took 2.3463 GB\n"
      "(VllmWorkerProcess pid=13109) INFO 08-19 07:51:12 model_runner.py:1024] Capturing the model for CUDA graphs. This may "
      "lead to unexpected consequences if the model is not static.\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_EQ(d.reached_stage, "cuda_graph");
}

TEST(DoctorStop, ExitCodeOneOnlyWhenAStageIsNamed) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "headroom_doctor_stop_test";
  fs::create_directories(dir);
  const std::string inside = (dir / "inside.log").string(), between = (dir / "between.log").string();
  std::ofstream(inside) << "[2025-06-01 10:00:00 TP0] Load weight begin. avail mem=78.50 GB\n";
  std::ofstream(between) << "[2025-06-01 10:00:02 TP0] Memory pool end. avail mem=10.42 GB\n";
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"doctor", inside, "--engine", "sglang"}, out, err), kExitFails) << err.str();
  EXPECT_EQ(run_cli({"doctor", between, "--engine", "sglang"}, out, err), kExitOk) << err.str();
  fs::remove_all(dir);
}

TEST(DoctorStop, EnvironmentBeforeTheLaunchCommandIsPartOfTheDeployment) {
  // "NAME=VALUE vllm serve ..." (how threads paste their launch line): the variables are read as
  // --env for the forecast (the fix here is eager mode, so the graph-estimate switch does not
  // show; VllmEnv tests pin it) and the command to paste sets them again; the model positional
  // after them is still the model.
  const std::string log =
      "$ VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 NCCL_P2P_DISABLE=1 vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.95 --max-model-len 32768\n"
      "(EngineCore pid=4108) INFO 05-28 08:00:26 [gpu_worker.py:462] Available KV cache memory: 60.37 GiB\n"
      "(EngineCore pid=4108) ERROR 05-28 08:00:40 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
      "GPU 0 has a total capacity of 79.19 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.16 GiB memory in use. "
      "Of the allocated memory 76.10 GiB is allocated by PyTorch, with 1.20 GiB allocated in private pools (e.g., CUDA Graphs), and 0.50 GiB is "
      "reserved by PyTorch but unallocated.\n";
  Diagnosis dx = doctor(log, {"--gpu", "h100"});
  EXPECT_NE(dx.command.find("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 vllm serve Qwen/Qwen3-8B"), std::string::npos) << dx.command;
  EXPECT_NE(dx.command.find("NCCL_P2P_DISABLE=1 "), std::string::npos) << dx.command;
  ASSERT_TRUE(dx.forecast_after_fix.has_value());
  bool noted = false;  // the variable the vLLM model does not read is said, so the rest reached the plan too
  for (const auto& n : dx.forecast_after_fix->notes) noted = noted || n == "environment NCCL_P2P_DISABLE=1 is not modelled: the forecast is the same as without it";
  EXPECT_TRUE(noted);
}

TEST(DoctorFrames, IndentedSourceLineWithoutItsTracebackHeader) {
  // vllm#17469 (0.8.5, Qwen3-30B-A3B on 4 x A10, docker compose): the excerpt keeps the worker's
  // "WorkerProc hit an exception." and the indented source line of the frame that failed, not the
  // "Traceback" header. The indentation sits between the vLLM prefix and the body.
  Diagnosis d = doctor(
      "qwen3-1  | (VllmWorker rank=0 pid=105) INFO 04-29 01:07:41 [gpu_model_runner.py:1347] Model loading took 14.2474 GiB and 558.868858 seconds\n"
      "qwen3-1  | INFO 04-29 01:09:49 [kv_cache_utils.py:634] GPU KV cache size: 198,784 tokens\n"
      "qwen3-1  | (VllmWorker rank=1 pid=106) ERROR 04-29 01:10:12 [multiproc_executor.py:470] WorkerProc hit an exception.\n"
      "qwen3-1  | (VllmWorker rank=1 pid=106) ERROR 04-29 01:10:12 [multiproc_executor.py:470]     self.model_runner.capture_model()\n",
      {"--engine", "vllm"});
  EXPECT_EQ(d.stage, "cuda_graph");  // was "warmup": the source line was not seen as a frame
}

TEST(DoctorStop, KvAllocationFailureNamesEachEnginesPoolCap) {
  // A cudaMalloc failure right after the pool was sized (extra xtrt-026, TensorRT-LLM 1.2.1 on a
  // 5.67 GiB RTX 3050): the cure caps the pool, in the engine's own spelling -- TensorRT-LLM's
  // KvCacheConfig max_tokens / max_gpu_total_bytes, not SGLang's --max-total-tokens.
  const std::string trt =
      "Memory usage when calculating max tokens in paged kv cache: total: 5.67 GiB, available: 0.03 GiB\n"
      "RuntimeError: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMalloc(ptr, n): out of memory\n";
  Diagnosis d = doctor(trt, {"--engine", "trtllm"});
  EXPECT_EQ(d.stage, "kv_pool");
  EXPECT_EQ(d.cause, Cause::StaticFractionTooHigh);
  EXPECT_NE(d.explanation.find("cap the pool (--max_tokens / --max_gpu_total_bytes)"), std::string::npos) << d.explanation;
  EXPECT_EQ(d.explanation.find("--max-total-tokens"), std::string::npos) << d.explanation;
}
