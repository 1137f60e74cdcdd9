// The StageId name table: every stage reads back from its name, and unknown names do not parse.
#include <gtest/gtest.h>

#include "headroom/stage_names.h"

using namespace headroom;

TEST(StageNames, EveryStageRoundTrips) {
  for (int i = 0; i <= static_cast<int>(StageId::None); ++i) {
    const auto s = static_cast<StageId>(i);
    EXPECT_EQ(parse_stage(name(s)), s) << name(s);
  }
  EXPECT_EQ(name(StageId::KvPool), "kv_pool");
  EXPECT_EQ(name(StageId::DraftContexts), "draft_contexts");
  EXPECT_FALSE(parse_stage("kv pool"));
  EXPECT_FALSE(parse_stage(""));
}
