// Rendering a TuneResult: the CONTRACT JSON ("recommended", "forecast", "tradeoffs", plus the
// launch command, the margin and the alternatives) and the text a person reads.
#include <fmt/format.h>
#include <ostream>

#include "headroom/advise.h"
#include "headroom/report.h"
#include "headroom/units.h"

namespace headroom {

namespace {

nlohmann::ordered_json flags_json(const FlagList& flags) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : flags) j[k] = v;
  return j;
}

nlohmann::ordered_json row_json(const TradeoffRow& r, bool with_changes) {
  nlohmann::ordered_json j;
  j["flag"] = r.knob;
  j["value"] = r.value;
  if (with_changes) j["changes"] = flags_json(r.changes);
  j["label"] = r.label;
  j["verdict"] = verdict_name(r.verdict);
  j["safe"] = r.safe;
  // A refused start has no KV cache and no free memory to speak of: null, never a figure to plot.
  const bool refused = r.verdict == Verdict::Refused;
  j["kv_tokens"] = refused ? nlohmann::ordered_json() : nlohmann::ordered_json(r.kv_tokens);
  j["concurrency"] = refused ? nlohmann::ordered_json() : nlohmann::ordered_json(r.concurrency);
  j["capture_free_worst_bytes"] = refused ? nlohmann::ordered_json() : nlohmann::ordered_json(r.capture_free_worst);
  j["min_free_worst_bytes"] = refused ? nlohmann::ordered_json() : nlohmann::ordered_json(r.min_free_worst);
  j["limit"] = r.limit;
  j["shortfall"] = r.shortfall.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.shortfall);
  return j;
}

std::string commas(int64_t n) {
  std::string s = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return (n < 0 ? "-" : "") + s;
}

std::string gib_signed(int64_t b) { return fmt::format("{:+.2f} GiB", to_gib(b)); }

std::string changes_text(const FlagList& c) {
  if (c.empty()) return "(other knobs as given)";
  std::string s;
  for (const auto& [k, v] : c) s += (s.empty() ? "" : " ") + k + " " + v;
  return s;
}

void print_rows(std::ostream& out, const std::vector<TradeoffRow>& rows, bool alternatives, int64_t ctx) {
  std::string ctx_head = fmt::format("requests@{}", ctx);
  if (alternatives)
    out << fmt::format("  {:<46} {:>7} {:>12} {:>13} {:>15} {:>9}  {}\n", "other knobs", "primary", "KV tokens", ctx_head, "capture (worst)",
                       "verdict", "serves the goal?");
  else
    out << fmt::format("  {:>9} {:>12} {:>13} {:>15} {:>15} {:>9}  {}\n", "value", "KV tokens", ctx_head, "capture (worst)", "min (worst)",
                       "verdict", "");
  for (const auto& r : rows) {
    std::string verdict = r.safe ? "safe" : std::string(verdict_name(r.verdict));
    if (r.verdict == Verdict::Fits && !r.safe) verdict = "margin";
    std::string tail = r.label;
    if (!r.shortfall.empty()) tail += (tail.empty() ? "" : "; ") + r.shortfall;
    if (r.verdict == Verdict::Refused) {  // the engine would not start: no figures
      if (alternatives)
        out << fmt::format("  {:<46} {:>7} {:>12} {:>13} {:>15} {:>9}  {}\n", changes_text(r.changes), r.value, "-", "-", "-", verdict,
                           r.shortfall.empty() ? "no" : "no: " + r.shortfall);
      else
        out << fmt::format("  {:>9} {:>12} {:>13} {:>15} {:>15} {:>9}  {}\n", r.value, "-", "-", "-", "-", verdict, tail);
      continue;
    }
    if (alternatives)
      out << fmt::format("  {:<46} {:>7} {:>12} {:>13.2f} {:>15} {:>9}  {}\n", changes_text(r.changes), r.value, commas(r.kv_tokens), r.concurrency,
                         gib_signed(r.capture_free_worst), verdict, r.shortfall.empty() ? (r.label.empty() ? "yes" : "yes (" + r.label + ")") : "no: " + r.shortfall);
    else
      out << fmt::format("  {:>9} {:>12} {:>13.2f} {:>15} {:>15} {:>9}  {}\n", r.value, commas(r.kv_tokens), r.concurrency, gib_signed(r.capture_free_worst),
                         gib_signed(r.min_free_worst), verdict, tail);
  }
}

// The largest value of the primary knob whose forecast fits even at the worst case of every
// estimate, margin or not: the most a user can set, beside what tune recommends.
const TradeoffRow* maximum_that_fits(const TuneResult& r) {
  const TradeoffRow* best = nullptr;
  for (const auto& t : r.tradeoffs) {
    if (t.verdict != Verdict::Fits || t.min_free_worst < 0) continue;
    try {
      if (!best || std::stod(t.value) > std::stod(best->value)) best = &t;
    } catch (...) {
    }
  }
  return best;
}

std::string recommended_value(const TuneResult& r) {
  for (const auto& [k, v] : r.recommended)
    if (k == r.primary_knob) return v;
  return "";
}

}  // namespace

nlohmann::ordered_json tune_json(const TuneResult& r) {
  nlohmann::ordered_json j;
  j["feasible"] = r.feasible;
  j["reason"] = r.reason.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.reason);
  j["primary_knob"] = r.primary_knob;
  j["recommended"] = flags_json(r.recommended);
  j["launch_command"] = r.launch_command;
  j["launch_flags"] = flags_json(r.launch_flags);
  j["margin_bytes"] = r.margin_bytes;
  j["margin_default"] = r.margin_default;
  j["keep_free_bytes"] = r.keep_free_bytes;
  j["context_len"] = r.context_len;
  j["target_concurrency"] = r.target_concurrency ? nlohmann::ordered_json(*r.target_concurrency) : nlohmann::ordered_json();
  j["kv_groups"] = r.groups;
  j["kv_tokens"] = r.kv_tokens;
  j["concurrency"] = r.concurrency;
  j["min_free_worst_bytes"] = r.min_free_worst;
  if (const TradeoffRow* m = maximum_that_fits(r)) j["maximum"] = row_json(*m, false);
  else j["maximum"] = nullptr;
  j["forecast"] = forecast_json(r.forecast);
  j["tradeoffs"] = nlohmann::ordered_json::array();
  for (const auto& t : r.tradeoffs) j["tradeoffs"].push_back(row_json(t, false));
  j["alternatives"] = nlohmann::ordered_json::array();
  for (const auto& t : r.alternatives) j["alternatives"].push_back(row_json(t, true));
  j["notes"] = r.notes;
  j["plans"] = r.plans;
  return j;
}

void print_tune(std::ostream& out, const TuneResult& r) {
  const Deployment& d = r.deployment;
  const bool newest = d.engine_version.empty();
  out << fmt::format("headroom tune: {} {} - {} on {} x {} ({} GiB){}{}\n", r.forecast.engine, r.forecast.version, d.model_spec, d.gpus, d.gpu.display,
                     gib2(d.capacity_bytes + r.keep_free_bytes),
                     r.keep_free_bytes > 0 ? fmt::format(", {} GiB kept free", gib2(r.keep_free_bytes)) : "",
                     newest ? fmt::format(" - newest rules: pass --engine {}@VERSION for yours", r.forecast.engine) : "");
  if (r.feasible) {
    out << "recommended:";
    for (const auto& [k, v] : r.recommended) out << " " << k << " " << v;
    out << "\n";
  } else {
    out << "NO SAFE SETTING: " << r.reason << "\n";
    out << "closest:";
    for (const auto& [k, v] : r.recommended) out << " " << k << " " << v;
    out << "\n";
  }
  out << fmt::format("  KV cache: {} tokens{} = {:.2f} requests at {} tokens{}\n", commas(r.kv_tokens),
                     r.groups > 1 ? fmt::format(" per pool x {} pools", r.groups) : "", r.concurrency, r.context_len,
                     r.target_concurrency ? fmt::format(" (target {})", *r.target_concurrency) : "");
  out << fmt::format("  least worst-case free memory over all stages: {}\n", human_bytes(r.min_free_worst));
  out << "launch: " << r.launch_command << "\n";
  if (const TradeoffRow* m = maximum_that_fits(r); m && m->value != recommended_value(r))
    out << fmt::format("maximum that fits (no margin): {} {}  KV cache {} tokens, least worst-case free {}\n", m->knob, m->value, commas(m->kv_tokens),
                       human_bytes(m->min_free_worst));
  out << fmt::format("safety margin: {} of worst-case free memory at every stage{}\n", human_bytes(r.margin_bytes),
                     r.margin_default ? " (default, a guess; set with --margin)" : " (--margin)");
  if (!r.tradeoffs.empty()) {
    out << fmt::format("\ntrade-off ({}; other knobs as recommended):\n", r.primary_knob);
    print_rows(out, r.tradeoffs, false, r.context_len);
  }
  if (!r.alternatives.empty()) {
    out << fmt::format("\nother knobs (each row adds one change, {} re-tuned):\n", r.primary_knob);
    print_rows(out, r.alternatives, true, r.context_len);
  }
  if (!r.notes.empty()) {
    out << "\nnotes:\n";
    for (const auto& n : r.notes) out << "  - " << n << "\n";
  }
  if (!r.forecast.ranks.empty()) {
    out << "\nforecast at the recommendation:\n";
    print_forecast(out, r.forecast);
  }
}

}  // namespace headroom
