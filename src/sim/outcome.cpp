// The name table of Outcome: each outcome's spelling in the corpus and in JSON.
#include "headroom/outcome.h"

#include <utility>

#include "headroom/name_table.h"

namespace headroom {

namespace {

constexpr std::pair<Outcome, std::string_view> kOutcomeNames[] = {
    {Outcome::Ok, "ok"},
    {Outcome::OomWeights, "oom_weights"},
    {Outcome::OomKv, "oom_kv"},
    {Outcome::OomGraph, "oom_graph"},
    {Outcome::OomWarmup, "oom_warmup"},
    {Outcome::OomRuntime, "oom_runtime"},
    {Outcome::RefusedKv, "refused_kv"},
    {Outcome::OtherError, "other_error"},
    {Outcome::Oom, "oom"},
    {Outcome::NoError, "no_error"},
};

}  // namespace

std::string_view name(Outcome o) { return name_in(kOutcomeNames, o, "other_error"); }

std::optional<Outcome> parse_outcome(std::string_view s) { return parse_in(kOutcomeNames, s); }

}  // namespace headroom
