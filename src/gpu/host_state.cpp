// Reads a host's GPU memory state from nvidia-smi's CSV queries or rocm-smi's JSON (issue 29):
// the columns are found by their header names, so any order or extra field reads the same.
#include "headroom/host_state.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

std::optional<HostState> read_host_state_nvml();  // host_state_nvml.cpp

namespace {

constexpr size_t kMaxText = 1 << 20;      // nvidia-smi prints a few KiB for 8 GPUs
constexpr size_t kMaxRows = 4096;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    const size_t comma = line.find(',', at);
    out.push_back(trim(line.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at)));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

// "memory.total [MiB]" -> "memory.total"; nvidia-smi names the used_memory query "used_gpu_memory".
std::string column_key(std::string_view header) {
  std::string k(trim(header.substr(0, header.find('['))));
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (k == "used_gpu_memory") k = "used_memory";
  return k;
}

struct Table {
  std::vector<std::string> keys;
  int col(std::string_view k) const {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == k) return static_cast<int>(i);
    return -1;
  }
};

// "81559 MiB", "81559" (nounits), "[N/A]" -> nullopt. Anything else is garbled.
std::optional<int64_t> mib_value(std::string_view v, std::string_view source, int64_t line, std::string_view field) {
  v = trim(v);
  if (v.empty() || v.front() == '[' || v == "N/A") return std::nullopt;
  if (v.size() > 4 && v.substr(v.size() - 3) == "MiB") v = trim(v.substr(0, v.size() - 3));
  int64_t n = -1;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || end != v.data() + v.size() || n < 0 || n > (int64_t{1} << 30))
    fail_input(source, fmt::format("line {} {}", line, field), fmt::format("'{}' is not a memory size in MiB", v));
  return n * MiB;
}

// A non-negative integer up to `most`; `where` names the line and field for the message.
int64_t int_value(std::string_view v, std::string_view source, const std::string& where, int64_t most = int64_t{1} << 31) {
  v = trim(v);
  int64_t n = -1;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || end != v.data() + v.size() || n < 0 || n > most)
    fail_input(source, where, fmt::format("'{}' is not a non-negative integer{}", v, n > most ? fmt::format(" up to {}", most) : ""));
  return n;
}
int64_t int_value(std::string_view v, std::string_view source, int64_t line, std::string_view field) {
  return int_value(v, source, fmt::format("line {} {}", line, field));
}

void gpu_row(const Table& t, const std::vector<std::string_view>& cells, HostState& h, int64_t line) {
  HostGpu g;
  const std::string_view src = h.source;
  auto cell = [&](std::string_view k) -> std::optional<std::string_view> {
    const int c = t.col(k);
    return c >= 0 && c < static_cast<int>(cells.size()) ? std::optional(cells[static_cast<size_t>(c)]) : std::nullopt;
  };
  g.index = cell("index") ? static_cast<int>(int_value(*cell("index"), src, line, "index")) : static_cast<int>(h.gpus.size());
  if (auto v = cell("name")) g.name = std::string(*v);
  if (auto v = cell("uuid")) g.uuid = std::string(*v);
  auto mem = [&](std::string_view k) { return cell(k) ? mib_value(*cell(k), src, line, k) : std::nullopt; };
  const auto total = mem("memory.total"), used = mem("memory.used"), free = mem("memory.free");
  if (!used && !(total && free)) fail_input(src, fmt::format("line {}", line), "a GPU row gives neither memory.used nor memory.total and memory.free");
  g.total_bytes = total.value_or(0);
  g.used_bytes = used ? *used : *total - *free;
  g.free_bytes = free ? *free : (total ? *total - *used : 0);
  h.gpus.push_back(std::move(g));
}

void process_row(const Table& t, const std::vector<std::string_view>& cells, HostState& h, int64_t line, std::vector<std::string>& uuids) {
  HostProcess p;
  const std::string_view src = h.source;
  const int cp = t.col("pid"), cn = t.col("process_name"), cm = t.col("used_memory"), cu = t.col("gpu_uuid");
  auto at = [&](int c) { return c >= 0 && c < static_cast<int>(cells.size()) ? cells[static_cast<size_t>(c)] : std::string_view{}; };
  if (cp >= 0) p.pid = int_value(at(cp), src, line, "pid");
  p.name = std::string(at(cn));
  p.used_bytes = cm >= 0 ? mib_value(at(cm), src, line, "used_memory").value_or(0) : 0;
  uuids.emplace_back(at(cu));
  h.processes.push_back(std::move(p));
}

HostState parse_rocm(std::string_view text, std::string_view source) {
  HostState h;
  h.source = std::string(source);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail_input(source, "rocm-smi JSON", "is not a JSON object");
  for (const auto& item : j.items()) {
    const std::string& card = item.key();  // not a structured binding: clang 14 cannot capture one
    const nlohmann::json& v = item.value();
    if (card.rfind("card", 0) != 0 || !v.is_object()) continue;
    auto bytes = [&](const char* k) -> int64_t {
      if (!v.contains(k) || !v[k].is_string()) fail_input(source, card + "." + k, "is missing (rocm-smi --showmeminfo vram --json)");
      return int_value(v[k].get<std::string>(), source, card + "." + k, int64_t{1} << 50);  // 1 PiB
    };
    HostGpu g;
    g.index = static_cast<int>(int_value(std::string_view(card).substr(4), source, card));
    g.total_bytes = bytes("VRAM Total Memory (B)");
    g.used_bytes = bytes("VRAM Total Used Memory (B)");
    if (g.used_bytes > g.total_bytes) fail_input(source, card, "uses more VRAM than it has");
    g.free_bytes = g.total_bytes - g.used_bytes;
    h.gpus.push_back(std::move(g));
  }
  return h;
}

// Processes name their GPU by uuid; the GPU table gives uuids only when queried with them.
void place_processes(HostState& h, const std::vector<std::string>& uuids) {
  for (size_t i = 0; i < h.processes.size(); ++i) {
    for (const auto& g : h.gpus)
      if (!g.uuid.empty() && g.uuid == uuids[i]) h.processes[i].gpu_index = g.index;
    if (h.processes[i].gpu_index < 0 && h.gpus.size() == 1) h.processes[i].gpu_index = h.gpus.front().index;
  }
}

}  // namespace

HostState parse_host_state(std::string_view text, std::string_view source) {
  if (text.size() > kMaxText) fail_input(source, "size", fmt::format("{} bytes is not nvidia-smi or rocm-smi output (at most {})", text.size(), kMaxText));
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return parse_rocm(text, source);
  HostState h;
  h.source = std::string(source);
  enum class Kind { None, Gpus, Apps } kind = Kind::None;
  Table table;
  std::vector<std::string> uuids;
  int64_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = std::min(text.find('\n', at), text.size());
    const std::string_view line = trim(text.substr(at, nl - at));
    at = nl + 1;
    ++line_no;
    // Blank lines, a pasted prompt ("$ nvidia-smi ..."), comments and separators ("---PROCS---"):
    // no CSV row of either query starts with these.
    if (line.empty() || line.front() == '$' || line.front() == '#' || line.front() == '-') continue;
    const auto cells = split_csv(line);
    std::vector<std::string> keys;
    for (auto c : cells) keys.push_back(column_key(c));
    const auto has = [&](std::string_view k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
    if (has("memory.used") || has("memory.total") || has("memory.free")) {
      kind = Kind::Gpus, table.keys = std::move(keys);
    } else if (has("pid") && (has("used_memory") || has("process_name"))) {
      kind = Kind::Apps, table.keys = std::move(keys);
    } else if (kind == Kind::None || cells.size() != table.keys.size()) {
      fail_input(source, fmt::format("line {}", line_no),
                 fmt::format("'{}' is not nvidia-smi CSV (--query-gpu=index,name,memory.total,memory.used,memory.free --format=csv)", line.substr(0, 80)));
    } else if (h.gpus.size() + h.processes.size() >= kMaxRows) {
      fail_input(source, fmt::format("line {}", line_no), fmt::format("more than {} rows", kMaxRows));
    } else if (kind == Kind::Gpus) {
      gpu_row(table, cells, h, line_no);
    } else {
      process_row(table, cells, h, line_no, uuids);
    }
  }
  if (h.gpus.empty())
    fail_input(source, "GPU table", "missing: give the output of nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free --format=csv");
  std::sort(h.gpus.begin(), h.gpus.end(), [](const HostGpu& a, const HostGpu& b) { return a.index < b.index; });
  for (size_t i = 1; i < h.gpus.size(); ++i)
    if (h.gpus[i].index == h.gpus[i - 1].index) fail_input(source, "index", fmt::format("GPU {} is listed twice", h.gpus[i].index));
  place_processes(h, uuids);
  return h;
}

HostState read_host_state(const std::string& spec) {
  if (spec == "live") {
    if (auto h = read_host_state_nvml()) return *h;
    fail_input("--host-state", "live", "the NVIDIA management library (libnvidia-ml.so.1) is not on this machine: pass a file with "
                                       "nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free --format=csv output");
  }
  std::ifstream file;
  if (spec != "-") {
    file.open(spec, std::ios::binary);
    if (!file) fail_input(spec, "--host-state", "cannot be opened");
  }
  std::istream& in = spec == "-" ? std::cin : file;
  std::string text(kMaxText + 1, '\0');  // one byte over the cap: parse_host_state refuses it
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return parse_host_state(text, spec == "-" ? "stdin" : spec);
}

}  // namespace headroom
