// How the engine plans apply a host profile's terms (PlanOptions::calibration): which terms
// hold for a deployment (same GPU and engine; the TP-keyed ones at its TP size), signed
// timeline items, and the note that names the host.
#pragma once
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "headroom/engine.h"
#include "headroom/sim.h"
#include "headroom/units.h"

namespace headroom {

// The profile, when it was fitted on this deployment's GPU and engine (else nullptr: a fit over
// several GPUs plans the others with the estimates). The capacity is not compared: attach_profile
// gives the deployment the host's (fit's candidates keep the catalog's).
inline const Calibration* calibration_for(const PlanOptions& opt, const Deployment& d) {
  if (!opt.calibration) return nullptr;
  const Calibration& c = *opt.calibration;
  return c.engine == engine_kind_name(d.engine) && c.gpu == d.gpu.name ? &c : nullptr;
}

// A signed calibrated term on the timeline: allocated when positive, given back when negative
// (the host used less than the model's estimate of what came before it).
inline void sim_signed(RankSim& sim, const std::string& what, int64_t bytes) {
  if (bytes > 0) sim.alloc(what, bytes);
  else if (bytes < 0) sim.release(what + " (less than estimated)", -bytes);
}

inline std::string calibration_gib(int64_t b) {
  const double g = static_cast<double>(b) / static_cast<double>(GiB);
  return fmt::format("{:.2f} GiB", std::abs(g) < 0.005 ? 0.0 : g);  // no "-0.00"
}

// "calibrated (host NAME): ..." and, when the profile has no terms at this TP size, which are left.
inline std::string calibration_note(const Calibration& c, const CalibrationAtTp* at, int tp, const std::string& terms) {
  std::string n = fmt::format("calibrated (host {}): {}; at the profile's capacity {:.2f} GiB", c.host,
                              terms.empty() ? "no term of the profile applies here" : terms,
                              static_cast<double>(c.capacity_bytes) / static_cast<double>(GiB));
  if (!at) n += fmt::format("; the profile has no log at TP {}: its per-TP terms (CUDA context, NCCL, non-torch) stay estimated", tp);
  return n;
}

}  // namespace headroom
