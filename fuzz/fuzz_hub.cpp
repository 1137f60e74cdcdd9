// Fuzz harness: the Hub's answers as headroom parses them - the model info JSON of
// /api/models/{id}/revision/{rev} and a model.safetensors.index.json (split at the first NUL) -
// must give a RepoInfo and shard names or throw InputError; never crash, hang or name a file
// outside the repository's top level.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "headroom/error.h"
#include "model/hub_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<std::string> index;
  if (auto z = text.find('\0'); z != std::string::npos) {
    index = text.substr(z + 1);
    text.resize(z);
  }
  try {
    const headroom::hub::RepoInfo info = headroom::hub::parse_revision_info(text, "fuzz/revision");
    // Either source (the file list's top-level *.safetensors, an index's plain names) gives names
    // that stay in the cache's folder.
    for (const std::string& name : headroom::hub::shard_names(info, index, "fuzz/index.json"))
      if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos) std::abort();
  } catch (const headroom::InputError&) {
  }
  return 0;
}
