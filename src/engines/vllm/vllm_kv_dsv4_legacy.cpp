// DeepSeek-V4's KV cache allocation in vLLM 0.20-0.23, before "[DSv4] Pack KV caches into
// contiguous per-block allocations" (PR #44577, 0.24.0). Read in a 2026 copy of vLLM's KV cache
// planning helpers (vllm/v1/core/kv_cache_utils.py, later split out as kv_cache_planning.py) that
// still has _get_kv_cache_config_deepseek_v4 as it was before PR #44454, and in
// vllm/v1/kv_cache_interface.py (UniformTypeKVCacheSpecs.get_page_sizes / get_num_layer_tuples =
// the most common page-size count / max_memory_usage_pages):
//
//   get_kv_cache_groups -> group_and_unify_kv_cache_specs + _get_kv_cache_groups_uniform_groups:
//     the groups vllm_kv.cpp's dsv4_layout builds (one UniformTypeKVCacheSpecs of every
//     MLAAttentionSpec, the SlidingWindowMLASpec layers per (block_size, sliding_window) split
//     into cdiv(n, num_layer_tuples) groups, their pages padded to the next MLA page size).
//   get_kv_cache_config_from_groups -> _get_kv_cache_config_deepseek_v4 (all groups
//     UniformTypeKVCacheSpecs): layer_tuple_page_bytes = sum(full-MLA group's distinct page
//     sizes), num_layer_tuples = the longest per-page-size bucket of any group,
//       num_blocks = available_memory // (layer_tuple_page_bytes * num_layer_tuples),
//     and one KVCacheTensor of ps * num_blocks per (tuple slot, MLA page size ps) -- a slot with
//     no layer of that size in any group is allocated all the same.
//   _max_memory_usage_bytes_from_groups (the capacity check, estimate_max_model_len): sum over
//     groups of num_layer_tuples * max_memory_usage_pages * layer_tuple_bytes -- what
//     vllm_kv.cpp's needed_bytes computes for every V4 layout; get_max_concurrency_for_kv_cache_
//     config: per-request bytes of all groups in blocks of the full-MLA group's page, as
//     max_concurrency does. Only the pool's bytes per block differ by era:
//
//   0.20-0.22  layer_tuple_page_bytes x num_layer_tuples. DeepSeek-V4-Flash: 47,808 x 22 =
//              1,051,776 B (vllm#44376 on v0.22: 6.66 GiB needed at 30,000 tokens, 13,528 for
//              5.44 GiB, both from these tuples; tests/vllm_dsv4_legacy_test.cpp). V4-Pro:
//              47,808 x 31 = 1,482,048 B in 31 x 3 tensors, one of them without a layer -- PR
//              #44577, written against this code: "Previously: 92 NIXL regions ... Now: 1
//              region, 1 large RDMA transfer per block (~1.48MB)".
//   0.23       PR #44454 ("[1/N][KV-Cache Layout Refactor] Refactor DSV4 KV cache config
//              construction", merged 2026-06-07, commit 4dcd10eb0d): _bucket_layers_by_page_size
//              sizes each page size's slots by its own longest bucket, sum(ps x slots(ps)) =
//              1,039,680 B for Flash, the same block the packed layout of 0.24 has ("KV cache:
//              333,437 tokens (+1.16% vs main's 329,601) -- previous code over-counted per-block
//              cost when slot counts differ across page sizes"; 1,051,776 / 1,039,680 = 1.0116).
//              First release INFERRED: 0.23.0 (2026-06-12) ships PRs merged in the same week
//              (#43447, #44420, #44699), and the weekly digest lists #44454 with them.
//
// V4 itself arrived in 0.20.0 (PR #40860, "DeepSeek V4 support (initial)" in the 0.20.0 notes).
// Pipeline parallelism: each stage is grouped on its own, as for 0.24+ (a GUESS, see dsv4_layout).
#include "engines/vllm/vllm_kv_dsv4_legacy.h"

#include <algorithm>
#include <fmt/format.h>

#include "engines/vllm/vllm_rule_table.h"
#include "headroom/error.h"

namespace headroom::vllm {

KvLayout dsv4_legacy_layout(KvLayout l, const Era& era) {
  if (!has(Rule::Dsv4Support, era.version))
    // vllm/model_executor/models/registry.py: an architecture the build does not know.
    fail_input("vllm", "--model",
               fmt::format("ValueError: Model architectures ['DeepseekV4ForCausalLM'] are not supported for now "
                           "(DeepSeek-V4 arrived in vLLM 0.20.0, PR #40860; rules of {})",
                           era.label));
  if (has(Rule::Dsv4BucketedBlock, era.version) || l.v4.empty()) return l;  // 0.23: the bucketed block (see above)
  // 0.20-0.22: every tuple slot holds one page of each MLA page size.
  int64_t tuples = 0;
  for (const auto& g : l.v4) tuples = std::max(tuples, g.tuples);
  // page_bytes x tensors is the pool's bytes per block (num_blocks = avail // page // tensors):
  // one layer tuple's pages per slot, num_layer_tuples slots.
  l.page_bytes = l.v4_tuple_bytes;
  l.tensors = std::max<int64_t>(1, tuples);
  l.packed = true;  // the V4 capacity / concurrency formulas of vllm_kv.cpp apply unchanged
  return l;
}

}  // namespace headroom::vllm
