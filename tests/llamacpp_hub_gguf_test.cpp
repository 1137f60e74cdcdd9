// A Hub GGUF repo's file planned from its header alone (issue 25 item 2): `--model ORG/NAME:TAG`
// (llama-server's -hf spelling) and `--model ORG/NAME --gguf FILE`, read by Range requests from a
// stand-in Hub on 127.0.0.1 (tests/hub_stub.h): the plan equals the one of the same file on disk,
// only header bytes cross the wire, and a missing, ambiguous or offline file is one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "headroom/cli.h"
#include "gguf_writer.h"
#include "hub_stub.h"
#include "model/gguf_hub.h"
#include "web/web.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kSha = "0123456789abcdef0123456789abcdef01234567";

// A 4-layer llama (as llamacpp_plan_test.cpp's tiny_gguf), with a vocabulary of `vocab` tokens
// written out (150,000: a header of a few MiB, read in several blocks); data as zeros.
std::string tiny_gguf(int vocab, int split_no = -1, int split_count = 0) {
  using namespace gguf_test;
  Writer w;
  w.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 4).kv_u32("llama.embedding_length", 512)
      .kv_u32("llama.attention.head_count", 4).kv_u32("llama.attention.head_count_kv", 2).kv_u32("llama.context_length", 4096)
      .kv_u32("llama.feed_forward_length", 1024).kv_u32("llama.vocab_size", static_cast<uint32_t>(vocab));
  std::string tokens;
  for (int i = 0; i < vocab; ++i) tokens += str("tok" + std::to_string(i));
  w.kv_arr("tokenizer.ggml.tokens", STRING, static_cast<uint64_t>(vocab), tokens);
  if (split_count > 0) w.kv("split.no", U16, u16(static_cast<uint16_t>(split_no))).kv("split.count", U16, u16(static_cast<uint16_t>(split_count)));
  const bool first = split_count == 0 || split_no == 0, second = split_count == 0 || split_no == 1;
  if (split_count > 0 && first) w.kv("split.tensors.count", I32, i32(3 + 4 * 9));
  if (first) w.tensor("token_embd.weight", {512, 1000}, T_Q8_0, 544000).tensor("output.weight", {512, 1000}, T_Q6_K, 420000)
      .tensor("output_norm.weight", {512}, T_F32, 2048);
  for (int i = 0; i < 4 && second; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.tensor(b + "attn_norm.weight", {512}, T_F32, 2048).tensor(b + "ffn_norm.weight", {512}, T_F32, 2048)
        .tensor(b + "attn_q.weight", {512, 512}, T_Q4_K, 147456).tensor(b + "attn_k.weight", {512, 256}, T_Q4_K, 73728)
        .tensor(b + "attn_v.weight", {512, 256}, T_Q4_K, 73728).tensor(b + "attn_output.weight", {512, 512}, T_Q4_K, 147456)
        .tensor(b + "ffn_gate.weight", {512, 1024}, T_Q4_K, 294912).tensor(b + "ffn_up.weight", {512, 1024}, T_Q4_K, 294912)
        .tensor(b + "ffn_down.weight", {1024, 512}, T_Q4_K, 294912);
  }
  return w.bytes();
}

hubstub::File lfs(const std::string& bytes) { return {bytes, static_cast<int64_t>(bytes.size()), true}; }

struct CliRun {
  int rc;
  std::string out, err;
};
CliRun cli(std::vector<std::string> argv) {
  std::ostringstream out, err;
  int rc = headroom::run_cli(argv, out, err);
  return {rc, out.str(), err.str()};
}

class HubGguf : public ::testing::Test {
 protected:
  hubstub::Hub hub;
  fs::path tmp;
  std::string big = tiny_gguf(150000);
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;

  void set(const char* k, const std::string& v) { save(k), setenv(k, v.c_str(), 1); }
  void unset(const char* k) { save(k), unsetenv(k); }
  void save(const char* k) {
    const char* v = std::getenv(k);
    saved.emplace_back(k, v ? std::optional<std::string>(v) : std::nullopt);
  }
  void SetUp() override {
    static std::atomic<int> n{0};
    tmp = fs::temp_directory_path() / ("headroom-hubgguf-" + std::to_string(getpid()) + "-" + std::to_string(n++));
    fs::create_directories(tmp);
    set("HF_HOME", (tmp / "hf").string());
    set("XDG_CACHE_HOME", (tmp / "xdg").string());
    set("HF_ENDPOINT", hub.endpoint());
    unset("HF_HUB_OFFLINE");
    unset("HF_TOKEN");
    unset("HF_HUB_CACHE");
    hubstub::Repo r;
    r.sha = kSha;
    r.files["README.md"] = {"# tiny", 6, false};
    r.files["tiny-Q4_K_M.gguf"] = lfs(big);
    r.files["tiny-UD-Q4_K_M.gguf"] = lfs(big);
    r.files["tiny-Q8_0.gguf"] = lfs(tiny_gguf(1000));
    r.files["mmproj-Q4_K_M.gguf"] = lfs(tiny_gguf(10));
    r.files["Q6_K/tiny-Q6_K-00001-of-00002.gguf"] = lfs(tiny_gguf(1000, 0, 2));
    r.files["Q6_K/tiny-Q6_K-00002-of-00002.gguf"] = lfs(tiny_gguf(1000, 1, 2));
    hub.add("acme/tiny-GGUF", r);
  }
  void TearDown() override {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
    fs::remove_all(tmp);
  }
  // The plan JSON of the same bytes written to a local file.
  json local_plan(const std::string& bytes, const std::vector<std::string>& flags) {
    const std::string path = (tmp / "local.gguf").string();
    std::ofstream(path, std::ios::binary) << bytes;
    std::vector<std::string> a{"plan", "--engine", "llamacpp", "--model", path, "--json"};
    a.insert(a.end(), flags.begin(), flags.end());
    CliRun r = cli(a);
    EXPECT_EQ(r.rc, 0) << r.err;
    return json::parse(r.out);
  }
};

const std::vector<std::string> kFlags{"--gpu", "rtx-4090", "-c", "8192", "-np", "1"};

}  // namespace

TEST_F(HubGguf, TagNamesTheFileAndThePlanIsTheLocalFilesByHeaderBytesOnly) {
  std::vector<std::string> a{"plan", "--engine", "llamacpp", "--model", "acme/tiny-GGUF:Q4_K_M", "--json"};
  a.insert(a.end(), kFlags.begin(), kFlags.end());
  CliRun r = cli(a);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json j = json::parse(r.out);
  const json local = local_plan(big, kFlags);
  EXPECT_EQ(j["devices"], local["devices"]);
  EXPECT_EQ(j["devices"][0]["model_buffer_bytes"].get<int64_t>(), 4 * 1331200 + 420000 + 2048);  // every layer but the embedding
  EXPECT_EQ(j["devices"][0]["kv_buffer_bytes"].get<int64_t>(), int64_t{2} * 4 * 2 * 128 * 2 * 8192);
  EXPECT_NE(j["notes"][0].get<std::string>().find("acme/tiny-GGUF@0123456789ab tiny-Q4_K_M.gguf"), std::string::npos) << j["notes"][0];
  EXPECT_NE(j["launch_command"].get<std::string>().find("llama-server -hf acme/tiny-GGUF:Q4_K_M"), std::string::npos);
  // The header (~2.4 MB of vocabulary) came in growing ranged blocks; not the 7 MB of tensor data.
  int ranged = 0;
  for (const auto& h : hub.hits())
    if (h.server == "store") {
      ++ranged;
      EXPECT_FALSE(h.range.empty()) << h.path;
      EXPECT_NE(h.path.find("tiny-Q4_K_M.gguf"), std::string::npos) << h.path;
    }
  EXPECT_GE(ranged, 2);
  const int64_t data = 4 * 1331200 + 544000 + 420000 + 2048;
  EXPECT_LT(hub.bytes_sent(), static_cast<int64_t>(big.size()) - data / 2);
}

TEST_F(HubGguf, GgufFlagNamesTheFileAndSplitSetsReadEveryPart) {
  CliRun r = cli({"plan", "--engine", "llamacpp", "--model", "acme/tiny-GGUF", "--gguf", "tiny-Q8_0.gguf", "--json", "--gpu", "rtx-4090", "-c", "8192", "-np", "1"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["devices"], local_plan(tiny_gguf(1000), kFlags)["devices"]);
  EXPECT_NE(j["launch_command"].get<std::string>().find("llama-server --hf-repo acme/tiny-GGUF --hf-file tiny-Q8_0.gguf"), std::string::npos);
  EXPECT_EQ(j["launch_command"].get<std::string>().find("--gguf"), std::string::npos);
  // A split set in a folder, by its tag: both parts' headers, the same tensors as one file.
  CliRun s = cli({"plan", "--engine", "llamacpp", "--model", "acme/tiny-GGUF:Q6_K", "--json", "--gpu", "rtx-4090", "-c", "8192", "-np", "1"});
  ASSERT_EQ(s.rc, 0) << s.err;
  const json sj = json::parse(s.out);
  EXPECT_EQ(sj["devices"][0]["model_buffer_bytes"].get<int64_t>(), 4 * 1331200 + 420000 + 2048);
  EXPECT_NE(sj["notes"][0].get<std::string>().find("(2 parts)"), std::string::npos) << sj["notes"][0];
}

TEST_F(HubGguf, MissingAmbiguousAndOfflineAreOneLine) {
  auto err = [&](std::vector<std::string> more) {
    std::vector<std::string> a{"plan", "--engine", "llamacpp", "--gpu", "rtx-4090"};
    a.insert(a.end(), more.begin(), more.end());
    CliRun r = cli(a);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    return r.err;
  };
  EXPECT_NE(err({"--model", "acme/tiny-GGUF:IQ2_XXS"}).find("no GGUF file of the repository matches (it has: Q6_K/tiny-Q6_K-00001-of-00002.gguf, "
                                                          "tiny-Q4_K_M.gguf, tiny-Q8_0.gguf, tiny-UD-Q4_K_M.gguf)"),
            std::string::npos);
  EXPECT_NE(err({"--model", "acme/tiny-GGUF", "--gguf", "nope.gguf"}).find("no GGUF file of the repository matches"), std::string::npos);
  EXPECT_NE(err({"--model", "acme/tiny-GGUF:Q4_K_M", "--gguf", "tiny-Q8_0.gguf"}).find("give one"), std::string::npos);
  EXPECT_NE(err({"--model", "acme/tiny-GGUF:Q4_K_M", "--quant", "Q4_K_M"}).find("drop --quant"), std::string::npos);
  EXPECT_NE(err({"--model", "acme/missing-GGUF:Q4_K_M"}).find("RepoNotFound"), std::string::npos);
  hub.clear();
  set("HF_HUB_OFFLINE", "1");
  EXPECT_NE(err({"--model", "acme/tiny-GGUF:Q4_K_M"}).find("offline"), std::string::npos);
  EXPECT_TRUE(hub.hits().empty());
  // Two files of the tag: name one. "UD-Q4_K_M" is asked for by that name; "Q4_K_M" is the plain file.
  const std::vector<std::string> files{"a-Q4_K_M.gguf", "b-Q4_K_M.gguf"};
  try {
    headroom::hub::pick_gguf_file(files, "Q4_K_M", "acme/two");
    ADD_FAILURE() << "two matches were accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("matches 2 files (a-Q4_K_M.gguf, b-Q4_K_M.gguf): name one with --gguf FILE"), std::string::npos) << e.what();
  }
  EXPECT_EQ(headroom::hub::pick_gguf_file({"x-UD-Q4_K_M.gguf", "x-Q4_K_M.gguf"}, "Q4_K_M", "r"), "x-Q4_K_M.gguf");
  EXPECT_EQ(headroom::hub::pick_gguf_file({"x-UD-Q4_K_M.gguf", "x-Q4_K_M.gguf"}, "UD-Q4_K_M", "r"), "x-UD-Q4_K_M.gguf");
  EXPECT_EQ(headroom::hub::pick_gguf_file({"x-Q4_K_M.gguf", "x-Q4_K_M_L.gguf"}, "q4_k_m", "r"), "x-Q4_K_M.gguf");
}

TEST_F(HubGguf, WebTakesTheTaggedIdAndAFileNameButNoPath) {
  const std::string body = json{{"args", {"--engine", "llamacpp", "--model", "acme/tiny-GGUF:Q4_K_M", "--gpu", "rtx-4090", "-c", "8192", "-np", "1"}}}.dump();
  const auto rep = headroom::web::api_run("plan", body);
  ASSERT_EQ(rep.status, 200) << rep.body;
  EXPECT_EQ(json::parse(rep.body)["devices"][0]["model_buffer_bytes"].get<int64_t>(), 4 * 1331200 + 420000 + 2048);
  EXPECT_NO_THROW(headroom::web::parse_api_request("plan", json{{"args", {"--model", "acme/tiny-GGUF", "--gguf", "Q6_K/tiny-Q6_K-00001-of-00002.gguf"}}}.dump()));
  for (const char* bad : {"../tiny.gguf", "/etc/tiny.gguf", "~/tiny.gguf", "a\\b.gguf"})
    EXPECT_THROW(headroom::web::parse_api_request("plan", json{{"args", {"--model", "acme/tiny-GGUF", "--gguf", bad}}}.dump()), std::exception) << bad;
}

// `headroom model ORG/NAME:TAG` (and `--gguf FILE`): the file's facts from its header over Range
// requests, the same as `headroom model` of the bytes on disk (parameters and bytes by type).
TEST_F(HubGguf, ModelVerbReadsTheHubFilesHeader) {
  CliRun r = cli({"model", "acme/tiny-GGUF:Q4_K_M", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json j = json::parse(r.out);
  const std::string path = (tmp / "local.gguf").string();
  std::ofstream(path, std::ios::binary) << big;
  CliRun local = cli({"model", path, "--json"});
  ASSERT_EQ(local.rc, 0) << local.err;
  const json l = json::parse(local.out);
  EXPECT_EQ(j["bytes_by_type"], l["bytes_by_type"]);
  EXPECT_EQ(j["params_total"], l["params_total"]);
  // q4_K: per layer q, o (147,456 B each), k, v (73,728), gate, up, down (294,912) x 4 layers.
  EXPECT_EQ(j["bytes_by_type"]["q4_K"].get<int64_t>(), 4 * (2 * 147456 + 2 * 73728 + 3 * 294912));
  EXPECT_NE(j["notes"][0].get<std::string>().find("acme/tiny-GGUF@0123456789ab tiny-Q4_K_M.gguf"), std::string::npos) << j["notes"][0];
  CliRun g = cli({"model", "acme/tiny-GGUF", "--gguf", "tiny-Q8_0.gguf", "--json"});
  ASSERT_EQ(g.rc, 0) << g.err;
  EXPECT_EQ(json::parse(g.out)["tensors"], l["tensors"]);
  set("HF_HUB_OFFLINE", "1");
  CliRun off = cli({"model", "acme/tiny-GGUF:Q4_K_M"});
  EXPECT_EQ(off.rc, 2);
  EXPECT_NE(off.err.find("offline"), std::string::npos) << off.err;
}
