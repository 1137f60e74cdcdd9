// The local Hugging Face cache as huggingface_hub writes it: <root>/models--ORG--NAME/refs/<branch>
// holds a commit sha, <root>/models--ORG--NAME/snapshots/<sha>/ the files (symlinks to blobs/).
#pragma once
#include <optional>
#include <string>

#include "model/repo_ref.h"

namespace headroom::hub {

struct HfCacheHit {
  std::string snapshot_dir;  // .../snapshots/<sha>, holding config.json
  std::string sha;
};

// The snapshot answering `ref` in the Hugging Face cache (hf_hub_cache_dir()), when it holds a
// config.json; nullopt otherwise. No network.
std::optional<HfCacheHit> find_in_hf_cache(const RepoRef& ref);

// Reads refs/<revision> under a repo folder (either cache): the sha it names, when well formed.
std::optional<std::string> read_ref(const std::string& repo_dir, const std::string& revision);

}  // namespace headroom::hub
