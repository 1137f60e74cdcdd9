// Reading a forecast's rank-0 timeline by stage and item label (calibration compares it with
// the figures a log printed).
#pragma once
#include <optional>
#include <string_view>

#include "headroom/forecast.h"

namespace headroom::calib {

inline const Stage* stage_of(const Forecast& f, StageId id) {
  if (f.ranks.empty()) return nullptr;
  for (const auto& s : f.ranks.front().stages)
    if (s.id == id) return &s;
  return nullptr;
}
inline std::optional<int64_t> free_after(const Forecast& f, StageId id) {
  const Stage* s = stage_of(f, id);
  return s ? std::optional<int64_t>(s->free_bytes_after) : std::nullopt;
}
inline int64_t stage_total(const Forecast& f, StageId id) {
  int64_t t = 0;
  if (const Stage* s = stage_of(f, id))
    for (const auto& i : s->items) t += i.bytes;
  return t;
}
// Sum of the stage's items whose label starts with `prefix` (allocations only).
inline int64_t item_bytes(const Forecast& f, StageId stage, std::string_view prefix) {
  int64_t t = 0;
  if (const Stage* s = stage_of(f, stage))
    for (const auto& i : s->items)
      if (i.bytes > 0 && std::string_view(i.what).substr(0, prefix.size()) == prefix) t += i.bytes;
  return t;
}

}  // namespace headroom::calib
