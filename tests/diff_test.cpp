// `headroom diff`: one deployment under two releases of an engine (issue 27 item 7), the rules
// that differ named by their ids in the engines' rule tables (rules.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "headroom/cli.h"
#include "headroom/error.h"
#include "plan_test_util.h"

namespace headroom::test {
namespace {

struct CliResult {
  int rc;
  std::string out, err;
};
CliResult cli(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  int rc = run_cli(argv, out, err);
  return {rc, out.str(), err.str()};
}

const std::vector<std::string> kQwen{"--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "a100-80gb"};

TEST(Diff, VllmReleasesNameTheBudgetRuleThatChanged) {
  CliResult r = cli(plus({"diff", "--engine", "vllm@0.8.2", "--to", "0.10.2", "--json"}, kQwen));
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // Each side is the plan of that release (same deployment).
  const Forecast a = run(plus({"--engine", "vllm@0.8.2"}, kQwen)), b = run(plus({"--engine", "vllm@0.10.2"}, kQwen));
  EXPECT_EQ(j["from"]["kv_tokens"].get<int64_t>(), a.kv_tokens);
  EXPECT_EQ(j["to"]["kv_tokens"].get<int64_t>(), b.kv_tokens);
  EXPECT_EQ(j["kv_tokens"]["delta"].get<int64_t>(), b.kv_tokens - a.kv_tokens);
  // 0.8.2 -> 0.10.2: PR #19312's per-instance budget (0.9.1), PR #21489's --kv-cache-memory-bytes
  // (0.10.2), and the end of the piecewise outputs kept per captured size (0.10.1); the FlashInfer
  // sampler API of 0.9 and the capture-size defaults of 0.10 / 0.10.1 (gpt-oss) besides.
  std::vector<std::string> gone, added;
  for (const auto& r : j["rules"]["only_from"]) gone.push_back(r["id"]);
  for (const auto& r : j["rules"]["only_to"]) added.push_back(r["id"]);
  EXPECT_EQ(gone, (std::vector<std::string>{"vllm.graph_outputs_per_size", "vllm.flashinfer_pre_023_api"}));
  EXPECT_EQ(added, (std::vector<std::string>{"vllm.per_instance_budget", "vllm.kv_cache_memory_bytes", "vllm.graph_sizes_from_max_num_seqs",
                                             "vllm.gpt_oss_capture_1024"}));
  EXPECT_EQ(j["rules"]["only_to"][0]["since"], "0.9.1");
  EXPECT_EQ(j["rules"]["only_to"][0]["source"], "PR #19312, first in 0.9.1");
  // The stage rows sum each release's items; the KV pool's delta is the KV bytes that moved.
  bool kv_row = false;
  for (const auto& s : j["stages"])
    if (s["name"] == "kv_pool") {
      kv_row = true;
      EXPECT_EQ(s["delta_bytes"].get<int64_t>(), s["to_bytes"].get<int64_t>() - s["from_bytes"].get<int64_t>());
      EXPECT_GT(s["delta_bytes"].get<int64_t>(), 0);
    }
  EXPECT_TRUE(kv_row);
}

TEST(Diff, SglangReleasesShowTheSettingsInForceThatDiffer) {
  CliResult r = cli({"diff", "--engine", "sglang@0.4.6", "--to", "sglang@0.5.4", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("only in 0.5.4: sglang.reserve_heuristic"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("only in 0.4.6: sglang.tp_default_fraction"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--mem-fraction-static"), std::string::npos) << r.out;
}

// --to without the engine's name: a release, a build date (main@DATE) or a llama.cpp build (bNNNN)
// is a version of the --engine's engine, the same answer as with the name.
TEST(Diff, ToTakesTheVersionAloneInEveryForm) {
  const std::vector<std::string> sglang{"diff", "--engine", "sglang@0.4.8", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--json"};
  const CliResult dated = cli(plus(sglang, {"--to", "main@2026-03-15"}));
  ASSERT_EQ(dated.rc, 0) << dated.err;
  EXPECT_EQ(nlohmann::json::parse(dated.out)["to"]["version"], "main@2026-03-15");
  EXPECT_EQ(dated.out, cli(plus(sglang, {"--to", "sglang@main@2026-03-15"})).out);
  const std::vector<std::string> llama{"diff", "--engine", "llamacpp@b5000", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--gpu", "rtx-4090", "--json"};
  const CliResult build = cli(plus(llama, {"--to", "b8157"}));
  ASSERT_EQ(build.rc, 0) << build.err;
  const auto j = nlohmann::json::parse(build.out);
  EXPECT_EQ(j["to"]["version"], "b8157");
  // b6800: -ngl defaults to every layer, so the weights move onto the GPU (none there at b5000).
  std::vector<std::string> added;
  for (const auto& r : j["rules"]["only_to"]) added.push_back(r["id"]);
  EXPECT_NE(std::find(added.begin(), added.end(), "llamacpp.all_layers_offloaded"), added.end()) << build.out;
  for (const auto& s : j["stages"])
    if (s["name"] == "weights") {
      EXPECT_EQ(s["from_bytes"], 0);
      EXPECT_EQ(s["to_bytes"], 4671766528);  // "CUDA0 model buffer size = 4455.34 MiB" (web_llamacpp_test.cpp)
    }
  EXPECT_EQ(build.out, cli(plus(llama, {"--to", "llamacpp@b8157"})).out);
}

TEST(Diff, BadInputIsOneLine) {
  EXPECT_EQ(cli(plus({"diff", "--engine", "vllm@0.8.2"}, kQwen)).rc, kExitBadInput);                     // no --to
  CliResult other = cli(plus({"diff", "--engine", "vllm@0.8.2", "--to", "sglang@0.5.4"}, kQwen));
  EXPECT_EQ(other.rc, kExitBadInput);
  EXPECT_NE(other.err.find("compare"), std::string::npos) << other.err;
  EXPECT_EQ(cli({"diff"}).rc, kExitBadInput);  // usage
}

}  // namespace
}  // namespace headroom::test
