// Access to the data files embedded in the binary at build time (data/ in the repo).
#pragma once
#include <optional>
#include <string_view>
#include <vector>

namespace headroom {

// Contents of data/<path>, or nullopt.
std::optional<std::string_view> embedded_file(std::string_view path);
// Paths of all embedded files whose path starts with prefix.
std::vector<std::string_view> embedded_files(std::string_view prefix = {});

}  // namespace headroom
