// TensorRT-LLM flags -> settings: trtllm-serve's options (tensorrt_llm/commands/serve.py,
// click) plus the LLM-API KvCacheConfig / CudaGraphConfig fields headroom lets you pass as
// flags (what --extra_llm_api_options YAML would set), defaults as TensorRT-LLM resolves them
// (tensorrt_llm/llmapi/llm_args.py).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>

#include "engines/trtllm/trtllm_estimates.h"
#include "engines/trtllm/trtllm_rule_table.h"
#include "engines/trtllm/trtllm_rules.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/cli.h"
#include "headroom/engine_version.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

const std::vector<std::string_view>& trtllm_flags() {
  static const std::vector<std::string_view> v{
      // trtllm-serve options
      "--backend", "--tp_size", "--pp_size", "--ep_size", "--max_batch_size", "--max_num_tokens", "--max_seq_len",
      "--max_beam_width", "--kv_cache_free_gpu_memory_fraction", "--trust_remote_code", "--extra_llm_api_options",
      "--host", "--port", "--log_level", "--tokenizer", "--gpus_per_node", "--cluster_size", "--num_postprocess_workers",
      "--reasoning_parser", "--enable_chunked_prefill",
      // 2026 serve.py long names and extra options (NVIDIA/TensorRT-LLM tensorrt_llm/commands/serve.py,
      // 2026 copy): --tensor_parallel_size/--tp_size, --pipeline_parallel_size/--pp_size,
      // --moe_expert_parallel_size/--ep_size, --config/--extra_llm_api_options.
      "--tensor_parallel_size", "--pipeline_parallel_size", "--moe_expert_parallel_size", "--moe_cluster_parallel_size", "--config",
      "--tool_parser", "--revision", "--custom_tokenizer", "--served_model_name", "--fail_fast_on_attention_window_too_large",
      // serve.py options of the disaggregated / multimodal / tracing front end: no GPU-memory effect
      "--server_role", "--chat_template", "--disagg_cluster_uri", "--media_io_kwargs", "--otlp_traces_endpoint",
      "--metadata_server_config_file",
      // LLM-API fields (KvCacheConfig, CudaGraphConfig, attention DP)
      "--free_gpu_memory_fraction", "--max_tokens", "--max_gpu_total_bytes", "--tokens_per_block", "--kv_cache_dtype",
      "--enable_block_reuse", "--cuda_graph_max_batch_size", "--cuda_graph_enable_padding", "--disable_cuda_graph", "--enable_attention_dp",
      "--speculative_config",
      // TensorRT engines: the quantization the engine was built with (trtllm-bench build
      // --quantization FP8, W4A16_AWQ, ...; ModelOpt quantize.py --qformat) when --model names the
      // 16-bit checkpoint
      "--quantization",
  };
  return v;
}

}  // namespace headroom

namespace headroom::trtllm {

namespace {
int64_t int_opt(const std::string& flag, const std::string& v, int64_t lo) {
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v.size())
    fail_input("trtllm-serve", flag, fmt::format("Error: Invalid value for '{}': '{}' is not a valid integer.", flag, v));
  if (x < lo) fail_input("trtllm-serve", flag, fmt::format("Error: Invalid value for '{}': {} is smaller than the minimum {}.", flag, x, lo));
  return x;
}
double float_opt(const std::string& flag, const std::string& v) {
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(v, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v.size() || !std::isfinite(x))
    fail_input("trtllm-serve", flag, fmt::format("Error: Invalid value for '{}': '{}' is not a valid float.", flag, v));
  return x;
}
bool truthy(const std::string& v) { return v.empty() || v == "true" || v == "True" || v == "1"; }
std::string fmt_fraction(double x) { return fmt::format("{}", x); }
}  // namespace

Budget resolve_budget(const Deployment& d) {
  Budget b;
  for (const char* f : {"--kv_cache_free_gpu_memory_fraction", "--free_gpu_memory_fraction"}) {
    if (auto v = d.flag(f)) {
      double x = float_opt(f, *v);
      // llm_args.py KvCacheConfig.validate_free_gpu_memory_fraction; the C++ KV manager also
      // requires < 1 ("Invalid freeMemFraction ... must be smaller than 1.0f").
      if (x < 0 || x > 1)
        fail_input("trtllm-serve", f, "1 validation error for KvCacheConfig free_gpu_memory_fraction: Value error, kv_cache_config.free_gpu_memory_fraction must be a float between 0 and 1");
      if (x >= 1.0)
        fail_input("trtllm-serve", f, fmt::format("[TensorRT-LLM][ERROR] Assertion failed: Invalid freeMemFraction, freeMemFraction ({:.6f}) must be smaller than 1.0f", x));
      b.fraction = x;
      b.given = true;
    }
  }
  return b;
}

void apply_budget(Settings& s, const Budget& b) {
  s.fraction = b.fraction;
  s.fraction_given = b.given;
  for (auto& [k, v] : s.table)
    if (k == "--kv_cache_free_gpu_memory_fraction") v = fmt_fraction(s.fraction);
}

namespace {
// The version on main (and on the newest release line) at a date, for builds a log dates but
// does not number ("main@2025-10-16", "unknown@2026-03"). Only the releases where a rule of this
// file changes are listed. Evidence: NVIDIA Triton 24.02 ships release/0.8 (triton-inference-server
// discussion #7081); PyPI tensorrt-llm 0.10.0.dev2024043000; ai-dynamo PR #642 (2025-04-11) quotes
// tokens_per_block 32 as the PyTorch worker's default; issue #5872 ran 1.0.0rc1/rc3 on 2025-07-08;
// tensorrtllm_backend "v1.1.0rc4 release" 2025-09-10 and "v1.2.0rc2 release" 2025-11-07; a
// 1.2.0rc6.post2 image 109 days old on 2026-05-18 and a 1.3.0rc7 log of 2026-03 (xtrt-010); v1.3.0rc20
// (2026-06-30) "the last one supporting the TensorRT backend". First dates INFERRED from those.
struct DatedRelease {
  int ymd, version;
};
constexpr DatedRelease kDatedReleases[] = {
    {20231001, 500}, {20240201, 800}, {20240401, 900}, {20240430, 1000}, {20250401, 1900},
    {20250601, 10000}, {20250801, 10100}, {20251001, 10200}, {20260201, 10300},
};
constexpr int kNewestTrtllm = 10300;  // the newest release seen in a log (1.3.0rc7, 2026-03; xtrt-010)
}  // namespace

Era era_for_version(const std::string& version) {
  Era e;
  const EngineVersion v = parse_engine_version(EngineKind::TRTLLM, version);
  if (v.form == EngineVersion::Form::Dated) {
    e.version = kDatedReleases[0].version;
    for (const auto& r : kDatedReleases)
      if (v.date >= r.ymd) e.version = r.version;
    e.reason = v.why + ": the release line of that date (dates partly INFERRED)";
  } else if (v.form == EngineVersion::Form::Release) {
    e.version = v.release;
    e.reason = "version " + version;
    if (e.version > kNewestTrtllm + 99) {  // a release after the newest line seen: its rules
      e.version = kNewestTrtllm;
      e.reason = "version " + version + " is newer than the releases headroom knows (0.7 .. 1.3): planned by 1.3's rules";
    }
  } else {
    e.version = kNewestTrtllm;
    e.reason = v.why;
  }
  // Every flag is a row of trtllm_rule_table.cpp.
  e.pytorch_default = has(Rule::PytorchDefault, e.version);
  e.log_2026 = has(Rule::Log2026, e.version);
  e.estimation_floor = has(Rule::EstimationFloor, e.version);
  e.default_tokens_per_block = has(Rule::TokensPerBlock32, e.version) ? 32 : has(Rule::TokensPerBlock64, e.version) ? 64 : 128;
  e.trt_lazy_context = has(Rule::LazyContext, e.version);
  e.label = fmt::format("TensorRT-LLM {}.{}.{} rules ({} backend by default)", e.version / 10000, (e.version / 100) % 100, e.version % 100,
                        e.pytorch_default ? "PyTorch" : "TensorRT engine / C++ runtime");
  return e;
}

Settings resolve_settings(const Deployment& d) {
  Settings s;
  s.era = era_for_version(d.engine_version);
  s.backend = s.era.pytorch_default ? "pytorch" : "trt";
  const ModelConfig& c = d.model->config;
  const auto& allowed = trtllm_flags();
  for (const auto& [k, v] : d.flags)
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      fail_unknown_option("trtllm-serve", k, fmt::format("Error: No such option: {}{}", k, did_you_mean_hint(k, allowed)));
  s.tp = std::max(1, d.par.tp);
  s.pp = std::max(1, d.par.pp);
  s.ep = std::max(1, d.par.ep);
  s.attention_dp = d.par.dp_attention;
  // click aliases: either spelling of an option sets it (the later one on the line wins in click;
  // headroom takes the canonical spelling first).
  auto get = [&](std::string_view n) -> const std::string* {
    if (auto v = d.flag(n)) return v;
    static constexpr std::pair<std::string_view, std::string_view> kAlias[] = {
        {"--tp_size", "--tensor_parallel_size"}, {"--pp_size", "--pipeline_parallel_size"},
        {"--ep_size", "--moe_expert_parallel_size"}, {"--extra_llm_api_options", "--config"}};
    for (const auto& [canon, alias] : kAlias)
      if (n == canon) {
        if (auto v = d.flag(alias)) return v;
      }
    return nullptr;
  };
  if (auto v = get("--tp_size")) s.tp = static_cast<int>(int_opt("--tp_size", *v, 1));
  if (auto v = get("--pp_size")) s.pp = static_cast<int>(int_opt("--pp_size", *v, 1));
  if (auto v = get("--ep_size")) s.ep = static_cast<int>(int_opt("--ep_size", *v, 1));
  if (auto v = get("--enable_attention_dp")) s.attention_dp = truthy(*v);
  // The attention heads are split evenly over the tensor-parallel ranks (each rank of
  // tensorrt_llm/_torch/modules/attention.py holds num_attention_heads / tp_size heads;
  // attention DP keeps them whole). The wording is headroom's, not TensorRT-LLM's.
  if (!s.attention_dp && c.num_attention_heads > 0 && c.num_attention_heads % s.tp != 0)
    fail_input("trtllm-serve", "--tp_size",
               fmt::format("num_attention_heads ({}) is not divisible by the tensor parallel size ({}): TensorRT-LLM splits the attention heads "
                           "evenly over the TP ranks",
                           c.num_attention_heads, s.tp));
  if (auto v = get("--backend")) {
    if (*v != "pytorch" && *v != "trt" && *v != "tensorrt" && *v != "_autodeploy")
      fail_input("trtllm-serve", "--backend", fmt::format("Error: Invalid value for '--backend': '{}' is not one of 'pytorch', 'tensorrt', '_autodeploy'.", *v));
    s.backend = *v == "tensorrt" ? "trt" : *v == "_autodeploy" ? "pytorch" : *v;
  }
  const Budget budget = resolve_budget(d);
  s.fraction = budget.fraction;
  s.fraction_given = budget.given;
  if (auto v = get("--max_tokens")) s.max_tokens = int_opt("--max_tokens", *v, 1);
  if (auto v = get("--max_gpu_total_bytes")) s.max_gpu_total_bytes = parse_bytes(*v, "trtllm-serve", "--max_gpu_total_bytes");
  s.tokens_per_block = s.era.default_tokens_per_block;
  if (auto v = get("--tokens_per_block")) {
    s.tokens_per_block = int_opt("--tokens_per_block", *v, 1);
    if (s.tokens_per_block & (s.tokens_per_block - 1))
      fail_input("trtllm-serve", "--tokens_per_block", fmt::format("tokens_per_block ({}) must be a power of 2", s.tokens_per_block));
  }
  if (auto v = get("--max_batch_size")) s.max_batch_size = int_opt("--max_batch_size", *v, 1);
  if (auto v = get("--max_num_tokens")) s.max_num_tokens = int_opt("--max_num_tokens", *v, 1);
  if (auto v = get("--max_beam_width")) s.max_beam_width = int_opt("--max_beam_width", *v, 1);
  // The model's limit (engines/context_limit.cpp trtllm_inferred_max_seq_len).
  const int64_t inferred = trtllm_inferred_max_seq_len(c);
  if (inferred != (c.max_position_embeddings > 0 ? c.max_position_embeddings : 2048))
    s.notes.push_back(fmt::format("max_seq_len is scaled to {} by rope scaling {}", inferred, c.rope_scaling_factor));
  s.max_seq_len = inferred;
  // PyTorch: a longer max_seq_len is clamped (trtllm.max_seq_len_clamp) unless allowed (trtllm.allow_long_max_seq_len).
  const std::string* allow_env = d.env_value("TLLM_ALLOW_LONG_MAX_MODEL_LEN");
  std::string allow = allow_env ? *allow_env : "";
  std::transform(allow.begin(), allow.end(), allow.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const bool allow_long = has(Rule::AllowLongMaxSeqLen, s.era.version) && (allow == "1" || allow == "true" || allow == "yes" || allow == "y");
  const bool clamps = s.backend != "trt" && has(Rule::MaxSeqLenClamp, s.era.version);
  if (clamps && !allow_long) s.max_seq_len_cap = inferred;
  if (auto v = get("--max_seq_len")) {
    s.max_seq_len = int_opt("--max_seq_len", *v, 1);
    if (clamps && s.max_seq_len > inferred) {
      if (allow_long) {
        s.notes.push_back(fmt::format("User specified max_seq_len is larger than the config in the model config file ({}). Setting max_seq_len "
                                      "to user's specified value {}. (TLLM_ALLOW_LONG_MAX_MODEL_LEN)",
                                      inferred, s.max_seq_len));
      } else {
        s.notes.push_back(fmt::format("Specified self.max_seq_len={} is larger than what the model can support ({}). Setting max_seq_len to {}.",
                                      s.max_seq_len, inferred, inferred));
        s.max_seq_len = inferred;
      }
    }
  } else {
    s.notes.push_back(fmt::format("max_seq_len is not specified, using inferred value {}", s.max_seq_len));
  }
  // Both backends cap max_num_tokens at max_seq_len x max_batch_size, with the same warning:
  // trtllm-build (check_max_num_tokens, tensorrt_llm/_utils.py), so a TensorRT engine's execution
  // context is built for the capped count, and the PyTorch backend (PyTorchModelEngine.
  // _init_max_num_tokens, after the max_seq_len cut above).
  if (const int64_t cap = s.max_seq_len * s.max_batch_size; s.max_num_tokens > cap) {
    s.notes.push_back(fmt::format("max_num_tokens ({}) shouldn't be greater than max_seq_len * max_batch_size ({}), specifying to max_seq_len * "
                                  "max_batch_size ({}).",
                                  s.max_num_tokens, cap, cap));
    s.max_num_tokens = cap;
  }
  if (auto v = get("--disable_cuda_graph")) s.cuda_graphs = !truthy(*v);
  if (auto v = get("--fail_fast_on_attention_window_too_large")) s.fail_fast_window = truthy(*v);
  if (auto v = get("--cuda_graph_max_batch_size")) s.cuda_graph_max_batch_size = int_opt("--cuda_graph_max_batch_size", *v, 0);
  if (auto v = get("--cuda_graph_enable_padding")) s.cuda_graph_padding = truthy(*v);
  if (s.cuda_graph_max_batch_size == 0) s.cuda_graph_max_batch_size = 128;  // CudaGraphConfig: max_batch_size or 128
  if (s.backend == "trt") s.cuda_graphs = false;
  if (auto v = get("--speculative_config")) {
    s.spec = parse_speculative_config(*v, c.num_nextn_predict_layers);
    s.notes.push_back(s.spec->what);
  }
  if (auto v = get("--quantization")) {
    // trtllm-bench's QuantAlgo spelling (tensorrt_llm/quantization/mode.py); the modelled ones are
    // in trtllm_estimates.cpp engine_quant.
    std::string q = *v;
    std::transform(q.begin(), q.end(), q.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    if (s.backend != "trt")
      fail_input("trtllm-serve", "--quantization",
                 "applies to a TensorRT engine (--backend tensorrt); the PyTorch backend reads the checkpoint's own quantization");
    if (q != "NONE" && q != "NO_QUANT") {
      s.engine_quant = engine_quant(q);
      if (!s.engine_quant)
        fail_input("trtllm-serve", "--quantization", fmt::format("'{}' is not modelled by headroom ({} or None)", *v, engine_quant_names()));
    }
  }

  // KV dtype: "auto" = the checkpoint's KV quantization (hf_quant_config kv_cache_quant_algo)
  // or the model dtype.
  std::string kv = get("--kv_cache_dtype") ? *get("--kv_cache_dtype") : "auto";
  if (kv == "auto") {
    if (c.quant.kv_cache_quant == "FP8") { s.kv_dtype = "fp8"; s.kv_elem_bytes = 1; }
    else if (c.quant.kv_cache_quant == "NVFP4") { s.kv_dtype = "nvfp4"; s.kv_elem_bytes = 0.5; }
    else { s.kv_dtype = c.dtype == DType::F16 ? "float16" : "bfloat16"; s.kv_elem_bytes = 2; }
  } else if (kv == "fp8") { s.kv_dtype = kv; s.kv_elem_bytes = 1; }
  else if (kv == "nvfp4") { s.kv_dtype = kv; s.kv_elem_bytes = 0.5; }
  else if (kv == "bfloat16" || kv == "float16") { s.kv_dtype = kv; s.kv_elem_bytes = 2; }
  else fail_input("trtllm-serve", "--kv_cache_dtype", fmt::format("1 validation error for KvCacheConfig dtype: Input should be 'auto', 'fp8', 'nvfp4', 'bfloat16' or 'float16' [input_value='{}']", kv));

  s.table = {
      {"--backend", s.backend},
      {"--kv_cache_free_gpu_memory_fraction", fmt_fraction(s.fraction)},
      {"--max_tokens", s.max_tokens ? std::to_string(*s.max_tokens) : "None"},
      {"--max_gpu_total_bytes", std::to_string(s.max_gpu_total_bytes)},
      {"--tokens_per_block", std::to_string(s.tokens_per_block)},
      {"--max_batch_size", std::to_string(s.max_batch_size)},
      {"--max_num_tokens", std::to_string(s.max_num_tokens)},
      {"--max_seq_len", std::to_string(s.max_seq_len)},
      {"--max_beam_width", std::to_string(s.max_beam_width)},
      {"--kv_cache_dtype", s.kv_dtype},
      {"--tp_size", std::to_string(s.tp)},
      {"--pp_size", std::to_string(s.pp)},
      {"--ep_size", std::to_string(s.ep)},
      {"--enable_attention_dp", s.attention_dp ? "true" : "false"},
      {"--cuda_graph_max_batch_size", s.cuda_graphs ? std::to_string(s.cuda_graph_max_batch_size) : "disabled"},
      {"--cuda_graph_enable_padding", s.cuda_graph_padding ? "true" : "false"},
      {"--quantization", s.engine_quant ? s.engine_quant->algo : "None"},
  };
  if (auto v = get("--speculative_config")) s.table.push_back({"--speculative_config", *v});
  if (get("--extra_llm_api_options"))
    s.notes.push_back("--extra_llm_api_options: the YAML file is not read; pass its kv_cache_config fields as flags (--max_tokens, --tokens_per_block, ...)");
  return s;
}

}  // namespace headroom::trtllm
