// Environment of the model resolver (hub_env.h): cache roots, Hub endpoint, token, offline mode.
#include "model/hub_env.h"

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace headroom::hub {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::string home_cache() {  // ~/.cache, "" without HOME
  auto home = env("HOME");
  return home ? (fs::path(*home) / ".cache").string() : std::string();
}

std::string hf_home() {
  if (auto h = env("HF_HOME")) return *h;
  if (auto x = env("XDG_CACHE_HOME")) return (fs::path(*x) / "huggingface").string();
  auto c = home_cache();
  return c.empty() ? c : (fs::path(c) / "huggingface").string();
}

std::string token_file() {
  if (auto p = env("HF_TOKEN_PATH")) return *p;
  auto h = hf_home();
  return h.empty() ? h : (fs::path(h) / "token").string();
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::atomic<bool> g_process_offline{false};
thread_local bool t_offline = false;
thread_local bool t_local_paths = true;

}  // namespace

std::string hf_hub_cache_dir() {
  if (auto c = env("HF_HUB_CACHE")) return *c;
  if (auto c = env("HUGGINGFACE_HUB_CACHE")) return *c;  // the older spelling huggingface_hub still reads
  auto h = hf_home();
  return h.empty() ? h : (fs::path(h) / "hub").string();
}

std::string headroom_cache_dir() {
  if (auto x = env("XDG_CACHE_HOME")) return (fs::path(*x) / "headroom").string();
  auto c = home_cache();
  return c.empty() ? c : (fs::path(c) / "headroom").string();
}

std::string endpoint() {
  std::string e = env("HF_ENDPOINT").value_or("https://huggingface.co");
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

std::optional<std::string> token() {
  if (auto t = env("HF_TOKEN")) {
    auto s = trim(*t);
    if (!s.empty()) return s;
  }
  auto f = token_file();
  if (f.empty()) return std::nullopt;
  std::ifstream in(f);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  auto s = trim(ss.str());
  if (s.empty() || s.size() > 4096) return std::nullopt;
  return s;
}

std::string token_origin() {
  if (auto t = env("HF_TOKEN"); t && !trim(*t).empty()) return "HF_TOKEN";
  return "the token file " + token_file();
}

bool offline() {
  if (t_offline || g_process_offline.load()) return true;
  auto v = env("HF_HUB_OFFLINE");
  if (!v) return false;
  std::string s;
  for (char c : *v) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s == "1" || s == "ON" || s == "YES" || s == "TRUE";
}

void set_process_offline(bool on) { g_process_offline.store(on); }

OfflineScope::OfflineScope(bool on) : prev_(t_offline) { t_offline = prev_ || on; }
OfflineScope::~OfflineScope() { t_offline = prev_; }

bool local_paths_allowed() { return t_local_paths; }
LocalPathsScope::LocalPathsScope(bool allowed) : prev_(t_local_paths) { t_local_paths = prev_ && allowed; }
LocalPathsScope::~LocalPathsScope() { t_local_paths = prev_; }

}  // namespace headroom::hub
