// GGUF (llama.cpp's model file, versions 2 and 3) header reader: metadata key/values of every
// type, tensor infos, alignment and data offset, and ggml's tensor type table. Only the header
// is read, through bounded reads of a ByteSource; every count, length, dim and offset is checked
// against the file size and for overflow. Bad input: InputError (file, field, problem).
// Format: ggml docs/gguf.md; checks mirror ggml src/gguf.cpp (gguf_init_from_reader).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::gguf {

// ggml tensor types, numbered as ggml.h `enum ggml_type` (gaps are removed types).
enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
  I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39, NVFP4 = 40, Q1_0 = 41, Q2_0 = 42,
};

// One row of ggml's type_traits: `block_size` elements are stored in `type_size` bytes.
struct TypeTraits {
  GgmlType type;
  std::string_view name;  // ggml's spelling: "f16", "q4_K", "iq2_xxs", "mxfp4", ...
  int64_t block_size;
  int64_t type_size;
};
// The traits of ggml type id `id`; nullptr for ids ggml does not define or has removed.
const TypeTraits* type_traits(uint32_t id);
const TypeTraits& type_traits(GgmlType t);
// Every type of the table, in id order.
const std::vector<TypeTraits>& all_type_traits();

// Metadata value types, numbered as gguf.h `enum gguf_type`.
enum class ValueType : uint32_t { U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
                                  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12 };
std::string_view value_type_name(ValueType t);  // "u8", "str", "arr", ... (gguf.cpp GGUF_TYPE_NAME)

// One metadata value. Integers keep their sign (`i` for signed types, `u` for unsigned and bool).
// Arrays keep their element type and count; their elements are kept while the reader's budget
// lasts (a 150k-token vocabulary is counted, not kept: `elided`).
struct Value {
  ValueType type = ValueType::U8;
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
  std::string s;
  bool s_elided = false;  // a string too long to keep (its length is `u`)
  ValueType elem = ValueType::U8;
  uint64_t count = 0;
  std::vector<Value> items;
  bool elided = false;

  bool is_integer() const;
  // The integer value (InputError-free: nullopt when not an integer or out of int64 range).
  std::optional<int64_t> as_int() const;
};

struct KeyValue {
  std::string key;
  Value value;
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // ne[0..n_dims), ne[0] the contiguous (row) dimension
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;        // within the data section
  int64_t elements = 0;
  int64_t bytes = 0;          // ggml_nbytes: elements / block_size * type_size
};

struct Header {
  std::string source;
  uint32_t version = 0;
  int64_t file_size = 0;
  uint32_t alignment = 32;    // general.alignment, default GGUF_DEFAULT_ALIGNMENT
  int64_t data_offset = 0;    // start of the tensor data section
  int64_t header_bytes = 0;   // bytes read before the alignment padding
  std::vector<KeyValue> kv;
  std::vector<TensorInfo> tensors;

  const Value* find(std::string_view key) const;
  // Typed getters: nullopt when the key is absent, InputError when it has another type.
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;  // any integer or float type
  std::optional<bool> get_bool(std::string_view key) const;
  // An integer, or an integer array (llama.cpp get_key_or_arr: per-layer values).
  std::optional<std::vector<int64_t>> get_int_or_array(std::string_view key) const;
  // Element count of an array key (kept or elided); nullopt when absent, InputError if not an array.
  std::optional<uint64_t> array_count(std::string_view key) const;
};

// Where header bytes come from: a local file, a memory buffer, later a Range-reading client.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual const std::string& name() const = 0;
  virtual int64_t size() const = 0;
  // Reads exactly n bytes at off (the caller keeps off + n <= size()).
  virtual void read_at(int64_t off, char* dst, int64_t n) = 0;
};
std::unique_ptr<ByteSource> open_file_source(const std::string& path);
std::unique_ptr<ByteSource> memory_source(std::string_view bytes, std::string name);

Header read_header(ByteSource& src);
Header read_header_file(const std::string& path);
Header parse_header(std::string_view bytes, std::string_view source);

// Whether the first bytes are GGUF's magic (a file of either byte order).
bool has_gguf_magic(const std::string& path);

// "<prefix>-00001-of-00003.gguf" (llama.cpp llama_split_path's "%s-%05d-of-%05d.gguf").
struct SplitName {
  std::string prefix;  // path without the suffix
  int no = 0;          // 1-based
  int count = 0;
};
std::optional<SplitName> parse_split_name(std::string_view path);
std::string split_path(const std::string& prefix, int no, int count);

// The files of one GGUF model: a single file, every part of a split set named by any of its parts,
// or the one model in a folder (multimodal projectors, mmproj*.gguf, set aside). Parts in order,
// each checked against its split.no / split.count; tensor names unique across parts.
struct ModelFiles {
  std::vector<Header> parts;
  std::vector<std::string> notes;
  const Header& meta() const { return parts.front(); }  // the first part holds the metadata
};
ModelFiles read_model_files(const std::string& path);
// Every part of a split set, each header read by `read` (a local file, or a Hub file by Range
// requests), checked against each other as llama.cpp's loader checks them.
ModelFiles read_split_parts(const SplitName& sn, const std::function<Header(const std::string& part)>& read);
// Whether `path` names a GGUF model (a .gguf file, a file with GGUF magic, or a folder holding
// *.gguf and no config.json).
bool is_gguf_path(const std::string& path);

}  // namespace headroom::gguf
