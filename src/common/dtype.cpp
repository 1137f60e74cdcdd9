// Storage dtypes: sizes and names as safetensors and Hugging Face configs spell them.
#include "headroom/dtype.h"

#include <array>

namespace headroom {

namespace {
struct DTypeRow { DType t; std::string_view name; int size; };
constexpr std::array<DTypeRow, 13> kRows{{
    {DType::F64, "F64", 8},         {DType::F32, "F32", 4},         {DType::BF16, "BF16", 2},
    {DType::F16, "F16", 2},         {DType::F8_E4M3, "F8_E4M3", 1}, {DType::F8_E5M2, "F8_E5M2", 1},
    {DType::F8_E8M0, "F8_E8M0", 1}, {DType::I64, "I64", 8},         {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},         {DType::I8, "I8", 1},           {DType::U8, "U8", 1},
    {DType::BOOL, "BOOL", 1},
}};
}  // namespace

int dtype_size(DType t) {
  for (const auto& r : kRows) if (r.t == t) return r.size;
  return 0;
}

std::string_view dtype_name(DType t) {
  for (const auto& r : kRows) if (r.t == t) return r.name;
  return "UNKNOWN";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (const auto& r : kRows) if (r.name == s) return r.t;
  if (s == "bfloat16") return DType::BF16;
  if (s == "float16" || s == "half") return DType::F16;
  if (s == "float32" || s == "float") return DType::F32;
  if (s == "float64") return DType::F64;
  return std::nullopt;
}

}  // namespace headroom
