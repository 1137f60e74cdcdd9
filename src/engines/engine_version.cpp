// The one parser of ENGINE@VERSION's version part (engine_version.h). Forms and their meaning are
// documented in docs/reference.md "Versions"; each engine's era_for_version maps the result.
#include "headroom/engine_version.h"

#include <cctype>
#include <cstdio>
#include <fmt/format.h>

#include "headroom/deployment.h"
#include "headroom/engine_traits.h"
#include "headroom/error.h"

namespace headroom {

namespace {

bool is_newest_word(std::string_view v) {
  return v.empty() || v == "latest" || v == "newest" || v == "main" || v == "unknown" || v == "nightly";
}

std::string example(EngineKind e) {
  if (e == EngineKind::LlamaCpp)
    return fmt::format("a llama.cpp build is written bNNNN or as its date, YYYY-MM-DD (e.g. llamacpp@{})", traits(e).version_example);
  return fmt::format("use e.g. {}", traits(e).version_example);
}

[[noreturn]] void unreadable(EngineKind e, std::string_view version) {
  if (e == EngineKind::LlamaCpp) fail_input("--engine", fmt::format("llamacpp@{}", version), example(e));
  fail_input("--engine", fmt::format("{}@{}", engine_kind_name(e), version), fmt::format("cannot read the version ({})", example(e)));
}

// bNNNN / BNNNN / NNNN, at most six digits.
bool read_build(std::string_view v, int& build) {
  if (!v.empty() && (v[0] == 'b' || v[0] == 'B')) v.remove_prefix(1);
  if (v.empty() || v.size() > 6) return false;
  for (char ch : v)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
  build = std::stoi(std::string(v));
  return true;
}

// a.b[.c...]: a < 10, b < 100, c < 100 (a suffix such as rc2 or .post1 after c is ignored).
bool read_release(std::string_view v, int& release) {
  int a = 0, b = 0, c = 0;
  const int n = std::sscanf(std::string(v).c_str(), "%d.%d.%d", &a, &b, &c);
  if (n < 2 || a < 0 || a >= 10 || b < 0 || b >= 100) return false;
  if (n < 3 || c < 0 || c >= 100) c = 0;
  release = a * 10000 + b * 100 + c;
  return true;
}

}  // namespace

EngineVersion parse_engine_version(EngineKind engine, std::string_view version) {
  EngineVersion r;
  r.text = std::string(version);
  if (is_newest_word(version)) {
    r.why = "newest known rules (no version given)";
    return r;
  }
  if (const auto at = version.find('@'); at != std::string_view::npos) {
    if (const auto ymd = dated_build_ymd(version)) {
      r.form = EngineVersion::Form::Dated;
      r.date = *ymd;
      r.why = fmt::format("build dated {}", version.substr(at + 1));
      return r;
    }
    // "1.2.0rc2@fork": the text before '@' decides; an undated "main@..." is the newest rules.
    EngineVersion head = parse_engine_version(engine, version.substr(0, at));
    if (head.form == EngineVersion::Form::Newest) head.why = "undated build: newest known rules";
    head.text = r.text;
    return head;
  }
  if (engine == EngineKind::LlamaCpp) {
    if (!read_build(version, r.build)) unreadable(engine, version);
    r.form = EngineVersion::Form::Build;
    return r;
  }
  // "0.1.devN+g<sha>": a source build without a tag; the version cannot be told from it.
  if (version.rfind("0.1.dev", 0) == 0) {
    r.why = fmt::format("untagged source build {}: newest known rules (version unknown)", version);
    return r;
  }
  if (!read_release(version, r.release)) unreadable(engine, version);
  r.form = EngineVersion::Form::Release;
  return r;
}

}  // namespace headroom
