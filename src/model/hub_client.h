// The Hugging Face Hub over HTTP(S) with libcurl: a repo's commit sha and file list
// (GET /api/models/{id}/revision/{rev}), small files (GET /{id}/resolve/{sha}/{file}) and
// safetensors headers by HTTP Range (8-byte length, then the header), following the Hub's
// redirects to its file store. The token goes only to the endpoint (curl drops it on a redirect
// to another host or port). Every failure is one InputError line: gated, not found (the Hub's
// X-Error-Code), network down or timed out, a header too large for its file or the cap.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/headroom_cache.h"
#include "model/repo_ref.h"

namespace headroom::hub {

struct RepoInfo {
  std::string sha;                  // the commit the revision names
  std::vector<std::string> files;   // top-level and nested file names (rfilename)
};

// The Hub's answers, parsed (pure functions: fuzz/fuzz_hub.cpp feeds them hostile bodies).
// The model info JSON of /api/models/{id}/revision/{rev}: its commit sha and file names.
RepoInfo parse_revision_info(const std::string& body, const std::string& url);
// The shards a checkpoint is made of: the index's weight_map files when there is an index,
// else every top-level *.safetensors.
std::vector<std::string> shard_names(const RepoInfo& info, const std::optional<std::string>& index, const std::string& src);

class HubClient {
 public:
  HubClient();  // reads HF_ENDPOINT and the token; call only when not offline
  const std::string& endpoint() const { return endpoint_; }

  RepoInfo revision_info(const RepoRef& ref);
  // A small file at `sha`; nullopt when the Hub says the file does not exist (EntryNotFound).
  std::optional<std::string> fetch_file(const std::string& repo, const std::string& sha, const std::string& file,
                                        int64_t cap = 64 * 1000 * 1000);
  // Bytes [offset, offset + length) of a file at `sha` (a Range request; a server that ignores
  // Range is read up to the end of the range and cut) and the file's size.
  struct Range {
    std::string bytes;
    int64_t file_size = -1;
  };
  Range fetch_range(const std::string& repo, const std::string& sha, const std::string& file, int64_t offset, int64_t length);
  // Each shard's first 8 + header-length bytes and its file size, a few shards at a time.
  std::vector<ShardPrefix> fetch_shard_headers(const std::string& repo, const std::string& sha, const std::vector<std::string>& names);

  int64_t requests() const { return requests_.load(); }
  int64_t bytes_received() const { return bytes_.load(); }

  struct Response;  // hub_client.cpp

 private:
  Response get(const std::string& url, const std::string& what, std::optional<std::pair<int64_t, int64_t>> range, int64_t cap, void* handle);
  [[noreturn]] void fail_status(const Response& r, const std::string& what, const std::string& field);
  ShardPrefix fetch_one_header(const std::string& repo, const std::string& sha, const std::string& name, void* handle);

  std::string endpoint_;
  std::optional<std::string> token_;
  long timeout_s_ = 10;
  std::atomic<int64_t> requests_{0}, bytes_{0};
};

}  // namespace headroom::hub
