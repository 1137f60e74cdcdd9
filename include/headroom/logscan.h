// Log readers for `headroom doctor`: stream a crash or startup log of SGLang, vLLM,
// TensorRT-LLM or llama.cpp (plus PyTorch OOM messages, NCCL errors, Python tracebacks) and turn it into
// structured facts: engine and version, server arguments, per-rank memory figures of each
// startup stage, OOM reports, refusals and errors. Every figure keeps the 1-based line number
// of the line that printed it; the line text is in `evidence`.
//
// Reading only: no diagnosis here. Bytes are int64; "GB" in SGLang/vLLM/PyTorch logs is 2^30.
// Memory stays bounded whatever the log size: only memory-relevant lines are kept, with caps.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/outcome.h"
#include "headroom/stage_basis.h"

namespace headroom {

enum class LogEngine : uint8_t { Unknown, SGLang, VLLM, TRTLLM, LlamaCpp };
std::string_view log_engine_name(LogEngine e);  // "unknown" | "sglang" | "vllm" | "trtllm" | "llamacpp"

// Which process printed a line, from its prefix:
//   SGLang  "[2025-10-16 09:06:09 DP1 TP3 EP3]", "[TP4]", old "[gpu_id=0]"
//   vLLM    "(VllmWorker rank=2 pid=..)", "(Worker_TP7_EP7 pid=..)", "(Worker_PP1_TP0 pid=..)",
//           "(EngineCore_DP0 pid=..)", "(EngineCore pid=..)", "(RayWorkerWrapper pid=.., ip=..)"
//   PyTorch "[rank1]:[W906 ...]"
// Unset numbers are -1. An empty label means the line had no rank prefix.
struct LogRank {
  int tp = -1, dp = -1, ep = -1, pp = -1;
  int worker = -1;    // vLLM "rank=N", PyTorch "[rankN]:"
  std::string label;  // the prefix as printed, without brackets: "DP1 TP3 EP3", "VllmWorker rank=2"
  // Sort key: unprefixed lines first, then by pp, then tp (or worker, or dp).
  int64_t order() const;
  bool operator==(const LogRank& o) const { return label == o.label; }
};

// A number the log printed, with the line it came from.
struct LogFigure {
  int64_t value = 0;  // bytes for memory, a count for tokens / requests
  int64_t line = 0;
};
struct LogRatio {
  double value = 0;  // concurrency "4.35x", utilisation "0.9", fraction "0.88"
  int64_t line = 0;
};

// The memory figures of one rank (or, in LogScan::summary, of the lowest rank that printed
// each one — the corpus convention: TP0 when it printed the line). Names follow the corpus
// `observed` fields (tests/data/corpus/README.md). Source lines, per engine:
struct LogFigures {
  // --- before weights
  std::optional<LogFigure> init_used;          // SGLang "Init torch distributed ends. mem usage=X GB"
  std::optional<LogFigure> init_avail;         // SGLang "Load weight begin. avail mem=X GB";
                                               // vLLM "Free memory on device (X/T GiB) on startup",
                                               // "Initial free memory[:] X GiB"; TRT "available: X GiB"
  std::optional<LogFigure> total;              // device capacity: vLLM "(F/T GiB)", V0 total_gpu_memory,
                                               // SGLang "total_gpu_memory=T GB", TRT "total: T GiB"
  std::optional<LogFigure> requested;          // vLLM util x total: "Desired ... (0.9, R GiB)", "Requested memory: ..., R GiB"
  std::optional<LogRatio> gpu_memory_utilization;  // vLLM, from the same lines
  // --- weights
  std::optional<LogFigure> weights;            // SGLang "Load weight end ... mem usage=X GB" (first, = target);
                                               // vLLM "Model loading took X GiB" (V0 "Loading model weights took X GB",
                                               // "model weights take X GiB", "X GiB for weight", "weights memory: X GiB");
                                               // TRT "Memory used after loading model weights (inside torch) ...: X GiB"
  std::optional<LogFigure> post_weights_avail; // SGLang "Load weight end ... avail mem=X GB" (first)
  std::optional<LogFigure> draft_weights;      // SGLang second "Load weight end" on the same rank (speculative draft)
  std::optional<LogFigure> consumed;           // vLLM "X GiB for consumed memory (weights + non-torch)"
  // --- profiling (vLLM, TRT)
  std::optional<LogFigure> activation;         // vLLM "X GiB for peak activation", "torch peak memory increase: X",
                                               // V0 "PyTorch activation peak memory takes X"; TRT "dynamically allocated"
  std::optional<LogFigure> non_torch;          // vLLM "X GiB for non-torch memory", "non-torch forward increase memory: X",
                                               // V0 "non_torch_memory takes X" / "non_torch_memory=X"; TRT "outside torch"
  std::optional<LogFigure> graph_estimate;     // vLLM "Estimated CUDA graph memory: X GiB total" / "(estimated)"
  // --- KV pool
  std::optional<LogFigure> kv_tokens;          // SGLang "#tokens: N" (else max_total_num_tokens=N); vLLM "GPU KV cache
                                               // size: N tokens" (V0: "...stored in KV cache (N)"); TRT "(N)" of the
                                               // [MemUsageChange] KV line
  std::optional<LogFigure> kv_bytes;           // SGLang K size + V size (or KV size), summed over the pool's
                                               // allocations up to "Memory pool end", or "...KVPool mem usage: X GB";
                                               // vLLM "Available KV cache memory: X GiB" (else "reserved X GiB memory for
                                               // KV Cache", V0 "reserved for KV Cache is X", "kv_cache_size=X",
                                               // "Current kv cache memory in use is X", "available KV cache memory (X GiB)");
                                               // TRT "Allocated X GiB for max tokens in paged KV cache"
  std::optional<LogFigure> kv_needed;          // vLLM "X GiB KV cache is needed" (one max-length request)
  std::optional<LogFigure> pool_end_avail;     // SGLang "Memory pool end. avail mem=X GB"
  // --- CUDA graphs (target model; draft captures are kept in facts only)
  std::optional<LogFigure> graph_begin_avail;  // SGLang first "Capture [target ...] cuda graph begin ... avail mem=X GB"
  std::vector<int64_t> graph_bs;               // SGLang "Capture cuda graph bs [..]" or "bs=[..]" of the decode capture
  int64_t graph_bs_line = 0;
  std::optional<LogFigure> graph_progress_avail;  // last tqdm "Capturing batches (bs=B avail_mem=X GB)"
  std::optional<LogFigure> graph_progress_bs;     // its bs (SGLang captures largest first)
  std::optional<LogFigure> graph_bytes;        // SGLang sum of "mem usage=X GB" of the target capture ends;
                                               // vLLM "Graph capturing finished in S secs, took X GiB",
                                               // "X GiB for CUDAGraph memory", "CUDA graph pool memory: X GiB (actual)"
  std::optional<LogFigure> graph_end_avail;    // SGLang last target "Capture ... end ... avail mem=X GB"
  // --- scheduler summary / limits
  std::optional<LogFigure> max_total_num_tokens;  // SGLang "max_total_num_tokens=N"
  std::optional<LogFigure> max_running_requests;  // SGLang "max_running_requests=N"; TRT "max_num_requests=N"
  std::optional<LogFigure> context_len;           // SGLang "context_len=N"; vLLM "Maximum concurrency for N tokens",
                                                  // "max seq len (N)"; TRT "max_seq_len=N"
  std::optional<LogFigure> chunked_prefill_size;  // SGLang
  std::optional<LogFigure> available_gpu_mem;     // SGLang "available_gpu_mem=X GB" (after startup)
  std::optional<LogRatio> max_concurrency;        // vLLM "Maximum concurrency for L tokens per request: Xx"
  std::optional<LogFigure> estimated_max_model_len;  // vLLM "the estimated maximum model length is N"
  std::optional<LogRatio> mem_fraction_static;    // SGLang "mem_fraction_static=F" (memory profiling /
                                                  // refusal lines); TRT "fraction is set F"
};

// One rank's figures plus how far its startup got.
struct LogRankMemory {
  LogRank rank;
  LogFigures fig;
  // Stage this rank was in when the log (or the rank's lines) ended, from the last stage line
  // it printed: "init" | "weights" | "kv_pool" | "cuda_graph" | "warmup" | "ready" | "" (none).
  std::string stage;
  int64_t stage_line = 0;
  // The stage line was a begin line of `stage` (SGLang "Load weight begin", "Capture cuda graph
  // begin", vLLM "Starting to load model", "Capturing CUDA graphs", ...): the rank was inside the
  // stage, not between two, when its lines ended.
  bool stage_open = false;
};

// A PyTorch out-of-memory report, any version (templates: research/allocator-runtime.md §2):
//  <=2.0  "CUDA out of memory. Tried to allocate A (GPU d; T total capacity; Al already allocated;
//          F free; [L allowed; ]R reserved in total by PyTorch)"  (<=1.4: "C cached")
//  2.1+   "Tried to allocate A. GPU d has a total capacit[y|y typo] of T of which F is free.
//          [Including non-PyTorch memory, this process has X memory in use. | Process P has X memory in use. ]*
//          [L allowed; ]Of the allocated memory Al is allocated by PyTorch, [with P allocated in private pools
//          (e.g., CUDA Graphs), ]and R is reserved by PyTorch but unallocated."
//  also "HIP out of memory", "XPU out of memory", generic "Out of memory", the allocator warning
//  "memory allocation failed with OOM on device D while trying to allocate N bytes (free: F, total: T)",
//  raw "CUDA error: out of memory" / "HIP error: out of memory", cuBLAS "CUBLAS_STATUS_ALLOC_FAILED",
//  NCCL "Cuda failure 'out of memory'" (these last ones without numbers).
// Unset numbers are -1.
struct LogOom {
  int64_t line = 0;
  LogRank rank;
  std::string backend;        // "CUDA" | "HIP" | "XPU" | "" (generic) ...
  std::string form;           // "torch<=2.0" | "torch2.1+" | "cca_warning" | "cuda_error" | "cublas" | "nccl" | "other"
  int device = -1;            // "GPU d" / "on device d"
  int64_t request = -1;       // Tried to allocate
  int64_t total = -1;         // total capacity
  int64_t free = -1;          // of which ... is free
  int64_t process_in_use = -1;  // "this process has X memory in use", else the largest "Process P has X"
  std::vector<std::pair<int64_t, int64_t>> other_processes;  // (pid, bytes) "Process P has X memory in use"
  int64_t allocated = -1;     // "Of the allocated memory Al is allocated by PyTorch" (<=2.0 "already allocated")
  int64_t reserved_unallocated = -1;  // "R is reserved by PyTorch but unallocated" (<=2.0: reserved - allocated)
  int64_t private_pools = -1; // "with P allocated in private pools (e.g., CUDA Graphs)"
  int64_t allowed = -1;       // "L allowed;"
  bool hint_expandable_segments = false;  // message recommends expandable_segments
  bool in_capture_failed = false;         // wrapped in SGLang "Capture cuda graph failed: ..."
  bool truncated = false;     // the message ends before its last field
};

// An error or refusal line (not a PyTorch OOM report).
struct LogError {
  // "sglang_not_enough_memory"    SGLang "Not enough memory. Please try to increase --mem-fraction-static."
  // "sglang_weights_leave_no_kv"  SGLang "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=F"
  // "sglang_capture_failed"       SGLang "Capture cuda graph failed: ..."
  // "sglang_profiled_negative"    SGLang "max_total_tokens=N is larger than the profiled value M" (value = M)
  // "vllm_no_cache_blocks"        vLLM "No available memory for the cache blocks"
  // "vllm_max_seq_len"            vLLM "To serve at least one request with the model's max seq len (L), (X GiB KV
  //                               cache is needed ... (Y GiB) ... estimated maximum model length is M", and the
  //                               V0 "max seq len (L) is larger than the maximum number of tokens ... (N)"
  // "vllm_free_memory_startup"    vLLM "Free memory on device (F/T GiB) on startup is less than desired GPU memory
  //                               utilization (u, R GiB)"
  // "vllm_sampler_warmup_oom"     vLLM "CUDA out of memory occurred when warming up sampler with N dummy requests"
  // "vllm_mamba_blocks"           vLLM "max_num_seqs (N) exceeds available Mamba cache blocks (M)"
  // "vllm_load_failed"            vLLM "Failed to load model - not enough GPU memory"
  // "vllm_engine_failed"          vLLM "EngineCore failed to start."
  // "vllm_autofit_failed"         vLLM "Cannot auto-fit max_model_len"
  // "context_over_derived"        vLLM "User-specified max_model_len (L) is greater than the derived max_model_len
  //                               (max_position_embeddings=D ...)", SGLang "... context_length (L) is greater than the
  //                               derived context_length (D)" (value = D, value2 = L)
  // "trtllm_window_reduced"       TRT-LLM "Attention window size A exceeds upper bound B ..." (a warning)
  // "nccl"                        NCCL errors ("NCCL error", "ncclUnhandledCudaError", "NCCL WARN", watchdog timeout)
  // "cuda_error"                  "CUDA error: ..." other than out of memory
  // "exception"                   any other Python exception line "XxxError: ..." / "Exception: ..."
  // "scheduler_exception"         SGLang "Scheduler hit an exception"
  // "error_line"                  vLLM: the first worker line at ERROR level when no other error was read
  //                               (its message may be cut); it says a failure happened, not which
  std::string kind;
  int64_t line = 0;
  LogRank rank;
  std::string exception;  // Python exception type when the line has one ("ValueError", "torch.OutOfMemoryError")
  std::optional<int64_t> value;  // kind-specific: profiled tokens, estimated max len, dummy requests, mamba blocks
  std::optional<int64_t> value2; // kind-specific: max seq len L; max_num_seqs
  std::optional<double> fraction;  // SGLang --mem-fraction-static named in the message; vLLM utilisation
  std::optional<double> suggested;  // SGLang "Raise --mem-fraction-static above S"
};

// A Python traceback: the functions that were running (outermost first) and the exception.
struct LogTraceback {
  int64_t line = 0;       // the "Traceback (most recent call last):" line
  int64_t end_line = 0;   // the exception line (0 if not seen)
  LogRank rank;
  std::vector<std::string> functions;  // "file.py:func" per frame, capped
  std::string exception;  // "torch.OutOfMemoryError", "ValueError", ...
  // Stage the frames point at: "weights" (load_model, load_weights), "kv_pool" (init_memory_pool,
  // _create_buffers, initialize_kv_cache), "cuda_graph" (capture, CudaGraphRunner, graphs.py),
  // "warmup" (profile_run, _dummy_run, _dummy_sampler_run, warmup), "init" (init_torch_distributed,
  // init_device), "runtime" (event_loop, forward_batch_generation, execute_model after startup); "" unknown.
  std::string stage;
};

// Server arguments in the engine's own flag spelling ("--mem-fraction-static" -> "0.95").
// Python repr values are normalised: 'str' -> str, True/False -> "true"/"false", None omitted,
// torch.bfloat16 -> bfloat16. Bare command-line flags get "true".
struct LogArgSet {
  // "sglang_server_args"  SGLang "server_args=ServerArgs(model_path='...', tp_size=8, ...)"
  // "vllm_non_default"    vLLM "non-default args: {'model': ..., 'tensor_parallel_size': 2}"
  // "vllm_engine_config"  vLLM "Initializing a V1 LLM engine (v0.10.1.1) with config: model='..', ..."
  //                       (max_seq_len -> --max-model-len)
  // "vllm_namespace"      vLLM "args: Namespace(...)"
  // "command"             "python -m sglang.launch_server ...", "sglang serve ...", "vllm serve MODEL ...",
  //                       "python -m vllm.entrypoints.openai.api_server ...", "trtllm-serve MODEL ..."
  //                       (continuation lines ending in '\' and following "--flag" lines are joined;
  //                       short aliases normalised: SGLang --tp -> --tp-size, vLLM -tp -> --tensor-parallel-size)
  std::string source;
  LogEngine engine = LogEngine::Unknown;
  int64_t line = 0;
  std::vector<std::pair<std::string, std::string>> flags;  // in printed order
};

// A kept log line (memory-relevant) with its meaning.
struct LogEvidence {
  int64_t line = 0;
  std::string kind;  // e.g. "sglang.load_weight_end", "vllm.kv_cache_size", "torch.oom", "traceback"
  std::string text;  // the line, ANSI codes removed, capped at 2000 bytes
};

// llama.cpp names devices, not ranks ("CUDA0", "ROCm1", "Vulkan0", "Metal", "CPU_Mapped"): its
// facts per device, from the device list, "using device" and the buffer lines (log_llamacpp.cpp).
struct LlamaDevice {
  std::string name;         // as the buffer lines print it
  std::string description;  // "NVIDIA GeForce RTX 3090"
  std::optional<LogFigure> total, free;         // "VRAM: T MiB (F MiB free)", "using device ... - F MiB free", fit lines
  std::optional<LogFigure> model, kv, compute;  // "model buffer size", "KV buffer size", "compute buffer size"
};
// An allocation llama.cpp could not make. `stage`: "weights" (alloc_tensor_range, the model
// buffer), "kv_pool" (the KV cache), "compute_buffer" (ggml_gallocr / graph_reserve /
// sched_reserve), "runtime" (a CUDA/ROCm error while computing), "" (the line does not say).
struct LlamaFailure {
  int64_t line = 0;
  std::string kind;     // the pattern (docs/doctor-messages.md, llama.cpp table)
  std::string stage;
  std::string device;   // "CUDA0"; "" when the log does not name it
  int64_t request = -1; // bytes
  bool retried = false; // llama.cpp retried after it ("retrying without pipeline parallelism")
};
struct LlamaLogFacts {
  std::string backend;  // "CUDA" | "ROCm" | "Vulkan" | "Metal" | "" from the device lines
  std::vector<LlamaDevice> devices;  // in the order first seen, host buffers included
  std::optional<LogFigure> kv_size;  // "llama_kv_cache: size = X MiB (N cells, L layers, ...)", "KV self size = X MiB"
  int64_t kv_cells = 0, kv_layers = 0;
  std::string type_k, type_v;        // "f16", "q8_0"
  int layers_offloaded = -1, layers_total = -1;  // "offloaded N/M layers to GPU"
  int64_t offloaded_line = 0;
  std::optional<LogFigure> n_ctx, n_ubatch, n_seq, n_layer, n_expert;  // llama_context / print_info lines
  std::optional<LogFigure> fit_projected, fit_free;  // "projected to use X MiB of device memory vs. Y MiB ..."
  std::string fit_gave_up;    // why --fit stopped: "n_gpu_layers already set by user to 99", "model_params::tensor_buft_overrides ..."
  int64_t fit_gave_up_line = 0;
  std::string model_file;  // the GGUF the log loads ("-m F", "loading model 'F'")
  std::string model_name;  // print_info general.name
  std::vector<LlamaFailure> failures;  // in log order, capped at 64
  int64_t ready_line = 0;  // "server is listening", "all slots are idle", "model loaded"
  const LlamaDevice* device(std::string_view name) const {
    for (const auto& d : devices) if (d.name == name) return &d;
    return nullptr;
  }
};

struct LogScanStats {
  int64_t bytes = 0;
  int64_t lines = 0;
  int64_t kept_lines = 0;     // lines that matched a reader (before caps)
  int64_t dropped_facts = 0;  // kept lines beyond the caps
  int64_t long_lines = 0;     // lines cut at LogScanOptions::max_line_bytes
  int64_t binary_bytes = 0;   // bytes that are not text
  int64_t keyword_lines = 0;  // lines with any word an engine or PyTorch log line has
};

struct LogScan {
  std::string source;
  LogEngine engine = LogEngine::Unknown;  // from the memory lines and markers the log contains
  std::string engine_version;             // as printed ("0.10.1.1"), or empty
  int64_t engine_version_line = 0;
  // When no line prints the version: the release whose rules the log's own line formats belong
  // to ("0.6.4" for V0's pre-PR-#10511 "Memory profiling results: ... initial_memory_usage="),
  // with the line and why; empty when the formats do not tell.
  std::string engine_version_hint;
  std::string engine_version_hint_why;
  std::string model_class;                // SGLang "type=DeepseekV3ForCausalLM" of the first load

  std::vector<LogArgSet> arg_sets;
  // All flag sets merged: command < vllm_namespace < vllm_non_default < vllm_engine_config <
  // sglang_server_args (the resolved values win); within one source, later lines win.
  std::map<std::string, std::string> flags;

  std::vector<LogRankMemory> ranks;  // sorted by LogRank::order()
  LogFigures summary;                // per figure, the lowest rank that printed it

  std::vector<LogOom> ooms;              // in log order, capped at 64
  std::vector<LogError> errors;          // in log order, capped at 256
  std::vector<LogTraceback> tracebacks;  // in log order, capped at 32

  // Reading-level outcome, before any diagnosis: the corpus `outcome` codes Ok | OomWeights |
  // OomKv | RefusedKv | OomGraph | OomWarmup | OomRuntime | OtherError, Oom for
  // an OOM report with no stage evidence at all (no stage line, traceback or telling wording), or
  // none when the log shows neither an error nor a finished startup. Decided from the first fatal
  // error and the stage its rank was in (message wording > traceback frames > last stage line).
  std::optional<Outcome> outcome;
  std::string failure_stage;   // "init"|"weights"|"kv_pool"|"cuda_graph"|"warmup"|"runtime"|"" (no failure)
  std::optional<StageBasis> failure_basis;  // none when the log's lines place it; Numbers when only the OOM message's own figures do
  int64_t failure_line = 0;    // the line of that first fatal error
  int failure_device = -1;     // GPU index of the failing rank when the log says it (OOM "GPU d", TPd)

  std::vector<LogEvidence> evidence;  // kept lines, log order, capped (LogScanOptions::max_evidence)
  LogScanStats stats;
  LlamaLogFacts llama;                // llama.cpp's per-device facts (empty for other engines)

  // Text of a kept line, or empty.
  std::string_view line_text(int64_t line) const;
};

struct LogScanOptions {
  size_t max_line_bytes = 256 * 1024;  // longer lines are cut (ServerArgs dumps are ~10-30 KB)
  size_t max_evidence = 4000;          // kept lines; later ones only update counters
  size_t max_evidence_text = 2000;     // bytes of each kept line's text
};

// Reads a log file ("-" = standard input). Missing or unreadable file, an empty log, a file
// that is mostly not text, or text with no word of an engine or PyTorch log ("hello world")
// → InputError (exit code 2). scan_log_text leaves that last judgement to its caller.
LogScan scan_log_file(const std::string& path, const LogScanOptions& opt = {});
// Reads a log held in memory (the web API). `source` names it in errors.
LogScan scan_log_text(std::string_view text, std::string_view source = "log", const LogScanOptions& opt = {});

// Streaming form: feed chunks of any size, then finish(). scan_log_file/scan_log_text use it.
class LogScanner {
 public:
  explicit LogScanner(std::string source, LogScanOptions opt = {});
  ~LogScanner();
  LogScanner(const LogScanner&) = delete;
  LogScanner& operator=(const LogScanner&) = delete;
  void feed(std::string_view chunk);
  LogScan finish();  // throws InputError for an empty or non-text log

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace headroom
