// One reading of the VERSION in ENGINE@VERSION for every engine (docs/reference.md "Versions"):
// the newest rules, a release, a dated build, or a llama.cpp build number. Each engine maps the
// result onto its own rule table (its era_for_version); no engine parses version text itself.
#pragma once
#include <string>
#include <string_view>

#include "headroom/parallel.h"

namespace headroom {

struct EngineVersion {
  enum class Form {
    Newest,    // "", latest, newest, main, unknown, nightly, an undated build or an untagged source build
    Release,   // 0.10.2, 1.2.0rc2, 0.5.4.post1: release = a*10000 + b*100 + c
    Dated,     // LABEL@YYYY[-MM[-DD]]: date = yyyymmdd (a bare year reads as 28 December, a month as its 28th)
    Build,     // llama.cpp bNNNN: build = NNNN
  };
  Form form = Form::Newest;
  int release = 0, date = 0, build = 0;
  std::string text;  // the version as given
  std::string why;   // how it was read, for the era's reason line ("" for a plain release)
};

// Throws InputError ("--engine", "<engine>@<version>", "cannot read the version ...") for text
// that is none of the forms above (for llama.cpp: anything but bNNNN or the newest words).
EngineVersion parse_engine_version(EngineKind engine, std::string_view version);

}  // namespace headroom
