// llama.cpp through the web API (issue 25 item 7): the plan's per-device buffers are the CLI's,
// byte for byte and by the KV arithmetic; bad llama-server values are one line and HTTP 400; the
// page's llama.cpp view is served. api_run is called directly (web_api_test.cpp covers HTTP).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "headroom/cli.h"
#include "web/web.h"

using namespace headroom;
using json = nlohmann::json;

namespace {

web::Reply post_plan(const std::vector<std::string>& args) { return web::api_run("plan", json{{"args", args}}.dump()); }

std::string cli_json(std::vector<std::string> args) {
  args.insert(args.begin(), "plan");
  args.push_back("--json");
  std::ostringstream out, err;
  run_cli(args, out, err);
  return out.str();
}

const json& device(const json& plan, std::string_view name) {
  for (const auto& d : plan["devices"])
    if (d["name"] == name) return d;
  ADD_FAILURE() << "no device " << name << " in " << plan["devices"].dump();
  static const json none = json::object();
  return none;
}

// Qwen3-8B: 36 layers, 8 KV heads of 128.
constexpr int64_t kLayers = 36, kKvWidth = 8 * 128;

}  // namespace

// One RTX 4090, Q4_K_M derived, 32768 tokens: every layer on CUDA0, the token embedding on the host.
TEST(WebLlamacpp, PlanGivesTheCliPerDeviceBuffers) {
  const std::vector<std::string> args{"--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M",
                                      "--gpu", "rtx-4090", "--ctx-size", "32768"};
  const web::Reply r = post_plan(args);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, cli_json(args));  // the CLI's answer, byte for byte
  const json j = json::parse(r.body);
  EXPECT_EQ(j["verdict"], "fits");
  ASSERT_EQ(j["devices"].size(), 2u);
  const json& gpu = device(j, "CUDA0");
  EXPECT_EQ(gpu["host"], false);
  EXPECT_EQ(gpu["layers"], 37);  // 36 blocks + the output layer
  EXPECT_EQ(gpu["capacity_bytes"].get<int64_t>(), 25382879232);
  EXPECT_EQ(gpu["model_buffer_bytes"].get<int64_t>(), 4671766528);  // "CUDA0 model buffer size = 4455.34 MiB"
  // f16 K and V: 2 x layers x width x 2 B x 32768 cells (4608.00 MiB).
  EXPECT_EQ(gpu["kv_buffer_bytes"].get<int64_t>(), 2 * kLayers * kKvWidth * 2 * 32768);
  EXPECT_EQ(gpu["kv_buffer_bytes"].get<int64_t>(), 4831838208);
  const json& host = device(j, "CPU_Mapped");
  EXPECT_EQ(host["host"], true);
  EXPECT_EQ(host["model_buffer_bytes"].get<int64_t>(), 350060544);  // the token embedding (333.84 MiB)
  EXPECT_EQ(host["output_buffer_bytes"].get<int64_t>(), 2430976);    // "CUDA_Host output buffer size = 2.32 MiB"
  EXPECT_EQ(host["kv_buffer_bytes"].get<int64_t>(), 0);
  // The stage view the page's table shows adds up to the same buffers.
  const json& stages = j["ranks"][0]["stages"];
  EXPECT_EQ(stages[1]["items"][0]["bytes"].get<int64_t>(), 4671766528);
  EXPECT_EQ(stages[2]["items"][0]["bytes"].get<int64_t>(), 4831838208);
  EXPECT_NE(j["launch_command"].get<std::string>().find("llama-server -m Qwen/Qwen3-8B --ctx-size 32768"), std::string::npos);
}

// Two cards of different kinds, split 1,5, f32 K, --fit off: the RTX 3060 runs out in its KV
// buffer (29 of 36 layers' cache), the RTX 4090 keeps 7.
TEST(WebLlamacpp, CardsOfDifferentKindsFailOnTheOneThatIsOver) {
  const std::vector<std::string> args{"--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q8_0", "--gpu",
                                      "rtx-4090,rtx-3060", "--tensor-split", "1,5", "--cache-type-k", "f32",
                                      "--ctx-size", "40960", "--fit", "off"};
  const web::Reply r = post_plan(args);
  ASSERT_EQ(r.status, 200) << r.body;  // an OOM forecast is an answer
  EXPECT_EQ(r.body, cli_json(args));
  const json j = json::parse(r.body);
  EXPECT_EQ(j["verdict"], "oom");
  EXPECT_EQ(j["failure"]["rank"], 1);
  EXPECT_EQ(j["failure"]["stage"], "kv_pool");
  const int64_t per_layer = kKvWidth * (4 + 2) * 40960;  // f32 K + f16 V per cell
  const json& a = device(j, "CUDA0");
  const json& b = device(j, "CUDA1");
  EXPECT_EQ(a["capacity_bytes"].get<int64_t>(), 25382879232);
  EXPECT_EQ(b["capacity_bytes"].get<int64_t>(), 12626952192);
  EXPECT_EQ(a["kv_buffer_bytes"].get<int64_t>(), 7 * per_layer);   // 1680.00 MiB
  EXPECT_EQ(b["kv_buffer_bytes"].get<int64_t>(), 29 * per_layer);  // 6960.00 MiB
  EXPECT_EQ(j["failure"]["request_bytes"].get<int64_t>(), b["kv_buffer_bytes"].get<int64_t>());
  EXPECT_GT(b["model_buffer_bytes"].get<int64_t>() + b["kv_buffer_bytes"].get<int64_t>(), b["capacity_bytes"].get<int64_t>() - 300 * 1048576);
  EXPECT_LT(a["model_buffer_bytes"].get<int64_t>() + a["kv_buffer_bytes"].get<int64_t>() + a["compute_buffer_bytes"].get<int64_t>(),
            a["capacity_bytes"].get<int64_t>());
}

// llama-server's regexes and a projector's file name pass the request check (the CLI opens neither);
// a path does not.
TEST(WebLlamacpp, OverrideTensorRegexesAndProjectorNamesAreNotPaths) {
  const std::vector<std::string> base{"--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--gpu", "rtx-4090"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = base;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const web::Reply plain = post_plan(base);
  const web::Reply ot = post_plan(with({"--override-tensor", R"(blk\.[0-9]+\.ffn_.*=CPU)"}));
  ASSERT_EQ(plain.status, 200) << plain.body;
  ASSERT_EQ(ot.status, 200) << ot.body;
  // The FFN weights move to the host: its model buffer grows by what CUDA0's shrinks.
  const json p = json::parse(plain.body), o = json::parse(ot.body);
  const int64_t moved = device(o, "CPU_Mapped")["model_buffer_bytes"].get<int64_t>() - device(p, "CPU_Mapped")["model_buffer_bytes"].get<int64_t>();
  EXPECT_GT(moved, 1LL << 30);
  EXPECT_EQ(device(p, "CUDA0")["model_buffer_bytes"].get<int64_t>() - device(o, "CUDA0")["model_buffer_bytes"].get<int64_t>(), moved);
  EXPECT_NO_THROW(web::parse_api_request("plan", json{{"args", with({"--mmproj", "mmproj-BF16.gguf"})}}.dump()));
  for (const char* bad : {"../mmproj-BF16.gguf", "/models/mmproj.gguf", "~/mmproj.gguf", "sub/mmproj.gguf"}) {
    const web::Reply r = post_plan(with({"--mmproj", bad}));
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_NE(r.body.find("looks like a file path"), std::string::npos) << r.body;
  }
  const web::Reply file = post_plan({"--engine", "llamacpp", "--model", "Qwen3-8B-Q4_K_M.gguf", "--gpu", "rtx-4090"});
  EXPECT_EQ(file.status, 400) << file.body;
}

// A bad value: HTTP 400 and the CLI's one line naming the flag and the value.
TEST(WebLlamacpp, BadFlagValuesAreOneLine400) {
  const std::vector<std::string> base{"--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--gpu", "rtx-4090"};
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--cache-type-k", "q9"}, "--cache-type-k: 'q9' is not a KV cache type"},
      {{"--n-gpu-layers", "abc"}, "--n-gpu-layers: 'abc' is not an integer"},
      {{"--bogus-flag", "1"}, "--bogus-flag: not a llama-server flag"},
      {{"--tp", "2"}, "llama.cpp has no tensor / pipeline"},
      {{"--override-tensor", "exps"}, "is not PATTERN=BUFFER_TYPE"},
  };
  for (const auto& [more, want] : cases) {
    std::vector<std::string> a = base;
    a.insert(a.end(), more.begin(), more.end());
    const web::Reply r = post_plan(a);
    EXPECT_EQ(r.status, 400) << r.body;
    const json j = json::parse(r.body);
    const std::string line = j.value("error", "");
    EXPECT_NE(line.find(want), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
  const web::Reply q = post_plan({"--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_X", "--gpu", "rtx-4090"});
  EXPECT_EQ(q.status, 400);
  EXPECT_NE(q.body.find("did you mean Q4_K_S"), std::string::npos) << q.body;
  const web::Reply v = post_plan({"--engine", "llamacpp@x12", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--gpu", "rtx-4090"});
  EXPECT_EQ(v.status, 400);
  EXPECT_NE(v.body.find("bNNNN"), std::string::npos) << v.body;
}

TEST(WebLlamacpp, MetaListsTheEngineAndThePageServesItsView) {
  const json meta = json::parse(web::api_meta().body);
  const auto engines = meta["engines"].get<std::vector<std::string>>();
  EXPECT_EQ(engines, (std::vector<std::string>{"sglang", "vllm", "trtllm", "llamacpp"}));
  const auto js = web::static_asset("/llamacpp.js");
  ASSERT_TRUE(js.has_value());
  EXPECT_EQ(js->content_type, "text/javascript; charset=utf-8");
  EXPECT_NE(js->body.find("function renderLlamaDevices"), std::string::npos);
  const auto page = web::static_asset("/");
  ASSERT_TRUE(page.has_value());
  EXPECT_NE(page->body.find("<script src=\"llamacpp.js\" defer></script>"), std::string::npos);
  EXPECT_NE(page->body.find("<option value=\"llamacpp\">llama.cpp</option>"), std::string::npos);
}
