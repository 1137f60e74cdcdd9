// Text from any bytes (issue 31): logs and configs arrive with invalid UTF-8, and lines cut at a
// byte cap end mid-character; JSON output (nlohmann throws type_error 316) and the text report
// must still be valid UTF-8.
#pragma once
#include <string>
#include <string_view>

namespace headroom {

// True when `s` is valid UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view s);
// `s` with each invalid or truncated sequence replaced by U+FFFD; unchanged when already valid.
std::string valid_utf8(std::string_view s);
// The longest prefix of at most `max_bytes` bytes that does not end inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, size_t max_bytes);

}  // namespace headroom
