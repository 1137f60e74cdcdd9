// Hub-id resolution through the caches and the Hub (hub_model.h).
#include "model/hub_model.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

#include "headroom/error.h"
#include "model/hf_cache.h"
#include "model/hub_client.h"
#include "model/hub_env.h"
#include "model/model_internal.h"

namespace headroom::hub {

// The shards a Hub checkpoint is made of: the index's weight_map files when there is an index,
// else every top-level *.safetensors (a repo may also carry Mistral's consolidated.safetensors).
std::vector<std::string> shard_names(const RepoInfo& info, const std::optional<std::string>& index, const std::string& src) {
  std::set<std::string> names;
  if (index) {
    nlohmann::json j = model_detail::parse_json(*index, src);
    const nlohmann::json* wm = j.is_object() && j.contains("weight_map") ? &j["weight_map"] : nullptr;
    if (wm && wm->is_object()) {
      for (auto it = wm->begin(); it != wm->end(); ++it) {
        if (!it->is_string()) fail_input(src, it.key(), "weight_map value is not a file name");
        const std::string name = it->get<std::string>();
        // The name becomes a cache file name (headers/<name>.header): a plain top-level file only.
        if (name.empty() || name.size() > 255 || name[0] == '.' || name.find_first_of(std::string("/\\\0", 3)) != std::string::npos)
          fail_input(src, it.key(), "weight_map names '" + name.substr(0, 80) + "', not a plain file name at the repository's top level");
        names.insert(name);
      }
      return {names.begin(), names.end()};
    }
  }
  for (const auto& f : info.files)
    if (f.find('/') == std::string::npos && f.size() > 12 && f.compare(f.size() - 12, 12, ".safetensors") == 0) names.insert(f);
  return {names.begin(), names.end()};
}

namespace {

std::string label(const RepoRef& ref) { return ref.repo + "@" + ref.revision; }

HubResolution from_cache(Snapshot s, const RepoRef& ref, std::string extra) {
  HubResolution r;
  r.from = HubResolution::From::HeadroomCache;
  r.note = fmt::format("model from headroom's cache of the Hub: {}{} (commit {}, {}){}", ref.repo,
                       ref.revision == s.sha ? "" : "@" + ref.revision, s.sha, cache_repo_dir(ref.repo), extra);
  r.snapshot = std::move(s);
  return r;
}


HubResolution fetch(HubClient& client, const RepoRef& ref, const RepoInfo& info) {
  const std::string where = ref.repo + "@" + info.sha;
  auto has = [&](const std::string& f) { return std::find(info.files.begin(), info.files.end(), f) != info.files.end(); };
  if (!has("config.json")) {
    if (has("params.json"))
      fail_input(label(ref), "config.json", "the repository has only Mistral's params.json, which headroom does not read; name the transformers-format repository");
    fail_input(label(ref), "config.json", "the repository has no config.json (headroom reads transformers-format repositories)");
  }
  Snapshot s{ref.repo, info.sha, {}, {}};
  for (const char* f : {"config.json", "hf_quant_config.json", "model.safetensors.index.json"}) {
    if (!has(f)) continue;
    auto text = client.fetch_file(ref.repo, info.sha, f);
    if (!text) {
      if (std::string(f) == "config.json") fail_input(where, f, "listed by the Hub but not served (HTTP 404)");
      continue;
    }
    s.files.emplace(f, std::move(*text));
  }
  std::optional<std::string> index;
  if (auto it = s.files.find("model.safetensors.index.json"); it != s.files.end()) index = it->second;
  auto names = shard_names(info, index, where + " model.safetensors.index.json");
  if (!names.empty()) s.shards = client.fetch_shard_headers(ref.repo, info.sha, names);
  // Checked before caching: a malformed header is refused now, never stored.
  for (const auto& sh : s.shards) model_detail::parse_safetensors_header(sh.prefix, sh.file_size, ref.repo + "@" + info.sha.substr(0, 12) + " " + sh.name);

  HubResolution r;
  r.from = HubResolution::From::Hub;
  r.note = fmt::format("model from the Hugging Face Hub ({}): {}{} (commit {}), {} safetensors headers read by HTTP range, {} requests, {:.1f} KiB",
                       client.endpoint(), ref.repo, ref.revision == info.sha ? "" : "@" + ref.revision, info.sha, s.shards.size(),
                       client.requests(), static_cast<double>(client.bytes_received()) / 1024.0);
  if (s.shards.empty()) r.note += " (the repository holds no safetensors shards: the inventory is derived from config.json)";
  std::string why = write_cached_snapshot(s);
  if (why.empty() && ref.revision != info.sha) why = write_cached_ref(ref.repo, ref.revision, info.sha);
  if (!why.empty()) r.note += "; not cached: " + why;
  r.snapshot = std::move(s);
  return r;
}

}  // namespace

std::optional<HubResolution> resolve_cached(const RepoRef& ref, std::string* corrupt) {
  if (auto hit = find_in_hf_cache(ref)) {
    HubResolution r;
    r.from = HubResolution::From::HfCache;
    r.folder = hit->snapshot_dir;
    r.note = fmt::format("model from the Hugging Face cache: {}{} (commit {}, {})", ref.repo, ref.revision == hit->sha ? "" : "@" + ref.revision,
                         hit->sha, hit->snapshot_dir);
    return r;
  }
  const bool pinned = is_commit_sha(ref.revision);
  auto sha = pinned ? std::optional<std::string>(ref.revision) : read_cached_ref(ref.repo, ref.revision);
  if (!sha) return std::nullopt;
  auto snap = read_cached_snapshot(ref.repo, *sha, corrupt);
  if (!snap) return std::nullopt;
  if (pinned || offline()) return from_cache(std::move(*snap), ref, "");
  // A branch or tag may have moved: one request to ask which commit it names now.
  HubClient client;
  RepoInfo info;
  try {
    info = client.revision_info(ref);
  } catch (const InputError& e) {
    if (e.field() != "network") throw;
    return from_cache(std::move(*snap), ref, fmt::format("; the Hub could not be reached to re-check {} ({}), so the cached commit is used", ref.revision, e.problem()));
  }
  if (info.sha == *sha) return from_cache(std::move(*snap), ref, "");
  if (auto moved = read_cached_snapshot(ref.repo, info.sha, corrupt)) {
    write_cached_ref(ref.repo, ref.revision, info.sha);
    return from_cache(std::move(*moved), ref, "");
  }
  return fetch(client, ref, info);
}

HubResolution resolve_from_hub(const RepoRef& ref, const std::string& spec, const std::string& corrupt) {
  if (offline()) {
    const std::string hf = hf_hub_cache_dir(), own = headroom_cache_dir();
    fail_input(spec, "model", fmt::format("not a folder, a config.json or a catalog id, not in the Hugging Face cache ({}) {} headroom's cache ({}); "
                                          "offline (HF_HUB_OFFLINE or --offline), so the Hub was not asked",
                                          hf.empty() ? "none" : hf, corrupt.empty() ? "nor in" : "and corrupt in", corrupt.empty() ? (own.empty() ? "none" : own) : corrupt));
  }
  HubClient client;
  RepoInfo info = client.revision_info(ref);
  std::string ignored;
  if (auto snap = read_cached_snapshot(ref.repo, info.sha, &ignored)) {  // cached under another branch name
    if (ref.revision != info.sha) write_cached_ref(ref.repo, ref.revision, info.sha);
    return from_cache(std::move(*snap), ref, "");
  }
  return fetch(client, ref, info);
}

}  // namespace headroom::hub
