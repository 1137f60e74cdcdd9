// `headroom validate CORPUS.jsonl [--json]`: accuracy of the forecasts on real logs.
#include <fmt/format.h>
#include <ostream>

#include "cli/verbs.h"
#include "headroom/error.h"
#include "headroom/validate.h"

namespace headroom {

int verb_validate(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom validate CORPUS.jsonl [--json]\n";
    return kExitOk;
  }
  args.reject_unknown({"--json"}, "validate");
  if (args.positionals().size() != 1) fail_input("command line", "CORPUS.jsonl", "exactly one corpus file expected");
  auto j = validate_corpus(args.positionals().front());
  if (args.has("--json")) {
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  out << fmt::format("{:<12} {:>8} {:>9}  {:>12} {:>12}  {:>9} {:>9}  {:<12} {:<12}  {}\n", "case", "covered", "verdict", "kv pred",
                     "kv obs", "wt pred", "wt obs", "outcome", "observed", "note");
  for (const auto& r : j["per_case"]) {
    auto g = [&](const char* part, const char* k) -> std::string {
      if (!r.contains(part) || !r[part].contains(k)) return "-";
      const auto& v = r[part][k];
      if (v.is_string()) return v.get<std::string>();
      if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
      return fmt::format("{:.2f}", v.get<double>());
    };
    out << fmt::format("{:<12} {:>8} {:>9}  {:>12} {:>12}  {:>9} {:>9}  {:<12} {:<12}  {}\n", r["id"].get<std::string>(),
                       r["covered"].get<bool>() ? "yes" : "no", r.contains("verdict") ? r["verdict"].get<std::string>() : "-",
                       g("predicted", "kv_tokens"), g("observed", "kv_tokens"), g("predicted", "weights_gib"), g("observed", "weights_gib"),
                       g("predicted", "outcome"), g("observed", "outcome"), r.contains("reason") ? r["reason"].get<std::string>().substr(0, 70)
                                           : r.contains("note") ? r["note"].get<std::string>().substr(0, 70) : "");
  }
  // The doctor on each crash case's own log: the stage it names against the observed outcome's,
  // its cause, and whether a fix moves the thread's flag the thread's way.
  bool doctor_header = false;
  for (const auto& r : j["per_case"]) {
    if (!r.contains("doctor")) continue;
    if (!doctor_header) {
      out << fmt::format("\n{:<12} {:<11} {:<11} {:<24} {:<6} {:<6}  {}\n", "doctor", "stage", "observed", "cause", "fix", "value", "fixes");
      doctor_header = true;
    }
    const auto& d = r["doctor"];
    if (d.contains("error")) {
      out << fmt::format("{:<12} error: {}\n", r["id"].get<std::string>(), d["error"].get<std::string>().substr(0, 100));
      continue;
    }
    std::string fixes;
    for (const auto& f : d["fixes"]) fixes += (fixes.empty() ? "" : " ") + f.get<std::string>();
    std::string agree = d.contains("fix_agrees") ? (d["fix_agrees"].get<bool>() ? "agree" : "differ") : "-";
    // value: our first fix's value against the thread's range (doctor_fix_value), when the thread names that flag
    std::string value = d.contains("fix_value") ? (d["fix_value"]["agrees"].get<bool>() ? "in" : "out") : "-";
    std::string mark = d["stage"] == d["want_stage"] ? "" : " *";
    out << fmt::format("{:<12} {:<11} {:<11} {:<24} {:<6} {:<6}  {}\n", r["id"].get<std::string>(), d["stage"].get<std::string>() + mark,
                       d["want_stage"].get<std::string>(), d["cause"].get<std::string>(), agree, value, fixes.substr(0, 90));
    if (d.contains("fix_value") && !d["fix_value"]["agrees"].get<bool>())
      out << fmt::format("{:<12}   value {} out of the thread's range: {}\n", "", d["fix_value"]["ours"].get<std::string>(),
                         d["fix_value"]["range"].get<std::string>());
  }
  // kv_tokens_given_memory (vLLM): the logged tokens against the interval the logged KV GiB allows.
  bool given_header = false;
  for (const auto& r : j["per_case"]) {
    if (!r.contains("kv_given_memory")) continue;
    const auto& g = r["kv_given_memory"];
    if (!given_header) {
      out << fmt::format("\n{:<12} {:>8} {:>10}  {:>10} {:>10} {:>10} {:>8}  {:<5}  {}\n", "kv given", "KV GiB", "logged", "low", "high", "point",
                         "err %", "agree", "layout / why skipped");
      given_header = true;
    }
    auto i = [&](const char* k) { return g.contains(k) ? std::to_string(g[k].get<int64_t>()) : std::string("-"); };
    std::string note = g.contains("skipped") ? "skipped: " + g["skipped"].get<std::string>() : g.value("layout", std::string());
    if (g.contains("gpu_unknown_tried")) note += " [GPU unknown: union over its candidates]";
    if (g.contains("below_min_over_workers")) note += " [below: another worker may have had less (min over workers)]";
    out << fmt::format("{:<12} {:>8.2f} {:>10}  {:>10} {:>10} {:>10} {:>8}  {:<5}  {}\n", r["id"].get<std::string>(), g["kv_gib"].get<double>(),
                       i("observed"), i("tokens_low"), i("tokens_high"), i("tokens_point"),
                       g.contains("err_pct") ? fmt::format("{:+.2f}", g["err_pct"].get<double>()) : std::string("-"),
                       g.contains("agree") ? (g["agree"].get<bool>() ? "yes" : "NO") : "-", note.substr(0, 110));
  }
  out << fmt::format("\n{} cases, {} covered\n", j["cases"].get<int>(), j["covered"].get<int>());
  out << fmt::format("{:<26} {:>4}  {:>16}  {:>16}\n", "metric", "n", "median |err| %", "p90 |err| %");
  for (const char* m : {"kv_tokens", "weights_gib", "post_weights_avail", "graph_gib", "max_model_len", "max_model_len_given_memory",
                        "kv_tokens_given_memory_err", "model_buffer_mib", "kv_size_mib", "compute_buffer_mib"}) {
    if (!j.contains(m)) continue;  // the llama.cpp metrics appear with llama.cpp cases
    const auto& x = j[m];
    auto f = [](const nlohmann::ordered_json& v) { return v.is_null() ? std::string("-") : fmt::format("{:.2f}", v.get<double>()); };
    out << fmt::format("{:<26} {:>4}  {:>16}  {:>16}\n", m, x["n"].get<int>(), f(x["median_abs_pct_err"]), f(x["p90_abs_pct_err"]));
    if (x.contains("leave_one_out") && !x["leave_one_out"].is_null()) {
      const auto& l = x["leave_one_out"];
      const auto& r = l["observed_over_forecast"];
      out << fmt::format("{:<26} {:>4}  {:>16}  {:>16}  (observed/forecast p10 {:.2f}, median {:.2f}, p90 {:.2f})\n", "  leave-one-out", "",
                         f(l["median_abs_pct_err"]), f(l["p90_abs_pct_err"]), r["p10"].get<double>(), r["median"].get<double>(), r["p90"].get<double>());
    }
  }
  for (const char* m : {"outcome", "kv_tokens_given_memory", "doctor_stage", "doctor_stage_decided", "doctor_fix_direction", "doctor_fix_value"}) {
    const auto& x = j[m];
    const int n = x["n"].get<int>();
    out << fmt::format("{:<26} {:>4}  agreement {}{}\n", m, n, n ? fmt::format("{:.1f}%", 100.0 * x["agreement"].get<double>()) : "-",
                       std::string(m) == "doctor_stage"
                           ? fmt::format("  ({} of them guessed: nothing in the log places the failure)", j["doctor_stage_guessed"].get<int>())
                       : std::string(m) == "doctor_stage_decided" ? "  (placed by the log or its figures)"
                                                                  : "");
  }
  return kExitOk;
}

}  // namespace headroom
