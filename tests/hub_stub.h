// A stand-in for the Hugging Face Hub on 127.0.0.1 (cpp-httplib), started by the tests: the
// model-info API (/api/models/{id}/revision/{rev}, with the commit sha and file list), /resolve/
// answering small files directly and large ones with a 302 to a separate file store (another
// port) that honours HTTP Range, 401/403 for a gated repo without the right Bearer token, 404
// with the Hub's X-Error-Code, X-Repo-Commit on every file. Shard files are virtual: a
// synthesized safetensors header followed by zeros up to the file's size. Every request is
// recorded (server, path, Range, Authorization) and every body byte sent is counted.
#pragma once
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace hubstub {

struct File {
  std::string prefix;   // the file's first bytes (whole content for small files)
  int64_t size = 0;     // the file's size (prefix + zeros)
  bool lfs = false;     // served through the file store
};

struct Repo {
  std::string sha;                          // 40 hex
  std::map<std::string, std::string> refs;  // branch -> sha (main -> sha by default)
  std::map<std::string, File> files;
  bool gated = false;
};

struct Hit {
  std::string server;  // "hub" | "store"
  std::string path, range, auth;
};

inline std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

class Hub {
 public:
  std::string token = "hf_stubSECRETtoken0123456789";
  int stall_ms = 0;        // the API sleeps this long before answering (timeouts)
  int store_delay_ms = 0;  // the file store sleeps this long before each answer (a slow link)

  Hub() {
    hub_port_ = hub_.bind_to_any_port("127.0.0.1");
    store_port_ = store_.bind_to_any_port("127.0.0.1");
    routes();
    th_hub_ = std::thread([this] { hub_.listen_after_bind(); });
    th_store_ = std::thread([this] { store_.listen_after_bind(); });
    while (!hub_.is_running() || !store_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Hub() {
    hub_.stop();
    store_.stop();
    th_hub_.join();
    th_store_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(hub_port_); }
  void add(const std::string& id, Repo r) {
    std::lock_guard<std::mutex> l(mu_);
    if (!r.refs.count("main")) r.refs["main"] = r.sha;
    repos_[id] = std::move(r);
  }
  std::vector<Hit> hits() const {
    std::lock_guard<std::mutex> l(mu_);
    return hits_;
  }
  void clear() {
    std::lock_guard<std::mutex> l(mu_);
    hits_.clear();
    bytes_ = 0;
  }
  int64_t bytes_sent() const { return bytes_.load(); }

 private:
  void record(const char* server, const httplib::Request& req) {
    std::lock_guard<std::mutex> l(mu_);
    hits_.push_back({server, req.path, req.get_header_value("Range"), req.get_header_value("Authorization")});
  }
  void error(httplib::Response& res, int status, const std::string& code) {
    res.status = status;
    res.set_header("X-Error-Code", code);
    res.set_header("X-Error-Message", code + " (stand-in Hub)");
    res.set_content("{\"error\": \"" + code + "\"}", "application/json");
  }
  // The repo and the commit a revision names, or an error already written to `res`.
  const Repo* find(const std::string& id, const std::string& rev, const httplib::Request& req, httplib::Response& res, std::string* sha) {
    auto it = repos_.find(id);
    if (it == repos_.end()) return error(res, 404, "RepoNotFound"), nullptr;
    const Repo& r = it->second;
    if (r.gated) {
      auto auth = req.get_header_value("Authorization");
      if (auth.empty()) return error(res, 401, "GatedRepo"), nullptr;
      if (auth != "Bearer " + token) return error(res, 403, "GatedRepo"), nullptr;
    }
    if (rev == r.sha) *sha = r.sha;
    else if (auto b = r.refs.find(rev); b != r.refs.end()) *sha = b->second;
    else return error(res, 404, "RevisionNotFound"), nullptr;
    return &r;
  }
  void routes() {
    hub_.Get(R"(/api/models/([^/]+/[^/]+)/revision/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      record("hub", req);
      if (stall_ms) std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms));
      std::lock_guard<std::mutex> l(mu_);
      std::string sha;
      const Repo* r = find(req.matches[1], req.matches[2], req, res, &sha);
      if (!r) return;
      nlohmann::json j = {{"id", std::string(req.matches[1])}, {"sha", sha}, {"siblings", nlohmann::json::array()}};
      for (const auto& [name, f] : r->files) j["siblings"].push_back({{"rfilename", name}});
      std::string body = j.dump();
      bytes_ += static_cast<int64_t>(body.size());
      res.set_content(body, "application/json");
    });
    hub_.Get(R"(/([^/]+/[^/]+)/resolve/([^/]+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      record("hub", req);
      std::lock_guard<std::mutex> l(mu_);
      std::string sha;
      const Repo* r = find(req.matches[1], req.matches[2], req, res, &sha);
      if (!r) return;
      auto f = r->files.find(req.matches[3]);
      if (f == r->files.end()) return error(res, 404, "EntryNotFound");
      res.set_header("X-Repo-Commit", sha);
      if (f->second.lfs) {
        res.status = 302;
        res.set_header("X-Linked-Size", std::to_string(f->second.size));
        res.set_header("Location", "http://127.0.0.1:" + std::to_string(store_port_) + "/store/" + std::string(req.matches[1]) + "/" + sha + "/" +
                                       std::string(req.matches[3]));
        return;
      }
      bytes_ += static_cast<int64_t>(f->second.prefix.size());
      res.set_content(f->second.prefix, "application/octet-stream");
    });
    store_.Get(R"(/store/([^/]+/[^/]+)/([0-9a-f]{40})/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      record("store", req);
      if (store_delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(store_delay_ms));
      std::lock_guard<std::mutex> l(mu_);
      auto it = repos_.find(req.matches[1]);
      if (it == repos_.end()) return error(res, 404, "NoSuchKey");
      auto f = it->second.files.find(req.matches[3]);
      if (f == it->second.files.end()) return error(res, 404, "NoSuchKey");
      const File file = f->second;
      // httplib cuts the provider's content to the request's Range (206 + Content-Range).
      res.set_content_provider(static_cast<size_t>(file.size), "application/octet-stream",
                               [this, file](size_t offset, size_t length, httplib::DataSink& sink) {
                                 length = std::min<size_t>(length, 64 * 1024);  // a part at a time; httplib asks for the rest
                                 std::string chunk(length, '\0');
                                 for (size_t i = 0; i < length && offset + i < file.prefix.size(); ++i) chunk[i] = file.prefix[offset + i];
                                 bytes_ += static_cast<int64_t>(length);
                                 sink.write(chunk.data(), chunk.size());
                                 return true;
                               });
    });
  }

  httplib::Server hub_, store_;
  int hub_port_ = 0, store_port_ = 0;
  std::thread th_hub_, th_store_;
  mutable std::mutex mu_;
  std::map<std::string, Repo> repos_;
  std::vector<Hit> hits_;
  std::atomic<int64_t> bytes_{0};
};

}  // namespace hubstub
