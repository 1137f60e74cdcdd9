// headroom's cache of Hub reads (headroom_cache.h): atomic writes, checked reads.
#include "model/headroom_cache.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "model/hf_cache.h"
#include "model/hub_env.h"
#include "model/repo_ref.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace headroom::hub {
namespace {

constexpr int kFormat = 1;
constexpr int64_t kMaxCachedFile = 128 * 1000 * 1000;

// Cached names are the Hub's top-level file names: no folders, no dot-files.
bool safe_name(const std::string& n) {
  return !n.empty() && n.size() < 256 && n.find('/') == std::string::npos && n.find('\\') == std::string::npos && n[0] != '.';
}

std::optional<std::string> read_file(const fs::path& p) {
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  if (ec || static_cast<int64_t>(size) > kMaxCachedFile) return std::nullopt;
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string s(static_cast<size_t>(size), '\0');
  in.read(s.data(), static_cast<std::streamsize>(size));
  if (static_cast<size_t>(in.gcount()) != size) return std::nullopt;
  return s;
}

fs::path snapshot_dir(const std::string& repo, const std::string& sha) { return fs::path(cache_repo_dir(repo)) / "snapshots" / sha; }

}  // namespace

std::string fnv1a64_hex(const std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016x}", h);
}

std::string cache_repo_dir(const std::string& repo) {
  const std::string root = headroom_cache_dir();
  return root.empty() ? root : (fs::path(root) / "hub" / repo_folder_name(repo)).string();
}

std::string atomic_write(const std::string& path, const std::string& bytes) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return fmt::format("cannot create {}: {}", fs::path(path).parent_path().string(), ec.message());
  const std::string tmp = fmt::format("{}.tmp.{}.{}", path, static_cast<long>(getpid()), counter.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return fmt::format("cannot write {}", tmp);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return fmt::format("cannot write {}", tmp);
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ec2;
    fs::remove(tmp, ec2);
    return fmt::format("cannot rename into {}: {}", path, ec.message());
  }
  return "";
}

std::optional<Snapshot> read_cached_snapshot(const std::string& repo, const std::string& sha, std::string* corrupt) {
  if (cache_repo_dir(repo).empty() || !is_commit_sha(sha)) return std::nullopt;
  const fs::path dir = snapshot_dir(repo, sha);
  std::error_code ec;
  if (!fs::exists(dir / "manifest.json", ec)) return std::nullopt;
  auto bad = [&](const std::string& why) -> std::optional<Snapshot> {
    if (corrupt) *corrupt = fmt::format("{}: {}", dir.string(), why);
    return std::nullopt;
  };
  auto mtext = read_file(dir / "manifest.json");
  if (!mtext) return bad("manifest.json unreadable");
  json m = json::parse(*mtext, nullptr, false);
  if (m.is_discarded() || !m.is_object()) return bad("manifest.json is not JSON");
  if (m.value("format", 0) != kFormat || m.value("repo", "") != repo || m.value("sha", "") != sha)
    return bad("manifest.json names another format, repo or sha");
  Snapshot s{repo, sha, {}, {}};
  auto checked = [&](const json& e, const std::string& rel) -> std::optional<std::string> {
    if (!e.is_object() || !e.contains("bytes") || !e["bytes"].is_number_integer() || !e.contains("fnv1a64") || !e["fnv1a64"].is_string())
      return std::nullopt;
    auto text = read_file(dir / rel);
    if (!text || static_cast<int64_t>(text->size()) != e["bytes"].get<int64_t>() || fnv1a64_hex(*text) != e["fnv1a64"].get<std::string>())
      return std::nullopt;
    return text;
  };
  const json* files = m.contains("files") ? &m["files"] : nullptr;
  const json* shards = m.contains("shards") ? &m["shards"] : nullptr;
  if (!files || !files->is_object() || !shards || !shards->is_object()) return bad("manifest.json lacks files/shards");
  for (auto it = files->begin(); it != files->end(); ++it) {
    if (!safe_name(it.key())) return bad("manifest.json names an unsafe file");
    auto text = checked(*it, it.key());
    if (!text) return bad(it.key() + " does not match its size and checksum");
    s.files.emplace(it.key(), std::move(*text));
  }
  for (auto it = shards->begin(); it != shards->end(); ++it) {
    if (!safe_name(it.key())) return bad("manifest.json names an unsafe shard");
    const json& e = *it;
    if (!e.is_object() || !e.contains("file_size") || !e["file_size"].is_number_integer()) return bad(it.key() + ": no file_size");
    auto text = checked(e, "headers/" + it.key() + ".header");
    if (!text) return bad("headers/" + it.key() + ".header does not match its size and checksum");
    s.shards.push_back({it.key(), e["file_size"].get<int64_t>(), std::move(*text)});
  }
  std::sort(s.shards.begin(), s.shards.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return s;
}

std::string write_cached_snapshot(const Snapshot& s) {
  if (cache_repo_dir(s.repo).empty()) return "no cache folder (neither XDG_CACHE_HOME nor HOME is set)";
  if (!is_commit_sha(s.sha)) return "not a commit sha: " + s.sha;
  const fs::path dir = snapshot_dir(s.repo, s.sha);
  json m = {{"format", kFormat}, {"repo", s.repo}, {"sha", s.sha}, {"files", json::object()}, {"shards", json::object()}};
  for (const auto& [name, text] : s.files) {
    if (!safe_name(name)) continue;
    if (auto e = atomic_write((dir / name).string(), text); !e.empty()) return e;
    m["files"][name] = {{"bytes", text.size()}, {"fnv1a64", fnv1a64_hex(text)}};
  }
  for (const auto& sh : s.shards) {
    if (!safe_name(sh.name)) continue;
    if (auto e = atomic_write((dir / "headers" / (sh.name + ".header")).string(), sh.prefix); !e.empty()) return e;
    m["shards"][sh.name] = {{"file_size", sh.file_size}, {"bytes", sh.prefix.size()}, {"fnv1a64", fnv1a64_hex(sh.prefix)}};
  }
  return atomic_write((dir / "manifest.json").string(), m.dump(1));
}

std::string write_cached_ref(const std::string& repo, const std::string& revision, const std::string& sha) {
  if (cache_repo_dir(repo).empty()) return "no cache folder (neither XDG_CACHE_HOME nor HOME is set)";
  if (revision.find("..") != std::string::npos) return "revision holds '..'";
  return atomic_write((fs::path(cache_repo_dir(repo)) / "refs" / revision).string(), sha);
}

std::optional<std::string> read_cached_ref(const std::string& repo, const std::string& revision) {
  const std::string d = cache_repo_dir(repo);
  if (d.empty()) return std::nullopt;
  return read_ref(d, revision);
}

}  // namespace headroom::hub
