// tune for llama.cpp (tune_llamacpp.cpp): the largest --ctx-size, else the most --n-gpu-layers,
// that keeps every device the safety margin.
#pragma once
#include "headroom/advise.h"

namespace headroom {

TuneResult tune_llamacpp(const Deployment& d, const TuneGoal& g);

}  // namespace headroom
