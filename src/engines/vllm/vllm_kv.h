// vLLM's KV pool sized from a given KV memory figure, without the rest of the startup: the
// deployment's settings and every pipeline stage's KV layout (vllm_kv.cpp), then vLLM's own
// get_kv_cache_config arithmetic for any number of available bytes. Used by `validate` to check
// the layout against logs that print "Available KV cache memory" and "GPU KV cache size" (the
// GPU itself does not enter, only the batch defaults and MLA block size it selects).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engines/vllm/vllm_rules.h"
#include "headroom/deployment.h"

namespace headroom::vllm {

struct KvSizing {
  Era era;
  std::vector<KvLayout> stages;       // one per pipeline stage (stage 0 logs the tokens)
  int64_t max_model_len = 0;          // L as resolved (before any auto-fit)
  bool max_model_len_auto = false;    // --max-model-len auto / -1: L auto-fitted to the memory
  int64_t max_num_batched_tokens = 0;
  std::optional<int64_t> num_gpu_blocks_override;  // vLLM does not size from memory then
  std::string summary;                // "block 544, page 557,056 B, 12 tensors, 4 groups (hybrid)"
};

// Draft / MTP layers that get their own KV on the last stage (speculative decoding methods
// whose drafter shares the target's KV cache config): 0 when none.
int64_t draft_kv_layers(const ModelConfig& c, const std::string& spec_method);

struct Settings;
// mamba_cache_mode and speculative state blocks as vLLM resolves them for this deployment
// (vllm/model_executor/models/config.py MambaModelConfig.verify_and_update_config,
// vllm/engine/arg_utils.py prefix-caching defaults); {None, 0} for models without Mamba layers.
MambaCache mamba_cache_for(const Deployment& d, const Settings& s);

// VllmConfig.max_concurrent_batches for this deployment (the batches whose tokens a sliding /
// chunked request keeps beyond its window from 0.26, PR #47728): 1 before 0.26; else the PP size,
// or 2 on one stage with async scheduling (on by default). Throws InputError where vLLM refuses
// --async-scheduling with the speculative method.
int64_t in_flight_batches(const Deployment& d, const Settings& s);

// Pipeline stage pp_rank's KV layout for this deployment: its layer specs (draft / MTP layers,
// Mamba cache mode) grouped as vLLM groups them, with the deployment's in-flight batches.
KvLayout stage_kv_layout(const Deployment& d, const Settings& s, int pp_rank);

// The deployment's flags resolved as vLLM resolves them and each stage's layout. Throws
// InputError as plan() does for flags or models vLLM would reject.
KvSizing kv_sizing(const Deployment& d);

// "GPU KV cache size: N tokens" for `avail_bytes` of KV memory on every worker:
// num_blocks = min over stages of get_num_blocks(avail), tokens as the era reports them.
int64_t kv_tokens_for_memory(const KvSizing& k, int64_t avail_bytes);

}  // namespace headroom::vllm
