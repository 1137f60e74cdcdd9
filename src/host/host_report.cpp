// `plan --host` output: the answer first (how many servers start, and the first that does not),
// one line per server in start order, then per GPU who holds what after each start as a bar.
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ostream>

#include "headroom/advise.h"
#include "headroom/host_plan.h"
#include "headroom/report.h"
#include "headroom/units.h"

namespace headroom {

namespace {
// The bar's letter for a holder: 'o' for other processes, then 1..9, a..z for servers in order.
char holder_letter(const HostPlan& p, const std::string& who) {
  for (size_t i = 0; i < p.servers.size(); ++i)
    if (p.servers[i].name == who) return i < 9 ? static_cast<char>('1' + i) : static_cast<char>('a' + (i - 9) % 26);
  return 'o';
}

std::string bar(const HostPlan& p, const GpuMoment& m, int64_t capacity, int width) {
  std::string b;
  double acc = 0;
  const double per = static_cast<double>(capacity) / width;
  for (const auto& [who, bytes] : m.held) {
    acc += static_cast<double>(bytes);
    while (static_cast<double>(b.size() + 1) * per <= acc + per / 2 && static_cast<int>(b.size()) < width) b.push_back(holder_letter(p, who));
  }
  b.resize(static_cast<size_t>(width), '.');
  return "[" + b + "]";
}

// The server's command as headroom would run it, on its GPUs.
std::string server_launch(const ServerPlan& s) {
  std::string cmd = launch_command(s.deployment, s.deployment.flags);
  const size_t line = cmd.rfind('\n') == std::string::npos ? 0 : cmd.rfind('\n') + 1;  // after a leading "# ..." note
  return cmd.insert(line, fmt::format("CUDA_VISIBLE_DEVICES={} ", fmt::join(s.gpus, ",")));
}

// "44.26 GiB" when every GPU holds the same, else "44.26 + 40.10 GiB".
std::string holds_text(const ServerPlan& s) {
  std::vector<std::string> each;
  for (int64_t b : s.holds) each.push_back(gib2(b));
  const bool same = std::all_of(each.begin(), each.end(), [&](const std::string& e) { return e == each.front(); });
  if (same) return fmt::format("{} GiB{}", each.front(), each.size() > 1 ? " on each GPU" : "");
  return fmt::format("{} GiB", fmt::join(each, " + "));
}

std::string engine_label(const Forecast& f) { return f.version.empty() || f.version == "newest" ? f.engine + " (newest)" : f.engine + "@" + f.version; }

// How this engine version treats what others hold, from the forecast's "host state (...): " note
// (empty when the server was planned without anything held before it).
// The engine's note on memory it did not allocate, with the holders named: in a host file the
// note's source is the servers started before (and "other processes" from --host-state).
std::string host_why(const Forecast& f) {
  for (const auto& n : f.notes) {
    const size_t close = n.find("): ");
    if (n.rfind("host state (", 0) != 0 || close == std::string::npos) continue;
    std::string why = n.substr(close + 3);
    const std::string who = n.substr(12, close - 12), other = "other processes hold";
    if (why.rfind(other, 0) == 0 && who != "other processes") why.replace(0, other.size(), who + (who.find(", ") == std::string::npos ? " holds" : " hold"));
    return why;
  }
  return {};
}

std::string outcome(const ServerPlan& s) {
  const Forecast& f = s.forecast;
  if (!s.started) return fmt::format("{} at {}", f.verdict == Verdict::Refused ? "REFUSED" : "OOM", f.failure ? name(f.failure->stage) : "start");
  return fmt::format("{}  KV {} tokens", f.verdict == Verdict::Fits ? "FITS" : "AT RISK", f.kv_tokens);
}
}  // namespace

void print_host_plan(std::ostream& out, const HostPlan& p, const std::string& source) {
  size_t started = 0;
  for (const auto& s : p.servers) started += s.started ? 1 : 0;
  const ServerPlan* first_down = nullptr;
  for (const auto& s : p.servers)
    if (!s.started && !first_down) first_down = &s;
  out << fmt::format("headroom plan --host {}: {} of {} servers start{}\n", source, started, p.servers.size(),
                     first_down ? fmt::format(" - '{}' does not ({})", first_down->name, outcome(*first_down)) : "");
  for (size_t i = 0; i < p.servers.size(); ++i) {
    const ServerPlan& s = p.servers[i];
    out << fmt::format("  {} {:<12} {:<18} GPU {:<8} {}{}\n", holder_letter(p, s.name), s.name, engine_label(s.forecast),
                       fmt::format("{}", fmt::join(s.gpus, ",")), outcome(s), s.started ? "; holds " + holds_text(s) : "");
    if (!s.started && s.forecast.failure) out << "      " << s.forecast.failure->message << "\n";
    if (!s.started && !host_why(s.forecast).empty()) out << "      why: " << host_why(s.forecast) << "\n";
  }
  for (const auto& g : p.gpus) {
    out << fmt::format("\nGPU {} {} ({} GiB), in start order:\n", g.index, g.gpu.name, gib2(g.capacity_bytes));
    for (const auto& m : g.moments)
      out << fmt::format("  {:<14} {}  {} GiB free\n", m.after == "start" ? "before any" : "after " + m.after, bar(p, m, g.capacity_bytes, 48),
                         gib2(m.free_bytes));
  }
  std::vector<std::string> legend;
  for (const auto& s : p.servers) legend.push_back(fmt::format("{} {}", holder_letter(p, s.name), s.name));
  out << "  " << fmt::format("{}", fmt::join(legend, "  ")) << "  o other processes  . free\n";
  out << "\nlaunch commands, in this order:\n";
  for (const auto& s : p.servers) {
    std::string cmd = server_launch(s);
    for (size_t at = cmd.find('\n'); at != std::string::npos; at = cmd.find('\n', at + 3)) cmd.insert(at + 1, "  ");
    out << "  " << cmd << "\n";
  }
}

void print_host_tune(std::ostream& out, const HostTuneResult& r, const std::string& source) {
  out << fmt::format("headroom tune --host {}: {}\n", source, r.feasible ? "these settings let every server start, in this order" : "no setting lets every server start");
  for (const auto& n : r.notes) out << "  " << n << "\n";
  for (const auto& c : r.changes)
    out << fmt::format("  {:<12} {} {}{}\n", c.server, c.flag, c.to, c.from.empty() ? "" : c.from == c.to ? " (as given)" : " (was " + c.from + ")");
  out << fmt::format("  ({} forecasts searched)\n\n", r.plans);
  print_host_plan(out, r.plan, source);
}

nlohmann::ordered_json host_tune_json(const HostTuneResult& r) {
  nlohmann::ordered_json j;
  j["feasible"] = r.feasible;
  j["changes"] = nlohmann::ordered_json::array();
  for (const auto& c : r.changes) j["changes"].push_back({{"server", c.server}, {"flag", c.flag}, {"from", c.from}, {"to", c.to}});
  j["notes"] = r.notes;
  j["plan"] = host_plan_json(r.plan);
  return j;
}

nlohmann::ordered_json host_plan_json(const HostPlan& p) {
  nlohmann::ordered_json j;
  j["all_start"] = p.all_start;
  j["servers"] = nlohmann::ordered_json::array();
  for (const auto& s : p.servers) {
    const Forecast& f = s.forecast;
    nlohmann::ordered_json e;
    e["name"] = s.name;
    e["engine"] = f.engine;
    e["version"] = f.version;
    e["gpus"] = s.gpus;
    e["verdict"] = std::string(verdict_name(f.verdict));
    e["failure"] = f.failure ? nlohmann::ordered_json{{"stage", name(f.failure->stage)}, {"rank", f.failure->rank}, {"message", f.failure->message}}
                             : nlohmann::ordered_json(nullptr);
    e["kv_tokens"] = f.kv_tokens;
    const std::string why = host_why(f);  // the CLI's "why:" line, for a page to show beside the failure
    e["why"] = why.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(why);
    e["held_before_bytes"] = s.held_before;
    e["holds_bytes"] = s.holds;
    e["launch_command"] = server_launch(s);
    j["servers"].push_back(std::move(e));
  }
  j["gpus"] = nlohmann::ordered_json::array();
  for (const auto& g : p.gpus) {
    nlohmann::ordered_json e{{"index", g.index}, {"gpu", g.gpu.name}, {"capacity_bytes", g.capacity_bytes}};
    e["timeline"] = nlohmann::ordered_json::array();
    for (const auto& m : g.moments) {
      nlohmann::ordered_json held = nlohmann::ordered_json::object();
      for (const auto& [who, b] : m.held) held[who] = b;
      e["timeline"].push_back({{"after", m.after}, {"held_bytes", held}, {"free_bytes", m.free_bytes}});
    }
    j["gpus"].push_back(std::move(e));
  }
  return j;
}

}  // namespace headroom
