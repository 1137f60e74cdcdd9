// The Outcome name table: every outcome reads back from its name, and unknown codes do not parse.
#include <gtest/gtest.h>

#include "headroom/outcome.h"

using namespace headroom;

TEST(OutcomeNames, EveryOutcomeRoundTrips) {
  for (int i = 0; i <= static_cast<int>(Outcome::NoError); ++i) {
    const auto o = static_cast<Outcome>(i);
    EXPECT_EQ(parse_outcome(name(o)), o) << name(o);
  }
  EXPECT_EQ(name(Outcome::RefusedKv), "refused_kv");
  EXPECT_FALSE(parse_outcome("oom-kv"));
  EXPECT_FALSE(parse_outcome(""));
}
