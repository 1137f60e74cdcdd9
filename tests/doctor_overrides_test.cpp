// The user's options against the log (issue 26 item 1 and 6): an option the log also says wins
// and is named; with --fill (the web form's defaults) it only fills a gap and the log's value stays.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "headroom/cli.h"

using namespace headroom;
using json = nlohmann::json;

namespace {
json doctor(std::vector<std::string> extra, std::string log = std::string(HEADROOM_TEST_DATA) + "/seed/seed-crash.log") {
  std::vector<std::string> argv{"doctor", log, "--json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::ostringstream out, err;
  run_cli(argv, out, err);
  return json::parse(out.str());
}
}  // namespace

// The seed log prints its GPUs' capacity (94.97 GiB, an H100 NVL / H20-class card) in its OOM report
// and names no model headroom can read.
TEST(DoctorOverrides, GivenWinsAndIsNamedFillLeavesTheLog) {
  const json alone = doctor({});
  EXPECT_EQ(alone["overrides"], json::array());
  const json given = doctor({"--gpu", "h100", "--tp", "8"});
  ASSERT_EQ(given["overrides"].size(), 1u) << given["overrides"];
  EXPECT_EQ(given["overrides"][0], "--gpu h100 overrides the log's 94.97 GiB per GPU");
  const json filled = doctor({"--gpu", "h100", "--fill"});
  ASSERT_EQ(filled["overrides"].size(), 1u);
  EXPECT_EQ(filled["overrides"][0], "--gpu h100 (filled in) not used: the log says 94.97 GiB per GPU");
  // Filled in and not used: the diagnosis is the log's own.
  EXPECT_EQ(filled["stage"], alone["stage"]);
  EXPECT_EQ(filled["fix"], alone["fix"]);
  EXPECT_EQ(filled["arithmetic"], alone["arithmetic"]);
}

// The model: a Hub id the launch line names is the log's (the form's is not used with --fill); a
// local path headroom cannot read leaves the gap to the form's model.
TEST(DoctorOverrides, ModelFromTheLogUnlessItIsAPathNotHere) {
  const std::string tail =
      "[TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=0.96 GB\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 694.00 MiB. GPU 0 has a total capacity of 94.97 GiB of "
      "which 247.44 MiB is free.\n";
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "doctor-hub-model.log") << "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2\n" << tail;
  std::ofstream(dir + "doctor-path-model.log") << "python3 -m sglang.launch_server --model-path /models/not-here --tp 2\n" << tail;
  EXPECT_EQ(doctor({"--fill", "--model", "Qwen/Qwen3-32B"}, dir + "doctor-hub-model.log")["overrides"],
            json::array({"--model Qwen/Qwen3-32B (filled in) not used: the log says Qwen/Qwen3-8B"}));
  EXPECT_EQ(doctor({"--fill", "--model", "Qwen/Qwen3-32B"}, dir + "doctor-path-model.log")["overrides"], json::array());
}
