// Hub client over libcurl (hub_client.h). Endpoints and headers as huggingface_hub uses them:
// hf_api.py model_info (GET /api/models/{repo_id}/revision/{revision}), file_download.py
// hf_hub_url ({endpoint}/{repo_id}/resolve/{revision}/{filename}) and utils/_http.py
// hf_raise_for_status (X-Error-Code: RepoNotFound, GatedRepo, RevisionNotFound, EntryNotFound).
#include "model/hub_client.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <curl/curl.h>
#include <fmt/format.h>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

#include "headroom/error.h"
#include "model/hub_env.h"
#include "model/model_internal.h"

namespace headroom::hub {

struct HubClient::Response {
  long status = 0;
  CURLcode code = CURLE_OK;
  std::string curl_error;
  std::string body;
  std::string error_code, error_message;  // X-Error-Code / X-Error-Message of the last response
  int64_t content_range_total = -1;       // "Content-Range: bytes a-b/TOTAL"
  int64_t content_length = -1;
  bool capped = false;                    // the body passed `cap` and the transfer was stopped
};

namespace {

constexpr int kParallelShards = 4;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Sink {
  HubClient::Response* r;
  int64_t cap;
  std::atomic<int64_t>* bytes;
};

size_t on_body(char* p, size_t size, size_t n, void* ud) {
  auto* s = static_cast<Sink*>(ud);
  const size_t len = size * n;
  s->bytes->fetch_add(static_cast<int64_t>(len));
  if (static_cast<int64_t>(s->r->body.size() + len) > s->cap) {
    s->r->body.append(p, static_cast<size_t>(s->cap - static_cast<int64_t>(s->r->body.size())));
    s->r->capped = true;
    return 0;  // stops the transfer: never more than asked for
  }
  s->r->body.append(p, len);
  return len;
}

std::string lower_ascii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

size_t on_header(char* p, size_t size, size_t n, void* ud) {
  auto* r = static_cast<HubClient::Response*>(ud);
  const size_t len = size * n;
  std::string line(p, len);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect): forget the last one's headers
    r->error_code.clear();
    r->error_message.clear();
    r->content_range_total = r->content_length = -1;
    return len;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return len;
  std::string key = lower_ascii(line.substr(0, colon));
  std::string val = line.substr(colon + 1);
  while (!val.empty() && val.front() == ' ') val.erase(0, 1);
  if (key == "x-error-code") r->error_code = val.substr(0, 100);
  else if (key == "x-error-message") r->error_message = val.substr(0, 300);
  else if (key == "content-range") {
    auto slash = val.rfind('/');
    if (slash != std::string::npos) r->content_range_total = std::strtoll(val.c_str() + slash + 1, nullptr, 10);
  } else if (key == "content-length") {
    r->content_length = std::strtoll(val.c_str(), nullptr, 10);
  }
  return len;
}

std::string offline_hint() {
  return "--offline (or HF_HUB_OFFLINE=1) answers from the Hugging Face cache and headroom's cache, and a local model folder or config.json needs no network";
}

uint64_t le64(const std::string& s) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(s[static_cast<size_t>(i)]);
  return n;
}

class Easy {
 public:
  Easy() : h_(curl_easy_init()) {}
  ~Easy() { if (h_) curl_easy_cleanup(h_); }
  Easy(const Easy&) = delete;
  Easy& operator=(const Easy&) = delete;
  CURL* get() const { return h_; }

 private:
  CURL* h_;
};

}  // namespace

HubClient::HubClient() : endpoint_(hub::endpoint()), token_(hub::token()) {
  global_init();
  if (const char* t = std::getenv("HF_HUB_DOWNLOAD_TIMEOUT")) {
    long v = std::strtol(t, nullptr, 10);
    if (v > 0 && v < 3600) timeout_s_ = v;
  }
}

HubClient::Response HubClient::get(const std::string& url, const std::string& what, std::optional<std::pair<int64_t, int64_t>> range,
                                   int64_t cap, void* handle) {
  std::optional<Easy> own;  // a handle of its own unless the caller lends one (a shard worker's)
  if (!handle) own.emplace();
  CURL* h = handle ? static_cast<CURL*>(handle) : own->get();
  if (!h) throw std::runtime_error("curl_easy_init failed");
  curl_easy_reset(h);
  Response r;
  Sink sink{&r, cap, &bytes_};
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
  curl_easy_setopt(h, CURLOPT_USERAGENT, "headroom (+libcurl)");
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, timeout_s_);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, timeout_s_);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &r);
  std::string range_text;
  if (range) {
    range_text = fmt::format("{}-{}", range->first, range->second);
    curl_easy_setopt(h, CURLOPT_RANGE, range_text.c_str());
  }
  if (token_) {  // curl's own bearer auth: not sent on to another host or port after a redirect
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, token_->c_str());
  }
  ++requests_;
  r.code = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  if (token_) curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, "");  // the handle keeps no copy of the token
  if (r.code == CURLE_WRITE_ERROR && r.capped) r.code = CURLE_OK;
  if (r.code != CURLE_OK) {
    r.curl_error = errbuf[0] ? errbuf : curl_easy_strerror(r.code);
    const bool timeout = r.code == CURLE_OPERATION_TIMEDOUT;
    fail_input(endpoint_, "network",
               fmt::format("cannot reach the Hub for {} ({}{}); {}", what, timeout ? "timed out: " : "", r.curl_error, offline_hint()));
  }
  return r;
}

void HubClient::fail_status(const Response& r, const std::string& what, const std::string& field) {
  const std::string& ec = r.error_code;
  if (ec == "RepoNotFound")
    fail_input(what, "model", fmt::format("no such model repository on the Hub ({}, HTTP {}, X-Error-Code RepoNotFound){}", endpoint_, r.status,
                                          token_ ? "" : "; a private repository needs HF_TOKEN"));
  if (ec == "RevisionNotFound") fail_input(what, "revision", fmt::format("no such revision on the Hub ({}, HTTP {})", endpoint_, r.status));
  if (ec == "EntryNotFound") fail_input(what, field, fmt::format("no such file in the repository ({}, HTTP {})", endpoint_, r.status));
  if (ec == "GatedRepo" || r.status == 401 || r.status == 403) {
    const std::string page = fmt::format("{}/{}", endpoint_, what.substr(0, what.find('@')));
    if (!token_)
      fail_input(what, "access", fmt::format("gated or private repository (HTTP {}): request access on {} and set HF_TOKEN (or the token file "
                                             "huggingface-cli login writes) to a token of an account that has it", r.status, page));
    fail_input(what, "access", fmt::format("the token from {} was refused (HTTP {}{}): check it, and that its account was granted access on {}",
                                           token_origin(), r.status, ec.empty() ? "" : ", X-Error-Code " + ec, page));
  }
  if (r.status == 404) fail_input(what, field, fmt::format("not found on the Hub ({}, HTTP 404{})", endpoint_, ec.empty() ? "" : ", X-Error-Code " + ec));
  if (r.status == 416) fail_input(what, field, "the Hub refused the byte range (HTTP 416): the file is shorter than its header says");
  fail_input(what, field, fmt::format("the Hub answered HTTP {}{}", r.status, ec.empty() ? "" : " (X-Error-Code " + ec + ")"));
}

RepoInfo HubClient::revision_info(const RepoRef& ref) {
  const std::string what = ref.repo + "@" + ref.revision;
  const std::string url = fmt::format("{}/api/models/{}/revision/{}", endpoint_, ref.repo, url_quote(ref.revision));
  Response r = get(url, what, std::nullopt, 32 * 1000 * 1000, nullptr);
  if (r.status != 200) fail_status(r, what, "revision");
  if (r.capped) fail_input(what, "api", "the Hub's model info is larger than 32 MB");
  return parse_revision_info(r.body, url);
}

RepoInfo parse_revision_info(const std::string& body, const std::string& url) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail_input(url, "api", "the Hub's model info is not a JSON object");
  RepoInfo info;
  if (auto s = j.find("sha"); s != j.end() && s->is_string()) info.sha = s->get<std::string>();
  if (!is_commit_sha(info.sha)) fail_input(url, "sha", "the Hub's model info carries no 40-hex commit sha");
  if (auto sib = j.find("siblings"); sib != j.end() && sib->is_array())
    for (const auto& e : *sib)
      if (e.is_object() && e.contains("rfilename") && e["rfilename"].is_string()) info.files.push_back(e["rfilename"].get<std::string>());
  return info;
}

std::optional<std::string> HubClient::fetch_file(const std::string& repo, const std::string& sha, const std::string& file, int64_t cap) {
  const std::string what = repo + "@" + sha;
  const std::string url = fmt::format("{}/{}/resolve/{}/{}", endpoint_, repo, sha, url_quote(file, "/"));
  Response r = get(url, what + " " + file, std::nullopt, cap + 1, nullptr);
  if (r.status == 404 && (r.error_code == "EntryNotFound" || r.error_code.empty())) return std::nullopt;
  if (r.status != 200) fail_status(r, what, file);
  if (r.capped) fail_input(what, file, fmt::format("larger than the {} byte cap for a configuration file", cap));
  return std::move(r.body);
}

HubClient::Range HubClient::fetch_range(const std::string& repo, const std::string& sha, const std::string& file, int64_t offset,
                                        int64_t length) {
  const std::string url = fmt::format("{}/{}/resolve/{}/{}", endpoint_, repo, sha, url_quote(file, "/"));
  const std::string source = fmt::format("{}@{} {}", repo, sha.substr(0, 12), file);
  if (offset < 0 || length <= 0) fail_input(source, "range", fmt::format("bytes {}+{} is not a range", offset, length));
  // A server that ignores Range sends the file from its start: read up to the range's end, then cut.
  Response r = get(url, source, std::pair<int64_t, int64_t>{offset, offset + length - 1}, offset + length, nullptr);
  if (r.status != 206 && r.status != 200) fail_status(r, repo + "@" + sha, file);
  Range out;
  out.file_size = r.content_range_total >= 0 ? r.content_range_total : (r.status == 200 ? r.content_length : -1);
  if (out.file_size < 0) fail_input(source, "header", "the Hub gave no file size (Content-Range) for the range request");
  if (r.status == 200) r.body = r.body.size() > static_cast<size_t>(offset) ? r.body.substr(static_cast<size_t>(offset)) : std::string();
  if (r.body.size() > static_cast<size_t>(length)) r.body.resize(static_cast<size_t>(length));
  out.bytes = std::move(r.body);
  return out;
}

ShardPrefix HubClient::fetch_one_header(const std::string& repo, const std::string& sha, const std::string& name, void* handle) {
  const std::string url = fmt::format("{}/{}/resolve/{}/{}", endpoint_, repo, sha, url_quote(name, "/"));
  const std::string source = fmt::format("{}@{} {}", repo, sha.substr(0, 12), name);
  Response a = get(url, source, std::pair<int64_t, int64_t>{0, 7}, 8, handle);
  if (a.status != 206 && a.status != 200) fail_status(a, repo + "@" + sha, name);
  ShardPrefix p;
  p.name = name;
  p.file_size = a.content_range_total >= 0 ? a.content_range_total : a.content_length;
  if (p.file_size < 0) fail_input(source, "header", "the Hub gave no file size (Content-Range) for the range request");
  if (a.body.size() < 8 || p.file_size < 8)
    model_detail::parse_safetensors_header(a.body, std::min<int64_t>(p.file_size, static_cast<int64_t>(a.body.size())), source);  // throws "too short"
  const uint64_t n = le64(a.body);
  if (n > static_cast<uint64_t>(model_detail::kMaxSafetensorsHeader) || static_cast<int64_t>(n) > p.file_size - 8)
    model_detail::parse_safetensors_header(a.body.substr(0, 8), p.file_size, source);  // throws the cap / file-size line
  p.prefix = a.body.substr(0, 8);
  if (n == 0) return p;
  Response b = get(url, source, std::pair<int64_t, int64_t>{8, 8 + static_cast<int64_t>(n) - 1}, static_cast<int64_t>(n) + (a.status == 200 ? 8 : 0), handle);
  if (b.status != 206 && b.status != 200) fail_status(b, repo + "@" + sha, name);
  std::string body = b.status == 200 ? (b.body.size() >= 8 ? b.body.substr(8) : std::string()) : std::move(b.body);  // a server that ignores Range
  if (body.size() != n) fail_input(source, "header", fmt::format("the Hub sent {} of the header's {} bytes", body.size(), n));
  p.prefix += body;
  return p;
}

std::vector<ShardPrefix> HubClient::fetch_shard_headers(const std::string& repo, const std::string& sha, const std::vector<std::string>& names) {
  std::vector<ShardPrefix> out(names.size());
  std::atomic<size_t> next{0}, done{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::exception_ptr first_error;
  auto worker = [&] {
    Easy easy;  // one connection per worker, kept alive across its shards
    while (!stop.load()) {
      size_t i = next.fetch_add(1);
      if (i >= names.size()) break;
      try {
        out[i] = fetch_one_header(repo, sha, names[i], easy.get());
        ++done;
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_error) first_error = std::current_exception();
        stop.store(true);
      }
    }
  };
  const size_t nthreads = std::min<size_t>(kParallelShards, names.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < nthreads; ++t) threads.emplace_back(worker);
  // A progress line on stderr when the headers take more than a moment (DeepSeek-V3: 163 shards).
  const auto start = std::chrono::steady_clock::now();
  bool printed = false;
  const bool tty = isatty(2);
  while (done.load() < names.size() && !stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(1500) && (tty || !printed)) {
      std::fprintf(stderr, "%sheadroom: reading %s's safetensors headers from the Hub: %zu/%zu shards%s", tty ? "\r" : "", repo.c_str(),
                   done.load(), names.size(), tty ? "" : "\n");
      printed = true;
    }
  }
  for (auto& t : threads) t.join();
  if (printed && tty) std::fprintf(stderr, "\n");
  if (first_error) std::rethrow_exception(first_error);
  return out;
}

}  // namespace headroom::hub
