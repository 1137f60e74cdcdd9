// The HTTP side of `headroom serve` (cpp-httplib): routes, JSON error bodies, wrong methods
// (405), unknown paths (404), and the guards of issue 31: an exact Host allow-list (403; DNS
// rebinding), Origin on every POST (403; cross-site pages), a body cap that holds for chunked
// bodies too (413, read no further), and connections run by our own loop (conn_stream.h,
// worker_pool.h) so that trickling, idle or too many clients cannot starve the others.
#include "web/web.h"

#include <algorithm>
#include <array>

#include "headroom/error.h"

#ifdef HEADROOM_HAVE_HTTPLIB
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "web/conn_limits.h"
#include "web/conn_stream.h"
#include "web/worker_pool.h"
#endif

namespace headroom::web {

#ifdef HEADROOM_HAVE_HTTPLIB

namespace {

struct Route {
  std::string_view path;
  std::string_view method;  // the one method the path answers
};
constexpr std::array<Route, 8> kApiRoutes{{{"/api/plan", "POST"}, {"/api/tune", "POST"}, {"/api/doctor", "POST"}, {"/api/diff", "POST"},
                                           {"/api/gpus", "GET"}, {"/api/models", "GET"}, {"/api/meta", "GET"},
                                           {"/api/profiles", "GET"}}};

// Set by a handler that leaves bytes of the request unread (refused body): the connection loop
// closes the connection after the answer instead of reading those bytes as a next request.
thread_local bool tl_close_after = false;

void send(httplib::Response& res, const Reply& r) {
  res.status = r.status;
  for (const auto& [k, v] : r.headers) res.set_header(k.c_str(), v.c_str());
  res.set_content(r.body, r.content_type.c_str());
}

// Closes a connection gracefully: our answer is sent, then what the client still sends is read
// and dropped for a short while (bounded), so its kernel does not turn the answer into a reset.
void close_lingering(int sock) {
  ::shutdown(sock, SHUT_WR);
  char buf[16384];
  size_t drained = 0;
  for (int i = 0; i < 20 && drained < (8u << 20); ++i) {
    pollfd p{sock, POLLIN, 0};
    if (::poll(&p, 1, 25) <= 0) break;
    ssize_t n = ::recv(sock, buf, sizeof buf, 0);
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
  ::close(sock);
}

class GuardedServer final : public httplib::Server {
 public:
  explicit GuardedServer(const ConnLimits& lim) : lim_(lim) {
    new_task_queue = [this] {
      auto* p = new WorkerPool(lim_.workers, lim_.max_waiting);
      pool_ = p;
      return p;
    };
  }

 private:
  bool process_and_close_socket(int sock) override {
    if (WorkerPool::overloaded()) {
      static const std::string kBusy = R"({"error":"server busy: too many connections, try again"})";
      const std::string reply = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                                "Connection: close\r\nContent-Length: " + std::to_string(kBusy.size()) + "\r\n\r\n" + kBusy;
      (void)::send(sock, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(sock);
      return false;
    }
    // Answers go out as soon as written: without TCP_NODELAY a keep-alive reply waits on the
    // client's delayed ACK (~40 ms a request: 554 plan requests/s over 50 connections).
    const int one = 1;
    (void)::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ConnStream strm(sock, lim_);
    auto starved = [this] {
      WorkerPool* p = pool_.load();
      return svr_sock_ == INVALID_SOCKET || (p && p->starved());
    };
    bool ok = true;
    for (std::size_t served = 0; served < lim_.max_requests_per_connection; ++served) {
      if (!strm.wait_for_request(served == 0 ? lim_.read_idle : lim_.keep_alive_idle,
                                 [&] { return starved(); }))
        break;
      strm.begin_request();
      tl_close_after = false;
      const bool last = served + 1 == lim_.max_requests_per_connection || starved();
      bool closed = false;
      ok = process_request(strm, last, closed, nullptr);
      if (!ok || closed || last || tl_close_after || strm.limit_hit()) break;
    }
    tl_close_after = false;
    close_lingering(sock);
    return ok;
  }

  const ConnLimits& lim_;
  std::atomic<WorkerPool*> pool_{nullptr};

 public:
  // Linux takes a second listen() on a listening socket as a new backlog.
  void widen_backlog(int backlog) { ::listen(svr_sock_, backlog); }
};

bool is_json(const httplib::Request& req) {
  return req.has_header("Content-Type") && req.get_header_value("Content-Type").rfind("application/json", 0) == 0;
}

}  // namespace

struct HttpServer::Impl {
  ServerOptions opt;
  ConnLimits limits;
  std::vector<std::string> host_names;
  GuardedServer svr{limits};
  int port = 0;
};

HttpServer::HttpServer(ServerOptions opt) : impl_(std::make_unique<Impl>()) {
  Impl* im = impl_.get();
  im->opt = std::move(opt);
  im->host_names = allowed_host_names(im->opt.host, im->opt.allow_hosts);
  httplib::Server& svr = im->svr;

  svr.set_payload_max_length(kMaxBodyBytes);
  svr.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                           {"Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                            "connect-src 'self'; frame-ancestors 'none'"},
                           {"Referrer-Policy", "no-referrer"}});

  // Before routing (and before any body is read): the Host allow-list (a page on another site
  // that rebinds its name to 127.0.0.1 must not reach the API), the Origin of a browser's POST,
  // 405 for known paths asked with the wrong method.
  svr.set_pre_routing_handler([im](const httplib::Request& req, httplib::Response& res) {
    auto refuse = [&](int status, std::string_view msg) {
      send(res, error_reply(status, msg));
      tl_close_after = true;  // its body, if any, stays unread
      return httplib::Server::HandlerResponse::Handled;
    };
    if (!req.has_header("Host") || !host_allowed(req.get_header_value("Host"), im->port, im->host_names))
      return refuse(403, "this server answers only requests addressed to localhost, 127.0.0.1 or [::1] "
                         "(with its port), or to a name given with --allow-host");
    if (req.method != "GET" && req.method != "HEAD") {
      if (req.has_header("Origin") && !origin_allowed(req.get_header_value("Origin"), im->port, im->host_names))
        return refuse(403, "cross-site request refused: Origin is not this server");
      if (req.get_header_value("Sec-Fetch-Site") == "cross-site")
        return refuse(403, "cross-site request refused (Sec-Fetch-Site)");
    }
    for (const auto& r : kApiRoutes) {
      if (req.path == r.path && req.method != r.method && !(r.method == "GET" && req.method == "HEAD")) {
        refuse(405, std::string(r.path) + " accepts " + std::string(r.method) + " only");
        res.set_header("Allow", std::string(r.method).c_str());
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    if (req.path.rfind("/api/", 0) != 0 && req.method != "GET" && req.method != "HEAD") {
      refuse(405, "the page's files accept GET only");
      res.set_header("Allow", "GET");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  for (std::string_view verb : {"plan", "tune", "doctor", "diff"}) {
    std::string v(verb);
    // The body is read here, through the cap, whether it comes with a length or chunked.
    svr.Post("/api/" + v, [v](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
      if (!is_json(req)) {
        tl_close_after = true;
        send(res, error_reply(415, "send the body as Content-Type: application/json"));
        return;
      }
      std::string body;
      bool over = false;
      const bool read = reader([&](const char* data, size_t n) {
        if (n > kMaxBodyBytes - body.size()) return !(over = true);
        body.append(data, n);
        return true;
      });
      if (over || res.status == 413) {
        tl_close_after = true;
        send(res, error_reply(413, "request body over the limit of " + std::to_string(kMaxBodyBytes) + " bytes"));
        return;
      }
      if (!read) {
        tl_close_after = true;
        send(res, error_reply(400, "request body could not be read (malformed, incomplete or too slow)"));
        return;
      }
      send(res, api_run(v, body));
    });
  }
  svr.Get("/api/gpus", [](const httplib::Request&, httplib::Response& res) { send(res, api_gpus()); });
  svr.Get("/api/models", [](const httplib::Request&, httplib::Response& res) { send(res, api_models()); });
  svr.Get("/api/meta", [](const httplib::Request&, httplib::Response& res) { send(res, api_meta()); });
  svr.Get("/api/profiles", [](const httplib::Request&, httplib::Response& res) { send(res, api_profiles()); });
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
    if (res.status == 400 || res.status == 413 || res.status == 414) tl_close_after = true;
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
  s.widen_backlog(impl_->limits.listen_backlog);
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
