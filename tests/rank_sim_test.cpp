// RankSim: the per-rank timeline's central value and its favourable / unfavourable scenarios,
// for a temporary that is allocated and given back within a stage (vLLM's profile run and
// sampler warm-up), and the verdict that its peak decides.
#include <gtest/gtest.h>

#include "headroom/sim.h"
#include "headroom/units.h"

using namespace headroom;

TEST(RankSim, AnEstimatedTemporaryIsGivenBackInEveryScenario) {
  // 10 GiB card: a 2 GiB exact allocation, then a temporary of 3 GiB (1 .. 4) freed again.
  RankSim sim(0, 10 * GiB);
  sim.begin_stage(StageId::Weights);
  sim.alloc("weights", 2 * GiB);
  sim.begin_stage(StageId::Warmup);
  sim.alloc_estimated("temporary", 3 * GiB, 1 * GiB, 4 * GiB);
  sim.release_estimated("temporary freed", 3 * GiB, 1 * GiB, 4 * GiB);
  RankForecast r = sim.finish();
  const Stage& w = r.stages.back();
  // Back to 8 GiB free in every scenario: nothing of the temporary stays behind (releasing only
  // the central 3 GiB left 1 GiB in the worst case and -2 GiB in the best one).
  EXPECT_EQ(w.free_bytes_after, 8 * GiB);
  EXPECT_EQ(w.free_worst, 8 * GiB);
  EXPECT_EQ(w.free_best, 8 * GiB);
  // Its peak: 8 - 3 = 5 GiB free, 8 - 4 = 4 GiB in the worst case.
  EXPECT_EQ(w.min_free, 5 * GiB);
  EXPECT_EQ(w.min_free_worst, 4 * GiB);
  EXPECT_EQ(verdict_from_ranks({r}, sim.failure()), Verdict::Fits);
}

TEST(RankSim, ATemporaryThatFitsOnlyAtItsCentralValueIsAtRisk) {
  // 6 GiB free before a temporary of 5 GiB (2 .. 7): it fits at 5, not at 7, and is gone after
  // the stage, so only the stage's peak shows the risk.
  RankSim sim(0, 10 * GiB);
  sim.begin_stage(StageId::Weights);
  sim.alloc("weights", 4 * GiB);
  sim.begin_stage(StageId::Warmup);
  sim.alloc_estimated("sampler warm-up", 5 * GiB, 2 * GiB, 7 * GiB);
  sim.release_estimated("sampler warm-up freed", 5 * GiB, 2 * GiB, 7 * GiB);
  RankForecast r = sim.finish();
  EXPECT_FALSE(sim.failed());
  EXPECT_EQ(r.stages.back().free_worst, 6 * GiB);
  EXPECT_EQ(r.stages.back().min_free_worst, -1 * GiB);
  EXPECT_EQ(verdict_from_ranks({r}, sim.failure()), Verdict::AtRisk);
}

TEST(RankSim, ATemporaryThatDoesNotFitAtItsCentralValueFails) {
  RankSim sim(0, 10 * GiB);
  sim.begin_stage(StageId::Weights);
  sim.alloc("weights", 4 * GiB);
  sim.begin_stage(StageId::Warmup);
  EXPECT_FALSE(sim.alloc_estimated("sampler warm-up", 7 * GiB, 5 * GiB, 8 * GiB));
  ASSERT_TRUE(sim.failed());
  EXPECT_EQ(sim.failure()->stage, StageId::Warmup);
  EXPECT_EQ(sim.failure()->request_bytes, 7 * GiB);
  EXPECT_EQ(sim.failure()->free_bytes, 6 * GiB);
  RankForecast r = sim.finish();
  EXPECT_EQ(verdict_from_ranks({r}, sim.failure()), Verdict::Oom);
}
