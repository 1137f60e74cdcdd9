// validate's vLLM kv_tokens_given_memory (see validate_vllm_kv.h): per case, the token interval
// the logged KV memory allows, the point value at the printed figure, and the layout used.
#include "validate/validate_vllm_kv.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "engines/vllm/vllm_kv.h"
#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

std::pair<int64_t, int64_t> gib2_interval(double gib) {
  // vLLM prints GiB as "%.2f" (or format_gib: round(x, 2)): the bytes behind "X" lie in
  // [X - 0.005, X + 0.005) GiB. long double keeps the edges exact to the byte.
  const long double g = static_cast<long double>(GiB);
  const long double x = static_cast<long double>(gib);
  int64_t lo = static_cast<int64_t>(std::ceil((x - 0.005L) * g));
  int64_t hi = static_cast<int64_t>(std::ceil((x + 0.005L) * g)) - 1;
  return {std::max<int64_t>(0, lo), std::max<int64_t>(0, hi)};
}

VllmKvGiven vllm_kv_given_memory(double kv_gib, int64_t kv_tokens, const std::vector<std::string>& base_args,
                                 const std::vector<std::vector<std::string>>& gpu_variants) {
  using J = nlohmann::ordered_json;
  VllmKvGiven out;
  out.row = J{{"kv_gib", kv_gib}, {"observed", kv_tokens}};
  const auto [lo_b, hi_b] = gib2_interval(kv_gib);
  const int64_t point_b = gib_to_bytes(kv_gib);
  bool first = true;
  int workers = 1;
  J gpus = J::array();
  std::string layout;
  try {
    for (const auto& gv : gpu_variants) {
      std::vector<std::string> a = base_args;
      a.insert(a.end(), gv.begin(), gv.end());
      Deployment d = parse_deployment(Args::parse(a));
      workers = std::max(1, d.par.tp) * std::max(1, d.par.pp);
      vllm::KvSizing k = vllm::kv_sizing(d);
      if (k.num_gpu_blocks_override) {
        // get_kv_cache_config replaces num_blocks by the override: the log's tokens are not sized from memory.
        out.row["skipped"] = fmt::format("--num-gpu-blocks-override {}: vLLM does not size the pool from memory", *k.num_gpu_blocks_override);
        return out;
      }
      int64_t lo = vllm::kv_tokens_for_memory(k, lo_b), hi = vllm::kv_tokens_for_memory(k, hi_b);
      int64_t pt = vllm::kv_tokens_for_memory(k, point_b);
      if (gv.size() >= 2) gpus.push_back(gv[1]);
      if (first) {
        out.low = lo;
        out.high = hi;
        out.point = pt;
        layout = k.summary;
        first = false;
      } else {
        out.low = std::min(out.low, lo);
        out.high = std::max(out.high, hi);
        if (k.summary != layout) layout += " | " + k.summary;
      }
    }
  } catch (const InputError& e) {
    out.row["skipped"] = e.what();
    return out;
  }
  if (first) {
    out.row["skipped"] = "no GPU to resolve the defaults with";
    return out;
  }
  out.counted = true;
  out.agree = kv_tokens >= out.low && kv_tokens <= out.high;
  out.row["tokens_low"] = out.low;
  out.row["tokens_high"] = out.high;
  out.row["tokens_point"] = out.point;
  out.row["agree"] = out.agree;
  out.row["err_pct"] = kv_tokens > 0 ? std::round(10000.0 * static_cast<double>(out.point - kv_tokens) / static_cast<double>(kv_tokens)) / 100.0 : 0.0;
  out.row["layout"] = layout;
  // Every worker logs its own "Available KV cache memory" and the engine keeps the least
  // num_blocks: with several workers, a count below the interval fits another worker having had
  // less memory than the one whose line was quoted (not counted as agreement).
  if (!out.agree && workers > 1 && kv_tokens < out.low) out.row["below_min_over_workers"] = true;
  if (gpu_variants.size() > 1) out.row["gpu_unknown_tried"] = gpus;
  return out;
}

}  // namespace headroom
