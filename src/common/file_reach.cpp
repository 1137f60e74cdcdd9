// FileReachScope: a thread-local allowance, checked lexically (no file-system call, so a
// refused path is not even probed for existence).
#include "headroom/file_reach.h"

#include <algorithm>
#include <filesystem>
#include <iterator>

#include "headroom/error.h"

namespace headroom {

namespace {
thread_local const std::string* tl_allowed = nullptr;
}

FileReachScope::FileReachScope(std::string dir) : prev_(tl_allowed), dir_(std::move(dir)) { tl_allowed = &dir_; }

FileReachScope::~FileReachScope() { tl_allowed = prev_; }

bool may_open_path(std::string_view path) {
  if (!tl_allowed) return true;
  if (tl_allowed->empty() || path.empty()) return false;
  namespace fs = std::filesystem;
  const fs::path p = fs::path(path).lexically_normal();
  const fs::path root = fs::path(*tl_allowed).lexically_normal();
  if (!p.is_absolute() || !root.is_absolute()) return false;
  for (const auto& part : p)
    if (part == "..") return false;
  auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  return r == root.end() || (std::next(r) == root.end() && r->empty());  // root is a prefix of p
}

void require_path_reach(std::string_view path, std::string_view field) {
  if (!may_open_path(path))
    fail_input(path, field, "not opened: the web server reads no files a request names (use a catalog model id, or send the text)");
}

}  // namespace headroom
