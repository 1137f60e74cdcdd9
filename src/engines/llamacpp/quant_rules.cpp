// The type each tensor gets from llama-quantize for a quantization name: llama.cpp's
// llama_tensor_get_type / llama_tensor_get_type_impl / tensor_type_fallback restated as our own
// rules (ggml-org/llama.cpp src/llama-quant.cpp @ 007dbbf3, read through the code index).
// Derivation and the table: docs/llamacpp-plan.md.
#include <algorithm>
#include <cctype>
#include <numeric>

#include "headroom/cli.h"
#include "headroom/error.h"
#include "headroom/llamacpp_quant.h"

namespace headroom::llamacpp {

namespace {
using G = gguf::GgmlType;
using F = Ftype;
using C = TensorCategory;

// Name -> ftype and its default tensor type (llama_ftype_get_default_type). UD-*_XL rows: Unsloth's
// dynamic mixes, chosen by hand per tensor; the nearest llama-quantize mix stands in for them.
constexpr QuantName kQuants[] = {
    {"F32", F::F32, G::F32, ""},          {"F16", F::F16, G::F16, ""},          {"BF16", F::BF16, G::BF16, ""},
    {"Q4_0", F::Q4_0, G::Q4_0, ""},       {"Q4_1", F::Q4_1, G::Q4_1, ""},       {"Q5_0", F::Q5_0, G::Q5_0, ""},
    {"Q5_1", F::Q5_1, G::Q5_1, ""},       {"Q8_0", F::Q8_0, G::Q8_0, ""},       {"Q2_K", F::Q2_K, G::Q2_K, ""},
    {"Q2_K_S", F::Q2_K_S, G::Q2_K, ""},   {"Q3_K_S", F::Q3_K_S, G::Q3_K, ""},   {"Q3_K_M", F::Q3_K_M, G::Q3_K, ""},
    {"Q3_K_L", F::Q3_K_L, G::Q3_K, ""},   {"Q4_K_S", F::Q4_K_S, G::Q4_K, ""},   {"Q4_K_M", F::Q4_K_M, G::Q4_K, ""},
    {"Q5_K_S", F::Q5_K_S, G::Q5_K, ""},   {"Q5_K_M", F::Q5_K_M, G::Q5_K, ""},   {"Q6_K", F::Q6_K, G::Q6_K, ""},
    {"IQ2_XXS", F::IQ2_XXS, G::IQ2_XXS, ""}, {"IQ2_XS", F::IQ2_XS, G::IQ2_XS, ""}, {"IQ2_S", F::IQ2_S, G::IQ2_XS, ""},
    {"IQ2_M", F::IQ2_M, G::IQ2_S, ""},    {"IQ3_XXS", F::IQ3_XXS, G::IQ3_XXS, ""}, {"IQ3_XS", F::IQ3_XS, G::IQ3_S, ""},
    {"IQ3_S", F::IQ3_S, G::IQ3_S, ""},    {"IQ3_M", F::IQ3_M, G::IQ3_S, ""},    {"IQ1_S", F::IQ1_S, G::IQ1_S, ""},
    {"IQ1_M", F::IQ1_M, G::IQ1_M, ""},    {"IQ4_NL", F::IQ4_NL, G::IQ4_NL, ""}, {"IQ4_XS", F::IQ4_XS, G::IQ4_XS, ""},
    {"TQ1_0", F::TQ1_0, G::TQ1_0, ""},    {"TQ2_0", F::TQ2_0, G::TQ2_0, ""},
    {"MXFP4_MOE", F::MXFP4_MOE, G::MXFP4, ""}, {"MXFP4", F::MXFP4_MOE, G::MXFP4, ""},
    {"UD-Q2_K_XL", F::Q2_K, G::Q2_K, "Q2_K"},       {"UD-Q3_K_XL", F::Q3_K_M, G::Q3_K, "Q3_K_M"},
    {"UD-Q4_K_XL", F::Q4_K_M, G::Q4_K, "Q4_K_M"},   {"UD-Q5_K_XL", F::Q5_K_M, G::Q5_K, "Q5_K_M"},
    {"UD-Q6_K_XL", F::Q6_K, G::Q6_K, "Q6_K"},       {"UD-Q8_K_XL", F::Q8_0, G::Q8_0, "Q8_0"},
    {"UD-IQ1_S", F::IQ1_S, G::IQ1_S, "IQ1_S"},      {"UD-IQ1_M", F::IQ1_M, G::IQ1_M, "IQ1_M"},
    {"UD-IQ2_XXS", F::IQ2_XXS, G::IQ2_XXS, "IQ2_XXS"}, {"UD-IQ2_M", F::IQ2_M, G::IQ2_S, "IQ2_M"},
    {"UD-IQ3_XXS", F::IQ3_XXS, G::IQ3_XXS, "IQ3_XXS"},
};

std::string upper(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

bool is_quantized(G t) { return t != G::F32 && t != G::F16 && t != G::BF16; }
int64_t block(G t) { return gguf::type_traits(t).block_size; }

bool any_of(F f, std::initializer_list<F> set) { return std::find(set.begin(), set.end(), f) != set.end(); }

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

struct State {
  const QuantModelFacts& m;
  F f;
  bool tied;
  bool imatrix;
  int n_wv = 0, i_wv = 0, i_down = 0, i_gate = 0, i_up = 0;
};

// The layer a FFN rule reads: the tensor's own block for MoE models (experts are not consecutive),
// else the running count of that category.
int ffn_layer(const State& s, const QuantTensor& t, int counter) { return s.m.n_expert > 1 ? t.layer : counter; }

G output_type(const State& s, const QuantTensor& t, G type) {
  if (s.f == F::MXFP4_MOE) return G::Q8_0;
  if (t.ne0 % block(type) != 0) return G::Q8_0;
  if (any_of(s.f, {F::IQ2_XXS, F::IQ2_XS, F::IQ3_XXS, F::IQ1_S, F::IQ2_S, F::IQ2_M, F::IQ1_M})) return G::Q5_K;
  return type != G::Q8_0 ? G::Q6_K : type;
}

G token_embd_type(const State& s, G type) {
  if (any_of(s.f, {F::IQ2_XXS, F::IQ2_XS, F::IQ1_S, F::IQ1_M})) return G::Q2_K;
  if (any_of(s.f, {F::IQ2_S, F::IQ2_M, F::IQ3_XXS})) return G::IQ3_S;
  if (any_of(s.f, {F::TQ1_0, F::TQ2_0})) return G::Q4_K;
  return type;
}

// IQ1_* / IQ2_* mixes.
G low_bit_type(State& s, const QuantTensor& t, G type) {
  const bool s_or_m = s.f == F::IQ2_S || s.f == F::IQ2_M;
  switch (t.cat) {
    case C::AttnV: case C::AttnQkv: case C::AttnKvB:
      ++s.i_wv;
      if (s.m.n_gqa >= 4 || s.m.n_expert >= 4) return G::Q4_K;
      return s_or_m ? G::IQ3_S : G::Q2_K;
    case C::AttnK: return s.m.n_expert == 8 ? G::Q4_K : type;
    case C::FfnDown: {
      const bool first = s.i_down < s.m.n_layer / 8;
      ++s.i_down;
      return first ? (s_or_m ? G::IQ3_S : G::Q2_K) : type;
    }
    case C::AttnOutput:
      if (s.m.n_expert == 8) return G::Q5_K;
      if (s.f == F::IQ1_S || s.f == F::IQ1_M) return G::IQ2_XXS;
      return s_or_m ? G::IQ3_S : type;
    default: return type;
  }
}

G attn_v_type(State& s, G type) {
  const int64_t gqa = s.m.n_gqa;
  const int i = s.i_wv, n = s.n_wv;
  if (s.f == F::Q2_K) type = gqa >= 4 ? G::Q4_K : G::Q3_K;
  else if (s.f == F::Q2_K_S && gqa >= 4) type = G::Q4_K;
  else if (s.f == F::IQ3_XXS) type = gqa >= 4 ? G::Q4_K : (!s.imatrix ? G::IQ3_S : G::IQ3_XXS);
  else if ((s.f == F::IQ3_XS || s.f == F::IQ3_S) && gqa >= 4) type = G::Q4_K;
  else if (s.f == F::IQ3_M) type = G::Q4_K;
  else if (s.f == F::Q3_K_M) type = i < 2 ? G::Q5_K : G::Q4_K;
  else if (s.f == F::Q3_K_L) type = G::Q5_K;
  else if ((s.f == F::IQ4_NL || s.f == F::IQ4_XS) && gqa >= 4) type = G::Q5_K;
  else if ((s.f == F::Q4_K_M || s.f == F::Q5_K_M) && more_bits(i, n)) type = G::Q6_K;
  else if (s.f == F::Q4_K_S && i < 4) type = G::Q5_K;
  if (s.m.is_70b && (type == G::Q3_K || type == G::Q4_K)) type = G::Q5_K;
  if (s.m.n_expert == 8) type = G::Q8_0;
  ++s.i_wv;
  return type;
}

G ffn_down_type(State& s, const QuantTensor& t, G type) {
  const int i = ffn_layer(s, t, s.i_down), n = s.m.n_layer;
  ++s.i_down;
  switch (s.f) {
    case F::Q2_K: return G::Q3_K;
    case F::Q2_K_S: return i < n / 8 ? G::Q4_K : type;
    case F::IQ3_XXS: return s.imatrix ? type : (i < n / 8 ? G::Q4_K : G::Q3_K);
    case F::Q3_K_M: return i < n / 16 ? G::Q5_K : G::Q4_K;  // non-Falcon: use_more_bits or not, Q4_K
    case F::IQ3_M: return (i < n / 8 || (s.m.n_expert == 8 && more_bits(i, n))) ? G::Q4_K : type;
    case F::Q3_K_L: return G::Q5_K;
    case F::Q4_K_M: return more_bits(i, n) ? G::Q6_K : type;
    case F::IQ4_NL: case F::IQ4_XS: return (i < n / 8 && !s.imatrix) ? G::Q5_K : type;
    case F::Q5_K_M: return more_bits(i, n) ? G::Q6_K : type;
    case F::Q4_K_S: return i < n / 8 ? G::Q5_K : type;
    case F::Q4_0: return (s.imatrix && i < n / 8) ? G::Q4_1 : type;
    case F::Q5_0: return (s.imatrix && i < n / 8) ? G::Q5_1 : type;
    default: return type;
  }
}

G attn_output_type(const State& s, G type) {
  if (s.m.n_expert == 8)
    return any_of(s.f, {F::Q2_K, F::IQ3_XS, F::IQ3_XXS, F::Q3_K_S, F::Q3_K_M, F::IQ4_NL, F::Q4_K_S, F::Q4_K_M,
                        F::IQ3_S, F::IQ3_M, F::IQ4_XS}) ? G::Q5_K : type;
  switch (s.f) {
    case F::Q2_K: return G::Q3_K;
    case F::IQ3_XXS: return G::IQ3_S;
    case F::Q3_K_M: case F::IQ3_M: return G::Q4_K;
    case F::Q3_K_L: return G::Q5_K;
    default: return type;
  }
}

// The mix's choice before the shape check (llama_tensor_get_type_impl).
G mix_type(State& s, const QuantTensor& t, G type) {
  if (t.cat == C::Output || (s.tied && t.cat == C::TokenEmbd)) return output_type(s, t, type);
  if (s.f == F::MXFP4_MOE) return t.expert ? G::MXFP4 : G::Q8_0;
  if (t.cat == C::TokenEmbd) return token_embd_type(s, type);
  if (any_of(s.f, {F::IQ2_XXS, F::IQ2_XS, F::IQ1_S, F::IQ2_S, F::IQ2_M, F::IQ1_M})) return low_bit_type(s, t, type);
  switch (t.cat) {
    case C::AttnV: case C::AttnQkv: case C::AttnKvB: return attn_v_type(s, type);
    case C::AttnK:
      if (s.m.n_expert == 8) return G::Q8_0;
      return s.f == F::IQ3_XS ? G::IQ3_XXS : s.f == F::IQ3_XXS ? G::IQ2_S : type;
    case C::AttnQ: return s.f == F::IQ3_XS ? G::IQ3_XXS : s.f == F::IQ3_XXS ? G::IQ2_S : type;
    case C::FfnDown: return ffn_down_type(s, t, type);
    case C::AttnOutput: return attn_output_type(s, type);
    case C::FfnGate: case C::FfnUp: {
      int& counter = t.cat == C::FfnGate ? s.i_gate : s.i_up;
      const int i = ffn_layer(s, t, counter), n = s.m.n_layer;
      ++counter;
      return (s.f == F::IQ3_XS && i >= n / 8 && i < 7 * n / 8) ? G::IQ3_XXS : type;
    }
    default: return type;
  }
}

// tensor_type_fallback: a row that is not a whole number of blocks takes a type with smaller blocks.
G fallback(const QuantTensor& t, G type) {
  if (t.ne0 % block(type) == 0) return type;
  G r = G::F16;
  switch (type) {
    case G::IQ1_S: case G::IQ1_M: case G::IQ2_XXS: case G::IQ2_XS: case G::IQ2_S: case G::IQ3_XXS: case G::IQ3_S:
    case G::IQ4_XS: r = G::IQ4_NL; break;
    case G::Q2_K: case G::Q3_K: case G::TQ1_0: case G::TQ2_0: r = G::Q4_0; break;
    case G::Q4_K: r = G::Q5_0; break;
    case G::Q5_K: r = G::Q5_1; break;
    case G::Q6_K: r = G::Q8_0; break;
    default: break;
  }
  return t.ne0 % block(r) == 0 ? r : G::F16;
}
}  // namespace

const QuantName& require_quant(std::string_view name) {
  const std::string u = upper(name);
  for (const auto& q : kQuants)
    if (q.name == u) return q;
  const std::string near = did_you_mean(u, quant_names());
  fail_input("--quant", name, near.empty() ? "unknown llama.cpp quantization type (e.g. Q4_K_M, Q8_0, IQ4_XS, UD-Q4_K_XL)"
                                           : "unknown llama.cpp quantization type; did you mean " + near + "?");
}

std::vector<std::string> quant_names() {
  std::vector<std::string> v;
  for (const auto& q : kQuants) v.emplace_back(q.name);
  return v;
}

void assign_quant_types(std::vector<QuantTensor>& tensors, const QuantName& q, const QuantModelFacts& facts) {
  // llama.cpp visits tensors by layer (none first), then by name (weight_name_comparer).
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (tensors[a].layer != tensors[b].layer) return tensors[a].layer < tensors[b].layer;
    return tensors[a].name < tensors[b].name;
  });
  const bool tied = std::none_of(tensors.begin(), tensors.end(), [](const QuantTensor& t) { return t.cat == C::Output; });
  // GUESS: IQ mixes are made with an importance matrix (llama-quantize refuses most of them without one).
  const bool imatrix = upper(q.name).find("IQ") != std::string::npos;
  State s{facts, q.ftype, tied, imatrix};
  for (const auto& t : tensors)
    if (t.quantizable && (t.cat == C::AttnV || t.cat == C::AttnQkv || t.cat == C::AttnKvB)) ++s.n_wv;
  for (size_t i : order) {
    QuantTensor& t = tensors[i];
    G type = t.quantizable ? q.default_type : t.type;
    if (t.quantizable && is_quantized(q.default_type)) type = fallback(t, mix_type(s, t, q.default_type));
    t.type = type;
    const auto& tr = gguf::type_traits(type);
    t.bytes = t.elements / tr.block_size * tr.type_size;
  }
}

}  // namespace headroom::llamacpp
