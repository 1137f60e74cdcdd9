// The SGLang engine model: plays SGLang's startup on every rank, in SGLang's order
// (model_runner.py / kv_cache_configurator.py / cuda_graph_runner.py, by era):
//   init (context + NCCL) -> P;  weights -> A;  KV pool from rest = A - P(1-f);
//   request-to-token table;  backend workspaces;  CUDA-graph capture;  runtime prefill peak.
// KV sizing is SGLang's own arithmetic (exact given P and A); the estimated terms come from
// sglang_estimates.cpp and carry ranges.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engines/calibration_apply.h"
#include "engines/layout_cache.h"
#include "engines/sglang/sglang_dsv4.h"
#include "engines/sglang/sglang_estimates.h"
#include "engines/sglang/sglang_flag_reader.h"
#include "engines/sglang/sglang_weights.h"
#include "engines/sglang/sglang_rule_table.h"
#include "engines/sglang/sglang_rules.h"
#include "engines/shared/cpu_offload.h"
#include "engines/shared/process_terms.h"
#include "headroom/engine.h"
#include "headroom/cli.h"
#include "headroom/error.h"
#include "headroom/kv.h"
#include "headroom/layout.h"
#include "headroom/sim.h"
#include "engines/deployment_host.h"
#include "headroom/units.h"

namespace headroom {

using namespace sglang;

namespace {


std::string torch_dtype(const std::string& kv) {
  if (kv == "fp8_e4m3") return "torch.float8_e4m3fn";
  if (kv == "fp8_e5m2") return "torch.float8_e5m2";
  if (kv == "fp4_e2m1") return "torch.float4_e2m1fn_x2";
  if (kv == "float16") return "torch.float16";
  return "torch.bfloat16";
}

std::string default_backend(const ModelConfig& c, const GpuSpec& g, Era era) {
  // ROCm: aiter for MHA models ("Attention backend not specified. Use aiter backend by default.",
  // v0.5.17 MI355X logs, tests/data/extra xsgl-016/019); MLA models resolve to triton (Kimi-K2.5,
  // v0.5.8.post1 MI355X, ServerArgs attention_backend='triton' with none passed, xsgl-005).
  if (g.vendor == "amd") return c.mla ? "triton" : "aiter";
  if (c.mla && c.has_indexer()) return "nsa";
  if (c.mla) return g.sm == 90 ? "fa3" : (g.sm >= 100 && g.sm < 110 ? "trtllm_mla" : "triton");
  if (g.sm == 90 && era != Era::V2024) return "fa3";  // FA3 default on Hopper since v0.4.6
  if (g.sm >= 100 && g.sm < 110 && era == Era::Y2026) return "trtllm_mha";
  return "flashinfer";
}

bool uses_hybrid_swa_pool(const ModelConfig& c, Era era) {
  // HybridSWAPoolConfigurator (Gemma-2/3, gpt-oss, MiMo, Llama-4 chunked): 2025 code on.
  return era != Era::V2024 && c.count_layers(AttnKind::Sliding) + c.count_layers(AttnKind::Chunked) > 0 &&
         c.count_layers(AttnKind::Full) > 0;
}

std::string gb(int64_t bytes) { return gib2(bytes); }

// What SGLang refuses before it sizes anything, in its own words (exit 2): flags it does not know,
// a model its registry lacks in this version, heads the attention TP size does not divide. Returns
// the notes for flags accepted but not modelled.
std::vector<std::string> check_deployment(const Deployment& d, const EraInfo& era) {
  const ModelConfig& c = d.model->config;
  const Parallel& par = d.par;
  const auto& known = sglang_flags();
  const auto& unmodelled = sglang_unmodelled_flags();
  std::vector<std::string> flag_notes;
  for (const auto& [k, v] : d.flags) {
    if (std::find(known.begin(), known.end(), k) == known.end())
      fail_unknown_option(kSrc, k, fmt::format("launch_server.py: error: unrecognized arguments: {}{}", k, did_you_mean_hint(k, known)));
    auto u = std::find_if(unmodelled.begin(), unmodelled.end(), [&k = k](const auto& e) { return e.first == k; });
    if (u != unmodelled.end())
      flag_notes.push_back(fmt::format("{}{} is not modelled ({}): the forecast is as without it", k, v == "true" ? "" : " " + v, u->second));
  }
  // DeciLMForCausalLM (Nemotron-NAS) entered SGLang with srt/models/nemotron_nas.py, PR #9067 merged
  // 2025-08-17; INFERRED first release 0.5.1 (from the merge date). Older builds refuse it in the
  // model registry's words (sgl-project/sglang issue #4689 quotes the line).
  if (c.family == "nemotron_nas" && !has(Rule::NemotronNas, rule_version(era)))
    fail_input(kSrc, "--model-path",
               fmt::format("ValueError: Model architectures ['{}'] are not supported for now (SGLang {} predates "
                           "nemotron_nas.py, added 2025-08-17 / 0.5.1)", c.architecture, d.engine_version));
  // srt/models/nemotron_nas.py DeciLMDecodeLayer reads only no_op (as vLLM's): replace_with_linear
  // blocks cannot be built. The exact Python error is a GUESS.
  if (c.family == "nemotron_nas")
    for (size_t i = 0; i < c.layers.size(); ++i)
      if (c.layers[i].attn_linear || c.layers[i].ffn_linear)
        fail_input(kSrc, "--model-path",
                   fmt::format("block_configs[{}] replace_with_linear: SGLang's DeciLMDecodeLayer has no linear replacement "
                               "(TypeError: unsupported operand type(s) for //: 'int' and 'NoneType', GUESS of the wording)", i));
  const int attn_tp = std::max(1, par.attn_tp());
  if (c.num_attention_heads % attn_tp != 0)
    fail_input(kSrc, "--tp-size", fmt::format("AssertionError: {} is not divisible by {} (num_attention_heads of {} by the attention TP size)",
                                              c.num_attention_heads, attn_tp, c.architecture));
  if (!c.mla && c.num_kv_heads > 0 && c.num_kv_heads >= attn_tp && c.num_kv_heads % attn_tp != 0)
    fail_input(kSrc, "--tp-size", fmt::format("AssertionError: {} is not divisible by {} (num_key_value_heads by the attention TP size)", c.num_kv_heads, attn_tp));
  if (!c.mla && c.num_kv_heads > 0 && c.num_kv_heads < attn_tp && attn_tp % c.num_kv_heads != 0)
    fail_input(kSrc, "--tp-size", fmt::format("AssertionError: {} is not divisible by {} (attention TP size by num_key_value_heads)", attn_tp, c.num_kv_heads));
  return flag_notes;
}

// The attention backend's static CUDA-graph buffers for `rows` captured tokens (exact).
int64_t graph_metadata_bytes(const std::string& backend, int64_t rows, int64_t ctx, int64_t page, int64_t wrappers) {
  if (rows <= 0) return 0;
  if (backend == "nsa") return rows * ctx * 4;                   // nsa_backend page_table [max_num_tokens, max_context_len] int32
  if (backend == "triton") return rows * ctx * 4 * wrappers;     // cuda_graph_kv_indices
  if (backend == "flashinfer") return rows * ctx * 4 * wrappers  // cuda_graph_kv_indices
                                      + rows * ctx;              // + cuda_graph_custom_mask (uint8): the target's backend has prefill
  return rows * ((ctx + page - 1) / page) * 4;                   // page table
}

}  // namespace

Forecast plan_sglang(const Deployment& d, const PlanOptions& opt) {
  const ModelConfig& c = d.model->config;
  const Parallel& par = d.par;
  const EraInfo era = era_for_version(d.engine_version);
  Flags fl{d};

  std::vector<std::string> flag_notes = check_deployment(d, era);  // what SGLang itself would refuse
  const int attn_tp = std::max(1, par.attn_tp());

  const std::optional<double> f_user = fl.num("--mem-fraction-static", 0.0, 1.0, true);
  // Derived context length (srt/configs/model_config.py get_context_length; engines/context_limit.cpp).
  const int64_t model_ctx = sglang_derived_context_length(c);
  // Environment: SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN (get_bool_env_var) turns the
  // longer-context refusal into a warning; other variables are not modelled.
  const bool allow_longer = d.env_on("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN");
  std::vector<std::string> env_notes;
  const bool dsv4_env_modelled = c.family == "deepseek_v4";  // sglang_dsv4_weights.cpp reads these
  for (const auto& [name, value] : d.env)
    if (name != "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN" && name.rfind("SGLANG_DEEPEP_", 0) != 0 &&  // DeepEP's: sglang_caveats.cpp
        !(dsv4_env_modelled && (name == "SGLANG_DSV4_FP4_EXPERTS" || name == "SGLANG_DSV4_FP4_DEQUANT" || name == "SGLANG_OPT_FP8_WO_A_GEMM")))
      env_notes.push_back(fmt::format("environment {}={} is not modelled: the forecast is the same as without it", name, value));
  const std::optional<int64_t> ctx_user = fl.integer("--context-length", 1, int64_t{1} << 31);
  if (ctx_user && *ctx_user > model_ctx) {
    const std::string msg = fmt::format(
        "Warning: User-specified context_length ({}) is greater than the derived context_length ({}). This may lead to incorrect "
        "model outputs or CUDA errors. Note that the derived context_length may differ from max_position_embeddings in the model's config.",
        *ctx_user, model_ctx);
    if (!allow_longer)
      fail_input(kSrc, "--context-length",
                 fmt::format("ValueError: {} To allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", msg));
    env_notes.push_back(msg + " (SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN: SGLang starts with this warning)");
  }
  const int64_t ctx = ctx_user.value_or(model_ctx);
  const std::string kv_flag = fl.get("--kv-cache-dtype") ? *fl.get("--kv-cache-dtype") : "auto";
  const std::optional<int64_t> max_total_user = fl.integer("--max-total-tokens", 1, int64_t{1} << 40);
  const std::optional<int64_t> max_running_user = fl.integer("--max-running-requests", 1, 1 << 24);
  const int64_t max_prefill = fl.integer("--max-prefill-tokens", 1, 1 << 24).value_or(16384);
  const bool disable_graph = fl.on("--disable-cuda-graph");
  const bool no_padding = fl.on("--disable-cuda-graph-padding");

  std::string spec_algo = fl.get("--speculative-algorithm") ? *fl.get("--speculative-algorithm") : "";
  for (char& ch : spec_algo) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (!spec_algo.empty() && spec_algo != "EAGLE" && spec_algo != "EAGLE3" && spec_algo != "NEXTN" && spec_algo != "STANDALONE" &&
      spec_algo != "NGRAM" && spec_algo != "MTP" && spec_algo != "DFLASH")
    fail_input(kSrc, "--speculative-algorithm", fmt::format("argument --speculative-algorithm: invalid choice: '{}'", spec_algo));
  const bool spec = !spec_algo.empty() && spec_algo != "NGRAM";
  const int64_t spec_steps = fl.integer("--speculative-num-steps", 1, 64).value_or(3);
  const int64_t spec_topk = fl.integer("--speculative-eagle-topk", 1, 64).value_or(1);
  const int64_t spec_draft_tokens = fl.integer("--speculative-num-draft-tokens", 1, 1024).value_or(spec_steps + 1);

  // --- defaults as server_args resolves them ----------------------------------------------
  const int64_t gpu_mem_mib = d.gpu.smi_total_mib > 0 ? d.gpu.smi_total_mib : d.capacity_bytes / MiB + 600;  // +600: typical nvidia-smi minus torch total (INFERRED)
  const bool small_tier_raised = has(Rule::SmallGpuTierRaised, rule_version(era));
  int64_t chunked = fl.integer("--chunked-prefill-size", -1, 1 << 24).value_or(default_chunked_prefill_size(era.era, gpu_mem_mib, par.tp, small_tier_raised));
  if (!fl.get("--chunked-prefill-size") && par.dp_attention && par.dp > 1 && (era.era == Era::Mid2025 || era.era == Era::Late2025))
    chunked /= par.dp;  // "DP attention is enabled. The chunked prefill size is adjusted to ..."
  int64_t max_bs = default_cuda_graph_max_bs(era.era, gpu_mem_mib, par.tp, spec, small_tier_raised);
  std::vector<int64_t> bs_list_user;
  if (const std::string* l = fl.get("--cuda-graph-bs")) {
    for (size_t i = 0; i < l->size();) {
      size_t j = l->find_first_of(", ", i);
      std::string tok = l->substr(i, j == std::string::npos ? std::string::npos : j - i);
      if (!tok.empty()) {
        size_t used = 0;
        long long bs = 0;
        try {
          bs = std::stoll(tok, &used);
        } catch (...) {
          used = 0;
        }
        if (used != tok.size()) fail_input(kSrc, "--cuda-graph-bs", fmt::format("argument --cuda-graph-bs: invalid int value: '{}'", tok));
        // The same range as --cuda-graph-max-bs: a batch past 65,536 no deployment captures,
        // and larger ones overflow the graph-memory estimate (issue 31).
        if (bs < 1 || bs > (1 << 16)) fail_input(kSrc, "--cuda-graph-bs", fmt::format("argument --cuda-graph-bs: {} is out of range [1, 65536]", tok));
        bs_list_user.push_back(bs);
      }
      if (j == std::string::npos) break;
      i = j + 1;
    }
    if (!bs_list_user.empty()) max_bs = *std::max_element(bs_list_user.begin(), bs_list_user.end());
  }
  if (auto m = fl.integer("--cuda-graph-max-bs", 1, 1 << 16)) max_bs = *m;
  const std::string backend = fl.get("--attention-backend") ? *fl.get("--attention-backend") : default_backend(c, d.gpu, era.era);
  // DeepSeek-V4 runs with page 256 on CUDA (server_args fix-up; DSV4PoolConfigurator asserts page % 128 == 0).
  const bool dsv4 = c.family == "deepseek_v4";
  // DSA on ROCm: "Setting page size to 1 for DeepSeek DSA on ROCm" (server_args; memory_pool.py
  // NSATokenToKVPool asserts page_size == 1 on the HIP legacy path). Real log: GLM-5-FP8 on 8 x MI355X,
  // v0.5.8.post1, ServerArgs page_size=1 (tests/data/extra xsgl-004).
  const bool amd_dsa = d.gpu.vendor == "amd" && c.mla && c.has_indexer();
  const int64_t page = dsv4 ? 256 : amd_dsa ? 1 : forced_page_size(c, backend, fl.integer("--page-size", 1, 1 << 16).value_or(1));
  const bool multimodal = c.vision.present;
  // --disable-cuda-graph turns the prefill graph off only from the cuda_graph_config rework
  // (_parse_cuda_graph_config: disable_cuda_graph sets decode and prefill backends to disabled).
  // Before it the piecewise runner was started by its own switch: SGLang 0.5.13 with
  // --disable-cuda-graph still logged "Capture piecewise CUDA graph end ... mem usage=0.88 GB"
  // (Qwen3-30B-A3B, RTX PRO 6000, tests/data/extra xsgl-020).
  const bool graph_off_covers_prefill = !legacy_piecewise_graph(era);
  const bool prefill_graph = era.era == Era::Y2026 && (!disable_graph || !graph_off_covers_prefill) && !c.mla && !par.dp_attention &&
                             par.pp == 1 && !multimodal && !fl.on("--disable-piecewise-cuda-graph");
  const bool piecewise = era.era == Era::Late2025 && fl.on("--enable-piecewise-cuda-graph");
  const int64_t prefill_graph_max = std::min<int64_t>(chunked > 0 ? chunked : max_prefill,
                                                      fl.integer("--piecewise-cuda-graph-max-tokens", 1, 1 << 24).value_or(c.mla ? 2048 : 1 << 24));
  const auto prefill_buckets = (prefill_graph || piecewise) ? prefill_graph_buckets(prefill_graph_max) : std::vector<int64_t>{};

  DefaultInputs din;
  din.gpu_mem_mib = gpu_mem_mib;
  din.tp = par.tp;
  din.pp = par.pp;
  din.dp = par.dp;
  din.dp_attention = par.dp_attention;
  din.mla = c.mla;
  din.speculative = spec;
  din.standalone_spec = spec_algo == "STANDALONE";
  din.deepep = fl.get("--moe-a2a-backend") && *fl.get("--moe-a2a-backend") == "deepep";
  din.multimodal = multimodal;
  din.prefill_graph = prefill_graph;
  din.prefill_graph_buckets = static_cast<int64_t>(prefill_buckets.size());
  din.piecewise_graph = piecewise;
  din.piecewise_buckets = static_cast<int64_t>(prefill_buckets.size());
  din.chunked_prefill_size = chunked;
  din.max_prefill_tokens = max_prefill;
  din.cuda_graph_max_bs = max_bs;
  din.vit_layers = c.vision.config_num_hidden_layers;  // 0: SGLang's getattr default (24)
  din.vit_hidden = c.vision.hidden;
  double reserve_mib = 0;
  const double f_default = default_mem_fraction_static(era.era, din, &reserve_mib);
  // AMD, aiter attention, context over 8K: server_args multiplies mem_fraction_static by 0.85,
  // the user's value as well as the default (model_runner.py since PR #6564, 2025-05-24; kept by
  // arg_groups/attention_hook.py, PR #37242 2026-08-31, unless SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION=1
  // and the value was given). Real logs, v0.5.17 on MI355X, Qwen3-0.6B (context 40960): '--mem-fraction-static
  // 0.6' sized 1,360,288 tokens = 286.05 - 287.26 x (1 - 0.51) GB over 114,688 B, 0.5 sized 1,131,687
  // (0.425) (tests/data/extra xsgl-016/019).
  const bool aiter_derate = d.gpu.vendor == "amd" && backend == "aiter" && ctx > 8192 && era.era != Era::V2024;
  const double f = f_user.value_or(f_default) * (aiter_derate ? 0.85 : 1.0);

  Forecast out;
  out.notes.insert(out.notes.end(), env_notes.begin(), env_notes.end());
  out.notes.insert(out.notes.end(), flag_notes.begin(), flag_notes.end());
  out.engine = "sglang";
  out.version = d.engine_version.empty() ? "newest" : d.engine_version;
  out.era = era.label + "; " + era.reason;
  out.context_len = ctx;

  // --- KV cell (pool_configurator / model_runner_kv_cache_mixin) ---------------------------
  // --mamba-ssm-dtype (server_args: float32 default, bfloat16).
  int ssm_bytes = 4;
  if (const std::string* v = fl.get("--mamba-ssm-dtype")) {
    if (*v == "bfloat16") ssm_bytes = 2;
    else if (*v != "float32")
      fail_input(kSrc, "--mamba-ssm-dtype", fmt::format("argument --mamba-ssm-dtype: invalid choice: '{}' (choose from 'float32', 'bfloat16')", *v));
  }
  const KvPerToken kv = sglang_kv_per_token(c, par, kv_flag, d.gpu.sm, 0, ssm_bytes);
  const bool hybrid_swa = uses_hybrid_swa_pool(c, era.era);
  const bool dsv4_legacy = dsv4 && legacy_dsv4_pool(era);
  // DSV4 model override 0.1 (apply_deepseek_v4_defaults). The first ROCm DSv4 build did not apply it:
  // 0.5.11.dev20260512 on MI300X prints swa_full_tokens_ratio=0.8 (xsgl-027), while the Hopper image
  // of 2026-05-08 sized its pool at 0.1 (xsgl-028) -- INFERRED from those two logs.
  const double swa_ratio =
      fl.num("--swa-full-tokens-ratio", 0.0, 1.0, true).value_or(dsv4 && !(dsv4_legacy && d.gpu.vendor == "amd") ? 0.1 : 0.8);
  // DeepSeek-V4: bytes per full-pool token over all sub-pools (draft inflation included) and the fixed c128 state.
  const bool wide_rings = dsv4_legacy && d.gpu.vendor == "amd" && early_rocm_dsv4_rings(era);
  const double dsv4_bpft = dsv4 ? dsv4_bytes_per_full_token(c, swa_ratio, spec, dsv4_legacy, wide_rings) : 0.0;
  const int64_t dsv4_fixed =
      dsv4 && !dsv4_legacy ? dsv4_c128_state_fixed_bytes(c, spec, max_running_user.value_or(0), par.dp_attention ? par.dp : 1) : 0;
  if (dsv4_legacy)
    out.notes.push_back(fmt::format("DeepSeek-V4 pools of builds before sglang PR #28612 (2026-06): swa_full_tokens_ratio {} and the c128 "
                                    "compress state sized with the SWA pool ({:.0f} B per full token in all)",
                                    swa_ratio, dsv4_bpft));
  int64_t full_cell = dsv4 ? static_cast<int64_t>(std::llround(dsv4_bpft)) : kv.full_bytes + (hybrid_swa ? 0 : kv.swa_bytes);
  // The cell the pool is SIZED with, when it differs from the one it is allocated with: SGLang on
  // ROCm divides the budget by the plain latent (kv_lora_rank + qk_rope_head_dim = 576 B FP8 per
  // layer, plus the 132-B indexer row) while NSATokenToKVPool allocates the FlashMLA FP8 layout it
  // picked for fp8_e4m3 ("Set NSA backends for fp8_e4m3 KV Cache: prefill=flashmla_auto,
  // decode=flashmla_kv": 656 B per layer). Real log, GLM-5-FP8 on 8 x MI355X, v0.5.8.post1
  // (tests/data/extra xsgl-004): rest = 193.92 - 283.50 x (1 - 0.908) = 167.84 GB over 78 x (576 + 132)
  // = 55,224 B gives 3,263,4xx tokens (logged 3,262,823), while the pool printed "KV size: 186.77 GB"
  // = 3,262,823 x 78 x (656 + 132): it overshoots the budget, and "Memory pool end" shows 3.90 GB.
  const bool fp8_kv = kv.kv_dtype == "fp8_e4m3" || kv.kv_dtype == "fp8_e5m2";
  const int64_t size_cell_less = amd_dsa && fp8_kv && !dsv4
                                     ? (c.kv_lora_rank + c.kv_lora_rank / 128 * 4 + c.qk_rope_head_dim * 2 -
                                        (c.kv_lora_rank + c.qk_rope_head_dim)) * kv.full_layers
                                     : 0;
  const int64_t swa_cell = hybrid_swa ? kv.swa_bytes : 0;
  const int64_t attn_layers = kv.full_layers + kv.swa_layers;

  LoadedWeights loaded = loaded_weights(d, fl, dsv4, out.notes);
  std::vector<RankWeights>& rank_weights = loaded.ranks;
  const std::vector<int64_t>& fp8_saved = loaded.fp8_saved;
  // Draft (EAGLE / MTP) weights and KV.
  int64_t draft_weights = 0;
  int64_t draft_layers = 0;
  if (spec && (spec_algo == "EAGLE" || spec_algo == "NEXTN" || spec_algo == "MTP") && c.num_nextn_predict_layers > 0 &&
      !fl.get("--speculative-draft-model-path")) {
    draft_layers = c.num_nextn_predict_layers;
    for (const auto& r : rank_weights) draft_weights = std::max(draft_weights, r.mtp_bytes);
  } else if (spec) {
    out.notes.push_back("speculative draft model not in the model files: its weights are not counted (give its config with --speculative-draft-model-path CATALOG_ID to count them)");
    if (const std::string* p = fl.get("--speculative-draft-model-path")) {
      try {
        auto dm = load_model(*p);
        draft_layers = dm->config.num_layers;
        for (const auto& r : cached_weights_per_rank(dm, EngineKind::SGLang, par)) draft_weights = std::max(draft_weights, r.bytes);
        out.notes.back() = "draft model " + *p + " counted";
      } catch (const InputError&) {
      }
    }
  }
  const int64_t draft_cell = attn_layers > 0 && !dsv4 ? full_cell / std::max<int64_t>(1, attn_layers) * draft_layers : 0;
  const int64_t target_cell = full_cell;  // before 2026's inflation for the draft KV
  if (era.era == Era::Y2026 && spec && attn_layers > 0 && !dsv4)  // cell inflated by (1 + D/L) (pool_configurator @003fca80)
    full_cell = static_cast<int64_t>(static_cast<double>(full_cell) * (1.0 + static_cast<double>(draft_layers) / static_cast<double>(attn_layers)));

  // --- P, A: MIN over ranks ----------------------------------------------------------------
  Estimate init = init_overhead(d.gpu, par.tp * par.pp);
  // SGLang sizes everything from free memory (get_available_gpu_memory, the min over ranks):
  // what other processes hold (--host-state) is gone from P and A alike.
  const int64_t others = d.held_by_others_max(), card = d.capacity_bytes - others;
  // A host profile (--profile): its measured memory before weights, after weights and at capture
  // begin replace the estimates (calibration_apply.h).
  const Calibration* cal = calibration_for(opt, d);
  const CalibrationAtTp* cal_tp = cal ? cal->at_tp(par.tp) : nullptr;
  if (cal_tp && cal_tp->init_bytes)
    init = Estimate{*cal_tp->init_bytes, *cal_tp->init_bytes, *cal_tp->init_bytes, "CUDA context + NCCL calibrated (host " + cal->host + ")"};
  const int64_t cal_after_load = cal_tp && cal_tp->after_load_extra_bytes ? *cal_tp->after_load_extra_bytes : 0;
  const int64_t cal_before_capture = cal_tp && cal_tp->before_capture_extra_bytes ? *cal_tp->before_capture_extra_bytes : 0;
  int64_t w_max = 0;
  for (const auto& r : rank_weights) w_max = std::max(w_max, r.bytes);
  const bool draft_in_a = era.era == Era::Y2026;  // V-2026b: A measured after draft weights
  // Mamba / GDN state pool (handle_max_mamba_cache: model_runner_kv_cache_mixin.py v0.5.9,
  // kv_cache_configurator.py 2026). The slot count K comes, in this order, from
  //   1. --max-mamba-cache-size (// attention DP size);
  //   2. --max-running-requests when --disable-radix-cache is set (// attention DP size);
  //   3. the ratio split: int(rest x r / (1 + r) x 2^30 // per_req), r = --mamba-full-memory-ratio (0.9).
  // --max-running-requests alone does not size the pool: with the radix cache on it only caps
  // the requests (K // 3, below). With speculative decoding the verify step's intermediate SSM
  // states (per_req x requests x draft tokens) come out of the same budget: 2026 solves
  // K x per_req x (1 + D / ratio) = mamba budget and reserves per_req x min(max_running, K // ratio) x D.
  const int attn_dp_size = par.dp_attention ? std::max(1, par.dp) : 1;
  const bool no_radix = fl.on("--disable-radix-cache");
  const std::optional<int64_t> mamba_size_user = fl.integer("--max-mamba-cache-size", 1, int64_t{1} << 31);
  const double mamba_ratio_flag = fl.num("--mamba-full-memory-ratio", 0.0, 100.0, true).value_or(0.9);
  const int64_t mamba_req_ratio = no_radix ? 1 : 3;  // _calculate_mamba_ratio (no_buffer strategy)
  auto tokens_for = [&](int64_t init_bytes, int64_t* rest_out, int64_t* mamba_k, int64_t* mamba_inter) {
    const double P = opt.pre_load_free_bytes ? to_gib(*opt.pre_load_free_bytes) : to_gib(card - init_bytes);
    const double A = opt.post_load_free_bytes ? to_gib(*opt.post_load_free_bytes)
                                              : to_gib(card - init_bytes - w_max - (draft_in_a ? draft_weights : 0) - cal_after_load);
    double rest = A - P * (1.0 - f);
    int64_t rest_b = gib_to_bytes(rest);
    *mamba_k = 0;
    *mamba_inter = 0;
    if (kv.state_bytes_per_request > 0 && rest_b > 0) {
      const int64_t per_req = kv.state_bytes_per_request;
      const double budget = static_cast<double>(rest_b) * mamba_ratio_flag / (1.0 + mamba_ratio_flag);
      int64_t k = 0;
      if (mamba_size_user) k = *mamba_size_user / attn_dp_size;
      else if (no_radix && max_running_user) k = *max_running_user / attn_dp_size;
      else if (spec) k = static_cast<int64_t>(budget / (static_cast<double>(per_req) * (1.0 + static_cast<double>(spec_draft_tokens) / static_cast<double>(mamba_req_ratio))));
      else k = static_cast<int64_t>(budget / static_cast<double>(per_req));
      *mamba_k = std::max<int64_t>(0, k);
      if (spec) {
        int64_t capped = *mamba_k / mamba_req_ratio;
        if (max_running_user) capped = std::min(capped, *max_running_user / attn_dp_size);
        if (no_radix && max_running_user && !mamba_size_user) capped = *max_running_user / attn_dp_size;
        *mamba_inter = capped;
        rest_b -= capped * per_req * spec_draft_tokens;
      }
      rest_b -= (*mamba_k + (era.era == Era::Y2026 ? 1 : 0)) * per_req;
    }
    *rest_out = rest_b;
    if (dsv4 && rest_b > 0) {  // DSV4PoolConfigurator.calculate_pool_sizes
      int64_t t = static_cast<int64_t>(static_cast<double>(std::max<int64_t>(0, rest_b - dsv4_fixed)) / dsv4_bpft);
      t = t / page * page;
      if (max_total_user && t > *max_total_user) t = *max_total_user / page * page;
      return t;
    }
    int64_t denom = full_cell - size_cell_less + static_cast<int64_t>(swa_ratio * static_cast<double>(swa_cell));
    if (denom <= 0) return ctx;
    int64_t t = rest_b / denom;  // floor division as Python's // on the int() budget
    if (rest_b < 0 && rest_b % denom != 0) --t;
    t = t >= 0 ? t / page * page : t;
    if (max_total_user && t > *max_total_user) t = *max_total_user / page * page;
    return t;
  };
  int64_t rest_b = 0, mamba_k = 0, mamba_intermediate_reqs = 0, rest_tmp = 0, mk_tmp = 0, mi_tmp = 0;
  const int64_t tokens = tokens_for(init.central, &rest_b, &mamba_k, &mamba_intermediate_reqs);
  const int64_t tokens_best = tokens_for(init.low, &rest_tmp, &mk_tmp, &mi_tmp);
  const int64_t tokens_worst = tokens_for(init.high, &rest_tmp, &mk_tmp, &mi_tmp);
  const int64_t swa_tokens = hybrid_swa ? static_cast<int64_t>(static_cast<double>(tokens) * swa_ratio) / page * page : 0;
  const double P_gib = to_gib(card - init.central);
  const double A_gib = to_gib(card - init.central - w_max - (draft_in_a ? draft_weights : 0) - cal_after_load);

  // --- settings in force -------------------------------------------------------------------
  auto set = [&](std::string k, std::string v) { out.settings.emplace_back(std::move(k), std::move(v)); };
  set("--mem-fraction-static", f_user ? fmt::format("{}", *f_user) : fmt::format("{:.3f}", f_default));
  set("--context-length", std::to_string(ctx));
  set("--kv-cache-dtype", kv.kv_dtype);
  set("--page-size", std::to_string(page));
  set("--attention-backend", backend);
  set("--chunked-prefill-size", std::to_string(chunked));
  set("--max-prefill-tokens", std::to_string(max_prefill));
  set("--cuda-graph-max-bs", std::to_string(max_bs));
  if (max_total_user) set("--max-total-tokens", std::to_string(*max_total_user));
  if (max_running_user) set("--max-running-requests", std::to_string(*max_running_user));
  set("--tp-size", std::to_string(par.tp));
  if (par.pp > 1) set("--pp-size", std::to_string(par.pp));
  if (par.dp > 1) set("--dp-size", std::to_string(par.dp));
  if (par.ep > 1) set("--ep-size", std::to_string(par.ep));
  if (par.dp_attention) set("--enable-dp-attention", "true");
  if (disable_graph) set("--disable-cuda-graph", "true");
  if (spec) {
    set("--speculative-algorithm", spec_algo);
    set("--speculative-num-steps", std::to_string(spec_steps));
    set("--speculative-eagle-topk", std::to_string(spec_topk));
    set("--speculative-num-draft-tokens", std::to_string(spec_draft_tokens));
  }
  if (aiter_derate)
    out.notes.push_back(fmt::format("attention backend aiter with context {} > 8192: SGLang scales --mem-fraction-static by 0.85 to {:.4f} (server_args, AMD)",
                                    ctx, f));
  if (!f_user)
    out.notes.push_back(fmt::format("--mem-fraction-static not given: SGLang's default for this GPU ({} MiB by nvidia-smi) and era is {:.3f}{}",
                                    gpu_mem_mib, f_default, reserve_mib > 0 ? fmt::format(" (reserve {:.0f} MiB)", reserve_mib) : ""));

  out.kv_tokens = std::max<int64_t>(0, tokens);
  if (tokens <= 0) {
    out.verdict = Verdict::Refused;
    double m = 1.0 - A_gib / P_gib;
    std::string msg = era.era == Era::Y2026 && rest_b <= 0
        ? fmt::format("Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={}. Raise --mem-fraction-static above {:.3f} "
                      "(minimum viable = 1 - available/pre = {:.4f}). If using speculative decoding, draft weights are now counted.",
                      f, std::ceil(1000.0 * m) / 1000.0, m)
        : "Not enough memory. Please try to increase --mem-fraction-static.";
    out.failure = Failure{StageId::KvPool, 0, full_cell, std::max<int64_t>(0, rest_b), msg};
    out.notes.push_back(fmt::format("weights take {} of the {} that --mem-fraction-static {} gives the static pools (P = {} GiB free after init)",
                                    human_bytes(w_max), human_bytes(gib_to_bytes(P_gib * f)), f, fmt::format("{:.2f}", P_gib)));
  }

  // --- request pool and capture list -------------------------------------------------------
  const int attn_dp = par.dp_attention ? par.dp : 1;
  RequestPool rp = request_pool(era.era, std::max<int64_t>(tokens, 0), ctx, max_running_user, attn_dp, spec ? spec_draft_tokens : 0);
  if (mamba_k > 0 && rp.max_running_requests > mamba_k / mamba_req_ratio)  // mamba cap: K // 3 with radix cache on, K with it off
    rp.max_running_requests = std::max<int64_t>(1, mamba_k / mamba_req_ratio);
  out.max_running_requests = rp.max_running_requests;
  out.max_concurrency = ctx > 0 ? static_cast<double>(out.kv_tokens) / static_cast<double>(ctx) : 0;
  const int64_t tokens_per_bs = spec ? spec_draft_tokens : 1;
  std::vector<int64_t> capture;
  if (!disable_graph && tokens > 0) {
    capture = bs_list_user.empty() ? capture_batch_sizes(era.era, max_bs, spec, no_padding, gpu_mem_mib, par.dp, par.dp_attention) : bs_list_user;
    std::sort(capture.begin(), capture.end());
    int mul_base = par.dp_attention ? attn_tp : 1;
    capture = filter_by_pool(capture, era.era == Era::Y2026 ? rp.max_running_requests : rp.rows, mul_base);
  }
  const int64_t max_cap = capture.empty() ? 0 : capture.back();
  // A prefill (piecewise) graph can be captured with no decode graph (legacy --disable-cuda-graph).
  const bool any_graph = tokens > 0 && (max_cap > 0 || !prefill_buckets.empty());

  // --- play every rank ---------------------------------------------------------------------
  // Pool bytes for a token count: (tokens + page) rows per full layer, and the SWA pool at
  // --swa-full-tokens-ratio of it, page-floored (memory_pool.py / HybridSWAPoolConfigurator).
  auto pool_bytes_for = [&](int64_t t) -> int64_t {
    if (t <= 0) return 0;
    if (dsv4) return static_cast<int64_t>(static_cast<double>(t) * dsv4_bpft) + dsv4_fixed;
    const int64_t swa_t = hybrid_swa ? static_cast<int64_t>(static_cast<double>(t) * swa_ratio) / page * page : 0;
    return (t + page) * full_cell + (hybrid_swa ? (swa_t + page) * swa_cell : 0);
  };
  const int64_t pool_bytes = pool_bytes_for(tokens);
  const int64_t pool_best = pool_bytes_for(tokens_best);
  const int64_t pool_worst = pool_bytes_for(tokens_worst);
  const Estimate ws = backend_workspace(backend);
  const Estimate moe_residue = fp4_moe_warmup_residue(c, d.gpu);
  const int64_t wrappers = hybrid_swa ? 2 : 1;
  const int64_t metadata = graph_metadata_bytes(backend, max_cap * tokens_per_bs, ctx, page, wrappers);
  // FlashInfer wrapper sets kept per captured size: the target's (decode, or verify with a draft),
  // the draft's speculative_num_steps - 1 step backends and its extend runner.
  int64_t fi_sets = 0;
  if (backend == "flashinfer" && max_cap > 0) {
    fi_sets = static_cast<int64_t>(capture.size()) * wrappers;
    if (spec && draft_layers > 0) fi_sets += static_cast<int64_t>(capture.size()) * wrappers * spec_steps;
  }
  const Estimate fi_wrappers = flashinfer_graph_wrappers(fi_sets);
  int64_t logits = 0;
  if (max_cap > 0) {
    if (era.era == Era::V2024 || era.era == Era::Mid2025) {  // before PR #8579 every graph kept its own logits
      for (int64_t b : capture) logits += b * tokens_per_bs * c.vocab_size * 4;
    } else {
      logits = max_cap * tokens_per_bs * c.vocab_size * 4;
    }
  }
  Estimate graph = graph_capture(c, par.tp, attn_tp, max_cap, static_cast<int64_t>(capture.size() + prefill_buckets.size()), tokens_per_bs,
                                 custom_allreduce_off(d.gpu, par.tp) && has(Rule::NcclInCapturedGraphs, rule_version(era)));
  if (any_graph && !prefill_buckets.empty()) {
    // Prefill (breakable / piecewise) graphs keep the activations of their largest token bucket in
    // the graph pool. GUESS: one prefill chunk's activations at that bucket (prefill_activations()).
    // Real logs: Qwen3-8B GB300, piecewise graphs up to 16,384 tokens "mem usage=2.32 GB" (decode
    // 0.60); Qwen3-30B-A3B-FP8 H100, prefill graphs up to 8,192 tokens 1.71 GB (decode 0.34)
    // (tests/data/extra xsgl-006/007).
    const Estimate pg = prefill_activations(c, par.tp, prefill_buckets.back(), ctx);
    graph.central += pg.central;
    graph.low += pg.low;
    graph.high += pg.high;
  }
  if (cal && cal->graph_scale) {  // the host's capture over the estimate, from its logs
    graph.central = static_cast<int64_t>(static_cast<double>(graph.central) * *cal->graph_scale);
    graph.low = static_cast<int64_t>(static_cast<double>(graph.low) * *cal->graph_scale);
    graph.high = static_cast<int64_t>(static_cast<double>(graph.high) * *cal->graph_scale);
    graph.basis += fmt::format(" x {:.3f} calibrated (host {})", *cal->graph_scale, cal->host);
  }
  if (opt.graph_floor_bytes > 0) {  // capture was seen to need at least this much (doctor)
    const int64_t floor = opt.graph_floor_bytes - metadata - logits - fi_wrappers.central;
    graph.central = std::max(graph.central, floor);
    graph.low = std::max(graph.low, floor);
    graph.high = std::max(graph.high, graph.central * 7 / 5);
  }
  std::optional<DraftCapture> draft_graphs;
  if (spec && draft_layers > 0 && max_cap > 0)
    draft_graphs = draft_capture(c, par.tp, DraftSpec{draft_layers, spec_steps, spec_topk, spec_draft_tokens, spec_algo == "EAGLE3"}, max_cap,
                                 static_cast<int64_t>(capture.size()));
  const Estimate act = prefill_activations(c, par.tp, chunked > 0 ? chunked : max_prefill, ctx);
  const Estimate slack = prefill_allocator_slack(c, par.tp, chunked > 0 ? chunked : max_prefill);

  int64_t min_free_after_graph = INT64_MAX, min_free_end = INT64_MAX, pool_end_free = 0, graph_begin_free = 0, post_weights_free = 0;
  std::optional<Failure> first_failure = out.failure;
  // Ranks holding the same bytes play the same timeline: simulate each distinct one once.
  std::vector<std::pair<std::pair<int64_t, int64_t>, size_t>> played;  // (bytes, mtp) -> index in out.ranks
  for (size_t ri = 0; ri < rank_weights.size(); ++ri) {
    const RankWeights& rw = rank_weights[ri];
    bool dup = false;
    for (const auto& [key, idx] : played)
      if (key.first == rw.bytes && key.second == rw.mtp_bytes) {
        if (opt.detail) out.repeat_rank(idx, rw.rank);
        dup = true;
        break;
      }
    if (dup) continue;
    played.push_back({{rw.bytes, rw.mtp_bytes}, out.ranks.size()});
    RankSim sim(rw.rank, d.capacity_bytes);
    sim.begin_stage(StageId::Init);
    sim_held_by_others(sim, d, others);
    sim.alloc_estimated("CUDA context + NCCL/custom all-reduce", init.central, init.low, init.high);
    sim.begin_stage(StageId::Weights);
    const int64_t tr = fp8_saved[ri];  // online FP8's 16-bit half, held until quantized
    if (tr > 0) sim.alloc("16-bit weights during online FP8 quantization", tr);
    sim.alloc("model weights", rw.bytes);
    if (tr > 0 && !sim.failed()) sim.release("16-bit weights during online FP8 quantization", tr);
    if (draft_weights > 0 && draft_in_a) sim.alloc("draft (MTP) weights", rw.mtp_bytes > 0 ? rw.mtp_bytes : draft_weights);
    if (cal_after_load != 0) sim_signed(sim, "in use after weights beyond the model, calibrated (host " + cal->host + ")", cal_after_load);
    const int64_t after_weights = sim.free();
    if (tokens > 0) {
      sim.begin_stage(StageId::KvPool);
      // 2026: one token count for target and draft, the cell inflated for the draft's layers.
      const int64_t draft_share = draft_in_a && draft_layers > 0 && !dsv4 && !hybrid_swa ? (tokens + page) * (full_cell - target_cell) : 0;
      sim.alloc_estimated(fmt::format("KV cache ({} tokens x {} B{})", tokens, draft_share > 0 ? target_cell : full_cell, hybrid_swa ? " + SWA pool" : ""),
                          pool_bytes - draft_share, pool_best - draft_share, pool_worst - draft_share);
      if (draft_share > 0)  // allocated with the target's (alloc_memory_pool), its cells from the inflated cell size (INFERRED order)
        sim.alloc(fmt::format("draft KV cache ({} tokens x {} B)", tokens, full_cell - target_cell), draft_share);
      if (mamba_k > 0) sim.alloc(fmt::format("mamba state ({} requests)", mamba_k + 1), (mamba_k + 1) * kv.state_bytes_per_request);
      if (mamba_k > 0 && mamba_intermediate_reqs > 0)
        sim.alloc(fmt::format("mamba intermediate SSM states for verify ({} requests x {} draft tokens)", mamba_intermediate_reqs, spec_draft_tokens),
                  mamba_intermediate_reqs * spec_draft_tokens * kv.state_bytes_per_request);
      sim.alloc(fmt::format("request-to-token table ({} x {} int32)", rp.rows, rp.width), rp.bytes());
      const int64_t pool_end = sim.free();
      if (!draft_in_a && draft_weights > 0) {
        sim.begin_stage(StageId::Draft);
        sim.alloc("draft (MTP) weights", rw.mtp_bytes > 0 ? rw.mtp_bytes : draft_weights);
        int64_t draft_tokens_pool = tokens + rp.max_running_requests * spec_steps * spec_topk + rp.max_running_requests * spec_draft_tokens + 100;
        sim.alloc(fmt::format("draft KV cache ({} tokens)", draft_tokens_pool), (draft_tokens_pool + page) * draft_cell);
      }
      sim.begin_stage(StageId::Workspaces);
      sim.alloc_estimated("attention backend workspace + cuBLAS", ws.central, ws.low, ws.high);
      if (moe_residue.central > 0)
        sim.alloc_estimated("FP4 MoE autotune / warm-up residue (cached, unusable by capture)", moe_residue.central, moe_residue.low, moe_residue.high);
      if (opt.extra_before_capture_bytes > 0)
        sim.alloc("in use before capture beyond the model (from the log)", opt.extra_before_capture_bytes);
      if (cal_before_capture != 0) sim_signed(sim, "in use at capture begin beyond the model, calibrated (host " + cal->host + ")", cal_before_capture);
      const int64_t begin = sim.free();
      if (any_graph) {
        sim.begin_stage(StageId::CudaGraph);
        if (max_cap > 0) {
          sim.alloc(fmt::format("{} CUDA-graph metadata ({} x {} int32)", backend, max_cap * tokens_per_bs, backend == "nsa" || backend == "flashinfer" || backend == "triton" ? ctx : (ctx + page - 1) / page), metadata);
          // Before PR #8579 each graph kept its own logits: the label says how many buffers it sums.
          const bool per_graph_logits = era.era == Era::V2024 || era.era == Era::Mid2025;
          if (fi_wrappers.central > 0)
            sim.alloc_estimated(fmt::format("FlashInfer wrappers kept per captured size ({} x 8 MiB int workspace)", fi_sets), fi_wrappers.central,
                                fi_wrappers.low, fi_wrappers.high);
          sim.alloc(per_graph_logits ? fmt::format("graph output logits ({} graphs, up to {} x {} fp32 each)", capture.size(), max_cap * tokens_per_bs, c.vocab_size)
                                     : fmt::format("graph output logits ({} x {} fp32)", max_cap * tokens_per_bs, c.vocab_size),
                    logits);
          // The count as SGLang's "Capture cuda graph bs [...]" line lists it, prefill graphs apart.
          sim.alloc_estimated(prefill_buckets.empty()
                                  ? fmt::format("capture of {} batch sizes up to {} (warm-up + graph pool)", capture.size(), max_cap)
                                  : fmt::format("capture of {} batch sizes up to {} + {} prefill token sizes (warm-up + graph pool)", capture.size(), max_cap,
                                                prefill_buckets.size()),
                              graph.central, graph.low, graph.high);
          if (draft_graphs) {
            sim.alloc_estimated(fmt::format("draft decode graphs ({} sizes x {} steps)", capture.size(), spec_steps),
                                draft_graphs->decode.central, draft_graphs->decode.low, draft_graphs->decode.high);
            sim.alloc_estimated(fmt::format("draft extend graphs ({} sizes x {} tokens)", capture.size(), spec_draft_tokens), draft_graphs->extend.central,
                                draft_graphs->extend.low, draft_graphs->extend.high);
          }
        } else {
          sim.alloc_estimated(fmt::format("piecewise prefill graphs only ({} token sizes up to {}; decode graphs off)", prefill_buckets.size(), prefill_buckets.back()),
                              graph.central, graph.low, graph.high);
        }
        if (d.gpu.vendor == "nvidia" && unified_memory_device(d.gpu.sm)) {
          const Estimate u = unified_memory_capture_growth();
          sim.alloc_estimated("host memory growth during capture (unified memory)", u.central, u.low, u.high);
        }
      }
      min_free_after_graph = std::min(min_free_after_graph, sim.free());
      sim.begin_stage(StageId::Runtime);
      sim.alloc_estimated(fmt::format("prefill activations ({} tokens)", chunked > 0 ? chunked : max_prefill), act.central, act.low, act.high);
      if (slack.high > 0) sim.alloc_estimated("allocator slack at the prefill peak (caching-allocator model)", slack.central, slack.low, slack.high);
      min_free_end = std::min(min_free_end, sim.free());
      if (rw.rank == 0) {
        pool_end_free = pool_end;
        graph_begin_free = begin;
        post_weights_free = after_weights;
      }
    } else if (rw.rank == 0) {
      post_weights_free = after_weights;
    }
    if (!first_failure && sim.failure()) first_failure = sim.failure();
    out.ranks.push_back(sim.finish());
    if (!opt.detail && first_failure) break;
  }
  if (out.verdict != Verdict::Refused) {
    out.failure = first_failure;
    out.verdict = verdict_from_ranks(out.ranks, out.failure);
    if (out.failure && out.failure->stage == StageId::CudaGraph)
      out.failure->message = fmt::format("Capture cuda graph failed: CUDA out of memory. Tried to allocate {} with {} free ({})",
                                         human_bytes(out.failure->request_bytes), human_bytes(out.failure->free_bytes), out.failure->message);
  }
  out.headroom_bytes = min_free_end == INT64_MAX ? 0 : min_free_end;
  if (const auto caveats = unmodelled_capture_settings(d, spec_algo, draft_layers > 0); !caveats.empty()) {
    out.notes.insert(out.notes.end(), caveats.begin(), caveats.end());
    if (out.verdict == Verdict::Fits) {
      out.verdict = Verdict::AtRisk;
      out.notes.push_back("at risk rather than fits: a setting above moves CUDA-graph capture memory by an amount not modelled");
    }
  }

  if (cal) {
    std::vector<std::string> t;
    if (cal_tp && cal_tp->init_bytes) t.push_back("CUDA context + NCCL " + calibration_gib(*cal_tp->init_bytes));
    if (cal_after_load != 0) t.push_back("after weights " + calibration_gib(cal_after_load));
    if (cal_before_capture != 0) t.push_back("at capture begin " + calibration_gib(cal_before_capture));
    if (cal->graph_scale) t.push_back(fmt::format("CUDA graphs x {:.3f}", *cal->graph_scale));
    out.notes.push_back(calibration_note(*cal, cal_tp, par.tp, fmt::format("{}", fmt::join(t, ", "))));
    out.calibrated_host = cal->host;
  }
  if (tokens > 0 && graph.central > 0 && any_graph)
    out.notes.push_back("estimated: " + init.basis + "; " + ws.basis + (moe_residue.central > 0 ? "; " + moe_residue.basis : "") + "; " +
                        graph.basis + "; " + act.basis + "; " + slack.basis);

  if (opt.detail)
    note_host_state(out, d, "SGLang sizes its pool from the free memory at start (--mem-fraction-static is a share of what is free, "
                            "not of the card): the KV pool shrinks by what they hold x the fraction");
  // --- the lines SGLang prints (rank 0, local values) ----------------------------------------
  if (opt.detail) {
    const bool y26 = era.era == Era::Y2026;
    const int64_t begin_weights = card - init.central;
    out.log.push_back(fmt::format("Load weight begin. avail mem={} GB", gb(begin_weights)));
    out.log.push_back(fmt::format("Load weight end. type={}, avail mem={} GB, mem usage={} GB.", c.architecture, gb(post_weights_free),
                                  gb(begin_weights - post_weights_free)));
    if (tokens > 0) {
      if (hybrid_swa)
        out.log.push_back(fmt::format("Use sliding window memory pool. full_layer_tokens={}, swa_layer_tokens={}", tokens, swa_tokens));
      if (c.mla)
        out.log.push_back(fmt::format("KV Cache is allocated. {}#tokens: {}, KV size: {} GB", y26 ? "dtype: " + torch_dtype(kv.kv_dtype) + ", " : "",
                                      tokens, gb((tokens + page) * full_cell)));
      else
        out.log.push_back(fmt::format("KV Cache is allocated. {}#tokens: {}, K size: {} GB, V size: {} GB", y26 ? "dtype: " + torch_dtype(kv.kv_dtype) + ", " : "",
                                      tokens, gb((tokens + page) * full_cell / 2), gb((tokens + page) * full_cell / 2)));
      out.log.push_back(fmt::format("Memory pool end. avail mem={} GB", gb(pool_end_free)));
      if (max_cap > 0) {
        if (y26)
          out.log.push_back(fmt::format("Capture target decode CUDA graph begin. backend=full, num_tokens_per_req={}, bs={}, avail mem={} GB",
                                        tokens_per_bs, fmt::format("[{}]", fmt::join(capture, ", ")), gb(graph_begin_free)));
        else {
          out.log.push_back(fmt::format("Capture cuda graph begin. This can take up to several minutes. avail mem={} GB", gb(graph_begin_free)));
          out.log.push_back(fmt::format("Capture cuda graph bs [{}]", fmt::join(capture, ", ")));
        }
      }
      if (!out.failure)
        out.log.push_back(fmt::format("max_total_num_tokens={}, chunked_prefill_size={}, max_prefill_tokens={}, max_running_requests={}, context_len={}, available_gpu_mem={} GB",
                                      tokens, chunked, max_prefill, rp.max_running_requests, ctx,
                                      gb(min_free_after_graph == INT64_MAX ? 0 : min_free_after_graph)));
    }
    if (out.failure) out.log.push_back(out.failure->message);
  }
  return out;
}

}  // namespace headroom
