// The name table of StageBasis: each basis' spelling in the doctor's JSON.
#include "headroom/stage_basis.h"

#include <utility>

namespace headroom {

namespace {

constexpr std::pair<StageBasis, std::string_view> kBasisNames[] = {
    {StageBasis::Log, "log"},
    {StageBasis::Numbers, "numbers"},
    {StageBasis::Guess, "guess"},
};

}  // namespace

std::string_view name(StageBasis b) {
  for (const auto& [id, text] : kBasisNames)
    if (id == b) return text;
  return "log";
}

std::optional<StageBasis> parse_stage_basis(std::string_view s) {
  for (const auto& [id, text] : kBasisNames)
    if (text == s) return id;
  return std::nullopt;
}

}  // namespace headroom
