// A model named by its Hub id, found in the local Hugging Face cache, in headroom's own cache or
// on the Hub itself (load.cpp asks in that order, with the bundled catalog between the caches and
// the Hub). Only the small files and the safetensors headers are ever read.
#pragma once
#include <optional>
#include <string>

#include "model/headroom_cache.h"
#include "model/repo_ref.h"

namespace headroom::hub {

struct HubResolution {
  enum class From { HfCache, HeadroomCache, Hub };
  From from = From::Hub;
  std::string folder;  // From::HfCache: the snapshot folder, read as a local model folder
  Snapshot snapshot;   // otherwise: the small files and the shard header bytes
  std::string note;    // where the model came from (the plan's notes say it)
};

// The caches, before the catalog. A branch found in headroom's cache is re-checked with one
// request unless offline (a network failure then falls back to the cached commit, said in the
// note). `*corrupt` is set when headroom's cache holds a damaged entry (not used).
std::optional<HubResolution> resolve_cached(const RepoRef& ref, std::string* corrupt);

// The Hub, after the catalog: config.json (+ hf_quant_config.json, model.safetensors.index.json),
// the shard headers, written to headroom's cache. Offline: an InputError saying what was tried.
HubResolution resolve_from_hub(const RepoRef& ref, const std::string& spec, const std::string& corrupt);

// One CLI call's memo of the models found by Hub id, so a call that names a model several times
// (doctor, compare, validate, a draft model) asks the caches and the Hub once per id. run_cli
// opens one per call (the web server's requests are calls); nested ones share the outer memo.
// Without one, nothing is memoised. The memo itself lives in load.cpp.
class ResolutionMemo {
 public:
  ResolutionMemo();
  ~ResolutionMemo();
  ResolutionMemo(const ResolutionMemo&) = delete;
  ResolutionMemo& operator=(const ResolutionMemo&) = delete;

 private:
  bool owner_;
};

}  // namespace headroom::hub
