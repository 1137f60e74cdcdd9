// headroom's own cache of what it read from the Hub, by repo and commit sha:
//   <headroom_cache_dir()>/hub/models--ORG--NAME/refs/<revision>          the sha a branch/tag named
//   <headroom_cache_dir()>/hub/models--ORG--NAME/snapshots/<sha>/...      the small files, and each
//       shard's header bytes (8-byte length + JSON) under headers/, listed with sizes and
//       checksums in manifest.json, written last. Every write is a temp file + rename; an entry
//       whose files do not match its manifest is corrupt, reported as such and never trusted.
// Never holds a token or a weight byte.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace headroom::hub {

struct ShardPrefix {
  std::string name;        // "model-00001-of-00002.safetensors"
  int64_t file_size = 0;   // the whole file's size (from the Hub's Content-Range)
  std::string prefix;      // the first 8 + header-length bytes
};

struct Snapshot {
  std::string repo, sha;
  std::map<std::string, std::string> files;  // small file name -> text (config.json, ...)
  std::vector<ShardPrefix> shards;           // sorted by name
};

// The cache folder of `repo` ("" when no cache root can be named).
std::string cache_repo_dir(const std::string& repo);

// The cached snapshot of repo@sha: nullopt when absent; when present but damaged, nullopt with
// `*corrupt` set to what is wrong.
std::optional<Snapshot> read_cached_snapshot(const std::string& repo, const std::string& sha, std::string* corrupt);
// Writes a snapshot (files, headers, then the manifest); "" on success, else why it could not.
std::string write_cached_snapshot(const Snapshot& s);
// refs/<revision> -> sha; "" on success, else why not.
std::string write_cached_ref(const std::string& repo, const std::string& revision, const std::string& sha);
std::optional<std::string> read_cached_ref(const std::string& repo, const std::string& revision);

// Writes `bytes` to `path` through a temp file in the same folder and a rename; "" or the error.
std::string atomic_write(const std::string& path, const std::string& bytes);
// FNV-1a 64-bit checksum as 16 hex digits (corruption detection, not security).
std::string fnv1a64_hex(const std::string& bytes);

}  // namespace headroom::hub
