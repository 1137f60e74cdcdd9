// The one error type for bad input (exit code 2): names the file or source, the field and
// the problem, and prints as a single line "source: field: problem".
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace headroom {

class InputError : public std::runtime_error {
 public:
  InputError(std::string source, std::string field, std::string problem);
  const std::string& source() const { return source_; }
  const std::string& field() const { return field_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string source_, field_, problem_;
};

// Throws InputError. The only place that does, so the message format stays one line.
[[noreturn]] void fail_input(std::string_view source, std::string_view field, std::string_view problem);

}  // namespace headroom
