// A private temporary folder (mode 0700, removed on destruction) for the texts a web request
// brings (an uploaded config.json, a crash log): the CLI reads them as files, nobody else can.
#pragma once
#include <string>
#include <string_view>

namespace headroom::web {

class PrivateDir {
 public:
  PrivateDir();  // throws std::runtime_error when the folder cannot be made
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `text` to <dir>/<name> (created new, mode 0600) and returns its path.
  std::string write(std::string_view name, std::string_view text) const;

 private:
  std::string path_;
};

}  // namespace headroom::web
