// --quant: the GGUF tensor table derived from a catalog config and llama.cpp's quantization rules
// (llama-quant.cpp), checked tensor by tensor against the rules worked by hand and, in total,
// against real load_tensors lines (../shared/corpus/llamacpp.jsonl ids below).
#include <gtest/gtest.h>

#include "headroom/error.h"
#include "headroom/llamacpp_quant.h"
#include "headroom/model.h"

using namespace headroom;
using namespace headroom::llamacpp;
using G = gguf::GgmlType;

namespace {

DerivedGguf derive(const char* id, const char* quant) { return derive_gguf(*load_model(id), require_quant(quant)); }

const QuantTensor& tensor(const DerivedGguf& g, const std::string& name) {
  for (const auto& t : g.tensors)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + name);
}

int64_t total(const DerivedGguf& g) {
  int64_t b = 0;
  for (const auto& t : g.tensors) b += t.bytes;
  return b;
}

}  // namespace

TEST(LlamacppQuant, Qwen3MoeQ4KM) {
  // 48 layers, 128 experts: use_more_bits(i, 48) is i < 6, i >= 42, or (i - 6) % 3 == 2.
  const DerivedGguf g = derive("Qwen/Qwen3-30B-A3B", "Q4_K_M");
  EXPECT_EQ(tensor(g, "blk.0.attn_v").type, G::Q6_K);
  EXPECT_EQ(tensor(g, "blk.6.attn_v").type, G::Q4_K);
  EXPECT_EQ(tensor(g, "blk.8.attn_v").type, G::Q6_K);
  EXPECT_EQ(tensor(g, "blk.7.ffn_down_exps").type, G::Q4_K);
  EXPECT_EQ(tensor(g, "blk.47.ffn_down_exps").type, G::Q6_K);
  EXPECT_EQ(tensor(g, "blk.7.ffn_gate_exps").type, G::Q4_K);
  EXPECT_EQ(tensor(g, "blk.0.attn_k").type, G::Q4_K);  // only 8-expert models lift attn_k to q8_0
  EXPECT_EQ(tensor(g, "output").type, G::Q6_K);
  EXPECT_EQ(tensor(g, "token_embd").type, G::Q4_K);  // untied: the mix's default
  // The 128 experts of a layer are one tensor: 128 x 768 x 2048 q4_K (144 B per 256).
  EXPECT_EQ(tensor(g, "blk.7.ffn_up_exps").bytes, int64_t{128} * 768 * 2048 / 256 * 144);
  EXPECT_FALSE(g.tied_output);
}

TEST(LlamacppQuant, Llama7bQ4_0MatchesGgmlCi) {
  // Llama-2-7B shapes (32 x 4096, ffn 11008, vocab 32000) are open_llama_7b_v2's: llamacpp-026's
  // ggml-ci log prints "CPU buffer size = 70.31 MiB" (token_embd q4_0) and "CUDA0 buffer size =
  // 3577.56 MiB" (the rest, output q6_K: "type q6_K: 1 tensors").
  const DerivedGguf g = derive("meta-llama/Llama-2-7b-hf", "Q4_0");
  const int64_t embd = tensor(g, "token_embd").bytes;
  EXPECT_EQ(embd, int64_t{32000} * 4096 / 32 * 18);
  EXPECT_EQ(tensor(g, "output").type, G::Q6_K);
  // By hand: 32 x (4 x 4096^2 + 3 x 4096 x 11008) q4_0 + 32 x 2 norms f32 + output q6_K + output_norm.
  const int64_t layer = (4 * 4096 * 4096 + 3 * 4096 * 11008) / 32 * 18 + 2 * 4096 * 4;
  const int64_t rest = 32 * layer + int64_t{32000} * 4096 / 256 * 210 + 4096 * 4;
  EXPECT_EQ(total(g) - embd, rest);
  // On CUDA each ffn_down (11008 columns, 11008 % 512 = 256) gets one padding row of 256 q4_0
  // values (144 B, ggml_backend_cuda_buffer_type_get_alloc_size): 3577.5547 + 32 x 144 B = 3577.56 MiB.
  EXPECT_NEAR(static_cast<double>(rest + 32 * 144) / (1 << 20), 3577.56, 0.005);
  EXPECT_NEAR(static_cast<double>(embd) / (1 << 20), 70.31, 0.005);
}

TEST(LlamacppQuant, RowFallbackAnd70bRule) {
  // Qwen2.5-72B: 80 layers (LLM_TYPE_70B), ffn_down rows of 29568 = 115.5 x 256: q4_K -> q5_0 and
  // q6_K -> q8_0; attn_v q4_K -> q5_K on the layers use_more_bits leaves (n/8 = 10: layer 10).
  const DerivedGguf g = derive("Qwen/Qwen2.5-72B-Instruct", "Q4_K_M");
  EXPECT_EQ(tensor(g, "blk.0.ffn_down").type, G::Q8_0);
  EXPECT_EQ(tensor(g, "blk.10.ffn_down").type, G::Q5_0);
  EXPECT_EQ(tensor(g, "blk.10.attn_v").type, G::Q5_K);
  EXPECT_EQ(tensor(g, "blk.12.attn_v").type, G::Q6_K);  // (12 - 10) % 3 == 2
  EXPECT_EQ(tensor(g, "blk.10.ffn_up").type, G::Q4_K);  // 8192 columns: whole blocks
}

TEST(LlamacppQuant, Mxfp4MoeAndTiedEmbeddings) {
  // MXFP4_MOE: 3-D expert tensors mxfp4, every other quantizable tensor q8_0 (gpt-oss's own GGUF).
  const DerivedGguf g = derive("openai/gpt-oss-120b", "MXFP4");
  EXPECT_EQ(tensor(g, "blk.0.ffn_down_exps").type, G::MXFP4);
  EXPECT_EQ(tensor(g, "blk.0.attn_q").type, G::Q8_0);
  EXPECT_EQ(tensor(g, "token_embd").type, G::Q8_0);
}

TEST(LlamacppQuant, UnknownNameIsOneLine) {
  try {
    require_quant("Q4_K_MM");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean Q4_K_M"), std::string::npos) << e.what();
  }
  EXPECT_EQ(require_quant("q5_k_m").ftype, Ftype::Q5_K_M);  // case-insensitive
  EXPECT_FALSE(require_quant("UD-Q4_K_XL").stand_in.empty());
}
