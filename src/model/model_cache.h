// Whether a Model is one of load_model()'s cached catalog models (kept for the life of the
// process). Other caches key on such models only: a model built from uploaded or local config
// text lives as long as its request, and must not be kept alive by a memo (issue 31).
#pragma once
#include "headroom/model.h"

namespace headroom {

bool is_cached_catalog_model(const Model& m);

}  // namespace headroom
