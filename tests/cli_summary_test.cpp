// The first lines a person reads (issue 30): every report opens with the verdict or best choice,
// the KV capacity, the rules version and a launch command; refused rows carry no figures; the
// GPU list filters and prints "-" for a figure it does not have; fit speaks plan's flags; a bare
// verb prints its usage; a misspelled verb, GPU or flag gets "did you mean".
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "headroom/cli.h"

using namespace headroom;

namespace {

struct CliRun {
  int rc;
  std::string out, err;
};

CliRun cli(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  int rc = run_cli(argv, out, err);
  return {rc, out.str(), err.str()};
}

std::string first_lines(const std::string& s, int n) {
  size_t pos = 0;
  for (int i = 0; i < n && pos != std::string::npos; ++i) {
    pos = s.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  return pos == std::string::npos ? s : s.substr(0, pos);
}

int line_count(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

const std::vector<std::string> kQwen{"--model", "Qwen/Qwen3-8B", "--gpu", "h100"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST(CliSummary, PlanOpensWithVerdictKvRulesAndLaunch) {
  CliRun r = cli(with({"plan"}, kQwen));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const std::string head = first_lines(r.out, 8);
  EXPECT_NE(head.find("verdict: FITS"), std::string::npos) << head;
  EXPECT_NE(head.find("KV cache: "), std::string::npos) << head;
  EXPECT_NE(head.find("newest rules: pass --engine sglang@VERSION"), std::string::npos) << head;
  EXPECT_NE(head.find("launch: python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 1"), std::string::npos) << head;
  EXPECT_EQ(r.out.find("OVER"), std::string::npos);  // the bar never says OVER under FITS
  CliRun b = cli(with({"plan", "--brief"}, kQwen));
  EXPECT_LE(line_count(b.out), 6) << b.out;
  EXPECT_EQ(b.out.find("stage"), std::string::npos) << b.out;
}

TEST(CliSummary, TuneOpensWithRecommendationAndLaunchAndNamesTheMaximum) {
  CliRun r = cli(with({"tune"}, kQwen));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const std::string head = first_lines(r.out, 8);
  EXPECT_NE(head.find("recommended: --mem-fraction-static"), std::string::npos) << head;
  EXPECT_NE(head.find("KV cache: "), std::string::npos) << head;
  EXPECT_NE(head.find("launch: python -m sglang.launch_server"), std::string::npos) << head;
  EXPECT_NE(head.find("newest rules"), std::string::npos) << head;
  CliRun j = cli(with({"tune", "--json"}, kQwen));
  auto t = nlohmann::json::parse(j.out);
  ASSERT_TRUE(t.contains("maximum"));
  ASSERT_FALSE(t["maximum"].is_null());
  // The maximum fits with no margin, so it is at least the recommendation.
  EXPECT_GE(std::stod(t["maximum"]["value"].get<std::string>()), std::stod(t["recommended"]["--mem-fraction-static"].get<std::string>()));
}

// vLLM refuses Qwen3-32B on one H100 above 0.91 (tune's rows 0.92 and 0.94): a refused row carries
// no KV or free-memory figure (JSON null, text '-').
TEST(CliSummary, TuneRefusedRowsCarryNoFigures) {
  const std::vector<std::string> a{"tune", "--engine", "vllm", "--model", "Qwen/Qwen3-32B", "--gpu", "h100"};
  auto t = nlohmann::json::parse(cli(with(a, {"--json"})).out);
  int refused = 0;
  for (const auto& row : t["tradeoffs"])
    if (row["verdict"] == "refused") {
      ++refused;
      EXPECT_TRUE(row["kv_tokens"].is_null());
      EXPECT_TRUE(row["min_free_worst_bytes"].is_null());
    }
  EXPECT_GE(refused, 1);
  EXPECT_NE(cli(a).out.find("-   refused"), std::string::npos);
}

TEST(CliSummary, CompareShowsWeightsAndLaunchCommands) {
  CliRun r = cli(with({"compare"}, kQwen));
  ASSERT_NE(r.rc, kExitBadInput) << r.err;
  const std::string head = first_lines(r.out, 8);
  EXPECT_NE(head.find("rules: sglang newest"), std::string::npos) << head;
  EXPECT_NE(head.find("weights/GPU"), std::string::npos) << head;
  EXPECT_NE(head.find("launch (sglang): python -m sglang.launch_server"), std::string::npos) << head;
  EXPECT_NE(r.out.find("launch (vllm): vllm serve Qwen/Qwen3-8B"), std::string::npos) << r.out;
}

TEST(CliSummary, FitSpeaksPlansFlagsAndStaysShort) {
  // --max-model-len is vLLM's spelling; fit runs SGLang by default and takes it as the target.
  CliRun r = cli({"fit", "--model", "Qwen/Qwen3-8B", "--max-model-len", "32768", "--max-num-seqs", "8"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const std::string head = first_lines(r.out, 8);
  EXPECT_NE(head.find("target 32768 tokens x 8 requests"), std::string::npos) << head;
  EXPECT_NE(head.find("best: 1 x "), std::string::npos) << head;
  EXPECT_NE(head.find("launch: "), std::string::npos) << head;
  EXPECT_NE(head.find("sglang newest"), std::string::npos) << head;
  EXPECT_LE(line_count(r.out), 40) << r.out;
  // No single-GPU box offered as a cluster.
  CliRun j = cli({"fit", "--model", "Qwen/Qwen3-8B", "--max-model-len", "32768", "--json"});
  const auto parsed = nlohmann::json::parse(j.out);
  for (const auto& c : parsed["candidates"])
    if (c["gpu"] == "dgx-spark" || c["gpu"] == "jetson-thor") EXPECT_EQ(c["gpus"], 1) << c.dump();
}

TEST(CliSummary, GpusFiltersAndShowsNoZeroForAMissingFigure) {
  CliRun r = cli({"gpus", "h100"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.out.find("h100-pcie"), std::string::npos);
  EXPECT_EQ(r.out.find("rtx-4090"), std::string::npos);
  CliRun all = cli({"gpus"});
  EXPECT_EQ(all.out.find(" 0.000 "), std::string::npos);
  CliRun bad = cli({"gpus", "h1OO"});
  EXPECT_EQ(bad.rc, kExitBadInput);
  EXPECT_NE(bad.err.find("did you mean"), std::string::npos) << bad.err;
}

TEST(CliUsage, BareVerbPrintsUsageAndExitsTwo) {
  for (const char* verb : {"plan", "tune", "fit", "compare"}) {
    std::ostringstream out, err;
    EXPECT_EQ(run_cli({verb}, out, err), kExitBadInput) << verb;
    EXPECT_NE(err.str().find("usage: headroom"), std::string::npos) << verb << ": " << err.str();
    EXPECT_TRUE(out.str().empty()) << verb;
  }
}

TEST(CliUsage, DidYouMean) {
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"plna"}, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("did you mean 'plan'"), std::string::npos) << err.str();
  std::ostringstream o2, e2;
  EXPECT_EQ(run_cli({"plan", "--model", "Qwen/Qwen3-8B", "--gpu", "h10O"}, o2, e2), kExitBadInput);
  EXPECT_NE(e2.str().find("did you mean h100"), std::string::npos) << e2.str();
  std::ostringstream o3, e3;
  EXPECT_EQ(run_cli({"plan", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--mem-fraction-statc", "0.9"}, o3, e3), kExitBadInput);
  EXPECT_NE(e3.str().find("did you mean --mem-fraction-static"), std::string::npos) << e3.str();
  std::ostringstream o4, e4;
  EXPECT_EQ(run_cli({"plan", "--engine", "sglng", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"}, o4, e4), kExitBadInput);
  EXPECT_NE(e4.str().find("did you mean sglang?"), std::string::npos) << e4.str();
  std::ostringstream o5, e5;
  EXPECT_EQ(run_cli({"plan", "--model", "Qwen/Qwen3-8X", "--gpu", "h100", "--offline"}, o5, e5), kExitBadInput);
  EXPECT_NE(e5.str().find("did you mean: Qwen/Qwen3-8B"), std::string::npos) << e5.str();
  EXPECT_EQ(did_you_mean("zzzzzzzz", {"plan", "tune"}), "");
}

// A release headroom has not read says so on the first line, with the known range and the rules
// it is planned by (issue 30: "an unknown engine version says which versions are known").
TEST(CliUsage, UnknownReleaseNamesTheKnownOnesAndTheRulesUsed) {
  for (const auto& [engine, says] : std::vector<std::pair<std::string, std::string>>{
           {"vllm@0.99", "vLLM 0.31.0 rules"},
           {"sglang@0.9.1", "newer than the releases headroom knows (0.3 .. 0.5.19)"},
           {"trtllm@2.0.0", "TensorRT-LLM 1.3.0 rules"}}) {
    CliRun r = cli(with({"plan", "--brief", "--engine", engine}, kQwen));
    const std::string first = r.out.substr(0, r.out.find('\n'));
    EXPECT_NE(first.find("is newer than the releases headroom knows"), std::string::npos) << first;
    EXPECT_NE(first.find(says), std::string::npos) << first;
  }
  // A known release says nothing of the kind.
  CliRun k = cli(with({"plan", "--brief", "--engine", "vllm@0.10.2"}, kQwen));
  EXPECT_EQ(k.out.find("newer than the releases"), std::string::npos);
}

// fit never clusters single-GPU boxes unless --nodes says so; then across boxes pipeline stages
// rank before tensor parallelism (a box is a node of one). Qwen3-32B, 12 requests of 40,960 tokens
// (491,520): one DGX Spark holds 162,954 tokens, two as PP 2 hold 612,987.
TEST(CliSummary, FitClustersSingleGpuBoxesOnlyWithNodes) {
  const std::vector<std::string> spark{"fit", "--model", "Qwen/Qwen3-32B", "--gpu", "dgx-spark", "--max-model-len", "40960", "--max-num-seqs", "12"};
  CliRun one = cli(spark);
  EXPECT_EQ(one.rc, 1);
  EXPECT_NE(one.out.find("NO FEASIBLE DEPLOYMENT"), std::string::npos) << one.out;
  CliRun two = cli(with(spark, {"--nodes", "2"}));
  EXPECT_EQ(two.rc, 0) << two.err;
  EXPECT_NE(two.out.find("best: 2 x dgx-spark, TP 1 PP 2"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("--nnodes"), std::string::npos) << two.out;  // the note on multi-node launch options
  // --rank-by is fit's ranking option (--sort its older spelling); a bad value names the flag.
  CliRun bad = cli(with(spark, {"--rank-by", "cost"}));
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--rank-by"), std::string::npos) << bad.err;
}

// Qwen3-8B on one RTX 4090, one request of 32,768 tokens: the bf16 KV cache holds 19,908 tokens (< one
// request), so fit tries an FP8 KV cache, which holds twice as many (39,816), and says so.
TEST(CliSummary, FitTriesAnFp8KvCacheWhenNothingElseFits) {
  CliRun r = cli({"fit", "--model", "Qwen/Qwen3-8B", "--gpu", "rtx-4090", "--max-gpus", "1", "--max-model-len", "32768", "--max-num-seqs", "1", "--json"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["candidates"].size(), 1u);
  EXPECT_EQ(j["candidates"][0]["kv_cache_dtype"], "fp8_e4m3");
  EXPECT_GE(j["candidates"][0]["kv_tokens"].get<int64_t>(), 32768);
  bool said = false;
  for (const auto& n : j["notes"]) said = said || n.get<std::string>().find("FP8 KV cache") != std::string::npos;
  EXPECT_TRUE(said);
  // Asked for the default dtype explicitly: no FP8 in its place.
  CliRun d = cli({"fit", "--model", "Qwen/Qwen3-8B", "--gpu", "rtx-4090", "--max-gpus", "1", "--max-model-len", "32768", "--max-num-seqs", "1", "--kv-cache-dtype", "auto"});
  EXPECT_EQ(d.rc, kExitFails);
}
