// validate on llama.cpp cases (corpus/README.md "llama.cpp cases"): the case's llama-server
// deployment planned with --engine llamacpp and compared device by device with the buffers its
// log printed (model, KV, compute) and with its outcome.
#pragma once
#include <nlohmann/json.hpp>

#include "validate/validate_metrics.h"

namespace headroom {

struct LlamacppMetrics {
  Metric model_buffer, kv_size, compute_buffer;
  Agreement outcome;
  // doctor on the case's own log (raw, plus error_message when raw lacks it): the stage it names
  // against the observed outcome's stage (oom_graph -> compute_buffer), all / placed by the log.
  Agreement doctor_stage, doctor_decided;
  int doctor_guessed = 0;
  int covered = 0;
  bool seen = false;
};

// One case (a parsed corpus line) -> its per_case row; the metrics take its samples.
nlohmann::ordered_json validate_llamacpp_case(const nlohmann::ordered_json& c, LlamacppMetrics& m);

}  // namespace headroom
