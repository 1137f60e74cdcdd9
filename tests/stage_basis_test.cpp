// The StageBasis name table: every basis reads back from its name, and unknown names do not parse.
#include <gtest/gtest.h>

#include "headroom/stage_basis.h"

using namespace headroom;

TEST(StageBasisNames, EveryBasisRoundTrips) {
  for (StageBasis b : {StageBasis::Log, StageBasis::Numbers, StageBasis::Guess}) EXPECT_EQ(parse_stage_basis(name(b)), b) << name(b);
  EXPECT_EQ(name(StageBasis::Numbers), "numbers");
  EXPECT_FALSE(parse_stage_basis(""));
}
