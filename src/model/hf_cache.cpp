// Model lookup in the local Hugging Face cache (hf_cache.h); file layout from
// huggingface_hub/file_download.py (_cache_commit_hash_for_specific_revision, snapshots/<sha>).
#include "model/hf_cache.h"

#include <filesystem>
#include <fstream>

#include "model/hub_env.h"

namespace fs = std::filesystem;

namespace headroom::hub {

std::optional<std::string> read_ref(const std::string& repo_dir, const std::string& revision) {
  if (revision.find("..") != std::string::npos) return std::nullopt;
  std::ifstream in(fs::path(repo_dir) / "refs" / revision);
  if (!in) return std::nullopt;
  std::string sha;
  std::getline(in, sha);
  while (!sha.empty() && (sha.back() == '\r' || sha.back() == ' ' || sha.back() == '\n')) sha.pop_back();
  if (!is_commit_sha(sha)) return std::nullopt;
  return sha;
}

std::optional<HfCacheHit> find_in_hf_cache(const RepoRef& ref) {
  const std::string root = hf_hub_cache_dir();
  if (root.empty()) return std::nullopt;
  const fs::path repo_dir = fs::path(root) / repo_folder_name(ref.repo);
  std::error_code ec;
  if (!fs::is_directory(repo_dir, ec)) return std::nullopt;
  std::string sha;
  if (is_commit_sha(ref.revision)) sha = ref.revision;
  else if (auto s = read_ref(repo_dir.string(), ref.revision)) sha = *s;
  else return std::nullopt;
  const fs::path snap = repo_dir / "snapshots" / sha;
  if (!fs::is_regular_file(snap / "config.json", ec)) return std::nullopt;
  return HfCacheHit{snap.string(), sha};
}

}  // namespace headroom::hub
