// Pieces of `headroom calibrate` shared by its files: the per-engine fits and the plan they share.
#pragma once
#include <string>

#include "headroom/calibrate.h"
#include "headroom/engine.h"
#include "headroom/logscan.h"

namespace headroom::calib {

// The fit's terms so far as a Calibration (host "log") for planning the log's deployment.
Calibration as_calibration(const LogFit& fit);
// plan() of the fit's deployment with the terms fitted so far (none: the model's estimates).
Forecast plan_with(const LogFit& fit, bool with_terms);
std::string gib(int64_t bytes);  // "1.23 GiB"

// The engine's terms from the log's figures (fit_sglang.cpp, fit_vllm.cpp); InputError when the
// log lacks the figures every fit needs.
void fit_sglang(const LogScan& scan, LogFit& fit);
void fit_vllm(const LogScan& scan, LogFit& fit);

}  // namespace headroom::calib
