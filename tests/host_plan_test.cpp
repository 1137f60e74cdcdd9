// `plan --host` / `tune --host` (issue 29 item 3): servers sharing GPUs, planned in start order
// under each engine version's own rules for memory it did not allocate; the search that lets all
// of them start; host files checked key by key.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "headroom/host_plan.h"
#include "headroom/units.h"
#include "hostile_test_util.h"
#include "plan_test_util.h"

namespace headroom::test {
namespace {

// Two vLLM servers at 0.5 on one H100 (the split vLLM's docs suggest for two instances).
std::string two_vllm(const std::string& version) {
  return "gpus: [h100]\n"
         "servers:\n"
         "  - name: chat\n    gpus: [0]\n    engine: vllm@" + version + "\n"
         "    command: vllm serve Qwen/Qwen2.5-7B-Instruct --gpu-memory-utilization 0.5\n"
         "  - name: small\n    gpus: [0]\n    engine: vllm@" + version + "\n"
         "    command: vllm serve Qwen/Qwen3-0.6B --gpu-memory-utilization 0.5\n";
}

HostPlan plan_text(const std::string& yaml) { return plan_host(parse_host_spec(yaml, "host.yaml")); }

// Before 0.9.1 the whole GPU's non-torch memory (the first server's ~35 GiB) is charged to the
// second's 0.5 x 79.19 GiB budget: nothing is left for KV. V0 before 0.6.5 measures its peak off the
// whole card too. From 0.9.1 the budget is per instance (PR #19312) and V0 from 0.6.5 profiles
// against a baseline taken after the first server: both start.
TEST(HostPlan, SecondVllmAtHalfUtilizationByVersion) {
  for (const std::string v : {"0.6.3", "0.8.5"}) {
    const HostPlan p = plan_text(two_vllm(v));
    EXPECT_FALSE(p.all_start) << v;
    EXPECT_TRUE(p.servers.at(0).started) << v;
    EXPECT_EQ(p.servers.at(1).forecast.verdict, Verdict::Refused) << v;
    EXPECT_EQ(p.servers.at(1).forecast.failure->stage, StageId::KvPool) << v;
    EXPECT_EQ(p.servers.at(1).holds, std::vector<int64_t>{0}) << v;  // it exits
  }
  EXPECT_NE(plan_text(two_vllm("0.8.5")).servers[1].forecast.failure->message.find("No available memory for the cache blocks"), std::string::npos);
  for (const std::string v : {"0.7.3", "0.9.1", "0.11.0"}) EXPECT_TRUE(plan_text(two_vllm(v)).all_start) << v;
}

// The JSON carries the CLI's "why:" line (how this version treats what the first server holds),
// so the web page can show it beside the failure.
TEST(HostPlan, JsonSaysWhyTheSecondVllmIsRefused) {
  const auto j = host_plan_json(plan_text(two_vllm("0.8.5")));
  ASSERT_TRUE(j["servers"][1]["why"].is_string());
  const std::string why = j["servers"][1]["why"];
  EXPECT_EQ(why.rfind("chat holds GPU 0 ", 0), 0u) << why;  // the server started before, by name
  EXPECT_NE(why.find("charges them to its budget"), std::string::npos) << why;
  EXPECT_TRUE(j["servers"][0]["why"].is_null() || j["servers"][0]["why"].is_string());
}

// The second server starts on what the first holds once started: its own memory at its last
// stage, exactly, and the per-GPU timeline adds up.
TEST(HostPlan, EachServerStartsOnWhatTheOnesBeforeHold) {
  const HostPlan p = plan_text(two_vllm("0.11.0"));
  ASSERT_EQ(p.servers.size(), 2u);
  const ServerPlan& first = p.servers[0];
  const RankForecast& r = first.forecast.ranks.at(0);
  EXPECT_EQ(first.held_before, std::vector<int64_t>{0});
  EXPECT_EQ(first.holds.at(0), r.capacity_bytes - r.stages.back().free_bytes_after);
  EXPECT_EQ(p.servers[1].held_before, first.holds);
  const GpuTimeline& g = p.gpus.at(0);
  ASSERT_EQ(g.moments.size(), 3u);
  EXPECT_EQ(g.moments[0].free_bytes, g.capacity_bytes);
  EXPECT_EQ(g.moments[2].free_bytes, g.capacity_bytes - first.holds[0] - p.servers[1].holds[0]);
  const auto j = host_plan_json(p);
  EXPECT_EQ(j["servers"][1]["name"], "small");
  EXPECT_EQ(j["servers"][1]["verdict"], "fits");
  EXPECT_TRUE(j["servers"][1]["failure"].is_null());
  EXPECT_EQ(j["gpus"][0]["timeline"][1]["held_bytes"]["chat"], first.holds[0]);
}

// An SGLang server after a process holding 30 GiB (nvidia-smi) gets the pool a single plan with
// that host state gets: from the free memory, not the card.
TEST(HostPlan, HostStateIsWhatTheFirstServerStartsOn) {
  HostSpec spec = parse_host_spec("gpus: [h100, h100]\nservers:\n  - name: s\n    gpus: [0]\n"
                                  "    command: python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --mem-fraction-static 0.8\n",
                                  "host.yaml");
  spec.state = read_host_state(HEADROOM_TEST_DATA "/host/h100-x2.csv");
  const HostPlan p = plan_host(spec);
  const Forecast single = run({"--engine", "sglang", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100", "--mem-fraction-static", "0.8",
                               "--host-state", HEADROOM_TEST_DATA "/host/h100-x2.csv"});
  EXPECT_EQ(p.servers.at(0).held_before, std::vector<int64_t>{30722 * MiB});
  EXPECT_EQ(p.servers[0].forecast.kv_tokens, single.kv_tokens);
  EXPECT_EQ(p.gpus.at(0).moments.at(0).held.at(0).first, "other processes");
}

// 0.8.5: the second server must ask for more than the first holds plus its own need; tune keeps
// the first at its 0.5 and raises the second to the least value at which it fits.
TEST(HostTune, RaisesTheSecondVllmWhereTheWholeGpuIsCharged) {
  const HostTuneResult r = tune_host(parse_host_spec(two_vllm("0.8.5"), "host.yaml"));
  ASSERT_TRUE(r.feasible);
  ASSERT_EQ(r.changes.size(), 2u);
  EXPECT_EQ(r.changes[0].to, "0.50");
  const double second = std::stod(r.changes[1].to);
  EXPECT_GT(second, 0.5);
  EXPECT_TRUE(r.plan.all_start);
  EXPECT_EQ(r.plan.servers[1].forecast.verdict, Verdict::Fits);
  // One hundredth less does not fit: it is the least.
  HostSpec spec = parse_host_spec(two_vllm("0.8.5"), "host.yaml");
  using Flags = std::vector<std::pair<std::string, std::string>>;
  const std::vector<Flags> flags = {Flags{{"--gpu-memory-utilization", "0.50"}}, Flags{{"--gpu-memory-utilization", fmt::format("{:.2f}", second - 0.01)}}};
  const HostPlan below = plan_host(spec, flags);
  EXPECT_NE(below.servers[1].forecast.verdict, Verdict::Fits);
}

// Three per-instance servers whose shares sum past the card: the middle one is lowered as far as
// the last needs, the first keeps its value.
TEST(HostTune, LowersAnEarlierServerSoALaterOneFits) {
  const std::string yaml =
      "gpus: [h100]\nservers:\n"
      "  - {name: a, gpus: [0], engine: vllm@0.11.0, command: vllm serve Qwen/Qwen2.5-7B-Instruct --gpu-memory-utilization 0.5}\n"
      "  - {name: b, gpus: [0], engine: vllm@0.11.0, command: vllm serve Qwen/Qwen3-4B --gpu-memory-utilization 0.45}\n"
      "  - {name: c, gpus: [0], engine: vllm@0.11.0, command: vllm serve Qwen/Qwen3-0.6B --gpu-memory-utilization 0.2}\n";
  EXPECT_FALSE(plan_text(yaml).all_start);
  const HostTuneResult r = tune_host(parse_host_spec(yaml, "host.yaml"));
  ASSERT_TRUE(r.feasible);
  EXPECT_EQ(r.changes.at(0).to, "0.50");
  EXPECT_LT(std::stod(r.changes.at(1).to), 0.45);
  for (const auto& s : r.plan.servers) EXPECT_EQ(s.forecast.verdict, Verdict::Fits) << s.name;
}

TEST(HostPlan, BadHostFilesAreOneLine) {
  auto problem = [](const std::string& yaml) {
    try {
      parse_host_spec(yaml, "host.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(problem("gpus: [h100]\nservers:\n  - {name: a, gpus: [0], comand: vllm serve x}\n"),
            "host.yaml: servers[0].comand: is not a key of a host file; did you mean command?");
  EXPECT_EQ(problem("gpus: [h100]\nservers:\n  - {name: a, gpus: [1], command: vllm serve x}\n"),
            "host.yaml: servers[0].gpus[0]: '1' is not a GPU index of this host (0..0)");
  EXPECT_EQ(problem("gpus: [h100]\nservers:\n  - {name: a, gpus: [0], command: x}\n  - {name: a, gpus: [0], command: y}\n"),
            "host.yaml: servers[1].name: 'a' names two servers");
  EXPECT_EQ(problem("gpus: [h100\nservers: ["), "host.yaml: line 2: end of sequence flow not found");
  EXPECT_EQ(problem("gpus: [h99]\nservers: []\n").find("--gpu: h99: not in the GPU catalog"), 0u);
  EXPECT_EQ(problem("- a\n- b\n"), "host.yaml: top level: must be a map with gpus and servers");
  EXPECT_EQ(problem("gpus: [h100]\nservers: " + std::string(3000, '[')), "host.yaml: line 2: nested deeper than 500 levels");
  EXPECT_EQ(problem(std::string(2 << 20, '#')).find("host.yaml: size:"), 0u);
}

TEST(HostPlan, CliExitsTwoOnACommandItCannotReadAndOneWhenAServerFails) {
  TempFile bad("host-bad.yaml", "gpus: [h100]\nservers:\n  - {name: a, gpus: [0], command: echo hello}\n");
  const CliRun r = cli({"plan", "--host", bad.path.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.find("headroom: host.yaml"), std::string::npos);  // names the real file
  EXPECT_NE(r.err.find("servers[0] (a): command: is not a launch command headroom reads"), std::string::npos) << r.err;
  TempFile two("host-two.yaml", two_vllm("0.8.5"));
  const CliRun p = cli({"plan", "--host", two.path.string()});
  EXPECT_EQ(p.rc, 1);
  EXPECT_EQ(p.out.rfind(fmt::format("headroom plan --host {}: 1 of 2 servers start - 'small' does not (REFUSED at kv_pool)", two.path.string()), 0), 0u)
      << p.out;
  const CliRun t = cli({"tune", "--host", two.path.string(), "--json"});
  EXPECT_EQ(t.rc, 0);
  EXPECT_NE(t.out.find("\"feasible\": true"), std::string::npos);
  EXPECT_EQ(cli({"plan", "--host", two.path.string(), "--gpu", "h100"}).rc, 2);  // options belong in the commands
}

}  // namespace
}  // namespace headroom::test
