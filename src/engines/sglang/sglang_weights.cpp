// Each rank's weights as SGLang loads them (sglang_weights.h): the checkpoint's per-rank bytes,
// then DeepSeek-V4's loader rules (sglang_dsv4_weights.cpp), online FP8, the unsharded dense MLP
// of --moe-dense-tp-size 1, --enable-dp-lm-head, redundant experts and --cpu-offload-gb.
#include "engines/sglang/sglang_weights.h"

#include <algorithm>
#include <fmt/format.h>

#include "engines/layout_cache.h"
#include "engines/shared/cpu_offload.h"
#include "engines/sglang/sglang_dsv4.h"
#include "engines/sglang/sglang_rules.h"
#include "headroom/units.h"

namespace headroom::sglang {

LoadedWeights loaded_weights(const Deployment& d, const Flags& fl, bool dsv4, std::vector<std::string>& notes) {
  const ModelConfig& c = d.model->config;
  const Parallel& par = d.par;
  LoadedWeights out;
  std::vector<RankWeights>& rank_weights = out.ranks;
  rank_weights = cached_weights_per_rank(d.model, EngineKind::SGLang, par);
  if (dsv4) {  // what SGLang's loader converts, keeps or builds beyond the checkpoint (sglang_dsv4_weights.cpp)
    Dsv4Inputs in;
    in.sm = d.gpu.sm;
    in.amd = d.gpu.vendor == "amd";
    in.date = build_date(d.engine_version);
    if (const std::string* b = fl.get("--moe-runner-backend")) in.moe_runner_backend = *b;
    if (const std::string* b = fl.get("--moe-a2a-backend")) in.moe_a2a_backend = *b;
    auto env_bool = [&](std::string_view n) -> std::optional<bool> {
      return d.env_value(n) ? std::optional<bool>(d.env_on(n)) : std::nullopt;
    };
    in.env_fp4_experts = env_bool("SGLANG_DSV4_FP4_EXPERTS");
    in.env_fp4_dequant = env_bool("SGLANG_DSV4_FP4_DEQUANT");
    in.env_fp8_wo_a_gemm = env_bool("SGLANG_OPT_FP8_WO_A_GEMM");
    const Dsv4Weights rules = dsv4_weight_rules(c, in);
    notes.insert(notes.end(), rules.notes.begin(), rules.notes.end());
    for (auto& rw : rank_weights) {
      auto [first, last] = pp_layer_range(static_cast<int>(c.num_layers), par.pp, rw.pp_rank, EngineKind::SGLang);
      const Dsv4RankExtra x = dsv4_rank_extra(c, par, rules, first, last, rw.pp_rank == 0);
      rw.bytes += x.main_bytes;
      if (rw.mtp_bytes > 0) rw.mtp_bytes += x.draft_bytes;
      if (rw.rank == 0)
        for (const auto& [what, b] : x.items) notes.push_back(fmt::format("rank 0 weights + {}: {}", human_bytes(b), what));
    }
  }
  // --quantization fp8 on an unquantized 16-bit checkpoint: online FP8 (srt/layers/quantization/
  // fp8.py, Fp8Config with is_checkpoint_fp8_serialized False): the Linear and expert weights are
  // quantized to FP8 with a per-tensor scale in process_weights_after_loading, which
  // DefaultModelLoader.load_weights_and_postprocess runs after every weight is loaded -- so the
  // 16-bit weights are all on the GPU first. "Load weight end ... mem usage" (free memory read
  // after empty_cache) holds the FP8 result.
  // fp8_saved[i]: what online FP8 took off rank_weights[i]; the 16-bit copy held while loading
  // is the same amount again (the linears' other half).
  std::vector<int64_t>& fp8_saved = out.fp8_saved;
  fp8_saved.assign(rank_weights.size(), 0);
  if (const std::string* q = fl.get("--quantization"); q && *q == "fp8" && c.quant.method == QuantMethod::None && dtype_size(c.dtype) == 2) {
    for (size_t i = 0; i < rank_weights.size(); ++i) {
      fp8_saved[i] = rank_weights[i].component_bytes(kLinearComponents) / 2;
      rank_weights[i].bytes -= fp8_saved[i];
    }
    if (!rank_weights.empty())
      notes.push_back(fmt::format("--quantization fp8 on a 16-bit checkpoint: online FP8 (layers/quantization/fp8.py): the attention, MLP and expert "
                                      "weights load at 1 B per element; the 16-bit ones ({} on rank 0) are all loaded before they are quantized",
                                      human_bytes(fp8_saved.front())));
  }
  // --moe-dense-tp-size 1 (server_args: "only support 1 and None"): the dense MLP layers before
  // first_k_dense_replace run unsharded (deepseek_v2.py DeepseekV2MLP, tp_size 1), so every rank
  // holds them whole. --enable-dp-lm-head (with DP attention): ParallelLMHead(use_attn_tp_group)
  // shards the head over the attention-TP group (tp / dp ranks) instead of all tp ranks.
  if (const std::string* v = fl.get("--moe-dense-tp-size"); v && *v != "1" && *v != "None")
    fail_input(kSrc, "--moe-dense-tp-size", fmt::format("moe_dense_tp_size only support 1 and None currently (got {})", *v));
  const bool dense_tp1 = fl.get("--moe-dense-tp-size") && *fl.get("--moe-dense-tp-size") == "1" && c.first_k_dense > 0 && par.tp > 1;
  const bool dp_lm_head = fl.get("--enable-dp-lm-head") && *fl.get("--enable-dp-lm-head") != "false" && par.dp_attention && par.tp > 1;
  if (dense_tp1 || dp_lm_head) {
    int64_t dense_full = 0, head_full = 0;
    for (const auto& t : d.model->tensors) {
      const bool mlp = t.role == TensorRole::MlpColumn || t.role == TensorRole::MlpRow;
      if (dense_tp1 && mlp && t.layer >= 0 && t.layer < c.first_k_dense) dense_full += t.bytes;
      if (dp_lm_head && t.role == TensorRole::LmHead) head_full += t.bytes;
    }
    if (dp_lm_head && head_full == 0 && c.tie_word_embeddings)
      for (const auto& t : d.model->tensors)
        if (t.role == TensorRole::Embedding) head_full += t.bytes;
    const int attn_tp = std::max(1, par.tp / std::max(1, par.dp));
    const int64_t dense_extra = dense_full - dense_full / par.tp;
    const int64_t head_extra = head_full / attn_tp - head_full / par.tp;
    for (auto& rw : rank_weights) {
      auto [first, last] = pp_layer_range(static_cast<int>(c.num_layers), par.pp, rw.pp_rank, EngineKind::SGLang);
      if (dense_tp1 && first < c.first_k_dense) rw.bytes += dense_extra;  // pp > 1: the stage holding them (whole, GUESS for a split)
      if (dp_lm_head && rw.pp_rank == par.pp - 1) rw.bytes += head_extra;
    }
    if (dense_tp1) notes.push_back(fmt::format("--moe-dense-tp-size 1: the {} dense MLP layer(s) are whole on every rank (+{} per rank)", c.first_k_dense, human_bytes(dense_extra)));
    if (dp_lm_head) notes.push_back(fmt::format("--enable-dp-lm-head: lm_head sharded over the {}-rank attention-TP group (+{} per rank)", attn_tp, human_bytes(head_extra)));
  }
  // --ep-num-redundant-experts N (server_args; eplb/expert_location.py): the MoE layers hold
  // num_logical_experts + N physical experts spread over the EP ranks, so each rank loads N / ep more.
  if (auto r = fl.integer("--ep-num-redundant-experts", 0, 1 << 16); r && *r > 0 && c.num_experts > 0 && par.ep > 1) {
    for (auto& rw : rank_weights) rw.bytes += rw.component_bytes({"experts"}) * *r / c.num_experts;
    notes.push_back(fmt::format("--ep-num-redundant-experts {}: ({} + {}) / {} physical experts per rank", *r, c.num_experts, *r, par.ep));
  }
  // --cpu-offload-gb: server_args sets the offloader's budget to int(gb x 1024^3) and make_layers
  // moves the first decoder layers' parameters to pinned CPU memory one by one until it is spent
  // (srt/utils offloader, the same scheme as vLLM's; engines/shared/cpu_offload.cpp).
  if (auto gb = fl.num("--cpu-offload-gb", 0, 1e6); gb && *gb > 0) {
    const int64_t budget = static_cast<int64_t>(*gb * 1073741824.0);
    for (size_t i = 0; i < rank_weights.size(); ++i) {
      const CpuOffload off = cpu_offload(rank_weights[i], budget, fp8_saved[i]);
      rank_weights[i].bytes -= off.bytes;
      if (i == 0) notes.push_back(off.what);
    }
  }
  return out;
}

}  // namespace headroom::sglang
