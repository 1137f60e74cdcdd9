// The page's files, served from the copy embedded in the binary (data/web/): the server reads
// nothing from the file system.
#include <cctype>

#include "headroom/embedded.h"
#include "web/web.h"

namespace headroom::web {

namespace {

std::string_view content_type_for(std::string_view name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".json")) return "application/json";
  if (ends(".png")) return "image/png";
  if (ends(".ico")) return "image/x-icon";
  return "application/octet-stream";
}

// Asset names are plain: letters, digits, '-', '_', '.', one level of '/', no "..".
bool plain_name(std::string_view n) {
  if (n.empty() || n.size() > 128 || n.find("..") != std::string_view::npos || n.front() == '/') return false;
  for (char c : n) {
    unsigned char u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '-' && c != '_' && c != '.' && c != '/') return false;
  }
  return true;
}

}  // namespace

std::optional<Reply> static_asset(std::string_view url_path) {
  if (url_path.empty() || url_path.front() != '/') return std::nullopt;
  std::string_view name = url_path == "/" ? std::string_view("index.html") : url_path.substr(1);
  if (!plain_name(name)) return std::nullopt;
  std::string key = "web/" + std::string(name);
  auto file = embedded_file(key);
  if (!file) return std::nullopt;
  Reply r{200, std::string(content_type_for(name)), std::string(*file), {{"Cache-Control", "no-cache"}}};
  return r;
}

}  // namespace headroom::web
