// The startup stages a forecast plays and a log shows, as one enum, with the one table of their
// names: the strings JSON, text output and logs use. Inside the core, stages compare as enums.
#pragma once
#include <optional>
#include <string_view>

namespace headroom {

enum class StageId {
  Init, Weights, ProfileRun, KvPool, Draft, Workspaces, CudaGraph, Warmup, Runtime,
  ComputeBuffer, DraftModel, Mmproj, DraftContexts,  // llama.cpp's buffers, in its order
  Ready, None,                                       // the doctor: a start that got through; no failure
};

std::string_view name(StageId s);
std::optional<StageId> parse_stage(std::string_view s);
// nlohmann::json writes a StageId as its name (it would write an enum's number otherwise).
template <class Json>
void to_json(Json& j, StageId s) {
  j = name(s);
}

}  // namespace headroom
