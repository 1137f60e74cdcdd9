// Catalog lookup: which embedded data/models/<org>/<name>/ folder answers a model id, and, when
// none holds that id, which one may stand in for it and how (a copy under another owner or in a
// local folder of the same name, an official -FP8 or Qwen -AWQ sibling derived from its base, a Google Gemma base
// derived from NVIDIA's ModelOpt NVFP4 copy of it). The stand-ins are
// rules about how model owners publish checkpoints, checked on the catalog's own pairs; each says
// so in Model::resolved_note, so a forecast built on one is never passed off as the real file's.
// Not a stand-in: a dated re-release (DeepSeek-V4-Flash-0731 has about 8x the KV bytes per token of
// DeepSeek-V4-Flash at the same flags, vllm#51041), so "-MMDD" is not stripped.
#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "headroom/embedded.h"
#include "model/model_internal.h"

namespace headroom::model_detail {

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& ch : o) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return o;
}

namespace {

std::string_view last_component(std::string_view s) {
  while (!s.empty() && s.back() == '/') s.remove_suffix(1);
  auto slash = s.rfind('/');
  return slash == std::string_view::npos ? s : s.substr(slash + 1);
}

std::string_view owner_of(std::string_view id) {
  auto slash = id.find('/');
  return slash == std::string_view::npos ? std::string_view{} : id.substr(0, slash);
}

// Renamed repositories (data/models/renamed.json): lower-case old id -> new id and back, so a
// lookup of either name finds the catalog folder stored under the other.
const std::map<std::string, std::string>& renamed_index() {
  static const std::map<std::string, std::string> idx = [] {
    std::map<std::string, std::string> out;
    auto text = embedded_file("models/renamed.json");
    if (!text) return out;
    auto j = nlohmann::json::parse(*text);
    for (const auto& [from, to] : j.at("renamed").items()) {
      out.emplace(lower(from), to.get<std::string>());
      out.emplace(lower(to.get<std::string>()), from);
    }
    return out;
  }();
  return idx;
}

// Lower-case repository name (no owner) -> the catalog ids that carry it.
const std::map<std::string, std::vector<std::string>>& name_index() {
  static const std::map<std::string, std::vector<std::string>> idx = [] {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& [k, id] : catalog_index()) out[lower(last_component(id))].push_back(id);
    return out;
  }();
  return idx;
}

// The id itself (any case) or its renamed twin.
std::optional<std::string> exact(std::string_view spec) {
  const auto& idx = catalog_index();
  auto it = idx.find(lower(spec));
  if (it != idx.end()) return it->second;
  auto r = renamed_index().find(lower(spec));
  if (r != renamed_index().end()) {
    it = idx.find(lower(r->second));
    if (it != idx.end()) return it->second;
  }
  return std::nullopt;
}

// The catalog id for `spec`, or for a repository or folder of the same name under another owner
// when exactly one catalog entry has that name (a local copy such as /models/Qwen3-32B, or a
// mirror such as unsloth/Qwen3-32B: same name, assumed the same files).
std::optional<CatalogHit> by_name(std::string_view spec) {
  if (auto id = exact(spec)) return CatalogHit{*id, Derivation::None, ""};
  auto it = name_index().find(lower(last_component(spec)));
  if (it == name_index().end() || it->second.size() != 1) return std::nullopt;
  const std::string& id = it->second.front();
  return CatalogHit{id, Derivation::None,
                    std::string(spec) + " is not in the catalog; using " + id +
                        " (same repository name: assumed a copy of the same checkpoint)"};
}

bool has_quantization(const std::string& id) {
  auto cfg = embedded_file("models/" + id + "/config.json");
  return !cfg || cfg->find("\"quantization_config\"") != std::string_view::npos ||
         embedded_file("models/" + id + "/hf_quant_config.json").has_value();
}

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && lower(s.substr(s.size() - suffix.size())) == suffix;
}

}  // namespace

// Official -FP8 siblings. Qwen (Qwen3, Qwen3-Next, Qwen3-VL, Qwen3-Coder, Qwen3.x) and Z.ai's GLM-5
// family publish <name>-FP8 as <name>'s config.json plus one quantization_config: fp8, e4m3,
// dynamic activations, weight_block_size [128, 128], everything but lm_head, embeddings, norms and
// the MoE router quantized. Deriving that from the base reproduces the real -FP8 file's tensor
// bytes exactly on every such pair in data/models (tests/model_catalog_lookup_test.cpp). Not
// derived: GLM-4.x -FP8 (compressed-tensors: GLM-4.5-Air-FP8 is 0.13 % off), other owners' -FP8
// (RedHatAI / neuralmagic compressed-tensors), and bases that are already quantized.
bool derives_fp8_block_sibling(const std::string& base_id) {
  std::string_view owner = owner_of(base_id), name = last_component(base_id);
  bool family = owner == "Qwen" || (owner == "zai-org" && name.substr(0, 5) == "GLM-5");
  return family && !has_quantization(base_id);
}

const std::map<std::string, std::string>& catalog_index() {
  static const std::map<std::string, std::string> idx = [] {
    std::map<std::string, std::string> out;
    const std::string_view prefix = "models/", suffix = "/config.json";
    for (auto path : embedded_files(prefix)) {
      if (path.size() <= prefix.size() + suffix.size() || path.substr(path.size() - suffix.size()) != suffix) continue;
      std::string id(path.substr(prefix.size(), path.size() - prefix.size() - suffix.size()));
      if (std::count(id.begin(), id.end(), '/') != 1) continue;
      out.emplace(lower(id), id);
    }
    return out;
  }();
  return idx;
}

std::optional<CatalogHit> find_in_catalog(std::string_view spec) {
  if (auto hit = by_name(spec)) return hit;
  std::string_view name = last_component(spec);

  // Official quantized siblings: <base><suffix> from <base>'s config plus the owner's quantization.
  struct Sibling {
    std::string_view suffix;
    Derivation how;
    bool (*derives)(const std::string& base_id);
    std::string_view quantization;
  };
  static constexpr Sibling kSiblings[] = {
      {"-fp8", Derivation::Fp8Block, derives_fp8_block_sibling,
       "the block-FP8 quantization (e4m3, 128x128 blocks) of the owner's official -FP8 checkpoints (exact on every such pair in the catalog)"},
      {"-awq", Derivation::Awq4, derives_awq_sibling,
       "the 4-bit AWQ quantization (GEMM, group 128, zero point, float16) of Qwen's official -AWQ checkpoints"},
  };
  for (const Sibling& s : kSiblings) {
    if (!ends_with_ci(name, s.suffix)) continue;
    auto base = by_name(spec.substr(0, spec.size() - s.suffix.size()));
    if (base && s.derives(base->id))
      return CatalogHit{base->id, s.how,
                        std::string(spec) + " is not in the catalog; derived from " + base->id + "'s config plus " +
                            std::string(s.quantization) + ", not read from the real file"};
  }
  if (derives_base_from_nvfp4_copy(spec)) {
    auto copy = exact("nvidia/" + std::string(name) + "-NVFP4");
    if (copy)
      return CatalogHit{*copy, Derivation::StripQuantization,
                        std::string(spec) + " is not in the catalog; derived from " + *copy +
                            "'s config without its NVFP4 quantization (NVIDIA's ModelOpt copies keep the base config.json and add "
                            "quantization_config: exact on google/gemma-4-26B-A4B), not read from the real file"};
  }
  return std::nullopt;
}

// Google's Gemma bases from NVIDIA's ModelOpt NVFP4 copies. ModelOpt writes the base checkpoint's
// config.json back with a quantization_config (and an hf_quant_config.json) added: the catalog's
// google/gemma-4-26B-A4B and nvidia/Gemma-4-26B-A4B-NVFP4 differ only in that, transformers_version
// and a top-level eos_token_id list, and removing the quantization gives the base's checkpoint
// bytes exactly (tests/model_catalog_lookup_test.cpp). Google publishes its Gemma checkpoints
// unquantized (bf16), so the copy minus its quantization is the base. Not applied to other owners:
// DeepSeek's and MiniMax's bases are FP8 themselves (their NVFP4 copies replace that quantization),
// and Qwen's / Z.ai's bases are in the catalog where NVIDIA copied them.
bool derives_base_from_nvfp4_copy(std::string_view spec) {
  return owner_of(spec) == "google" && !ends_with_ci(last_component(spec), "-nvfp4");
}

std::string without_quantization(std::string_view config_text, const std::string& source) {
  json j = parse_json(config_text, source);
  j.erase("quantization_config");
  return j.dump();
}

// Qwen's official -AWQ siblings (Qwen2.5-*-Instruct-AWQ, Qwen2.5-Coder-*-AWQ, Qwen3-*-AWQ, QwQ-32B-AWQ)
// are AutoAWQ's output: the base config.json in float16 with {"bits": 4, "group_size": 128,
// "quant_method": "awq", "version": "gemm", "zero_point": true}, every decoder Linear quantized and
// lm_head / embeddings kept. Vision models are left out (their towers are kept whole, per model).
bool derives_awq_sibling(const std::string& base_id) {
  if (owner_of(base_id) != "Qwen" || has_quantization(base_id)) return false;
  auto cfg = embedded_file("models/" + base_id + "/config.json");
  return cfg && cfg->find("\"vision_config\"") == std::string_view::npos;
}

std::string with_awq_quantization(std::string_view config_text, const std::string& source) {
  json j = parse_json(config_text, source);
  j["torch_dtype"] = "float16";
  j["quantization_config"] = {{"bits", 4}, {"group_size", 128}, {"quant_method", "awq"}, {"version", "gemm"}, {"zero_point", true}};
  return j.dump();
}

std::string with_fp8_block_quantization(std::string_view config_text, const std::string& source) {
  json j = parse_json(config_text, source);
  j["quantization_config"] = {{"activation_scheme", "dynamic"}, {"fmt", "e4m3"}, {"quant_method", "fp8"},
                              {"weight_block_size", {128, 128}}};
  return j.dump();
}

}  // namespace headroom::model_detail
