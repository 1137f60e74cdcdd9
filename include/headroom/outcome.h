// How a start-up ended, in the corpus' `outcome` vocabulary, as one enum with the one table of
// its names: the strings the corpus (jsonl), validate's JSON and the doctor's reading use.
#pragma once
#include <optional>
#include <string_view>

namespace headroom {

enum class Outcome {
  Ok, OomWeights, OomKv, OomGraph, OomWarmup, OomRuntime, RefusedKv, OtherError,
  Oom,      // the doctor: an OOM report nothing places in a stage
  NoError,  // the doctor: the log stops with no error line
};

std::string_view name(Outcome o);
std::optional<Outcome> parse_outcome(std::string_view s);
// nlohmann::json writes an Outcome as its name (it would write an enum's number otherwise).
template <class Json>
void to_json(Json& j, Outcome o) {
  j = name(o);
}

}  // namespace headroom
