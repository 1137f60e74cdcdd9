// Resolves vLLM's engine flags for one deployment: which flags vLLM accepts (vllm_flags()),
// their values' validation in vLLM's words, and the defaults the chosen version applies.
#include "engines/vllm/vllm_settings.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engines/vllm/vllm_rule_table.h"
#include "headroom/cli.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

namespace {
// The CUDA-graph flags a command line gives explicitly (empty / 0 = the era's defaults).
struct GraphFlags {
  std::vector<int64_t> sizes;
  int64_t max_capture_size = 0;
  std::string mode;  // CompilationConfig.cudagraph_mode, upper case
};

std::vector<int64_t> size_list(const char* flag, const std::string& text) {
  // argparse nargs="+" (space-separated) or a JSON list: "1 2 4 8", "[1, 2, 4, 8]", "1,2,4".
  std::vector<int64_t> out;
  std::string tok;
  auto flush = [&] {
    if (tok.empty()) return;
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec != std::errc() || p != tok.data() + tok.size() || v <= 0)
      fail_input("vllm serve", flag, fmt::format("argument {}: invalid int value: '{}'", flag, tok));
    out.push_back(v);
    tok.clear();
  };
  for (char ch : text) {
    if (ch == ' ' || ch == ',' || ch == '[' || ch == ']' || ch == '\t') flush();
    else tok.push_back(ch);
  }
  flush();
  if (out.empty()) fail_input("vllm serve", flag, fmt::format("argument {}: expected at least one argument", flag));
  return out;
}

GraphFlags graph_flags(const Deployment& d) {
  GraphFlags g;
  if (const std::string* v = d.flag("--cudagraph-capture-sizes")) g.sizes = size_list("--cudagraph-capture-sizes", *v);
  if (const std::string* v = d.flag("--cuda-graph-sizes")) {
    std::vector<int64_t> l = size_list("--cuda-graph-sizes", *v);
    if (l.size() == 1) g.max_capture_size = l[0];
    else g.sizes = std::move(l);
  }
  if (const std::string* v = d.flag("--compilation-config")) {
    nlohmann::json j = nlohmann::json::parse(*v, nullptr, false);
    if (j.is_discarded())
      fail_input("vllm serve", "--compilation-config", fmt::format("argument --compilation-config: '{}' is not JSON (nor a compilation level)", *v));
    if (j.is_object()) {  // a bare number is the old compilation level: no graph setting
      if (auto it = j.find("cudagraph_capture_sizes"); it != j.end()) g.sizes = size_list("--compilation-config", it->dump());
      for (const char* k : {"max_cudagraph_capture_size", "max_capture_size"})
        if (auto it = j.find(k); it != j.end() && it->is_number_integer() && it->get<int64_t>() > 0) g.max_capture_size = it->get<int64_t>();
      if (auto it = j.find("cudagraph_mode"); it != j.end() && it->is_string()) {
        g.mode = it->get<std::string>();
        for (char& ch : g.mode) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        static const char* kModes[] = {"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"};
        if (std::find_if(std::begin(kModes), std::end(kModes), [&](const char* m) { return g.mode == m; }) == std::end(kModes))
          fail_input("vllm serve", "--compilation-config",
                     fmt::format("cudagraph_mode '{}' is not one of NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE", it->get<std::string>()));
      }
    }
  }
  return g;
}

// A JSON-valued option (argparse type=json.loads): its value, or vLLM's error.
nlohmann::json json_loads(const char* flag, const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) fail_input("vllm serve", flag, fmt::format("argument {}: invalid loads value: '{}'", flag, text));
  return j;
}

// CompilationConfig.cudagraph_mode (vllm/config/compilation.py CUDAGraphMode): which of the
// capture list's sizes are captured PIECEWISE and which as FULL graphs.
void apply_cudagraph_mode(const std::string& mode, vllm::Settings& s) {
  if (mode.empty() || mode == "FULL_AND_PIECEWISE") return;
  if (mode == "NONE") {
    s.piecewise_graphs = s.full_graphs = 0;
  } else if (mode == "PIECEWISE") {
    s.full_graphs = 0;
  } else if (mode == "FULL") {  // every size as one full graph, mixed batches included
    s.piecewise_graphs = 0;
    s.full_graphs = static_cast<int64_t>(s.capture.size());
  } else if (mode == "FULL_DECODE_ONLY") {
    s.piecewise_graphs = 0;
  }
  s.notes.push_back(fmt::format("cudagraph_mode {}: {} PIECEWISE and {} FULL graphs", mode, s.piecewise_graphs, s.full_graphs));
}

const std::vector<std::pair<std::string_view, std::string_view>>& vllm_unmodelled_flags() {
  // Options vLLM accepts whose effect on memory headroom does not model: the plan runs without
  // them and says so.
  static const std::vector<std::pair<std::string_view, std::string_view>> v{
      {"--rope-theta", "changes the RoPE tables"},
      {"--speculative-model", "the pre-0.8.5 draft model (use --speculative-config)"},
      {"--num-speculative-tokens", "the pre-0.8.5 speculative settings (use --speculative-config)"},
      {"--speculative-draft-tensor-parallel-size", "the pre-0.8.5 speculative settings (use --speculative-config)"},
      {"--speculative-max-model-len", "the pre-0.8.5 speculative settings (use --speculative-config)"},
      {"--ngram-prompt-lookup-max", "the pre-0.8.5 speculative settings (use --speculative-config)"},
      {"--prefill-context-parallel-size", "prefill context parallelism shards the KV cache over its ranks"},
      {"--max-model-len-per-mm", "multimodal encoder budgets"},
  };
  return v;
}
}  // namespace

const std::vector<std::string_view>& vllm_flags() {
  // `vllm serve` options (vllm/engine/arg_utils.py EngineArgs.add_cli_args and the OpenAI
  // server's own) that headroom reads or that do not change startup memory. Parallel sizes
  // are read by parse_deployment().
  static const std::vector<std::string_view> v{
      "--gpu-memory-utilization", "--kv-cache-memory-bytes", "--kv-cache-memory", "--max-model-len",
      "--max-num-seqs", "--max-num-batched-tokens", "--kv-cache-dtype", "--block-size", "--enforce-eager",
      "--dtype", "--quantization", "-q", "--max-cudagraph-capture-size", "--cuda-graph-sizes",
      "--cudagraph-capture-sizes", "--num-gpu-blocks-override", "--speculative-config",
      "--enable-expert-parallel", "--enable-prefix-caching", "--no-enable-prefix-caching",
      "--enable-chunked-prefill", "--no-enable-chunked-prefill", "--trust-remote-code",
      "--disable-custom-all-reduce", "--async-scheduling", "--no-async-scheduling", "--limit-mm-per-prompt", "--limit-mm-per-prompt.image", "--limit-mm-per-prompt.video",
      "--max-logprobs", "--served-model-name", "--host", "--port", "--swap-space", "--cpu-offload-gb",
      "--kv-offloading-size", "--kv-offloading-backend", "--kv-transfer-config", "--compilation-config",
      "--tokenizer", "--revision", "--seed", "--disable-log-stats", "--disable-log-requests",
      "--enable-log-requests", "--tool-call-parser", "--enable-auto-tool-choice", "--reasoning-parser",
      "--chat-template", "--generation-config", "--hf-overrides", "--mm-processor-kwargs",
      "--skip-mm-profiling", "--mm-encoder-tp-mode", "--moe-backend", "--attention-backend", "--load-format",
      "--download-dir", "--distributed-executor-backend", "--enable-eplb", "--api-key",
      "--disable-hybrid-kv-cache-manager", "--mamba-ssm-cache-dtype", "--mamba-cache-dtype", "--enable-sleep-mode",
      "--data-parallel-size-local", "--data-parallel-address", "--data-parallel-rpc-port",
      "--data-parallel-backend", "--api-server-count", "--enable-lora", "--max-lora-rank", "--max-loras",
      "--fully-sharded-loras", "--lora-dtype",
      "--calculate-kv-scales", "--scheduling-policy", "--long-prefill-token-threshold",
      "--max-num-partial-prefills", "--model-impl", "--tokenizer-mode", "--max-seq-len-to-capture",
      "--gdn-prefill-backend", "--language-model-only", "--performance-mode", "--mamba-cache-mode", "--mamba-block-size",
      "--uvicorn-log-level", "--disable-uvicorn-access-log", "--max-parallel-loading-workers",
      "--safetensors-load-strategy", "--structured-outputs-config", "--override-generation-config",
      "--enable-dbo", "--prefix-caching-hash-algo", "--disable-cascade-attn", "--allowed-local-media-path",
      "--no-enable-log-requests", "--enable-prompt-tokens-details", "--enable-force-include-usage",
      // Front-end, logging, parsing and plugin options of `vllm serve` (arg_utils.py and
      // entrypoints/openai/cli_args.py across 0.6 .. 0.31): no effect on startup GPU memory.
      "--config-format", "--guided-decoding-backend", "--enable-reasoning", "--tool-parser-plugin",
      "--chat-template-content-format", "--response-role", "--root-path", "--disable-frontend-multiprocessing",
      "--enable-request-id-headers", "--return-tokens-as-token-ids", "--lora-modules", "--max-cpu-loras",
      "--quantization-param-path", "--device", "--model-loader-extra-config", "--ignore-patterns",
      "--preemption-mode", "--otlp-traces-endpoint", "--collect-detailed-traces", "--disable-async-output-proc",
      "--task", "--runner", "--convert", "--override-pooler-config", "--pooler-config", "--additional-config",
      "--kv-events-config", "--worker-cls", "--worker-extension-cls", "--data-parallel-hybrid-lb",
      "--data-parallel-external-lb", "--data-parallel-start-rank", "--data-parallel-rank", "--headless",
      "--max-long-partial-prefills", "--logits-processors", "--enable-log-outputs", "--max-log-len",
      "--disable-fastapi-docs", "--enable-server-load-tracking", "--allowed-origins", "--allowed-methods",
      "--allowed-headers", "--allow-credentials", "--ssl-keyfile", "--ssl-certfile", "--ssl-ca-certs",
      "--ssl-cert-reqs", "--middleware", "--optimization-level", "--dbo-decode-token-threshold",
      "--dbo-prefill-token-threshold", "--io-processor-plugin", "--code-revision", "--tokenizer-revision",
      "--hf-token", "--hf-config-path", "--logprobs-mode", "--pt-load-map-location", "--media-io-kwargs",
      "--interleave-mm-strings", "--skip-tokenizer-init", "--enable-prompt-embeds", "--reasoning-parser-plugin",
      "--default-chat-template-kwargs", "--enable-tokenizer-info-endpoint", "--log-error-stack", "--tool-server",
      "--exclude-tools-when-tool-choice-none", "--use-tqdm-on-load", "--enable-mfu-metrics", "--kv-cache-metrics",
      "--mm-encoder-attn-backend", "--allowed-media-domains", "--enable-lora-bias", "--enable-ep-weight-filter",
      "--mm-processor-cache-gb", "--mm-processor-cache-type", "--scheduler-cls", "--scheduler-delay-factor",
      "--multi-step-stream-outputs", "--num-scheduler-steps", "--num-lookahead-slots", "--all2all-backend",
      "--expert-placement-strategy", "--enable-multimodal-encoder-data-parallel", "--enable-return-routed-experts",
      "--uds", "--lora-extra-vocab-size", "--long-lora-scaling-factors", "--show-hidden-metrics-for-version",
      "--disable-mm-preprocessor-cache", "--tokenizer-pool-size", "--tokenizer-pool-type",
      "--tokenizer-pool-extra-config", "--use-v2-block-manager", "--ray-workers-use-nsight",
      "--enable-chunked-prefill-for-mm", "--max-num-batched-tokens-per-mm", "--video-pruning-rate",
      "--kv-sharing-fast-prefill", "--ubatch-size", "--decode-context-parallel-size", "--num-redundant-experts", "--eplb-config", "--rope-scaling", "--disable-sliding-window",
  };
  return v;
}


}  // namespace headroom

namespace headroom::vllm {

namespace {

bool truthy(const std::string& v) { return v.empty() || v == "true" || v == "True" || v == "1" || v == "yes"; }

// Ceilings headroom puts on vLLM's integer flags (issue 31). vLLM itself takes any Python int;
// these sit far above any real deployment (the longest shipped context is 10M tokens, vLLM's
// block sizes are 1..256 and hybrid alignments a few thousand, LoRA ranks up to 512 and a few hundred adapters) and keep
// every token x bytes product inside int64, so a value past them is refused (exit 2, the flag
// named) instead of wrapping into a deployment that "fits". Other integer flags: 2^50.
int64_t flag_ceiling(std::string_view flag) {
  static constexpr std::pair<std::string_view, int64_t> kCeilings[] = {
      {"--max-model-len", int64_t{1} << 30},  {"--max-num-batched-tokens", int64_t{1} << 30},
      {"--max-num-seqs", int64_t{1} << 20},   {"--block-size", int64_t{1} << 16},
      {"--mamba-block-size", int64_t{1} << 20}, {"--max-lora-rank", int64_t{1} << 12},
      {"--max-loras", int64_t{1} << 12},     {"--max-cpu-loras", int64_t{1} << 12},
  };
  for (const auto& [name, cap] : kCeilings)
    if (name == flag) return cap;
  return int64_t{1} << 50;
}

int64_t within_ceiling(const std::string& flag, const std::string& value, int64_t x) {
  if (x > flag_ceiling(flag))
    fail_input("vllm serve", flag, fmt::format("{} is above headroom's limit of {} for this flag (no real deployment comes near it)", value, flag_ceiling(flag)));
  return x;
}

// vLLM's human-readable ints (vllm/engine/arg_utils.py human_readable_int): 25.6k = 25600,
// 1K = 1024, 1M = 1048576, g/G likewise; plain ints as given.
int64_t human_int(const std::string& flag, const std::string& value) {
  std::string s = value;
  if (s.empty()) fail_input("vllm serve", flag, fmt::format("argument {}: expected one argument", flag));
  char last = s.back();
  double mult = 1;
  if (std::isalpha(static_cast<unsigned char>(last))) {
    switch (last) {
      case 'k': mult = 1e3; break;
      case 'm': mult = 1e6; break;
      case 'g': mult = 1e9; break;
      case 'K': mult = 1024; break;
      case 'M': mult = 1024.0 * 1024; break;
      case 'G': mult = 1024.0 * 1024 * 1024; break;
      default: fail_input("vllm serve", flag, fmt::format("argument {}: invalid human_readable_int value: '{}'", flag, value));
    }
    s.pop_back();
  }
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used != s.size() || !std::isfinite(x) || (mult == 1 && s.find('.') != std::string::npos))
    fail_input("vllm serve", flag, fmt::format("argument {}: invalid {} value: '{}'", flag, mult == 1 ? "int" : "human_readable_int", value));
  double r = x * mult;
  if (r > 9.0e18 || r < -9.0e18) fail_input("vllm serve", flag, fmt::format("argument {}: value out of range: '{}'", flag, value));
  return within_ceiling(flag, value, static_cast<int64_t>(std::llround(r)));
}

int64_t plain_int(const std::string& flag, const std::string& value) {
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(value, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != value.size()) fail_input("vllm serve", flag, fmt::format("argument {}: invalid int value: '{}'", flag, value));
  return within_ceiling(flag, value, x);
}

double plain_float(const std::string& flag, const std::string& value) {
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(value, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !std::isfinite(x))
    fail_input("vllm serve", flag, fmt::format("argument {}: invalid float value: '{}'", flag, value));
  return x;
}

// pydantic's one-line form of a Field(gt=.., le=..) violation.
[[noreturn]] void pydantic(const std::string& cls, const std::string& field, const std::string& msg, const std::string& type,
                           const std::string& input, const std::string& input_type) {
  fail_input("vllm serve", field, fmt::format("1 validation error for {} {}: {} [type={}, input_value={}, input_type={}]", cls, field,
                                              msg, type, input, input_type));
}

// The derived limit as a number to print: whole lengths in full (1048576, not {:g}'s 1.04858e+06).
std::string fmt_len(double x) {
  return x == std::floor(x) && x < 9e15 ? std::to_string(static_cast<int64_t>(x)) : fmt::format("{}", x);
}

// The refusal of a --max-model-len above the derived limit, in the era's wording: 0.11 (pydantic
// ModelConfig) added the caution text; earlier builds said "This may lead to incorrect model outputs".
[[noreturn]] void refuse_long_max_model_len(const Era& era, int64_t L, double derived, const char* key = "max_position_embeddings") {
  const std::string head = fmt::format(
      "User-specified max_model_len ({}) is greater than the derived max_model_len ({}={} or "
      "model_max_length=None in model's config.json).",
      L, key, fmt_len(derived));
  if (!has(Rule::PydanticMaxModelLen, era.version))
    fail_input("vllm serve", "--max-model-len",
               fmt::format("ValueError: {} This may lead to incorrect model outputs or CUDA errors. To allow overriding this maximum, "
                           "set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
                           head));
  fail_input("vllm serve", "--max-model-len",
             fmt::format("1 validation error for ModelConfig Value error, {} To allow overriding this maximum, set the env var "
                         "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the "
                         "model uses relative position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If "
                         "the model uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA "
                         "array out-of-bounds error. [type=value_error]",
                         head));
}

std::string fmt_utilization(double u) { return fmt::format("{}", u); }
std::string fmt_kv_bytes(const std::optional<int64_t>& b) { return b ? std::to_string(*b) : "None"; }

}  // namespace

// vLLM's derived context limit (vllm/config/model.py _get_and_verify_max_len; the same rule in
// vllm/config.py before 0.10): the config's length key, times the rope scaling factor unless the
// rope type already encodes it (su, longrope, llama3) or the model is Gemma-3; YaRN scales
// original_max_position_embeddings. A missing factor is 1 ("default" / "mrope" define none).
double derived_max_model_len(const ModelConfig& c) {
  double derived = static_cast<double>(c.max_position_embeddings);
  const std::string& t = c.rope_scaling_type;
  if (!t.empty() && c.model_type.find("gemma3") == std::string::npos && t != "su" && t != "longrope" && t != "llama3") {
    if (t == "yarn" && c.rope_original_max_position_embeddings > 0) derived = static_cast<double>(c.rope_original_max_position_embeddings);
    derived *= c.rope_scaling_factor > 0 ? c.rope_scaling_factor : 1.0;
  }
  return derived;
}

Budget resolve_budget(const Deployment& d, const Era& era) {
  Budget b;
  // --gpu-memory-utilization (CacheConfig Field(default, gt=0, le=1)).
  b.utilization = era.default_utilization;
  if (auto v = d.flag("--gpu-memory-utilization")) {
    double u = plain_float("--gpu-memory-utilization", *v);
    if (u <= 0) pydantic("CacheConfig", "gpu_memory_utilization", "Input should be greater than 0", "greater_than", *v, "float");
    if (u > 1) pydantic("CacheConfig", "gpu_memory_utilization", "Input should be less than or equal to 1", "less_than_equal", *v, "float");
    b.utilization = u;
    b.utilization_given = true;
  }
  for (const char* f : {"--kv-cache-memory-bytes", "--kv-cache-memory"}) {
    if (auto v = d.flag(f)) {
      if (!era.kv_memory_flag)
        fail_unknown_option("vllm serve", f, fmt::format("error: unrecognized arguments: {} {} (added in vLLM 0.10.2, PR #21489)", f, *v));
      int64_t x = human_int(f, *v);
      if (x <= 0) pydantic("CacheConfig", "kv_cache_memory_bytes", "Input should be greater than 0", "greater_than", *v, "int");
      b.kv_cache_memory_bytes = x;
    }
  }
  return b;
}

void apply_budget(Settings& s, const Budget& b) {
  s.utilization = b.utilization;
  s.utilization_given = b.utilization_given;
  s.kv_cache_memory_bytes = b.kv_cache_memory_bytes;
  for (auto& [k, v] : s.table) {
    if (k == "--gpu-memory-utilization") v = fmt_utilization(s.utilization);
    else if (k == "--kv-cache-memory-bytes") v = fmt_kv_bytes(s.kv_cache_memory_bytes);
  }
}

namespace {
// --speculative-config (SpeculativeConfig): the method, draft tokens and a separate draft model.
void resolve_speculative(Settings& s, const Deployment& d) {
  auto get = [&](std::string_view name) { return d.flag(name); };
  // Speculative decoding: draft tokens widen decode batches; MTP layers get their own KV.
  if (auto v = get("--speculative-config")) {
    const nlohmann::json j = json_loads("--speculative-config", *v);
    if (!j.is_object()) fail_input("vllm serve", "--speculative-config", "argument --speculative-config: expected a JSON object");
    if (j.contains("method") && j["method"].is_string()) s.spec_method = j["method"].get<std::string>();
    if (j.contains("num_speculative_tokens") && j["num_speculative_tokens"].is_number_integer())
      s.num_speculative_tokens = j["num_speculative_tokens"].get<int64_t>();
    if (s.num_speculative_tokens < 0 || s.num_speculative_tokens > 64)
      fail_input("vllm serve", "--speculative-config", "num_speculative_tokens must be between 1 and 64");
    if (j.contains("model") && j["model"].is_string()) s.spec_model = j["model"].get<std::string>();
  }

  // A separate draft model (SpeculativeConfig method "draft_model", the method vLLM infers for a
  // "model" that is neither an EAGLE head nor an MTP module): loaded beside the target inside
  // load_model (DraftModelProposer), with its own attention layers in the KV cache config.
  if (!s.spec_model.empty() && (s.spec_method == "draft_model" || s.spec_method.empty())) {
    s.spec_method = "draft_model";
    try {
      s.draft = load_model(s.spec_model);
    } catch (const InputError& e) {
      s.notes.push_back(fmt::format("draft model {}: not read ({}); its weights and KV are not modelled", s.spec_model, e.what()));
    }
  }
}

// LoRA (LoRAConfig) and which model runner runs: VLLM_USE_V2_MODEL_RUNNER and the fallbacks to V1.
void resolve_lora_and_runner(Settings& s, const Deployment& d) {
  auto get = [&](std::string_view name) { return d.flag(name); };
  auto on = [&](std::string_view name) {  // given and true (a bare flag, true, 1, yes)
    const std::string* v = get(name);
    return v && truthy(*v);
  };
  // LoRA (vllm/config/lora.py LoRAConfig: max_lora_rank 16, max_loras 1, lora_dtype auto = the
  // model dtype; its buffers are sized in vllm_load_extras.cpp).
  if (auto v = get("--enable-lora")) s.lora.enabled = truthy(*v);
  if (auto v = get("--max-lora-rank")) {
    s.lora.max_rank = plain_int("--max-lora-rank", *v);
    if (s.lora.max_rank <= 0) pydantic("LoRAConfig", "max_lora_rank", "Input should be greater than 0", "greater_than", *v, "int");
  }
  if (auto v = get("--max-loras")) {
    s.lora.max_loras = plain_int("--max-loras", *v);
    if (s.lora.max_loras <= 0) pydantic("LoRAConfig", "max_loras", "Input should be greater than or equal to 1", "greater_than_equal", *v, "int");
  }
  if (auto v = get("--fully-sharded-loras")) s.lora.fully_sharded = truthy(*v);
  s.lora.elem_bytes = dtype_size(s.model_dtype);
  s.era.lora = s.lora.enabled;
  if (const std::string* v = d.env_value("VLLM_USE_V2_MODEL_RUNNER")) {
    if (*v != "0" && *v != "1") fail_input("--env", "VLLM_USE_V2_MODEL_RUNNER", fmt::format("'{}' is not 0 or 1", *v));
    s.era.v2_runner_env = *v == "1" ? 1 : 0;
  }
  const std::string& arch = d.model->config.architecture;
  s.era.v2_fallback = s.spec_method == "ngram" || (s.spec_method == "eagle3" && d.par.pp > 1) ||
                      (d.gpu.vendor == "amd" && (arch == "DeepseekV32ForCausalLM" || arch == "DeepseekV4ForCausalLM")) ||
                      on("--enable-dbo") || on("--enable-elastic-ep") || on("--kv-sharing-fast-prefill") ||
                      get("--logits-processors") != nullptr;
  if (auto v = get("--lora-dtype")) {
    if (*v == "float16" || *v == "bfloat16") s.lora.elem_bytes = 2;
    else if (*v != "auto")
      fail_input("vllm serve", "--lora-dtype", fmt::format("argument --lora-dtype: invalid choice: '{}' (choose from 'auto', 'float16', 'bfloat16')", *v));
  }
}

}  // namespace

Settings resolve_settings(const Deployment& d) {
  Settings s;
  s.era = era_for_version(d.engine_version);
  const Era& era = s.era;
  const ModelConfig& c = d.model->config;
  const auto& allowed = vllm_flags();
  const auto& unmodelled = vllm_unmodelled_flags();
  for (const auto& [k, v] : d.flags) {
    // BooleanOptionalAction flags also take --no-NAME.
    const std::string base = k.rfind("--no-", 0) == 0 && is_boolean_flag("--" + k.substr(5)) ? "--" + k.substr(5) : k;
    if (std::find(allowed.begin(), allowed.end(), base) != allowed.end()) continue;
    auto u = std::find_if(unmodelled.begin(), unmodelled.end(), [&](const auto& e) { return e.first == base; });
    if (u == unmodelled.end())
      fail_unknown_option("vllm serve", k, fmt::format("error: unrecognized arguments: {}{}{}", k, v == "true" ? "" : " " + v, did_you_mean_hint(k, allowed)));
    if (base == k)  // --no-NAME keeps vLLM's default
      s.notes.push_back(fmt::format("{}{} is not modelled ({}): the forecast is as without it", k, v == "true" ? "" : " " + v, u->second));
  }

  auto get = [&](std::string_view name) { return d.flag(name); };
  auto on = [&](std::string_view name) {  // given and true (a bare flag, true, 1, yes)
    const std::string* v = get(name);
    return v && truthy(*v);
  };

  // ModelConfig.verify_with_parallel_config (vllm/config/model.py): the attention heads are
  // split evenly over the tensor-parallel ranks.
  const int tp = std::max(1, d.par.tp);
  if (c.num_attention_heads > 0 && c.num_attention_heads % tp != 0)
    fail_input("vllm serve", "--tensor-parallel-size",
               fmt::format("ValueError: Total number of attention heads ({}) must be divisible by tensor parallel size ({}).", c.num_attention_heads, tp));

  // --dtype (ModelConfig._get_and_verify_dtype): auto keeps the checkpoint dtype, float32
  // checkpoints are served in bfloat16/float16.
  s.model_dtype = c.dtype == DType::F32 ? DType::BF16 : c.dtype;
  if (auto v = get("--dtype")) {
    if (*v == "bfloat16") s.model_dtype = DType::BF16;
    else if (*v == "float16" || *v == "half") s.model_dtype = DType::F16;
    else if (*v == "float32" || *v == "float") s.model_dtype = DType::F32;
    else if (*v != "auto")
      fail_input("vllm serve", "--dtype", fmt::format("argument --dtype: invalid choice: '{}' (choose from auto, half, float16, bfloat16, float, float32)", *v));
  }

  // --quantization (-q): a quantized checkpoint's own method is read from its config. "fp8" on an
  // unquantized 16-bit checkpoint is online dynamic FP8 (vllm/model_executor/layers/quantization/
  // fp8.py, Fp8Config with is_checkpoint_fp8_serialized False; docs features/quantization/fp8.md
  // "Online Dynamic Quantization": every Linear but lm_head to FP8 E4M3 with a per-tensor scale).
  // Other methods on a checkpoint that lacks them fail in vLLM at config time and are not
  // modelled here: the forecast keeps the checkpoint's own weights and says so.
  if (auto q = get("--quantization")) {
    if (*q == "fp8" && c.quant.method == QuantMethod::None && dtype_size(s.model_dtype) == 2)
      s.online_fp8 = true;
    else if (c.quant.method == QuantMethod::None && *q != "None" && *q != "none")
      s.notes.push_back(fmt::format("--quantization {} on an unquantized checkpoint is not modelled: weights are the checkpoint's", *q));
  }

  // --cpu-offload-gb (CacheConfig.cpu_offload_gb: float, ge=0; "the space in GiB to offload to
  // CPU, per GPU"): model_executor/models/utils.py sets _CPU_OFFLOAD_MAX_BYTES = int(gb x 1024^3).
  if (auto v = get("--cpu-offload-gb")) {
    const double gb = plain_float("--cpu-offload-gb", *v);
    if (gb < 0) pydantic("CacheConfig", "cpu_offload_gb", "Input should be greater than or equal to 0", "greater_than_equal", *v, "float");
    s.cpu_offload_bytes = static_cast<int64_t>(gb * 1073741824.0);
  }

  // --swap-space (CacheConfig.swap_space: float GiB per GPU, default 4, ge=0): V0's CPU swap blocks,
  // int(swap_space_bytes // cache_block_size) (worker.py determine_num_available_blocks).
  if (auto v = get("--swap-space")) {
    s.swap_space_gib = plain_float("--swap-space", *v);
    if (s.swap_space_gib < 0) pydantic("CacheConfig", "swap_space", "Input should be greater than or equal to 0", "greater_than_equal", *v, "float");
    // CacheConfig.verify_with_parallel_config raises "Too large swap space" above 70% of the host's
    // memory; no host has a PiB.
    if (s.swap_space_gib > 1048576)
      fail_input("vllm serve", "--swap-space", fmt::format("{} GiB per GPU: vLLM raises 'Too large swap space' above 70% of the host's memory", *v));
  }

  // Text-only serving of a vision-language model. --language-model-only skips the towers a model
  // marks (_mark_tower_model). --limit-mm-per-prompt (JSON '{"image": 0, "video": 0}', the older
  // "image=0,video=0", or the dotted --limit-mm-per-prompt.image 0): the Qwen2.5-VL / Qwen3-VL /
  // Qwen3.5 classes build no vision tower when both limits are 0 ("if not
  // multimodal_config.get_limit_per_prompt('image') and not ...('video'): self.visual = None").
  if (c.vision.present) {
    if (on("--language-model-only")) s.text_only = true;
    std::optional<int64_t> image, video;
    auto limit = [&](const std::string& key, const nlohmann::json& v) {
      std::optional<int64_t> n;
      if (v.is_number_integer()) n = v.get<int64_t>();
      else if (v.is_object() && v.contains("count") && v["count"].is_number_integer()) n = v["count"].get<int64_t>();
      else if (v.is_string()) n = plain_int("--limit-mm-per-prompt", v.get<std::string>());
      if (key == "image") image = n;
      if (key == "video") video = n;
    };
    if (const std::string* v = get("--limit-mm-per-prompt")) {
      nlohmann::json j = nlohmann::json::parse(*v, nullptr, false);
      if (j.is_object()) {
        for (const auto& [k, val] : j.items()) limit(k, val);
      } else {  // image=0,video=0
        std::string text = *v;
        for (size_t i = 0; i < text.size();) {
          size_t comma = text.find(',', i), eq = text.find('=', i);
          if (comma == std::string::npos) comma = text.size();
          if (eq == std::string::npos || eq > comma)
            fail_input("vllm serve", "--limit-mm-per-prompt", fmt::format("argument --limit-mm-per-prompt: '{}' is neither JSON nor key=value pairs", *v));
          limit(text.substr(i, eq - i), nlohmann::json(text.substr(eq + 1, comma - eq - 1)));
          i = comma + 1;
        }
      }
    }
    if (const std::string* v = get("--limit-mm-per-prompt.image")) image = plain_int("--limit-mm-per-prompt.image", *v);
    if (const std::string* v = get("--limit-mm-per-prompt.video")) video = plain_int("--limit-mm-per-prompt.video", *v);
    const bool qwen_tower = c.vision.kind == "qwen2_5_vl" || c.vision.kind == "qwen3_vl";
    if (qwen_tower && image == 0 && video == 0) s.text_only = true;
    if (s.text_only) s.notes.push_back("text only: the vision tower is not built, its weights are not loaded and the encoder is not profiled");
  }

  // --decode-context-parallel-size (ParallelConfig.decode_context_parallel_size): DCP groups live
  // inside the TP group (world size tp x pp), so it must divide tp.
  if (auto v = get("--decode-context-parallel-size")) {
    s.dcp = plain_int("--decode-context-parallel-size", *v);
    if (s.dcp < 1) fail_input("vllm serve", "--decode-context-parallel-size", "decode_context_parallel_size must be at least 1");
    if (tp % s.dcp != 0)  // vllm/config/parallel.py _verify_args, its words (no space before dcp_size)
      fail_input("vllm serve", "--decode-context-parallel-size", fmt::format("ValueError: tp_size={} must be divisible bydcp_size={}.", tp, s.dcp));
  }

  // EPLB's redundant experts (--enable-eplb with --num-redundant-experts, 0.10; --eplb-config
  // '{"num_redundant_experts": N}', 0.11+): FusedMoE holds (global experts + N) / EP experts per
  // rank (vllm/model_executor/layers/fused_moe/layer.py determine_expert_map with
  // num_redundant_experts), so every EP rank loads N / EP more. Without --enable-eplb vLLM refuses
  // a nonzero count; without expert parallelism they change nothing here.
  {
    int64_t r = 0;
    if (auto v = get("--num-redundant-experts")) r = plain_int("--num-redundant-experts", *v);
    if (auto v = get("--eplb-config")) {
      nlohmann::json j = nlohmann::json::parse(*v, nullptr, false);
      if (!j.is_object()) fail_input("vllm serve", "--eplb-config", fmt::format("argument --eplb-config: '{}' is not a JSON object", *v));
      if (auto it = j.find("num_redundant_experts"); it != j.end() && it->is_number_integer()) r = it->get<int64_t>();
    }
    const std::string* eplb = get("--enable-eplb");
    const bool eplb_on = eplb && truthy(*eplb);
    if (r < 0) fail_input("vllm serve", "--num-redundant-experts", "num_redundant_experts must be non-negative");
    // vllm/config/parallel.py _verify_args, in its words.
    if (r > 0 && !eplb_on)
      fail_input("vllm serve", "--num-redundant-experts",
                 fmt::format("ValueError: num_redundant_experts is set to {} but EPLB is not enabled. Either enable EPLB or unset num_redundant_experts.", r));
    const std::string* ep = get("--enable-expert-parallel");
    if (eplb_on && !(ep && truthy(*ep))) fail_input("vllm serve", "--enable-eplb", "ValueError: enable_expert_parallel must be True to use EPLB.");
    if (eplb_on && d.par.tp * d.par.dp <= 1)
      fail_input("vllm serve", "--enable-eplb",
                 fmt::format("ValueError: EPLB requires tensor_parallel_size or data_parallel_size to be greater than 1, but got TP={},DP={}.", d.par.tp, d.par.dp));
    s.redundant_experts = r;
  }

  // The budget flags, checked here as vLLM checks them (after --dtype, before the rest).
  const Budget budget = resolve_budget(d, era);
  s.utilization = budget.utilization;
  s.utilization_given = budget.utilization_given;
  s.kv_cache_memory_bytes = budget.kv_cache_memory_bytes;

  // --max-model-len: model default (the derived limit), "auto"/-1 fits it to memory (2026).
  // VLLM_ALLOW_LONG_MAX_MODEL_LEN (vllm/envs.py) turns the refusal of a longer value into a warning.
  const bool allow_long = d.env_on("VLLM_ALLOW_LONG_MAX_MODEL_LEN");
  // --rope-scaling JSON (until 0.10) replaces the config's rope scaling before the limit is
  // derived (the Qwen3 recipe's YaRN factor 4 over 32,768 positions allows --max-model-len
  // 131072); --hf-overrides '{"rope_scaling": {...}}' reaches the config itself (load_model).
  ModelConfig rope = c;
  auto apply_rope = [&](const char* flag, const nlohmann::json& r) {
    if (!r.is_object()) fail_input("vllm serve", flag, "rope scaling must be a JSON object");
    for (const char* k : {"rope_type", "type"})
      if (auto it = r.find(k); it != r.end() && it->is_string()) rope.rope_scaling_type = it->get<std::string>();
    if (auto it = r.find("factor"); it != r.end() && it->is_number()) {
      // Real YaRN / linear / dynamic factors are 2 .. 64; the bounds are config.json's
      // (config_parse.cpp), so factor x positions stays a finite length (issue 31: 1e308 gave
      // "-0 tokens").
      const double f = it->get<double>();
      if (!(f > 0 && f <= 1e6)) fail_input("vllm serve", flag, fmt::format("rope scaling factor {} is not in (0, 1e6]", f));
      rope.rope_scaling_factor = f;
    }
    if (auto it = r.find("original_max_position_embeddings"); it != r.end() && it->is_number_integer()) {
      const int64_t o = it->get<int64_t>();
      if (o < 1 || o > (int64_t{1} << 40))
        fail_input("vllm serve", flag, fmt::format("original_max_position_embeddings {} is out of range [1, 2^40]", o));
      rope.rope_original_max_position_embeddings = o;
    }
  };
  if (const std::string* v = get("--rope-scaling")) apply_rope("--rope-scaling", json_loads("--rope-scaling", *v));
  double derived = derived_max_model_len(rope);
  // --disable-sliding-window (ModelConfig): the sliding-window layers become full attention and
  // _get_and_verify_max_len caps the context at the window ("max_length should be less than the
  // sliding window length"), the key it then names being sliding_window.
  const char* len_key = "max_position_embeddings";
  if (on("--disable-sliding-window") && c.sliding_window > 0) {
    s.disable_sliding_window = true;
    if (static_cast<double>(c.sliding_window) < derived) {
      derived = static_cast<double>(c.sliding_window);
      len_key = "sliding_window";
    }
  }
  s.max_model_len = derived >= 1 ? static_cast<int64_t>(std::min(derived, static_cast<double>(flag_ceiling("--max-model-len")))) : 2048;
  if (auto v = get("--max-model-len")) {
    if (*v == "auto" || *v == "-1") {
      if (!has(Rule::MaxModelLenAuto, era.version))
        fail_input("vllm serve", "--max-model-len", fmt::format("argument --max-model-len: invalid human_readable_int value: '{}'", *v));
      s.max_model_len_auto = true;
    } else {
      int64_t L = human_int("--max-model-len", *v);
      if (L <= 0) fail_input("vllm serve", "--max-model-len", fmt::format("max_model_len ({}) must be a positive integer", L));
      if (derived >= 1 && static_cast<double>(L) > derived) {
        if (!allow_long) refuse_long_max_model_len(era, L, derived, len_key);
        s.notes.push_back(fmt::format("--max-model-len {} exceeds the derived max_model_len ({}); VLLM_ALLOW_LONG_MAX_MODEL_LEN "
                                      "lets vLLM start with a warning, and positions past it are out of the model's range",
                                      L, fmt_len(derived)));
      }
      s.max_model_len = L;
      s.max_model_len_given = true;
    }
  }

  // Batch sizes (arg_utils.py usage-context defaults by device memory and name).
  // The catalog's smi_total_mib 0 on an NVIDIA part means NVML reports no memory for it (GB10);
  // a custom device (--gpu-memory only) is a real GPU whose NVML figure is just not known here.
  const bool nvml_memory = !(d.gpu.vendor == "nvidia" && d.gpu.name != "custom" && d.gpu.smi_total_mib == 0);
  BatchDefaults bd = default_batch(era, d.capacity_bytes, d.gpu.name + " " + d.gpu.display, nvml_memory);
  s.max_num_seqs = bd.max_num_seqs;
  s.max_num_batched_tokens = bd.max_num_batched_tokens;
  if (on("--no-enable-chunked-prefill")) s.chunked_prefill = false;
  if (auto v = get("--enable-chunked-prefill"); v && !truthy(*v)) s.chunked_prefill = false;
  bool mnbt_given = false;
  if (auto v = get("--max-num-seqs")) {
    s.max_num_seqs = human_int("--max-num-seqs", *v);
    if (s.max_num_seqs <= 0) pydantic("SchedulerConfig", "max_num_seqs", "Input should be greater than or equal to 1", "greater_than_equal", *v, "int");
  }
  if (auto v = get("--max-num-batched-tokens")) {
    s.max_num_batched_tokens = human_int("--max-num-batched-tokens", *v);
    if (s.max_num_batched_tokens <= 0)
      pydantic("SchedulerConfig", "max_num_batched_tokens", "Input should be greater than or equal to 1", "greater_than_equal", *v, "int");
    mnbt_given = true;
  }
  // V0 (vllm/engine/arg_utils.py): chunked prefill is on by default only above 32K context;
  // without it max_num_batched_tokens = max(max_model_len, 2048).
  if (era.v0 && s.max_model_len <= 32768 && !get("--enable-chunked-prefill")) s.chunked_prefill = false;
  if (!s.chunked_prefill && !s.max_model_len_auto) {
    if (!mnbt_given) s.max_num_batched_tokens = std::max(s.max_num_batched_tokens, s.max_model_len);
    else if (s.max_num_batched_tokens < s.max_model_len)
      fail_input("vllm serve", "--max-num-batched-tokens",
                 fmt::format("ValueError: max_num_batched_tokens ({}) is smaller than max_model_len ({}). This effectively limits the "
                             "maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please "
                             "increase max_num_batched_tokens or decrease max_model_len.",
                             s.max_num_batched_tokens, s.max_model_len));
  }
  if (!mnbt_given && get("--max-num-seqs") && s.max_num_seqs > s.max_num_batched_tokens)
    s.max_num_batched_tokens = s.max_num_seqs;  // vLLM raises the default to keep mnbt >= max_num_seqs
  if (s.max_num_batched_tokens < s.max_num_seqs)
    fail_input("vllm serve", "--max-num-batched-tokens",
               fmt::format("ValueError: max_num_batched_tokens ({}) must be greater than or equal to max_num_seqs ({}).",
                           s.max_num_batched_tokens, s.max_num_seqs));

  resolve_speculative(s, d);
  resolve_lora_and_runner(s, d);

  // KV cache dtype and block size (CacheConfig; platform / attention-backend fix-ups).
  s.kv = resolve_kv_dtype(era, get("--kv-cache-dtype") ? *get("--kv-cache-dtype") : "auto", s.model_dtype, c.quant, c.mla);
  if (s.draft) {
    std::string why;
    s.draft_layers = draft_model_kv_layers(c, s.draft->config, d.par, s.kv, why);
    if (s.draft_layers == 0)
      s.notes.push_back(fmt::format("draft model {}: its KV is not modelled ({})", s.spec_model, why));
  }
  if (c.mla) {
    // MLA backends need their own block size: FlashMLA (Hopper) 64, CUTLASS MLA (Blackwell
    // sm100) 128, Triton MLA 16 (vllm/platforms/cuda.py check_and_update_config).
    int sm = d.gpu.sm;
    s.block_size = s.kv.ds_mla ? 64 : sm == 90 ? 64 : (sm == 100 || sm == 103) ? 128 : 16;
  }
  // --mamba-block-size (CacheConfig.mamba_block_size: int, gt=0): in mamba_cache_mode "all" the
  // chunk the attention block is aligned to instead of the model's mamba chunk size
  // (platforms/interface.py _align_hybrid_block_size, models/config.py before it); "align" sets
  // it to the block size, so it has no other memory effect.
  if (auto v = get("--mamba-block-size")) {
    s.mamba_block_size = plain_int("--mamba-block-size", *v);
    if (s.mamba_block_size <= 0) pydantic("CacheConfig", "mamba_block_size", "Input should be greater than 0", "greater_than", *v, "int");
  }
  if (auto v = get("--block-size")) {
    s.block_size = plain_int("--block-size", *v);
    // Only non-positive sizes are refused: `vllm serve`'s argparse offers the BlockSize Literal's
    // choices (1 .. 256), but CacheConfig.block_size is SkipValidation, so the Python API and the
    // engine itself take any size (hybrid models run at e.g. 544, the size their logs print and
    // reports quote as the flag: corpus vllm-048).
    if (s.block_size <= 0)
      fail_input("vllm serve", "--block-size", fmt::format("argument --block-size: invalid choice: {} (choose from 1, 8, 16, 32, 64, 128)", *v));
    s.block_size_given = true;
  }

  if (auto v = get("--enforce-eager")) s.enforce_eager = truthy(*v);
  if (auto v = get("--max-cudagraph-capture-size")) s.max_capture_size = plain_int("--max-cudagraph-capture-size", *v);
  if (auto v = get("--num-gpu-blocks-override")) {
    int64_t n = plain_int("--num-gpu-blocks-override", *v);
    if (n <= 0) fail_input("vllm serve", "--num-gpu-blocks-override", "num_gpu_blocks_override must be positive");
    s.num_gpu_blocks_override = n;
  }

  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (vllm/envs.py; read by gpu_worker.py
  // determine_available_memory): the opt-in from 0.17 (PR #30515), default "1" from 0.21
  // (PR #38284); "0" keeps the captured graphs outside the budget as before. Older builds do
  // not read it. Other variables are passed through to the notes as not modelled.
  bool estimate = era.graph_estimate_applied;
  for (const auto& [name, value] : d.env) {
    if (name == "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS") {
      if (value != "0" && value != "1")
        fail_input("--env", name, fmt::format("'{}' is not 0 or 1 (vllm/envs.py reads it as a bool of an int)", value));
      if (era.graph_estimate_logged) estimate = value == "1";
      else s.notes.push_back(fmt::format("{}={} ignored: this vLLM build has no CUDA-graph memory estimate (0.17+)", name, value));
    } else if (name != "VLLM_ALLOW_LONG_MAX_MODEL_LEN" && name != "VLLM_USE_FLASHINFER_SAMPLER" &&  // vllm_estimates.cpp sampler_path
               name != "VLLM_MXFP4_USE_MARLIN" && name != "VLLM_USE_FLASHINFER_MOE_MXFP4_BF16" &&  // vllm_plan.cpp mxfp4_expert_ratio
               name != "VLLM_USE_V2_MODEL_RUNNER") {  // model_runner_v2 (vllm_estimates.cpp)
      s.notes.push_back(fmt::format("environment {}={} is not modelled: the forecast is the same as without it", name, value));
    }
  }
  // Capture sizes and CUDA-graph mode given explicitly: --cudagraph-capture-sizes (0.11+,
  // CompilationConfig.cudagraph_capture_sizes), --cuda-graph-sizes (SchedulerConfig until its
  // deprecation in 0.11: one value is the largest size, several the list), and the
  // --compilation-config JSON keys cudagraph_capture_sizes, max_cudagraph_capture_size (older
  // max_capture_size) and cudagraph_mode.
  GraphFlags gf = graph_flags(d);
  // gpt-oss raises the largest captured size to 1024 (vllm.gpt_oss_capture_1024 in docs/engines/vllm.md).
  if (!era.v0 && has(Rule::GptOssCapture1024, era.version) && d.model->config.family == "gpt_oss" && gf.sizes.empty()) {
    if (!has(Rule::CompilationCaptureSizes, era.version) && gf.max_capture_size < 1024) {
      gf.sizes = {1, 2, 4};
      for (int64_t x = 8; x < 256; x += 8) gf.sizes.push_back(x);
      for (int64_t x = 256; x <= 1024; x += 16) gf.sizes.push_back(x);
      gf.max_capture_size = 0;
      s.notes.push_back("Overriding max cuda graph capture size to 1024 for performance. (gpt-oss: 83 capture sizes)");
    } else if (has(Rule::CompilationCaptureSizes, era.version) && gf.max_capture_size <= 0) {
      gf.max_capture_size = 1024;
      s.notes.push_back("Overriding max cuda graph capture size to 1024 for performance. (gpt-oss)");
    }
  }
  if (gf.max_capture_size > 0) s.max_capture_size = gf.max_capture_size;
  int64_t dql = 1 + s.num_speculative_tokens;
  if (!s.enforce_eager) {
    s.capture = gf.sizes.empty() ? capture_sizes(era, s.max_num_seqs, s.max_num_batched_tokens, dql, s.max_capture_size)
                                 : explicit_capture_sizes(gf.sizes, s.max_num_batched_tokens, s.max_capture_size);
    s.full_graphs = full_graph_count(era, s.capture, s.max_num_seqs, dql);
    s.piecewise_graphs = static_cast<int64_t>(s.capture.size());
    apply_cudagraph_mode(gf.mode, s);
    // cudagraph_specialize_lora: with --enable-lora every size is captured twice (vllm.cudagraph_specialize_lora).
    if (s.lora.enabled && !era.v0 && has(Rule::CudagraphSpecializeLora, era.version)) s.graph_copies = 2;
  }
  s.graph_estimate_on = estimate && s.cuda_graphs();

  s.table = {
      {"--gpu-memory-utilization", fmt_utilization(s.utilization)},
      {"--max-model-len", s.max_model_len_auto ? "auto" : std::to_string(s.max_model_len)},
      {"--max-num-seqs", std::to_string(s.max_num_seqs)},
      {"--max-num-batched-tokens", std::to_string(s.max_num_batched_tokens)},
      {"--kv-cache-dtype", s.kv.name},
      {"--block-size", std::to_string(s.block_size)},
      {"--dtype", s.model_dtype == DType::F16 ? "float16" : s.model_dtype == DType::F32 ? "float32" : "bfloat16"},
      {"--enforce-eager", s.enforce_eager ? "true" : "false"},
      {"--enable-chunked-prefill", s.chunked_prefill ? "true" : "false"},
      {"--kv-cache-memory-bytes", fmt_kv_bytes(s.kv_cache_memory_bytes)},
      {"--num-gpu-blocks-override", s.num_gpu_blocks_override ? std::to_string(*s.num_gpu_blocks_override) : "None"},
      {"--max-cudagraph-capture-size", s.capture.empty() ? "0" : std::to_string(s.capture.back())},
      {"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", s.graph_estimate_on ? "1" : "0"},
  };
  if (s.lora.enabled) {
    s.table.push_back({"--enable-lora", "true"});
    s.table.push_back({"--max-lora-rank", std::to_string(s.lora.max_rank)});
    s.table.push_back({"--max-loras", std::to_string(s.lora.max_loras)});
  }
  if (!s.spec_method.empty())
    s.table.push_back({"--speculative-config", fmt::format("method={} num_speculative_tokens={}", s.spec_method, s.num_speculative_tokens)});
  for (const auto& [k, v] : d.flags) {
    bool known = std::any_of(s.table.begin(), s.table.end(), [&k = k](const auto& p) { return p.first == k; });
    if (!known && k != "--kv-cache-memory" && k != "--speculative-config") s.table.push_back({k, v});
  }
  return s;
}

}  // namespace headroom::vllm
