// doctor on the seed crash (shared/seed) and on the corpus crash logs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "headroom/cli.h"
#include "headroom/doctor.h"
#include "headroom/error.h"
#include "headroom/logscan.h"
#include "headroom/validate.h"

using namespace headroom;

static Diagnosis seed_diagnosis() {
  LogScan scan = scan_log_file(std::string(HEADROOM_TEST_DATA) + "/seed/seed-crash.log");
  Args a = Args::parse({"--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8", "--mem-fraction-static", "0.95"});
  return diagnose(scan, a);
}

TEST(DoctorSeed, CaptureHeadroomAndTheFix) {
  Diagnosis d = seed_diagnosis();
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_TRUE(d.cause == "static_fraction_too_high" || d.cause == "graph_capture_headroom") << d.cause;
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes.front().flag, "--mem-fraction-static");
  double f = std::stod(d.fixes.front().value);
  EXPECT_GE(f, 0.85);
  EXPECT_LE(f, 0.91);
  ASSERT_TRUE(d.forecast_after_fix.has_value());
  EXPECT_EQ(d.forecast_after_fix->verdict, Verdict::Fits);
  EXPECT_GT(d.forecast_after_fix->kv_tokens, 300000);
  bool expandable = false;
  for (const auto& w : d.will_not_help) expandable = expandable || w.find("expandable_segments") != std::string::npos;
  EXPECT_TRUE(expandable);
  // The arithmetic comes from the log: 87.43 allocated + 6.44 reserved-unallocated + 0.85 outside PyTorch = 94.72.
  bool split = false;
  for (const auto& a : d.arithmetic) split = split || a.find("0.85 GiB outside PyTorch") != std::string::npos;
  EXPECT_TRUE(split);
  auto j = diagnosis_json(d);
  EXPECT_EQ(j["stage"], "cuda_graph");
  EXPECT_EQ(j["evidence"][0]["line"], 1);
}

TEST(DoctorSeed, WithoutDeploymentOptionsStillDiagnoses) {
  LogScan scan = scan_log_file(std::string(HEADROOM_TEST_DATA) + "/seed/seed-crash.log");
  Diagnosis d = diagnose(scan, Args::parse({}));
  EXPECT_EQ(d.stage, "cuda_graph");
  EXPECT_FALSE(d.gaps.empty());  // model unknown
  EXPECT_FALSE(d.forecast_after_fix.has_value());
}

TEST(DoctorCorpus, StageAndFixDirection) {
  // Every corpus case with a log and a crash outcome: the stage doctor names, and the direction
  // of its fixes against the thread's stated resolution (validate computes both).
  for (const char* file : {"/corpus/sglang.jsonl", "/corpus/vllm.jsonl"}) {
    auto j = validate_corpus(std::string(HEADROOM_TEST_DATA) + file);
    const auto& st = j["doctor_stage"];
    ASSERT_GT(st["n"].get<int>(), 0) << file;
    // Measured 2026-11-30: sglang 6/7, vllm 19/23 (the misses are logs cut before any stage or
    // error line). The target is 0.9; this pins today's level so it cannot regress.
    EXPECT_GE(st["agreement"].get<double>(), 0.8) << file;
    std::cout << file << ": doctor stage " << st.dump() << ", fix direction " << j["doctor_fix_direction"].dump() << "\n";
  }
}

TEST(DoctorInput, MissingEmptyAndBinaryLogsAreInputErrors) {
  EXPECT_THROW(scan_log_file("/nonexistent/log.txt"), InputError);
  EXPECT_THROW(scan_log_text("", "empty"), InputError);
  std::string junk(4096, '\0');
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 131) % 256);
  EXPECT_THROW(scan_log_text(junk, "junk"), InputError);
}
