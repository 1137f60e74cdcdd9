// What the environment says about reaching models: the Hugging Face cache, headroom's own cache,
// the Hub endpoint, the token and offline mode, read as huggingface_hub reads them
// (huggingface_hub/constants.py). Read on every call (tests change the environment).
#pragma once
#include <optional>
#include <string>

namespace headroom::hub {

// The Hugging Face cache root: $HF_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub ("" when none can be named).
std::string hf_hub_cache_dir();
// headroom's own cache root: $XDG_CACHE_HOME/headroom, else ~/.cache/headroom.
std::string headroom_cache_dir();
// $HF_ENDPOINT without a trailing slash, else https://huggingface.co.
std::string endpoint();
// $HF_TOKEN, else the token file ($HF_HOME/token, else ~/.cache/huggingface/token), trimmed;
// nullopt when none. Never printed, logged or written anywhere.
std::optional<std::string> token();
// Where the token came from, for messages ("HF_TOKEN", "the token file <path>"); never the token.
std::string token_origin();

// Offline: HF_HUB_OFFLINE set to 1/ON/YES/TRUE, `--offline` on this call (OfflineScope, per
// thread: the web server runs calls side by side), or set for the process (`serve --offline`).
bool offline();
void set_process_offline(bool on);
class OfflineScope {
 public:
  explicit OfflineScope(bool on);
  ~OfflineScope();
  OfflineScope(const OfflineScope&) = delete;
  OfflineScope& operator=(const OfflineScope&) = delete;

 private:
  bool prev_;
};

// Whether a model id may name a local folder or config.json. The web API turns this off for its
// requests (LocalPathsScope(false), per thread): a request must never make the server read a
// file of its choosing, while a Hugging Face id still resolves through the caches and the Hub.
bool local_paths_allowed();
class LocalPathsScope {
 public:
  explicit LocalPathsScope(bool allowed);
  ~LocalPathsScope();
  LocalPathsScope(const LocalPathsScope&) = delete;
  LocalPathsScope& operator=(const LocalPathsScope&) = delete;

 private:
  bool prev_;
};

}  // namespace headroom::hub
