// `headroom serve` API (issue 7): an in-process server on a free loopback port, hit with
// httplib::Client — every endpoint, good requests, bad JSON, oversize bodies, unknown fields,
// wrong methods, file paths smuggled in arguments — and the server still answers afterwards.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "headroom/cli.h"
#include "headroom/error.h"
#include "web/private_dir.h"
#include "web/web.h"

#ifdef HEADROOM_HAVE_HTTPLIB
#include <httplib.h>
#endif

using namespace headroom;
using nlohmann::json;

namespace {

bool has_verb(std::string_view verb) {
  for (const auto& v : verb_table())
    if (v.name == verb) return true;
  return false;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// What the CLI prints for these arguments (stdout) and its exit code.
std::pair<int, std::string> cli(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  int rc = run_cli(argv, out, err);
  return {rc, out.str()};
}

// The seed deployment (tests/data/seed/README.md): GLM-5 NVFP4, SGLang, 8 x RTX PRO 6000, TP 8.
std::vector<std::string> seed_args(const std::string& fraction) {
  return {"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8",
          "--mem-fraction-static", fraction};
}

}  // namespace

// ---- request validation, without HTTP --------------------------------------------------------

TEST(WebRequest, AcceptsCatalogIdsAnyCaseAndNumbersWithLeadingDot) {
  auto r = web::parse_api_request("plan", R"({"args": ["--model", "NVIDIA/glm-5-nvfp4", "--mem-fraction-static", ".88"]})");
  ASSERT_EQ(r.args.size(), 4u);
  EXPECT_EQ(r.args[1], "NVIDIA/glm-5-nvfp4");
  EXPECT_FALSE(r.config.has_value());
  EXPECT_FALSE(r.log.has_value());
}

TEST(WebRequest, RejectsWhatWouldReadFiles) {
  const char* bad[] = {
      R"({"args": ["--model", "/etc"]})",                         // absolute path
      R"({"args": ["--model", "some-org/nested/folder"]})",       // relative folder (not a Hugging Face id)
      R"({"args": ["--model", "../x"]})",                         // parent-relative
      R"({"args": ["--model=../data/models/Qwen/Qwen3-8B"]})",    // --name=value form
      R"({"args": ["--speculative-draft-model-path", "x/y"]})",   // any value with a slash
      R"({"args": ["--gpu", "~/gpus"]})",                         // home-relative
      R"({"args": ["--gpu", "./gpus"]})",                         // dot-relative
      R"({"args": ["--kv-cache-dtype", "secrets.json"]})",        // a data-file name
      R"({"args": ["seed-crash.log"]})",                          // positional
      R"({"args": ["--help"]})",
  };
  for (const char* body : bad) EXPECT_THROW(web::parse_api_request("plan", body), InputError) << body;
}

// A Hugging Face id is accepted and resolved through the caches and the Hub (issue 24), never as
// a folder of the server's: here a folder of that name in the server's working directory is not
// read, and the sealed test environment is offline, so the answer is the offline refusal.
TEST(WebRequest, HubIdsResolveButNeverAsAServerFolder) {
  auto r = web::parse_api_request("plan", R"({"args": ["--model", "some-org/not-in-catalog@main"]})");
  EXPECT_EQ(r.args[1], "some-org/not-in-catalog@main");
  namespace fs = std::filesystem;
  const fs::path old = fs::current_path();
  const fs::path tmp = fs::temp_directory_path() / ("headroom-web-hub-" + std::to_string(getpid()));
  fs::create_directories(tmp / "acme" / "local-folder");
  std::ofstream(tmp / "acme" / "local-folder" / "config.json")
      << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 128,
            "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "torch_dtype": "bfloat16"})";
  fs::current_path(tmp);
  web::Reply rep = web::api_run("plan", R"({"args": ["--model", "acme/local-folder", "--gpu", "h100"]})");
  auto [rc, out] = cli({"plan", "--model", "acme/local-folder", "--gpu", "h100", "--json"});  // the CLI reads the folder
  fs::current_path(old);
  fs::remove_all(tmp);
  EXPECT_EQ(rep.status, 400) << rep.body;
  EXPECT_NE(rep.body.find("offline"), std::string::npos) << rep.body;
  EXPECT_EQ(rc, 0) << out;
}

TEST(WebRequest, ShapeErrorsNameTheField) {
  auto message = [](std::string_view verb, std::string_view body) -> std::string {
    try {
      web::parse_api_request(verb, body);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message("plan", "{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(message("plan", "[1]").find("JSON object"), std::string::npos);
  EXPECT_NE(message("plan", R"({"args": [], "gpu": "h100"})").find("gpu: unknown field"), std::string::npos);
  EXPECT_NE(message("plan", R"({"args": [], "log": "x"})").find("log: unknown field"), std::string::npos);
  EXPECT_NE(message("plan", R"({})").find("args: missing"), std::string::npos);
  EXPECT_NE(message("plan", R"({"args": "--tp 8"})").find("args: must be a list"), std::string::npos);
  EXPECT_NE(message("plan", R"({"args": ["--tp", 8]})").find("args[1]: must be a string"), std::string::npos);
  EXPECT_NE(message("doctor", R"({"args": []})").find("log: missing"), std::string::npos);
  EXPECT_NE(message("doctor", R"({"args": [], "log": ""})").find("log: is empty"), std::string::npos);
  EXPECT_NE(message("plan", R"({"args": [], "hf_quant_config": "{}"})").find("together with config"), std::string::npos);
  EXPECT_NE(message("plan", R"({"args": ["--model", "Qwen/Qwen3-8B"], "config": "{}"})").find("not both"), std::string::npos);
  // 33 nested arrays: over the depth limit of 32, refused before parsing.
  EXPECT_NE(message("plan", std::string(33, '[') + std::string(33, ']')).find("nested deeper"), std::string::npos);
  std::string many = R"({"args": [)";
  for (size_t i = 0; i <= web::kMaxArgs; ++i) many += std::string(i ? "," : "") + "\"--quiet\"";
  EXPECT_NE(message("plan", many + "]}").find("over the limit of 256"), std::string::npos);
}

TEST(WebRequest, CatalogIdsComeFromTheEmbeddedModels) {
  auto ids = web::catalog_model_ids();
  EXPECT_NE(std::find(ids.begin(), ids.end(), "nvidia/GLM-5-NVFP4"), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "Qwen/Qwen3-8B"), ids.end());
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
}

TEST(WebPrivateDir, IsOwnerOnlyAndRemoved) {
  std::string path, file;
  {
    web::PrivateDir dir;
    path = dir.path();
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    file = dir.write("crash.log", "line one\n");
    ASSERT_EQ(stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(read_file(file), "line one\n");
    EXPECT_THROW(dir.write("crash.log", "again"), std::runtime_error);  // O_EXCL: never overwrites
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(WebAssets, PageIsEmbeddedAndOnlyUnderWeb) {
  auto page = web::static_asset("/");
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->content_type, "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("<html"), std::string::npos);
  EXPECT_FALSE(web::static_asset("/gpus.json").has_value());          // data/gpus.json is not a page asset
  EXPECT_FALSE(web::static_asset("/../gpus.json").has_value());
  EXPECT_FALSE(web::static_asset("/%2e%2e/gpus.json").has_value());
  EXPECT_FALSE(web::static_asset("//etc/passwd").has_value());
}

#ifdef HEADROOM_HAVE_HTTPLIB

// ---- over HTTP -----------------------------------------------------------------------------

class WebApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new web::HttpServer(web::ServerOptions{"127.0.0.1", 0});
    port_ = server_->bind();
    thread_ = new std::thread([] { server_->serve(); });
  }
  static void TearDownTestSuite() {
    server_->stop();
    thread_->join();
    delete thread_;
    delete server_;
  }
  static httplib::Client client() {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }
  static httplib::Result post(const std::string& path, const std::string& body) {
    return client().Post(path.c_str(), body, "application/json");
  }
  static json body_json(const httplib::Result& r) { return json::parse(r->body); }
  static void expect_error(const httplib::Result& r, int status, std::string_view needle) {
    ASSERT_TRUE(r) << "no answer";
    EXPECT_EQ(r->status, status) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json") << r->body;
    json j = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << r->body;
    EXPECT_NE(j["error"].get<std::string>().find(needle), std::string::npos) << j["error"];
  }
  static void expect_alive() {
    auto r = client().Get("/api/meta");
    ASSERT_TRUE(r) << "server stopped answering";
    EXPECT_EQ(r->status, 200);
  }

  static inline web::HttpServer* server_ = nullptr;
  static inline std::thread* thread_ = nullptr;
  static inline int port_ = 0;
};

TEST_F(WebApi, ServesThePageAndItsAssets) {
  auto r = client().Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(r->get_header_value("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff");
  for (const char* asset : {"/app.js", "/host.js", "/versions.js", "/style.css"}) {
    auto a = client().Get(asset);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->status, 200) << asset;
    EXPECT_FALSE(a->body.empty()) << asset;
  }
  EXPECT_NE(r->body.find("<script src=\"host.js\" defer>"), std::string::npos);  // the Host tab's view
  EXPECT_NE(r->body.find("<script src=\"versions.js\" defer>"), std::string::npos);  // the Versions tab's view
  expect_error(client().Get("/gpus.json"), 404, "no such page");
  expect_error(client().Get("/nothing-here"), 404, "no such page");
}

TEST_F(WebApi, GpusAreTheCliJsonByteForByte) {
  auto r = client().Get("/api/gpus");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto [rc, out] = cli({"gpus", "--json"});
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(r->body, out);
  // Seed crash: "GPU 4 has a total capacity of 94.97 GiB" -> 101972967424 bytes in the catalog.
  bool found = false;
  const json gpus = body_json(r)["gpus"];
  for (const auto& g : gpus)
    if (g["name"] == "rtx-pro-6000") {
      found = true;
      EXPECT_EQ(g["capacity_bytes"].get<int64_t>(), 101972967424);
    }
  EXPECT_TRUE(found);
}

TEST_F(WebApi, ModelsAndMeta) {
  auto r = client().Get("/api/models");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto models = body_json(r)["models"].get<std::vector<std::string>>();
  EXPECT_EQ(models, web::catalog_model_ids());
  EXPECT_NE(std::find(models.begin(), models.end(), "nvidia/GLM-5-NVFP4"), models.end());

  auto m = client().Get("/api/meta");
  ASSERT_TRUE(m);
  json meta = body_json(m);
  EXPECT_EQ(meta["name"], "headroom");
  EXPECT_EQ(meta["limits"]["body_bytes"].get<size_t>(), web::kMaxBodyBytes);
  auto verbs = meta["verbs"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(verbs.begin(), verbs.end(), "serve"), verbs.end());
  // One row per engine from engine_traits.h, its flags spelled as the engine spells them.
  EXPECT_EQ(meta["engines"], json({"sglang", "vllm", "trtllm", "llamacpp"}));
  ASSERT_EQ(meta["engine_traits"].size(), 4u);
  const json& vllm = meta["engine_traits"][1];
  EXPECT_EQ(vllm["memory_flag"], "--gpu-memory-utilization");
  EXPECT_EQ(vllm["memory_range"], json({0.01, 1.0}));
  EXPECT_EQ(vllm["context_flag"], "--max-model-len");
  const auto flags = vllm["flags"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(flags.begin(), flags.end(), "--max-num-seqs"), flags.end());
  EXPECT_EQ(meta["engine_traits"][3]["memory_flag"], "");  // llama.cpp: no share of memory, the KV is --ctx-size cells
}

TEST_F(WebApi, BadJsonUnknownFieldsAndBadArgsAre400) {
  for (const char* path : {"/api/plan", "/api/tune", "/api/doctor", "/api/diff"}) {
    if (!has_verb(std::string_view(path).substr(5))) {
      expect_error(post(path, R"({"args": []})"), 501, "no '");
      continue;
    }
    const bool doctor = std::string_view(path) == "/api/doctor";
    auto body = [&](json args) {
      json j{{"args", args}};
      if (doctor) j["log"] = "x";
      return j.dump();
    };
    expect_error(post(path, "{\"args\": [}"), 400, "not valid JSON");
    expect_error(post(path, "\"just a string\""), 400, "JSON object");
    expect_error(post(path, R"({"args": [], "engine": "vllm"})"), 400, "engine: unknown field");
    expect_error(post(path, body(json::array({7}))), 400, "args[0]: must be a string");
    expect_error(post(path, body({"--model", "/etc"})), 400, "not a catalog model id");
    expect_error(post(path, body({"--gpu", "../../etc/passwd"})), 400, "looks like a file path");
    expect_error(post(path, body({"/etc/passwd"})), 400, "positional argument");
  }
  expect_alive();
}

TEST_F(WebApi, OversizeBodiesAre413AndJustUnderIsRead) {
  std::string big(web::kMaxBodyBytes + 1, ' ');
  expect_error(post("/api/plan", big), 413, "over the limit");
  expect_error(post("/api/doctor", big), 413, "over the limit");
  // One byte under the limit is read and judged on its content (an unterminated string).
  std::string under = R"({"args": [], "log": ")" + std::string(web::kMaxBodyBytes - 22, 'x');
  ASSERT_EQ(under.size(), web::kMaxBodyBytes - 1);
  auto r = post("/api/doctor", under);
  if (has_verb("doctor")) expect_error(r, 400, "not valid JSON");
  else expect_error(r, 501, "doctor");
  expect_alive();
}

TEST_F(WebApi, WrongMethodsAre405AndUnknownPaths404) {
  auto g = client().Get("/api/plan");
  expect_error(g, 405, "POST only");
  EXPECT_EQ(g->get_header_value("Allow"), "POST");
  expect_error(client().Get("/api/diff"), 405, "POST only");
  expect_error(client().Delete("/api/gpus"), 405, "GET only");
  expect_error(post("/api/models", "{}"), 405, "GET only");
  expect_error(client().Put("/", "x", "text/plain"), 405, "GET only");
  expect_error(post("/api/shell", R"({"args": []})"), 404, "no such page or endpoint");
  expect_error(client().Get("/api/nothing"), 404, "no such page or endpoint");
  expect_alive();
}

TEST_F(WebApi, NonJsonContentTypeIs415) {
  auto r = client().Post("/api/plan", R"({"args": []})", "text/plain");
  expect_error(r, 415, "application/json");
  expect_alive();
}

TEST_F(WebApi, ForeignHostHeaderIsRefused) {
  // A page on another site that rebinds its name to 127.0.0.1 sends its own Host header.
  auto r = client().Get("/api/gpus", {{"Host", "evil.example:80"}});
  expect_error(r, 403, "addressed to localhost");
  auto ok = client().Get("/api/gpus", {{"Host", "localhost:" + std::to_string(port_)}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(WebApi, SurvivesGarbageOnTheSocket) {
  const char* garbage[] = {"GARBAGE\r\n\r\n", "POST /api/plan HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
                           "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n", "\x00\xff\xfe\r\n\r\n",
                           "POST /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"};
  for (const char* g : garbage) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_GT(send(fd, g, std::max<size_t>(1, strlen(g)), MSG_NOSIGNAL), 0);
    shutdown(fd, SHUT_WR);
    char buf[512];
    while (recv(fd, buf, sizeof buf, 0) > 0) {
    }
    close(fd);
  }
  expect_alive();
}

TEST_F(WebApi, ConcurrentRequestsAgree) {
  auto [rc, expected] = cli({"gpus", "--json"});
  ASSERT_EQ(rc, 0);
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, &expected = expected] {
      auto c = client();
      for (int i = 0; i < 10; ++i) {
        auto r = c.Get("/api/gpus");
        if (r && r->status == 200 && r->body == expected) ++good;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 80);
}

// The seed deployment through the web gives the CLI's answer, byte for byte: at 0.95 SGLang
// dies in CUDA-graph capture (seed README), at 0.88 it starts.
TEST_F(WebApi, PlanIsTheCliJsonForTheSeedDeployment) {
  if (!has_verb("plan")) {
    expect_error(post("/api/plan", R"({"args": []})"), 501, "no 'plan' verb");
    GTEST_SKIP() << "this build has no plan verb yet";
  }
  for (const std::string fraction : {"0.95", "0.88"}) {
    auto args = seed_args(fraction);
    auto r = post("/api/plan", json{{"args", args}}.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    json j = body_json(r);
    // Byte for byte the CLI's answer (checked once: a plan of this model costs seconds).
    int rc = j["verdict"] == "fits" ? kExitOk : kExitFails;
    if (fraction == "0.95") {
      std::vector<std::string> argv{"plan"};
      argv.insert(argv.end(), args.begin(), args.end());
      argv.push_back("--json");
      auto [cli_rc, out] = cli(argv);
      EXPECT_EQ(r->body, out);
      rc = cli_rc;
    }
    EXPECT_EQ(r->get_header_value("X-Headroom-Exit-Code"), std::to_string(rc));
    if (fraction == "0.95") {
      EXPECT_EQ(j["verdict"], "oom");
      EXPECT_EQ(j["failure"]["stage"], "cuda_graph");
      EXPECT_EQ(rc, kExitFails);
    } else {
      EXPECT_EQ(j["verdict"], "fits");
      EXPECT_TRUE(j["failure"].is_null());
      EXPECT_EQ(rc, kExitOk);
    }
  }
  // Bad input is the CLI's own one-line error (without the "headroom: " prefix), as a 400.
  std::vector<std::string> bad{"--model", "nvidia/GLM-5-NVFP4", "--gpu", "voodoo-5"};
  auto r = post("/api/plan", json{{"args", bad}}.dump());
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"plan", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "voodoo-5", "--json"}, out, err), kExitBadInput);
  std::string line = err.str();
  ASSERT_EQ(line.rfind("headroom: ", 0), 0u) << line;
  line = line.substr(10, line.find('\n') - 10);
  expect_error(r, 400, line);
}

TEST_F(WebApi, PlanTakesAnUploadedConfigAndHidesTheTempPath) {
  if (!has_verb("plan")) GTEST_SKIP() << "this build has no plan verb yet";
  std::string config = read_file(std::string(HEADROOM_SOURCE_DIR) + "/data/models/Qwen/Qwen3-8B/config.json");
  ASSERT_FALSE(config.empty());
  auto r = post("/api/plan", json{{"args", {"--gpu", "h100"}}, {"config", config}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->body.find("headroom-web-"), std::string::npos);
  // Broken config text: the CLI's InputError names the uploaded file, not the server's folder.
  auto bad = post("/api/plan", json{{"args", {"--gpu", "h100"}}, {"config", "{\"hidden_size\": "}}.dump());
  expect_error(bad, 400, "upload");
  EXPECT_EQ(bad->body.find("headroom-web-"), std::string::npos);
}

TEST_F(WebApi, DoctorReadsTheSeedCrashLog) {
  if (!has_verb("doctor")) {
    expect_error(post("/api/doctor", R"({"args": [], "log": "x"})"), 501, "no 'doctor' verb");
    GTEST_SKIP() << "this build has no doctor verb yet";
  }
  std::string log = read_file(std::string(HEADROOM_TEST_DATA) + "/seed/seed-crash.log");
  ASSERT_FALSE(log.empty());
  auto r = post("/api/doctor", json{{"args", seed_args("0.95")}, {"log", log}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  EXPECT_EQ(j["stage"], "cuda_graph");
  EXPECT_EQ(j["cause"], "static_fraction_too_high");
  EXPECT_FALSE(j["evidence"].empty());
  EXPECT_EQ(r->body.find("headroom-web-"), std::string::npos);
  // The page's form sends --fill unless "it overrides the log" is ticked: the log's GPU stays.
  auto filled = post("/api/doctor", json{{"args", {"--gpu", "h100", "--fill"}}, {"log", log}}.dump());
  ASSERT_TRUE(filled);
  ASSERT_EQ(filled->status, 200) << filled->body;
  EXPECT_EQ(body_json(filled)["overrides"], json::array({"--gpu h100 (filled in) not used: the log says 94.97 GiB per GPU"}));
}

// The Versions tab's request (web_diff_test.cpp has the figures): the CLI's diff over HTTP.
TEST_F(WebApi, DiffIsTheCliJsonOverHttp) {
  const std::vector<std::string> args{"--engine", "vllm@0.8.2", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "a100-80gb"};
  auto r = post("/api/diff", json{{"args", args}, {"to", "0.10.2"}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  std::vector<std::string> argv{"diff"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--to", "0.10.2", "--json"});
  auto [rc, out] = cli(argv);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(r->body, out);
  EXPECT_EQ(r->get_header_value("X-Headroom-Exit-Code"), "0");
  EXPECT_EQ(body_json(r)["kv_tokens"]["delta"].get<int64_t>(), 8416);
  expect_error(post("/api/diff", json{{"args", args}}.dump()), 400, "to: missing");
}

TEST_F(WebApi, TuneAnswersForTheSeedDeployment) {
  if (!has_verb("tune")) {
    expect_error(post("/api/tune", R"({"args": []})"), 501, "no 'tune' verb");
    GTEST_SKIP() << "this build has no tune verb yet";
  }
  std::vector<std::string> args{"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8"};
  auto r = post("/api/tune", json{{"args", args}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  EXPECT_TRUE(j.contains("recommended"));
  EXPECT_TRUE(j.contains("tradeoffs"));
  std::vector<std::string> argv{"tune"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--json");
  EXPECT_EQ(r->body, cli(argv).second);
}

#endif  // HEADROOM_HAVE_HTTPLIB

// ---- the host's state and host files as text (issue 29) ----------------------------------------

TEST(WebHost, HostStateTextPlansFromWhatIsFree) {
  nlohmann::json body = {{"args", {"--engine", "sglang", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100"}},
                         {"host_state", "index, memory.used [MiB]\n0, 30722 MiB\n"}};
  const web::Reply rep = web::api_run("plan", body.dump());
  ASSERT_EQ(rep.status, 200) << rep.body;
  const auto j = nlohmann::json::parse(rep.body);
  EXPECT_EQ(j["ranks"][0]["stages"][0]["items"][0]["bytes"], 30722LL * 1024 * 1024);
  EXPECT_EQ(rep.body.find("/tmp"), std::string::npos);  // the private folder is not named
}

TEST(WebHost, HostFileTextGivesTheServersInStartOrder) {
  nlohmann::json body = {{"args", nlohmann::json::array()},
                         {"host", "gpus: [h100]\nservers:\n"
                                  "  - {name: chat, gpus: [0], engine: vllm@0.8.5, command: vllm serve Qwen/Qwen2.5-7B-Instruct --gpu-memory-utilization 0.5}\n"
                                  "  - {name: small, gpus: [0], engine: vllm@0.8.5, command: vllm serve Qwen/Qwen3-0.6B --gpu-memory-utilization 0.5}\n"}};
  const web::Reply plan = web::api_run("plan", body.dump());
  ASSERT_EQ(plan.status, 200) << plan.body;
  const auto j = nlohmann::json::parse(plan.body);
  EXPECT_EQ(j["all_start"], false);
  EXPECT_EQ(j["servers"][1]["verdict"], "refused");
  EXPECT_TRUE(j["servers"][1]["why"].is_string());  // the page shows it beside the failure
  const web::Reply tune = web::api_run("tune", body.dump());
  ASSERT_EQ(tune.status, 200) << tune.body;
  EXPECT_EQ(nlohmann::json::parse(tune.body)["feasible"], true);
}

TEST(WebHost, NoHostOrHostStatePathsOverHttp) {
  for (const char* body : {R"({"args": ["--host", "h.yaml"]})", R"({"args": ["--host-state", "-"]})", R"({"args": ["--host-state", "x"]})",
                           R"({"args": [], "host": "gpus: [h100]", "config": "{}"})"})
    EXPECT_THROW(web::parse_api_request("plan", body), InputError) << body;
  // A server command naming a folder of the server's is not read.
  nlohmann::json body = {{"args", nlohmann::json::array()},
                         {"host", "gpus: [h100]\nservers:\n  - {name: a, gpus: [0], command: vllm serve /etc --gpu-memory-utilization 0.5}\n"}};
  const web::Reply rep = web::api_run("plan", body.dump());
  EXPECT_EQ(rep.status, 400) << rep.body;
}

// The profile selector's API (issue 29 item 4): the host profiles `headroom calibrate` saved are
// listed, and a plan request naming one is calibrated; a name that is a path is refused.
TEST(WebHost, ProfilesAreListedAndAPlanUsesOne) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("headroom-web-profiles-" + std::to_string(getpid()));
  fs::create_directories(dir);
  setenv("XDG_CONFIG_HOME", dir.c_str(), 1);
  const std::vector<std::string> dep = {"--engine", "sglang@docker@2025-07-14", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "rtx-4090"};
  std::vector<std::string> cal = {"calibrate", HEADROOM_TEST_DATA "/calibrate/sglang-rtx4090-llama31-8b.log", "--name", "box"};
  cal.insert(cal.end(), dep.begin(), dep.end());
  auto [rc, out] = cli(cal);
  ASSERT_EQ(rc, 0) << out;
  const auto list = nlohmann::json::parse(web::api_profiles().body);
  ASSERT_EQ(list["profiles"].size(), 1u);
  EXPECT_EQ(list["profiles"][0]["name"], "box");
  EXPECT_EQ(list["profiles"][0]["gpu"], "rtx-4090");
  EXPECT_EQ(list["profiles"][0]["engine"], "sglang");
  nlohmann::json body = {{"args", dep}};
  body["args"].push_back("--profile");
  body["args"].push_back("box");
  const web::Reply plan = web::api_run("plan", body.dump());
  EXPECT_EQ(plan.status, 200) << plan.body;
  EXPECT_EQ(nlohmann::json::parse(plan.body)["calibrated_host"], "box");
  EXPECT_THROW(web::parse_api_request("plan", R"({"args": ["--profile", "../box"]})"), InputError);
  unsetenv("XDG_CONFIG_HOME");
  fs::remove_all(dir);
}
