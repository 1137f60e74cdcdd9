// The log scanner: splits a byte stream into lines (CR/LF/CRLF, tqdm carriage returns, ANSI
// colours, over-long lines, binary junk), runs the keyword prefilter, hands matching lines to
// the engine readers, and at the end builds the per-rank summary and the reading-level outcome.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <iostream>

#include "doctor/log_parse.h"
#include "headroom/error.h"
#include "headroom/file_reach.h"
#include "headroom/utf8.h"

namespace headroom {

using namespace logscan_detail;

std::string_view log_engine_name(LogEngine e) {
  switch (e) {
    case LogEngine::SGLang: return "sglang";
    case LogEngine::VLLM: return "vllm";
    case LogEngine::TRTLLM: return "trtllm";
    case LogEngine::LlamaCpp: return "llamacpp";
    default: return "unknown";
  }
}

int64_t LogRank::order() const {
  if (label.empty()) return -1;
  int64_t major = pp >= 0 ? pp : 0;
  int64_t minor = tp >= 0 ? tp : worker >= 0 ? worker : dp >= 0 ? dp : 999999;
  return major * 10000000 + minor * 10 + (tp >= 0 ? 0 : worker >= 0 ? 1 : 2);
}

std::string_view LogScan::line_text(int64_t line) const {
  auto it = std::lower_bound(evidence.begin(), evidence.end(), line,
                             [](const LogEvidence& e, int64_t l) { return e.line < l; });
  if (it != evidence.end() && it->line == line) return it->text;
  return {};
}

namespace logscan_detail {

LogRankMemory& Ctx::rank_mem(const LogRank& r) {
  auto it = rank_index.find(r.label);
  if (it != rank_index.end()) return ranks[it->second];
  if (ranks.size() >= 1024) return ranks.front();  // bounded: absurd rank counts share one slot
  rank_index.emplace(r.label, ranks.size());
  ranks.push_back(LogRankMemory{r, {}, {}, 0});
  rank_state.emplace_back();
  return ranks.back();
}

Ctx::RankState& Ctx::state(const LogRank& r) {
  LogRankMemory& m = rank_mem(r);
  return rank_state[static_cast<size_t>(&m - ranks.data())];
}

LogFigures& Ctx::fig(const LogRank& r) { return rank_mem(r).fig; }

void Ctx::keep(const Line& l, std::string_view kind) {
  ++scan.stats.kept_lines;
  if (!scan.evidence.empty() && scan.evidence.back().line == l.no) {
    // several readers (or tqdm segments) on one line: keep the first kind, the latest text
    if (scan.evidence.back().text.size() < l.text.size() && l.text.size() <= opt.max_evidence_text)
      scan.evidence.back().text = valid_utf8(l.text);
    return;
  }
  if (scan.evidence.size() >= opt.max_evidence) {
    ++scan.stats.dropped_facts;
    return;
  }
  // Cut at a character boundary and repaired: the kept text goes into JSON as it is.
  scan.evidence.push_back(LogEvidence{l.no, std::string(kind), valid_utf8(utf8_prefix(l.text, opt.max_evidence_text))});
}

namespace {
int stage_rank(std::string_view s) {
  static const char* order[] = {"init", "weights", "kv_pool", "cuda_graph", "warmup", "ready"};
  for (int i = 0; i < 6; ++i) if (s == order[i]) return i;
  return -1;
}
}  // namespace

void Ctx::stage(const Line& l, std::string_view st, bool open) {
  auto& m = rank_mem(l.rank);
  // Ray's log deduplication prints "... [repeated 30x across cluster]" after the fact, carrying
  // an earlier message of other workers under this worker's prefix: it must not move the
  // worker's stage back (ray/_private/ray_logging.py, LogDeduplicator).
  if (icontains(l.text, "x across cluster]") && stage_rank(st) < stage_rank(m.stage)) return;
  // Inside the stage (a begin line) or between stages (an end line, or the next stage's sizing line).
  m.stage_open = open;
  m.stage = std::string(st);
  m.stage_line = l.no;
  last_stage = std::string(st);
  last_stage_line = l.no;
  if (st == "ready") {
    finished_startup = true;
    if (!finished_line) finished_line = l.no;
  }
}

void Ctx::fatal(const Line& l, std::string_view kind, std::string_view st, std::optional<Outcome> outcome, int device,
                int64_t oom_index) {
  if (fatals.size() >= 256) return;
  fatals.push_back(Fatal{l.no, std::string(kind), std::string(st), outcome, l.rank, device, oom_index});
}

LogError& Ctx::error(const Line& l, std::string_view kind) {
  // The same message on consecutive lines of one multi-line print is one error.
  if (!scan.errors.empty() && scan.errors.back().kind == kind && l.no - scan.errors.back().line <= 3 &&
      scan.errors.back().rank == l.rank)
    return scan.errors.back();
  if (scan.errors.size() >= 256) {
    static thread_local LogError sink;
    sink = LogError{};
    return sink;
  }
  LogError e;
  e.kind = std::string(kind);
  e.line = l.no;
  e.rank = l.rank;
  scan.errors.push_back(std::move(e));
  return scan.errors.back();
}

void Ctx::version(std::string_view v, int64_t line) {
  if (!scan.engine_version.empty() || v.empty() || v.size() > 80) return;
  scan.engine_version = std::string(v);
  scan.engine_version_line = line;
}

void Ctx::version_hint(std::string_view v, std::string_view why, int64_t line) {
  if (!scan.engine_version_hint.empty()) return;
  scan.engine_version_hint = std::string(v);
  scan.engine_version_hint_why = fmt::format("{} (line {})", why, line);
}

}  // namespace logscan_detail

// ---------------------------------------------------------------------------------------------

struct LogScanner::Impl {
  std::string source;
  Ctx c;
  std::string partial;        // current physical line (bounded by max_line_bytes)
  bool partial_cut = false;   // the current line went over the cap
  int64_t line_no = 0;
  int64_t head_bytes = 0, head_bad = 0;  // first 64 KiB: text check
  bool head_checked = false;
  std::string seg;            // scratch

  void check_head() {
    if (head_checked) return;
    head_checked = true;
    // Mostly non-text in the first 64 KiB (NUL and control bytes other than \t \n \r \f \b ESC).
    if (head_bytes >= 16 && head_bad * 10 > head_bytes * 3)
      fail_input(source, "log", "not a text log (" + std::to_string(head_bad * 100 / head_bytes) +
                                    "% of the first " + std::to_string(head_bytes) + " bytes are binary)");
  }

  // Bytes that are not text: control bytes other than \t \n \r \f \b ESC, DEL, and bytes that
  // are not part of a valid UTF-8 sequence. `utf8_need` carries a sequence across chunks.
  int utf8_need = 0;
  static bool bad_ascii(unsigned char ch) {
    return (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\f' && ch != '\b' && ch != 0x1b) || ch == 0x7f;
  }
  int64_t count_bad(std::string_view s) {
    int64_t bad = 0;
    size_t i = 0;
    const size_t n = s.size();
    while (i < n) {
      if (utf8_need == 0 && i + 8 <= n) {
        uint64_t x;
        std::memcpy(&x, s.data() + i, 8);
        // all eight bytes ASCII and >= 0x20 and != 0x7f: skip them at once
        const uint64_t hi = 0x8080808080808080ull, ones = 0x0101010101010101ull;
        bool ascii = (x & hi) == 0;
        bool small = ((x - 0x20 * ones) & ~x & hi) != 0;
        bool del = (((x ^ (0x7f * ones)) - ones) & ~(x ^ (0x7f * ones)) & hi) != 0;
        if (ascii && !small && !del) {
          i += 8;
          continue;
        }
      }
      unsigned char ch = static_cast<unsigned char>(s[i]);
      if (utf8_need > 0) {
        if ((ch & 0xC0) == 0x80) {
          --utf8_need;
          ++i;
          continue;
        }
        utf8_need = 0;
        ++bad;  // the sequence's lead byte was not text
      }
      if (ch < 0x80) bad += bad_ascii(ch);
      else if (ch >= 0xC2 && ch <= 0xDF) utf8_need = 1;
      else if (ch >= 0xE0 && ch <= 0xEF) utf8_need = 2;
      else if (ch >= 0xF0 && ch <= 0xF4) utf8_need = 3;
      else ++bad;
      ++i;
    }
    return bad;
  }

  void feed(std::string_view chunk) {
    c.scan.stats.bytes += static_cast<int64_t>(chunk.size());
    if (!head_checked) {
      size_t take = std::min<size_t>(chunk.size(), static_cast<size_t>(65536 - head_bytes));
      int64_t b = count_bad(chunk.substr(0, take));
      head_bad += b;
      c.scan.stats.binary_bytes += b + count_bad(chunk.substr(take));
      head_bytes += static_cast<int64_t>(take);
      if (head_bytes >= 65536) check_head();
    } else {
      c.scan.stats.binary_bytes += count_bad(chunk);
    }
    while (!chunk.empty()) {
      const void* nl = std::memchr(chunk.data(), '\n', chunk.size());
      size_t n = nl ? static_cast<size_t>(static_cast<const char*>(nl) - chunk.data()) : chunk.size();
      append(chunk.substr(0, n));
      if (!nl) break;
      end_line();
      chunk.remove_prefix(n + 1);
    }
  }

  void append(std::string_view part) {
    if (partial_cut) return;
    size_t room = c.opt.max_line_bytes - std::min(c.opt.max_line_bytes, partial.size());
    if (part.size() > room) {
      partial.append(part.substr(0, room));
      partial_cut = true;
      ++c.scan.stats.long_lines;
      return;
    }
    partial.append(part);
  }

  void end_line() {
    ++line_no;
    ++c.scan.stats.lines;
    process(partial);
    partial.clear();
    partial_cut = false;
  }

  // One physical line: drop the CR of CRLF, split tqdm carriage-return segments, strip ANSI and
  // the Markdown a pasted log carries (quote markers, a fence opening on the line).
  void process(std::string& raw) {
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (raw.find('\x1b') != std::string::npos) strip_ansi(raw);
    if (!raw.empty() && (raw.front() == '>' || raw.front() == ' ' || raw.front() == '`' || raw.front() == '~')) strip_markdown(raw);
    std::string_view all(raw);
    if (all.find('\r') == std::string_view::npos) {
      segment(all);
      return;
    }
    // tqdm redraws: "Capturing batches (bs=512 ...)\rCapturing batches (bs=256 ...)\r...".
    // Each segment is read in order (same line number); empty ones are skipped.
    size_t start = 0;
    while (start <= all.size()) {
      size_t cr = all.find('\r', start);
      size_t end = cr == std::string_view::npos ? all.size() : cr;
      if (end > start) segment(all.substr(start, end - start));
      if (cr == std::string_view::npos) break;
      start = cr + 1;
    }
  }

  void segment(std::string_view text) {
    Line l;
    l.no = line_no;
    l.text = text;
    bool hit = match_keywords(text, l.kw);
    if (hit) ++c.scan.stats.keyword_lines;
    // An access-log line once the start is known finished says nothing new: skipped before any
    // reader runs, so a log of millions of requests costs the keyword walk only.
    if (hit && c.finished_startup && l.kw[kHttpOk] && l.kw.count() == 1 && c.pending.empty() && !c.cmd_open) return;
    if (!c.pending.empty() || c.cmd_open) {
      l.rank = parse_rank(text);
      l.body = message_body(text);
      if (c.cmd_open && continue_command(c, l)) return;
      if (!c.pending.empty()) continue_pending(c, l);
    }
    if (!hit) return;
    l.rank = parse_rank(text);
    l.body = message_body(text);
    read_args(c, l);
    read_sglang(c, l);
    read_vllm(c, l);
    read_trtllm(c, l);
    read_llamacpp(c, l);
    read_stages(c, l);
    read_torch(c, l);
  }

  LogScan finish();
};

LogScanner::LogScanner(std::string source, LogScanOptions opt) : impl_(std::make_unique<Impl>()) {
  impl_->source = std::move(source);
  impl_->c.opt = opt;
  if (impl_->c.opt.max_line_bytes < 256) impl_->c.opt.max_line_bytes = 256;
  impl_->c.scan.source = impl_->source;
}
LogScanner::~LogScanner() = default;
void LogScanner::feed(std::string_view chunk) { impl_->feed(chunk); }
LogScan LogScanner::finish() { return impl_->finish(); }

// ---------------------------------------------------------------------------------------------
// Summary and outcome.

namespace {

template <class T>
void pick(std::optional<T>& dst, const std::optional<T>& src) {
  if (!dst && src) dst = src;
}

void merge_lowest(LogFigures& d, const LogFigures& s) {
  pick(d.init_used, s.init_used);
  pick(d.init_avail, s.init_avail);
  pick(d.total, s.total);
  pick(d.requested, s.requested);
  pick(d.gpu_memory_utilization, s.gpu_memory_utilization);
  pick(d.weights, s.weights);
  pick(d.post_weights_avail, s.post_weights_avail);
  pick(d.draft_weights, s.draft_weights);
  pick(d.consumed, s.consumed);
  pick(d.activation, s.activation);
  pick(d.non_torch, s.non_torch);
  pick(d.graph_estimate, s.graph_estimate);
  pick(d.kv_tokens, s.kv_tokens);
  pick(d.kv_bytes, s.kv_bytes);
  pick(d.kv_needed, s.kv_needed);
  pick(d.pool_end_avail, s.pool_end_avail);
  pick(d.graph_begin_avail, s.graph_begin_avail);
  if (d.graph_bs.empty() && !s.graph_bs.empty()) {
    d.graph_bs = s.graph_bs;
    d.graph_bs_line = s.graph_bs_line;
  }
  pick(d.graph_progress_avail, s.graph_progress_avail);
  pick(d.graph_progress_bs, s.graph_progress_bs);
  pick(d.graph_bytes, s.graph_bytes);
  pick(d.graph_end_avail, s.graph_end_avail);
  pick(d.max_total_num_tokens, s.max_total_num_tokens);
  pick(d.max_running_requests, s.max_running_requests);
  pick(d.context_len, s.context_len);
  pick(d.chunked_prefill_size, s.chunked_prefill_size);
  pick(d.available_gpu_mem, s.available_gpu_mem);
  pick(d.max_concurrency, s.max_concurrency);
  pick(d.estimated_max_model_len, s.estimated_max_model_len);
  pick(d.mem_fraction_static, s.mem_fraction_static);
}

Outcome outcome_of(std::string_view kind, std::string_view stage) {
  if (kind == "oom" || kind == "trtllm_executor_oom") {
    // init counts with the weights, as the corpus and diagnose.cpp's outcome_for_stage count it
    // (classify tells an OOM before the weights apart by its stage)
    if (stage == "weights" || stage == "init") return Outcome::OomWeights;
    if (stage == "kv_pool") return Outcome::OomKv;
    if (stage == "cuda_graph") return Outcome::OomGraph;
    if (stage == "warmup") return Outcome::OomWarmup;
    if (stage == "runtime") return Outcome::OomRuntime;
    if (stage.empty()) return Outcome::Oom;
    return Outcome::OtherError;
  }
  return Outcome::OtherError;
}

// Stage in progress after a rank's last stage line: a rank whose last line was "ready" fails at runtime.
std::string in_progress(std::string_view st) {
  if (st == "ready") return "runtime";
  return std::string(st);
}

}  // namespace

LogScan LogScanner::Impl::finish() {
  if (!partial.empty() || partial_cut) end_line();
  if (c.cmd_open) finish_command(c);
  c.pending.clear();
  if (c.scan.stats.bytes == 0) fail_input(source, "log", "empty log");
  check_head();
  if (c.scan.stats.binary_bytes * 2 > c.scan.stats.bytes)
    fail_input(source, "log", "not a text log (" + std::to_string(c.scan.stats.binary_bytes * 100 / c.scan.stats.bytes) +
                                  "% of its bytes are binary)");
  if (c.scan.stats.lines == 0) fail_input(source, "log", "empty log");
  LogScan& s = c.scan;

  // Ranks, lowest first; the summary takes each figure from the lowest rank that printed it.
  std::stable_sort(c.ranks.begin(), c.ranks.end(),
                   [](const LogRankMemory& a, const LogRankMemory& b) { return a.rank.order() < b.rank.order(); });
  for (const auto& r : c.ranks) merge_lowest(s.summary, r.fig);
  // Corpus convention: kv_tokens falls back to the scheduler summary's max_total_num_tokens.
  if (!s.summary.kv_tokens && s.summary.max_total_num_tokens) s.summary.kv_tokens = s.summary.max_total_num_tokens;
  s.ranks = c.ranks;

  // Engine: the family with the most evidence; the launch command or argument dump decides ties.
  int sg = c.score_sglang, vl = c.score_vllm, tr = c.score_trt, ll = c.score_llama;
  for (const auto& a : s.arg_sets) {
    if (a.engine == LogEngine::SGLang) sg += 5;
    if (a.engine == LogEngine::VLLM) vl += 5;
    if (a.engine == LogEngine::TRTLLM) tr += 5;
    if (a.engine == LogEngine::LlamaCpp) ll += 5;
  }
  if (sg > vl && sg > tr && sg > ll) s.engine = LogEngine::SGLang;
  else if (vl > sg && vl > tr && vl > ll) s.engine = LogEngine::VLLM;
  else if (tr > sg && tr > vl && tr > ll) s.engine = LogEngine::TRTLLM;
  else if (ll > sg && ll > vl && ll > tr) s.engine = LogEngine::LlamaCpp;

  // Merged flags: lower-precedence sources first, so the resolved dumps win.
  for (std::string_view src : {"command", "vllm_namespace", "vllm_non_default", "vllm_engine_config", "sglang_server_args"})
    for (const auto& a : s.arg_sets)
      if (a.source == src)
        for (const auto& [k, v] : a.flags) s.flags[k] = v;

  // The runner the log shows, for the replan (vllm_estimates.cpp model_runner_v2 reads
  // VLLM_USE_V2_MODEL_RUNNER): V2 whenever the log shows it; V1 when no version is logged, where
  // the newest rules would otherwise run every family on V2. A value the command set stays.
  if (s.engine == LogEngine::VLLM && c.vllm_runner != 0 && !s.flags.count("--env:VLLM_USE_V2_MODEL_RUNNER") &&
      (c.vllm_runner == 2 || s.engine_version.empty()))
    s.flags["--env:VLLM_USE_V2_MODEL_RUNNER"] = c.vllm_runner == 2 ? "1" : "0";

  // A worker's ERROR line followed by its traceback ("WorkerProc hit an exception." then
  // "Traceback ...", vLLM multiproc_executor.py) is a failure even when the exception line is cut.
  if (c.fatals.empty())
    for (const auto& e : s.errors) {
      if (e.kind != "error_line") continue;
      for (const auto& tb : s.tracebacks)
        if (tb.line >= e.line && tb.line <= e.line + 3 && (tb.rank.label.empty() || tb.rank == e.rank)) {
          c.fatals.push_back(Ctx::Fatal{e.line, "generic", "", Outcome::OtherError, e.rank, -1, -1});
          break;
        }
      break;
    }
  // Outcome: the first specific fatal event (OOM, refusal, capture failure); generic errors
  // (an exception line, "EngineCore failed to start", NCCL) only when there is none.
  if (!c.fatals.empty()) {
    const Ctx::Fatal* fp = &c.fatals.front();
    for (const auto& x : c.fatals)
      if (x.kind != "generic") {
        fp = &x;
        break;
      }
    const Ctx::Fatal& f = *fp;
    std::string st = f.stage;
    int device = f.device;
    // The traceback that ends at (or just before/after) the error line, on the same rank.
    if (st.empty()) {
      for (const auto& tb : s.tracebacks) {
        if (tb.stage.empty()) continue;
        bool same = tb.rank.label.empty() || f.rank.label.empty() || tb.rank == f.rank;
        int64_t end = tb.end_line ? tb.end_line : tb.line;
        if (same && tb.line <= f.line + 60 && end + 200 >= f.line) {
          st = tb.stage;
          break;
        }
      }
    }
    if (st.empty()) {
      // The stage its rank was in: the rank itself, else the rank whose TP index is the OOM's
      // GPU, else whatever stage line came last.
      const LogRankMemory* rm = nullptr;
      for (const auto& r : s.ranks) {
        if (!f.rank.label.empty() && r.rank == f.rank && r.stage_line && r.stage_line <= f.line) rm = &r;
      }
      if (!rm && device >= 0)
        for (const auto& r : s.ranks)
          if (r.rank.tp == device && r.stage_line && r.stage_line <= f.line) rm = &r;
      if (rm) st = in_progress(rm->stage);
      else {
        // the last stage line printed before the error, by any rank
        std::string best;
        int64_t best_line = 0;
        for (const auto& r : s.ranks)
          if (r.stage_line && r.stage_line <= f.line && r.stage_line >= best_line) {
            best = r.stage;
            best_line = r.stage_line;
          }
        st = in_progress(best);
      }
    }
    if (st.empty() && f.oom_index >= 0 && f.oom_index < static_cast<int64_t>(s.ooms.size())) {
      // No context at all: the message itself. Free blocks in CUDA-graph private pools mean a
      // capture was running; one request of >= 30% of the device can only be a pool tensor
      // (the KV cache) — a reading heuristic, the diagnosis checks it against the forecast.
      const LogOom& o = s.ooms[static_cast<size_t>(f.oom_index)];
      if (o.private_pools > 0) st = "cuda_graph";
      else if (o.request > 0 && o.total > 0 && static_cast<double>(o.request) * 10 >= static_cast<double>(o.total) * 3) st = "kv_pool";  // any logged sizes, no wrap
      if (!st.empty()) s.failure_basis = StageBasis::Numbers;
    }
    s.failure_stage = st;
    s.failure_line = f.line;
    if (device < 0 && f.rank.tp >= 0) device = f.rank.tp;
    if (device < 0 && f.rank.worker >= 0) device = f.rank.worker;
    s.failure_device = device;
    s.outcome = f.outcome ? *f.outcome : outcome_of(f.kind, st);
  } else if (c.finished_startup) {
    s.outcome = Outcome::Ok;
  }
  // llama.cpp: its own failure lines decide (an allocation failure names its buffer; the generic
  // readers above see only "out of memory" words).
  if (s.engine == LogEngine::LlamaCpp) finish_llamacpp(s);
  return std::move(c.scan);
}

// ---------------------------------------------------------------------------------------------

LogScan scan_log_text(std::string_view text, std::string_view source, const LogScanOptions& opt) {
  LogScanner sc(std::string(source), opt);
  sc.feed(text);
  return sc.finish();
}

namespace {
// A file given to be diagnosed with not one word of an engine or PyTorch log ("hello world", a
// file of x) is not read as a healthy start: it is not an engine log (issue 31).
LogScan not_a_log_refused(LogScan s, std::string_view source) {
  if (s.stats.keyword_lines == 0 && s.stats.kept_lines == 0)
    fail_input(source, "log", fmt::format("does not look like an engine log: none of its {} lines has a word of a SGLang, vLLM, "
                                          "TensorRT-LLM, llama.cpp or PyTorch log", s.stats.lines));
  return s;
}
}  // namespace

LogScan scan_log_file(const std::string& path, const LogScanOptions& opt) {
  require_path_reach(path, "log");  // a web request's log is its own upload, never a server path
  LogScanner sc(path == "-" ? std::string("<stdin>") : path, opt);
  std::vector<char> buf(1 << 20);
  if (path == "-") {
    while (std::cin.read(buf.data(), static_cast<std::streamsize>(buf.size())) || std::cin.gcount() > 0)
      sc.feed(std::string_view(buf.data(), static_cast<size_t>(std::cin.gcount())));
    return not_a_log_refused(sc.finish(), "<stdin>");
  }
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) fail_input(path, "log", "no such file");
  if (std::filesystem::is_directory(st)) fail_input(path, "log", "is a directory, not a log file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_input(path, "log", "cannot open");
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    sc.feed(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
    if (in.eof()) break;
  }
  if (in.bad()) fail_input(path, "log", "read error (is it a directory?)");
  return not_a_log_refused(sc.finish(), path);
}

}  // namespace headroom
