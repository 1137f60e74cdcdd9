// Hub model ids and revisions (repo_ref.h), validated as huggingface_hub/utils/_validators.py does.
#include "model/repo_ref.h"

#include <cctype>
#include <fmt/format.h>

namespace headroom::hub {
namespace {

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

bool valid_part(std::string_view p) {
  if (p.empty() || p.size() > 96) return false;
  for (char c : p)
    if (!name_char(c)) return false;
  if (p.front() == '-' || p.front() == '.' || p.back() == '-' || p.back() == '.') return false;
  return p.find("--") == std::string_view::npos && p.find("..") == std::string_view::npos;
}

}  // namespace

bool is_commit_sha(std::string_view s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c))) return false;
  return true;
}

std::optional<RepoRef> parse_repo_ref(std::string_view spec) {
  RepoRef r;
  std::string_view id = spec;
  if (auto at = spec.find('@'); at != std::string_view::npos) {
    std::string_view rev = spec.substr(at + 1);
    if (rev.empty() || rev.size() > 256) return std::nullopt;
    for (char c : rev)
      if (std::iscntrl(static_cast<unsigned char>(c)) || c == ' ' || c == '@' || c == '\\') return std::nullopt;
    if (rev.find("..") != std::string_view::npos || rev.front() == '/' || rev.back() == '/') return std::nullopt;
    r.revision = std::string(rev);
    r.revision_given = true;
    id = spec.substr(0, at);
  }
  auto slash = id.find('/');
  if (slash == std::string_view::npos) {
    if (!valid_part(id)) return std::nullopt;
  } else {
    if (id.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
    if (!valid_part(id.substr(0, slash)) || !valid_part(id.substr(slash + 1))) return std::nullopt;
  }
  if (id.size() > 96) return std::nullopt;
  r.repo = std::string(id);
  return r;
}

std::string repo_folder_name(std::string_view repo) {
  std::string o = "models--";
  for (char c : repo) {
    if (c == '/') o += "--";
    else o += c;
  }
  return o;
}

std::string url_quote(std::string_view s, std::string_view safe) {
  std::string o;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~' || safe.find(c) != std::string_view::npos) o += c;
    else o += fmt::format("%{:02X}", static_cast<unsigned>(u));
  }
  return o;
}

}  // namespace headroom::hub
