// Tensor inventory plumbing: quantized storage layouts of one Linear, parameter totals, and
// classification of tensor names read from safetensors headers.
//
// Storage layouts mirror the engines' create_weights():
//  - NVFP4 (ModelOpt): vLLM model_executor/layers/quantization/modelopt.py ModelOptNvFp4LinearMethod:
//    weight U8 [out, in/2], weight_scale F8_E4M3 [out, in/16], weight_scale_2 F32 [], input_scale F32 [].
//    compressed-tensors NVFP4 (compressed_tensors_w4a4_nvfp4.py): weight_packed, weight_scale,
//    weight_global_scale F32 [1], input_global_scale F32 [1].
//  - MXFP4: weight U8 [out, in/2] + weight_scale U8 (E8M0) [out, in/32] (vLLM quantization/mxfp4.py).
//  - FP8 block: weight F8_E4M3 [out, in] + weight_scale_inv F32 [ceil(out/bn), ceil(in/bk)]
//    (vLLM quantization/fp8.py Fp8LinearMethod, block_quant); per-tensor: weight_scale F32 [].
//  - AWQ: qweight I32 [in, out/8], qzeros I32 [in/g, out/8], scales F16 [in/g, out] (quantization/awq.py).
//  - GPTQ: qweight I32 [in/8, out], qzeros I32 [in/g, out/8], scales F16 [in/g, out], g_idx I32 [in] (gptq.py).
//  - compressed-tensors int4 pack-quantized: weight_packed I32 [out, in/8], weight_scale BF16 [out, in/g],
//    weight_shape I32 [2] (+ weight_zero_point I32 [out/8, in/g] when asymmetric)
//    (compressed_tensors_wNa16.py).
#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "headroom/error.h"
#include "model/inventory_builder.h"
#include "model/model_internal.h"

namespace headroom::model_detail {

void add_family_tensors(InventoryBuilder& b);  // inventory_families.cpp

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void InventoryBuilder::push(std::string name, std::vector<int64_t> shape, DType dtype, TensorRole role, int layer, int expert,
                            int64_t params) {
  // Hostile configs (a million experts x ten thousand layers) must not exhaust memory.
  if (out_.size() >= kMaxTensors) fail_input(c_.source, "config", fmt::format("describes more than {} tensors", kMaxTensors));
  TensorInfo t;
  t.bytes = tensor_bytes(shape, dtype, c_.source, name);
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.role = role;
  t.layer = layer;
  t.expert = expert;
  t.params = params;
  out_.push_back(std::move(t));
}

void InventoryBuilder::plain(const std::string& name, std::vector<int64_t> shape, TensorRole role, int layer, int expert) {
  plain_dtype(name, std::move(shape), c_.dtype, role, layer, expert);
}

void InventoryBuilder::plain_dtype(const std::string& name, std::vector<int64_t> shape, DType dtype, TensorRole role, int layer,
                                   int expert) {
  int64_t n = tensor_bytes(shape, DType::U8, c_.source, name);  // element count (1 byte each), overflow-checked
  push(name, std::move(shape), dtype, role, layer, expert, n);
}

void InventoryBuilder::norm(const std::string& module, int64_t dim, int layer, bool bias) {
  plain(module + ".weight", {dim}, TensorRole::Norm, layer);
  if (bias) plain(module + ".bias", {dim}, TensorRole::Norm, layer);
}

void InventoryBuilder::linear(const std::string& m, int64_t out, int64_t in, TensorRole role, int layer, int expert, bool bias,
                              bool never_quantized) {
  QuantMethod q = QuantMethod::None;
  if (!never_quantized) q = quant_for_module(c_.quant, m);
  else if (!c_.quant.per_module.empty()) q = quant_for_module(c_.quant, m);
  const int64_t params = out * in;
  const bool ct = c_.quant.raw_method == "compressed-tensors";
  switch (q) {
    case QuantMethod::None:
    case QuantMethod::Other:
      push(m + ".weight", {out, in}, c_.dtype, role, layer, expert, params);
      break;
    case QuantMethod::Fp8PerTensor:
      push(m + ".weight", {out, in}, DType::F8_E4M3, role, layer, expert, params);
      push(m + ".weight_scale", {}, DType::F32, role, layer, expert, 0);
      if (c_.quant.raw_method == "modelopt") push(m + ".input_scale", {}, DType::F32, role, layer, expert, 0);
      break;
    case QuantMethod::Fp8PerChannel:
      push(m + ".weight", {out, in}, DType::F8_E4M3, role, layer, expert, params);
      push(m + ".weight_scale", {out, 1}, DType::F32, role, layer, expert, 0);
      break;
    case QuantMethod::Fp8Block: {
      int64_t bn = c_.quant.block_n > 0 ? c_.quant.block_n : 128, bk = c_.quant.block_k > 0 ? c_.quant.block_k : 128;
      push(m + ".weight", {out, in}, DType::F8_E4M3, role, layer, expert, params);
      push(m + (ct ? ".weight_scale" : ".weight_scale_inv"), {ceil_div(out, bn), ceil_div(in, bk)}, DType::F32, role, layer, expert, 0);
      break;
    }
    case QuantMethod::Nvfp4: {
      int64_t g = c_.quant.group_size > 0 ? c_.quant.group_size : 16;
      push(m + (ct ? ".weight_packed" : ".weight"), {out, in / 2}, DType::U8, role, layer, expert, params);
      push(m + ".weight_scale", {out, ceil_div(in, g)}, DType::F8_E4M3, role, layer, expert, 0);
      if (ct) {
        push(m + ".weight_global_scale", {1}, DType::F32, role, layer, expert, 0);
        push(m + ".input_global_scale", {1}, DType::F32, role, layer, expert, 0);
      } else {
        push(m + ".weight_scale_2", {}, DType::F32, role, layer, expert, 0);
        push(m + ".input_scale", {}, DType::F32, role, layer, expert, 0);
      }
      break;
    }
    case QuantMethod::Mxfp4:
      push(m + ".weight", {out, in / 2}, DType::U8, role, layer, expert, params);
      push(m + ".weight_scale", {out, ceil_div(in, 32)}, DType::U8, role, layer, expert, 0);
      break;
    case QuantMethod::Awq: {
      int64_t g = c_.quant.group_size > 0 ? c_.quant.group_size : in;
      int64_t pack = 32 / c_.quant.bits;
      push(m + ".qweight", {in, out / pack}, DType::I32, role, layer, expert, params);
      push(m + ".qzeros", {ceil_div(in, g), out / pack}, DType::I32, role, layer, expert, 0);
      push(m + ".scales", {ceil_div(in, g), out}, DType::F16, role, layer, expert, 0);
      break;
    }
    case QuantMethod::Gptq: {
      int64_t g = c_.quant.group_size > 0 ? c_.quant.group_size : in;
      int64_t pack = 32 / c_.quant.bits;
      push(m + ".qweight", {in / pack, out}, DType::I32, role, layer, expert, params);
      push(m + ".qzeros", {ceil_div(in, g), out / pack}, DType::I32, role, layer, expert, 0);
      push(m + ".scales", {ceil_div(in, g), out}, DType::F16, role, layer, expert, 0);
      push(m + ".g_idx", {in}, DType::I32, role, layer, expert, 0);
      break;
    }
    case QuantMethod::CtInt4: {
      int64_t g = c_.quant.group_size > 0 ? c_.quant.group_size : in;
      push(m + ".weight_packed", {out, in / 8}, DType::I32, role, layer, expert, params);
      push(m + ".weight_scale", {out, ceil_div(in, g)}, DType::BF16, role, layer, expert, 0);
      push(m + ".weight_shape", {2}, DType::I32, role, layer, expert, 0);
      if (c_.quant.awq_zero_point) push(m + ".weight_zero_point", {ceil_div(out, 8), ceil_div(in, g)}, DType::I32, role, layer, expert, 0);
      break;
    }
  }
  if (bias) push(m + ".bias", {out}, c_.dtype, role, layer, expert, out);
}

// Routed experts x layers (MTP layers included) a config may describe: 131,072, 5.6x the
// largest real model (Kimi-K2: 61 x 384 = 23,424). Checked from the counts before any tensor is
// listed, so an 801-byte config of 1,600 layers x 1,000 experts is refused at once instead of
// building millions of tensors first (issue 31).
constexpr int64_t kMaxExpertLayers = int64_t{1} << 17;

std::vector<TensorInfo> derive_inventory(const ModelConfig& c) {
  const int64_t layers = std::max<int64_t>(0, c.num_layers) + std::max<int64_t>(0, c.num_nextn_predict_layers);
  if (c.num_experts > 0 && layers * c.num_experts > kMaxExpertLayers)
    fail_input(c.source, "config", fmt::format("{} layers x {} experts is {} expert layers, over the limit of {} (the largest real "
                                               "model has 23,424)", layers, c.num_experts, layers * c.num_experts, kMaxExpertLayers));
  InventoryBuilder b(c);
  add_family_tensors(b);
  return b.take();
}

static bool is_expert_role(TensorRole r) { return r == TensorRole::ExpertColumn || r == TensorRole::ExpertRow; }

void compute_totals(Model& m) {
  const auto& c = m.config;
  m.params_total = m.params_mtp = m.params_active = m.checkpoint_bytes = m.checkpoint_bytes_mtp = m.params_embedding = 0;
  const double frac = c.num_experts > 0 ? static_cast<double>(c.experts_per_token) / static_cast<double>(c.num_experts) : 1.0;
  double routed = 0;
  for (const auto& t : m.tensors) {
    if (__builtin_add_overflow(m.checkpoint_bytes, t.bytes, &m.checkpoint_bytes))
      fail_input(c.source, "config", "checkpoint size overflows 64-bit bytes");
    bool mtp = t.layer >= c.num_layers || t.role == TensorRole::Mtp;
    if (mtp) {
      m.checkpoint_bytes_mtp += t.bytes;
      m.params_mtp += t.params;
      continue;
    }
    m.params_total += t.params;
    if (t.role == TensorRole::Embedding || t.role == TensorRole::LmHead) m.params_embedding += t.params;
    if (is_expert_role(t.role)) routed += static_cast<double>(t.params);
    else if (t.role != TensorRole::Vision) m.params_active += t.params;
  }
  if (m.checkpoint_bytes > (int64_t{1} << 60)) fail_input(c.source, "config", "checkpoint size above 2^60 bytes is absurd");
  // Routed experts: top-k of E per MoE layer are active per token.
  m.params_active += static_cast<int64_t>(routed * frac + 0.5);
}

// Role, layer and expert of a checkpoint tensor name (for tensors read from safetensors that the
// derived inventory does not list).
void classify_tensor(const ModelConfig& c, TensorInfo& t) {
  const std::string& n = t.name;
  auto has = [&](std::string_view s) { return n.find(s) != std::string::npos; };
  t.layer = -1;
  t.expert = -1;
  for (std::string_view key : {"layers.", "blocks."}) {
    auto p = n.find(key);
    if (p == std::string::npos) continue;
    size_t q = p + key.size();
    int64_t v = 0;
    size_t digits = 0;
    while (q < n.size() && n[q] >= '0' && n[q] <= '9' && digits < 9) v = v * 10 + (n[q++] - '0'), ++digits;
    if (digits > 0 && key == "layers.") t.layer = static_cast<int>(v);
    break;
  }
  if (auto p = n.find("experts."); p != std::string::npos) {
    size_t q = p + 8;
    int64_t v = 0;
    size_t digits = 0;
    while (q < n.size() && n[q] >= '0' && n[q] <= '9' && digits < 9) v = v * 10 + (n[q++] - '0'), ++digits;
    if (digits > 0) t.expert = static_cast<int>(v);
  }
  bool down = has("down_proj") || has(".w2.") || has("fc2") || has("out_proj");
  if (has("visual") || has("vision") || has("multi_modal_projector") || has("mm_projector")) t.role = TensorRole::Vision;
  else if (has("mtp.")) t.role = TensorRole::Mtp;
  else if (has("embed_tokens") || has("embeddings")) t.role = TensorRole::Embedding;
  else if (has("lm_head") || has("shared_head.head")) t.role = TensorRole::LmHead;
  else if (has("eh_proj") || has("enorm") || has("hnorm")) t.role = TensorRole::Mtp;
  else if (has("norm")) t.role = TensorRole::Norm;
  else if (has("indexer")) t.role = TensorRole::Indexer;
  else if (has("linear_attn") || has("mixer.in_proj") || has("mixer.conv1d") || has("mixer.out_proj") || has("A_log") || has("dt_bias") || has("mixer.D"))
    t.role = TensorRole::LinearAttn;
  else if (has("shared_expert") && !has("shared_expert_gate")) t.role = down ? TensorRole::MlpRow : TensorRole::MlpColumn;
  else if (has("experts")) t.role = down ? TensorRole::ExpertRow : TensorRole::ExpertColumn;
  else if (has("mlp.gate.") || has(".router.") || has("block_sparse_moe.gate") || has("shared_expert_gate") || has("mixer.gate."))
    t.role = TensorRole::Router;
  else if (has("q_a_proj") || has("kv_a_proj")) t.role = TensorRole::AttnLowRank;
  else if (has("o_proj") || has("dense.")) t.role = TensorRole::AttnO;
  else if (has("k_proj") || has("v_proj")) t.role = TensorRole::AttnKV;
  else if (has("q_proj") || has("q_b_proj") || has("kv_b_proj") || has("qkv")) t.role = TensorRole::AttnQ;
  else if (has("mlp") || has("feed_forward")) t.role = down ? TensorRole::MlpRow : TensorRole::MlpColumn;
  else t.role = TensorRole::Other;
  // Parameters: packed FP4 stores two per byte, packed int4 eight per int32; scales count none.
  bool scale = has("scale") || has("zero") || has("g_idx") || has("weight_shape");
  if (scale) t.params = 0;
  else {
    int64_t n_el = 1;
    for (int64_t d : t.shape) n_el *= d;
    if (t.dtype == DType::U8 && (c.quant.bits == 4)) n_el *= 2;
    else if (t.dtype == DType::I32 && (has("qweight") || has("weight_packed"))) n_el *= 32 / std::max(1, c.quant.bits);
    t.params = n_el;
  }
}

}  // namespace headroom::model_detail
