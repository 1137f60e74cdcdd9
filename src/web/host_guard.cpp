// The DNS-rebinding and cross-site guards of `headroom serve` (issue 31): a request's Host must
// name this server exactly (a loopback name, the bound address, or an --allow-host name, with
// no port or the serving port), and a POST's Origin, when a browser sends one, must be such a
// host over http. Prefix tests ("127." ...) are what rebinding names like 127.evil.example beat.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "web/web.h"

namespace headroom::web {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "name" or "name:port" -> (name, port or -1); "[v6]" / "[v6]:port" keep their brackets.
// Returns false for a malformed port.
bool split_host_port(std::string_view hp, std::string& name, int& port) {
  port = -1;
  std::string_view n = hp, p;
  if (!hp.empty() && hp.front() == '[') {
    auto close = hp.find(']');
    if (close == std::string_view::npos) return false;
    n = hp.substr(0, close + 1);
    std::string_view rest = hp.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      p = rest.substr(1);
      if (p.empty()) return false;
    }
  } else if (auto colon = hp.find(':'); colon != std::string_view::npos) {
    n = hp.substr(0, colon);
    p = hp.substr(colon + 1);
    if (p.empty()) return false;
  }
  if (!p.empty()) {
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
    if (ec != std::errc() || ptr != p.data() + p.size() || port <= 0 || port > 65535) return false;
  }
  name = lower(n);
  return !name.empty();
}

}  // namespace

std::vector<std::string> allowed_host_names(std::string_view bound_host, const std::vector<std::string>& extra) {
  std::vector<std::string> names{"localhost", "127.0.0.1", "[::1]"};
  std::string b = lower(bound_host);
  if (!b.empty() && b != "0.0.0.0" && b != "::" && b != "[::]") {
    if (b.find(':') != std::string::npos && b.front() != '[') b = "[" + b + "]";
    names.push_back(b);
  }
  for (const auto& e : extra) names.push_back(lower(e));
  return names;
}

bool host_allowed(std::string_view host_header, int serving_port, const std::vector<std::string>& names) {
  std::string name;
  int port = -1;
  if (!split_host_port(host_header, name, port)) return false;
  if (port != -1 && port != serving_port) return false;
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool origin_allowed(std::string_view origin, int serving_port, const std::vector<std::string>& names) {
  constexpr std::string_view kScheme = "http://";
  if (origin.size() <= kScheme.size() || lower(origin.substr(0, kScheme.size())) != kScheme) return false;
  std::string_view hp = origin.substr(kScheme.size());
  if (hp.find_first_of("/?#@") != std::string_view::npos) return false;
  std::string name;
  int port = -1;
  if (!split_host_port(hp, name, port)) return false;
  if ((port == -1 ? 80 : port) != serving_port) return false;  // an origin without a port is port 80
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool is_loopback_host(std::string_view h) {
  const std::string l = lower(h);
  return l == "localhost" || l == "::1" || l == "[::1]" || l == "127.0.0.1";
}

}  // namespace headroom::web
