// The result of one `headroom calibrate` run and its text / JSON forms (calibrate_report.cpp).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/calibrate.h"

namespace headroom {

struct CalibrationRow {
  LogFit fit;
  LogErrors before, after;  // the model's estimates; the saved profile
};
struct CalibrationRun {
  HostProfile profile;
  std::string path;  // where it was saved
  std::vector<CalibrationRow> rows;
};

nlohmann::ordered_json calibration_json(const CalibrationRun& run);
void print_calibration(std::ostream& out, const CalibrationRun& run);

}  // namespace headroom
