// The doctor's Cause name table: every cause reads back from its name, and unknown codes do not parse.
#include <gtest/gtest.h>

#include "headroom/cause.h"

using namespace headroom;

TEST(CauseNames, EveryCauseRoundTrips) {
  for (int i = 0; i <= static_cast<int>(Cause::ComputeBufferDoesNotFit); ++i) {
    const auto c = static_cast<Cause>(i);
    EXPECT_EQ(parse_cause(name(c)), c) << name(c);
  }
  EXPECT_EQ(name(Cause::StaticFractionTooHigh), "static_fraction_too_high");
  EXPECT_FALSE(parse_cause("static fraction"));
  EXPECT_FALSE(parse_cause(""));
}
