// The HTTP side of `headroom serve` (cpp-httplib): routes, body limit (413), wrong methods
// (405), unknown paths (404), a Host check against DNS rebinding when bound to loopback, and
// JSON error bodies. The endpoints themselves are plain functions (api_handlers.cpp).
#include "web/web.h"

#include <algorithm>
#include <array>

#include "headroom/error.h"

#ifdef HEADROOM_HAVE_HTTPLIB
#include <httplib.h>
#endif

namespace headroom::web {

bool is_loopback_host(std::string_view h) {
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  return h == "localhost" || h == "::1" || h.rfind("127.", 0) == 0;
}

#ifdef HEADROOM_HAVE_HTTPLIB

namespace {

struct Route {
  std::string_view path;
  std::string_view method;  // the one method the path answers
};
constexpr std::array<Route, 6> kApiRoutes{{{"/api/plan", "POST"}, {"/api/tune", "POST"}, {"/api/doctor", "POST"},
                                           {"/api/gpus", "GET"}, {"/api/models", "GET"}, {"/api/meta", "GET"}}};

void send(httplib::Response& res, const Reply& r) {
  res.status = r.status;
  for (const auto& [k, v] : r.headers) res.set_header(k.c_str(), v.c_str());
  res.set_content(r.body, r.content_type.c_str());
}

// Host header without its port ("127.0.0.1:8080" -> "127.0.0.1", "[::1]:80" -> "[::1]").
std::string_view host_name(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  auto colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

}  // namespace

struct HttpServer::Impl {
  ServerOptions opt;
  httplib::Server svr;
  int port = 0;
};

HttpServer::HttpServer(ServerOptions opt) : impl_(std::make_unique<Impl>()) {
  impl_->opt = std::move(opt);
  httplib::Server& svr = impl_->svr;
  const bool loopback_only = is_loopback_host(impl_->opt.host);

  svr.set_payload_max_length(kMaxBodyBytes);
  svr.set_read_timeout(10, 0);
  svr.set_write_timeout(10, 0);
  svr.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                           {"Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                            "connect-src 'self'; frame-ancestors 'none'"},
                           {"Referrer-Policy", "no-referrer"}});

  // Before routing: the Host check (a page on another site that rebinds its name to 127.0.0.1
  // must not reach the API) and 405 for known paths asked with the wrong method.
  svr.set_pre_routing_handler([loopback_only](const httplib::Request& req, httplib::Response& res) {
    if (loopback_only && req.has_header("Host") && !is_loopback_host(host_name(req.get_header_value("Host")))) {
      send(res, error_reply(403, "this server answers only requests addressed to the loopback host"));
      return httplib::Server::HandlerResponse::Handled;
    }
    for (const auto& r : kApiRoutes) {
      if (req.path == r.path && req.method != r.method && !(r.method == "GET" && req.method == "HEAD")) {
        send(res, error_reply(405, std::string(r.path) + " accepts " + std::string(r.method) + " only"));
        res.set_header("Allow", std::string(r.method).c_str());
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    if (req.path.rfind("/api/", 0) != 0 && req.method != "GET" && req.method != "HEAD") {
      send(res, error_reply(405, "the page's files accept GET only"));
      res.set_header("Allow", "GET");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  for (std::string_view verb : {"plan", "tune", "doctor"}) {
    std::string v(verb);
    svr.Post("/api/" + v, [v](const httplib::Request& req, httplib::Response& res) {
      if (req.has_header("Content-Type")) {
        std::string ct = req.get_header_value("Content-Type");
        if (ct.rfind("application/json", 0) != 0) {
          send(res, error_reply(415, "send the body as Content-Type: application/json"));
          return;
        }
      } else {
        send(res, error_reply(415, "send the body as Content-Type: application/json"));
        return;
      }
      send(res, api_run(v, req.body));
    });
  }
  svr.Get("/api/gpus", [](const httplib::Request&, httplib::Response& res) { send(res, api_gpus()); });
  svr.Get("/api/models", [](const httplib::Request&, httplib::Response& res) { send(res, api_models()); });
  svr.Get("/api/meta", [](const httplib::Request&, httplib::Response& res) { send(res, api_meta()); });
  svr.Get(R"(/[^?#]*)", [](const httplib::Request& req, httplib::Response& res) {
    if (auto r = static_asset(req.path)) send(res, *r);
    else send(res, error_reply(404, "no such page or endpoint: " + req.path));
  });

  // Statuses set by the library itself (404 for unknown POST paths, 413, 400 for bad
  // requests, 414) get a JSON body too; answers that already carry one are left alone.
  svr.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string msg = res.status == 413   ? "request body over the limit of " + std::to_string(kMaxBodyBytes) + " bytes"
                      : res.status == 404 ? "no such page or endpoint: " + req.path
                      : res.status == 414 ? "request URI too long"
                                          : "bad request";
    send(res, error_reply(res.status, msg));
    return httplib::Server::HandlerResponse::Handled;
  }));
  svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what += std::string(": ") + e.what();
    } catch (...) {
    }
    send(res, error_reply(500, what));
  });
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind() {
  auto& s = impl_->svr;
  const auto& o = impl_->opt;
  int port = o.port == 0 ? s.bind_to_any_port(o.host) : (s.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port <= 0)
    fail_input("--port", o.host + ":" + std::to_string(o.port), "cannot listen there (address in use, or not an address of this machine)");
  impl_->port = port;
  return port;
}

void HttpServer::serve() { impl_->svr.listen_after_bind(); }

void HttpServer::stop() {
  if (impl_) impl_->svr.stop();
}

#else  // no cpp-httplib: the server cannot be built, say so clearly.

struct HttpServer::Impl {};
HttpServer::HttpServer(ServerOptions) {}
HttpServer::~HttpServer() = default;
int HttpServer::bind() {
  fail_input("headroom serve", "build", "this binary was built without cpp-httplib (install libcpp-httplib-dev and rebuild)");
}
void HttpServer::serve() {}
void HttpServer::stop() {}

#endif

}  // namespace headroom::web
