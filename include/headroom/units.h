// Byte units and printing. Bytes are int64 everywhere; GiB/MiB exist only for printing.
// SGLang prints "GB" meaning 2^30 bytes; vLLM prints GiB; both with two decimals.
#pragma once
#include <cstdint>
#include <string>

namespace headroom {

inline constexpr int64_t KiB = int64_t{1} << 10;
inline constexpr int64_t MiB = int64_t{1} << 20;
inline constexpr int64_t GiB = int64_t{1} << 30;

inline double to_gib(int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(GiB); }
inline double to_mib(int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(MiB); }
// Bytes from a GiB figure as an engine computes them: int(x * 2^30), truncating toward zero.
inline int64_t gib_to_bytes(double gib) { return static_cast<int64_t>(gib * static_cast<double>(GiB)); }

// "12.34" (two decimals, as SGLang/vLLM/PyTorch print GiB).
std::string gib2(int64_t bytes);
// Human form: "12.34 GiB", "512.00 MiB", "-1.20 GiB".
std::string human_bytes(int64_t bytes);
// Parses "94.97GiB", "97887MiB", "80GB" (GB = 10^9), "123456" (bytes). Throws InputError.
int64_t parse_bytes(std::string_view text, std::string_view source, std::string_view field);

}  // namespace headroom
