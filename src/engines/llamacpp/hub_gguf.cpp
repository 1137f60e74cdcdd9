// A llama.cpp model from a Hub GGUF repo's file (`--model ORG/NAME:Q4_K_M`, llama-server's -hf
// spelling, or `--model ORG/NAME --gguf FILE.gguf`): its real header, read by Range requests
// (model/gguf_hub.cpp), remembered so tune's many plans ask the Hub once.
#include <fmt/format.h>
#include <map>
#include <mutex>

#include "headroom/error.h"
#include "headroom/llamacpp_plan.h"
#include "model/gguf_hub.h"
#include "model/hub_env.h"

namespace headroom::llamacpp {

std::shared_ptr<const LlamaModel> llama_model_from_hub(const Deployment& d) {
  const auto w = hub::gguf_want(d.model_spec, d.flag("--gguf"));
  if (!w) return nullptr;
  const hub::RepoRef& ref = w->ref;
  const std::string& want = w->want;

  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const LlamaModel>> memo;
  const std::string key = hub::endpoint() + "\n" + ref.repo + "@" + ref.revision + "\n" + want;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  const hub::HubGguf g = hub::read_hub_gguf(ref, want);
  const std::string label = fmt::format("{}@{} {}", g.repo, g.sha.substr(0, 12), g.file);
  LlamaModel m = llama_model_from_gguf_files(g.files, label);
  m.notes.insert(m.notes.begin(), fmt::format("model from the Hugging Face Hub: {}'s GGUF header{} read by Range requests ({:.1f} KiB), no tensor data",
                                              label, g.files.parts.size() > 1 ? fmt::format("s ({} parts)", g.files.parts.size()) : "",
                                              static_cast<double>(g.bytes_read) / 1024.0));
  auto held = std::make_shared<const LlamaModel>(std::move(m));
  std::lock_guard<std::mutex> lock(mu);
  if (memo.size() >= 16) memo.clear();
  memo[key] = held;
  return held;
}

}  // namespace headroom::llamacpp
