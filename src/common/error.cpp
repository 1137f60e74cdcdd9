// InputError: the single bad-input error, one line "source: field: problem".
#include "headroom/error.h"

namespace headroom {

static std::string join_message(const std::string& s, const std::string& f, const std::string& p) {
  std::string m = s;
  if (!f.empty()) m += (m.empty() ? "" : ": ") + f;
  m += (m.empty() ? "" : ": ") + p;
  // One line, always: bad input may carry newlines or control bytes.
  for (char& c : m)
    if (c == '\n' || c == '\r' || (static_cast<unsigned char>(c) < 0x20 && c != '\t')) c = ' ';
  return m;
}

InputError::InputError(std::string source, std::string field, std::string problem, Kind kind)
    : std::runtime_error(join_message(source, field, problem)),
      source_(std::move(source)), field_(std::move(field)), problem_(std::move(problem)), kind_(kind) {}

void fail_input(std::string_view source, std::string_view field, std::string_view problem) {
  throw InputError(std::string(source), std::string(field), std::string(problem));
}

void fail_unknown_option(std::string_view source, std::string_view option, std::string_view problem) {
  throw InputError(std::string(source), std::string(option), std::string(problem), InputError::Kind::UnknownOption);
}

}  // namespace headroom
