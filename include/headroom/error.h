// The one error type for bad input (exit code 2): names the file or source, the field and
// the problem, and prints as a single line "source: field: problem".
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace headroom {

class InputError : public std::runtime_error {
 public:
  // UnknownOption: a command-line option the engine (or this engine version) does not accept at
  // all -- wrong whatever the layout, so a search over layouts stops at it instead of rejecting each.
  enum class Kind { Value, UnknownOption };
  InputError(std::string source, std::string field, std::string problem, Kind kind = Kind::Value);
  const std::string& source() const { return source_; }
  const std::string& field() const { return field_; }
  const std::string& problem() const { return problem_; }
  Kind kind() const { return kind_; }

 private:
  std::string source_, field_, problem_;
  Kind kind_;
};

// Throw InputError. The only places that do, so the message format stays one line.
[[noreturn]] void fail_input(std::string_view source, std::string_view field, std::string_view problem);
[[noreturn]] void fail_unknown_option(std::string_view source, std::string_view option, std::string_view problem);

}  // namespace headroom
