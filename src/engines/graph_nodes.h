// What a captured CUDA graph's objects cost, shared by the engines' capture estimates: the driver
// keeps ~3 KiB per captured kernel node (measured on an H200, docs/measurements/h200-2026-11-30.md:
// 80 KiB per graph per layer of a 27-kernel Llama layer), and a decode layer launches a kernel
// count that depends on its blocks.
#pragma once
#include "headroom/model.h"
#include "headroom/units.h"

namespace headroom {

inline constexpr double kGraphNodeBytes = 3.0 * 1024.0;

// Kernels per decode layer, ESTIMATED from SGLang's fused sequence: norm, qkv, rope, KV store,
// attention, o-proj, two all-reduces, norm, gate_up, act, down (~12); a MoE block adds router,
// top-k, align, two grouped GEMMs, activation, combine and the shared expert (~10); MLA adds the
// low-rank q/kv projections and norms (~8); a DSA indexer its projections, scores and top-k (~6).
inline double decode_kernels_per_layer(const ModelConfig& c) {
  double k = 12.0;
  if (c.is_moe()) k += 10.0;
  if (c.mla) k += 8.0;
  if (c.has_indexer()) k += 6.0;
  return k;
}

}  // namespace headroom
