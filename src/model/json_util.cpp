// Defensive JSON reading for model files (see json_util.h).
#include "model/json_util.h"

#include <cmath>
#include <fmt/format.h>

#include "headroom/error.h"

namespace headroom::model_detail {

json parse_json(std::string_view text, std::string_view source) {
  // Guard nesting depth before handing the text to the recursive parser.
  int depth = 0, max_depth = 0;
  bool in_str = false, esc = false;
  for (char c : text) {
    if (in_str) {
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '{' || c == '[') max_depth = std::max(max_depth, ++depth);
    else if (c == '}' || c == ']') --depth;
  }
  if (max_depth > 64) fail_input(source, "json", "nesting deeper than 64 levels");
  // Python's json module writes Infinity / -Infinity / NaN (e.g. Nemotron-H time_step_limit);
  // read them as null outside strings, like a lenient JSON reader.
  std::string fixed;
  std::string_view body = text;
  if (text.find("Infinity") != std::string_view::npos || text.find("NaN") != std::string_view::npos) {
    fixed.reserve(text.size());
    in_str = esc = false;
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (in_str) {
        if (esc) esc = false;
        else if (c == '\\') esc = true;
        else if (c == '"') in_str = false;
        fixed += c;
        continue;
      }
      if (c == '"') in_str = true;
      auto word = [&](std::string_view w) { return text.substr(i, w.size()) == w; };
      if (word("-Infinity")) { fixed += "null"; i += 8; continue; }
      if (word("Infinity")) { fixed += "null"; i += 7; continue; }
      if (word("NaN")) { fixed += "null"; i += 2; continue; }
      fixed += c;
    }
    body = fixed;
  }
  text = body;
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Re-parse with exceptions only to get the position of the error for the message.
    try {
      [[maybe_unused]] json again = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {  // parse_error, or out_of_range 406 for a number like 1e309
      std::string what = e.what();
      auto p = what.find("parse error");
      fail_input(source, "json", p == std::string::npos ? what : what.substr(p));
    }
    fail_input(source, "json", "malformed JSON");
  }
  return j;
}

const json* find_key(const std::vector<const json*>& scopes, std::string_view key) {
  for (const json* s : scopes) {
    if (!s || !s->is_object()) continue;
    auto it = s->find(std::string(key));
    if (it != s->end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

std::optional<int64_t> get_int(const std::vector<const json*>& scopes, std::string_view key,
                               std::string_view source, int64_t min, int64_t max) {
  const json* v = find_key(scopes, key);
  if (!v) return std::nullopt;
  int64_t out = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail_input(source, key, "value too large");
    out = v->get<int64_t>();
  } else if (v->is_number_float()) {
    double d = v->get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9e15)
      fail_input(source, key, fmt::format("must be an integer, got {}", v->dump()));
    out = static_cast<int64_t>(d);
  } else {
    fail_input(source, key, fmt::format("must be an integer, got {}", v->dump().substr(0, 40)));
  }
  if (out < min || out > max) fail_input(source, key, fmt::format("{} is outside [{}, {}]", out, min, max));
  return out;
}

std::optional<double> get_double(const std::vector<const json*>& scopes, std::string_view key, std::string_view source) {
  const json* v = find_key(scopes, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) fail_input(source, key, fmt::format("must be a number, got {}", v->dump().substr(0, 40)));
  return v->get<double>();
}

std::optional<bool> get_bool(const std::vector<const json*>& scopes, std::string_view key, std::string_view source) {
  const json* v = find_key(scopes, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) fail_input(source, key, fmt::format("must be true or false, got {}", v->dump().substr(0, 40)));
  return v->get<bool>();
}

std::optional<std::string> get_string(const std::vector<const json*>& scopes, std::string_view key, std::string_view source) {
  const json* v = find_key(scopes, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) fail_input(source, key, fmt::format("must be a string, got {}", v->dump().substr(0, 40)));
  return v->get<std::string>();
}

std::vector<std::string> get_string_list(const json* value, std::string_view key, std::string_view source) {
  std::vector<std::string> out;
  if (!value || value->is_null()) return out;
  if (value->is_string()) {  // a single pattern given as a string
    out.push_back(value->get<std::string>());
    return out;
  }
  if (!value->is_array()) fail_input(source, key, "must be a list of strings");
  for (const auto& e : *value) {
    if (!e.is_string()) fail_input(source, key, "must be a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace headroom::model_detail
