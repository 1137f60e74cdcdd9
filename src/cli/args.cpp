// The option parser shared by every verb: "--name value", "--name=value", boolean flags.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <utility>
#include <fmt/format.h>

#include "headroom/cli.h"
#include "headroom/error.h"

namespace headroom {

namespace {
// Flags that take no value: headroom's own and the engines' store_true flags, spelled as the
// engines spell them (SGLang server_args.py, vLLM EngineArgs).
constexpr std::string_view kBooleanFlags[] = {
    "--json", "--brief", "--all", "--estimates", "--help", "--version", "--fill", "--enable-dp-attention", "--disable-cuda-graph",
    "--enforce-eager", "--enable-torch-compile", "--trust-remote-code", "--disable-radix-cache",
    "--enable-expert-parallel", "--disable-cuda-graph-padding", "--enable-memory-saver",
    "--enable-dp-lm-head", "--enable-mixed-chunk", "--disable-custom-all-reduce",
    "--enable-two-batch-overlap", "--enable-piecewise-cuda-graph", "--disable-piecewise-cuda-graph",
    "--enable-prefix-caching", "--no-enable-prefix-caching", "--enable-chunked-prefill",
    "--no-enable-chunked-prefill", "--async-scheduling", "--disable-overlap-schedule",
    "--enable-symm-mem", "--enable-hierarchical-cache", "--skip-server-warmup", "--quiet",
    "--no-color", "--enable-mtp", "--disable-log-stats", "--enable-eplb",
    // vLLM
    "--skip-mm-profiling", "--disable-hybrid-kv-cache-manager", "--no-async-scheduling", "--enable-sleep-mode",
    "--calculate-kv-scales", "--enable-lora", "--fully-sharded-loras", "--language-model-only",
    "--enable-auto-tool-choice", "--disable-log-requests", "--enable-log-requests", "--no-enable-log-requests",
    "--disable-cascade-attn", "--enable-prompt-tokens-details", "--enable-force-include-usage",
    "--disable-uvicorn-access-log", "--enable-dbo", "--enable-reasoning", "--disable-frontend-multiprocessing",
    "--enable-request-id-headers", "--return-tokens-as-token-ids", "--disable-sliding-window", "--disable-async-output-proc",
    "--data-parallel-hybrid-lb", "--data-parallel-external-lb", "--headless", "--enable-log-outputs", "--disable-fastapi-docs",
    "--enable-server-load-tracking", "--kv-sharing-fast-prefill", "--enable-return-routed-experts",
    "--enable-multimodal-encoder-data-parallel", "--interleave-mm-strings", "--skip-tokenizer-init", "--enable-prompt-embeds",
    "--enable-tokenizer-info-endpoint", "--log-error-stack", "--exclude-tools-when-tool-choice-none", "--use-tqdm-on-load",
    "--enable-mfu-metrics", "--kv-cache-metrics", "--enable-lora-bias", "--enable-ep-weight-filter", "--allow-credentials",
    "--disable-mm-preprocessor-cache", "--ray-workers-use-nsight", "--use-v2-block-manager", "--multi-step-stream-outputs",
    "--enable-chunked-prefill-for-mm",
    // SGLang store_true options (server_args.py)
    "--log-requests", "--enable-metrics", "--enable-p2p-check", "--enable-cache-report", "--allow-auto-truncate",
    "--is-embedding", "--enable-multimodal", "--disable-outlines-disk-cache", "--disable-chunked-prefix-cache",
    "--triton-attention-reduce-in-fp32", "--enable-nan-detection", "--enable-priority-scheduling", "--show-time-cost",
    "--collect-tokens-histogram", "--sleep-on-idle", "--disable-hybrid-swa-memory", "--weight-loader-disable-mmap",
    "--enable-fp32-lm-head", "--enable-double-sparsity", "--enable-lora-overlap-loading", "--delete-ckpt-after-loading", "--disable-fast-image-processor",
    "--keep-mm-feature-on-device", "--enable-request-time-stats-logging", "--prefill-round-robin-balance",
    "--enable-deterministic-inference", "--enable-weights-cpu-backup", "--enable-flashinfer-trtllm-moe",
    "--enable-triton-kernel-moe", "--enable-ep-moe", "--enable-deepep-moe", "--disable-shared-experts-fusion",
    "--enable-metrics-for-all-schedulers", "--enable-tokenizer-batch-encode", "--disable-tokenizer-batch-decode",
    "--enable-custom-logit-processor", "--enable-dynamic-batch-tokenizer", "--enable-layerwise-nvtx-marker",
    "--enable-profile-cuda-graph", "--enable-cudagraph-gc", "--enable-nccl-nvls", "--enable-trace",
    // TensorRT-LLM (trtllm-serve spelling)
    "--trust_remote_code", "--enable_attention_dp", "--disable_cuda_graph", "--enable_block_reuse",
    "--enable_chunked_prefill", "--fail_fast_on_attention_window_too_large",
    // llama-server (tools/server, common/arg.cpp)
    "--kv-unified", "--no-kv-unified", "--swa-full", "--no-mmap", "--mlock", "--cpu-moe", "--no-kv-offload", "--jinja",
    "--no-warmup", "--cont-batching", "--no-cont-batching", "--metrics", "--slots", "--no-slots", "--verbose",
    "--no-conversation", "--check-tensors", "--no-op-offload", "--no-repack", "--embedding", "--reranking", "--no-mmproj-offload"};

// vLLM's single-dash aliases (vllm/engine/arg_utils.py add_cli_args: "--tensor-parallel-size",
// "-tp"; "-pp", "-dp", "-dpl", "-dpa", "-dpp"; "--quantization", "-q"), read as the long names so
// a pasted `vllm serve ... -tp 8` line plans as vLLM parses it.
constexpr std::pair<std::string_view, std::string_view> kShortAliases[] = {
    {"-tp", "--tensor-parallel-size"},      {"-pp", "--pipeline-parallel-size"}, {"-dp", "--data-parallel-size"},
    {"-dpl", "--data-parallel-size-local"}, {"-dpa", "--data-parallel-address"}, {"-dpp", "--data-parallel-rpc-port"},
    {"-q", "--quantization"},               {"-O", "--compilation-config"},      {"-dcp", "--decode-context-parallel-size"},
    // llama-server's short spellings (common/arg.cpp), read as its long names.
    {"-ngl", "--n-gpu-layers"},  {"-sm", "--split-mode"},      {"-ts", "--tensor-split"},
    {"-mg", "--main-gpu"},       {"-c", "--ctx-size"},          {"-np", "--parallel"},       {"-kvu", "--kv-unified"},
    {"-ctk", "--cache-type-k"},  {"-ctv", "--cache-type-v"},    {"-fa", "--flash-attn"},     {"-b", "--batch-size"},
    {"-ub", "--ubatch-size"},    {"-nkvo", "--no-kv-offload"},  {"-cmoe", "--cpu-moe"},      {"-ncmoe", "--n-cpu-moe"},
    {"-ot", "--override-tensor"}, {"-t", "--threads"},         {"-tb", "--threads-batch"},  {"-md", "--model-draft"},
    {"-ngld", "--n-gpu-layers-draft"}, {"-dev", "--device"},   {"-n", "--n-predict"},       {"-p", "--prompt"},
    {"-v", "--verbose"},         {"-lv", "--log-verbosity"},    {"-no-cnv", "--no-conversation"}, {"-fit", "--fit"}, {"-fitt", "--fit-target"}, {"-fitc", "--fit-ctx"},
    {"-cd", "--ctx-size-draft"}, {"-ctkd", "--cache-type-k-draft"}, {"-ctvd", "--cache-type-v-draft"}, {"-devd", "--device-draft"},
    {"-mm", "--mmproj"},         {"-s", "--seed"},              {"-cram", "--cache-ram"}};

// Flags whose value is optional: llama-server's -fa was a bare switch before it took on|off|auto.
constexpr std::string_view kOptionalValueFlags[] = {"--flash-attn"};
constexpr std::string_view kOptionalValues[] = {"on", "off", "auto", "1", "0", "true", "false", "enabled", "disabled", ""};

// Options that take a list of values (argparse nargs="+"), spelled as the engines spell them:
// SGLang's --cuda-graph-bs 1 2 4 8, vLLM's --cudagraph-capture-sizes / --cuda-graph-sizes. The
// values are kept as one space-separated string.
constexpr std::string_view kListFlags[] = {"--cuda-graph-bs", "--cudagraph-capture-sizes", "--cuda-graph-sizes"};
}  // namespace

bool is_boolean_flag(std::string_view name) {
  // vLLM also takes its store_true flags with underscores (FlexibleArgumentParser: --enforce_eager).
  const std::string d = vllm_flag_spelling(name);
  auto known = [](std::string_view n) { return std::find(std::begin(kBooleanFlags), std::end(kBooleanFlags), n) != std::end(kBooleanFlags); };
  // argparse.BooleanOptionalAction (vLLM's bool options) also takes --no-NAME.
  if (d.rfind("--no-", 0) == 0 && known("--" + d.substr(5))) return true;
  return known(name) || known(d);
}

Args Args::parse(const std::vector<std::string>& argv) {
  Args a;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string t = argv[i];
    if (t.size() > 1 && t[0] == '-' && t[1] != '-') {
      const std::string head = t.substr(0, t.find('='));
      for (const auto& [alias, name] : kShortAliases)
        if (head == alias) t = std::string(name) + t.substr(head.size());
      // vLLM's -O3 / -O'{"cudagraph_mode": ...}': -O with its value attached.
      if (t.size() > 2 && t[1] == 'O' && t[2] != '=') t = "--compilation-config=" + t.substr(2);
    }
    if (std::find(std::begin(kListFlags), std::end(kListFlags), t) != std::end(kListFlags) && i + 1 < argv.size()) {
      std::string list;
      // Only numbers join the list, so a positional after it (doctor's LOGFILE) stays one.
      auto numeric = [](const std::string& v) { return !v.empty() && (std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '['); };
      while (i + 1 < argv.size() && numeric(argv[i + 1])) list += (list.empty() ? "" : " ") + argv[++i];
      if (!list.empty()) {
        a.options_.emplace_back(t, list);
        continue;
      }
    }
    if (t.size() > 2 && t[0] == '-' && t[1] == '-') {
      auto eq = t.find('=');
      if (eq != std::string::npos) {
        a.options_.emplace_back(t.substr(0, eq), t.substr(eq + 1));
      } else if (is_boolean_flag(t)) {
        a.options_.emplace_back(t, "true");
      } else if (std::find(std::begin(kOptionalValueFlags), std::end(kOptionalValueFlags), t) != std::end(kOptionalValueFlags) &&
                 (i + 1 >= argv.size() ||
                  std::find(std::begin(kOptionalValues), std::end(kOptionalValues), argv[i + 1]) == std::end(kOptionalValues))) {
        a.options_.emplace_back(t, "true");
      } else if (i + 1 < argv.size() && !(argv[i + 1].size() > 2 && argv[i + 1].rfind("--", 0) == 0)) {
        a.options_.emplace_back(t, argv[i + 1]);
        ++i;
      } else {
        fail_input("command line", t, "expects a value");
      }
    } else {
      a.positionals_.push_back(t);
    }
  }
  return a;
}

Args Args::renamed(std::string (*rename)(std::string_view)) const {
  Args a = *this;
  for (auto& o : a.options_) o.first = rename(o.first);
  return a;
}

std::string vllm_flag_spelling(std::string_view name) {
  // vllm/utils FlexibleArgumentParser.parse_args: "--max_model_len" is "--max-model-len" (the
  // underscores of the name up to its first '.', which starts a JSON-config key path).
  std::string s(name);
  if (s.rfind("--", 0) != 0) return s;
  const size_t end = std::min(s.find('.'), s.size());
  std::replace(s.begin() + 2, s.begin() + static_cast<std::ptrdiff_t>(end), '_', '-');
  return s;
}

bool Args::has(std::string_view name) const {
  return std::any_of(options_.begin(), options_.end(), [&](const auto& o) { return o.first == name; });
}

std::optional<std::string> Args::get(std::string_view name) const {
  for (auto it = options_.rbegin(); it != options_.rend(); ++it)
    if (it->first == name) return it->second;
  return std::nullopt;
}

std::vector<std::string> Args::get_all(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& o : options_) if (o.first == name) out.push_back(o.second);
  return out;
}

std::string Args::get_or(std::string_view name, std::string_view fallback) const {
  auto v = get(name);
  return v ? *v : std::string(fallback);
}

std::optional<int64_t> Args::get_int(std::string_view name, int64_t min, int64_t max) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  size_t pos = 0;
  long long x = 0;
  try {
    x = std::stoll(*v, &pos);
  } catch (...) {
    fail_input("command line", name, "expects an integer, got '" + *v + "'");
  }
  if (pos != v->size()) fail_input("command line", name, "expects an integer, got '" + *v + "'");
  if (x < min || x > max)
    fail_input("command line", name, fmt::format("{} is out of range [{}, {}]", x, min, max));
  return x;
}

std::optional<double> Args::get_double(std::string_view name, double min, double max) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  size_t pos = 0;
  double x = 0;
  try {
    x = std::stod(*v, &pos);
  } catch (...) {
    fail_input("command line", name, "expects a number, got '" + *v + "'");
  }
  if (pos != v->size() || !std::isfinite(x)) fail_input("command line", name, "expects a number, got '" + *v + "'");
  if (x < min || x > max) fail_input("command line", name, fmt::format("{} is out of range [{}, {}]", *v, min, max));
  return x;
}

void Args::reject_unknown(const std::vector<std::string_view>& allowed, std::string_view verb) const {
  for (const auto& o : options_)
    if (std::find(allowed.begin(), allowed.end(), o.first) == allowed.end()) {
      const std::string near = did_you_mean(o.first, std::vector<std::string>(allowed.begin(), allowed.end()));
      fail_input("command line", o.first,
                 fmt::format("unknown option for 'headroom {}'{}", verb, near.empty() ? "" : "; did you mean " + near + "?"));
    }
}

}  // namespace headroom
