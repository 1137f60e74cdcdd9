// What placed the doctor's failing stage, as one enum with the one table of its names ("log",
// "numbers", "guess"): the strings the doctor's JSON and validate's doctor rows use.
#pragma once
#include <optional>
#include <string_view>

namespace headroom {

enum class StageBasis {
  Log,      // a stage line, frame or engine message places it
  Numbers,  // the OOM message's figures against the forecast / the engine's budget
  Guess,    // no evidence: the likeliest stage given how far the log got
};

std::string_view name(StageBasis b);
std::optional<StageBasis> parse_stage_basis(std::string_view s);
// nlohmann::json writes a StageBasis as its name (it would write an enum's number otherwise).
template <class Json>
void to_json(Json& j, StageBasis b) {
  j = name(b);
}

}  // namespace headroom
