// Lookups over an enum's one name table ({Enum::X, "x"} rows): the name of a value and the value
// of a name, shared by the stage, outcome, cause and stage-basis tables.
#pragma once
#include <optional>
#include <string_view>
#include <utility>

namespace headroom {

template <class E, size_t N>
std::string_view name_in(const std::pair<E, std::string_view> (&table)[N], E value, std::string_view fallback) {
  for (const auto& row : table)
    if (row.first == value) return row.second;
  return fallback;
}

template <class E, size_t N>
std::optional<E> parse_in(const std::pair<E, std::string_view> (&table)[N], std::string_view text) {
  for (const auto& row : table)
    if (row.second == text) return row.first;
  return std::nullopt;
}

}  // namespace headroom
