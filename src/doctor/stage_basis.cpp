// The name table of StageBasis: each basis' spelling in the doctor's JSON.
#include "headroom/stage_basis.h"

#include <utility>

#include "headroom/name_table.h"

namespace headroom {

namespace {

constexpr std::pair<StageBasis, std::string_view> kBasisNames[] = {
    {StageBasis::Log, "log"},
    {StageBasis::Numbers, "numbers"},
    {StageBasis::Guess, "guess"},
};

}  // namespace

std::string_view name(StageBasis b) { return name_in(kBasisNames, b, "log"); }

std::optional<StageBasis> parse_stage_basis(std::string_view s) { return parse_in(kBasisNames, s); }

}  // namespace headroom
