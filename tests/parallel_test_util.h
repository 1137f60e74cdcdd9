// Test helper shared by the model tests: a Parallel layout from its sizes (tensor, pipeline, expert).
#pragma once
#include "headroom/parallel.h"

namespace headroom::test {

inline Parallel tp(int n, int pp = 1, int ep = 1) {
  Parallel p;
  p.tp = n;
  p.pp = pp;
  p.ep = ep;
  return p;
}

}  // namespace headroom::test
