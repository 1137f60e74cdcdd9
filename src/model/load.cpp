// load_model(): a local model folder or a config.json path, a Hub id found in the local Hugging
// Face cache or headroom's cache, a catalog id (embedded data/models/<org>/<name>/), or a Hub id
// read from the Hub (hub_model.h) -> Model (config, tensor inventory, totals). A folder's *.safetensors headers
// are the truth when present (the derived inventory is compared with them and differences
// noted); model.safetensors.index.json's metadata.total_size is used when shards are absent.
// Catalog models are cached (mutex-guarded; the web server calls this from several threads).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "headroom/cli.h"
#include "headroom/embedded.h"
#include "headroom/error.h"
#include "headroom/file_reach.h"
#include "headroom/gguf.h"
#include "headroom/model.h"
#include "headroom/units.h"
#include "model/hub_env.h"
#include "model/hub_model.h"
#include "model/model_cache.h"
#include "model/model_internal.h"

namespace fs = std::filesystem;

namespace headroom {
namespace {

using namespace model_detail;

void add_guess_notes(Model& m) {
  const auto& c = m.config;
  if (c.vision.present && c.vision.kind.empty())
    m.notes.push_back("vision tower present in config but not modelled: its weights are not in the inventory");
  if (c.family == "glm4_moe" && c.num_nextn_predict_layers > 0)
    m.notes.push_back("guess: GLM-4.x MTP layer assumed to hold no embed_tokens/shared_head.head copies (as GLM-5)");
  if (c.family == "minimax_m2")
    m.notes.push_back("MiniMax-M2 MTP modules (use_mtp) are not in the derived inventory");
  if (c.family == "nemotron_h")
    m.notes.push_back("Nemotron-H MTP / latent-MoE projections are not in the derived inventory");
  if (c.family == "mimo_v2")
    m.notes.push_back("guess: MiMo-V2-Flash router gate and e_score_correction_bias stored as F32 (vLLM allocates them in float32); MTP weights not listed (vLLM skips them)");
  if (c.family == "deepseek_v4")
    m.notes.push_back("guess: DeepSeek-V4 router gate stored in the model dtype, hash table tid2eid as I32, MTP layer sharing embed/head with the main model, no indexer k_norm; experts " +
                      std::string(c.expert_fp4 ? "MXFP4 (expert_dtype fp4)" : "FP8 block (no expert_dtype fp4)"));
  if (c.family == "gemma4" && c.attention_k_eq_v)
    m.notes.push_back("Gemma-4 k_eq_v layers: the V slot vLLM and SGLang fill with a copy of k_proj is added to their per-rank weights (not to TensorRT-LLM's: its loader not checked, checkpoint bytes used)");
}

// Writes the override's keys over config.json as the engine does (ConfigOverride).
void apply_override(json& cfg, const json& over, bool into_sub_configs) {
  for (const auto& [k, v] : over.items()) {
    const bool sub_config = k.size() > 7 && k.compare(k.size() - 7, 7, "_config") == 0 && k != "quantization_config";
    auto it = cfg.find(k);
    if (into_sub_configs && sub_config && v.is_object() && it != cfg.end() && it->is_object()) apply_override(*it, v, true);
    else cfg[k] = v;
  }
}

std::string overridden_config(std::string_view config_text, const std::string& config_src, const ConfigOverride& o, std::vector<std::string>& keys) {
  // parse_json: nesting guard, Python's Infinity/NaN, and any JSON error (a number like 1e309
  // overflows) as one input-error line naming the option.
  json over = parse_json(o.json_text, "command line " + o.option);
  if (!over.is_object()) fail_input("command line", o.option, "must be a JSON object of config.json keys");
  json cfg = parse_json(config_text, config_src);
  if (!cfg.is_object()) fail_input(config_src, "", "config.json is not a JSON object");
  apply_override(cfg, over, o.into_sub_configs);
  for (const auto& [k, v] : over.items()) keys.push_back(k);
  return cfg.dump();
}

// Where a model's safetensors headers and index come from: a local folder, or the bytes headroom's
// cache / the Hub gave (hub_model.h). Read only after the config parsed, shard by shard.
struct Checkpoint {
  std::vector<std::string> shards;                               // source labels, sorted
  std::function<SafetensorsHeader(size_t)> read_shard;           // header of shards[i]
  std::function<std::optional<std::pair<std::string, std::string>>()> index;  // (source, text) of model.safetensors.index.json
};

Checkpoint folder_checkpoint(const std::string& dir) {
  Checkpoint ck;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && e.path().extension() == ".safetensors") ck.shards.push_back(e.path().string());
  std::sort(ck.shards.begin(), ck.shards.end());
  ck.read_shard = [shards = ck.shards](size_t i) { return read_safetensors_file(shards[i]); };
  ck.index = [dir]() -> std::optional<std::pair<std::string, std::string>> {
    fs::path idx = fs::path(dir) / "model.safetensors.index.json";
    std::error_code ec2;
    if (!fs::exists(idx, ec2)) return std::nullopt;
    return std::make_pair(idx.string(), read_text_file(idx.string()));
  };
  return ck;
}

Checkpoint snapshot_checkpoint(const hub::Snapshot& s) {
  Checkpoint ck;
  const std::string base = s.repo + "@" + s.sha.substr(0, 12) + " ";
  for (const auto& sh : s.shards) ck.shards.push_back(base + sh.name);
  ck.read_shard = [&s, base](size_t i) { return parse_safetensors_header(s.shards[i].prefix, s.shards[i].file_size, base + s.shards[i].name); };
  ck.index = [&s, base]() -> std::optional<std::pair<std::string, std::string>> {
    auto it = s.files.find("model.safetensors.index.json");
    if (it == s.files.end()) return std::nullopt;
    return std::make_pair(base + it->first, it->second);
  };
  return ck;
}

// Builds the model from config text (+ optional hf_quant_config text) and, when a checkpoint is
// given, reconciles with its safetensors headers / index.
std::shared_ptr<Model> build(std::string_view config_text_in, const std::string& config_src, std::string_view hq_text,
                             const std::string& hq_src_dir, const std::function<Checkpoint()>& checkpoint, const ConfigOverride* over = nullptr) {
  auto m = std::make_shared<Model>();
  std::string merged;
  std::vector<std::string> keys;
  if (over) merged = overridden_config(config_text_in, config_src, *over, keys);
  std::string_view config_text = over ? std::string_view(merged) : config_text_in;
  m->config = parse_model_config(config_text, over ? config_src + " as " + over->option + " rewrites it" : config_src, hq_text);
  if (over) m->override_note = fmt::format("config.json as {} rewrites it: {}", over->option, fmt::join(keys, ", "));
  (void)hq_src_dir;
  m->tensors = derive_inventory(m->config);
  compute_totals(*m);
  add_guess_notes(*m);
  if (!checkpoint) return m;

  // Safetensors shards: headers only.
  const Checkpoint ck = checkpoint();
  const std::vector<std::string>& shards = ck.shards;
  if (!shards.empty()) {
    std::unordered_map<std::string, const TensorInfo*> derived;
    for (const auto& t : m->tensors) derived.emplace(t.name, &t);
    std::vector<TensorInfo> real;
    std::set<std::string> seen;
    for (size_t si = 0; si < shards.size(); ++si) {
      const std::string& s = shards[si];
      auto h = ck.read_shard(si);
      for (auto& t : h.tensors) {
        if (!seen.insert(t.name).second) fail_input(s, t.name, "tensor appears in more than one shard");
        auto it = derived.find(t.name);
        if (it != derived.end()) {
          const TensorInfo& d = *it->second;
          t.role = d.role;
          t.layer = d.layer;
          t.expert = d.expert;
          t.params = (d.shape == t.shape && d.dtype == t.dtype) ? d.params : 0;
          if (t.params == 0 && d.params > 0) classify_tensor(m->config, t), t.role = d.role, t.layer = d.layer, t.expert = d.expert;
        } else {
          classify_tensor(m->config, t);
        }
        real.push_back(std::move(t));
      }
    }
    // Differences between the derived and the real inventory.
    int64_t derived_bytes = m->checkpoint_bytes;
    std::vector<std::string> missing, extra, differ;
    std::unordered_map<std::string, const TensorInfo*> real_by_name;
    for (const auto& t : real) real_by_name.emplace(t.name, &t);
    for (const auto& d : m->tensors) {
      auto it = real_by_name.find(d.name);
      if (it == real_by_name.end()) missing.push_back(d.name);
      else if (it->second->shape != d.shape || it->second->dtype != d.dtype) differ.push_back(d.name);
    }
    for (const auto& t : real)
      if (!derived.count(t.name)) extra.push_back(t.name);
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (size_t i = 0; i < v.size() && i < 3; ++i) s += (i ? ", " : "") + v[i];
      if (v.size() > 3) s += fmt::format(", ... ({} more)", v.size() - 3);
      return s;
    };
    m->tensors = std::move(real);
    m->from_safetensors = true;
    compute_totals(*m);
    if (!missing.empty()) m->notes.push_back(fmt::format("{} derived tensors not in the safetensors files: {}", missing.size(), list(missing)));
    if (!extra.empty()) m->notes.push_back(fmt::format("{} safetensors tensors not in the derived inventory: {}", extra.size(), list(extra)));
    if (!differ.empty()) m->notes.push_back(fmt::format("{} tensors differ in shape or dtype from the derived inventory: {}", differ.size(), list(differ)));
    if (derived_bytes != m->checkpoint_bytes)
      m->notes.push_back(fmt::format("derived inventory {} bytes vs safetensors {} bytes ({:+.3f}%)", derived_bytes, m->checkpoint_bytes,
                                     100.0 * static_cast<double>(derived_bytes - m->checkpoint_bytes) / static_cast<double>(std::max<int64_t>(1, m->checkpoint_bytes))));
    return m;
  }
  // No shards: the index's metadata.total_size tells the real checkpoint size.
  if (auto idx = ck.index()) {
    const std::string& src = idx->first;
    json j = parse_json(idx->second, src);
    const json* md = j.is_object() ? find_key({&j}, "metadata") : nullptr;
    std::optional<int64_t> total;
    if (md && md->is_object()) total = get_int({md}, "total_size", src, 0, int64_t{1} << 55);
    if (total) {
      int64_t derived_bytes = m->checkpoint_bytes;
      m->notes.push_back(fmt::format("checkpoint_bytes from {} metadata.total_size = {} (derived inventory {}, {:+.3f}%)", src, *total,
                                     derived_bytes, 100.0 * static_cast<double>(derived_bytes - *total) / static_cast<double>(std::max<int64_t>(1, *total))));
      m->checkpoint_bytes = *total;
    }
  }
  return m;
}

// The catalog models built so far, by lower-case id (bounded by the catalog's size).
std::mutex& catalog_cache_mutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, std::shared_ptr<const Model>>& catalog_cache() {
  static std::map<std::string, std::shared_ptr<const Model>> cache;
  return cache;
}

std::optional<std::string> read_optional(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  return read_text_file(p.string());
}

// A model found by its Hub id in a cache or on the Hub (hub_model.h); the note says where.
std::shared_ptr<const Model> from_resolution(const hub::HubResolution& r, const hub::RepoRef& ref, const ConfigOverride* over) {
  std::shared_ptr<Model> m;
  if (r.from == hub::HubResolution::From::HfCache) {
    const fs::path p(r.folder);
    const fs::path cfg = p / "config.json";
    std::string text = read_text_file(cfg.string());
    std::string hq = read_optional(p / "hf_quant_config.json").value_or("");
    m = build(text, cfg.string(), hq, p.string(), [d = p.string()] { return folder_checkpoint(d); }, over);
  } else {
    const hub::Snapshot& s = r.snapshot;
    const std::string base = s.repo + "@" + s.sha.substr(0, 12) + " ";
    auto cfg = s.files.find("config.json");
    if (cfg == s.files.end()) fail_input(base + "config.json", "config.json", "missing from the snapshot");
    auto hq = s.files.find("hf_quant_config.json");
    m = build(cfg->second, base + "config.json", hq == s.files.end() ? std::string_view{} : std::string_view(hq->second), "",
              [&s] { return snapshot_checkpoint(s); }, over);
  }
  m->config.hf_id = ref.repo;
  m->resolved_note = r.note;
  m->notes.insert(m->notes.begin(), r.note);
  return m;
}

// The current CLI call's models found by Hub id (hub::ResolutionMemo), keyed by the id as given.
thread_local std::map<std::string, std::shared_ptr<const Model>>* t_hub_memo = nullptr;

std::shared_ptr<const Model> memoised(const std::string& spec, std::shared_ptr<const Model> m) {
  if (t_hub_memo) t_hub_memo->emplace(spec, m);
  return m;
}

}  // namespace

hub::ResolutionMemo::ResolutionMemo() : owner_(t_hub_memo == nullptr) {
  if (owner_) t_hub_memo = new std::map<std::string, std::shared_ptr<const Model>>();
}
hub::ResolutionMemo::~ResolutionMemo() {
  if (!owner_) return;
  delete t_hub_memo;
  t_hub_memo = nullptr;
}

bool is_cached_catalog_model(const Model& m) {
  std::lock_guard<std::mutex> lock(catalog_cache_mutex());
  for (const auto& [k, v] : catalog_cache())
    if (v.get() == &m) return true;
  return false;
}

std::vector<std::string> model_catalog_ids() {
  std::vector<std::string> ids;
  for (const auto& [k, v] : catalog_index()) ids.push_back(v);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::shared_ptr<const Model> load_model(std::string_view spec_in, const ConfigOverride* over) {
  std::string spec(spec_in);
  if (spec.empty()) fail_input("--model", "", "empty model name");
  std::error_code ec;
  fs::path p(spec);
  // Inside a web request only the request's own upload folder is a path (file_reach.h), and a
  // model named there is an id, never a server folder (hub_env.h).
  const bool local = hub::local_paths_allowed() && may_open_path(spec);
  if (local && fs::is_directory(p, ec)) {
    fs::path cfg = p / "config.json";
    if (!fs::is_regular_file(cfg, ec) && gguf::is_gguf_path(p.string()))
      fail_input(spec, "model", "a folder of GGUF files: `headroom model` reads it; planning it needs --engine llamacpp, not implemented yet");
    if (!fs::is_regular_file(cfg, ec)) fail_input(spec, "config.json", "folder has no config.json");
    std::string text = read_text_file(cfg.string());
    std::string hq = read_optional(p / "hf_quant_config.json").value_or("");
    return build(text, cfg.string(), hq, p.string(), [d = p.string()] { return folder_checkpoint(d); }, over);
  }
  if (local && fs::is_regular_file(p, ec)) {
    // A GGUF file is a llama.cpp model, not a config.json: say so instead of "too large".
    if (gguf::has_gguf_magic(p.string()))
      fail_input(spec, "model", "a GGUF file: `headroom model` reads it; planning it needs --engine llamacpp, not implemented yet");
    std::string text = read_text_file(p.string());
    std::string hq;
    if (p.filename() == "config.json") hq = read_optional(p.parent_path() / "hf_quant_config.json").value_or("");
    return build(text, p.string(), hq, p.parent_path().string(), {}, over);
  }
  // A Hub id: the local Hugging Face cache, then headroom's own cache (hub_model.h).
  const auto ref = hub::parse_repo_ref(spec);
  std::string corrupt;
  if (ref && !over && t_hub_memo)
    if (auto it = t_hub_memo->find(spec); it != t_hub_memo->end()) return it->second;
  if (ref)
    if (auto r = hub::resolve_cached(*ref, &corrupt)) return over ? from_resolution(*r, *ref, over) : memoised(spec, from_resolution(*r, *ref, over));
  // Catalog id (or a stand-in for one: catalog_lookup.cpp). Not for ID@REVISION: the catalog's
  // copy is of no known commit.
  auto& mu = catalog_cache_mutex();
  auto& cache = catalog_cache();
  std::optional<CatalogHit> hit;
  if (!ref || !ref->revision_given) hit = find_in_catalog(spec);
  if (!hit) {
    // Suggest ids sharing the last path component, case-insensitively.
    std::string key = lower(spec.substr(spec.rfind('/') == std::string::npos ? 0 : spec.rfind('/') + 1));
    std::string hint;
    for (const auto& [k, v] : catalog_index())
      if (!key.empty() && k.find(key) != std::string::npos && hint.size() < 200) hint += (hint.empty() ? "" : ", ") + v;
    if (hint.empty()) {  // else the nearest id by edit distance (a typo: Qwen/Qwen3-8X -> Qwen/Qwen3-8B)
      std::vector<std::string> ids;
      for (const auto& [k, v] : catalog_index()) ids.push_back(v);
      hint = did_you_mean(spec, ids);
    }
    if (ref) {  // then the Hub; a repository it does not know (or offline) keeps the catalog's suggestions
      try {
        auto m = from_resolution(hub::resolve_from_hub(*ref, spec, corrupt), *ref, over);
        return over ? m : memoised(spec, m);
      } catch (const InputError& e) {
        if (hint.empty() || e.field() != "model") throw;
        fail_input(e.source(), e.field(), e.problem() + "; did you mean: " + hint);
      }
    }
    fail_input(spec, "model", hint.empty() ? "not a folder, a config.json or a catalog id (see data/models/INDEX.md)"
                                           : "not a folder, a config.json or a catalog id; did you mean: " + hint);
  }
  const std::string key = hit->note.empty() ? hit->id : lower(spec);
  if (!over) {  // overridden configs are built each time, not cached (any text a user sends)
    std::lock_guard<std::mutex> lock(mu);
    auto c = cache.find(key);
    if (c != cache.end()) return c->second;
  }
  const std::string& id = hit->id;
  const Derivation how = hit->derivation;
  const std::string src = "data/models/" + id + "/config.json" +
                          (how == Derivation::Fp8Block            ? " + derived block-FP8"
                           : how == Derivation::Awq4              ? " + derived AWQ"
                           : how == Derivation::StripQuantization ? " without its quantization"
                                                                  : "");
  auto cfg = embedded_file("models/" + id + "/config.json");
  // A ModelOpt copy standing in for its base: neither its quantization_config nor hf_quant_config.json.
  auto hq = how == Derivation::StripQuantization ? std::nullopt : embedded_file("models/" + id + "/hf_quant_config.json");
  std::string derived = how == Derivation::Fp8Block            ? with_fp8_block_quantization(*cfg, src)
                        : how == Derivation::Awq4              ? with_awq_quantization(*cfg, src)
                        : how == Derivation::StripQuantization ? without_quantization(*cfg, src)
                                                               : std::string();
  auto m = build(derived.empty() ? *cfg : std::string_view(derived), src, hq ? *hq : std::string_view{}, "", {}, over);
  m->config.hf_id = hit->note.empty() ? id : spec;
  m->resolved_note = hit->note;
  if (!hit->note.empty()) m->notes.insert(m->notes.begin(), hit->note);
  if (over) return m;
  std::lock_guard<std::mutex> lock(mu);
  auto [pos, inserted] = cache.emplace(key, std::move(m));
  return pos->second;
}

}  // namespace headroom
