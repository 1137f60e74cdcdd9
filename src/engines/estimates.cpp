// The estimated-constant tables of the engines (include/headroom/estimates.h), by engine.
#include "headroom/estimates.h"

namespace headroom {

namespace sglang {
std::span<const EstimatedConstant> sglang_constants();
}
namespace shared {
std::span<const EstimatedConstant> shared_constants();
}

std::string_view evidence_name(Evidence e) {
  switch (e) {
    case Evidence::Measured: return "MEASURED";
    case Evidence::Estimate: return "ESTIMATE";
    case Evidence::Inferred: return "INFERRED";
    case Evidence::Guess: return "GUESS";
  }
  return "";
}

std::span<const EstimatedConstant> estimated_constants(EngineKind engine) {
  switch (engine) {
    case EngineKind::SGLang: return sglang::sglang_constants();
    default: return {};  // vLLM, TensorRT-LLM, llama.cpp: their constants are still in their estimate files
  }
}

std::span<const EstimatedConstant> shared_estimated_constants() { return shared::shared_constants(); }

}  // namespace headroom
