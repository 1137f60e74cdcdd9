// Rendering a FitResult: the CONTRACT JSON ("candidates" ranked, "rejected" with one-phrase
// reasons) and the text tables.
#include <algorithm>
#include <fmt/format.h>
#include <ostream>

#include "headroom/advise.h"
#include "headroom/units.h"

namespace headroom {

namespace {

std::string layout_text(const FitCandidate& c) {
  if (c.layer_split) return c.gpus > 1 ? fmt::format("layers over {} GPUs", c.gpus) : "one GPU";
  std::string s = fmt::format("TP {}", c.par.tp);
  if (c.par.pp > 1) s += fmt::format(" PP {}", c.par.pp);
  if (c.par.dp > 1) s += fmt::format(" DP {}{}", c.par.dp, c.par.dp_attention ? " (attention)" : "");
  if (c.par.ep > 1) s += fmt::format(" EP {}", c.par.ep);
  return s;
}

nlohmann::ordered_json candidate_json(const FitCandidate& c) {
  nlohmann::ordered_json j;
  j["gpu"] = c.gpu;
  j["gpus"] = c.gpus;
  j["tp"] = c.par.tp;
  j["pp"] = c.par.pp;
  j["ep"] = c.par.ep;
  j["dp"] = c.par.dp;
  j["dp_attention"] = c.par.dp_attention;
  j["kv_cache_dtype"] = c.kv_dtype.empty() ? nlohmann::ordered_json("default") : nlohmann::ordered_json(c.kv_dtype);
  j["verdict"] = verdict_name(c.verdict);
  j["kv_tokens"] = c.kv_tokens;
  j["kv_groups"] = c.groups;
  j["concurrency"] = c.concurrency;
  j["min_free_worst_bytes"] = c.min_free_worst;
  if (c.feasible) {
    nlohmann::ordered_json rec = nlohmann::ordered_json::object();
    for (const auto& [k, v] : c.recommended) rec[k] = v;
    j["recommended"] = rec;
    j["launch_command"] = c.launch_command;
  } else {
    j["reason"] = c.reason;
  }
  return j;
}

}  // namespace

nlohmann::ordered_json fit_json(const FitResult& r) {
  nlohmann::ordered_json j;
  j["engine"] = r.engine;
  j["model"] = r.model;
  j["context_len"] = r.context_len;
  j["target_concurrency"] = r.target_concurrency ? nlohmann::ordered_json(*r.target_concurrency) : nlohmann::ordered_json();
  j["margin_bytes"] = r.margin_bytes;
  j["candidates"] = nlohmann::ordered_json::array();
  for (const auto& c : r.candidates) j["candidates"].push_back(candidate_json(c));
  j["rejected"] = nlohmann::ordered_json::array();
  for (const auto& c : r.rejected) j["rejected"].push_back(candidate_json(c));
  j["evaluated"] = r.evaluated;
  j["plans"] = r.plans;
  j["notes"] = r.notes;
  return j;
}

void print_fit(std::ostream& out, const FitResult& r, bool all) {
  const bool newest = r.engine.size() > 7 && r.engine.substr(r.engine.size() - 7) == " newest";
  out << fmt::format("headroom fit: {} on {}{}; target {} tokens x {} requests\n", r.model, r.engine,
                     newest ? " rules (pass --engine NAME@VERSION for yours)" : " rules", r.context_len,
                     r.target_concurrency ? std::to_string(*r.target_concurrency) : std::string("any"));
  if (r.candidates.empty()) {
    out << "NO FEASIBLE DEPLOYMENT\n";
  } else {
    const FitCandidate& b = r.candidates.front();
    out << fmt::format("best: {} x {}, {}{}, {} {}: KV cache {} tokens = {:.2f} requests at {}; worst-case free {}\n", b.gpus, b.gpu, layout_text(b),
                       b.kv_dtype.empty() ? "" : ", KV " + b.kv_dtype, b.primary_knob, b.primary_value,
                       b.groups > 1 ? fmt::format("{}x{}", b.groups, b.kv_tokens) : std::to_string(b.kv_tokens), b.concurrency, r.context_len,
                       human_bytes(b.min_free_worst));
    out << "launch: " << b.launch_command << "\n";
    // By default the best row of each GPU type (ranked as fit ranks); --all: every feasible row.
    std::vector<const FitCandidate*> rows;
    for (const auto& c : r.candidates) {
      if (!all && std::any_of(rows.begin(), rows.end(), [&](const FitCandidate* x) { return x->gpu == c.gpu; })) continue;
      rows.push_back(&c);
    }
    const size_t shown = all ? rows.size() : std::min<size_t>(rows.size(), 20);
    out << fmt::format("\n{} ({} feasible of {} tried, safety margin {}){}:\n", all ? "every feasible deployment" : "the best per GPU type",
                       r.candidates.size(), r.evaluated, human_bytes(r.margin_bytes), all ? "" : "; --all lists every one");
    out << fmt::format("  {:>3}  {:<16} {:>4}  {:<26} {:<9} {:>9} {:>12} {:>13}  {}\n", "#", "gpu", "n", "layout", "kv dtype",
                       !r.candidates.empty() && r.candidates.front().layer_split ? r.candidates.front().primary_knob.substr(0, 9) : "fraction",
                       "KV tokens", fmt::format("req@{}", r.context_len), "worst free");
    for (size_t i = 0; i < shown; ++i) {
      const FitCandidate& c = *rows[i];
      out << fmt::format("  {:>3}  {:<16} {:>4}  {:<26} {:<9} {:>9} {:>12} {:>13.2f}  {}\n", i + 1, c.gpu, c.gpus, layout_text(c),
                         c.kv_dtype.empty() ? "default" : c.kv_dtype, c.primary_value,
                         c.groups > 1 ? fmt::format("{}x{}", c.groups, c.kv_tokens) : std::to_string(c.kv_tokens), c.concurrency,
                         human_bytes(c.min_free_worst));
    }
    if (shown < rows.size()) out << fmt::format("  ... {} more GPU types (--all)\n", rows.size() - shown);
  }
  if (!r.rejected.empty()) {
    if (all) {
      out << fmt::format("\nrejected ({}):\n", r.rejected.size());
      for (const auto& c : r.rejected)
        out << fmt::format("  {:<16} {:>4}  {:<26} {:<9} {}\n", c.gpu, c.gpus, layout_text(c), c.kv_dtype.empty() ? "default" : c.kv_dtype, c.reason);
    } else {
      out << fmt::format("\n{} deployments rejected (--all lists each with its reason)\n", r.rejected.size());
    }
  }
  if (!r.notes.empty()) {
    out << "\nnotes:\n";
    for (const auto& n : r.notes) out << "  - " << n << "\n";
  }
}

}  // namespace headroom
