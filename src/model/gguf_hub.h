// GGUF headers of a Hub repository's files (the Hub's *-GGUF repos), read with HTTP Range
// requests a block at a time, never the tensor data: `--model ORG/NAME:Q4_K_M` (llama.cpp's own
// -hf spelling) or `--model ORG/NAME --gguf FILE.gguf`.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/gguf.h"
#include "model/repo_ref.h"

namespace headroom::hub {

// "ORG/NAME[@REV]:TAG" (a quant tag after the repo, as llama-server -hf takes it); nullopt otherwise.
struct GgufRef {
  RepoRef ref;
  std::string tag;
};
std::optional<GgufRef> parse_gguf_ref(std::string_view spec);

// The repo and the file a command line names: `ORG/NAME[@REV]:TAG`, or `ORG/NAME[@REV]` with
// --gguf FILE (`file`, nullptr when not given). nullopt when it names neither (no tag, no --gguf);
// InputError for both at once, a spec that is no Hub repo, or an empty file name.
struct GgufWant {
  RepoRef ref;
  std::string want;  // a file name or a quant tag (pick_gguf_file)
};
std::optional<GgufWant> gguf_want(std::string_view spec, const std::string* file);

// The repo's model file for `want`: a file name (exact, or the name of a file in a folder) or a
// quant tag (Q4_K_M: the one model file, or the first part of the one split set, whose name holds
// the tag; projectors aside). One line naming the GGUF files when none or several match.
std::string pick_gguf_file(const std::vector<std::string>& files, const std::string& want, const std::string& repo);

struct HubGguf {
  gguf::ModelFiles files;
  std::string repo, sha, file;  // the file picked (the first part of a split set)
  int64_t bytes_read = 0;       // what the Range requests brought
};
// The header(s) of `want` in `ref`. Offline: one line, and nothing is sent.
HubGguf read_hub_gguf(const RepoRef& ref, const std::string& want);

}  // namespace headroom::hub
