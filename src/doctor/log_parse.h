// Internals of the log readers (include/headroom/logscan.h): text helpers, the keyword
// prefilter, the scanning context, and one reader function per log family.
#pragma once
#include <array>
#include <bitset>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/logscan.h"

namespace headroom::logscan_detail {

// ---------- text helpers (log_text.cpp) ----------
inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
// Case-insensitive ASCII find; npos when absent.
size_t ifind(std::string_view hay, std::string_view needle, size_t from = 0);
inline bool icontains(std::string_view hay, std::string_view needle) { return ifind(hay, needle) != std::string_view::npos; }
// Text after the first (case-insensitive) occurrence of key; nullopt when absent.
std::optional<std::string_view> after(std::string_view s, std::string_view key);
void skip_spaces(std::string_view& s);
// Consumes a decimal number ("-1.05", "1,215,552" when commas) at the start of s (after spaces).
bool take_number(std::string_view& s, double& v, bool commas = false);
bool take_int(std::string_view& s, int64_t& v, bool commas = false);
// Consumes "<number>[ ]<unit>": GB/GiB/G (2^30, as SGLang/vLLM/PyTorch print), MB/MiB/M, KB/KiB,
// TB/TiB, bytes/B; a unit cut by the end of the line ("43.4 G") is accepted when its first
// letter is there. A bare number with default_unit > 0 takes that unit.
bool take_size(std::string_view& s, int64_t& bytes, int64_t default_unit = 0);
std::optional<int64_t> size_after(std::string_view s, std::string_view key, int64_t default_unit = 0);
std::optional<double> num_after(std::string_view s, std::string_view key, bool commas = false);
std::optional<int64_t> int_after(std::string_view s, std::string_view key, bool commas = false);
// "[1, 2, 4]" at the start (after spaces) → list; false when not a list.
bool take_int_list(std::string_view& s, std::vector<int64_t>& out);
int64_t to_bytes(double v, int64_t unit);

// Rank from the prefix (see LogRank); the body is the text after the known prefixes
// (compose "name  | ", "[ISO time]", SGLang "[time TPn]", vLLM "(Worker pid=..)", "LEVEL date [file:line]").
LogRank parse_rank(std::string_view line);
std::string_view message_body(std::string_view line);
// Shell-like split of a command line: whitespace, '...' and "..." groups, backslash escapes
// (at most 512 words; log_args.cpp).
std::vector<std::string> shell_split(std::string_view s);
// Removes ANSI escape sequences in place.
void strip_ansi(std::string& s);
// Removes what pasting a log into Markdown adds before each line: block-quote markers ("> ",
// "> > ") and a code fence's opening ("```text"), in place.
void strip_markdown(std::string& s);

// ---------- keyword prefilter (log_keywords.cpp) ----------
// A line is looked at only if it contains one of these (case-insensitive) keywords.
enum Kw : uint8_t {
  // SGLang
  kSglInitBegin, kSglInitEnd, kSglLoadBegin, kSglLoadEnd, kSglKvAlloc, kSglPoolUsage, kSglPoolEnd, kSglGraphBegin,
  kSglGraphEnd, kSglGraphBs, kSglCapturing, kSglSummary, kSglMemProfiling, kSglNotEnough, kSglNoKv,
  kSglCaptureFailed, kSglGraphFailed, kSglMambaNoMem, kSglPoolTooSmall, kSglProfiled, kSglUnbalanced, kSglPoolFull, kSglReady, kSglSchedExc, kServerArgs, kEngineDead,
  // vLLM
  kVModelLoading, kVLoadingWeights, kVAvailKv, kVKvSize, kVConcurrency, kVGraphFinished, kVGraphEstimate,
  kVGraphPool, kVFreeOnDevice, kVInitialFree, kVFreeAfter, kVProfTakes, kVInstanceCanUse, kVWeightsTake,
  kVProfResults, kVGpuBlocks, kVCudaBlocks, kVToServe, kVKvNeeded, kVEstMaxLen, kVNoBlocks, kVStoredInKv,
  kVSamplerWarmup, kVMamba, kVCapturingGraphs, kVCapturingCudagraphs, kVProfGraph, kVLoadFailed,
  kVEngineFailed, kVAutoFit, kVNonDefault, kVWithConfig, kVNamespace, kVApiVersion, kVInitEngine,
  kVStartupComplete, kVReservedKv, kVErrorLevel, kVStartLoad, kVLoadWeightsTook, kVCapturingModel, kVStartingServer, kVCompileTakes, kVUsingV2Runner, kVProfilingError,
  kLoadShards, kTLoadConcurrently, kMethodFailed, kCodeCall, kUvicornRunning, kHttpOk,
  // TensorRT-LLM
  kTMemUsageChange, kTMemCalc, kTBlocksPrimary, kTTokensPerBlock, kTPeak, kTAfterWeights, kTDynamic,
  kTOutsideTorch, kTEstimatedMax, kTMaxSeqLen, kTWindow, kTVersion, kTPagedTokens, kTOneSequence,
  kTExecutorOom, kTCouldNotCreate, kTrtAllocFailed,
  // PyTorch / CUDA / NCCL / Python
  kTriedToAllocate, kOutOfMemory, kCcaOom, kCublasAlloc, kTraceback, kFrame, kErrorColon, kExceptionColon,
  kNcclError, kNcclWarn, kNcclUnhandled, kNcclSystem, kNcclInternal, kNcclInvalid, kNcclRemote, kWatchdog,
  kCudaErrorColon, kContextOverDerived, kNcclCalloc, kCudaFailure, kAllocErrorCode, kMemoryWords,
  // launch commands, versions, engine markers
  kLaunchServer, kSglangServe, kVllmServe, kApiServerModule, kTrtllmServe, kVersionWord,
  kMarkSglangPath, kMarkVllmPath, kMarkEngineCore, kMarkVllmWorker, kMarkTrt, kMarkTrtPkg,
  // llama.cpp (log_llamacpp.cpp)
  kLModelLoad, kLLoadTensors, kLContext, kLCudaInit, kLBuild, kLDeviceLine, kLUsingDevice, kLBufferSize, kLKvCache,
  kLKvSelf, kLOffloaded, kLFit, kLPrintInfo, kLAllocOnDevice, kLFailedAlloc, kLVkOom, kLVkAlloc, kLBackendOom,
  kLRetry, kLReady, kLLaunch, kLLoadingModel, kLVulkanDev, kLMetal,
  kKwCount
};
using KwSet = std::bitset<kKwCount>;
// Fills `hits` with the keywords the line contains; returns false when there are none.
bool match_keywords(std::string_view line, KwSet& hits);

// ---------- scanning context (logscan.cpp) ----------
struct Line {
  int64_t no = 0;
  std::string_view text;  // ANSI removed
  KwSet kw;
  LogRank rank;
  std::string_view body;
};

struct OpenTraceback {
  size_t index = 0;  // into scan.tracebacks
  int64_t last_line = 0;
};

// Multi-line messages (vLLM prints some errors over 2-3 lines): the reader collects the next
// lines' bodies and re-parses.
struct Pending {
  int kind = -1;  // reader-specific
  int64_t line = 0;
  LogRank rank;
  std::string text;
  int left = 0;
};

struct Ctx {
  LogScan scan;
  LogScanOptions opt;
  std::vector<LogRankMemory> ranks;           // unsorted; sorted at the end
  std::map<std::string, size_t> rank_index;  // label -> index into ranks
  // Reader state per rank, parallel to `ranks` (bounded with it).
  struct RankState {
    bool pool_done = false;        // "Memory pool end" seen: later KV allocations are the draft's
    int loads_seen = 0;            // "Load weight end" lines so far (the second is the draft)
    bool graph_from_sglang = false;  // graph_bytes is a running sum of SGLang capture ends
  };
  std::vector<RankState> rank_state;
  std::vector<OpenTraceback> open_tb;
  std::vector<Pending> pending;
  // Fatal events in log order, for the outcome.
  struct Fatal {
    int64_t line;
    std::string kind;    // "oom" | error kind
    std::string stage;   // explicit stage from the wording ("" if none)
    std::optional<Outcome> outcome;  // explicit outcome from the wording (none: from stage)
    LogRank rank;
    int device = -1;
    int64_t oom_index = -1;
  };
  std::vector<Fatal> fatals;
  std::string last_stage;  // last stage line of any rank
  int64_t last_stage_line = 0;
  bool finished_startup = false;
  int64_t finished_line = 0;
  // engine evidence
  int score_sglang = 0, score_vllm = 0, score_trt = 0, score_llama = 0;
  // vLLM model runner the log shows by the file of its "Model loading took" line: 1 the V1
  // runner (gpu_model_runner.py), 2 Model Runner V2 (vllm/v1/worker/gpu/model_runner.py).
  int vllm_runner = 0;
  // pending command line (continuations)
  std::string cmd_text;
  std::vector<std::string> cmd_env;  // NAME=VALUE set before the program on its line ("VLLM_X=0 vllm serve ...")
  int64_t cmd_line = 0;
  LogEngine cmd_engine = LogEngine::Unknown;
  bool cmd_open = false;

  LogFigures& fig(const LogRank& r);
  LogRankMemory& rank_mem(const LogRank& r);
  RankState& state(const LogRank& r);
  void keep(const Line& l, std::string_view kind);
  // `open`: the line begins work in `stage` (the rank is inside it until a later stage line).
  void stage(const Line& l, std::string_view stage, bool open = false);
  void fatal(const Line& l, std::string_view kind, std::string_view stage, std::optional<Outcome> outcome,
             int device = -1, int64_t oom_index = -1);
  LogError& error(const Line& l, std::string_view kind);
  void version(std::string_view v, int64_t line);
  void version_hint(std::string_view v, std::string_view why, int64_t line);
};

inline void set_first(std::optional<LogFigure>& f, int64_t v, int64_t line) {
  if (!f) f = LogFigure{v, line};
}
inline void set_last(std::optional<LogFigure>& f, int64_t v, int64_t line) { f = LogFigure{v, line}; }
inline void set_first(std::optional<LogRatio>& f, double v, int64_t line) {
  if (!f) f = LogRatio{v, line};
}

// ---------- readers ----------
void read_sglang(Ctx& c, const Line& l);
void read_vllm(Ctx& c, const Line& l);
void read_trtllm(Ctx& c, const Line& l);
void read_llamacpp(Ctx& c, const Line& l);  // llama.cpp, llama-server and what wraps them (Ollama, LM Studio)
// Outcome, stage and device of a llama.cpp log from its failure lines (called by finish()).
void finish_llamacpp(LogScan& s);
void read_torch(Ctx& c, const Line& l);     // OOM, CUDA/NCCL errors, tracebacks, exceptions
void read_stages(Ctx& c, const Line& l);    // engine-neutral stage begin/end lines, failed worker methods
void read_args(Ctx& c, const Line& l);      // ServerArgs, vLLM config lines, launch commands, versions
void continue_pending(Ctx& c, const Line& l);  // feeds a line to multi-line messages in progress
// Pending kinds of the PyTorch reader (the vLLM reader's are below 10).
inline constexpr int kPendTorchOom = 10;
// A PyTorch OOM report wrapped over several lines: re-parses the joined text; false when complete.
bool continue_oom(Ctx& c, Pending& p);
bool continue_command(Ctx& c, const Line& l);  // joins command continuation lines; true if consumed
void finish_command(Ctx& c);
// Python repr "k=v, k2='x', ..." (ServerArgs/Namespace/engine config) or dict "{'k': v}" → pairs.
std::vector<std::pair<std::string, std::string>> parse_py_kwargs(std::string_view s, bool dict);
// Stage a traceback's frames point at ("" when none do).
std::string_view stage_of_function(std::string_view frame);

}  // namespace headroom::logscan_detail
