// Storage data types of checkpoint tensors (safetensors names) and KV-cache element types.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace headroom {

enum class DType : uint8_t { F64, F32, BF16, F16, F8_E4M3, F8_E5M2, F8_E8M0, I64, I32, I16, I8, U8, BOOL, Unknown };

// Bytes per element (U8 also stores packed FP4 pairs and MXFP4 blocks).
int dtype_size(DType t);
// Safetensors spelling: "BF16", "F8_E4M3", ...
std::string_view dtype_name(DType t);
// Accepts safetensors names and HF torch_dtype names ("bfloat16", "float16", "float32").
std::optional<DType> parse_dtype(std::string_view s);

}  // namespace headroom
