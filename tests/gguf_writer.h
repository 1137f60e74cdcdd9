// A tiny GGUF writer for tests: little-endian header bytes written by hand (magic, version,
// counts, key/values, tensor infos with offsets packed and padded as ggml expects), and the data
// section left sparse on disk. Independent of headroom's reader: byte sizes are given by the test.
#pragma once
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace gguf_test {

inline std::string le(uint64_t v, int n) {
  std::string s(static_cast<size_t>(n), '\0');
  for (int i = 0; i < n; ++i) s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
inline std::string u8(uint8_t v) { return le(v, 1); }
inline std::string u16(uint16_t v) { return le(v, 2); }
inline std::string u32(uint32_t v) { return le(v, 4); }
inline std::string u64(uint64_t v) { return le(v, 8); }
inline std::string i32(int32_t v) { return le(static_cast<uint32_t>(v), 4); }
inline std::string i64(int64_t v) { return le(static_cast<uint64_t>(v), 8); }
inline std::string f32(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return u32(b);
}
inline std::string f64(double f) {
  uint64_t b;
  std::memcpy(&b, &f, 8);
  return u64(b);
}
inline std::string str(const std::string& s) { return u64(s.size()) + s; }

// gguf_type ids
enum : uint32_t { U8 = 0, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 };
// ggml_type ids used by the tests
enum : uint32_t { T_F32 = 0, T_F16 = 1, T_Q4_0 = 2, T_Q8_0 = 8, T_Q4_K = 12, T_Q6_K = 14, T_BF16 = 30, T_MXFP4 = 39 };

struct Writer {
  uint32_t version = 3;
  uint64_t alignment = 32;  // must match a general.alignment key the test adds
  std::string kvs;
  uint64_t n_kv = 0;
  struct Tensor {
    std::string name;
    std::vector<int64_t> dims;
    uint32_t type;
    uint64_t bytes;
  };
  std::vector<Tensor> tensors;

  Writer& kv(const std::string& key, uint32_t type, const std::string& payload) {
    kvs += str(key) + u32(type) + payload;
    ++n_kv;
    return *this;
  }
  Writer& kv_u32(const std::string& k, uint32_t v) { return kv(k, U32, u32(v)); }
  Writer& kv_str(const std::string& k, const std::string& v) { return kv(k, STRING, str(v)); }
  // An array: element type, count and the elements' bytes.
  Writer& kv_arr(const std::string& k, uint32_t elem, uint64_t count, const std::string& items) {
    return kv(k, ARRAY, u32(elem) + u64(count) + items);
  }
  Writer& tensor(const std::string& name, std::vector<int64_t> dims, uint32_t type, uint64_t bytes) {
    tensors.push_back({name, std::move(dims), type, bytes});
    return *this;
  }
  uint64_t pad(uint64_t x) const { return (x + alignment - 1) / alignment * alignment; }

  std::string header() const {
    std::string h = "GGUF" + u32(version) + u64(tensors.size()) + u64(n_kv) + kvs;
    uint64_t off = 0;
    for (const auto& t : tensors) {
      h += str(t.name) + u32(static_cast<uint32_t>(t.dims.size()));
      for (int64_t d : t.dims) h += i64(d);
      h += u32(t.type) + u64(off);
      off = pad(off + t.bytes);
    }
    return h;
  }
  uint64_t data_offset() const { return tensors.empty() ? header().size() : pad(header().size()); }
  uint64_t data_size() const {
    uint64_t off = 0;
    for (const auto& t : tensors) off = pad(off + t.bytes);
    return off;
  }
  // Header, padding and zeroed data, in memory.
  std::string bytes() const {
    std::string h = header();
    h.resize(static_cast<size_t>(data_offset() + data_size()), '\0');
    return h;
  }
  // Header on disk, the data section a hole (sparse), so a huge model costs nothing.
  void write(const std::string& path) const {
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << header();
    }
    std::filesystem::resize_file(path, data_offset() + data_size());
  }
};

}  // namespace gguf_test
