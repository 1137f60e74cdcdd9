// The two kinds of validate metric: relative error of a figure (median and p90 of |pred - obs| /
// obs, in percent) and agreement of an outcome; shaped as CONTRACT.md's validate JSON.
#pragma once
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

namespace headroom {

namespace metrics_detail {
// The q-quantile of v (sorted), interpolated.
inline double quantile(const std::vector<double>& v, double q) {
  double idx = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(idx)), hi = static_cast<size_t>(std::ceil(idx));
  return v[lo] + (v[hi] - v[lo]) * (idx - static_cast<double>(lo));
}
inline double r2(double x) { return std::round(x * 100.0) / 100.0; }
}  // namespace metrics_detail

struct Metric {
  std::vector<double> errs;
  std::vector<double> ratios;  // observed / forecast, both positive
  bool loo = false;            // also report the leave-one-out figures (estimated terms)
  void add(double pred, double obs) {
    if (obs != 0) errs.push_back(std::fabs(pred - obs) / std::fabs(obs) * 100.0);
    if (obs > 0 && pred > 0) ratios.push_back(obs / pred);
  }
  // Leave-one-out of the term's level: each case's forecast scaled by the median observed/forecast
  // ratio of the other cases (what calibrating the level on the others gives it). The spread of
  // the ratios (p10, p90) is what a range from these logs would be.
  nlohmann::ordered_json loo_json() const {
    using namespace metrics_detail;
    if (ratios.size() < 3) return nullptr;
    std::vector<double> e;
    for (size_t i = 0; i < ratios.size(); ++i) {
      std::vector<double> others;
      for (size_t j = 0; j < ratios.size(); ++j)
        if (j != i) others.push_back(ratios[j]);
      std::sort(others.begin(), others.end());
      e.push_back(std::fabs(quantile(others, 0.5) / ratios[i] - 1.0) * 100.0);
    }
    std::sort(e.begin(), e.end());
    std::vector<double> r = ratios;
    std::sort(r.begin(), r.end());
    return nlohmann::ordered_json{
        {"median_abs_pct_err", r2(quantile(e, 0.5))},
        {"p90_abs_pct_err", r2(quantile(e, 0.9))},
        {"observed_over_forecast", {{"p10", r2(quantile(r, 0.1))}, {"median", r2(quantile(r, 0.5))}, {"p90", r2(quantile(r, 0.9))}}}};
  }
  nlohmann::ordered_json json() const {
    using namespace metrics_detail;
    if (errs.empty()) return nlohmann::ordered_json{{"n", 0}, {"median_abs_pct_err", nullptr}, {"p90_abs_pct_err", nullptr}};
    std::vector<double> v = errs;
    std::sort(v.begin(), v.end());
    nlohmann::ordered_json j{{"n", v.size()}, {"median_abs_pct_err", r2(quantile(v, 0.5))}, {"p90_abs_pct_err", r2(quantile(v, 0.9))}};
    if (loo) j["leave_one_out"] = loo_json();
    return j;
  }
};

struct Agreement {
  int n = 0, agree = 0;
  nlohmann::ordered_json json() const { return nlohmann::ordered_json{{"n", n}, {"agreement", n ? std::round(1000.0 * agree / n) / 1000.0 : 0.0}}; }
};

}  // namespace headroom
