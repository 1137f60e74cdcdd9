// Model resolution through the stand-in Hub (hub_stub.h) and the two caches: exact parameters and
// bytes from synthesized shard headers with only the headers transferred, offline sends nothing,
// the second run is served from headroom's cache, gated / unknown / unreachable / hostile
// answers are one line and exit 2, the token is never shown or stored, and a Hugging Face cache
// is read by id with the network unreachable.
#include <gtest/gtest.h>

#ifdef HEADROOM_HAVE_HTTPLIB  // the stand-in Hub needs cpp-httplib (libcpp-httplib-dev)

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "headroom/cli.h"
#include "headroom/embedded.h"
#include "headroom/model.h"
#include "hub_stub.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kSha = "1111111111111111111111111111111111111111";
const char* kSha2 = "2222222222222222222222222222222222222222";
const char* kBase = "Qwen/Qwen3-14B";  // the bundled config the stand-in repos are built from

// A repo holding the bundled config of `base` and its derived inventory as `shards` safetensors
// files (synthesized headers, data left virtual), with model.safetensors.index.json.
hubstub::Repo synth_repo(const std::string& base, int shards, const std::string& sha) {
  auto m = headroom::load_model(base);
  hubstub::Repo r;
  r.sha = sha;
  r.files["config.json"] = {std::string(*headroom::embedded_file("models/" + base + "/config.json")), 0, false};
  r.files["config.json"].size = static_cast<int64_t>(r.files["config.json"].prefix.size());
  json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", json::object()}};
  int64_t total = 0;
  const size_t per = (m->tensors.size() + static_cast<size_t>(shards) - 1) / static_cast<size_t>(shards);
  for (int s = 0; s < shards; ++s) {
    const std::string name = "model-0000" + std::to_string(s + 1) + "-of-0000" + std::to_string(shards) + ".safetensors";
    json h = {{"__metadata__", {{"format", "pt"}}}};
    int64_t off = 0;
    for (size_t i = static_cast<size_t>(s) * per; i < std::min(m->tensors.size(), static_cast<size_t>(s + 1) * per); ++i) {
      const auto& t = m->tensors[i];
      h[t.name] = {{"dtype", std::string(headroom::dtype_name(t.dtype))}, {"shape", t.shape}, {"data_offsets", {off, off + t.bytes}}};
      off += t.bytes;
      index["weight_map"][t.name] = name;
    }
    const std::string text = h.dump();
    r.files[name] = {hubstub::le64(text.size()) + text, static_cast<int64_t>(8 + text.size()) + off, true};
    total += off;
  }
  index["metadata"]["total_size"] = total;
  const std::string itext = index.dump();
  r.files["model.safetensors.index.json"] = {itext, static_cast<int64_t>(itext.size()), false};
  return r;
}

struct CliRun {
  int rc;
  std::string out, err;
};
CliRun cli(std::vector<std::string> argv) {
  std::ostringstream out, err;
  int rc = headroom::run_cli(argv, out, err);
  return {rc, out.str(), err.str()};
}
int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::string slurp_tree(const fs::path& root) {
  std::string all;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file()) {
      std::ifstream in(it->path(), std::ios::binary);
      all += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
  return all;
}

class HubResolve : public ::testing::Test {
 protected:
  hubstub::Hub hub;
  fs::path tmp;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;

  void set(const char* k, const std::string& v) { save(k), setenv(k, v.c_str(), 1); }
  void unset(const char* k) { save(k), unsetenv(k); }
  void save(const char* k) {
    const char* v = std::getenv(k);
    saved.emplace_back(k, v ? std::optional<std::string>(v) : std::nullopt);
  }
  void SetUp() override {
    static std::atomic<int> n{0};
    tmp = fs::temp_directory_path() / ("headroom-hub-" + std::to_string(getpid()) + "-" + std::to_string(n++));
    fs::create_directories(tmp);
    set("HF_HOME", (tmp / "hf").string());
    set("XDG_CACHE_HOME", (tmp / "xdg").string());
    set("HF_ENDPOINT", hub.endpoint());
    unset("HF_HUB_OFFLINE");
    unset("HF_TOKEN");
    unset("HF_HUB_CACHE");
    hub.add("acme/fourteen-b", synth_repo(kBase, 4, kSha));
  }
  void TearDown() override {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
    fs::remove_all(tmp);
  }
};

}  // namespace

TEST_F(HubResolve, ModelFromTheHubIsExactFromHeadersOnly) {
  auto base = headroom::load_model(kBase);
  CliRun r = cli({"model", "acme/fourteen-b", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["params_total"].get<int64_t>(), base->params_total);
  EXPECT_EQ(j["checkpoint_bytes"].get<int64_t>(), base->checkpoint_bytes);
  EXPECT_GT(base->checkpoint_bytes, int64_t{20} * 1000 * 1000 * 1000);  // a multi-GB checkpoint
  EXPECT_TRUE(j["from_safetensors"].get<bool>());
  EXPECT_EQ(j["hf_id"], "acme/fourteen-b");
  ASSERT_FALSE(j["notes"].empty());
  EXPECT_NE(j["notes"][0].get<std::string>().find("model from the Hugging Face Hub"), std::string::npos);
  EXPECT_NE(j["notes"][0].get<std::string>().find(kSha), std::string::npos);
  // Headers only: a few hundred KiB at most, every store request ranged, two per shard.
  EXPECT_LT(hub.bytes_sent(), 300 * 1024);
  int store = 0;
  for (const auto& h : hub.hits())
    if (h.server == "store") {
      ++store;
      EXPECT_FALSE(h.range.empty()) << h.path;
    }
  EXPECT_EQ(store, 8);
}

TEST_F(HubResolve, SecondRunIsServedFromTheCache) {
  CliRun first = cli({"model", "acme/fourteen-b", "--json"});
  ASSERT_EQ(first.rc, 0) << first.err;
  hub.clear();
  set("HF_HUB_OFFLINE", "1");
  CliRun off = cli({"model", "acme/fourteen-b", "--json"});
  ASSERT_EQ(off.rc, 0) << off.err;
  EXPECT_TRUE(hub.hits().empty());
  json a = json::parse(first.out), b = json::parse(off.out);
  EXPECT_NE(b["notes"][0].get<std::string>().find("headroom's cache"), std::string::npos);
  a.erase("notes"), b.erase("notes");
  EXPECT_EQ(a, b);
  // --offline does the same; online, the branch is re-checked with one request.
  unset("HF_HUB_OFFLINE");
  EXPECT_EQ(cli({"model", "acme/fourteen-b", "--offline"}).rc, 0);
  EXPECT_TRUE(hub.hits().empty());
  EXPECT_EQ(cli({"model", "acme/fourteen-b"}).rc, 0);
  ASSERT_EQ(hub.hits().size(), 1u);
  EXPECT_NE(hub.hits()[0].path.find("/api/models/acme/fourteen-b/revision/main"), std::string::npos);
  // A call that names the model several times (compare: once per engine) asks once.
  hub.clear();
  CliRun both = cli({"plan", "--engine", "sglang,vllm", "--model", "acme/fourteen-b", "--gpu", "h100"});
  EXPECT_TRUE(both.rc == 0 || both.rc == 1) << both.err;
  EXPECT_EQ(hub.hits().size(), 1u);
  // A pinned commit needs no request at all.
  hub.clear();
  EXPECT_EQ(cli({"model", std::string("acme/fourteen-b@") + kSha}).rc, 0);
  EXPECT_TRUE(hub.hits().empty());
}

TEST_F(HubResolve, OfflineWithAColdCacheSendsNothingAndExits2) {
  CliRun r = cli({"model", "acme/fourteen-b", "--offline"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("offline"), std::string::npos) << r.err;
  EXPECT_TRUE(hub.hits().empty());
  set("HF_HUB_OFFLINE", "1");
  EXPECT_EQ(cli({"plan", "--model", "acme/fourteen-b", "--gpu", "h100"}).rc, 2);
  EXPECT_TRUE(hub.hits().empty());
}

TEST_F(HubResolve, PlanWorksAndSaysWhereTheModelCameFrom) {
  CliRun r = cli({"plan", "--engine", "vllm", "--model", "acme/fourteen-b", "--gpu", "h100", "--json"});
  ASSERT_TRUE(r.rc == 0 || r.rc == 1) << r.err;
  json j = json::parse(r.out);
  ASSERT_FALSE(j["notes"].empty());
  EXPECT_NE(j["notes"][0].get<std::string>().find("model from the Hugging Face Hub"), std::string::npos);
  EXPECT_GT(j["kv_tokens"].get<int64_t>(), 0);
}

TEST_F(HubResolve, CatalogIdsNeverAskTheHub) {
  CliRun r = cli({"model", kBase, "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(hub.hits().empty());
  const json j = json::parse(r.out);  // kept alive: a range-for over a temporary's member dangles
  for (const auto& n : j["notes"]) EXPECT_EQ(n.get<std::string>().find("model from"), std::string::npos);
}

TEST_F(HubResolve, GatedRepoNeedsTheToken) {
  auto repo = synth_repo(kBase, 2, kSha2);
  repo.gated = true;
  hub.add("acme/gated", repo);
  CliRun no = cli({"model", "acme/gated"});
  EXPECT_EQ(no.rc, 2);
  EXPECT_EQ(lines(no.err), 1) << no.err;
  EXPECT_NE(no.err.find("HF_TOKEN"), std::string::npos) << no.err;
  EXPECT_NE(no.err.find("request access"), std::string::npos) << no.err;

  set("HF_TOKEN", "hf_wrong");
  CliRun wrong = cli({"model", "acme/gated"});
  EXPECT_EQ(wrong.rc, 2);
  EXPECT_EQ(lines(wrong.err), 1) << wrong.err;
  EXPECT_NE(wrong.err.find("refused"), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.err.find("hf_wrong"), std::string::npos);

  hub.clear();
  set("HF_TOKEN", hub.token);
  CliRun ok = cli({"model", "acme/gated", "--json"});
  ASSERT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(ok.out.find(hub.token), std::string::npos);
  EXPECT_EQ(ok.err.find(hub.token), std::string::npos);
  // The token goes to the endpoint only, never to the file store, and is never cached.
  for (const auto& h : hub.hits()) {
    if (h.server == "hub") EXPECT_EQ(h.auth, "Bearer " + hub.token) << h.path;
    else EXPECT_EQ(h.auth, "") << h.path;
  }
  EXPECT_EQ(slurp_tree(tmp / "xdg").find(hub.token), std::string::npos);

  // The token file huggingface_hub writes works too.
  unset("HF_TOKEN");
  fs::create_directories(tmp / "hf");
  std::ofstream(tmp / "hf" / "token") << hub.token << "\n";
  fs::remove_all(tmp / "xdg");
  EXPECT_EQ(cli({"model", "acme/gated"}).rc, 0);
}

TEST_F(HubResolve, UnknownRepoRevisionAndUnreachableHubAreOneLine) {
  CliRun repo = cli({"model", "acme/no-such-model"});
  EXPECT_EQ(repo.rc, 2);
  EXPECT_EQ(lines(repo.err), 1) << repo.err;
  EXPECT_NE(repo.err.find("RepoNotFound"), std::string::npos) << repo.err;

  CliRun rev = cli({"model", "acme/fourteen-b@no-such-branch"});
  EXPECT_EQ(rev.rc, 2);
  EXPECT_EQ(lines(rev.err), 1) << rev.err;
  EXPECT_NE(rev.err.find("revision"), std::string::npos) << rev.err;

  set("HF_ENDPOINT", "http://127.0.0.1:9");
  CliRun down = cli({"model", "acme/fourteen-b"});
  EXPECT_EQ(down.rc, 2);
  EXPECT_EQ(lines(down.err), 1) << down.err;
  EXPECT_NE(down.err.find("--offline"), std::string::npos) << down.err;
  EXPECT_NE(down.err.find("local model folder"), std::string::npos) << down.err;
}

TEST_F(HubResolve, SlowHubTimesOut) {
  hub.stall_ms = 2500;
  set("HF_HUB_DOWNLOAD_TIMEOUT", "1");
  CliRun r = cli({"model", "acme/fourteen-b"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
  unset("HF_HUB_DOWNLOAD_TIMEOUT");
}

TEST_F(HubResolve, HostileOrMalformedShardHeadersAreRefused) {
  auto hostile = synth_repo(kBase, 2, kSha2);
  auto& f = hostile.files["model-00001-of-00002.safetensors"];
  f.prefix = hubstub::le64(uint64_t{1} << 40) + f.prefix.substr(8);
  hub.add("acme/hostile", hostile);
  CliRun r = cli({"model", "acme/hostile"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("exceeds"), std::string::npos) << r.err;
  EXPECT_LT(hub.bytes_sent(), 300 * 1024);

  auto big = synth_repo(kBase, 2, kSha2);
  big.files["model-00002-of-00002.safetensors"].size = 100;  // header longer than its file
  hub.add("acme/short", big);
  r = cli({"model", "acme/short"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("larger than the file"), std::string::npos) << r.err;

  auto bad = synth_repo(kBase, 2, kSha2);
  auto& g = bad.files["model-00002-of-00002.safetensors"];
  g.prefix[8] = '[';  // not a JSON object any more
  hub.add("acme/malformed", bad);
  r = cli({"model", "acme/malformed"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("model-00002-of-00002.safetensors"), std::string::npos) << r.err;
  // Refused, so never cached: offline it is not found.
  EXPECT_EQ(cli({"model", "acme/malformed", "--offline"}).rc, 2);

  // An index whose weight_map names a path: the name would become a cache file
  // (headers/<name>.header), so anything but a plain top-level file name is refused.
  auto traversal = synth_repo(kBase, 2, kSha2);
  json index = json::parse(traversal.files["model.safetensors.index.json"].prefix);
  index["weight_map"]["lm_head.weight"] = "../../../../tmp/headroom-evil";
  const std::string itext = index.dump();
  traversal.files["model.safetensors.index.json"] = {itext, static_cast<int64_t>(itext.size()), false};
  hub.add("acme/traversal", traversal);
  r = cli({"model", "acme/traversal"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("not a plain file name"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists("/tmp/headroom-evil.header"));
}

TEST_F(HubResolve, CorruptCacheEntryIsRefetchedNeverTrusted) {
  ASSERT_EQ(cli({"model", "acme/fourteen-b"}).rc, 0);
  const fs::path hdr = tmp / "xdg" / "headroom" / "hub" / "models--acme--fourteen-b" / "snapshots" / kSha / "headers" /
                       "model-00001-of-00004.safetensors.header";
  ASSERT_TRUE(fs::exists(hdr));
  {
    std::fstream f(hdr, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('#');
  }
  CliRun off = cli({"model", "acme/fourteen-b", "--offline"});
  EXPECT_EQ(off.rc, 2);
  EXPECT_NE(off.err.find("corrupt"), std::string::npos) << off.err;
  hub.clear();
  CliRun on = cli({"model", "acme/fourteen-b", "--json"});
  ASSERT_EQ(on.rc, 0) << on.err;
  EXPECT_GT(hub.hits().size(), 2u);  // fetched again
  EXPECT_EQ(json::parse(on.out)["params_total"].get<int64_t>(), headroom::load_model(kBase)->params_total);
  EXPECT_EQ(cli({"model", "acme/fourteen-b", "--offline"}).rc, 0);  // and repaired
}

TEST_F(HubResolve, HuggingFaceCacheIsReadByIdWithoutTheNetwork) {
  set("HF_ENDPOINT", "http://127.0.0.1:9");  // unreachable
  const fs::path repo = tmp / "hf" / "hub" / "models--acme--cached-14b";
  const fs::path snap = repo / "snapshots" / kSha2;
  fs::create_directories(snap);
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs" / "main") << kSha2;
  std::ofstream(repo / "refs" / "dev") << kSha2;
  // As huggingface_hub lays it out: the files in blobs/, the snapshot's entries symlinks to them.
  fs::create_directories(repo / "blobs");
  auto src = synth_repo(kBase, 1, kSha2);
  std::ofstream(repo / "blobs" / "c0f1") << src.files["config.json"].prefix;
  fs::create_symlink("../../blobs/c0f1", snap / "config.json");
  {
    auto& sh = src.files["model-00001-of-00001.safetensors"];
    std::ofstream out(repo / "blobs" / "5afe", std::ios::binary);
    out << sh.prefix;
    out.seekp(sh.size - 1);
    out.put('\0');  // a sparse file of the full size
  }
  fs::create_symlink("../../blobs/5afe", snap / "model-00001-of-00001.safetensors");
  auto base = headroom::load_model(kBase);
  for (const std::string& id : std::vector<std::string>{"acme/cached-14b", "acme/cached-14b@dev", std::string("acme/cached-14b@") + kSha2}) {
    CliRun r = cli({"model", id, "--json"});
    ASSERT_EQ(r.rc, 0) << id << ": " << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["params_total"].get<int64_t>(), base->params_total) << id;
    EXPECT_EQ(j["checkpoint_bytes"].get<int64_t>(), base->checkpoint_bytes) << id;
    EXPECT_NE(j["notes"][0].get<std::string>().find("model from the Hugging Face cache"), std::string::npos) << id;
  }
  CliRun plan = cli({"plan", "--model", "acme/cached-14b", "--gpu", "h100", "--offline"});
  EXPECT_TRUE(plan.rc == 0 || plan.rc == 1) << plan.err;
  EXPECT_TRUE(hub.hits().empty());
  // HF_HUB_CACHE names the cache root directly.
  set("HF_HUB_CACHE", (tmp / "hf" / "hub").string());
  set("HF_HOME", (tmp / "elsewhere").string());
  EXPECT_EQ(cli({"model", "acme/cached-14b"}).rc, 0);
}

// doctor reads the model id the log prints (SGLang's model_path) through the same lookup.
TEST_F(HubResolve, DoctorFindsTheLogsModelInTheHuggingFaceCache) {
  set("HF_HUB_OFFLINE", "1");
  const fs::path repo = tmp / "hf" / "hub" / "models--acme--logged";
  fs::create_directories(repo / "snapshots" / kSha2);
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs" / "main") << kSha2;
  std::ofstream(repo / "snapshots" / kSha2 / "config.json") << *headroom::embedded_file("models/Qwen/Qwen3-8B/config.json");
  std::ifstream seed(std::string(HEADROOM_TEST_DATA) + "/seed/seed-crash.log");
  std::ofstream(tmp / "crash.log") << "[2025-06-01 10:00:00] server_args=ServerArgs(model_path='acme/logged', tp_size=1, mem_fraction_static=0.95)\n"
                                   << seed.rdbuf();
  CliRun r = cli({"doctor", (tmp / "crash.log").string(), "--gpu", "h100", "--json"});
  ASSERT_TRUE(r.rc == 0 || r.rc == 1) << r.err;  // 1: the log shows the deployment failing
  json j = json::parse(r.out);
  for (const auto& g : j["gaps"]) EXPECT_EQ(g.get<std::string>().find("model unknown"), std::string::npos) << g;
  ASSERT_TRUE(j["forecast_after_fix"].is_object());
  ASSERT_FALSE(j["forecast_after_fix"]["notes"].empty());
  EXPECT_NE(j["forecast_after_fix"]["notes"][0].get<std::string>().find("model from the Hugging Face cache"), std::string::npos);
  EXPECT_TRUE(hub.hits().empty());
}

// Many shards over a slow link: read a few at a time, with a progress line on stderr, and exact.
TEST_F(HubResolve, ManyShardsOverASlowLinkShowProgress) {
  hub.add("acme/forty-shards", synth_repo(kBase, 40, kSha2));
  hub.store_delay_ms = 100;  // 2 requests per shard: ~2 s at 4 at a time, 8 s one by one
  const std::string err_path = (tmp / "err.txt").string(), out_path = (tmp / "out.json").string();
  const std::string cmd = std::string(HEADROOM_BINARY) + " model acme/forty-shards --json >" + out_path + " 2>" + err_path;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ifstream eo(err_path), oo(out_path);
  const std::string err((std::istreambuf_iterator<char>(eo)), std::istreambuf_iterator<char>());
  const json j = json::parse(oo);
  EXPECT_EQ(j["params_total"].get<int64_t>(), headroom::load_model(kBase)->params_total);
  EXPECT_EQ(j["checkpoint_bytes"].get<int64_t>(), headroom::load_model(kBase)->checkpoint_bytes);
  EXPECT_NE(err.find("safetensors headers from the Hub"), std::string::npos) << err;
  EXPECT_LT(secs, 80 * 0.100 * 0.75);  // faster than one request at a time
}

// The binary itself, as a script runs it: the environment reaches it, errors are one line on stderr.
TEST_F(HubResolve, CommandLineBinary) {
  auto run = [](const std::string& args, std::string* err) {
    const std::string err_path = fs::temp_directory_path() / ("headroom-hub-err-" + std::to_string(getpid()));
    const std::string cmd = std::string(HEADROOM_BINARY) + " " + args + " >/dev/null 2>" + err_path;
    int st = std::system(cmd.c_str());
    std::ifstream in(err_path);
    *err = std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fs::remove(err_path);
    return WEXITSTATUS(st);
  };
  std::string err;
  EXPECT_EQ(run("model acme/fourteen-b --offline", &err), 2);
  EXPECT_EQ(lines(err), 1) << err;
  EXPECT_TRUE(hub.hits().empty());
  EXPECT_EQ(run("model acme/fourteen-b --json", &err), 0) << err;
  EXPECT_FALSE(hub.hits().empty());
  hub.clear();
  set("HF_HUB_OFFLINE", "1");
  EXPECT_EQ(run("plan --model acme/fourteen-b --gpu h100", &err), 0) << err;
  EXPECT_TRUE(hub.hits().empty());
}

#endif  // HEADROOM_HAVE_HTTPLIB
