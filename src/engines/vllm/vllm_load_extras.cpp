// LoRA adapter slots and Marlin's FP8 scales: memory vLLM allocates at load beyond the
// checkpoint's tensors, counted in "Model loading took" (see vllm_load_extras.h).
#include "engines/vllm/vllm_load_extras.h"

#include <algorithm>
#include <fmt/format.h>

#include "engines/vllm/vllm_rule_table.h"
#include "headroom/units.h"

namespace headroom::vllm {

LoadExtra lora_buffers(const ModelConfig& c, const LoraSettings& l, int tp, int first, int last) {
  // vllm/lora/layers/base_linear.py BaseLinearLayerWithLoRA.create_lora_weights (and the merged
  // column / QKV subclasses in column_parallel_linear.py): every wrapped linear allocates, per
  // output slice, lora_a_stacked [max_loras, 1, rank_a, input_size] and lora_b_stacked
  // [max_loras, 1, slice_out, max_lora_rank] in lora_dtype (auto = the model dtype), zeroed at
  // load (LoRAModelManager wraps the modules inside load_model's DeviceMemoryProfiler window).
  //  - column parallel (qkv_proj: 3 slices q / k / v; gate_up_proj: 2): input_size is the full
  //    hidden size, slice_out the rank's shard; rank_a = max_lora_rank / tp with
  //    --fully-sharded-loras;
  //  - row parallel (o_proj, down_proj): input_size is the rank's shard, slice_out the full
  //    hidden size (/ tp with --fully-sharded-loras).
  // KV heads follow QKVParallelLinear's replication (one head per rank when kv_heads < tp).
  // Modelled for GQA/MHA attention and dense (or shared-expert) MLPs, the layers of the models
  // people serve adapters on; routed experts (FusedMoEWithLoRA), MLA and linear-attention
  // projections, the embedding and lm_head (vocab x rank) are not, and the note says so.
  LoadExtra e;
  if (!l.enabled) return e;
  const double r = static_cast<double>(l.max_rank);
  const double tpd = static_cast<double>(std::max(1, tp));
  const double H = static_cast<double>(c.hidden_size);
  const double rank_a = l.fully_sharded ? r / tpd : r;
  const double row_out = l.fully_sharded ? H / tpd : H;
  double elems = 0;
  int skipped_attn = 0, skipped_experts = 0;
  for (int i = first; i < last && i < static_cast<int>(c.layers.size()); ++i) {
    const LayerInfo& L = c.layers[static_cast<size_t>(i)];
    const bool gqa = !c.mla && (L.attn == AttnKind::Full || L.attn == AttnKind::Sliding || L.attn == AttnKind::Chunked) && !L.attn_linear;
    if (gqa) {
      const double d = static_cast<double>(L.head_dim > 0 ? L.head_dim
                                           : c.head_dim > 0 ? c.head_dim
                                                            : c.hidden_size / std::max<int64_t>(1, c.num_attention_heads));
      const int64_t kvh = L.kv_heads > 0 ? L.kv_heads : (c.num_kv_heads > 0 ? c.num_kv_heads : c.num_attention_heads);
      const double kv_local = static_cast<double>(kvh >= tp ? kvh / tp : 1);
      const double q_local = static_cast<double>(c.num_attention_heads) / tpd;
      elems += 3 * rank_a * H + (q_local + 2 * kv_local) * d * r;  // qkv_proj
      elems += r * q_local * d + row_out * r;                       // o_proj
    } else if (L.attn != AttnKind::None) {
      ++skipped_attn;
    }
    if (!L.has_mlp || L.ffn_linear) continue;
    int64_t width = 0;
    if (L.moe) {
      ++skipped_experts;
      width = c.shared_expert_intermediate_size > 0 ? c.shared_expert_intermediate_size : c.num_shared_experts * c.moe_intermediate_size;
    } else {
      width = L.ffn_intermediate > 0 ? L.ffn_intermediate : c.intermediate_size;
    }
    if (width <= 0) continue;
    const double I_local = static_cast<double>(width) / tpd;
    elems += 2 * rank_a * H + 2 * I_local * r;  // gate_up_proj
    elems += r * I_local + row_out * r;         // down_proj
  }
  e.bytes = static_cast<int64_t>(elems * static_cast<double>(l.max_loras) * l.elem_bytes);
  e.what = fmt::format("--enable-lora: {} adapter slot(s) of rank {} on the attention and MLP linears of layers {}..{}: {} per rank "
                       "(stacked A/B buffers, vllm/lora/layers/base_linear.py create_lora_weights; counted in 'Model loading took')",
                       l.max_loras, l.max_rank, first, last - 1, human_bytes(e.bytes));
  if (skipped_attn > 0) e.what += fmt::format("; not modelled: the LoRA buffers of {} MLA / linear-attention layers", skipped_attn);
  if (skipped_experts > 0) e.what += fmt::format("; not modelled: routed-expert LoRA (FusedMoEWithLoRA) on {} MoE layers", skipped_experts);
  return e;
}

LoadExtra fp8_marlin_scales(const ModelConfig& c, const GpuSpec& gpu, int64_t fp8_bytes) {
  // vllm/model_executor/layers/quantization/fp8.py: Fp8LinearMethod / Fp8MoEMethod take Marlin
  // when the GPU lacks FP8 compute (not has_device_capability(89), e.g. A100, A10, RTX 3090).
  // utils/marlin_utils_fp8.py prepare_fp8_layer_for_marlin (prepare_moe_fp8_layer_for_marlin for
  // experts) repacks the weights in place (same bytes) and replaces block scales
  // [N / block_n, K / block_k] float32 with group-wise scales [K / block_k, N] in the model
  // dtype (repeat_interleave over block_n): per FP8 weight element 2 / block_k bytes instead of
  // 4 / (block_n x block_k). Per-tensor and per-channel scales become one row [1, N] (negligible).
  LoadExtra e;
  if (gpu.vendor != "nvidia" || gpu.sm <= 0 || gpu.sm >= 89 || fp8_bytes <= 0) return e;
  if (c.quant.method != QuantMethod::Fp8Block || c.quant.block_k <= 0 || c.quant.block_n <= 0) return e;
  const double el = static_cast<double>(fp8_bytes);  // one byte per FP8 element
  const double now = el * 2.0 / static_cast<double>(c.quant.block_k);
  const double before = el * 4.0 / (static_cast<double>(c.quant.block_n) * static_cast<double>(c.quant.block_k));
  e.bytes = static_cast<int64_t>(now - before);
  e.what = fmt::format("FP8 on sm{} (no FP8 compute): vLLM runs the FP8 linears through Marlin and re-lays the {}x{} block scales as "
                       "per-group bf16 scales [K/{}, N]: +{} per rank (marlin_utils_fp8.py prepare_fp8_layer_for_marlin)",
                       gpu.sm, c.quant.block_n, c.quant.block_k, c.quant.block_k, human_bytes(e.bytes));
  return e;
}

OnlineFp8 online_fp8(const RankWeights& w, int vllm_version, int layers_on_rank) {
  // vllm/model_executor/layers/quantization/fp8.py with is_checkpoint_fp8_serialized False:
  // Fp8LinearMethod and Fp8MoEMethod quantize each Linear / expert weight to FP8 E4M3 with one
  // per-tensor float scale in process_weights_after_loading; lm_head (not a LinearBase with this
  // quant method), the embeddings, norms and the vision tower keep the model dtype. "Model loading
  // took" is allocated memory after that processing (DeviceMemoryProfiler), so it holds the FP8
  // weights: the attention, MLP and expert components at half their 16-bit bytes.
  // At the load's peak: the whole 16-bit linears, or one layer's from PR #31914 (vllm.online_fp8_streaming).
  OnlineFp8 o;
  const int64_t linear = w.component_bytes(kLinearComponents);
  o.saved = linear / 2;
  const bool streaming = has(Rule::OnlineFp8Streaming, vllm_version);
  o.load_transient = streaming ? linear / std::max(1, layers_on_rank) : linear - o.saved;
  o.what = fmt::format("--quantization fp8 on a 16-bit checkpoint: online dynamic FP8 (quantization/fp8.py): the attention, MLP and expert "
                       "weights load at 1 B per element ({} per rank less); lm_head, embeddings, norms and any vision tower stay 16-bit. "
                       "While loading: {} of 16-bit weights on top, freed by the end of load_model ({})",
                       human_bytes(o.saved), human_bytes(o.load_transient),
                       !streaming ? "before 0.14 the whole 16-bit model loads before quantization, PR #31914"
                                           : "from 0.14 quantized layer by layer as it loads, PR #31914: one layer's linears, INFERRED");
  return o;
}


}  // namespace headroom::vllm
