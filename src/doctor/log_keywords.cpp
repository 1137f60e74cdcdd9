// Keyword prefilter for the log readers: one Aho-Corasick pass per line (case-insensitive,
// byte classes to keep the table small) decides whether any reader needs to look at the line.
// Request logs (decode batches, HTTP access lines, throughput metrics) contain none of these,
// so a gigabyte of them costs one table walk per byte.
#include <array>
#include <mutex>
#include <vector>

#include "doctor/log_parse.h"

namespace headroom::logscan_detail {
namespace {

struct KwText {
  Kw kw;
  const char* text;  // lower case
};

// Each keyword is the shortest distinctive part of a line some reader parses.
constexpr KwText kKeywords[] = {
    // SGLang (python/sglang/srt/model_executor/model_runner.py, mem_cache/, cuda_graph_runner.py,
    // managers/scheduler.py)
    {kSglInitBegin, "init torch distributed begin"},
    {kSglInitEnd, "init torch distributed ends"},
    {kSglLoadBegin, "load weight begin"},
    {kSglLoadEnd, "load weight end"},
    {kSglKvAlloc, "kv cache is allocated"},
    {kSglPoolUsage, "pool mem usage"},
    {kSglPoolEnd, "memory pool end"},
    {kSglGraphBegin, "cuda graph begin"},
    {kSglGraphEnd, "cuda graph end"},
    {kSglGraphBs, "capture cuda graph bs"},
    {kSglCapturing, "capturing batches"},
    {kSglSummary, "max_total_num_tokens="},
    {kSglMemProfiling, "memory profiling"},
    {kSglNotEnough, "not enough memory"},
    {kSglNoKv, "leave no gpu memory"},
    {kSglCaptureFailed, "capture cuda graph failed"},
    // the other capture wrappers (docs/doctor-messages.md): "Capture prefill CUDA graph failed: ...",
    // "Capture extend cuda graph failed: ...", "Breakable CUDA graph failed.", 2026 "CUDA graph capture failed."
    {kSglGraphFailed, "cuda graph failed"},
    {kSglGraphFailed, "cuda graph capture failed"},
    // mem_cache / model_runner_kv_cache_mixin.py handle_max_mamba_cache (2026): "Not enough GPU memory for
    // hybrid (mamba/linear-attention) state cache. Computed max_mamba_cache_size=-28 (total_rest_memory=-7.96 GB, ...)"
    {kSglMambaNoMem, "not enough gpu memory for hybrid"},
    // managers/tp_worker.py (2024 - 2026) after the pool: assert max_running_requests > 0, "max_running_request is
    // zero"; assert max_req_len > 0 and max_req_input_len > 0, "Memory pool size is too small" (idx:74498457)
    {kSglPoolTooSmall, "memory pool size is too small"},
    {kSglPoolTooSmall, "max_running_request is zero"},
    {kSglProfiled, "larger than the profiled value"},
    {kSglUnbalanced, "memory capacity is unbalanced"},
    {kSglPoolFull, "kv cache pool is full"},
    {kSglReady, "ready to roll"},
    {kSglSchedExc, "scheduler hit an exception"},
    {kServerArgs, "serverargs("},
    // an engine that was serving and died: vLLM V0 MQLLMEngineDeadError "Engine loop is not running",
    // AsyncLLMEngine "Background loop has errored already", V1 EngineDeadError
    {kEngineDead, "engine loop is not running"},
    {kEngineDead, "background loop has errored"},
    {kEngineDead, "enginedeaderror"},
    // vLLM (vllm/v1/worker/gpu_worker.py, gpu_model_runner.py, v1/core/kv_cache_utils.py, V0 worker.py)
    {kVModelLoading, "model loading took"},
    {kVUsingV2Runner, "using v2 model runner"},  // Model Runner V2's startup line (vLLM blog, 2026-08-31)
    {kVLoadingWeights, "loading model weights took"},
    {kVAvailKv, "available kv cache memory"},
    {kVKvSize, "gpu kv cache size"},
    {kVConcurrency, "maximum concurrency for"},
    {kVGraphFinished, "graph capturing finished"},
    {kVGraphEstimate, "estimated cuda graph memory"},
    {kVGraphPool, "cuda graph pool memory"},
    {kVFreeOnDevice, "free memory on device"},
    {kVInitialFree, "initial free memory"},
    {kVFreeAfter, "free memory after profiling"},
    {kVProfTakes, "memory profiling takes"},
    {kVInstanceCanUse, "instance can use total_gpu_memory"},
    {kVWeightsTake, "model weights take"},
    {kVProfResults, "memory profiling results"},
    {kVGpuBlocks, "# gpu blocks"},
    // V1 compilation/monitor.py "torch.compile takes X s in total": the first (profile) run after the weights
    {kVCompileTakes, "torch.compile takes"},
    {kVCudaBlocks, "# cuda blocks"},
    {kVToServe, "to serve at least one request"},
    // vLLM config/model.py and SGLang model_config.py: a context longer than the model allows
    {kContextOverDerived, "greater than the derived"},
    {kVKvNeeded, "kv cache is needed"},
    {kVEstMaxLen, "estimated maximum model length"},
    {kVNoBlocks, "no available memory for the cache blocks"},
    {kVStoredInKv, "can be stored in kv cache"},
    {kVSamplerWarmup, "warming up sampler"},
    {kVSamplerWarmup, "warming up pooler"},  // the pooling models' analogue (gpu_model_runner.py _dummy_pooler_run)
    // V0 worker.py / V1 gpu_worker.py determine_available_memory assertion: "Error in memory profiling.
    // Initial free memory X GiB, current free memory Y GiB." (another process freed memory meanwhile)
    {kVProfilingError, "error in memory profiling"},
    {kVMamba, "mamba cache blocks"},
    {kVCapturingGraphs, "capturing cuda graphs"},
    {kVCapturingCudagraphs, "capturing cudagraphs"},
    {kVProfGraph, "profiling cuda graph memory"},
    {kVLoadFailed, "failed to load model - not enough gpu memory"},
    {kVEngineFailed, "enginecore failed to start"},
    {kVEngineFailed, "engine core initialization failed"},  // v1/engine/utils.py wait_for_engine_startup (API server side)
    {kVAutoFit, "auto-fit max_model_len"},
    {kVNonDefault, "non-default args"},
    {kVWithConfig, "engine (v"},
    {kVNamespace, "args: namespace("},
    {kVApiVersion, "vllm api server version"},
    {kVInitEngine, "init engine (profile"},
    {kVStartupComplete, "application startup complete"},
    {kVReservedKv, "memory for kv cache as specified"},
    {kVErrorLevel, ") error "},  // "(Worker_TP7_EP7 pid=7475) ERROR 10-23 08:05:13 [...]"
    // stage begin/end lines (log_stages.cpp): gpu_model_runner.py / V0 model_runner.py
    // "Starting to load model X...", model_loader "Loading weights took S seconds", V0 <= 0.5
    // model_runner.py "Capturing the model for CUDA graphs.", api_server.py "Starting vLLM API server"
    {kVStartLoad, "starting to load model"},
    {kVLoadWeightsTook, "loading weights took"},
    {kVCapturingModel, "capturing the model for cuda graphs"},
    {kVStartingServer, "starting vllm api server"},
    // weight-loading progress bars: vLLM/SGLang weight_utils.py "Loading safetensors checkpoint
    // shards", TensorRT-LLM _torch/models/modeling_utils.py "Loading weights concurrently" and
    // "Loading safetensors weights in parallel"
    {kLoadShards, "checkpoint shards:"},
    {kTLoadConcurrently, "loading weights concurrently"},
    {kTLoadConcurrently, "loading safetensors weights in parallel"},
    // a worker method that failed: vLLM V0 worker_base.py "Error executing method init_device",
    // multiproc_worker_utils.py "Exception in worker ... while processing method load_model",
    // TensorRT-LLM "Error executing load_single_module with args (...)"
    {kMethodFailed, "error executing "},
    {kMethodFailed, "while processing method "},
    // the HTTP front end is up (uvicorn, under both vLLM and SGLang): "Uvicorn running on
    // http://0.0.0.0:8000 (Press CTRL+C to quit)", and its access log: a request answered 200
    // means the server was serving ('INFO:     172.17.0.1:51708 - "POST /v1/chat/completions HTTP/1.1" 200 OK')
    {kUvicornRunning, "uvicorn running on"},
    {kHttpOk, "http/1.1\" 200"},
    // a traceback's source line calling into a stage (log_torch.cpp): the call the innermost
    // printed frame makes, when an excerpt ends before the deeper frames
    {kCodeCall, "capture_model("},
    {kCodeCall, ".capture("},
    {kCodeCall, "init_cuda_graphs("},
    {kCodeCall, "load_model("},
    {kCodeCall, "load_weights("},
    {kCodeCall, "init_device("},
    {kCodeCall, "initialize_kv_cache("},
    {kCodeCall, "init_memory_pool("},
    {kCodeCall, "init_memory_pools("},
    {kCodeCall, "profile_run("},
    {kCodeCall, "_dummy_sampler_run("},
    {kCodeCall, "_dummy_run("},
    {kCodeCall, "compile_or_warm_up_model("},
    {kCodeCall, "_capture_cudagraphs("},
    {kCodeCall, "initialize_kv_cache_tensors("},
    {kCodeCall, "initialize_from_config("},
    {kCodeCall, "determine_available_memory("},
    {kCodeCall, "determine_num_available_blocks("},
    {kCodeCall, "initialize_cache("},
    {kCodeCall, "_initialize_kv_caches("},
    {kCodeCall, "_init_cache_engine("},
    {kCodeCall, "_allocate_kv_cache("},
    // TensorRT-LLM (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, _torch/pyexecutor/_util.py)
    {kTMemUsageChange, "[memusagechange]"},
    {kTMemCalc, "memory usage when calculating max tokens"},
    {kTBlocksPrimary, "blocks in kv cache primary pool"},
    {kTTokensPerBlock, "number of tokens per block"},
    {kTPeak, "peak memory during memory usage profiling"},
    {kTAfterWeights, "memory used after loading model weights"},
    {kTDynamic, "memory dynamically allocated during inference"},
    {kTOutsideTorch, "memory used outside torch"},
    {kTEstimatedMax, "estimated max memory in kv cache"},
    {kTMaxSeqLen, "max_seq_len="},
    {kTWindow, "exceeds upper bound"},
    {kTVersion, "tensorrt-llm version"},
    // 2023 C++ runtime (0.5-0.7, kvCacheManager / trtGptModelInflightBatching.cpp): "Using N tokens in
    // paged KV cache." and its refusal "maxTokensInPagedKvCache must be large enough to process at
    // least 1 sequence to completion (i.e. must be larger than beam_width * tokensPerBlock * maxBlocksPerSeq)"
    {kTPagedTokens, "tokens in paged kv cache"},
    {kTOneSequence, "must be large enough to process at least 1 sequence"},
    // PyTorch backend (py_executor_creator.py, 1.0+): "Executor creation failed due to insufficient GPU
    // memory." then "The following component could not be created: KV cache" and the free memory
    // before/after each component created so far.
    {kTExecutorOom, "executor creation failed due to insufficient gpu memory"},
    {kTCouldNotCreate, "the following component could not be created:"},
    // the NCCL variant of the same explanation (py_executor_creator.py _maybe_explain_if_oom)
    {kTExecutorOom, "executor creation failed with an error which might indicate insufficient gpu memory"},
    // TensorRT's allocator: "[TRT] [E] 2: [...] Requested amount of GPU memory (N bytes) could not be
    // allocated. There may not be enough free memory for allocation to succeed."
    {kTrtAllocFailed, "could not be allocated. there may not be enough free memory"},
    {kTrtAllocFailed, "requested amount of gpu memory ("},
    // TensorRT 8-10: "[TRT] [E] [executionContext.cpp::initializeExecutionContext::625] Error Code 2: OutOfMemory
    // (Requested size was 20132809216 bytes.)"
    {kTrtAllocFailed, "error code 2: outofmemory"},
    // PyTorch, CUDA, NCCL, Python
    {kTriedToAllocate, "tried to allocate"},
    {kOutOfMemory, "out of memory"},
    {kCcaOom, "allocation failed with oom"},
    {kCublasAlloc, "cublas_status_"},
    // any CUDA library's failed allocation: CUBLAS/HIPBLAS/CUDNN/CUSOLVER/CUSPARSE_STATUS_ALLOC_FAILED,
    // the runtime's cudaErrorMemoryAllocation, HIP's hipErrorOutOfMemory
    {kAllocErrorCode, "_status_alloc_failed"},
    {kAllocErrorCode, "cudaerrormemoryallocation"},
    {kAllocErrorCode, "hiperroroutofmemory"},
    // NCCL's allocation failures (src/include/alloc.h, checks.h): "NCCL WARN Failed to CUDA calloc 10485760
    // bytes", "Cuda failure 2 'out of memory'" (the number is in NCCL >= 2.19; older: "Cuda failure 'out of memory'")
    {kNcclCalloc, "failed to cuda calloc"},
    {kNcclCalloc, "failed to cuda malloc"},
    {kCudaFailure, "cuda failure"},
    // words a wrapper's message uses for memory that ran out, in any engine: the safety net that keeps a
    // memory failure from being read as "not an OOM" (log_torch.cpp)
    {kMemoryWords, "insufficient gpu memory"},
    {kMemoryWords, "insufficient memory"},
    {kMemoryWords, "not enough gpu memory"},
    {kMemoryWords, "not enough memory"},
    {kTraceback, "traceback (most recent call last)"},
    {kFrame, "file \""},
    {kErrorColon, "error: "},
    {kErrorColon, "error:\t"},
    {kExceptionColon, "exception: "},
    {kNcclError, "nccl error"},
    {kNcclWarn, "nccl warn"},
    {kNcclUnhandled, "ncclunhandledcudaerror"},
    {kNcclSystem, "ncclsystemerror"},
    {kNcclInternal, "ncclinternalerror"},
    {kNcclInvalid, "ncclinvalidusage"},
    {kNcclRemote, "ncclremoteerror"},
    {kWatchdog, "watchdog caught collective operation timeout"},
    {kCudaErrorColon, "cuda error:"},
    {kCudaErrorColon, "hip error:"},
    // launch commands and engine markers
    {kLaunchServer, "sglang.launch_server"},
    {kSglangServe, "sglang serve "},
    {kVllmServe, "vllm serve "},
    {kApiServerModule, "vllm.entrypoints.openai.api_server"},
    {kTrtllmServe, "trtllm-serve "},
    {kVersionWord, "version"},
    {kMarkSglangPath, "sglang/srt"},
    {kMarkSglangPath, "sglang.srt"},
    {kMarkVllmPath, "/vllm/"},
    {kMarkVllmPath, "vllm.v1"},
    {kMarkEngineCore, "enginecore"},
    {kMarkVllmWorker, "vllmworker"},
    {kMarkTrt, "[tensorrt-llm]"},
    {kMarkTrtPkg, "tensorrt_llm"},
    // llama.cpp (src/llama-model.cpp, llama-context.cpp, llama-kv-cache.cpp, ggml-cuda.cu, ggml-vulkan.cpp,
    // ggml-metal, ggml-alloc.c, common/fit.cpp; formats by era: research/llamacpp-log-eras.md)
    {kLModelLoad, "llama_model_load"},
    {kLLoadTensors, "load_tensors"},  // also llm_load_tensors (2024)
    {kLContext, "llama_context:"},
    {kLContext, "llama_new_context_with_model"},
    {kLContext, "llama_init_from_model"},
    {kLCudaInit, "ggml_cuda_init"},
    {kLBuild, "build: "},
    {kLBuild, "build_info"},
    {kLBuild, "build="},
    {kLDeviceLine, "compute capability"},  // "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes, VRAM: ..."
    {kLUsingDevice, "using device "},
    {kLBufferSize, "buffer size"},
    {kLKvCache, "llama_kv_cache"},  // _init (2024), _unified (2025), _iswa, plain (2026)
    {kLKvSelf, "kv self size"},
    {kLOffloaded, "layers to gpu"},
    {kLFit, "params_fit"},  // llama_params_fit[_impl], common_params_fit_impl
    {kLFit, "common_fit_params"},
    {kLPrintInfo, "print_info:"},
    {kLPrintInfo, "llm_load_print_meta"},
    {kLAllocOnDevice, "mib on device"},  // "allocating X MiB on device N: cudaMalloc failed: out of memory"
    {kLFailedAlloc, "failed to allocate"},
    {kLVkOom, "erroroutofdevicememory"},
    {kLVkOom, "erroroutofhostmemory"},
    {kLVkAlloc, "device memory allocation of size"},
    {kLBackendOom, "rocm error"},
    {kLBackendOom, "hipmalloc"},
    {kLBackendOom, "cudamalloc failed"},
    {kLRetry, "retrying without"},
    {kLReady, "server is listening"},
    {kLReady, "all slots are idle"},
    {kLReady, "model loaded"},
    {kLReady, "llama runner started"},
    {kLLaunch, "llama-server"},
    {kLLaunch, "llama-cli"},
    {kLLaunch, "ollama runner"},
    {kLLaunch, "ollama_llama_server"},
    {kLLoadingModel, "loading model '"},
    {kLVulkanDev, "ggml_vulkan:"},
    {kLMetal, "ggml_metal"},
};

class Automaton {
 public:
  Automaton() {
    // byte classes: every byte that occurs in a keyword gets its own class; the rest share 0
    cls_.fill(0);
    int n = 1;
    for (const auto& k : kKeywords)
      for (const char* p = k.text; *p; ++p) {
        unsigned char c = static_cast<unsigned char>(*p);
        if (!cls_[c]) cls_[c] = static_cast<uint8_t>(n++);
      }
    for (int c = 'A'; c <= 'Z'; ++c) cls_[c] = cls_[c + 32];
    nclass_ = n;
    // trie
    add_state();
    for (const auto& k : kKeywords) {
      int s = 0;
      for (const char* p = k.text; *p; ++p) {
        int c = cls_[static_cast<unsigned char>(*p)];
        int& nx = next_[static_cast<size_t>(s) * nclass_ + c];
        if (nx <= 0) {
          int ns = add_state();
          next_[static_cast<size_t>(s) * nclass_ + c] = ns;
        }
        s = next_[static_cast<size_t>(s) * nclass_ + c];
      }
      out_[static_cast<size_t>(s)].set(k.kw);
    }
    // BFS: failure links folded into a full DFA
    std::vector<int> fail(states_, 0), queue;
    for (int c = 0; c < nclass_; ++c) {
      int& nx = next_[static_cast<size_t>(c)];
      if (nx > 0) {
        fail[static_cast<size_t>(nx)] = 0;
        queue.push_back(nx);
      } else {
        nx = 0;
      }
    }
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      int s = queue[qi];
      out_[static_cast<size_t>(s)] |= out_[static_cast<size_t>(fail[static_cast<size_t>(s)])];
      for (int c = 0; c < nclass_; ++c) {
        int& nx = next_[static_cast<size_t>(s) * nclass_ + c];
        int fnx = next_[static_cast<size_t>(fail[static_cast<size_t>(s)]) * nclass_ + c];
        if (nx > 0) {
          fail[static_cast<size_t>(nx)] = fnx;
          queue.push_back(nx);
        } else {
          nx = fnx;
        }
      }
    }
    // Table entries are pre-multiplied state offsets with the top bit set for accepting states,
    // so the per-byte step is one load and one add (no multiply, no second lookup).
    table_.resize(next_.size());
    for (size_t i = 0; i < next_.size(); ++i) {
      uint32_t ns = static_cast<uint32_t>(next_[i]);
      table_[i] = ns * static_cast<uint32_t>(nclass_) | (out_[ns].any() ? kAccept : 0u);
    }
  }

  bool match(std::string_view line, KwSet& hits) const {
    hits.reset();
    uint32_t off = 0;
    bool found = false;
    const uint32_t* t = table_.data();
    const uint8_t* cls = cls_.data();
    for (unsigned char ch : line) {
      uint32_t v = t[off + cls[ch]];
      off = v & ~kAccept;
      if (v & kAccept) [[unlikely]] {
        hits |= out_[off / static_cast<uint32_t>(nclass_)];
        found = true;
      }
    }
    return found;
  }

 private:
  int add_state() {
    next_.resize(next_.size() + static_cast<size_t>(nclass_), -1);
    out_.emplace_back();
    return states_++;
  }
  std::array<uint8_t, 256> cls_{};
  int nclass_ = 0, states_ = 0;
  std::vector<int> next_;
  static constexpr uint32_t kAccept = 0x80000000u;
  std::vector<uint32_t> table_;
  std::vector<KwSet> out_;
};

const Automaton& automaton() {
  static const Automaton a;
  return a;
}

}  // namespace

bool match_keywords(std::string_view line, KwSet& hits) { return automaton().match(line, hits); }

}  // namespace headroom::logscan_detail
