// Rendering a Forecast: the CONTRACT JSON, and the text report a person reads (stages table,
// a terminal bar chart, the engine's predicted log lines, notes).
#pragma once
#include <iosfwd>
#include <nlohmann/json.hpp>

#include "headroom/forecast.h"

namespace headroom {

nlohmann::ordered_json forecast_json(const Forecast& f);
void print_forecast(std::ostream& out, const Forecast& f);
// One-line bar of a rank's memory at the end of its timeline (letters per component).
std::string memory_bar(const RankForecast& r, int width);

}  // namespace headroom
