// PrivateDir: mkdtemp() under the system temp folder, files created with O_EXCL and 0600.
#include "web/private_dir.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace headroom::web {

PrivateDir::PrivateDir() {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string tmpl = (base / "headroom-web-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("cannot create a temporary folder: " + std::string(std::strerror(errno)));
  path_ = buf.data();
}

PrivateDir::~PrivateDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string PrivateDir::write(std::string_view name, std::string_view text) const {
  std::string file = path_ + "/" + std::string(name);
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + file + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      throw std::runtime_error("cannot write " + file + ": " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return file;
}

}  // namespace headroom::web
