// Defensive JSON reading for model files: parse with a depth/size guard and typed getters
// that turn every wrong type or absurd value into one InputError naming the file and key.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::model_detail {

using json = nlohmann::json;

// Parses JSON text; malformed/truncated text or nesting deeper than 64 -> InputError(source, "json", ...).
json parse_json(std::string_view text, std::string_view source);

// Looks a key up in a list of objects (e.g. text_config first, then the root); nullptr when absent or null.
const json* find_key(const std::vector<const json*>& scopes, std::string_view key);

// Integer value of a key (absent/null -> nullopt). Non-integers and values outside [min, max]
// -> InputError(source, key, ...).
std::optional<int64_t> get_int(const std::vector<const json*>& scopes, std::string_view key,
                               std::string_view source, int64_t min, int64_t max);
std::optional<double> get_double(const std::vector<const json*>& scopes, std::string_view key, std::string_view source);
std::optional<bool> get_bool(const std::vector<const json*>& scopes, std::string_view key, std::string_view source);
std::optional<std::string> get_string(const std::vector<const json*>& scopes, std::string_view key, std::string_view source);
// List of strings (absent/null -> empty); a non-list or non-string element -> InputError.
std::vector<std::string> get_string_list(const json* value, std::string_view key, std::string_view source);

}  // namespace headroom::model_detail
