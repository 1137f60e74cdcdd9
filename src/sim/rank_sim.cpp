// RankSim: plays one rank's allocations stage by stage against the device capacity, keeping a
// central estimate and the [best, worst] range that the estimated terms span.
#include <algorithm>
#include <fmt/format.h>
#include <utility>

#include "headroom/sim.h"
#include "headroom/units.h"

namespace headroom {

RankSim::RankSim(int rank, int64_t capacity_bytes) : capacity_(capacity_bytes) {
  out_.rank = rank;
  out_.capacity_bytes = capacity_bytes;
}

void RankSim::close_stage() {
  if (!stage_open_) return;
  Stage& s = out_.stages.back();
  s.free_bytes_after = free();
  s.free_worst = free_worst();
  s.free_best = free_best();
  stage_open_ = false;
}

void RankSim::begin_stage(StageId id) {
  close_stage();
  Stage s;
  s.id = id;
  s.min_free = free();
  s.min_free_worst = free_worst();
  out_.stages.push_back(std::move(s));
  stage_open_ = true;
}

void RankSim::note_trough() {
  Stage& s = out_.stages.back();
  s.min_free = std::min(s.min_free, free());
  s.min_free_worst = std::min(s.min_free_worst, free_worst());
}

bool RankSim::alloc(std::string what, int64_t bytes) { return alloc_estimated(std::move(what), bytes, bytes, bytes); }

bool RankSim::alloc_estimated(std::string what, int64_t central, int64_t low, int64_t high) {
  if (!stage_open_) begin_stage(StageId::Init);
  Stage& s = out_.stages.back();
  bool estimated = low != central || high != central;
  if (estimated) s.estimated = true;
  if (!failure_ && central > free()) {
    failure_ = Failure{s.id, out_.rank, central, free(),
                       fmt::format("{} needs {} but only {} is free on rank {}", what, human_bytes(central),
                                   human_bytes(free()), out_.rank)};
  }
  s.items.push_back(Item{std::move(what), central, estimated, low, high});
  used_ += central;
  used_low_ += low;
  used_high_ += high;
  note_trough();
  return !failure_;
}

void RankSim::release(std::string what, int64_t bytes) { release_estimated(std::move(what), bytes, bytes, bytes); }

void RankSim::release_estimated(std::string what, int64_t central, int64_t low, int64_t high) {
  if (!stage_open_) begin_stage(StageId::Init);
  Stage& s = out_.stages.back();
  bool estimated = low != central || high != central;
  if (estimated) s.estimated = true;
  s.items.push_back(Item{std::move(what), -central, estimated, -low, -high});
  used_ -= central;
  used_low_ -= low;
  used_high_ -= high;
}

RankForecast RankSim::finish() {
  close_stage();
  return std::move(out_);  // the simulation ends here: hand the stages over, do not copy them
}

Verdict verdict_from_ranks(const std::vector<RankForecast>& ranks, const std::optional<Failure>& failure) {
  if (failure) return Verdict::Oom;
  for (const auto& r : ranks)
    for (const auto& s : r.stages)
      if (std::min(s.free_worst, s.min_free_worst) < 0) return Verdict::AtRisk;
  return Verdict::Fits;
}

}  // namespace headroom
