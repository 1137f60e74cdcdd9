// Rendering a FitResult: the CONTRACT JSON ("candidates" ranked, "rejected" with one-phrase
// reasons) and the text tables.
#include <fmt/format.h>
#include <ostream>

#include "headroom/advise.h"
#include "headroom/units.h"

namespace headroom {

namespace {

std::string layout_text(const FitCandidate& c) {
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

void print_fit(std::ostream& out, const FitResult& r) {
  out << fmt::format("headroom fit: {} deployments tried ({} forecasts); target {} tokens x {} requests; safety margin {}\n\n", r.evaluated,
                     r.plans, r.context_len, r.target_concurrency ? std::to_string(*r.target_concurrency) : std::string("any"),
                     human_bytes(r.margin_bytes));
  if (r.candidates.empty()) {
    out << "NO FEASIBLE DEPLOYMENT\n";
  } else {
    out << fmt::format("feasible ({}), best first:\n", r.candidates.size());
    out << fmt::format("  {:>3}  {:<16} {:>4}  {:<26} {:<9} {:>12} {:>12} {:>13}  {}\n", "#", "gpu", "n", "layout", "kv dtype", "fraction",
                       "KV tokens", fmt::format("req@{}", r.context_len), "worst free");
    int i = 0;
    for (const auto& c : r.candidates) {
      out << fmt::format("  {:>3}  {:<16} {:>4}  {:<26} {:<9} {:>12} {:>12} {:>13.2f}  {}\n", ++i, c.gpu, c.gpus, layout_text(c),
                         c.kv_dtype.empty() ? "default" : c.kv_dtype, c.primary_value,
                         c.groups > 1 ? fmt::format("{}x{}", c.groups, c.kv_tokens) : std::to_string(c.kv_tokens), c.concurrency,
                         human_bytes(c.min_free_worst));
    }
    out << "\nlaunch the first:\n  " << r.candidates.front().launch_command << "\n";
  }
  if (!r.rejected.empty()) {
    out << fmt::format("\nrejected ({}):\n", r.rejected.size());
    for (const auto& c : r.rejected)
      out << fmt::format("  {:<16} {:>4}  {:<26} {:<9} {}\n", c.gpu, c.gpus, layout_text(c), c.kv_dtype.empty() ? "default" : c.kv_dtype, c.reason);
  }
  if (!r.notes.empty()) {
    out << "\nnotes:\n";
    for (const auto& n : r.notes) out << "  - " << n << "\n";
  }
}

}  // namespace headroom
