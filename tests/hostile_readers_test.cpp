// Bounded readers (issue 31): pickle memo bombs and LONG_BINPUT ladders, and a config of
// millions of expert tensors, refused in well under a second and a few MB.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "headroom/cli.h"
#include "headroom/error.h"
#include "hostile_test_util.h"
#include "headroom/alloc_snapshot.h"
#include "headroom/model.h"

using namespace headroom;
using namespace headroom::test;

namespace {

// Pickle opcodes for hand-built snapshots.
std::string str(const std::string& s) { return std::string("\x8c") + static_cast<char>(s.size()) + s; }
std::string binget(uint8_t i) { return std::string("h") + static_cast<char>(i); }
std::string binput(uint8_t i) { return std::string("q") + static_cast<char>(i); }

// BININT1 (a NUL byte is a valid operand, so not a C string).
std::string k1(uint8_t v) { return std::string("K") + static_cast<char>(v); }

}  // namespace

TEST(HostilePickles, MemoBombIsRefusedFastAndSmall) {
  // root = {"segments": [S x the same segment]}, each segment holding n x the same block.
  const int n = 100'000;
  std::string p = "\x80\x02}";
  p += "}(" + str("size") + k1(16) + str("state") + str("inactive") + "u" + binput(1) + "0";
  p += "](";
  for (int i = 0; i < n; ++i) p += binget(1);
  p += "e" + binput(2) + "0";
  p += "}(" + str("address") + k1(0) + str("total_size") + k1(16) + str("blocks") + binget(2) + "u" + binput(3) + "0";
  p += "(" + str("segments") + "](";
  for (int i = 0; i < n; ++i) p += binget(3);
  p += "eu.";
  ASSERT_LT(p.size(), 500'000u);
  const auto t0 = Clock::now();
  try {
    alloc::read_snapshot(p, "bomb.pickle");
    ADD_FAILURE() << "a pickle bomb was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pickle bomb"), std::string::npos) << e.what();
  }
  const long ms = ms_since(t0);
  std::printf("memo bomb (%zu bytes, %d x %d blocks): refused in %ld ms\n", p.size(), n, n, ms);
  EXPECT_LT(ms, 1000);
}

TEST(HostilePickles, LongBinputLadderIsRefused) {
  std::string p = "\x80\x02N";
  for (uint32_t k = 1; k <= 2000; ++k) {
    const uint32_t idx = k << 20;
    p += 'r';
    for (int b = 0; b < 4; ++b) p += static_cast<char>((idx >> (8 * b)) & 0xff);
  }
  p += ".";
  const auto t0 = Clock::now();
  try {
    alloc::read_snapshot(p, "ladder.pickle");
    ADD_FAILURE() << "the ladder was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("memo index"), std::string::npos) << e.what();
  }
  EXPECT_LT(ms_since(t0), 1000);
}

TEST(HostileConfigs, MillionsOfExpertTensorsAreRefusedFromTheCounts) {
  auto cfg = nlohmann::json::parse(read_file(std::string(HEADROOM_SOURCE_DIR) + "/data/models/Qwen/Qwen3-30B-A3B/config.json"));
  cfg["num_hidden_layers"] = 1600;
  cfg["num_experts"] = 1000;
  const fs::path dir = fs::temp_directory_path() / ("headroom-experts-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << cfg.dump();
  const auto t0 = Clock::now();
  try {
    load_model(dir.string());
    ADD_FAILURE() << "1,600 layers x 1,000 experts were built";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("expert layers"), std::string::npos) << e.what();
  }
  const long ms = ms_since(t0);
  std::printf("1,600 layers x 1,000 experts: refused in %ld ms\n", ms);
  EXPECT_LT(ms, 1000);
  fs::remove_all(dir);
  // The largest real shape (Kimi-K2: 61 x 384) is still built.
  cfg["num_hidden_layers"] = 61;
  cfg["num_experts"] = 384;
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << cfg.dump();
  EXPECT_NO_THROW(load_model(dir.string()));
  fs::remove_all(dir);
}
