// GGUF header parsing (v2/v3, little-endian): magic, version, counts, metadata of every type
// (arrays nested to a bounded depth), tensor infos, general.alignment and the data offset. Reads
// go through a 1 MiB window over the source; counts are checked against the bytes left before
// anything is allocated, so a hostile header is one InputError, never a crash or a huge allocation.
// The checks mirror ggml-org/ggml@d99724f2 src/gguf.cpp gguf_init_from_reader.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <fmt/format.h>
#include <unordered_set>

#include "headroom/error.h"
#include "headroom/gguf.h"

namespace headroom::gguf {
namespace {

constexpr int64_t kWindow = 1 << 20;             // bytes fetched per source read
constexpr int64_t kKeepArray = 1 << 16;          // arrays longer than this are counted, not kept
constexpr int64_t kKeepItemsBudget = 1 << 18;    // array elements kept per header
constexpr int64_t kKeepString = 1 << 24;         // strings longer than this are skipped
constexpr int64_t kKeepStringBudget = 1 << 26;   // string bytes kept per header
constexpr int64_t kMaxKey = 1 << 16;             // longest key accepted
constexpr int kMaxDepth = 8;                     // array nesting
constexpr int64_t kMaxName = 64;                 // GGML_MAX_NAME: names must be shorter
constexpr uint32_t kMaxDims = 4;                 // GGML_MAX_DIMS
constexpr uint32_t kNewestVersion = 3;

// Bytes a value of type t occupies at least in the file (strings: their length; arrays: type + count).
int64_t min_size(ValueType t) {
  switch (t) {
    case ValueType::U8: case ValueType::I8: case ValueType::Bool: return 1;
    case ValueType::U16: case ValueType::I16: return 2;
    case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
    case ValueType::U64: case ValueType::I64: case ValueType::F64: case ValueType::String: return 8;
    case ValueType::Array: return 12;
  }
  return 1;
}
bool valid_type(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::F64); }

class Cursor {
 public:
  explicit Cursor(ByteSource& s) : src_(s), size_(s.size()) {}
  const std::string& name() const { return src_.name(); }
  int64_t pos() const { return pos_; }
  int64_t left() const { return size_ - pos_; }
  int64_t size() const { return size_; }

  [[noreturn]] void fail(std::string_view field, std::string_view problem) const { fail_input(name(), field, problem); }
  void need(int64_t n, std::string_view field, std::string_view what) const {
    if (n < 0 || n > left())
      fail(field, fmt::format("{} needs {} bytes at offset {} but the file ends {} bytes later", what, n, pos_, left()));
  }
  void read(char* dst, int64_t n, std::string_view field, std::string_view what) {
    need(n, field, what);
    while (n > 0) {
      if (pos_ < win_start_ || pos_ >= win_start_ + static_cast<int64_t>(win_.size())) {
        int64_t len = std::min(kWindow, size_ - pos_);
        win_.resize(static_cast<size_t>(len));
        src_.read_at(pos_, win_.data(), len);
        win_start_ = pos_;
      }
      int64_t off = pos_ - win_start_;
      int64_t k = std::min(n, static_cast<int64_t>(win_.size()) - off);
      std::memcpy(dst, win_.data() + off, static_cast<size_t>(k));
      dst += k, pos_ += k, n -= k;
    }
  }
  void skip(int64_t n, std::string_view field, std::string_view what) {
    need(n, field, what);
    pos_ += n;
  }
  uint64_t le(int bytes, std::string_view field, std::string_view what) {
    unsigned char b[8];
    read(reinterpret_cast<char*>(b), bytes, field, what);
    uint64_t v = 0;
    for (int k = bytes - 1; k >= 0; --k) v = (v << 8) | b[k];
    return v;
  }
  uint32_t u32(std::string_view field, std::string_view what) { return static_cast<uint32_t>(le(4, field, what)); }
  uint64_t u64(std::string_view field, std::string_view what) { return le(8, field, what); }

 private:
  ByteSource& src_;
  int64_t size_;
  int64_t pos_ = 0;
  std::string win_;
  int64_t win_start_ = 0;
};

class Parser {
 public:
  explicit Parser(ByteSource& s) : c_(s) {}
  Header run();

 private:
  // A string's length, checked against the bytes left.
  uint64_t str_len(std::string_view field) {
    uint64_t n = c_.u64(field, "string length");
    if (n > static_cast<uint64_t>(c_.left()))
      c_.fail(field, fmt::format("string length {} runs past the end of the file ({} bytes left)", n, c_.left()));
    return n;
  }
  std::string str(std::string_view field, uint64_t n) {
    std::string s(static_cast<size_t>(n), '\0');
    c_.read(s.data(), static_cast<int64_t>(n), field, "string");
    return s;
  }
  Value value(ValueType t, std::string_view field, int depth, bool keep);
  TensorInfo tensor(int64_t idx);

  Cursor c_;
  int64_t items_budget_ = kKeepItemsBudget;
  int64_t string_budget_ = kKeepStringBudget;
};

Value Parser::value(ValueType t, std::string_view field, int depth, bool keep) {
  Value v;
  v.type = t;
  switch (t) {
    case ValueType::U8: v.u = c_.le(1, field, "u8"); break;
    case ValueType::U16: v.u = c_.le(2, field, "u16"); break;
    case ValueType::U32: v.u = c_.le(4, field, "u32"); break;
    case ValueType::U64: v.u = c_.le(8, field, "u64"); break;
    case ValueType::I8: v.i = static_cast<int8_t>(c_.le(1, field, "i8")); break;
    case ValueType::I16: v.i = static_cast<int16_t>(c_.le(2, field, "i16")); break;
    case ValueType::I32: v.i = static_cast<int32_t>(c_.le(4, field, "i32")); break;
    case ValueType::I64: v.i = static_cast<int64_t>(c_.le(8, field, "i64")); break;
    case ValueType::Bool: v.u = c_.le(1, field, "bool") != 0; break;
    case ValueType::F32: {
      auto bits = static_cast<uint32_t>(c_.le(4, field, "f32"));
      float f;
      std::memcpy(&f, &bits, 4);
      v.f = f;
      break;
    }
    case ValueType::F64: {
      uint64_t bits = c_.le(8, field, "f64");
      std::memcpy(&v.f, &bits, 8);
      break;
    }
    case ValueType::String: {
      uint64_t n = str_len(field);
      v.u = n;
      auto len = static_cast<int64_t>(n);
      if (keep && len <= kKeepString && len <= string_budget_) {
        v.s = str(field, n);
        string_budget_ -= len;
      } else {
        c_.skip(len, field, "string");
        v.s_elided = true;
      }
      break;
    }
    case ValueType::Array: {
      if (depth >= kMaxDepth) c_.fail(field, fmt::format("arrays nested deeper than {} levels", kMaxDepth));
      uint32_t et = c_.u32(field, "array element type");
      if (!valid_type(et)) c_.fail(field, fmt::format("array element type {} is not a GGUF type (0-12)", et));
      v.elem = static_cast<ValueType>(et);
      v.count = c_.u64(field, "array count");
      int64_t each = min_size(v.elem);
      if (v.count > static_cast<uint64_t>(c_.left() / each))
        c_.fail(field, fmt::format("array of {} {} elements cannot fit in the {} bytes left", v.count, value_type_name(v.elem), c_.left()));
      auto n = static_cast<int64_t>(v.count);
      bool keep_items = keep && n <= kKeepArray && n <= items_budget_;
      v.elided = !keep_items;
      if (keep_items) items_budget_ -= n, v.items.reserve(static_cast<size_t>(n));
      bool fixed = v.elem != ValueType::String && v.elem != ValueType::Array;
      if (!keep_items && fixed) {
        c_.skip(n * each, field, "array");  // n * each <= left, checked above
        break;
      }
      for (int64_t k = 0; k < n; ++k) {
        Value item = value(v.elem, field, depth + 1, keep_items);
        if (keep_items) v.items.push_back(std::move(item));
      }
      break;
    }
  }
  return v;
}

TensorInfo Parser::tensor(int64_t idx) {
  TensorInfo t;
  std::string field = fmt::format("tensor {}", idx);
  uint64_t n = str_len(field + " name");
  if (static_cast<int64_t>(n) >= kMaxName)
    c_.fail(field, fmt::format("name of {} bytes is longer than ggml's limit of {}", n, kMaxName - 1));
  t.name = str(field + " name", n);
  field = fmt::format("tensor {} '{}'", idx, t.name);
  uint32_t nd = c_.u32(field, "n_dims");
  if (nd > kMaxDims) c_.fail(field, fmt::format("{} dimensions, ggml allows at most {}", nd, kMaxDims));
  t.elements = 1;
  bool overflow = false;
  for (uint32_t d = 0; d < nd; ++d) {
    auto ne = static_cast<int64_t>(c_.u64(field, "dimension"));
    if (ne < 0) c_.fail(field, fmt::format("dimension {} is negative ({})", d, ne));
    t.dims.push_back(ne);
    overflow = overflow || __builtin_mul_overflow(t.elements, ne, &t.elements);
  }
  if (overflow) c_.fail(field, "element count overflows 64 bits");
  uint32_t ty = c_.u32(field, "type");
  const TypeTraits* tr = type_traits(ty);
  if (!tr) c_.fail(field, fmt::format("ggml type {} is unknown or removed (known: 0-42 but 4, 5, 31-33, 36-38)", ty));
  t.type = tr->type;
  int64_t ne0 = t.dims.empty() ? 1 : t.dims[0];
  if (ne0 % tr->block_size != 0)
    c_.fail(field, fmt::format("{} elements per row is not a multiple of {}'s block size {}", ne0, tr->name, tr->block_size));
  if (__builtin_mul_overflow(t.elements / tr->block_size, tr->type_size, &t.bytes))
    c_.fail(field, "size in bytes overflows 64 bits");
  t.offset = c_.u64(field, "offset");
  return t;
}

Header Parser::run() {
  Header h;
  h.source = c_.name();
  h.file_size = c_.size();
  char magic[4];
  c_.read(magic, 4, "magic", "the magic");
  if (std::memcmp(magic, "GGUF", 4) != 0) {
    std::string shown;
    for (char ch : magic) shown += std::isprint(static_cast<unsigned char>(ch)) ? ch : '?';
    c_.fail("magic", fmt::format("'{}' is not GGUF's magic 'GGUF'", shown));
  }
  h.version = c_.u32("version", "the version");
  if (h.version == 0) c_.fail("version", "version 0 is not a GGUF version");
  if ((h.version & 0xFFFF) == 0)
    c_.fail("version", fmt::format("version 0x{:08x} reads as a big-endian file: headroom, like llama.cpp on "
                                   "little-endian hosts, reads little-endian GGUF only", h.version));
  if (h.version == 1) c_.fail("version", "GGUF v1 is no longer supported by llama.cpp (v2 and v3 are read)");
  if (h.version > kNewestVersion) c_.fail("version", fmt::format("version {} is newer than {}, the newest headroom reads", h.version, kNewestVersion));

  auto n_tensors = static_cast<int64_t>(c_.u64("tensor_count", "the tensor count"));
  auto n_kv = static_cast<int64_t>(c_.u64("metadata_kv_count", "the key/value count"));
  // A tensor info takes at least 24 bytes (name length, n_dims, type, offset); a key/value 14.
  if (n_tensors < 0 || n_tensors > c_.left() / 24)
    c_.fail("tensor_count", fmt::format("{} tensors cannot fit in a {}-byte file", n_tensors, c_.size()));
  if (n_kv < 0 || n_kv > c_.left() / 14)
    c_.fail("metadata_kv_count", fmt::format("{} key/values cannot fit in a {}-byte file", n_kv, c_.size()));

  std::unordered_set<std::string> keys;
  h.kv.reserve(static_cast<size_t>(n_kv));
  for (int64_t k = 0; k < n_kv; ++k) {
    std::string field = fmt::format("key {}", k);
    uint64_t n = str_len(field);
    if (n == 0) c_.fail(field, "empty key");
    if (static_cast<int64_t>(n) > kMaxKey) c_.fail(field, fmt::format("key of {} bytes (over {})", n, kMaxKey));
    KeyValue kv;
    kv.key = str(field, n);
    if (!keys.insert(kv.key).second) c_.fail(kv.key, "duplicate key");
    uint32_t ty = c_.u32(kv.key, "value type");
    if (!valid_type(ty)) c_.fail(kv.key, fmt::format("value type {} is not a GGUF type (0-12)", ty));
    kv.value = value(static_cast<ValueType>(ty), kv.key, 0, true);
    h.kv.push_back(std::move(kv));
  }

  if (const Value* a = h.find("general.alignment")) {
    if (a->type != ValueType::U32)
      c_.fail("general.alignment", fmt::format("must be of type u32 but is {}", value_type_name(a->type)));
    if (a->u == 0 || (a->u & (a->u - 1)) != 0) c_.fail("general.alignment", fmt::format("{} is not a power of 2", a->u));
    h.alignment = static_cast<uint32_t>(a->u);
  }

  std::unordered_set<std::string> names;
  h.tensors.reserve(static_cast<size_t>(n_tensors));
  for (int64_t k = 0; k < n_tensors; ++k) {
    TensorInfo t = tensor(k);
    if (!names.insert(t.name).second) c_.fail(fmt::format("tensor {} '{}'", k, t.name), "duplicate tensor name");
    h.tensors.push_back(std::move(t));
  }
  h.header_bytes = c_.pos();
  const int64_t align = h.alignment;
  h.data_offset = n_tensors > 0 ? (h.header_bytes + align - 1) / align * align : h.header_bytes;
  if (n_tensors > 0 && h.data_offset > h.file_size)
    c_.fail("data section", fmt::format("starts at {}, past the end of the {}-byte file", h.data_offset, h.file_size));

  // ggml requires tensors packed in order, each padded to the alignment; their data in the file.
  const int64_t room = h.file_size - h.data_offset;
  int64_t expect = 0;
  for (const auto& t : h.tensors) {
    std::string field = fmt::format("tensor '{}'", t.name);
    if (t.offset != static_cast<uint64_t>(expect))
      c_.fail(field, fmt::format("offset {}, expected {} (ggml requires tensors packed in order, each padded to {} bytes)",
                                 t.offset, expect, align));
    if (t.bytes > room - expect)
      c_.fail(field, fmt::format("{} bytes of data at offset {} run past the end of the {}-byte file", t.bytes,
                                 h.data_offset + expect, h.file_size));
    int64_t padded = (t.bytes + align - 1) / align * align;  // t.bytes <= file size: no overflow
    expect += padded;
  }
  return h;
}

}  // namespace

bool Value::is_integer() const {
  switch (type) {
    case ValueType::U8: case ValueType::U16: case ValueType::U32: case ValueType::U64:
    case ValueType::I8: case ValueType::I16: case ValueType::I32: case ValueType::I64: return true;
    default: return false;
  }
}

std::optional<int64_t> Value::as_int() const {
  switch (type) {
    case ValueType::I8: case ValueType::I16: case ValueType::I32: case ValueType::I64: return i;
    case ValueType::U8: case ValueType::U16: case ValueType::U32: case ValueType::U64:
      if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(u);
    default: return std::nullopt;
  }
}

const Value* Header::find(std::string_view key) const {
  for (const auto& kv : kv)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

namespace {
[[noreturn]] void wrong_type(const Header& h, std::string_view key, std::string_view want, const Value& v) {
  std::string got(value_type_name(v.type));
  if (v.type == ValueType::Array) got += fmt::format(" of {}", value_type_name(v.elem));
  fail_input(h.source, key, fmt::format("expected {}, found {}", want, got));
}
int64_t int_of(const Header& h, std::string_view key, const Value& v) {
  if (!v.is_integer()) wrong_type(h, key, "an integer", v);
  auto i = v.as_int();
  if (!i) fail_input(h.source, key, fmt::format("{} is out of the 64-bit signed range", v.u));
  return *i;
}
}  // namespace

std::optional<int64_t> Header::get_int(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  return int_of(*this, key, *v);
}

std::optional<std::string> Header::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != ValueType::String) wrong_type(*this, key, "a string", *v);
  if (v->s_elided) fail_input(source, key, fmt::format("string of {} bytes is too long to read", v->u));
  return v->s;
}

std::optional<double> Header::get_float(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  if (v->type == ValueType::F32 || v->type == ValueType::F64) return v->f;
  return static_cast<double>(int_of(*this, key, *v));
}

std::optional<bool> Header::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != ValueType::Bool) wrong_type(*this, key, "a bool", *v);
  return v->u != 0;
}

std::optional<std::vector<int64_t>> Header::get_int_or_array(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != ValueType::Array) return std::vector<int64_t>{int_of(*this, key, *v)};
  if (v->elided) fail_input(source, key, fmt::format("array of {} elements is too long to read", v->count));
  std::vector<int64_t> out;
  for (const auto& e : v->items) out.push_back(int_of(*this, key, e));
  return out;
}

std::optional<uint64_t> Header::array_count(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != ValueType::Array) wrong_type(*this, key, "an array", *v);
  return v->count;
}

Header read_header(ByteSource& src) { return Parser(src).run(); }

Header read_header_file(const std::string& path) {
  auto src = open_file_source(path);
  return read_header(*src);
}

Header parse_header(std::string_view bytes, std::string_view source) {
  auto src = memory_source(bytes, std::string(source));
  return read_header(*src);
}

}  // namespace headroom::gguf
