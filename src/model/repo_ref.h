// A model named as the Hub names it: "ORG/NAME" or "NAME", optionally "@REVISION" (a branch, a
// tag or a 40-hex commit sha), checked as huggingface_hub's validate_repo_id checks it.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace headroom::hub {

struct RepoRef {
  std::string repo;               // "ORG/NAME" as written
  std::string revision = "main";  // branch, tag or commit sha
  bool revision_given = false;    // "@REVISION" was in the spec
};

// nullopt when `spec` cannot be a Hub model id (then it is a path or a catalog id only).
std::optional<RepoRef> parse_repo_ref(std::string_view spec);
bool is_commit_sha(std::string_view s);
// "models--ORG--NAME", the folder huggingface_hub and headroom's cache keep a repo under.
std::string repo_folder_name(std::string_view repo);
// Percent-encodes everything but unreserved characters (a revision "refs/pr/1" -> "refs%2Fpr%2F1").
std::string url_quote(std::string_view s, std::string_view safe = "");

}  // namespace headroom::hub
