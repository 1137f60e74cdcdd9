// DeepSeek-V4's KV cache allocation in vLLM before the packed per-block layout of 0.24
// (vllm_kv_dsv4_legacy.cpp): the layer grouping is the one vllm_kv.cpp's dsv4_layout builds (the
// same group_and_unify_kv_cache_specs / _get_kv_cache_groups_uniform_groups in every release
// since V4 landed); what changed is how many bytes one block costs in the shared pool.
#pragma once
#include "engines/vllm/vllm_rules.h"

namespace headroom::vllm {

// The releases that changed DeepSeek-V4's KV allocation are rows of vllm_rule_table.cpp:
// vllm.dsv4_support (0.20), vllm.dsv4_bucketed_block (0.23), vllm.dsv4_packed (0.24).

// `grouped`: dsv4_layout's groups, pages and 0.24+ packed block for one pipeline stage. Returns
// the layout as `era` allocated it (0.20-0.23). Throws InputError before 0.20, which has no
// DeepSeek-V4 model.
KvLayout dsv4_legacy_layout(KvLayout grouped, const Era& era);

}  // namespace headroom::vllm
