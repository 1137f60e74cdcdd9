// The simulator: one GPU rank's memory, played stage by stage. Engine models call alloc()
// in the engine's own order and read free() where the engine sizes something from free
// memory (the KV pool); the recorded stages become the rank's part of the Forecast.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "headroom/forecast.h"

namespace headroom {

class RankSim {
 public:
  RankSim(int rank, int64_t capacity_bytes);

  void begin_stage(StageId id);
  // Exact allocation. Returns false (and records the failure) when it does not fit.
  bool alloc(std::string what, int64_t bytes);
  // Estimated allocation with a range [low, high] around the central value.
  bool alloc_estimated(std::string what, int64_t central, int64_t low, int64_t high);
  // Memory given back (e.g. a temporary freed before the next stage).
  void release(std::string what, int64_t bytes);
  // An estimated allocation given back: in every scenario the bytes that scenario allocated
  // (releasing the central value alone would leave high - central in the worst case for good).
  void release_estimated(std::string what, int64_t central, int64_t low, int64_t high);

  int64_t capacity() const { return capacity_; }
  int64_t used() const { return used_; }
  int64_t free() const { return capacity_ - used_; }          // central estimate
  int64_t free_worst() const { return capacity_ - used_high_; }
  int64_t free_best() const { return capacity_ - used_low_; }
  const std::optional<Failure>& failure() const { return failure_; }
  bool failed() const { return failure_.has_value(); }

  RankForecast finish();

 private:
  void close_stage();
  void note_trough();
  RankForecast out_;
  int64_t capacity_, used_ = 0, used_low_ = 0, used_high_ = 0;
  std::optional<Failure> failure_;
  bool stage_open_ = false;
};

// Verdict over all ranks: "oom" when a central estimate does not fit, "at_risk" when the
// central estimates fit but the unfavourable end of an estimated range would not (at any
// point of a stage: a transient peak counts, not only what is left after it), otherwise "fits". Refusals are decided by the engine model, not here.
Verdict verdict_from_ranks(const std::vector<RankForecast>& ranks, const std::optional<Failure>& failure);

}  // namespace headroom
