// POST /api/diff (issue 27 item 7, the page's Versions tab): one deployment under two releases,
// the CLI's `headroom diff --json` byte for byte, the second version sent as "to" or as --to,
// and bad requests as one line with HTTP 400. api_run is called directly (web_api_test.cpp
// covers the route over HTTP).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "headroom/cli.h"
#include "web/web.h"

using namespace headroom;
using json = nlohmann::json;

namespace {

const std::vector<std::string> kQwenA100{"--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "a100-80gb"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// What `headroom diff ARGS --json` prints.
std::string cli_json(std::vector<std::string> args) {
  args.insert(args.begin(), "diff");
  args.push_back("--json");
  std::ostringstream out, err;
  run_cli(args, out, err);
  return out.str();
}

web::Reply post_diff(const json& body) { return web::api_run("diff", body.dump()); }

std::vector<std::string> rule_ids(const json& list) {
  std::vector<std::string> ids;
  for (const auto& r : list) ids.push_back(r["id"]);
  return ids;
}

// The error of a 400 answer: one line, naming `needle`.
void expect_400(const web::Reply& r, std::string_view needle) {
  EXPECT_EQ(r.status, 400) << r.body;
  const json j = json::parse(r.body, nullptr, false);
  ASSERT_TRUE(j.is_object() && j.contains("error")) << r.body;
  const std::string e = j["error"];
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_NE(e.find(needle), std::string::npos) << e;
}

}  // namespace

// vLLM 0.8.2 -> 0.10.2 on Qwen2.5-7B / A100-80GB: PR #19312's per-instance budget (0.9.1) gives
// 8416 more KV tokens (1030784 -> 1039200), and 0.10's capture sizes shrink the graphs.
TEST(WebDiff, VllmPairIsTheCliJsonByteForByte) {
  const auto args = with({"--engine", "vllm@0.8.2"}, kQwenA100);
  const web::Reply r = post_diff({{"args", args}, {"to", "0.10.2"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, cli_json(with(args, {"--to", "0.10.2"})));
  const json j = json::parse(r.body);
  EXPECT_EQ(j["from"]["version"], "0.8.2");
  EXPECT_EQ(j["to"]["version"], "0.10.2");
  EXPECT_EQ(j["from"]["verdict"], "fits");
  EXPECT_EQ(j["to"]["verdict"], "fits");
  EXPECT_EQ(j["kv_tokens"], json({{"from", 1030784}, {"to", 1039200}, {"delta", 8416}}));
  ASSERT_FALSE(j["rules"]["only_to"].empty());
  const json& budget = j["rules"]["only_to"][0];
  EXPECT_EQ(budget["id"], "vllm.per_instance_budget");
  EXPECT_EQ(budget["since"], "0.9.1");
  EXPECT_EQ(budget["source"], "PR #19312, first in 0.9.1");
  EXPECT_EQ(rule_ids(j["rules"]["only_from"]), (std::vector<std::string>{"vllm.graph_outputs_per_size", "vllm.flashinfer_pre_023_api"}));
  // Rank 0, stage by stage: the KV pool grows by 482607104 B (8416 tokens x 57344 B: 28 layers x
  // 2 x 4 KV heads x 128 x 2 B), the CUDA graphs shrink by 1139435029 B.
  std::map<std::string, int64_t> delta;
  for (const auto& s : j["stages"]) delta[s["name"]] = s["delta_bytes"];
  EXPECT_EQ(delta["kv_pool"], 482607104);
  EXPECT_EQ(delta["kv_pool"], 8416 * 28 * 2 * 4 * 128 * 2);
  EXPECT_EQ(delta["cuda_graph"], -1139435029);
  EXPECT_EQ(delta["weights"], 0);
  // The same answer with the CLI's own spelling, --to in args, and with the engine named.
  EXPECT_EQ(post_diff({{"args", with(args, {"--to", "0.10.2"})}}).body, r.body);
  EXPECT_EQ(post_diff({{"args", args}, {"to", "vllm@0.10.2"}}).body, r.body);
}

// SGLang 0.4.8 -> a 2026 main build (the version alone, as the page's field gives it): the memory
// hook's budget leaves 66228 fewer KV tokens, and the settings in force that differ come with it.
TEST(WebDiff, SglangPairNamesTheSettingsAndRulesThatDiffer) {
  const auto args = with({"--engine", "sglang@0.4.8"}, kQwenA100);
  const web::Reply r = post_diff({{"args", args}, {"to", "main@2026-03-15"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, cli_json(with(args, {"--to", "main@2026-03-15"})));
  const json j = json::parse(r.body);
  EXPECT_EQ(j["kv_tokens"], json({{"from", 1021868}, {"to", 955640}, {"delta", -66228}}));
  EXPECT_EQ(rule_ids(j["rules"]["only_from"]), std::vector<std::string>{"sglang.tiered_reserve"});
  // nemotron_nas (0.5.1 / 2025-08-17) is in force too; it does not move this Qwen deployment.
  EXPECT_EQ(rule_ids(j["rules"]["only_to"]),
            (std::vector<std::string>{"sglang.memory_hook", "sglang.nemotron_nas"}));
  EXPECT_EQ(j["settings"][0], json({{"flag", "--mem-fraction-static"}, {"from", "0.875"}, {"to", "0.830"}}));
  EXPECT_EQ(post_diff({{"args", args}, {"to", "sglang@main@2026-03-15"}}).body, r.body);
}

// TensorRT-LLM 0.21.0 -> 1.2.0: the PyTorch backend by default (1.0), 79488 more KV tokens.
TEST(WebDiff, TrtllmPairSwitchesTheBackend) {
  const auto args = with({"--engine", "trtllm@0.21.0"}, kQwenA100);
  const web::Reply r = post_diff({{"args", args}, {"to", "trtllm@1.2.0"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, cli_json(with(args, {"--to", "trtllm@1.2.0"})));
  const json j = json::parse(r.body);
  EXPECT_EQ(j["kv_tokens"]["delta"], 79488);
  EXPECT_EQ(j["rules"]["only_to"][0]["id"], "trtllm.pytorch_default");
  EXPECT_EQ(j["settings"][0], json({{"flag", "--backend"}, {"from", "trt"}, {"to", "pytorch"}}));
}

TEST(WebDiff, BadRequestsAreOneLine400) {
  const auto args = with({"--engine", "vllm@0.8.2"}, kQwenA100);
  expect_400(post_diff({{"args", args}}), "to: missing");
  expect_400(post_diff({{"args", with(args, {"--to", "0.9.0"})}, {"to", "0.10.2"}}), "to: given twice");
  expect_400(post_diff({{"args", args}, {"to", ""}}), "to: is empty");
  expect_400(post_diff({{"args", args}, {"to", 10}}), "to: must be a string");
  expect_400(post_diff({{"args", args}, {"to", "../../etc"}}), "is not a version");
  expect_400(post_diff({{"args", args}, {"to", std::string(web::kMaxVersionChars + 1, '1')}}), "longer than 64");
  expect_400(post_diff({{"args", args}, {"to", "0.10.2"}, {"log", "x"}}), "log: unknown field for /api/diff");
  expect_400(post_diff({{"args", args}, {"to", "0.10.2"}, {"host", "gpus: [h100]"}}), "host: unknown field");
  expect_400(post_diff({{"args", with(args, {"--to", "a/b"})}}), "looks like a file path");
  // The CLI's own refusals, as its one line: another engine, an unknown version.
  expect_400(post_diff({{"args", args}, {"to", "sglang@0.5.4"}}), "compare");
  expect_400(post_diff({{"args", args}, {"to", "99.1"}}), "99.1");
  // plan takes no "to".
  expect_400(web::api_run("plan", json{{"args", args}, {"to", "0.10.2"}}.dump()), "to: unknown field for /api/plan");
}
