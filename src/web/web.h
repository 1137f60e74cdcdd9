// The web front end of `headroom serve` (issue 7): the JSON API over run_cli(), the embedded
// page, and the HTTP server that ties them together. The API answers are the CLI's own JSON,
// because each request is turned back into the CLI's argument list.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace headroom::web {

// Largest request body accepted (crash logs included); larger bodies get 413.
inline constexpr std::size_t kMaxBodyBytes = 4u << 20;
// Limits on the "args" list of a request.
inline constexpr std::size_t kMaxArgs = 256, kMaxArgChars = 1024;

// An HTTP answer, independent of the HTTP library.
struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra response headers
};

// {"error": message} with the given status.
Reply error_reply(int status, std::string_view message);

// A validated API request body: the CLI arguments plus the texts that the server writes to
// private temporary files (an uploaded config.json, a crash log for doctor).
struct ApiRequest {
  std::vector<std::string> args;
  std::optional<std::string> config;           // config.json text (instead of a catalog --model)
  std::optional<std::string> hf_quant_config;  // hf_quant_config.json text, with config
  std::optional<std::string> log;              // doctor only: the log text
  std::optional<std::string> host_state;       // plan/tune: nvidia-smi / rocm-smi text (--host-state)
  std::optional<std::string> host;             // plan/tune: HOST.yaml text (--host: servers sharing GPUs)
  std::optional<std::string> to;               // diff only: the second version, "0.10.2" or "vllm@0.10.2" (--to)
};

// Parses and checks a request body for `verb` ("plan", "tune", "doctor", "diff"; diff takes the
// second version as "to" or as --to in args, exactly once). Throws InputError
// (source "request") for bad JSON, unknown fields, wrong types, over-long lists, positional
// arguments, --help/--version, and any value that would make the CLI read a file (only
// catalog model ids are accepted; a config is sent as text).
ApiRequest parse_api_request(std::string_view verb, std::string_view body);

// Catalog model ids embedded in the binary (data/models/<org>/<name>/config.json), sorted.
std::vector<std::string> catalog_model_ids();

// Longest "to" version accepted by /api/diff.
inline constexpr std::size_t kMaxVersionChars = 64;

// POST /api/<verb> (plan, tune, doctor, diff): runs `headroom <verb> <args> --json` in-process and maps the exit code:
// 0/1 -> 200 with the CLI's JSON, 2 -> 400 {"error"}, 3 -> 500 {"error"}.
Reply api_run(std::string_view verb, std::string_view body);
// GET /api/gpus: `headroom gpus --json`. GET /api/models: {"models": [ids]}.
// GET /api/meta: version and the verbs this build has.
Reply api_gpus();
Reply api_models();
// GET /api/profiles: the host profiles `headroom calibrate` saved on this machine
// ({"profiles": [{name, gpu, engine, engine_version, logs}]}, malformed ones with their error).
Reply api_profiles();
Reply api_meta();

// GET of an embedded page asset ("/" -> web/index.html); nullopt when there is none.
std::optional<Reply> static_asset(std::string_view url_path);

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  std::vector<std::string> allow_hosts;  // --allow-host: more names a request's Host may give
};

// The HTTP server. bind() then serve() (blocks until stop(), callable from another thread).
class HttpServer {
 public:
  explicit HttpServer(ServerOptions opt);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the port. Throws InputError when the address cannot be bound.
  int bind();
  void serve();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True for the loopback names the server is meant for: localhost, 127.0.0.1, ::1, [::1].
bool is_loopback_host(std::string_view host);

// The names a request's Host (and a POST's Origin) may give, lower-case: localhost, 127.0.0.1,
// [::1], the bound address when it is not a wildcard, and the --allow-host names.
std::vector<std::string> allowed_host_names(std::string_view bound_host, const std::vector<std::string>& extra);
// Host header "name" or "name:port": the name exactly one of `names`, the port (if any) the
// serving port. "127.evil.example", "127.0.0.1.attacker.example", "localhost:1" are refused.
bool host_allowed(std::string_view host_header, int serving_port, const std::vector<std::string>& names);
// Origin "http://name[:port]" naming this server (an Origin without a port is port 80);
// "null", https and any other site are refused.
bool origin_allowed(std::string_view origin, int serving_port, const std::vector<std::string>& names);

}  // namespace headroom::web
