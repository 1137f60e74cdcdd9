// The files of one GGUF model: a single file, a gguf-split set ("<prefix>-00001-of-00003.gguf",
// every part read; the first holds the metadata) or the one model of a folder. The split checks
// mirror llama.cpp's loader (src/llama-model-loader.cpp): split.no (u16, 0-based) and split.count
// in each part, split.tensors.count (i32) equal to the tensors found in all parts.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <set>
#include <unordered_set>

#include "headroom/error.h"
#include "headroom/gguf.h"

namespace fs = std::filesystem;

namespace headroom::gguf {
namespace {

bool ends_with(std::string_view s, std::string_view t) { return s.size() >= t.size() && s.substr(s.size() - t.size()) == t; }

int parse_digits(std::string_view s) {
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

ModelFiles read_one(const std::string& path) {
  if (auto sn = parse_split_name(path))
    return read_split_parts(*sn, [&](const std::string& p) {
      std::error_code ec;
      if (!fs::is_regular_file(p, ec)) fail_input(p, "split", fmt::format("part {} of {} is missing", parse_split_name(p)->no, sn->count));
      return read_header_file(p);
    });
  ModelFiles m;
  m.parts.push_back(read_header_file(path));
  const Header& h = m.parts.front();
  if (auto count = h.get_int("split.count"); count && *count > 1)
    fail_input(path, "split.count", fmt::format("part of a {}-file split set, but the name lacks -NNNNN-of-NNNNN", *count));
  return m;
}

bool is_projector(const fs::path& p) { return p.filename().string().rfind("mmproj", 0) == 0; }

}  // namespace

ModelFiles read_split_parts(const SplitName& sn, const std::function<Header(const std::string& part)>& read) {
  ModelFiles m;
  std::unordered_set<std::string> names;
  for (int k = 1; k <= sn.count; ++k) {
    std::string p = split_path(sn.prefix, k, sn.count);
    Header h = read(p);
    auto no = h.get_int("split.no");
    auto count = h.get_int("split.count");
    if (!no || !count) fail_input(p, "split.no", "a part of a split set without split.no / split.count");
    if (*no != k - 1) fail_input(p, "split.no", fmt::format("is {}, the file name says part {} (split.no {})", *no, k, k - 1));
    if (*count != sn.count) fail_input(p, "split.count", fmt::format("is {}, the file name says {}", *count, sn.count));
    for (const auto& t : h.tensors)
      if (!names.insert(t.name).second) fail_input(p, t.name, "tensor appears in more than one part");
    m.parts.push_back(std::move(h));
  }
  auto expect = m.parts.front().get_int("split.tensors.count");
  if (expect && *expect != static_cast<int64_t>(names.size()))
    fail_input(m.parts.front().source, "split.tensors.count",
               fmt::format("{} tensors expected but {} found in the {} parts", *expect, names.size(), sn.count));
  return m;
}

std::optional<SplitName> parse_split_name(std::string_view path) {
  // <prefix>-NNNNN-of-NNNNN.gguf
  constexpr std::string_view kExt = ".gguf";
  constexpr size_t kTail = 15;  // "-NNNNN-of-NNNNN"
  if (!ends_with(path, kExt) || path.size() < kExt.size() + kTail) return std::nullopt;
  std::string_view tail = path.substr(path.size() - kExt.size() - kTail, kTail);
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-") return std::nullopt;
  int no = parse_digits(tail.substr(1, 5)), count = parse_digits(tail.substr(10, 5));
  if (no < 1 || count < 1 || no > count) return std::nullopt;
  return SplitName{std::string(path.substr(0, path.size() - kExt.size() - kTail)), no, count};
}

std::string split_path(const std::string& prefix, int no, int count) { return fmt::format("{}-{:05d}-of-{:05d}.gguf", prefix, no, count); }

bool is_gguf_path(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (fs::is_regular_file(p, ec)) return p.extension() == ".gguf" || has_gguf_magic(path);
  if (!fs::exists(p, ec)) return p.extension() == ".gguf";  // a missing file (or split part) is reported by the reader
  if (!fs::is_directory(p, ec) || fs::exists(p / "config.json", ec)) return false;
  for (const auto& e : fs::directory_iterator(p, ec))
    if (e.is_regular_file(ec) && e.path().extension() == ".gguf") return true;
  return false;
}

ModelFiles read_model_files(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return read_one(path);
  // A folder: its models are the single files and the split sets (by prefix); projectors aside.
  std::set<std::string> models;
  std::vector<std::string> projectors;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    if (!e.is_regular_file(ec) || e.path().extension() != ".gguf") continue;
    if (is_projector(e.path())) {
      projectors.push_back(e.path().filename().string());
      continue;
    }
    auto sn = parse_split_name(e.path().string());
    models.insert(sn ? split_path(sn->prefix, 1, sn->count) : e.path().string());
  }
  if (models.empty()) fail_input(path, "folder", "holds no GGUF model (*.gguf other than mmproj*.gguf)");
  if (models.size() > 1) {
    std::string list;
    for (const auto& m : models) list += (list.empty() ? "" : ", ") + fs::path(m).filename().string();
    fail_input(path, "folder", fmt::format("holds {} GGUF models ({}); name one file", models.size(), list));
  }
  ModelFiles m = read_one(*models.begin());
  std::sort(projectors.begin(), projectors.end());
  for (const auto& p : projectors) m.notes.push_back(fmt::format("{} (a multimodal projector) not counted in the model", p));
  return m;
}

}  // namespace headroom::gguf
