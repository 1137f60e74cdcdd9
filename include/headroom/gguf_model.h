// What a GGUF model says about itself: the architecture facts llama.cpp reads from its metadata
// ({arch}.block_count, {arch}.attention.head_count_kv, ...) and its tensors totalled by ggml type.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "headroom/gguf.h"

namespace headroom::gguf {

struct TypeTotal {
  GgmlType type;
  int64_t tensors = 0, params = 0, bytes = 0;
};

struct ModelSummary {
  std::vector<std::string> files;
  uint32_t version = 0;
  std::string architecture;  // general.architecture
  std::string name;          // general.name ("" when absent)
  std::string file_type;     // general.file_type as llama.cpp names it ("Q4_K_M"), "" when absent
  int64_t context_length = 0, block_count = 0, embedding_length = 0, feed_forward_length = 0;
  int64_t head_count = 0, key_length = 0, value_length = 0, vocab_size = 0;
  int64_t expert_count = 0, expert_used_count = 0, sliding_window = 0;
  std::vector<int64_t> head_count_kv;  // per layer (block_count entries)
  std::vector<int64_t> head_count_per_layer;
  bool mla = false;        // {arch}.attention.kv_lora_rank present (multi-head latent attention)
  bool recurrent = false;  // {arch}.ssm.* / .wkv.* / .shortconv.* keys: recurrent or hybrid layers
  int64_t params_total = 0, params_active = 0, checkpoint_bytes = 0;
  int64_t tensors = 0;
  std::vector<TypeTotal> by_type;  // largest bytes first
  std::vector<std::string> notes;
};

// llama.cpp's name of a general.file_type value (enum llama_ftype): "Q4_K_M", "MXFP4_MOE", ...
std::string file_type_name(int64_t ftype);
ModelSummary summarize(const ModelFiles& files);
ModelSummary read_model_summary(const std::string& path);

}  // namespace headroom::gguf
