// The name table of StageId: each stage's spelling in JSON, text and logs.
#include "headroom/stage_names.h"

#include <utility>

#include "headroom/name_table.h"

namespace headroom {

namespace {

constexpr std::pair<StageId, std::string_view> kStageNames[] = {
    {StageId::Init, "init"},
    {StageId::Weights, "weights"},
    {StageId::ProfileRun, "profile_run"},
    {StageId::KvPool, "kv_pool"},
    {StageId::Draft, "draft"},
    {StageId::Workspaces, "workspaces"},
    {StageId::CudaGraph, "cuda_graph"},
    {StageId::Warmup, "warmup"},
    {StageId::Runtime, "runtime"},
    {StageId::ComputeBuffer, "compute_buffer"},
    {StageId::DraftModel, "draft_model"},
    {StageId::Mmproj, "mmproj"},
    {StageId::DraftContexts, "draft_contexts"},
    {StageId::Ready, "ready"},
    {StageId::None, "none"},
};

}  // namespace

std::string_view name(StageId s) { return name_in(kStageNames, s, "none"); }

std::optional<StageId> parse_stage(std::string_view s) { return parse_in(kStageNames, s); }

}  // namespace headroom
