// Model-id parsing, cache roots and offline mode as huggingface_hub reads them (hub_env.h,
// repo_ref.h), atomic cache writes; and, for every test of this binary (and the headroom
// processes it starts), a sealed environment: offline, caches in no real folder, no token, the
// endpoint a closed local port, so no test can reach the internet or read the user's caches.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "model/headroom_cache.h"
#include "model/hub_env.h"
#include "model/repo_ref.h"

namespace fs = std::filesystem;
using namespace headroom::hub;

namespace {

const bool kSealed = [] {
  setenv("HF_HUB_OFFLINE", "1", 1);
  setenv("HF_ENDPOINT", "http://127.0.0.1:9", 1);  // discard port: nothing listens
  setenv("HF_HOME", "/nonexistent/headroom-tests/hf", 1);
  setenv("XDG_CACHE_HOME", "/nonexistent/headroom-tests/xdg", 1);
  unsetenv("HF_HUB_CACHE");
  unsetenv("HUGGINGFACE_HUB_CACHE");
  unsetenv("HF_TOKEN");
  unsetenv("HF_TOKEN_PATH");
  return true;
}();

// Sets variables for one test and puts the old values back.
class EnvGuard {
 public:
  void set(const char* k, const std::string& v) { save(k), setenv(k, v.c_str(), 1); }
  void unset(const char* k) { save(k), unsetenv(k); }
  ~EnvGuard() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
  }

 private:
  void save(const char* k) {
    const char* v = std::getenv(k);
    saved_.emplace_back(k, v ? std::optional<std::string>(v) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace

TEST(HubEnv, TestsAreSealedOffline) {
  EXPECT_TRUE(kSealed);
  EXPECT_TRUE(offline());
  EXPECT_FALSE(token().has_value());
  EXPECT_EQ(endpoint(), "http://127.0.0.1:9");
}

TEST(HubEnv, CacheRootsInHuggingfaceHubOrder) {
  EnvGuard g;
  g.set("HOME", "/h");
  g.unset("HF_HOME");
  g.unset("XDG_CACHE_HOME");
  EXPECT_EQ(hf_hub_cache_dir(), "/h/.cache/huggingface/hub");
  EXPECT_EQ(headroom_cache_dir(), "/h/.cache/headroom");
  g.set("XDG_CACHE_HOME", "/x");
  EXPECT_EQ(hf_hub_cache_dir(), "/x/huggingface/hub");
  EXPECT_EQ(headroom_cache_dir(), "/x/headroom");
  g.set("HF_HOME", "/hf");
  EXPECT_EQ(hf_hub_cache_dir(), "/hf/hub");
  g.set("HF_HUB_CACHE", "/direct");
  EXPECT_EQ(hf_hub_cache_dir(), "/direct");
}

TEST(HubEnv, EndpointTokenAndOffline) {
  EnvGuard g;
  g.unset("HF_ENDPOINT");
  EXPECT_EQ(endpoint(), "https://huggingface.co");
  g.set("HF_ENDPOINT", "http://mirror.local:8080/");
  EXPECT_EQ(endpoint(), "http://mirror.local:8080");

  const fs::path dir = fs::temp_directory_path() / ("headroom-env-" + std::to_string(getpid()));
  fs::create_directories(dir);
  g.set("HF_HOME", dir.string());
  EXPECT_FALSE(token().has_value());
  std::ofstream(dir / "token") << "hf_fromfile\n";
  EXPECT_EQ(token().value_or(""), "hf_fromfile");
  EXPECT_EQ(token_origin(), "the token file " + (dir / "token").string());
  g.set("HF_TOKEN", " hf_fromenv ");
  EXPECT_EQ(token().value_or(""), "hf_fromenv");
  EXPECT_EQ(token_origin(), "HF_TOKEN");
  fs::remove_all(dir);

  for (const char* on : {"1", "ON", "yes", "True"}) {
    g.set("HF_HUB_OFFLINE", on);
    EXPECT_TRUE(offline()) << on;
  }
  g.set("HF_HUB_OFFLINE", "0");
  EXPECT_FALSE(offline());
  {
    OfflineScope s(true);
    EXPECT_TRUE(offline());
  }
  EXPECT_FALSE(offline());
}

TEST(RepoRef, ParsesIdsAndRevisions) {
  auto r = parse_repo_ref("Qwen/Qwen3-8B");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->repo, "Qwen/Qwen3-8B");
  EXPECT_EQ(r->revision, "main");
  EXPECT_FALSE(r->revision_given);
  r = parse_repo_ref("org/name@refs/pr/3");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->revision, "refs/pr/3");
  EXPECT_TRUE(r->revision_given);
  EXPECT_TRUE(parse_repo_ref("gpt2"));
  for (const char* bad : {"", "/abs/path", "./rel", "a/b/c", "org/na me", "org/-x", "org/x--y", "org/..", "org/name@", "org/name@../x", "x@a b"})
    EXPECT_FALSE(parse_repo_ref(bad)) << bad;
  EXPECT_TRUE(is_commit_sha("0123456789abcdef0123456789abcdef01234567"));
  EXPECT_FALSE(is_commit_sha("0123456789ABCDEF0123456789abcdef01234567"));
  EXPECT_EQ(repo_folder_name("Org/Name"), "models--Org--Name");
  EXPECT_EQ(url_quote("refs/pr/1"), "refs%2Fpr%2F1");
}

TEST(HeadroomCache, AtomicWriteLeavesNoTempFile) {
  const fs::path dir = fs::temp_directory_path() / ("headroom-atomic-" + std::to_string(getpid()));
  EXPECT_EQ(atomic_write((dir / "a" / "f.json").string(), "one"), "");
  EXPECT_EQ(atomic_write((dir / "a" / "f.json").string(), "two"), "");
  std::ifstream in(dir / "a" / "f.json");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(s, "two");
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir / "a")) n += e.is_regular_file();
  EXPECT_EQ(n, 1);
  EXPECT_NE(atomic_write("/proc/headroom-no/x", "y"), "");
  fs::remove_all(dir);
}
