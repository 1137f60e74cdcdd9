// Small helpers of the Forecast types.
#include "headroom/forecast.h"

namespace headroom {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Fits: return "fits";
    case Verdict::AtRisk: return "at_risk";
    case Verdict::Oom: return "oom";
    case Verdict::Refused: return "refused";
  }
  return "fits";
}

const std::string* Forecast::setting(std::string_view key) const {
  for (const auto& [k, v] : settings)
    if (k == key) return &v;
  return nullptr;
}

void Forecast::repeat_rank(size_t index, int rank) {
  RankForecast copy = ranks[index];
  copy.rank = rank;
  ranks.push_back(std::move(copy));
}

}  // namespace headroom
