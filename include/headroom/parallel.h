// Parallelism of a deployment, as the engines' flags spell it (tp/pp/ep/dp, DP attention).
#pragma once
#include <string>

namespace headroom {

enum class EngineKind { SGLang, VLLM, TRTLLM, LlamaCpp };
std::string_view engine_kind_name(EngineKind k);

struct Parallel {
  int tp = 1;               // tensor parallel size
  int pp = 1;               // pipeline parallel size
  int ep = 1;               // expert parallel size (SGLang --ep-size; vLLM: tp*dp when --enable-expert-parallel)
  int dp = 1;               // data parallel size
  bool dp_attention = false;  // SGLang --enable-dp-attention: attention TP = tp / dp inside the TP group

  // Tensor-parallel size of attention layers.
  int attn_tp() const { return dp_attention && dp > 0 ? tp / dp : tp; }
  // Ranks that hold distinct weight shards (one process each).
  int ranks() const { return tp * pp; }
};

}  // namespace headroom
