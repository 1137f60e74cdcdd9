// headroom's version string.
#pragma once
namespace headroom {
inline constexpr const char* kVersion = "0.1.0";
}
