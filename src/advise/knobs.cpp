// The knobs tune and fit turn, per engine, in the engine's own spelling, and the flag edits
// on a Deployment. SGLang: python/sglang/srt/server_args.py; vLLM: vllm/engine/arg_utils.py;
// TensorRT-LLM: trtllm-serve's options (tensorrt_llm/commands/serve.py), spelled as the
// TensorRT-LLM engine model of this repo accepts them (trtllm_flags()).
#include <algorithm>

#include "advise/search.h"
#include "headroom/engine_traits.h"

namespace headroom::advise {

namespace {

// The first of `names` that the engine model accepts, or "".
std::string accepted(const std::vector<std::string_view>& known, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (std::find(known.begin(), known.end(), n) != known.end()) return std::string(n);
  return {};
}

EngineKnobs sglang_knobs() {
  EngineKnobs k;
  k.fraction = traits(EngineKind::SGLang).memory_flag;  // (0, 1]: share of P for weights + KV pool
  k.context = traits(EngineKind::SGLang).context_flag;
  k.max_running = "--max-running-requests";
  k.graph_bs = "--cuda-graph-max-bs";
  k.prefill_tokens = "--chunked-prefill-size";
  k.kv_dtype = "--kv-cache-dtype";
  k.fp8_kv = "fp8_e4m3";
  return k;
}

EngineKnobs vllm_knobs() {
  EngineKnobs k;
  k.fraction = traits(EngineKind::VLLM).memory_flag;  // (0, 1]: share of total memory for the whole instance
  k.kv_bytes = "--kv-cache-memory-bytes";
  k.context = traits(EngineKind::VLLM).context_flag;
  k.max_running = "--max-num-seqs";
  k.graph_bs = "--max-cudagraph-capture-size";
  k.prefill_tokens = "--max-num-batched-tokens";
  k.kv_dtype = "--kv-cache-dtype";
  k.fp8_kv = "fp8";
  return k;
}

EngineKnobs trtllm_knobs() {
  // KvCacheConfig.free_gpu_memory_fraction must be < 1.0 (kvCacheManager.cpp check).
  const auto& known = trtllm_flags();
  EngineKnobs k;
  k.fraction = accepted(known, {traits(EngineKind::TRTLLM).memory_flag});
  k.context = accepted(known, {traits(EngineKind::TRTLLM).context_flag});
  k.max_running = accepted(known, {"--max_batch_size", "--max-batch-size"});
  k.graph_bs = accepted(known, {"--cuda_graph_max_batch_size", "--cuda-graph-max-batch-size"});
  k.prefill_tokens = accepted(known, {"--max_num_tokens", "--max-num-tokens"});
  k.kv_dtype = accepted(known, {"--kv_cache_dtype", "--kv-cache-dtype"});
  k.fp8_kv = "fp8";
  return k;
}

}  // namespace

const EngineKnobs& knobs_for(EngineKind engine) {
  switch (engine) {
    case EngineKind::VLLM: {
      static const EngineKnobs k = vllm_knobs();
      return k;
    }
    case EngineKind::TRTLLM: {
      static const EngineKnobs k = trtllm_knobs();
      return k;
    }
    default: {
      static const EngineKnobs k = sglang_knobs();
      return k;
    }
  }
}

void erase_flag(Deployment& d, std::string_view name) {
  d.flags.erase(std::remove_if(d.flags.begin(), d.flags.end(), [&](const auto& f) { return f.first == name; }), d.flags.end());
}

void set_flag(Deployment& d, std::string_view name, std::string value) {
  // Replace in place when present exactly once (the common case in search loops).
  size_t n = 0, at = 0;
  for (size_t i = 0; i < d.flags.size(); ++i)
    if (d.flags[i].first == name) ++n, at = i;
  if (n == 1) {
    d.flags[at].second = std::move(value);
    return;
  }
  if (n > 1) erase_flag(d, name);
  d.flags.emplace_back(std::string(name), std::move(value));
}

bool is_fixed(const TuneGoal& g, std::string_view flag) {
  return !flag.empty() && std::find(g.fixed.begin(), g.fixed.end(), flag) != g.fixed.end();
}

int kv_groups(const Deployment& d) {
  // Each data-parallel replica (vLLM, SGLang --dp-size) and each SGLang DP-attention group
  // holds its own KV pool; a request lives in one of them.
  return std::max(1, d.par.dp);
}

}  // namespace headroom::advise
