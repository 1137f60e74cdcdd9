// The plan JSON of CONTRACT.md.
#include "headroom/report.h"

namespace headroom {

nlohmann::ordered_json forecast_json(const Forecast& f) {
  using J = nlohmann::ordered_json;
  J settings = J::object();
  for (const auto& [k, v] : f.settings) settings[k] = v;
  J ranks = J::array();
  for (const auto& r : f.ranks) {
    J stages = J::array();
    for (const auto& s : r.stages) {
      J items = J::array();
      for (const auto& i : s.items) {
        J it = {{"what", i.what}, {"bytes", i.bytes}, {"estimated", i.estimated}};
        if (i.estimated) it["range"] = {std::min(i.low, i.high), std::max(i.low, i.high)};
        items.push_back(std::move(it));
      }
      stages.push_back({{"name", name(s.id)}, {"free_bytes_after", s.free_bytes_after}, {"estimated", s.estimated},
                        {"free_bytes_after_worst", s.free_worst}, {"free_bytes_after_best", s.free_best},
                        {"min_free_bytes", s.min_free}, {"min_free_bytes_worst", s.min_free_worst},
                        {"items", std::move(items)}});
    }
    ranks.push_back({{"rank", r.rank}, {"capacity_bytes", r.capacity_bytes}, {"stages", std::move(stages)}});
  }
  J failure = nullptr;
  if (f.failure)
    failure = {{"stage", name(f.failure->stage)}, {"rank", f.failure->rank}, {"request_bytes", f.failure->request_bytes},
               {"free_bytes", f.failure->free_bytes}, {"message", f.failure->message}};
  J out{{"verdict", verdict_name(f.verdict)},
           {"engine", {{"name", f.engine}, {"version", f.version}, {"era", f.era}}},
           {"settings", std::move(settings)},
           {"kv_tokens", f.kv_tokens},
           {"max_running_requests", f.max_running_requests},
           {"context_len", f.context_len},
           {"max_concurrency", f.max_concurrency},
           {"headroom_bytes", f.headroom_bytes},
           {"failure", std::move(failure)},
           {"ranks", std::move(ranks)},
           {"log", f.log},
           {"notes", f.notes}};
  if (!f.calibrated_host.empty()) out["calibrated_host"] = f.calibrated_host;
  if (!f.devices.empty()) {
    J devices = J::array();
    for (const auto& d : f.devices)
      devices.push_back({{"name", d.name}, {"host", d.host}, {"layers", d.layers}, {"capacity_bytes", d.capacity_bytes},
                         {"model_buffer_bytes", d.model_buffer_bytes}, {"kv_buffer_bytes", d.kv_buffer_bytes},
                         {"compute_buffer_bytes", d.compute_buffer_bytes},
                         {"compute_buffer_range", {d.compute_low_bytes, d.compute_high_bytes}},
                         {"output_buffer_bytes", d.output_buffer_bytes}, {"recurrent_state_bytes", d.recurrent_state_bytes},
                         {"indexer_cache_bytes", d.indexer_cache_bytes}});
    out["devices"] = std::move(devices);
  }
  return out;
}

}  // namespace headroom
