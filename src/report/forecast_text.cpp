// The text report of a Forecast: verdict, per-stage table of the critical rank (exact vs
// estimated marked), a terminal bar chart, the engine's predicted log lines, notes.
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ostream>
#include <vector>

#include "headroom/report.h"
#include "headroom/units.h"

namespace headroom {

namespace {
// One letter per kind of memory, so the chart reads without colour.
char letter_for(StageId stage, const std::string& what) {
  if (what.rfind("held by other processes", 0) == 0) return 'o';
  if (stage == StageId::Init) return 'c';
  if (stage == StageId::Weights) return 'W';
  if (stage == StageId::KvPool) return what.find("request") != std::string::npos ? 'r' : 'K';
  if (stage == StageId::CudaGraph) return 'g';
  if (stage == StageId::Runtime || stage == StageId::Warmup) return 'a';
  return 'w';
}

const RankForecast* critical_rank(const Forecast& f) {
  if (f.ranks.empty()) return nullptr;
  if (f.failure)
    for (const auto& r : f.ranks)
      if (r.rank == f.failure->rank) return &r;
  const RankForecast* best = &f.ranks.front();
  auto last_free = [](const RankForecast& r) { return r.stages.empty() ? r.capacity_bytes : r.stages.back().free_bytes_after; };
  for (const auto& r : f.ranks)
    if (last_free(r) < last_free(*best)) best = &r;
  return best;
}
const DeviceMemory* host_device(const Forecast& f) {
  for (const auto& d : f.devices)
    if (d.host) return &d;
  return nullptr;
}

// The host side of a per-device plan (llama.cpp): weights kept in RAM, mapped from the file or
// copied (--no-mmap), then the KV cache, compute and output buffers the host holds.
void print_host_ram(std::ostream& out, const DeviceMemory& h) {
  const int64_t other = h.compute_buffer_bytes + h.output_buffer_bytes + h.recurrent_state_bytes + h.indexer_cache_bytes;
  const int64_t total = h.model_buffer_bytes + h.kv_buffer_bytes + other;
  if (total <= 0) return;
  std::vector<std::string> parts;
  if (h.model_buffer_bytes > 0)
    parts.push_back(fmt::format("{} of weights {}", human_bytes(h.model_buffer_bytes),
                                h.name == "CPU_Mapped" ? "mapped from the file as page cache" : "copied into RAM"));
  if (h.kv_buffer_bytes > 0) parts.push_back(fmt::format("{} KV cache", human_bytes(h.kv_buffer_bytes)));
  if (other > 0) parts.push_back(fmt::format("{} compute and output buffers", human_bytes(other)));
  out << fmt::format("host RAM: {} ({})\n", human_bytes(total), fmt::join(parts, ", "));
}
}  // namespace

std::string memory_bar(const RankForecast& r, int width) {
  std::string bar;
  double per = static_cast<double>(r.capacity_bytes) / width;
  double acc = 0;
  for (const auto& s : r.stages)
    for (const auto& i : s.items) {
      if (i.bytes <= 0) continue;
      acc += static_cast<double>(i.bytes);
      while (static_cast<double>(bar.size() + 1) * per <= acc + per / 2 && static_cast<int>(bar.size()) < width)
        bar.push_back(letter_for(s.id, i.what));
    }
  // Past the capacity only when free memory goes below zero at some point: the items of a stage
  // include temporaries given back within it, so their sum can exceed the card on a start that fits.
  bool over = std::any_of(r.stages.begin(), r.stages.end(), [](const Stage& s) { return s.free_bytes_after < 0 || s.min_free < 0; });
  while (static_cast<int>(bar.size()) < width) bar.push_back('.');
  return "[" + bar + "]" + (over ? " OVER" : "");
}

void print_forecast_summary(std::ostream& out, const Forecast& f, const std::string& launch) {
  std::string verdict_text;
  switch (f.verdict) {
    case Verdict::Fits: verdict_text = "FITS"; break;
    case Verdict::AtRisk: verdict_text = "AT RISK (fits only if the estimated terms land favourably)"; break;
    case Verdict::Oom: verdict_text = "OUT OF MEMORY"; break;
    case Verdict::Refused: verdict_text = "REFUSED (the engine itself would not start)"; break;
  }
  const bool newest = f.version.empty() || f.version == "newest";
  out << fmt::format("headroom plan: {} {} ({}){}\n", f.engine, f.version, f.era,
                     newest ? fmt::format(" - newest rules: pass --engine {}@VERSION for yours", f.engine) : "");
  out << fmt::format("verdict: {}", verdict_text);
  if (f.failure) out << fmt::format(" - fails at stage '{}' on rank {}: requests {}, {} free", name(f.failure->stage), f.failure->rank,
                                    human_bytes(f.failure->request_bytes), human_bytes(f.failure->free_bytes));
  out << "\n";
  if (f.kv_tokens > 0) {
    out << fmt::format("KV cache: {} tokens", f.kv_tokens);
    if (f.context_len > 0) out << fmt::format(" = {:.2f} requests at the full context of {} tokens", f.max_concurrency, f.context_len);
    out << fmt::format("; max running requests {}\n", f.max_running_requests);
  }
  // The tightest moment: the least free memory at any stage's peak, on the critical rank.
  if (const RankForecast* r = critical_rank(f); r && !f.failure) {
    const Stage* tight = nullptr;
    for (const auto& st : r->stages)
      if (!tight || st.min_free < tight->min_free) tight = &st;
    if (tight)
      out << fmt::format("tightest: {} free at the peak of '{}' on rank {}{}; {} free at steady state\n", human_bytes(tight->min_free), name(tight->id),
                         r->rank, tight->min_free_worst != tight->min_free ? fmt::format(" (worst case {})", human_bytes(tight->min_free_worst)) : "",
                         human_bytes(f.headroom_bytes));
  }
  if (const DeviceMemory* h = host_device(f)) print_host_ram(out, *h);
  if (!launch.empty()) out << "launch: " << launch << "\n";
}

void print_forecast(std::ostream& out, const Forecast& f, const std::string& launch, bool brief) {
  print_forecast_summary(out, f, launch);
  if (f.failure) out << "  " << f.failure->message << "\n";
  if (brief) return;
  print_forecast_detail(out, f);
}

void print_forecast_detail(std::ostream& out, const Forecast& f) {
  if (const RankForecast* r = critical_rank(f)) {
    out << fmt::format("\nrank {} of {} (capacity {}){}:\n", r->rank, f.ranks.size(), human_bytes(r->capacity_bytes),
                       f.ranks.size() > 1 ? ", the rank with the least room" : "");
    out << fmt::format("  {:<12} {:<46} {:>12}   {:>12}  {}\n", "stage", "allocation", "bytes", "free after", "");
    for (const auto& s : r->stages) {
      bool first = true;
      for (const auto& i : s.items) {
        std::string range = i.estimated ? fmt::format("est. {}..{}", gib2(std::min(i.low, i.high)), gib2(std::max(i.low, i.high))) : "exact";
        out << fmt::format("  {:<12} {:<46} {:>12}   {:>12}  {}\n", first ? name(s.id) : "", i.what.substr(0, 46),
                           human_bytes(i.bytes), "", range);
        first = false;
      }
      out << fmt::format("  {:<12} {:<46} {:>12}   {:>12}{}\n", "", "", "", human_bytes(s.free_bytes_after),
                         s.estimated ? fmt::format("  (range {} .. {} GiB)", gib2(std::min({s.free_worst, s.free_best, s.free_bytes_after})),
                                                    gib2(std::max({s.free_worst, s.free_best, s.free_bytes_after})))
                                     : "");
      // A temporary given back within the stage: say how low free memory went at its peak.
      if (s.min_free < s.free_bytes_after || s.min_free_worst < s.free_worst)
        out << fmt::format("  {:<12} {:<46} {:>12}   {:>12}{}\n", "", "at the stage's peak", "", human_bytes(s.min_free),
                           s.min_free_worst != s.min_free ? fmt::format("  (worst case {} GiB)", gib2(s.min_free_worst)) : "");
    }
    out << "\n  " << memory_bar(*r, 64) << "\n";
    const bool others = !r->stages.empty() && !r->stages.front().items.empty() &&
                        r->stages.front().items.front().what.rfind("held by other processes", 0) == 0;
    out << (others ? "   o other processes" : "") << "   c context+NCCL  W weights  K KV pool  r request table  w workspaces  g CUDA graphs  a activations  . free\n";
  }
  if (!f.log.empty()) {
    out << "\nwhat " << f.engine << " should print (rank 0):\n";
    for (const auto& l : f.log) out << "  " << l << "\n";
  }
  if (!f.settings.empty()) {
    out << "\nsettings in force:";
    int n = 0;
    for (const auto& [k, v] : f.settings) out << (n++ % 3 == 0 ? "\n  " : "  ") << k << " " << v;
    out << "\n";
  }
  if (!f.notes.empty()) {
    out << "\nnotes:\n";
    for (const auto& n : f.notes) out << "  - " << n << "\n";
  }
}

}  // namespace headroom
