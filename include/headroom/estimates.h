// Every estimated constant of an engine model in one table (issue 27): its central value and the
// range the forecast carries, how it is known (measured, fitted, inferred, guessed), the corpus
// cases it rests on and where it comes from. The engine code reads its figures from these rows;
// `headroom rules --engine E --estimates` prints them; tests/estimates_test.cpp checks each cited
// case exists in tests/data/{corpus,extra}.
#pragma once
#include <span>
#include <string_view>

#include "headroom/parallel.h"

namespace headroom {

enum class Evidence { Measured, Estimate, Inferred, Guess };
std::string_view evidence_name(Evidence e);  // "MEASURED", "ESTIMATE", "INFERRED", "GUESS"

struct EstimatedConstant {
  std::string_view id;        // "sglang.init.nvswitch"
  double central, low, high;  // in `unit`; low / high: the ends the forecast carries
  std::string_view unit;      // "GiB", "KiB per captured all-reduce", "x the central"
  Evidence evidence;
  std::string_view cases;     // corpus / extra case ids, space-separated ("" when none)
  std::string_view what;      // what it is and what it was read from
};

// The table of an engine, and the engine-neutral terms every PyTorch engine shares ("shared.*").
std::span<const EstimatedConstant> estimated_constants(EngineKind engine);
std::span<const EstimatedConstant> shared_estimated_constants();

}  // namespace headroom
