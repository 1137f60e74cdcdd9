// Byte sources for the GGUF reader: a local file read with bounded seeks (a 200 GB file costs
// only the bytes of its header) and a memory buffer (tests, fuzzing).
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "headroom/error.h"
#include "headroom/gguf.h"

namespace headroom::gguf {
namespace {

class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::string& path) : name_(path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) fail_input(path, "file", "not a regular file");
    auto sz = std::filesystem::file_size(path, ec);
    if (ec) fail_input(path, "file", "cannot read its size: " + ec.message());
    size_ = static_cast<int64_t>(sz);
    in_.open(path, std::ios::binary);
    if (!in_) fail_input(path, "file", fmt::format("cannot open: {}", std::strerror(errno)));
  }
  const std::string& name() const override { return name_; }
  int64_t size() const override { return size_; }
  void read_at(int64_t off, char* dst, int64_t n) override {
    in_.clear();
    in_.seekg(off);
    in_.read(dst, n);
    if (in_.gcount() != n) fail_input(name_, "file", fmt::format("short read of {} bytes at offset {}", n, off));
  }

 private:
  std::string name_;
  int64_t size_ = 0;
  std::ifstream in_;
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string_view bytes, std::string name) : bytes_(bytes), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  int64_t size() const override { return static_cast<int64_t>(bytes_.size()); }
  void read_at(int64_t off, char* dst, int64_t n) override {
    std::memcpy(dst, bytes_.data() + off, static_cast<size_t>(n));
  }

 private:
  std::string_view bytes_;
  std::string name_;
};

}  // namespace

std::unique_ptr<ByteSource> open_file_source(const std::string& path) { return std::make_unique<FileSource>(path); }
std::unique_ptr<ByteSource> memory_source(std::string_view bytes, std::string name) {
  return std::make_unique<MemorySource>(bytes, std::move(name));
}

bool has_gguf_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char m[4] = {};
  return in.read(m, 4) && std::memcmp(m, "GGUF", 4) == 0;
}

}  // namespace headroom::gguf
