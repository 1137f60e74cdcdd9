// SGLang's estimated constants, one row each of sglang_constants.cpp (include/headroom/estimates.h).
#pragma once
#include <cstddef>

#include "headroom/estimates.h"

namespace headroom::sglang {

// Indexed into the table: keep the order of the rows.
enum class Const {
  InitContext, InitDgxSparkHost, InitAmdRccl, InitNvswitch, InitPcie3To4, InitPcie2Geforce, InitPcieOther,
  WorkspaceFlashinfer, WorkspaceOther, Fp4MoeResidue,
  GraphFixed, GraphPerAllReduce, GraphRange, PrefillSampling, PrefillRange, DraftCaptureRange, DraftSamplingKernels,
  Count
};
const EstimatedConstant& constant(Const k);

}  // namespace headroom::sglang
