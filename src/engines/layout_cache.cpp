// Memo of weights_per_rank() keyed by (model, engine, parallelism), for the catalog's cached
// models only: a model built from uploaded config text is computed afresh and not kept.
#include "engines/layout_cache.h"
#include "model/model_cache.h"

#include <map>
#include <mutex>
#include <tuple>

namespace headroom {

std::vector<RankWeights> cached_weights_per_rank(const std::shared_ptr<const Model>& model, EngineKind engine,
                                                        const Parallel& par) {
  using Key = std::tuple<const Model*, int, int, int, int, int, bool>;
  struct Entry {
    std::shared_ptr<const Model> keep;
    std::vector<RankWeights> ranks;
  };
  static std::mutex mu;
  static std::map<Key, Entry> cache;
  if (!is_cached_catalog_model(*model)) return weights_per_rank(*model, engine, par);
  Key k{model.get(), static_cast<int>(engine), par.tp, par.pp, par.ep, par.dp, par.dp_attention};
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(k); it != cache.end()) return it->second.ranks;
  }
  std::vector<RankWeights> ranks = weights_per_rank(*model, engine, par);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() < 4096) cache.emplace(k, Entry{model, ranks});  // bounded for long-running servers
  return ranks;
}

}  // namespace headroom
