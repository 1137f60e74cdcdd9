// The estimated-constant tables of the engines (include/headroom/estimates.h), by engine.
#include "headroom/estimates.h"

namespace headroom {

namespace sglang {
std::span<const EstimatedConstant> sglang_constants();
}
namespace vllm {
std::span<const EstimatedConstant> vllm_constants();
}
namespace trtllm {
std::span<const EstimatedConstant> trtllm_constants();
}
namespace llamacpp {
std::span<const EstimatedConstant> llamacpp_constants();
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
    case EngineKind::TRTLLM: return trtllm::trtllm_constants();
    case EngineKind::LlamaCpp: return llamacpp::llamacpp_constants();
    case EngineKind::VLLM: return vllm::vllm_constants();
  }
}

std::span<const EstimatedConstant> shared_estimated_constants() { return shared::shared_constants(); }

}  // namespace headroom
