// Valid output for any bytes (issue 31): invalid and cut UTF-8 in a log give valid JSON and
// text from the doctor, and a file with no word of an engine log is refused (exit 2).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "headroom/cli.h"
#include "headroom/error.h"
#include "hostile_test_util.h"
#include "headroom/utf8.h"

using namespace headroom;
using namespace headroom::test;

TEST(Utf8, RepairsInvalidAndCutSequences) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xC3"));              // cut
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_EQ(valid_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(valid_utf8("caf\xC3"), "caf\xEF\xBF\xBD");
  EXPECT_EQ(valid_utf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(utf8_prefix("caf\xC3\xA9", 4), "caf");       // not into the middle of é
  EXPECT_EQ(utf8_prefix("caf\xC3\xA9", 5), "caf\xC3\xA9");
  EXPECT_EQ(utf8_prefix("\xE2\x82\xAC\xE2\x82\xAC", 5), "\xE2\x82\xAC");
}

TEST(HostileLogs, InvalidAndCutUtf8GiveValidJsonAndText) {
  const std::string seed = read_file(std::string(HEADROOM_TEST_DATA) + "/seed/seed-crash.log");
  ASSERT_FALSE(seed.empty());
  const size_t oom = seed.find("torch.OutOfMemoryError");
  ASSERT_NE(oom, std::string::npos);
  std::string bad = seed;
  bad.insert(oom, "\xFF\xFE\xC3 ");  // invalid bytes at the start of the OOM line
  std::string cut = seed;
  const size_t eol = cut.find('\n', oom);
  cut.insert(eol, " " + std::string(1201, 'x') + [] {  // multi-byte characters across byte 2000
    std::string s;
    for (int i = 0; i < 600; ++i) s += "\xC3\xA9";
    return s;
  }());
  for (const std::string* log : {&bad, &cut}) {
    TempFile f("hostile.log", *log);
    const std::vector<std::string> deploy{"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8",
                                          "--mem-fraction-static", "0.95"};
    std::vector<std::string> argv{"doctor", f.path.string()};
    argv.insert(argv.end(), deploy.begin(), deploy.end());
    CliRun text = cli(argv);
    EXPECT_TRUE(text.rc == kExitOk || text.rc == kExitFails) << text.rc << text.err;
    EXPECT_TRUE(is_valid_utf8(text.out));
    argv.push_back("--json");
    CliRun js = cli(argv);
    ASSERT_TRUE(js.rc == kExitOk || js.rc == kExitFails) << js.rc << js.err;
    auto j = nlohmann::json::parse(js.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["stage"], "cuda_graph");
    bool repaired = false;
    for (const auto& e : j["evidence"]) {
      const std::string t = e["text"].get<std::string>();
      EXPECT_TRUE(is_valid_utf8(t));
      EXPECT_LE(t.size(), 2000u);
      if (t.find("\xEF\xBF\xBD") != std::string::npos || t.find("\xC3\xA9") != std::string::npos) repaired = true;
    }
    EXPECT_TRUE(repaired) << "the altered OOM line is not among the evidence";
  }
}

TEST(HostileLogs, TextThatIsNotALogIsRefused) {
  TempFile hello("hello.log", "hello world\n");
  CliRun r = cli({"doctor", hello.path.string(), "--json"});
  EXPECT_EQ(r.rc, kExitBadInput) << r.out;
  EXPECT_NE(r.err.find("does not look like an engine log"), std::string::npos) << r.err;
  TempFile xs("xs.log", std::string(4 << 20, 'x'));
  CliRun x = cli({"doctor", xs.path.string()});
  EXPECT_EQ(x.rc, kExitBadInput) << x.out;
  EXPECT_NE(x.err.find("does not look like an engine log"), std::string::npos) << x.err;
}
