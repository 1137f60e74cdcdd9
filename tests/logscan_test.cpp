// Log readers (include/headroom/logscan.h): the real log lines of the corpus and the seed
// crash, replayed and checked against the figures the corpus records, plus messy inputs.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "headroom/error.h"
#include "headroom/logscan.h"
#include "headroom/units.h"

using namespace headroom;
using nlohmann::json;

namespace {

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<json> corpus() {
  std::vector<json> out;
  for (const char* name : {"sglang.jsonl", "vllm.jsonl"}) {
    std::ifstream f(std::string(HEADROOM_TEST_DATA) + "/corpus/" + name);
    std::string line;
    while (std::getline(f, line))
      if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

// The corpus `observed` field a summary figure answers to.
struct FieldMap {
  const char* observed;
  std::optional<LogFigure> LogFigures::*fig;
};
const FieldMap kFields[] = {
    {"init_avail_gib", &LogFigures::init_avail},
    {"weights_gib", &LogFigures::weights},
    {"post_weights_avail_gib", &LogFigures::post_weights_avail},
    {"kv_gib", &LogFigures::kv_bytes},
    {"pool_end_avail_gib", &LogFigures::pool_end_avail},
    {"graph_begin_avail_gib", &LogFigures::graph_begin_avail},
    {"graph_gib", &LogFigures::graph_bytes},
    {"graph_end_avail_gib", &LogFigures::graph_end_avail},
    {"activation_gib", &LogFigures::activation},
    {"non_torch_gib", &LogFigures::non_torch},
};

// What each corpus case's `raw` lets the readers extract, checked by hand against the raw text.
// Cases whose raw is prose or a table (not log lines) are listed with no fields: sglang-036
// (a summary), sglang-038 (JSON), vllm-025/026/031/035/036/042/043/066/083/084/085/087/090/091
// (tables, prose). A field not listed must not be extracted with a different value either.
const std::map<std::string, std::set<std::string>> kExpected = {
    {"sglang-001", {"init_avail_gib", "kv_tokens", "kv_gib", "pool_end_avail_gib", "graph_begin_avail_gib"}},
    {"sglang-002", {"kv_tokens", "kv_gib"}},
    {"sglang-003", {"weights_gib", "post_weights_avail_gib", "outcome"}},
    {"sglang-008", {"graph_gib", "graph_end_avail_gib"}},
    {"sglang-009", {"outcome", "error_message"}},
    {"sglang-012", {"error_message"}},
    {"sglang-014", {"weights_gib", "post_weights_avail_gib", "kv_tokens", "kv_gib", "pool_end_avail_gib"}},
    {"sglang-021", {"kv_tokens", "kv_gib", "pool_end_avail_gib", "graph_begin_avail_gib"}},
    {"sglang-024", {"weights_gib", "post_weights_avail_gib", "kv_tokens", "kv_gib", "pool_end_avail_gib", "graph_begin_avail_gib"}},
    {"sglang-025", {"weights_gib", "post_weights_avail_gib", "kv_tokens", "kv_gib", "pool_end_avail_gib", "graph_begin_avail_gib", "outcome"}},
    {"sglang-027", {"weights_gib", "post_weights_avail_gib", "outcome", "error_message"}},
    {"sglang-028", {"weights_gib", "post_weights_avail_gib", "kv_tokens", "kv_gib", "pool_end_avail_gib", "graph_begin_avail_gib"}},
    {"sglang-031", {"kv_tokens", "kv_gib", "pool_end_avail_gib", "graph_begin_avail_gib"}},
    {"sglang-033", {"error_message"}},  // the raw does not show the stage
    {"sglang-037", {"weights_gib", "post_weights_avail_gib", "kv_tokens", "kv_gib", "pool_end_avail_gib", "graph_begin_avail_gib"}},
    {"sglang-039", {"weights_gib", "post_weights_avail_gib", "kv_tokens", "kv_gib", "pool_end_avail_gib"}},
    {"sglang-040", {"outcome", "error_message"}},
    {"sglang-041", {"outcome", "error_message"}},
    {"vllm-001", {"kv_tokens", "kv_gib"}},
    {"vllm-004", {"weights_gib", "kv_gib", "outcome"}},
    {"vllm-005", {"kv_gib", "outcome", "error_message"}},
    {"vllm-006", {"outcome"}},
    {"vllm-008", {"kv_tokens", "kv_gib", "max_concurrency"}},
    {"vllm-009", {"kv_tokens", "kv_gib", "graph_gib", "error_message"}},
    {"vllm-012", {"kv_gib", "outcome", "error_message"}},
    {"vllm-014", {"kv_tokens", "kv_gib", "max_concurrency"}},
    {"vllm-016", {"outcome", "error_message"}},
    {"vllm-017", {"weights_gib", "kv_gib", "activation_gib", "non_torch_gib", "max_concurrency", "outcome"}},
    {"vllm-019", {"init_avail_gib", "weights_gib", "kv_tokens", "kv_gib", "graph_gib", "activation_gib", "non_torch_gib", "max_concurrency", "outcome"}},
    {"vllm-020", {"kv_tokens", "kv_gib", "max_concurrency"}},
    {"vllm-021", {"weights_gib", "kv_tokens", "kv_gib", "non_torch_gib", "max_concurrency", "outcome", "error_message"}},
    {"vllm-023", {"weights_gib", "kv_gib", "activation_gib", "non_torch_gib"}},
    {"vllm-024", {"outcome", "error_message"}},
    {"vllm-027", {"kv_tokens", "max_concurrency"}},
    {"vllm-029", {"kv_tokens", "kv_gib", "max_concurrency"}},
    {"vllm-030", {"kv_gib", "outcome", "error_message"}},
    {"vllm-033", {"weights_gib", "kv_gib"}},
    {"vllm-037", {"init_avail_gib", "kv_gib", "graph_gib", "activation_gib"}},
    {"vllm-039", {"outcome", "error_message"}},
    {"vllm-040", {"outcome", "error_message"}},
    {"vllm-041", {"outcome", "error_message"}},
    {"vllm-044", {"kv_tokens", "kv_gib", "max_concurrency"}},
    {"vllm-045", {"kv_tokens", "kv_gib", "max_concurrency"}},
    {"vllm-048", {"init_avail_gib", "weights_gib", "kv_tokens", "kv_gib", "graph_gib", "activation_gib", "non_torch_gib", "max_concurrency"}},
    {"vllm-052", {"init_avail_gib", "weights_gib", "kv_tokens", "kv_gib", "graph_gib", "activation_gib", "max_concurrency"}},
    {"vllm-053", {"init_avail_gib", "weights_gib", "kv_tokens", "kv_gib", "graph_gib", "activation_gib"}},
    {"vllm-054", {"init_avail_gib", "weights_gib", "kv_tokens", "kv_gib", "graph_gib", "activation_gib", "max_concurrency"}},
    {"vllm-055", {"weights_gib", "kv_tokens", "kv_gib", "graph_gib", "max_concurrency"}},
    {"vllm-057", {"kv_gib", "outcome", "error_message"}},
    {"vllm-058", {"weights_gib", "kv_tokens", "kv_gib", "graph_gib", "max_concurrency"}},
    {"vllm-059", {"error_message"}},
    {"vllm-060", {"weights_gib", "error_message"}},
    {"vllm-062", {"outcome", "error_message"}},
    {"vllm-067", {"init_avail_gib", "kv_gib"}},
    {"vllm-068", {"error_message"}},
    {"vllm-069", {"kv_tokens", "max_concurrency"}},
    {"vllm-071", {"init_avail_gib", "weights_gib", "kv_gib", "graph_gib", "activation_gib", "non_torch_gib"}},
    {"vllm-073", {"outcome", "error_message"}},
    {"vllm-075", {"kv_tokens", "kv_gib", "max_concurrency"}},
    {"vllm-078", {"init_avail_gib", "outcome", "error_message"}},
    {"vllm-079", {"init_avail_gib", "outcome", "error_message"}},
    {"vllm-080", {"init_avail_gib", "kv_tokens", "kv_gib", "graph_gib", "activation_gib", "max_concurrency"}},
    {"vllm-082", {"init_avail_gib", "kv_tokens", "kv_gib", "graph_gib", "activation_gib", "max_concurrency"}},
    {"vllm-092", {"kv_tokens", "max_concurrency"}},
    {"vllm-093", {"kv_gib"}},
    {"vllm-094", {"kv_gib"}},
};

struct Compared {
  std::string id, field;
  bool extracted = false, equal = false;
  std::string got, want;
};

// Compares one case; returns the per-field results for every observed field that is set.
std::vector<Compared> compare_case(const json& c, const LogScan& s) {
  std::vector<Compared> out;
  const json& obs = c["observed"];
  const std::string id = c["id"];
  for (const auto& f : kFields) {
    if (!obs.contains(f.observed) || obs[f.observed].is_null()) continue;
    Compared r{id, f.observed};
    double want = obs[f.observed].get<double>();
    r.want = std::to_string(want);
    const auto& got = s.summary.*(f.fig);
    if (got) {
      r.extracted = true;
      // SGLang/vLLM print two decimals (vLLM weights four); the corpus copies them.
      r.equal = std::fabs(to_gib(got->value) - want) < 0.00501;
      r.got = std::to_string(to_gib(got->value));
    }
    out.push_back(r);
  }
  if (obs.contains("kv_tokens") && !obs["kv_tokens"].is_null()) {
    Compared r{id, "kv_tokens"};
    r.want = std::to_string(obs["kv_tokens"].get<int64_t>());
    if (s.summary.kv_tokens) {
      r.extracted = true;
      r.got = std::to_string(s.summary.kv_tokens->value);
      r.equal = r.got == r.want;
    }
    out.push_back(r);
  }
  if (obs.contains("max_concurrency") && !obs["max_concurrency"].is_null()) {
    Compared r{id, "max_concurrency"};
    r.want = std::to_string(obs["max_concurrency"].get<double>());
    if (s.summary.max_concurrency) {
      r.extracted = true;
      r.got = std::to_string(s.summary.max_concurrency->value);
      r.equal = std::fabs(s.summary.max_concurrency->value - obs["max_concurrency"].get<double>()) < 0.00501;
    }
    out.push_back(r);
  }
  if (obs.contains("outcome") && !obs["outcome"].is_null()) {
    Compared r{id, "outcome"};
    r.want = obs["outcome"];
    if (s.outcome && s.outcome != Outcome::Oom) {
      r.extracted = true;
      r.got = name(*s.outcome);
      r.equal = r.got == r.want;
    }
    out.push_back(r);
  }
  if (obs.contains("error_message") && !obs["error_message"].is_null()) {
    // The error line must be one the reader kept, as an OOM report or an error.
    Compared r{id, "error_message"};
    r.want = "an error line";
    if (!s.ooms.empty() || !s.errors.empty()) {
      r.extracted = true;
      r.equal = true;
      r.got = !s.ooms.empty() ? "oom line " + std::to_string(s.ooms[0].line) : s.errors[0].kind;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace

// Every case of the corpus with a raw log: the figures its raw shows must come out equal to the
// corpus `observed` values; nothing extracted may disagree with them.
TEST(LogScanCorpus, ReplaysRawLogs) {
  auto cases = corpus();
  ASSERT_EQ(cases.size(), 90u);
  int compared = 0, expected_total = 0, extracted_equal = 0;
  for (const auto& c : cases) {
    const std::string id = c["id"];
    if (c["raw"].is_null()) continue;
    LogScan s = scan_log_text(c["raw"].get<std::string>(), id);
    auto it = kExpected.find(id);
    std::set<std::string> expected = it == kExpected.end() ? std::set<std::string>{} : it->second;
    for (const auto& r : compare_case(c, s)) {
      ++compared;
      bool want = expected.count(r.field) > 0;
      if (want) {
        ++expected_total;
        EXPECT_TRUE(r.extracted) << id << " " << r.field << ": not extracted (corpus " << r.want << ")";
      }
      if (r.extracted) {
        if (r.field == "outcome" && !want) continue;  // a guess where the raw does not show the cause
        EXPECT_TRUE(r.equal) << id << " " << r.field << ": got " << r.got << ", corpus " << r.want;
        if (r.equal) ++extracted_equal;
      }
    }
  }
  // Coverage figure quoted in the report: fields extracted and equal / fields the raws show.
  std::printf("corpus fields compared %d, expected from raws %d, extracted and equal %d\n", compared, expected_total,
              extracted_equal);
  EXPECT_GE(extracted_equal, expected_total);
}

// The seed crash (tests/data/seed/seed-crash.log): TP4 in CUDA-graph capture, PyTorch 2.4+ OOM.
TEST(LogScanSeed, SeedCrash) {
  LogScan s = scan_log_file(std::string(HEADROOM_TEST_DATA) + "/seed/seed-crash.log");
  EXPECT_EQ(s.engine, LogEngine::SGLang);
  ASSERT_EQ(s.ooms.size(), 1u);
  const LogOom& o = s.ooms[0];
  EXPECT_EQ(o.line, 3);
  EXPECT_EQ(o.backend, "CUDA");
  EXPECT_EQ(o.form, "torch2.1+");
  EXPECT_EQ(o.device, 4);
  EXPECT_EQ(o.request, 694 * MiB);                                   // "Tried to allocate 694.00 MiB"
  EXPECT_EQ(gib2(o.total), "94.97");                                 // "total capacity of 94.97 GiB"
  EXPECT_EQ(o.free, static_cast<int64_t>(std::llround(247.44 * MiB)));  // "of which 247.44 MiB is free"
  EXPECT_EQ(gib2(o.process_in_use), "94.72");
  EXPECT_EQ(gib2(o.allocated), "87.43");
  EXPECT_EQ(gib2(o.reserved_unallocated), "6.44");
  EXPECT_EQ(o.private_pools, -1);
  EXPECT_TRUE(o.hint_expandable_segments);
  EXPECT_FALSE(o.truncated);
  ASSERT_EQ(s.ranks.size(), 1u);  // TP4 (the OOM line has no prefix; it names GPU 4)
  const LogRankMemory& tp4 = s.ranks[0];
  EXPECT_EQ(tp4.rank.tp, 4);
  EXPECT_EQ(tp4.rank.label, "TP4");
  ASSERT_TRUE(tp4.fig.graph_begin_avail);
  EXPECT_EQ(gib2(tp4.fig.graph_begin_avail->value), "0.96");  // "avail mem=0.96 GB"
  EXPECT_EQ(tp4.fig.graph_begin_avail->line, 1);
  EXPECT_EQ(tp4.fig.graph_bs, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(tp4.stage, "cuda_graph");
  EXPECT_EQ(s.failure_stage, "cuda_graph");
  EXPECT_EQ(s.outcome, Outcome::OomGraph);
  EXPECT_EQ(s.failure_device, 4);
  EXPECT_EQ(s.failure_line, 3);
  EXPECT_EQ(s.line_text(1).substr(0, 32), "[TP4] Capture cuda graph begin. ");
}

// ---------------------------------------------------------------------------------------------
// PyTorch OOM templates, version by version (research/allocator-runtime.md §2.2).

namespace {
LogOom only_oom(std::string_view text) {
  LogScan s = scan_log_text(text, "t");
  EXPECT_EQ(s.ooms.size(), 1u) << text;
  return s.ooms.empty() ? LogOom{} : s.ooms[0];
}
int64_t gib(double x) { return static_cast<int64_t>(std::llround(x * static_cast<double>(GiB))); }
int64_t mib(double x) { return static_cast<int64_t>(std::llround(x * static_cast<double>(MiB))); }
}  // namespace

TEST(LogScanOom, Torch110To20Form) {
  // <= 2.0 template with "reserved in total by PyTorch"; unallocated = 13.86 - 13.58 GiB.
  LogOom o = only_oom(
      "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.76 GiB total capacity; 13.58 GiB "
      "already allocated; 7.75 MiB free; 13.86 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
      "memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and "
      "PYTORCH_CUDA_ALLOC_CONF\n");
  EXPECT_EQ(o.form, "torch<=2.0");
  EXPECT_EQ(o.backend, "CUDA");
  EXPECT_EQ(o.device, 0);
  EXPECT_EQ(o.request, 20 * MiB);
  EXPECT_EQ(o.total, gib(14.76));
  EXPECT_EQ(o.allocated, gib(13.58));
  EXPECT_EQ(o.free, mib(7.75));
  EXPECT_EQ(o.reserved_unallocated, gib(13.86) - gib(13.58));
  EXPECT_FALSE(o.hint_expandable_segments);
}

TEST(LogScanOom, TorchCachedForm) {
  // pre-1.5 "cached" wording: the cached figure is the reserved-but-unallocated memory.
  LogOom o = only_oom(
      "RuntimeError: CUDA out of memory. Tried to allocate 24.00 MiB (GPU 1; 11.17 GiB total capacity; 10.53 GiB "
      "already allocated; 9.81 MiB free; 286.39 MiB cached)");
  EXPECT_EQ(o.device, 1);
  EXPECT_EQ(o.reserved_unallocated, mib(286.39));
  EXPECT_EQ(o.allocated, gib(10.53));
}

TEST(LogScanOom, Torch21TypoWithAllowedAndProcesses) {
  // 2.1: "capacty" typo; a memory fraction prints "L allowed;"; NVML lists other processes.
  LogOom o = only_oom(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacty of "
      "79.15 GiB of which 1.03 GiB is free. Process 1234 has 60.00 GiB memory in use. Including non-PyTorch "
      "memory, this process has 18.11 GiB memory in use. 70.00 GiB allowed; Of the allocated memory 15.50 GiB is "
      "allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated. If reserved but unallocated "
      "memory is large try setting max_split_size_mb to avoid fragmentation.");
  EXPECT_EQ(o.form, "torch2.1+");
  EXPECT_EQ(o.total, gib(79.15));
  EXPECT_EQ(o.free, gib(1.03));
  EXPECT_EQ(o.process_in_use, gib(18.11));
  ASSERT_EQ(o.other_processes.size(), 1u);
  EXPECT_EQ(o.other_processes[0].first, 1234);
  EXPECT_EQ(o.other_processes[0].second, gib(60.0));
  EXPECT_EQ(o.allowed, gib(70.0));
  EXPECT_EQ(o.allocated, gib(15.50));
  EXPECT_EQ(o.reserved_unallocated, gib(1.20));
}

TEST(LogScanOom, Torch24PrivatePoolsFromVllm073) {
  // corpus vllm-073 (real vLLM log): 2.4+ adds "with P allocated in private pools (e.g., CUDA Graphs)".
  LogScan s = scan_log_text(
      "(VllmWorker rank=1 pid=4731) ERROR 05-09 10:47:36 [multiproc_executor.py:470] torch.OutOfMemoryError: CUDA out "
      "of memory. Tried to allocate 150.00 MiB. GPU 1 has a total capacity of 21.99 GiB of which 39.00 MiB is free. "
      "Process 1779404 has 21.94 GiB memory in use. Of the allocated memory 15.75 GiB is allocated by PyTorch, with "
      "35.88 MiB allocated in private pools (e.g., CUDA Graphs), and 92.31 MiB is reserved by PyTorch but unallocated.",
      "vllm-073");
  ASSERT_EQ(s.ooms.size(), 1u);
  const LogOom& o = s.ooms[0];
  EXPECT_EQ(o.rank.worker, 1);
  EXPECT_EQ(o.rank.label, "VllmWorker rank=1");
  EXPECT_EQ(o.device, 1);
  EXPECT_EQ(o.request, mib(150));
  EXPECT_EQ(o.process_in_use, gib(21.94));  // the container's own PID shows as "Process N"
  EXPECT_EQ(o.allocated, gib(15.75));
  EXPECT_EQ(o.private_pools, mib(35.88));
  EXPECT_EQ(o.reserved_unallocated, mib(92.31));
  // No stage line in this excerpt: free blocks in graph private pools mean a capture was running,
  // a reading of the message's figures alone (the diagnosis may hold them against a forecast).
  EXPECT_EQ(s.failure_stage, "cuda_graph");
  EXPECT_EQ(s.failure_basis, StageBasis::Numbers);
}

TEST(LogScanTrt, CppRuntimeOutOfMemoryIsAnOom) {
  // NVIDIA/TensorRT-LLM#3636 (0.18 C++ runtime, common/cudaUtils.h check()): the CUDA error text
  // inside "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(...): out of memory (file:line)".
  LogScan s = scan_log_text(
      "RuntimeError: Encountered an error in forwardAsync function: [TensorRT-LLM][ERROR] CUDA runtime error in "
      "::cudaMallocAsync(ptr, n, mMemPool->getPool(), mCudaStream->get()): out of memory "
      "(/home/jenkins/agent/workspace/LLM/release-0.18/L0_Test-x86_64/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:125)\n",
      "t");
  ASSERT_EQ(s.ooms.size(), 1u);
  EXPECT_EQ(s.ooms[0].form, "cuda_error");
  EXPECT_FALSE(s.failure_basis);
}

TEST(LogScanVllm, V0BlockCountAndCompileLinesAreStages) {
  // V0 llm_engine.py "# GPU blocks: N" (vllm#2418) is logged before initialize_cache checks and
  // allocates the cache; V1 compilation/monitor.py "torch.compile takes" (vllm#17431) ends the
  // first (profile) run after the weights.
  LogScan a = scan_log_text("INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 229, # CPU blocks: 512\n", "t");
  ASSERT_EQ(a.ranks.size(), 1u);
  EXPECT_EQ(a.ranks[0].stage, "kv_pool");
  LogScan b = scan_log_text("INFO 04-30 10:20:35 [monitor.py:33] torch.compile takes 13.93 s in total\n", "t");
  ASSERT_EQ(b.ranks.size(), 1u);
  EXPECT_EQ(b.ranks[0].stage, "warmup");
}

TEST(LogScanOom, HipMessage) {
  // A real ROCm log (public repository): "HIP out of memory", "0 bytes" figures, PYTORCH_HIP_ALLOC_CONF, cut.
  LogOom o = only_oom(
      "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 978.00 MiB. GPU 0 has a total capacity of 15.98 "
      "GiB of which 630.00 MiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is "
      "reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
      "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to av");
  EXPECT_EQ(o.backend, "HIP");
  EXPECT_EQ(o.request, mib(978));
  EXPECT_EQ(o.total, gib(15.98));
  EXPECT_EQ(o.free, mib(630));
  EXPECT_EQ(o.allocated, 0);
  EXPECT_EQ(o.reserved_unallocated, 0);
  EXPECT_TRUE(o.hint_expandable_segments);
}

TEST(LogScanOom, TruncatedMessageFromSglang040) {
  // corpus sglang-040: the line is cut inside "is allocated by PyTorch"; complete fields are kept,
  // and the traceback above it (init_memory_pool → _create_buffers) names the stage.
  auto cases = corpus();
  for (const auto& c : cases) {
    if (c["id"] != "sglang-040") continue;
    LogScan s = scan_log_text(c["raw"].get<std::string>(), "sglang-040");
    ASSERT_EQ(s.ooms.size(), 1u);
    const LogOom& o = s.ooms[0];
    EXPECT_TRUE(o.truncated);
    EXPECT_EQ(o.request, 32 * MiB);
    EXPECT_EQ(o.total, gib(23.52));
    EXPECT_EQ(o.free, 13 * MiB);
    EXPECT_EQ(o.process_in_use, gib(23.48));
    EXPECT_EQ(o.allocated, gib(22.67));
    EXPECT_EQ(o.reserved_unallocated, -1);
    ASSERT_EQ(s.tracebacks.size(), 1u);
    EXPECT_EQ(s.tracebacks[0].stage, "kv_pool");
    EXPECT_EQ(s.tracebacks[0].exception, "torch.OutOfMemoryError");
    EXPECT_EQ(s.tracebacks[0].functions.front(), "model_runner.py:init_memory_pool");
    EXPECT_EQ(s.outcome, Outcome::OomKv);
    return;
  }
  FAIL() << "sglang-040 not in the corpus";
}

TEST(LogScanOom, AllocatorWarningAndRawErrors) {
  // corpus sglang-033: the caching allocator's warning, in bytes.
  LogScan s = scan_log_text(
      "[rank1]:[W906 07:46:05.008634648 CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 1 "
      "while trying to allocate 4334813184 bytes (free: 3779919872, total: 287431131136).\n"
      "RuntimeError: CUDA error: out of memory\n"
      "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n",
      "t");
  ASSERT_EQ(s.ooms.size(), 3u);
  EXPECT_EQ(s.ooms[0].form, "cca_warning");
  EXPECT_EQ(s.ooms[0].device, 1);
  EXPECT_EQ(s.ooms[0].rank.worker, 1);
  EXPECT_EQ(s.ooms[0].request, 4334813184);
  EXPECT_EQ(s.ooms[0].free, 3779919872);
  EXPECT_EQ(s.ooms[0].total, 287431131136);
  EXPECT_EQ(s.ooms[1].form, "cuda_error");
  EXPECT_EQ(s.ooms[2].form, "cublas");
}

TEST(LogScanOom, NcclErrors) {
  LogScan s = scan_log_text(
      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
      "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
      "ncclUnhandledCudaError: Call to CUDA function failed.\n"
      "Last error:\n"
      "Cuda failure 'out of memory'\n",
      "t");
  ASSERT_GE(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].kind, "nccl");
  EXPECT_EQ(s.errors[0].line, 1);
  ASSERT_EQ(s.ooms.size(), 1u);
  EXPECT_EQ(s.ooms[0].form, "nccl");
  EXPECT_EQ(s.ooms[0].line, 4);
}

TEST(LogScanOom, HintTextIsNotAnOom) {
  // vLLM's pre-capture hint and SGLang's advice mention memory but report nothing.
  LogScan s = scan_log_text(
      "INFO 03-27 10:29:03 [model_runner.py:1442] If out-of-memory error occurs during cudagraph capture, consider "
      "decreasing `gpu_memory_utilization` or switching to eager mode.\n"
      "CUDA graphs can take additional 1~3 GiB memory per GPU. If you are running out of memory, consider decreasing "
      "`gpu_memory_utilization` or enforcing eager mode.\n",
      "t");
  EXPECT_TRUE(s.ooms.empty());
  EXPECT_FALSE(s.outcome);
}

// ---------------------------------------------------------------------------------------------
// SGLang lines, ranks, arguments.

TEST(LogScanSglang, InterleavedRanksAndSummary) {
  // Lines in SGLang's format (research/sglang-memory.md §1.2), four ranks out of order.
  std::string log =
      "[2025-10-16 09:06:09 TP2] Init torch distributed ends. mem usage=1.96 GB\n"
      "[2025-10-16 09:06:09 TP0] Init torch distributed ends. mem usage=1.95 GB\n"
      "[2025-10-16 09:06:10 TP0] Load weight begin. avail mem=137.34 GB\n"
      "[2025-10-16 09:06:10 TP1] Load weight begin. avail mem=137.30 GB\n"
      "[2025-10-16 09:06:20 TP1] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=119.91 GB, mem usage=17.39 GB.\n"
      "[2025-10-16 09:06:20 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=119.95 GB, mem usage=17.39 GB.\n"
      "[2025-10-16 09:06:22 TP1] KV Cache is allocated. #tokens: 2795207, K size: 53.31 GB, V size: 53.31 GB\n"
      "[2025-10-16 09:06:22 TP0] KV Cache is allocated. #tokens: 2795207, K size: 53.31 GB, V size: 53.31 GB\n"
      "[2025-10-16 09:06:22 TP0] Memory pool end. avail mem=11.87 GB\n"
      "[2025-10-16 09:06:22 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=11.82 GB\n"
      "[2025-10-16 09:06:22 TP0] Capture cuda graph bs [1, 2, 4, 8, 16]\n"
      "[2025-10-16 09:06:40 TP0] Capture cuda graph end. Time elapsed: 18.02 s. mem usage=0.61 GB. avail mem=11.21 GB.\n"
      "[2025-10-16 09:06:41 TP0] max_total_num_tokens=2795207, chunked_prefill_size=8192, max_prefill_tokens=16384, "
      "max_running_requests=4096, context_len=131072, available_gpu_mem=11.21 GB\n"
      "[2025-10-16 09:06:45] The server is fired up and ready to roll!\n";
  LogScan s = scan_log_text(log, "t");
  EXPECT_EQ(s.engine, LogEngine::SGLang);
  EXPECT_EQ(s.model_class, "LlamaForCausalLM");
  // unprefixed (the ready line), TP0, TP1, TP2 — in that order
  ASSERT_EQ(s.ranks.size(), 4u);
  EXPECT_EQ(s.ranks[0].rank.label, "");
  EXPECT_EQ(s.ranks[1].rank.label, "TP0");
  EXPECT_EQ(s.ranks[2].rank.label, "TP1");
  EXPECT_EQ(s.ranks[3].rank.label, "TP2");
  const LogFigures& f = s.summary;
  EXPECT_EQ(f.init_used->value, gib(1.95));  // TP0 wins over TP2's 1.96
  EXPECT_EQ(f.init_used->line, 2);
  EXPECT_EQ(f.init_avail->value, gib(137.34));
  EXPECT_EQ(f.weights->value, gib(17.39));
  EXPECT_EQ(f.post_weights_avail->value, gib(119.95));
  EXPECT_EQ(f.post_weights_avail->line, 6);
  EXPECT_EQ(f.kv_tokens->value, 2795207);
  EXPECT_EQ(f.kv_bytes->value, gib(53.31) * 2);
  EXPECT_EQ(f.pool_end_avail->value, gib(11.87));
  EXPECT_EQ(f.graph_begin_avail->value, gib(11.82));
  EXPECT_EQ(f.graph_bs, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(f.graph_bytes->value, gib(0.61));
  EXPECT_EQ(f.graph_end_avail->value, gib(11.21));
  EXPECT_EQ(f.max_total_num_tokens->value, 2795207);
  EXPECT_EQ(f.max_running_requests->value, 4096);
  EXPECT_EQ(f.context_len->value, 131072);
  EXPECT_EQ(f.chunked_prefill_size->value, 8192);
  EXPECT_EQ(f.available_gpu_mem->value, gib(11.21));
  EXPECT_EQ(s.ranks[2].fig.post_weights_avail->value, gib(119.91));  // TP1 keeps its own
  EXPECT_EQ(s.ranks[2].stage, "kv_pool");
  EXPECT_EQ(s.outcome, Outcome::Ok);
  EXPECT_EQ(s.failure_stage, "");
}

TEST(LogScanSglang, DpAttentionPrefixAndNewCaptureLines) {
  // 2026 capture lines (research/sglang-memory.md §1.1): prefill then decode, draft kept apart.
  std::string log =
      "[2026-07-15 13:14:53 DP1 TP3 EP3] Capture target prefill CUDA graph begin. backend=breakable, "
      "num_tokens=[512, 1024, 2048], avail mem=9.50 GB\n"
      "[2026-07-15 13:14:58 DP1 TP3 EP3] Capture target prefill CUDA graph end. elapsed=5.02 s, mem usage=1.25 GB, avail mem=8.25 GB.\n"
      "[2026-07-15 13:14:58 DP1 TP3 EP3] Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, "
      "bs=[1, 2, 4, 8], avail mem=8.25 GB\n"
      "[2026-07-15 13:15:01 DP1 TP3 EP3] Capture target decode CUDA graph end. elapsed=3.21 s, mem usage=0.52 GB, avail mem=7.73 GB.\n"
      "[2026-07-15 13:15:02 DP1 TP3 EP3] Capture draft decode CUDA graph begin. backend=full, bs=[1, 2], avail mem=7.70 GB\n"
      "[2026-07-15 13:15:03 DP1 TP3 EP3] Capture draft decode CUDA graph end. elapsed=1.00 s, mem usage=0.20 GB, avail mem=7.50 GB.\n";
  LogScan s = scan_log_text(log, "t");
  ASSERT_EQ(s.ranks.size(), 1u);
  const LogRank& r = s.ranks[0].rank;
  EXPECT_EQ(r.label, "DP1 TP3 EP3");
  EXPECT_EQ(r.dp, 1);
  EXPECT_EQ(r.tp, 3);
  EXPECT_EQ(r.ep, 3);
  const LogFigures& f = s.ranks[0].fig;
  EXPECT_EQ(f.graph_begin_avail->value, gib(9.50));
  EXPECT_EQ(f.graph_bytes->value, gib(1.25) + gib(0.52));  // target prefill + decode, not the draft
  EXPECT_EQ(f.graph_end_avail->value, gib(7.73));
  EXPECT_EQ(f.graph_bs, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(s.evidence[4].kind, "sglang.capture_draft decode_begin");
}

TEST(LogScanSglang, TqdmCarriageReturnsAnsiAndCrlf) {
  // tqdm redraws one physical line with '\r'; colours and Windows line ends around it.
  std::string log =
      "\x1b[32m[2025-04-13 20:20:23 TP0]\x1b[0m Capture cuda graph begin. This can take up to several minutes. avail mem=3.12 GB\r\n"
      "Capturing batches (bs=4 avail_mem=3.12 GB):   0%|          | 0/4 [00:00<?, ?it/s]\r"
      "Capturing batches (bs=2 avail_mem=3.05 GB):  25%|##5       | 1/4 [00:01<00:03,  1.0s/it]\r"
      "Capturing batches (bs=1 avail_mem=2.98 GB):  50%|#####     | 2/4 [00:02<00:02,  1.0s/it]\r\n"
      "[2025-04-13 20:20:24 TP0] Scheduler hit an exception: Traceback (most recent call last):\r\n";
  LogScan s = scan_log_text(log, "t");
  const LogFigures& f = s.summary;
  EXPECT_EQ(f.graph_begin_avail->value, gib(3.12));
  EXPECT_EQ(f.graph_progress_bs->value, 1);
  EXPECT_EQ(f.graph_progress_avail->value, gib(2.98));
  EXPECT_EQ(f.graph_progress_avail->line, 2);
  EXPECT_EQ(s.ranks.back().rank.label, "TP0");
  EXPECT_EQ(s.line_text(1).substr(0, 26), "[2025-04-13 20:20:23 TP0] ");  // ANSI gone
  EXPECT_EQ(s.outcome, Outcome::OtherError);  // corpus sglang-025: the scheduler died in capture, not of OOM
  EXPECT_EQ(s.failure_line, 3);
}

TEST(LogScanSglang, RefusalsWithNumbers) {
  LogScan a = scan_log_text(
      "[2025-07-02 07:41:59 DP0 TP0] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
      "Current value: mem_fraction_static=0.805\n",
      "t");
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_EQ(a.errors[0].kind, "sglang_not_enough_memory");
  EXPECT_EQ(a.errors[0].exception, "RuntimeError");
  EXPECT_DOUBLE_EQ(*a.errors[0].fraction, 0.805);
  EXPECT_EQ(a.outcome, Outcome::RefusedKv);
  EXPECT_EQ(a.failure_stage, "kv_pool");
  // The 2026 wording (sgl-project/sglang kv_cache_configurator.py) with the suggested fraction.
  LogScan b = scan_log_text(
      "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88. Raise "
      "--mem-fraction-static above 0.912 (minimum viable = 1 - available/pre = 0.9113). If using speculative "
      "decoding, draft weights are now counted\n",
      "t");
  ASSERT_EQ(b.errors.size(), 1u);
  EXPECT_EQ(b.errors[0].kind, "sglang_weights_leave_no_kv");
  EXPECT_DOUBLE_EQ(*b.errors[0].fraction, 0.88);
  EXPECT_DOUBLE_EQ(*b.errors[0].suggested, 0.912);
  EXPECT_EQ(b.outcome, Outcome::RefusedKv);
}

TEST(LogScanArgs, SglangServerArgsDump) {
  LogScan s = scan_log_text(
      "[2026-01-10 10:00:00] server_args=ServerArgs(model_path='nvidia/GLM-5-NVFP4', tokenizer_path='nvidia/GLM-5-NVFP4', "
      "tp_size=8, mem_fraction_static=0.95, cuda_graph_max_bs=None, disable_cuda_graph=False, "
      "enable_dp_attention=True, kv_cache_dtype='auto', json_model_override_args='{}', cuda_graph_bs=[1, 2, 4, 8], "
      "dtype='auto', served_model_name='a, b', speculative_algorithm=None, quantization='modelopt_fp4', "
      "weird='it\\'s')\n",
      "t");
  ASSERT_EQ(s.arg_sets.size(), 1u);
  EXPECT_EQ(s.arg_sets[0].source, "sglang_server_args");
  EXPECT_EQ(s.engine, LogEngine::SGLang);
  EXPECT_EQ(s.flags.at("--model-path"), "nvidia/GLM-5-NVFP4");
  EXPECT_EQ(s.flags.at("--tp-size"), "8");
  EXPECT_EQ(s.flags.at("--mem-fraction-static"), "0.95");
  EXPECT_EQ(s.flags.count("--cuda-graph-max-bs"), 0u);  // None: the engine's default
  EXPECT_EQ(s.flags.at("--disable-cuda-graph"), "false");
  EXPECT_EQ(s.flags.at("--enable-dp-attention"), "true");
  EXPECT_EQ(s.flags.at("--cuda-graph-bs"), "[1, 2, 4, 8]");
  EXPECT_EQ(s.flags.at("--json-model-override-args"), "{}");
  EXPECT_EQ(s.flags.at("--served-model-name"), "a, b");
  EXPECT_EQ(s.flags.at("--quantization"), "modelopt_fp4");
  EXPECT_EQ(s.flags.at("--weird"), "it's");
}

TEST(LogScanArgs, LaunchCommandsAndContinuations) {
  LogScan s = scan_log_text(
      "$ CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model nvidia/GLM-5-NVFP4 --tp 8 \\\n"
      "    --mem-fraction-static 0.95 --trust-remote-code \\\n"
      "    --cuda-graph-max-bs=64 --context-length 65536\n"
      "[2026-01-10 10:00:00 TP0] Load weight begin. avail mem=93.50 GB\n",
      "t");
  ASSERT_EQ(s.arg_sets.size(), 1u);
  EXPECT_EQ(s.arg_sets[0].source, "command");
  EXPECT_EQ(s.arg_sets[0].line, 1);
  EXPECT_EQ(s.flags.at("--model-path"), "nvidia/GLM-5-NVFP4");
  EXPECT_EQ(s.flags.at("--tp-size"), "8");
  EXPECT_EQ(s.flags.at("--mem-fraction-static"), "0.95");
  EXPECT_EQ(s.flags.at("--trust-remote-code"), "true");
  EXPECT_EQ(s.flags.at("--cuda-graph-max-bs"), "64");
  EXPECT_EQ(s.flags.at("--context-length"), "65536");
  EXPECT_EQ(s.summary.init_avail->value, gib(93.50));  // the line after the command is still read
  EXPECT_EQ(s.summary.init_avail->line, 4);

  // corpus vllm-073: "vllm serve MODEL" then one flag per line without backslashes.
  LogScan v = scan_log_text(
      "CUDA_VISIBLE_DEVICES=0,1,2,3\nvllm serve /root/Qwen/Qwen3-30B-A3B\n--tensor-parallel-size 4\n--max-model-len 8192\n"
      "--gpu-memory-utilization 0.7\n",
      "vllm-073");
  ASSERT_EQ(v.arg_sets.size(), 1u);
  EXPECT_EQ(v.flags.at("--model"), "/root/Qwen/Qwen3-30B-A3B");
  EXPECT_EQ(v.flags.at("--tensor-parallel-size"), "4");
  EXPECT_EQ(v.flags.at("--max-model-len"), "8192");
  EXPECT_EQ(v.flags.at("--gpu-memory-utilization"), "0.7");
  EXPECT_EQ(v.engine, LogEngine::VLLM);
}

TEST(LogScanArgs, ContainerPrefixesOnCommandLinesAndMessages) {
  // The same vllm-073 command as `docker compose logs` prints it ("name-1  | " before every
  // line) and as `docker logs -t` / `kubectl logs --timestamps` do (an RFC 3339 stamp first):
  // the wrapped flag lines still belong to the command, and the vLLM stage lines still read.
  // Also journald's syslog form ("Jun  1 10:00:00 HOST IDENT[PID]: ") of a systemd service.
  for (std::string prefix : {"vllm-server-1  | ", "2025-05-09T10:47:30.123456789Z ", "May  9 10:47:30 gpu-node-3 vllm[1234]: "}) {
    std::string text;
    for (std::string line : {"vllm serve /root/Qwen/Qwen3-30B-A3B", "--tensor-parallel-size 4", "--max-model-len 8192",
                             "(VllmWorker rank=0 pid=4730) INFO 05-09 10:47:31 [gpu_model_runner.py:1347] Model loading took 14.2474 GiB and 5.5 seconds"})
      text += prefix + line + "\n";
    LogScan v = scan_log_text(text, "vllm-073");
    ASSERT_EQ(v.arg_sets.size(), 1u) << prefix;
    EXPECT_EQ(v.flags.at("--tensor-parallel-size"), "4") << prefix;
    EXPECT_EQ(v.flags.at("--max-model-len"), "8192") << prefix;
    ASSERT_TRUE(v.summary.weights.has_value()) << prefix;
    EXPECT_EQ(v.summary.weights->value, gib(14.2474)) << prefix;
  }
}

TEST(LogScanArgs, TheModelRunnerALogShowsIsKeptForTheReplan) {
  // "Model loading took" from model_runner.py is Model Runner V2 (xvllm-064's log; V0 printed
  // "Loading model weights took" from its own model_runner.py); from gpu_model_runner.py the V1
  // runner. V2 is kept always, V1 when no version is logged (the newest rules run V2 everywhere).
  LogScan v2 = scan_log_text("(Worker_TP0 pid=5) INFO 07-14 09:49:02 [model_runner.py:407] Model loading took 7.39 GiB memory and 9.1 seconds\n", "t");
  EXPECT_EQ(v2.flags.at("--env:VLLM_USE_V2_MODEL_RUNNER"), "1");
  LogScan v1 = scan_log_text("(EngineCore_DP0 pid=1) INFO 09-01 10:00:00 [gpu_model_runner.py:2914] Model loading took 15.27 GiB memory and 5.1 seconds\n", "t");
  EXPECT_EQ(v1.flags.at("--env:VLLM_USE_V2_MODEL_RUNNER"), "0");
  LogScan v1_versioned = scan_log_text(
      "INFO 09-01 09:59:00 [__init__.py:239] vLLM version: 0.27.1\n"
      "(EngineCore_DP0 pid=1) INFO 09-01 10:00:00 [gpu_model_runner.py:2914] Model loading took 15.27 GiB memory and 5.1 seconds\n",
      "t");
  EXPECT_EQ(v1_versioned.engine_version, "0.27.1");
  EXPECT_EQ(v1_versioned.flags.count("--env:VLLM_USE_V2_MODEL_RUNNER"), 0u);
  // MRV2's own startup line ("At startup, MRV2 logs `Using V2 Model Runner`", vLLM blog 2026-08-31).
  LogScan said = scan_log_text("(EngineCore pid=9) INFO 10-01 10:00:00 [vllm.py:812] Using V2 Model Runner\n", "t");
  EXPECT_EQ(said.flags.at("--env:VLLM_USE_V2_MODEL_RUNNER"), "1");
  LogScan v0 = scan_log_text("INFO 01-02 03:04:05 [model_runner.py:1099] Loading model weights took 14.99 GB\n", "t");
  EXPECT_EQ(v0.flags.count("--env:VLLM_USE_V2_MODEL_RUNNER"), 0u);
}

TEST(LogScanArgs, VllmConfigLinesAndVersion) {
  // vLLM's startup lines (vllm/entrypoints/utils.py "non-default args", vllm/v1/engine/core.py config line).
  LogScan s = scan_log_text(
      "(APIServer pid=192421) INFO 08-06 10:25:20 [api_server.py:1805] vLLM API server version 0.10.1.1\n"
      "(APIServer pid=192421) INFO 08-06 10:25:20 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-4B', "
      "'max_model_len': 131072, 'enforce_eager': False, 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.9}\n"
      "(EngineCore_0 pid=192500) INFO 08-06 10:25:25 [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) with "
      "config: model='Qwen/Qwen3-4B', speculative_config=None, tokenizer='Qwen/Qwen3-4B', dtype=torch.bfloat16, "
      "max_seq_len=131072, tensor_parallel_size=2, quantization=None, enforce_eager=False, kv_cache_dtype=auto, "
      "compilation_config={\"level\":3,\"cudagraph_capture_sizes\":[8,4,2,1]}, seed=0\n",
      "t");
  EXPECT_EQ(s.engine, LogEngine::VLLM);
  EXPECT_EQ(s.engine_version, "0.10.1.1");
  EXPECT_EQ(s.engine_version_line, 1);
  ASSERT_EQ(s.arg_sets.size(), 2u);
  EXPECT_EQ(s.arg_sets[0].source, "vllm_non_default");
  EXPECT_EQ(s.arg_sets[1].source, "vllm_engine_config");
  EXPECT_EQ(s.flags.at("--model"), "Qwen/Qwen3-4B");
  EXPECT_EQ(s.flags.at("--max-model-len"), "131072");
  EXPECT_EQ(s.flags.at("--tensor-parallel-size"), "2");
  EXPECT_EQ(s.flags.at("--gpu-memory-utilization"), "0.9");
  EXPECT_EQ(s.flags.at("--dtype"), "bfloat16");
  EXPECT_EQ(s.flags.at("--kv-cache-dtype"), "auto");
  EXPECT_EQ(s.flags.at("--compilation-config"), "{\"level\":3,\"cudagraph_capture_sizes\":[8,4,2,1]}");
  EXPECT_EQ(s.flags.count("--quantization"), 0u);
  EXPECT_EQ(s.ranks.size(), 0u);
}

// ---------------------------------------------------------------------------------------------
// vLLM and TensorRT-LLM.

TEST(LogScanVllm, WorkerPrefixesAndRefusalOverLines) {
  LogScan s = scan_log_text(
      "(Worker_TP7_EP7 pid=7475) INFO 10-23 08:04:01 [gpu_worker.py:298] Available KV cache memory: 35.68 GiB\n"
      "(Worker_TP0_EP0 pid=7468) INFO 10-23 08:04:01 [gpu_worker.py:298] Available KV cache memory: 35.70 GiB\n"
      "(RayWorkerWrapper pid=1463574, ip=192.168.10.60) INFO 03-27 10:29:01 [worker.py:267] Memory profiling takes "
      "4.26 seconds [repeated 30x across cluster]\n"
      "(EngineCore_DP0 pid=7291) ERROR 10-23 08:04:02 [core.py:708] ValueError: To serve at least one request with "
      "the model's max seq len (196608),\n"
      "(EngineCore_DP0 pid=7291) ERROR 10-23 08:04:02 [core.py:708] 23.25 GiB KV cache is needed, which is larger "
      "than the available KV cache memory (22.5 GiB).\n"
      "(EngineCore_DP0 pid=7291) ERROR 10-23 08:04:02 [core.py:708] Based on the available memory, the estimated "
      "maximum model length is 190272.\n",
      "t");
  ASSERT_EQ(s.ranks.size(), 4u);
  EXPECT_EQ(s.ranks[0].rank.label, "Worker_TP0_EP0");
  EXPECT_EQ(s.ranks[0].rank.ep, 0);
  EXPECT_EQ(s.ranks[1].rank.label, "EngineCore_DP0");  // no TP index: sorted by its DP index
  EXPECT_EQ(s.ranks[1].rank.dp, 0);
  EXPECT_EQ(s.ranks[2].rank.label, "Worker_TP7_EP7");
  EXPECT_EQ(s.ranks[3].rank.label, "RayWorkerWrapper pid=1463574, ip=192.168.10.60");  // rank-less: one process per pid
  EXPECT_EQ(s.summary.kv_bytes->value, gib(35.70));  // TP0
  EXPECT_EQ(s.summary.kv_bytes->line, 2);
  ASSERT_EQ(s.errors.size(), 1u);
  const LogError& e = s.errors[0];
  EXPECT_EQ(e.kind, "vllm_max_seq_len");
  EXPECT_EQ(e.line, 4);
  EXPECT_EQ(*e.value, 190272);
  EXPECT_EQ(*e.value2, 196608);
  const LogFigures& ec = s.ranks[1].fig;
  EXPECT_EQ(ec.kv_needed->value, gib(23.25));
  EXPECT_EQ(ec.kv_bytes->value, gib(22.5));
  EXPECT_EQ(ec.estimated_max_model_len->value, 190272);
  EXPECT_EQ(s.outcome, Outcome::RefusedKv);
}

TEST(LogScanVllm, RayWorkersAreTheirPidsAndDedupLinesDoNotRewindTheStage) {
  // corpus vllm-023 (V0 under Ray): worker A's capture line, then Ray's deduplicated summary of
  // the profiling lines (printed after the fact, "[repeated 30x across cluster]"), once under
  // worker B's prefix and once under A's.
  LogScan s = scan_log_text(
      "(RayWorkerWrapper pid=1861983) INFO 03-27 10:29:03 [model_runner.py:1442] Capturing cudagraphs for decoding.\n"
      "(RayWorkerWrapper pid=1463574, ip=192.168.10.60) INFO 03-27 10:29:01 [worker.py:267] model weights take 20.64GiB; "
      "non_torch_memory takes 0.28GiB; PyTorch activation peak memory takes 1.52GiB; the rest of the memory reserved for KV "
      "Cache is 21.20GiB. [repeated 30x across cluster]\n"
      "(RayWorkerWrapper pid=1861983) INFO 03-27 10:29:01 [worker.py:267] model weights take 20.64GiB; non_torch_memory "
      "takes 0.28GiB; PyTorch activation peak memory takes 1.52GiB; the rest of the memory reserved for KV Cache is "
      "21.20GiB. [repeated 2x across cluster]\n",
      "t");
  ASSERT_EQ(s.ranks.size(), 2u);
  for (const auto& r : s.ranks) {
    if (r.rank.label == "RayWorkerWrapper pid=1861983") EXPECT_EQ(r.stage, "cuda_graph");
    else EXPECT_EQ(r.stage, "kv_pool");
  }
  EXPECT_EQ(s.summary.kv_bytes->value, gib(21.20));
}

TEST(LogScanVllm, KvCacheMemoryBytesLineIsTheKvStage) {
  // corpus vllm-067: gpu_worker.py determine_available_memory() with --kv-cache-memory-bytes.
  LogScan s = scan_log_text(
      "(EngineCore pid=83) INFO 07-26 12:29:34 [gpu_worker.py:479] Initial free memory 93.88 GiB, reserved 49.0 GiB memory "
      "for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling.\n",
      "t");
  ASSERT_EQ(s.ranks.size(), 1u);
  EXPECT_EQ(s.ranks[0].stage, "kv_pool");
  EXPECT_EQ(s.summary.init_avail->value, gib(93.88));
  EXPECT_EQ(s.summary.kv_bytes->value, gib(49.0));
}

TEST(LogScanVllm, ErrorLevelLineIsAFailureMarker) {
  // corpus vllm-075: capture progress (tqdm, no prefix), then a worker's ERROR line cut by the excerpt.
  LogScan s = scan_log_text(
      "(Worker_TP7_EP7 pid=7475) INFO 10-23 08:04:01 [gpu_worker.py:298] Available KV cache memory: 35.68 GiB\n"
      "Capturing CUDA graphs (decode, FULL):   9%|...| 3/35 [00:00<00:09,  3.30it/s]\n"
      "(Worker_TP7_EP7 pid=7475) ERROR 10-23 08:05:13 [multiproc_\n"
      "(Worker_TP7_EP7 pid=7475) ERROR 10-23 08:05:13 [multiproc_executor.py:470] more of the same\n",
      "t");
  ASSERT_EQ(s.errors.size(), 1u);  // the first ERROR line only
  EXPECT_EQ(s.errors[0].kind, "error_line");
  EXPECT_EQ(s.errors[0].line, 3);
  // An INFO line that merely contains ") error " in its text is not one.
  LogScan t = scan_log_text("(EngineCore pid=1) INFO 10-23 08:04:01 [x.py:1] retry (attempt 2) error rate 0\n", "t");
  EXPECT_TRUE(t.errors.empty());
}

TEST(LogScanVllm, HealthyStartIsOk) {
  // corpus vllm-019 (real log): a finished startup.
  for (const auto& c : corpus()) {
    if (c["id"] != "vllm-019") continue;
    LogScan s = scan_log_text(c["raw"].get<std::string>(), "vllm-019");
    EXPECT_EQ(s.outcome, Outcome::Ok);
    EXPECT_EQ(s.summary.requested->value, gib(39.88));  // "Requested memory: 0.90 (util), 39.88 GiB"
    EXPECT_DOUBLE_EQ(s.summary.gpu_memory_utilization->value, 0.90);
    EXPECT_EQ(s.summary.context_len->value, 131072);
    return;
  }
  FAIL();
}

TEST(LogScanTrtllm, KvCacheLines) {
  // Real TRT-LLM figures (research/vllm-trtllm-llamacpp-memory.md §7.4, Llama-3.1-8B):
  // 8219 blocks x 32 tokens = 263008 tokens; 16.05 / 17.83 = 0.90 (the default fraction).
  LogScan s = scan_log_text(
      "[TensorRT-LLM] TensorRT-LLM version: 0.21.0\n"
      "[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 31.84 GiB, available: 17.83 GiB\n"
      "[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 8219\n"
      "[TensorRT-LLM][INFO] Number of tokens per block: 32.\n"
      "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 16.05 GiB for max tokens in paged KV cache (263008).\n",
      "t");
  EXPECT_EQ(s.engine, LogEngine::TRTLLM);
  EXPECT_EQ(s.engine_version, "0.21.0");
  EXPECT_EQ(s.summary.total->value, gib(31.84));
  EXPECT_EQ(s.summary.init_avail->value, gib(17.83));
  EXPECT_EQ(s.summary.kv_bytes->value, gib(16.05));
  EXPECT_EQ(s.summary.kv_tokens->value, 263008);
  EXPECT_EQ(s.summary.kv_tokens->line, 5);
}

// ---------------------------------------------------------------------------------------------
// Messy and bad input.

TEST(LogScanInput, MissingEmptyDirectoryAndBinary) {
  EXPECT_THROW(scan_log_file("/nonexistent/dir/x.log"), InputError);
  EXPECT_THROW(scan_log_file(std::string(HEADROOM_TEST_DATA)), InputError);  // a directory
  EXPECT_THROW(scan_log_text("", "empty"), InputError);
  std::string junk;
  for (int i = 0; i < 100000; ++i) junk.push_back(static_cast<char>((i * 2654435761u) >> 13));
  try {
    scan_log_text(junk, "junk.bin");
    FAIL() << "binary accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a text log"), std::string::npos) << e.what();
  }
  // A text log with a little junk in it is still read.
  std::string mixed = "[TP0] Memory pool end. avail mem=11.87 GB\n" + junk.substr(0, 200) + "\n";
  for (int i = 0; i < 2000; ++i) mixed += "[2025-10-16 09:10:11 TP0] Decode batch. #running-req: 1, #token: 1234, token usage: 0.00, gen throughput (token/s): 45.67, #queue-req: 0\n";
  LogScan s = scan_log_text(mixed, "mixed");
  EXPECT_EQ(s.summary.pool_end_avail->value, gib(11.87));
}

TEST(LogScanInput, LongLinesAndBoundedEvidence) {
  std::string log = "[TP0] Load weight begin. avail mem=93.50 GB\n";
  log += std::string(3 << 20, 'x');  // a 3 MiB line
  log += "\n[TP0] Memory pool end. avail mem=1.00 GB\n";
  for (int i = 0; i < 10000; ++i) log += "[TP0] Capture cuda graph bs [1, 2]\n";
  LogScanOptions opt;
  opt.max_evidence = 100;
  LogScanner sc("t", opt);
  // fed in awkward pieces: lines split across chunks
  for (size_t i = 0; i < log.size(); i += 777) sc.feed(std::string_view(log).substr(i, 777));
  LogScan s = sc.finish();
  EXPECT_EQ(s.stats.long_lines, 1);
  EXPECT_EQ(s.stats.lines, 10003);
  EXPECT_EQ(s.evidence.size(), 100u);
  EXPECT_EQ(s.stats.dropped_facts, 10002 - 100);
  EXPECT_EQ(s.summary.init_avail->value, gib(93.50));
  EXPECT_EQ(s.summary.pool_end_avail->line, 3);
}

TEST(LogScanInput, RequestLogsAroundTheStartup) {
  // Startup lines buried in request logs (decode batches, access lines, vLLM metrics).
  std::string log;
  for (int i = 0; i < 5000; ++i) log += "INFO:     127.0.0.1:51234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n";
  log += "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens\n";
  for (int i = 0; i < 5000; ++i)
    log += "(APIServer pid=1) INFO 10-03 16:30:00 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
           "Avg generation throughput: 12.3 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, "
           "Prefix cache hit rate: 0.0%\n";
  LogScan s = scan_log_text(log, "t");
  EXPECT_EQ(s.summary.kv_tokens->value, 42656);
  EXPECT_EQ(s.summary.kv_tokens->line, 5001);
  EXPECT_EQ(s.stats.kept_lines, 1);
  EXPECT_EQ(s.engine, LogEngine::VLLM);
}

TEST(LogScanArgs, VllmNonDefaultDictValuesBecomeJson) {
  // vLLM prints its non-default args as a Python dict; the JSON-valued flags the plan then reads
  // (--limit-mm-per-prompt, --compilation-config, --speculative-config) take JSON, as on a command line.
  LogScan s = scan_log_text(
      "INFO 08-01 10:00:00 [utils.py:1] non-default args: {'model': 'Qwen/Qwen3-VL-8B-Instruct', 'limit_mm_per_prompt': "
      "{'image': 0, 'video': 0}, 'compilation_config': {'level': 3, 'use_inductor': True, 'backend': None, 'note': 'a \"b\"'}}\n",
      "t");
  EXPECT_EQ(s.flags.at("--limit-mm-per-prompt"), R"({"image": 0, "video": 0})");
  EXPECT_EQ(s.flags.at("--compilation-config"), R"({"level": 3, "use_inductor": true, "backend": null, "note": "a \"b\""})");
  EXPECT_FALSE(json::parse(s.flags.at("--compilation-config"), nullptr, false).is_discarded());
}

TEST(LogScanVllmVersion, LineFormatsHintTheReleaseWhenNoLinePrintsIt) {
  // Corpus vllm-021 (vllm#10517, RTX 3090, late 2024) prints no version; its one-line
  // "Memory profiling results: ... initial_memory_usage=" is V0 worker.py before PR #10511 (0.6.5).
  LogScan a = scan_log_text(
      "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB "
      "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90\n",
      "t");
  EXPECT_TRUE(a.engine_version.empty());
  EXPECT_EQ(a.engine_version_hint, "0.6.4");
  EXPECT_NE(a.engine_version_hint_why.find("PR #10511"), std::string::npos);
  // Extra xvllm-015 (OCI AQUA, 2025-03): V0's breakdown of 0.6.5+, the default engine up to 0.7.3.
  LogScan b = scan_log_text(
      "INFO 03-25 21:32:48 worker.py:266] the current vLLM instance can use total_gpu_memory (22.07GiB) x gpu_memory_utilization "
      "(0.90) = 19.86GiB\n",
      "t");
  EXPECT_EQ(b.engine_version_hint, "0.7.3");
  // A printed version is the version; the hint is only a fallback.
  LogScan c = scan_log_text(
      "INFO 11-20 10:00:00 api_server.py:585] vLLM API server version 0.6.3.post1\n"
      "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB "
      "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90\n",
      "t");
  EXPECT_EQ(c.engine_version, "0.6.3.post1");
  // A V1 log has neither V0 line: no hint.
  LogScan d = scan_log_text("INFO [gpu_worker.py:276] Available KV cache memory: 19.36 GiB\n", "t");
  EXPECT_TRUE(d.engine_version_hint.empty());
}
