// Placing a deployment on a host's GPUs (--host-state): see deployment_host.cpp.
#pragma once
#include "headroom/deployment.h"
#include "headroom/forecast.h"
#include "headroom/sim.h"
#include "headroom/host_state.h"

namespace headroom {

// The catalog row of the host's first GPU (for a deployment that names no --gpu); nullptr if unknown.
const GpuSpec* host_default_gpu(const HostState& h);
// Fills d.held_by_others from the host's GPUs the deployment sees; InputError when the host lacks
// them, a GPU differs from the deployment's, or a GPU is already full.
void apply_host_state(Deployment& d, const HostState& h);
// A rank's first allocation on a host that is not empty: what other processes hold (none: nothing).
void sim_held_by_others(RankSim& sim, const Deployment& d, int64_t bytes);
// The forecast's note on the host state: how much others hold and how this engine (version)
// treats memory it did not allocate (`semantics`).
void note_host_state(Forecast& f, const Deployment& d, std::string_view semantics);

}  // namespace headroom
