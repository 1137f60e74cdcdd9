// UTF-8 validation and repair (RFC 3629 well-formed sequences).
#include "headroom/utf8.h"

namespace headroom {

namespace {

// Length of the valid sequence starting at s[i], or 0 when it is not one.
size_t sequence_at(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;         // no overlongs
    else if (c == 0xED) hi = 0x9F;    // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;    // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = sequence_at(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string valid_utf8(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t n = sequence_at(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for the one bad byte; the next byte starts afresh
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string_view utf8_prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  // Back off over continuation bytes to the start of the character that crosses the cut.
  size_t back = 0;
  while (end > 0 && back < 3 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end, ++back;
  return s.substr(0, end);
}

}  // namespace headroom
