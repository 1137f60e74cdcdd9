// Text helpers for the log readers: case-insensitive search, numbers with units, rank prefixes.
#include <cmath>
#include <cstring>
#include <climits>

#include "doctor/log_parse.h"
#include "headroom/units.h"

namespace headroom::logscan_detail {

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

size_t ifind(std::string_view hay, std::string_view needle, size_t from) {
  if (needle.empty()) return from <= hay.size() ? from : std::string_view::npos;
  if (hay.size() < needle.size() || from > hay.size() - needle.size()) return std::string_view::npos;
  const char a = lower(needle[0]);
  const char b = (a >= 'a' && a <= 'z') ? static_cast<char>(a - 32) : a;
  const size_t last = hay.size() - needle.size();
  for (size_t i = from; i <= last;) {
    // Jump to the next byte that can start the needle.
    const void* pa = std::memchr(hay.data() + i, a, last - i + 1);
    const void* pb = (a == b) ? nullptr : std::memchr(hay.data() + i, b, last - i + 1);
    const char* p = static_cast<const char*>(pa);
    if (pb && (!p || pb < static_cast<const void*>(p))) p = static_cast<const char*>(pb);
    if (!p) return std::string_view::npos;
    i = static_cast<size_t>(p - hay.data());
    size_t k = 1;
    while (k < needle.size() && lower(hay[i + k]) == lower(needle[k])) ++k;
    if (k == needle.size()) return i;
    ++i;
  }
  return std::string_view::npos;
}

std::optional<std::string_view> after(std::string_view s, std::string_view key) {
  size_t p = ifind(s, key);
  if (p == std::string_view::npos) return std::nullopt;
  return s.substr(p + key.size());
}

void skip_spaces(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
}

bool take_number(std::string_view& s, double& v, bool commas) {
  skip_spaces(s);
  std::string buf;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) buf.push_back(s[i++]);
  bool digits = false, dot = false;
  while (i < s.size() && buf.size() < 40) {
    char ch = s[i];
    if (ch >= '0' && ch <= '9') {
      buf.push_back(ch);
      digits = true;
    } else if (ch == '.' && !dot && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9') {
      buf.push_back(ch);
      dot = true;
    } else if (ch == ',' && commas && digits && !dot && i + 3 < s.size() && is_digit(s[i + 1]) &&
               is_digit(s[i + 2]) && is_digit(s[i + 3]) && (i + 4 == s.size() || !is_digit(s[i + 4]))) {
      // thousands separator: exactly three digits follow
    } else {
      break;
    }
    ++i;
  }
  if (!digits) return false;
  char* end = nullptr;
  double d = std::strtod(buf.c_str(), &end);
  if (!std::isfinite(d)) return false;
  v = d;
  s.remove_prefix(i);
  return true;
}

bool take_int(std::string_view& s, int64_t& v, bool commas) {
  std::string_view t = s;
  double d = 0;
  if (!take_number(t, d, commas)) return false;
  if (std::fabs(d) > 9e18) return false;
  v = static_cast<int64_t>(d);
  s = t;
  return true;
}

int64_t to_bytes(double v, int64_t unit) {
  double b = v * static_cast<double>(unit);
  if (!std::isfinite(b) || std::fabs(b) > 9.0e18) return v < 0 ? INT64_MIN / 2 : INT64_MAX / 2;
  return static_cast<int64_t>(std::llround(b));
}

bool take_size(std::string_view& s, int64_t& bytes, int64_t default_unit) {
  std::string_view t = s;
  double v = 0;
  if (!take_number(t, v)) return false;
  std::string_view u = t;
  skip_spaces(u);
  int64_t unit = 0;
  size_t ulen = 0;
  auto is = [&](std::string_view w) {
    if (u.size() < w.size()) return false;
    for (size_t i = 0; i < w.size(); ++i)
      if (lower(u[i]) != lower(w[i])) return false;
    // the unit must end there
    return u.size() == w.size() || !((u[w.size()] >= 'a' && u[w.size()] <= 'z') || (u[w.size()] >= 'A' && u[w.size()] <= 'Z'));
  };
  if (is("GiB") || is("GB")) { unit = GiB; ulen = is("GiB") ? 3 : 2; }
  else if (is("MiB") || is("MB")) { unit = MiB; ulen = is("MiB") ? 3 : 2; }
  else if (is("KiB") || is("KB")) { unit = KiB; ulen = is("KiB") ? 3 : 2; }
  else if (is("TiB") || is("TB")) { unit = GiB * 1024; ulen = is("TiB") ? 3 : 2; }
  else if (is("bytes")) { unit = 1; ulen = 5; }
  else if (is("G")) { unit = GiB; ulen = 1; }   // "1.5G", or "43.4 G" cut by the end of a line
  else if (is("M")) { unit = MiB; ulen = 1; }
  else if (is("B")) { unit = 1; ulen = 1; }
  if (unit == 0) {
    if (default_unit <= 0) return false;
    unit = default_unit;
    u = t;
  } else {
    u.remove_prefix(ulen);
  }
  bytes = to_bytes(v, unit);
  s = u;
  return true;
}

std::optional<int64_t> size_after(std::string_view s, std::string_view key, int64_t default_unit) {
  auto a = after(s, key);
  if (!a) return std::nullopt;
  int64_t b = 0;
  if (!take_size(*a, b, default_unit)) return std::nullopt;
  return b;
}

std::optional<double> num_after(std::string_view s, std::string_view key, bool commas) {
  auto a = after(s, key);
  if (!a) return std::nullopt;
  double v = 0;
  if (!take_number(*a, v, commas)) return std::nullopt;
  return v;
}

std::optional<int64_t> int_after(std::string_view s, std::string_view key, bool commas) {
  auto a = after(s, key);
  if (!a) return std::nullopt;
  int64_t v = 0;
  if (!take_int(*a, v, commas)) return std::nullopt;
  return v;
}

bool take_int_list(std::string_view& s, std::vector<int64_t>& out) {
  std::string_view t = s;
  skip_spaces(t);
  if (t.empty() || t.front() != '[') return false;
  t.remove_prefix(1);
  std::vector<int64_t> v;
  while (true) {
    skip_spaces(t);
    if (!t.empty() && t.front() == ']') {
      t.remove_prefix(1);
      break;
    }
    int64_t x = 0;
    if (!take_int(t, x)) break;  // a list cut by the end of the line keeps what was read
    if (v.size() < 4096) v.push_back(x);
    skip_spaces(t);
    if (!t.empty() && t.front() == ',') t.remove_prefix(1);
  }
  if (v.empty()) return false;
  out = std::move(v);
  s = t;
  return true;
}

void strip_ansi(std::string& s) {
  size_t w = 0;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\x1b') {
      ++i;
      if (i < s.size() && s[i] == '[') {  // CSI: parameters then a final byte 0x40..0x7e
        ++i;
        while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
        if (i < s.size()) ++i;
      } else if (i < s.size()) {
        ++i;  // two-byte escape
      }
      continue;
    }
    s[w++] = s[i++];
  }
  s.resize(w);
}

void strip_markdown(std::string& s) {
  size_t i = 0;
  // block quotes: up to 3 spaces, then '>' markers each followed by an optional space ("> > text")
  size_t j = 0;
  while (j < s.size() && j < 3 && s[j] == ' ') ++j;
  bool quoted = false;
  while (j < s.size() && s[j] == '>' && !(j + 1 < s.size() && s[j + 1] == '>' && j + 2 < s.size() && s[j + 2] == '>')) {
    quoted = true;  // ">>> " is a Python prompt, not a quote
    ++j;
    if (j < s.size() && s[j] == ' ') ++j;
    while (j < s.size() && s[j] == ' ' && j + 1 < s.size() && s[j + 1] == '>') ++j;
  }
  if (quoted) i = j;
  // a code fence that opens on the line: "```", "```text", "~~~"
  if (s.compare(i, 3, "```") == 0 || s.compare(i, 3, "~~~") == 0) {
    i += 3;
    while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || is_digit(s[i]) || s[i] == '-')) ++i;
  }
  if (i > 0) s.erase(0, i);
}

// "TP3" at t → 3; -1 when not that shape.
static int tag_num(std::string_view t, std::string_view tag) {
  if (t.size() <= tag.size() || t.substr(0, tag.size()) != tag) return -1;
  int v = 0;
  size_t i = tag.size();
  if (!is_digit(t[i])) return -1;
  while (i < t.size() && is_digit(t[i]) && v < 1000000) v = v * 10 + (t[i++] - '0');
  return v;
}

// Reads "TPn"/"DPn"/"EPn"/"PPn" tags separated by spaces or '_'. Returns true if any.
static bool read_tags(std::string_view s, LogRank& r) {
  bool any = false;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '_')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '_') ++j;
    std::string_view tok = s.substr(i, j - i);
    int v;
    if ((v = tag_num(tok, "TP")) >= 0) { r.tp = v; any = true; }
    else if ((v = tag_num(tok, "DP")) >= 0) { r.dp = v; any = true; }
    else if ((v = tag_num(tok, "EP")) >= 0) { r.ep = v; any = true; }
    else if ((v = tag_num(tok, "PP")) >= 0) { r.pp = v; any = true; }
    i = j;
  }
  return any;
}

LogRank parse_rank(std::string_view line) {
  LogRank r;
  std::string_view head = line.substr(0, std::min<size_t>(line.size(), 200));
  // vLLM process prefix "(Name pid=N[, ip=..])".
  for (size_t p = head.find('('); p != std::string_view::npos; p = head.find('(', p + 1)) {
    size_t q = head.find(')', p);
    if (q == std::string_view::npos) break;
    std::string_view in = head.substr(p + 1, q - p - 1);
    size_t pid = in.find("pid=");
    if (pid == std::string_view::npos) continue;
    std::string_view name = in.substr(0, pid);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (auto w = name.find("rank="); w != std::string_view::npos) {
      std::string_view t = name.substr(w + 5);
      int64_t v = 0;
      if (take_int(t, v)) r.worker = static_cast<int>(v);
    }
    if (auto u = name.find('_'); u != std::string_view::npos) {
      std::string_view tags = name.substr(u + 1);
      if (!read_tags(tags, r)) {
        // "EngineCore_0": the DP index
        int64_t v = 0;
        std::string_view t = tags;
        if (take_int(t, v) && t.empty()) r.dp = static_cast<int>(v);
      }
    }
    // A process name without a rank or TP/DP tags ("RayWorkerWrapper", "VllmWorkerProcess",
    // "EngineCore") is one process per pid (Ray workers on other nodes add ", ip=..."): the pid
    // tells them apart, so that one worker's stage is not overwritten by another's lines.
    if (r.worker < 0 && r.tp < 0 && r.dp < 0 && r.pp < 0 && r.ep < 0) r.label = std::string(in);
    else r.label = std::string(name);
    return r;
  }
  // Brackets: SGLang "[time TP0]" / "[TP4]" / "[gpu_id=0]", PyTorch "[rank1]:".
  for (size_t p = head.find('['); p != std::string_view::npos; p = head.find('[', p + 1)) {
    size_t q = head.find(']', p);
    if (q == std::string_view::npos) break;
    std::string_view in = head.substr(p + 1, q - p - 1);
    if (in.size() > 60) continue;
    if (in.size() > 4 && in.substr(0, 4) == "rank" && is_digit(in[4])) {
      int64_t v = 0;
      std::string_view t = in.substr(4);
      if (take_int(t, v) && t.empty()) {
        r.worker = static_cast<int>(v);
        r.label = std::string(in);
        return r;
      }
    }
    for (std::string_view key : {std::string_view("gpu_id="), std::string_view("gpu=")}) {
      if (in.substr(0, key.size()) == key) {
        int64_t v = 0;
        std::string_view t = in.substr(key.size());
        if (take_int(t, v) && t.empty()) {
          r.tp = static_cast<int>(v);
          r.label = "TP" + std::to_string(v);
          return r;
        }
      }
    }
    // The tags are the last words of the bracket: "2025-10-16 09:06:09 DP1 TP3 EP3".
    size_t first_tag = std::string_view::npos;
    for (std::string_view tag : {"TP", "DP", "EP", "PP"}) {
      for (size_t k = in.find(tag); k != std::string_view::npos; k = in.find(tag, k + 1)) {
        if ((k == 0 || in[k - 1] == ' ') && k + 2 < in.size() && is_digit(in[k + 2])) {
          first_tag = std::min(first_tag, k);
          break;
        }
      }
    }
    if (first_tag != std::string_view::npos) {
      LogRank t;
      if (read_tags(in.substr(first_tag), t)) {
        t.label = std::string(in.substr(first_tag));
        return t;
      }
    }
  }
  return r;
}


static bool is_month_abbrev(std::string_view m) {
  for (std::string_view x : {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"})
    if (m == x) return true;
  return false;
}

std::string_view message_body(std::string_view s) {
  // compose "name-1  | "
  if (size_t bar = s.find(" | "); bar != std::string_view::npos && bar < 64) {
    bool name = bar > 0;
    for (size_t i = 0; i < bar && name; ++i) {
      char c = s[i];
      name = (c == ' ' || c == '-' || c == '_' || c == '.' || is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
    }
    if (name) s.remove_prefix(bar + 3);
  }
  for (int guard = 0; guard < 6; ++guard) {
    skip_spaces(s);
    if (s.empty()) break;
    // `docker logs -t` / `kubectl logs --timestamps`: "2025-06-01T10:00:00.123456789Z " (RFC 3339).
    if (s.size() > 20 && is_digit(s[0]) && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':') {
      size_t k = 19;
      while (k < s.size() && s[k] != ' ' && k < 40) ++k;
      if (k < s.size() && s[k] == ' ') {
        s.remove_prefix(k + 1);
        continue;
      }
    }
    // journald / syslog: "Jun 01 10:00:00 gpu-node-3 vllm[1234]: " (month, day, time, host, ident).
    if (s.size() > 20 && s[3] == ' ' && s[6] == ' ' && s[9] == ':' && s[12] == ':' && s[15] == ' ' &&
        is_month_abbrev(s.substr(0, 3))) {
      size_t host_end = s.find(' ', 16);
      size_t colon = host_end == std::string_view::npos ? host_end : s.find(": ", host_end + 1);
      if (colon != std::string_view::npos && colon < 120 && s.substr(host_end + 1, colon - host_end - 1).find(' ') == std::string_view::npos) {
        s.remove_prefix(colon + 2);
        continue;
      }
    }
    if (s.front() == '[') {  // "[2026-01-28T23:59:42Z]", "[2025-10-16 09:06:09 TP0]", "[rank1]:", "[core.py:708]"
      size_t q = s.find(']');
      if (q == std::string_view::npos || q > 80) break;
      s.remove_prefix(q + 1);
      if (!s.empty() && s.front() == ':') s.remove_prefix(1);
      continue;
    }
    if (s.front() == '(') {
      size_t q = s.find(')');
      if (q == std::string_view::npos || q > 120 || s.substr(0, q).find("pid=") == std::string_view::npos) break;
      s.remove_prefix(q + 1);
      continue;
    }
    // vLLM "INFO 08-06 10:25:36 " / "ERROR 04-27 11:08:32 " (the [file:line] bracket follows).
    bool level = false;
    for (std::string_view lv : {"DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL "}) {
      if (s.substr(0, lv.size()) == lv) {
        std::string_view t = s.substr(lv.size());
        skip_spaces(t);
        // date "MM-DD HH:MM:SS"
        if (t.size() >= 14 && is_digit(t[0]) && t[2] == '-' && t[5] == ' ' && t[8] == ':') {
          t.remove_prefix(14);
          size_t k = 0;  // fractional seconds
          while (k < t.size() && (is_digit(t[k]) || t[k] == '.' || t[k] == ',')) ++k;
          t.remove_prefix(k);
        }
        s = t;
        level = true;
        break;
      }
    }
    if (!level) break;
  }
  return s;
}

}  // namespace headroom::logscan_detail
