// Safetensors headers, read defensively: 8-byte little-endian header length (checked against
// the file size and a 100 MB cap), a JSON object of {name: {dtype, shape, data_offsets}} and
// optional __metadata__; dtype, shape and byte ranges must agree and must not overlap.
// Format: huggingface/safetensors docs ("format" section) and safetensors/src/tensor.rs.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "headroom/error.h"
#include "headroom/file_reach.h"
#include "model/model_internal.h"

namespace headroom::model_detail {

int64_t tensor_bytes(const std::vector<int64_t>& shape, DType dtype, std::string_view source, std::string_view name) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) fail_input(source, name, "negative dimension in shape");
    if (d != 0 && n > (int64_t{1} << 52) / d) fail_input(source, name, "shape has more than 2^52 elements");
    n *= d;
  }
  return n * dtype_size(dtype);
}

SafetensorsHeader parse_safetensors_header(std::string_view prefix, int64_t file_size, std::string_view source) {
  SafetensorsHeader h;
  if (file_size < 8 || prefix.size() < 8) fail_input(source, "header", fmt::format("file is {} bytes, too short for the 8-byte header length", file_size));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(prefix[static_cast<size_t>(i)]);
  if (n > static_cast<uint64_t>(kMaxSafetensorsHeader))
    fail_input(source, "header", fmt::format("header length {} exceeds the {} byte cap", n, kMaxSafetensorsHeader));
  if (static_cast<int64_t>(n) > file_size - 8)
    fail_input(source, "header", fmt::format("header length {} is larger than the file ({} bytes)", n, file_size));
  if (prefix.size() < 8 + n) fail_input(source, "header", "file ends inside the header");
  h.header_bytes = static_cast<int64_t>(n);
  std::string_view text = prefix.substr(8, n);
  json j = parse_json(text, source);
  if (!j.is_object()) fail_input(source, "header", "must be a JSON object");
  const int64_t data_size = file_size - 8 - static_cast<int64_t>(n);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {
      if (!it->is_object()) fail_input(source, "__metadata__", "must be an object");
      continue;
    }
    const json& e = *it;
    if (!e.is_object()) fail_input(source, name, "tensor entry must be an object");
    auto dt = e.find("dtype");
    auto sh = e.find("shape");
    auto off = e.find("data_offsets");
    if (dt == e.end() || !dt->is_string()) fail_input(source, name, "dtype missing or not a string");
    auto d = parse_dtype(dt->get<std::string>());
    if (!d || dtype_size(*d) == 0) fail_input(source, name, fmt::format("unknown dtype '{}'", dt->get<std::string>()));
    if (sh == e.end() || !sh->is_array()) fail_input(source, name, "shape missing or not a list");
    if (sh->size() > 16) fail_input(source, name, "shape has more than 16 dimensions");
    TensorInfo t;
    t.name = name;
    t.dtype = *d;
    for (const auto& x : *sh) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0) fail_input(source, name, "shape must hold non-negative integers");
      t.shape.push_back(x.get<int64_t>());
    }
    t.bytes = tensor_bytes(t.shape, t.dtype, source, name);
    if (off == e.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_integer() || !(*off)[1].is_number_integer())
      fail_input(source, name, "data_offsets must be [begin, end]");
    int64_t b = (*off)[0].get<int64_t>(), en = (*off)[1].get<int64_t>();
    if ((*off)[0].is_number_unsigned() && (*off)[0].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) b = -1;
    if ((*off)[1].is_number_unsigned() && (*off)[1].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) en = -1;
    if (b < 0 || en < b) fail_input(source, name, fmt::format("data_offsets [{}, {}] are not an increasing byte range", b, en));
    if (en > data_size) fail_input(source, name, fmt::format("data_offsets end {} is past the data ({} bytes)", en, data_size));
    if (en - b != t.bytes)
      fail_input(source, name, fmt::format("data_offsets span {} bytes, dtype {} x shape needs {}", en - b, dtype_name(t.dtype), t.bytes));
    ranges.emplace_back(b, en);
    h.data_bytes += t.bytes;
    h.tensors.push_back(std::move(t));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      fail_input(source, "data_offsets", fmt::format("tensor byte ranges overlap at offset {}", ranges[i].first));
  return h;
}

SafetensorsHeader read_safetensors_file(const std::string& path) {
  require_path_reach(path, "file");
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) fail_input(path, "file", "cannot read: " + ec.message());
  std::ifstream f(path, std::ios::binary);
  if (!f) fail_input(path, "file", "cannot open");
  char lenbuf[8] = {};
  f.read(lenbuf, 8);
  if (f.gcount() != 8) fail_input(path, "header", fmt::format("file is {} bytes, too short for the 8-byte header length", size));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(lenbuf[i]);
  const int64_t fsize = static_cast<int64_t>(size);
  if (n > static_cast<uint64_t>(kMaxSafetensorsHeader) || static_cast<int64_t>(n) > fsize - 8)
    return parse_safetensors_header(std::string_view(lenbuf, 8), fsize, path);  // throws the right message
  std::string buf(8 + n, '\0');
  std::copy(lenbuf, lenbuf + 8, buf.begin());
  f.read(buf.data() + 8, static_cast<std::streamsize>(n));
  if (static_cast<uint64_t>(f.gcount()) != n) fail_input(path, "header", "file ends inside the header");
  return parse_safetensors_header(buf, fsize, path);
}

std::string read_text_file(const std::string& path, int64_t max_bytes) {
  require_path_reach(path, "file");
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) fail_input(path, "file", "cannot read: " + ec.message());
  if (static_cast<int64_t>(size) > max_bytes) fail_input(path, "file", fmt::format("{} bytes is too large (cap {})", size, max_bytes));
  std::ifstream f(path, std::ios::binary);
  if (!f) fail_input(path, "file", "cannot open");
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace headroom::model_detail
