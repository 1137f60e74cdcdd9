// The two kinds of validate metric: relative error of a figure (median and p90 of |pred - obs| /
// obs, in percent) and agreement of an outcome; shaped as CONTRACT.md's validate JSON.
#pragma once
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

namespace headroom {

struct Metric {
  std::vector<double> errs;
  void add(double pred, double obs) {
    if (obs != 0) errs.push_back(std::fabs(pred - obs) / std::fabs(obs) * 100.0);
  }
  nlohmann::ordered_json json() const {
    if (errs.empty()) return nlohmann::ordered_json{{"n", 0}, {"median_abs_pct_err", nullptr}, {"p90_abs_pct_err", nullptr}};
    std::vector<double> v = errs;
    std::sort(v.begin(), v.end());
    auto pct = [&](double q) {
      double idx = q * static_cast<double>(v.size() - 1);
      size_t lo = static_cast<size_t>(std::floor(idx)), hi = static_cast<size_t>(std::ceil(idx));
      return v[lo] + (v[hi] - v[lo]) * (idx - static_cast<double>(lo));
    };
    auto r2 = [](double x) { return std::round(x * 100.0) / 100.0; };
    return nlohmann::ordered_json{{"n", v.size()}, {"median_abs_pct_err", r2(pct(0.5))}, {"p90_abs_pct_err", r2(pct(0.9))}};
  }
};

struct Agreement {
  int n = 0, agree = 0;
  nlohmann::ordered_json json() const { return nlohmann::ordered_json{{"n", n}, {"agreement", n ? std::round(1000.0 * agree / n) / 1000.0 : 0.0}}; }
};

}  // namespace headroom
