// A GGUF that was not downloaded: the tensor table llama-quantize would write for a Hugging Face
// model and a quantization name (--quant Q4_K_M), per llama.cpp's type-selection rules
// (src/llama-quant.cpp). Derived, not read: a real GGUF header always wins. Rules and sources:
// docs/llamacpp-plan.md.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/gguf.h"
#include "headroom/model.h"

namespace headroom::llamacpp {

// llama.h enum llama_ftype values we derive (ids as general.file_type stores them).
enum class Ftype : int {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q8_0 = 7, Q5_0 = 8, Q5_1 = 9, Q2_K = 10, Q3_K_S = 11, Q3_K_M = 12,
  Q3_K_L = 13, Q4_K_S = 14, Q4_K_M = 15, Q5_K_S = 16, Q5_K_M = 17, Q6_K = 18, IQ2_XXS = 19, IQ2_XS = 20,
  Q2_K_S = 21, IQ3_XS = 22, IQ3_XXS = 23, IQ1_S = 24, IQ4_NL = 25, IQ3_S = 26, IQ3_M = 27, IQ2_S = 28,
  IQ2_M = 29, IQ4_XS = 30, IQ1_M = 31, BF16 = 32, TQ1_0 = 36, TQ2_0 = 37, MXFP4_MOE = 38,
};

// One row of the quantization-name table: what the name selects, and whether the mix is a
// stand-in (Unsloth's UD-*_XL mixes are chosen per tensor by hand: not derivable).
struct QuantName {
  std::string_view name;       // as users write it: "Q4_K_M", "UD-Q4_K_XL", "MXFP4"
  Ftype ftype;
  gguf::GgmlType default_type; // llama_ftype_get_default_type
  std::string_view stand_in;   // "" when exact; else what the approximation is
};
// Case-insensitive; InputError("--quant", ...) with a did-you-mean for unknown names.
const QuantName& require_quant(std::string_view name);
std::vector<std::string> quant_names();

// llama-quant.cpp tensor_category.
enum class TensorCategory { TokenEmbd, AttnQ, AttnV, AttnK, AttnQkv, AttnKvB, AttnOutput, FfnUp, FfnGate, FfnDown, Output, Other };

// One tensor of the derived GGUF.
struct QuantTensor {
  std::string name;       // GGUF-style ("blk.3.ffn_down_exps"), for -ot matching and notes
  TensorCategory cat = TensorCategory::Other;
  int layer = -1;         // -1: outside the repeating layers (token_embd, output, output_norm)
  int64_t ne0 = 0;        // row length (input features)
  int64_t elements = 0;
  bool quantizable = true;  // false: kept as the converter wrote it (norms, routers, conv1d: F32)
  bool expert = false;      // a routed-expert tensor (ffn_*_exps)
  gguf::GgmlType type = gguf::GgmlType::F32;
  int64_t bytes = 0;
};

// What the rules read from the model besides each tensor (llama_hparams, llm_type).
struct QuantModelFacts {
  int n_layer = 0;
  int n_expert = 0;
  int64_t n_gqa = 1;       // n_head / n_head_kv
  bool is_70b = false;     // llama.cpp LLM_TYPE_70B (80-layer llama)
};

// Assigns each quantizable tensor its type as llama_tensor_get_type would for `q`, tensors in
// llama.cpp's loading order (by layer, then name), with the row-size fallback; sets bytes.
void assign_quant_types(std::vector<QuantTensor>& tensors, const QuantName& q, const QuantModelFacts& facts);

struct DerivedGguf {
  std::vector<QuantTensor> tensors;
  bool tied_output = false;  // no output.weight: llama.cpp duplicates token_embd onto the output device
  std::vector<std::string> notes;
};
// The GGUF llama.cpp's converter + llama-quantize would produce from `m` (MTP and vision tensors
// left out: llama.cpp skips the first and loads the second from --mmproj).
DerivedGguf derive_gguf(const Model& m, const QuantName& q);

}  // namespace headroom::llamacpp
