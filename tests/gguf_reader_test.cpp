// GGUF header reader: the ggml type table against ggml-common.h's block structs, every metadata
// value type (nested arrays too), tensor infos and the data offset, large vocabularies counted
// without being kept, and each hostile header one InputError naming the field.
#include <gtest/gtest.h>

#include <chrono>
#include <unistd.h>
#include <filesystem>

#include "gguf_writer.h"
#include "headroom/error.h"
#include "headroom/gguf.h"

using namespace headroom;
using namespace gguf_test;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::string& bytes) {
  try {
    gguf::parse_header(bytes, "t.gguf");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("headroom_gguf_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(GgufTypes, BlockSizesAndBytesMatchGgml) {
  // {id, block elements, block bytes}: the sizeof(block_*) of ggml-common.h, summed by hand.
  struct Row { uint32_t id; int64_t block, bytes; };
  const Row rows[] = {
      {0, 1, 4},      {1, 1, 2},      {30, 1, 2},     {28, 1, 8},     {24, 1, 1},    {25, 1, 2},    {26, 1, 4},
      {27, 1, 8},     {2, 32, 18},    {3, 32, 20},    {6, 32, 22},    {7, 32, 24},   {8, 32, 34},   {9, 32, 36},
      {10, 256, 84},  {11, 256, 110}, {12, 256, 144}, {13, 256, 176}, {14, 256, 210}, {15, 256, 292},
      {19, 256, 50},  {29, 256, 56},  {16, 256, 66},  {17, 256, 74},  {22, 256, 82}, {18, 256, 98},
      {21, 256, 110}, {20, 32, 18},   {23, 256, 136}, {34, 256, 54},  {35, 256, 66}, {39, 32, 17},
  };
  for (const auto& r : rows) {
    const gguf::TypeTraits* t = gguf::type_traits(r.id);
    ASSERT_NE(t, nullptr) << r.id;
    EXPECT_EQ(t->block_size, r.block) << t->name;
    EXPECT_EQ(t->type_size, r.bytes) << t->name;
  }
  // Bits per weight the K-quant docs quote: Q4_K 4.5, Q6_K 6.5625, Q2_K 2.625.
  EXPECT_DOUBLE_EQ(8.0 * 144 / 256, 4.5);
  EXPECT_EQ(gguf::type_traits(gguf::GgmlType::Q6_K).name, "q6_K");
  // Removed or undefined ids.
  for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 43u, 1000u}) EXPECT_EQ(gguf::type_traits(id), nullptr) << id;
}

TEST(GgufReader, EveryValueTypeExactly) {
  Writer w;
  w.kv("a.u8", U8, u8(200))
      .kv("a.i8", I8, u8(0xfb))  // -5
      .kv("a.u16", U16, u16(65535))
      .kv("a.i16", I16, u16(static_cast<uint16_t>(-300)))
      .kv("a.u32", U32, u32(4000000000u))
      .kv("a.i32", I32, i32(-70000))
      .kv("a.f32", F32, f32(0.5f))
      .kv("a.bool", BOOL, u8(1))
      .kv("a.str", STRING, str("héllo"))
      .kv("a.u64", U64, u64(18000000000000000000ull))
      .kv("a.i64", I64, i64(-9000000000000LL))
      .kv("a.f64", F64, f64(1e-300))
      .kv_arr("a.arr_u32", U32, 3, u32(1) + u32(2) + u32(3))
      .kv_arr("a.arr_str", STRING, 2, str("x") + str(""))
      .kv_arr("a.nested", ARRAY, 2, u32(I32) + u64(2) + i32(1) + i32(-2) + u32(I32) + u64(1) + i32(3))
      .kv_arr("a.empty", F32, 0, "");
  auto h = gguf::parse_header(w.bytes(), "t.gguf");
  EXPECT_EQ(h.version, 3u);
  ASSERT_EQ(h.kv.size(), 16u);
  EXPECT_EQ(*h.get_int("a.u8"), 200);
  EXPECT_EQ(*h.get_int("a.i8"), -5);
  EXPECT_EQ(*h.get_int("a.u16"), 65535);
  EXPECT_EQ(*h.get_int("a.i16"), -300);
  EXPECT_EQ(*h.get_int("a.u32"), 4000000000LL);
  EXPECT_EQ(*h.get_int("a.i32"), -70000);
  EXPECT_EQ(*h.get_float("a.f32"), 0.5);
  EXPECT_EQ(*h.get_bool("a.bool"), true);
  EXPECT_EQ(*h.get_string("a.str"), "héllo");
  EXPECT_EQ(h.find("a.u64")->u, 18000000000000000000ull);
  EXPECT_THROW(h.get_int("a.u64"), InputError);  // above INT64_MAX
  EXPECT_EQ(*h.get_int("a.i64"), -9000000000000LL);
  EXPECT_EQ(*h.get_float("a.f64"), 1e-300);
  EXPECT_EQ(*h.get_int_or_array("a.arr_u32"), (std::vector<int64_t>{1, 2, 3}));
  const gguf::Value* s = h.find("a.arr_str");
  ASSERT_EQ(s->items.size(), 2u);
  EXPECT_EQ(s->items[0].s, "x");
  EXPECT_EQ(s->items[1].s, "");
  const gguf::Value* n = h.find("a.nested");
  EXPECT_EQ(n->elem, gguf::ValueType::Array);
  ASSERT_EQ(n->items.size(), 2u);
  EXPECT_EQ(n->items[0].items[1].i, -2);
  EXPECT_EQ(n->items[1].count, 1u);
  EXPECT_EQ(n->items[1].items[0].i, 3);
  EXPECT_EQ(*h.array_count("a.empty"), 0u);
  EXPECT_FALSE(h.find("absent"));
  EXPECT_FALSE(h.get_int("absent"));
  // A key of another type: one line naming the key and both types.
  try {
    h.get_int("a.str");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "t.gguf: a.str: expected an integer, found str");
  }
}

TEST(GgufReader, TensorInfosAndDataOffsetByHand) {
  // No key/values, one F32 tensor "w" of 32 elements: header 4+4+8+8 = 24 bytes, tensor info
  // 8+1 (name) + 4 (n_dims) + 8 (ne0) + 4 (type) + 8 (offset) = 33: 57 bytes, data at 64.
  Writer w;
  w.tensor("w", {32}, T_F32, 128);
  std::string b = w.bytes();
  EXPECT_EQ(b.size(), 64u + 128u);
  auto h = gguf::parse_header(b, "t.gguf");
  EXPECT_EQ(h.header_bytes, 57);
  EXPECT_EQ(h.data_offset, 64);
  EXPECT_EQ(h.alignment, 32u);
  ASSERT_EQ(h.tensors.size(), 1u);
  EXPECT_EQ(h.tensors[0].elements, 32);
  EXPECT_EQ(h.tensors[0].bytes, 128);

  // general.alignment 64; Q4_K [256, 3] = 3 blocks of 144 B = 432, padded to 448 for the next.
  Writer a;
  a.alignment = 64;
  a.kv_u32("general.alignment", 64).tensor("q", {256, 3}, T_Q4_K, 432).tensor("e", {4, 2, 3}, T_BF16, 48);
  auto h2 = gguf::parse_header(a.bytes(), "t.gguf");
  EXPECT_EQ(h2.alignment, 64u);
  EXPECT_EQ(h2.data_offset % 64, 0);
  EXPECT_EQ(h2.tensors[0].type, gguf::GgmlType::Q4_K);
  EXPECT_EQ(h2.tensors[0].bytes, 432);
  EXPECT_EQ(h2.tensors[1].offset, 448u);
  EXPECT_EQ(h2.tensors[1].dims, (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(h2.tensors[1].elements, 24);
  EXPECT_EQ(h2.tensors[1].bytes, 48);
}

TEST(GgufReader, ReadsVersion2) {
  Writer w;
  w.version = 2;
  w.kv_str("general.architecture", "llama").tensor("t", {32}, T_Q8_0, 34);
  auto h = gguf::parse_header(w.bytes(), "t.gguf");
  EXPECT_EQ(h.version, 2u);
  EXPECT_EQ(h.tensors[0].bytes, 34);
}

TEST(GgufReader, LargeVocabularyCountedNotKept) {
  // 200k tokens of 6 bytes each plus 200k f32 scores: counted, skipped, fast.
  std::string toks, scores;
  for (int i = 0; i < 200000; ++i) toks += str("tok" + std::to_string(i % 1000).substr(0, 3));
  for (int i = 0; i < 200000; ++i) scores += f32(0);
  Writer w;
  w.kv_arr("tokenizer.ggml.tokens", STRING, 200000, toks).kv_arr("tokenizer.ggml.scores", F32, 200000, scores);
  fs::path d = temp_dir("vocab");
  w.write((d / "v.gguf").string());
  auto t0 = std::chrono::steady_clock::now();
  auto h = gguf::read_header_file((d / "v.gguf").string());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(*h.array_count("tokenizer.ggml.tokens"), 200000u);
  EXPECT_TRUE(h.find("tokenizer.ggml.tokens")->elided);
  EXPECT_TRUE(h.find("tokenizer.ggml.scores")->items.empty());
  EXPECT_THROW(h.get_int_or_array("tokenizer.ggml.scores"), InputError);
  EXPECT_LT(ms, 1000.0);  // well under 100 ms in a release build; generous for sanitizers
  fs::remove_all(d);
}

TEST(GgufReader, HugeSparseFileCostsOnlyItsHeader) {
  // A 256 GiB F16 tensor in a sparse file: only the header is read.
  Writer w;
  w.kv_str("general.architecture", "llama").tensor("big", {65536, 65536, 32}, T_F16, uint64_t{65536} * 65536 * 32 * 2);
  fs::path d = temp_dir("huge");
  std::string p = (d / "huge.gguf").string();
  w.write(p);
  auto h = gguf::read_header_file(p);
  EXPECT_EQ(h.tensors[0].bytes, int64_t{1} << 38);
  EXPECT_EQ(h.file_size, h.data_offset + (int64_t{1} << 38));
  fs::remove_all(d);
}

TEST(GgufReader, HostileHeadersAreOneLineEach) {
  auto base = [] {
    Writer w;
    w.kv_str("general.architecture", "llama");
    return w;
  };
  std::string ok = base().tensor("t", {32}, T_F32, 128).bytes();
  ASSERT_EQ(error_of(ok), "");

  EXPECT_EQ(error_of("GGML" + ok.substr(4)), "t.gguf: magic: 'GGML' is not GGUF's magic 'GGUF'");
  // A big-endian v3 file: the version bytes 00 00 00 03.
  std::string be = ok;
  be.replace(4, 4, std::string("\0\0\0\3", 4));
  EXPECT_NE(error_of(be).find("t.gguf: version: version 0x03000000 reads as a big-endian file"), std::string::npos) << error_of(be);
  Writer v1 = base();
  v1.version = 1;
  EXPECT_NE(error_of(v1.bytes()).find("GGUF v1 is no longer supported"), std::string::npos);
  Writer v4 = base();
  v4.version = 4;
  EXPECT_NE(error_of(v4.bytes()).find("version 4 is newer than 3"), std::string::npos);
  EXPECT_NE(error_of(ok.substr(0, 4) + u32(0)).find("version 0"), std::string::npos);

  // Counts no file of this size could hold.
  std::string huge_tensors = ok;
  huge_tensors.replace(8, 8, u64(uint64_t{1} << 62));
  EXPECT_NE(error_of(huge_tensors).find("tensor_count: 4611686018427387904 tensors cannot fit"), std::string::npos) << error_of(huge_tensors);
  std::string neg_kv = ok;
  neg_kv.replace(16, 8, u64(~uint64_t{0}));
  EXPECT_NE(error_of(neg_kv).find("metadata_kv_count: -1 key/values"), std::string::npos) << error_of(neg_kv);

  // A string length past the end of the file (the first key's length).
  std::string long_key = ok;
  long_key.replace(24, 8, u64(1000000000000ull));
  EXPECT_NE(error_of(long_key).find("key 0: string length 1000000000000 runs past the end of the file"), std::string::npos) << error_of(long_key);
  // An array count past the end, nested arrays too deep, an unknown value type.
  EXPECT_NE(error_of(base().kv_arr("x", U64, uint64_t{1} << 60, "").bytes()).find("x: array of 1152921504606846976 u64 elements cannot fit"), std::string::npos);
  std::string deep;
  for (int i = 0; i < 10; ++i) deep += u32(ARRAY) + u64(1);
  EXPECT_NE(error_of(base().kv_arr("d", ARRAY, 1, deep + u32(U8) + u64(0)).bytes()).find("d: arrays nested deeper than 8 levels"), std::string::npos);
  EXPECT_NE(error_of(base().kv("x", 13, u8(0)).bytes()).find("x: value type 13 is not a GGUF type"), std::string::npos);
  EXPECT_NE(error_of(base().kv("", U8, u8(0)).bytes()).find("key 1: empty key"), std::string::npos);
  EXPECT_NE(error_of(base().kv_str("general.architecture", "x").bytes()).find("general.architecture: duplicate key"), std::string::npos);

  // Tensor infos: dims that overflow, a negative dim, too many dims, an unknown type, a row not a
  // multiple of the block, an offset out of order, data past the end, a duplicate name.
  EXPECT_NE(error_of(base().tensor("o", {int64_t{1} << 32, int64_t{1} << 32}, T_F32, 0).header()).find("tensor 0 'o': element count overflows 64 bits"), std::string::npos);
  EXPECT_NE(error_of(base().tensor("n", {-4}, T_F32, 0).header()).find("tensor 0 'n': dimension 0 is negative (-4)"), std::string::npos);
  EXPECT_NE(error_of(base().tensor("f", {1, 1, 1, 1, 1}, T_F32, 4).bytes()).find("5 dimensions, ggml allows at most 4"), std::string::npos);
  EXPECT_NE(error_of(base().tensor("u", {32}, 31, 0).bytes()).find("tensor 0 'u': ggml type 31 is unknown or removed"), std::string::npos);
  EXPECT_NE(error_of(base().tensor("u", {32}, 99, 0).bytes()).find("ggml type 99 is unknown"), std::string::npos);
  EXPECT_NE(error_of(base().tensor("r", {33}, T_Q4_0, 18).bytes()).find("33 elements per row is not a multiple of q4_0's block size 32"), std::string::npos);
  EXPECT_NE(error_of(base().tensor("b", {int64_t{1} << 62}, T_F32, 0).header()).find("size in bytes overflows"), std::string::npos);
  std::string past = base().tensor("t", {32}, T_F32, 128).bytes();
  past.resize(past.size() - 1);
  EXPECT_NE(error_of(past).find("tensor 't': 128 bytes of data at offset 128 run past the end of the 255-byte file"), std::string::npos) << error_of(past);
  std::string offset = base().tensor("a", {8}, T_F32, 32).tensor("b", {8}, T_F32, 32).bytes();
  size_t at = offset.rfind(u32(T_F32) + u64(32));  // b's type + offset
  offset.replace(at + 4, 8, u64(64));
  EXPECT_NE(error_of(offset).find("tensor 'b': offset 64, expected 32"), std::string::npos) << error_of(offset);
  EXPECT_NE(error_of(base().tensor("a", {8}, T_F32, 32).tensor("a", {8}, T_F32, 32).bytes()).find("tensor 1 'a': duplicate tensor name"), std::string::npos);
  EXPECT_NE(error_of(base().tensor(std::string(64, 'n'), {8}, T_F32, 32).bytes()).find("name of 64 bytes is longer than ggml's limit of 63"), std::string::npos);

  // general.alignment: u32 and a power of two.
  EXPECT_NE(error_of(base().kv_u32("general.alignment", 48).bytes()).find("general.alignment: 48 is not a power of 2"), std::string::npos);
  EXPECT_NE(error_of(base().kv("general.alignment", U64, u64(32)).bytes()).find("general.alignment: must be of type u32 but is u64"), std::string::npos);

  // Every truncation of a valid file is one InputError, never a crash.
  std::string full = base().kv_arr("a", STRING, 2, str("x") + str("yz")).tensor("t", {32}, T_F32, 128).bytes();
  for (size_t n = 0; n < full.size(); ++n) EXPECT_NE(error_of(full.substr(0, n)), "") << n;
}

TEST(GgufFiles, SplitNames) {
  auto s = gguf::parse_split_name("/m/GLM-5.1-Q8_0-00003-of-00017.gguf");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->prefix, "/m/GLM-5.1-Q8_0");
  EXPECT_EQ(s->no, 3);
  EXPECT_EQ(s->count, 17);
  EXPECT_EQ(gguf::split_path(s->prefix, 1, 17), "/m/GLM-5.1-Q8_0-00001-of-00017.gguf");
  EXPECT_FALSE(gguf::parse_split_name("model-Q4_K_M.gguf"));
  EXPECT_FALSE(gguf::parse_split_name("x-00004-of-00003.gguf"));
  EXPECT_FALSE(gguf::parse_split_name("x-0000a-of-00003.gguf"));
}

TEST(GgufFiles, SplitSetReadsEveryPart) {
  fs::path d = temp_dir("split");
  auto write_set = [&](int tensors_second) {
    Writer a, b;
    a.kv_str("general.architecture", "llama").kv("split.no", U16, u16(0)).kv("split.count", U16, u16(2)).kv("split.tensors.count", I32, i32(3));
    a.tensor("x", {64}, T_F16, 128).tensor("y", {64}, T_F16, 128);
    b.kv("split.no", U16, u16(1)).kv("split.count", U16, u16(2)).kv("split.tensors.count", I32, i32(3));
    for (int i = 0; i < tensors_second; ++i) b.tensor("z" + std::to_string(i), {64}, T_F16, 128);
    a.write(gguf::split_path((d / "m").string(), 1, 2));
    b.write(gguf::split_path((d / "m").string(), 2, 2));
  };
  write_set(1);
  auto m = gguf::read_model_files(gguf::split_path((d / "m").string(), 2, 2));
  ASSERT_EQ(m.parts.size(), 2u);
  EXPECT_EQ(m.parts[0].tensors.size() + m.parts[1].tensors.size(), 3u);
  EXPECT_EQ(*m.meta().get_string("general.architecture"), "llama");
  auto by_folder = gguf::read_model_files(d.string());
  EXPECT_EQ(by_folder.parts.size(), 2u);

  write_set(2);  // 4 tensors, split.tensors.count says 3
  try {
    gguf::read_model_files(gguf::split_path((d / "m").string(), 1, 2));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("split.tensors.count: 3 tensors expected but 4 found in the 2 parts"), std::string::npos) << e.what();
  }
  fs::remove(gguf::split_path((d / "m").string(), 2, 2));
  try {
    gguf::read_model_files(gguf::split_path((d / "m").string(), 1, 2));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("split: part 2 of 2 is missing"), std::string::npos) << e.what();
  }
  fs::remove_all(d);
}
