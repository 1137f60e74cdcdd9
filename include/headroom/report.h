// Rendering a Forecast: the CONTRACT JSON, and the text report a person reads (stages table,
// a terminal bar chart, the engine's predicted log lines, notes).
#pragma once
#include <iosfwd>
#include <string>
#include <nlohmann/json.hpp>

#include "headroom/forecast.h"

namespace headroom {

nlohmann::ordered_json forecast_json(const Forecast& f);
// The summary first (verdict, KV capacity, the tightest moment, the rules version, `launch` when
// given), then unless `brief` the stage table, the bar, the engine's predicted log and notes.
void print_forecast(std::ostream& out, const Forecast& f, const std::string& launch = "", bool brief = false);
void print_forecast_summary(std::ostream& out, const Forecast& f, const std::string& launch);
void print_forecast_detail(std::ostream& out, const Forecast& f);
// One-line bar of a rank's memory at the end of its timeline (letters per component).
std::string memory_bar(const RankForecast& r, int width);

}  // namespace headroom
