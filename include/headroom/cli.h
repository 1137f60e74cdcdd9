// Command-line plumbing shared by every verb (and the web API, which passes the same
// argument lists): the option parser, the verb table and the exit-code contract.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// Exit codes (CONTRACT.md): 0 ok/fits, 1 forecast says it fails, 2 bad input, 3 internal error.
inline constexpr int kExitOk = 0, kExitFails = 1, kExitBadInput = 2, kExitInternal = 3;

// Parsed "--name value", "--name=value", bare boolean flags and positionals.
// Boolean flags are those in kBooleanFlags (engine and headroom flags that take no value).
class Args {
 public:
  static Args parse(const std::vector<std::string>& argv);

  bool has(std::string_view name) const;
  std::optional<std::string> get(std::string_view name) const;  // last value given
  std::vector<std::string> get_all(std::string_view name) const;
  std::string get_or(std::string_view name, std::string_view fallback) const;
  // Typed getters: throw InputError("command line", name, problem) when malformed/out of range.
  std::optional<int64_t> get_int(std::string_view name, int64_t min, int64_t max) const;
  std::optional<double> get_double(std::string_view name, double min, double max) const;

  const std::vector<std::string>& positionals() const { return positionals_; }
  // Options in the order given: (name with leading dashes, value; "true" for bare flags).
  const std::vector<std::pair<std::string, std::string>>& options() const { return options_; }
  // The same options with each name passed through `rename` (vllm_flag_spelling).
  Args renamed(std::string (*rename)(std::string_view)) const;
  // Throws InputError for any option not in `allowed` (names with leading dashes).
  void reject_unknown(const std::vector<std::string_view>& allowed, std::string_view verb) const;

 private:
  std::vector<std::pair<std::string, std::string>> options_;
  std::vector<std::string> positionals_;
};

bool is_boolean_flag(std::string_view name);
// The candidate nearest to a misspelled `word` (edit distance, case and _/- folded), or "" when
// none is near enough to be a typo.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);
// " (did you mean X?)" for an error message, or "".
std::string did_you_mean_hint(std::string_view word, const std::vector<std::string_view>& candidates);
// An option name as vLLM's argument parser reads it: underscores in the name are dashes.
std::string vllm_flag_spelling(std::string_view name);

using VerbFn = int (*)(const Args& args, std::ostream& out, std::ostream& err);
struct VerbInfo {
  std::string_view name;
  std::string_view summary;
  VerbFn fn;
};
const std::vector<VerbInfo>& verb_table();

// Runs "headroom <argv...>" (argv without the program name): dispatches to the verb, turns
// InputError into one line on err + exit 2, other exceptions into exit 3.
int run_cli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace headroom
