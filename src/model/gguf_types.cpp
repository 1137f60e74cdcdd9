// ggml's tensor type table: elements per block and bytes per block of every type a GGUF file may
// hold. Mirrors ggml-org/ggml@d99724f2b141fed9e1a9f402213506c081433465 src/ggml.c type_traits
// (blck_size, type_size = sizeof(block_*)) with the block structs of src/ggml-common.h (QK_K 256).
#include <algorithm>

#include "headroom/error.h"
#include "headroom/gguf.h"

namespace headroom::gguf {
namespace {

using T = GgmlType;
constexpr int64_t kQK = 256;  // QK_K

// Bytes of each block, as ggml-common.h's static_asserts spell them.
const std::vector<TypeTraits> kTraits = {
    {T::F32, "f32", 1, 4},
    {T::F16, "f16", 1, 2},
    {T::Q4_0, "q4_0", 32, 2 + 16},                   // d + qs[QK4_0/2]
    {T::Q4_1, "q4_1", 32, 4 + 16},                   // d, m + qs[QK4_1/2]
    {T::Q5_0, "q5_0", 32, 2 + 4 + 16},               // d + qh[4] + qs[QK5_0/2]
    {T::Q5_1, "q5_1", 32, 4 + 4 + 16},               // d, m + qh[4] + qs[QK5_1/2]
    {T::Q8_0, "q8_0", 32, 2 + 32},                   // d + qs[QK8_0]
    {T::Q8_1, "q8_1", 32, 4 + 32},                   // d, s + qs[QK8_1]
    {T::Q2_K, "q2_K", kQK, 4 + kQK / 16 + kQK / 4},  // 84: d, dmin + scales + qs
    {T::Q3_K, "q3_K", kQK, 2 + kQK / 4 + kQK / 8 + 12},        // 110
    {T::Q4_K, "q4_K", kQK, 4 + 12 + kQK / 2},                  // 144
    {T::Q5_K, "q5_K", kQK, 4 + 12 + kQK / 2 + kQK / 8},        // 176
    {T::Q6_K, "q6_K", kQK, 2 + kQK / 16 + 3 * kQK / 4},        // 210
    {T::Q8_K, "q8_K", kQK, 4 + kQK + kQK / 16 * 2},            // 292: float d + qs + int16 bsums
    {T::IQ2_XXS, "iq2_xxs", kQK, 2 + kQK / 8 * 2},             // 66
    {T::IQ2_XS, "iq2_xs", kQK, 2 + kQK / 8 * 2 + kQK / 32},    // 74
    {T::IQ3_XXS, "iq3_xxs", kQK, 2 + 3 * (kQK / 8)},           // 98
    {T::IQ1_S, "iq1_s", kQK, 2 + kQK / 8 + kQK / 16},          // 50
    {T::IQ4_NL, "iq4_nl", 32, 2 + 16},                         // 18
    {T::IQ3_S, "iq3_s", kQK, 2 + 13 * (kQK / 32) + kQK / 64},  // 110
    {T::IQ2_S, "iq2_s", kQK, 2 + kQK / 4 + kQK / 16},          // 82
    {T::IQ4_XS, "iq4_xs", kQK, 2 + 2 + kQK / 64 + kQK / 2},    // 136
    {T::I8, "i8", 1, 1},
    {T::I16, "i16", 1, 2},
    {T::I32, "i32", 1, 4},
    {T::I64, "i64", 1, 8},
    {T::F64, "f64", 1, 8},
    {T::IQ1_M, "iq1_m", kQK, kQK / 8 + kQK / 16 + kQK / 32},   // 56
    {T::BF16, "bf16", 1, 2},
    {T::TQ1_0, "tq1_0", kQK, 2 + kQK / 64 + (kQK - 4 * kQK / 64) / 5},  // 54
    {T::TQ2_0, "tq2_0", kQK, 2 + kQK / 4},                     // 66
    {T::MXFP4, "mxfp4", 32, 1 + 16},                           // 17: E8M0 scale + qs[QK_MXFP4/2]
    {T::NVFP4, "nvfp4", 64, 4 + 32},                           // 36: 4 UE4M3 scales + qs[QK_NVFP4/2]
    {T::Q1_0, "q1_0", 128, 2 + 128 / 8},                       // 18
    {T::Q2_0, "q2_0", 64, 2 + 64 / 4},                         // 18
};

}  // namespace

const std::vector<TypeTraits>& all_type_traits() { return kTraits; }

const TypeTraits* type_traits(uint32_t id) {
  for (const auto& t : kTraits)
    if (static_cast<uint32_t>(t.type) == id) return &t;
  return nullptr;
}

const TypeTraits& type_traits(GgmlType t) {
  const TypeTraits* p = type_traits(static_cast<uint32_t>(t));
  if (!p) fail_input("ggml type table", std::to_string(static_cast<uint32_t>(t)), "not a ggml type");
  return *p;
}

std::string_view value_type_name(ValueType t) {
  static constexpr std::string_view kNames[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                                "bool", "str", "arr", "u64", "i64", "f64"};
  auto i = static_cast<uint32_t>(t);
  return i < std::size(kNames) ? kNames[i] : std::string_view("?");
}

}  // namespace headroom::gguf
