// An estimated byte count with its range and what it rests on: the one type every engine's
// estimated terms use (the exact terms are plain bytes).
#pragma once
#include <cstdint>
#include <string>

#include "headroom/estimates.h"

namespace headroom {

struct Estimate {
  int64_t central = 0, low = 0, high = 0;
  std::string basis;  // how it was computed (shown in notes)
};

// An estimate of `central` bytes whose ends are lo_factor x and hi_factor x it.
Estimate range(double central, double lo_factor, double hi_factor, std::string basis);

// An estimate of `central` bytes whose ends sit where the table row `k` puts them relative to its
// own central (k.low / k.central .. k.high / k.central): the form every *_constants.cpp row takes.
Estimate range_of(const EstimatedConstant& k, double central, std::string basis);

// Adds part's central, low and high bytes to e; the basis stays e's (callers say what was added).
inline void add_bytes(Estimate& e, const Estimate& part) {
  e.central += part.central;
  e.low += part.low;
  e.high += part.high;
}

}  // namespace headroom
