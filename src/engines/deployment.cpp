// parse_deployment(): the common options of CONTRACT.md (and the engines' own spellings of
// model and parallelism) → Deployment. Engine flags are kept as given for the engine model.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "engines/deployment_host.h"
#include "headroom/engine_traits.h"
#include "headroom/error.h"
#include "headroom/gguf.h"
#include "model/gguf_hub.h"
#include "model/hub_env.h"
#include "headroom/units.h"

namespace headroom {

namespace {
std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::string_view engine_kind_name(EngineKind k) {
  switch (k) {
    case EngineKind::SGLang: return "sglang";
    case EngineKind::VLLM: return "vllm";
    case EngineKind::TRTLLM: return "trtllm";
    case EngineKind::LlamaCpp: return "llamacpp";
  }
  return "sglang";
}

const std::string* Deployment::flag(std::string_view name) const {
  for (auto it = flags.rbegin(); it != flags.rend(); ++it)
    if (it->first == name) return &it->second;
  return nullptr;
}

const std::string* Deployment::env_value(std::string_view name) const {
  for (auto it = env.rbegin(); it != env.rend(); ++it)
    if (it->first == name) return &it->second;
  return nullptr;
}

bool Deployment::env_on(std::string_view name) const {
  const std::string* value = env_value(name);
  if (!value) return false;
  std::string v;
  for (char ch : *value)
    if (!std::isspace(static_cast<unsigned char>(ch))) v += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return v == "1" || v == "true";
}

namespace {
// Spellings of the parallel sizes: headroom's, SGLang's (server_args.py) and vLLM's
// (EngineArgs). They all land in Parallel and are removed from the engine flags.
struct Alias { std::string_view flag; char which; };
constexpr Alias kParallelFlags[] = {
    {"--tp", 't'}, {"--tp-size", 't'}, {"--tensor-parallel-size", 't'},
    {"--pp", 'p'}, {"--pp-size", 'p'}, {"--pipeline-parallel-size", 'p'},
    {"--dp", 'd'}, {"--dp-size", 'd'}, {"--data-parallel-size", 'd'},
    {"--ep", 'e'}, {"--ep-size", 'e'}, {"--expert-parallel-size", 'e'},
    {"--tp_size", 't'}, {"--pp_size", 'p'}, {"--ep_size", 'e'},  // trtllm-serve
};
constexpr std::string_view kHeadroomOptions[] = {"--engine", "--model", "--model-path", "--gpu", "--gpu-memory",
                                                 "--gpus", "--json", "--enable-dp-attention", "--env",
                                                 "--interconnect", "--compile-cache", "--brief", "--host-state", "--profile",
                                                 "--host-memory"};
}  // namespace

const std::vector<std::string_view>& common_deployment_options() {
  static const std::vector<std::string_view> v = [] {
    std::vector<std::string_view> o(std::begin(kHeadroomOptions), std::end(kHeadroomOptions));
    for (const auto& a : kParallelFlags) o.push_back(a.flag);
    return o;
  }();
  return v;
}

namespace {
bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; });
}
// How logs and reports name a build when they give no engine version number, rewritten to the
// forms the engines' era tables read (NAME@DATE dates a build; "latest" is the newest rules):
//  - a docker image ("lmsysorg/sglang:v0.5.2-cu126", "vllm/vllm-openai:v0.11.0"): its tag;
//  - a bare date ("2025-08-01", "2025-08"): an undated label of that day;
//  - an NVIDIA NGC container tag ("25.09-py3", "26.01", "24.02-trtllm-python-py3"): read as a build
//    of the first day of that month (GUESS: each monthly container carries the engine release of
//    about then; no engine numbers its own releases 2x.yy, so the form cannot be a release);
//  - a word that names how it was built, not which version ("source", "docker", "dev", "release"):
//    the newest rules, as "unknown". Other words stay an error.
std::string normalize_version_label(std::string v) {
  if (auto colon = v.rfind(':'); colon != std::string::npos && colon + 1 < v.size()) v = v.substr(colon + 1);
  const std::string_view sv(v);
  if (sv.size() >= 7 && all_digits(sv.substr(0, 4)) && sv[4] == '-' && all_digits(sv.substr(5, 2)) &&
      (sv.size() == 7 || (sv.size() == 10 && sv[7] == '-' && all_digits(sv.substr(8, 2)))))
    return "unknown@" + v;
  if (sv.size() >= 5 && all_digits(sv.substr(0, 2)) && sv[2] == '.' && all_digits(sv.substr(3, 2)) && (sv.size() == 5 || sv[5] == '-')) {
    const int yy = std::stoi(std::string(sv.substr(0, 2))), mm = std::stoi(std::string(sv.substr(3, 2)));
    if (yy >= 23 && mm >= 1 && mm <= 12) return fmt::format("ngc@20{:02d}-{:02d}-01", yy, mm);
  }
  // A bare year ("2025"): the newest release of that year.
  if (sv.size() == 4 && all_digits(sv)) return "unknown@" + v;
  // A build word with a date ("nightly-2026-03-01", "nightly-20260301", "dev-2025-10"): that date.
  if (auto dash = sv.find_first_of("-_"); dash != std::string_view::npos && dash > 0 && std::isalpha(static_cast<unsigned char>(sv[0]))) {
    const std::string_view date = sv.substr(dash + 1);
    if (date.size() == 8 && all_digits(date))
      return fmt::format("unknown@{}-{}-{}", date.substr(0, 4), date.substr(4, 2), date.substr(6, 2));
    if (date.size() >= 7 && all_digits(date.substr(0, 4)) && date[4] == '-' && all_digits(date.substr(5, 2)) &&
        (date.size() == 7 || (date.size() == 10 && date[7] == '-' && all_digits(date.substr(8, 2)))))
      return "unknown@" + std::string(date);
  }
  static constexpr std::string_view kUndatedBuilds[] = {"source", "docker", "dev", "release", "stable", "head", "git", "fork", "custom"};
  if (const std::string low = lowercase(v); std::find(std::begin(kUndatedBuilds), std::end(kUndatedBuilds), low) != std::end(kUndatedBuilds))
    return "latest";
  return v;
}
}  // namespace

std::optional<int> dated_build_ymd(std::string_view version) {
  const auto at = version.find('@');
  if (at == std::string_view::npos) return std::nullopt;
  const std::string date(version.substr(at + 1));
  int y = 0, m = 0, d = 0;
  const int n = std::sscanf(date.c_str(), "%4d-%2d-%2d", &y, &m, &d);
  if (n < 1 || y < 2023 || y > 2100) return std::nullopt;
  if (n < 2 || m < 1 || m > 12) m = 12;  // a bare year: its newest release
  if (n < 3 || d < 1 || d > 31) d = 28;  // a month: its newest release
  return y * 10000 + m * 100 + d;
}

std::pair<EngineKind, std::string> parse_engine_spec(std::string_view spec) {
  std::string s(spec);
  std::string version;
  if (auto at = s.find('@'); at != std::string::npos) {
    version = s.substr(at + 1);
    s = s.substr(0, at);
    if (version.empty()) fail_input("--engine", spec, "empty version after '@'");
    version = normalize_version_label(version);
    // Release tags spell the version with a 'v' (docker vllm/vllm-openai:v0.11.0, git tag
    // v0.5.4, TensorRT-LLM v1.0.0): the same release as 0.11.0.
    if (version.size() > 1 && (version[0] == 'v' || version[0] == 'V') && std::isdigit(static_cast<unsigned char>(version[1])))
      version.erase(0, 1);
    // A log whose version is not known at all: the newest rules, as with no version.
    if (const std::string v = lowercase(version); v == "unknown" || v == "nightly") version = "latest";
  }
  if (const EngineTraits* t = traits_by_name(s)) return {t->kind, version};
  s = lowercase(s);
  std::vector<std::string> names;
  for (const auto& t : engine_traits()) names.emplace_back(t.name);
  const std::string near = did_you_mean(s, names);
  fail_input("--engine", spec, fmt::format("unknown engine{} (expected sglang, vllm, trtllm or llamacpp, optionally @VERSION)",
                                           near.empty() ? "" : "; did you mean " + near + "?"));
}

Deployment parse_deployment(const Args& given, std::string_view default_model, std::string_view default_gpu) {
  Deployment d;
  auto [kind, version] = parse_engine_spec(given.get_or("--engine", "sglang"));
  // vLLM reads --max_model_len as --max-model-len (FlexibleArgumentParser); SGLang's and
  // TensorRT-LLM's parsers take names as spelled.
  const Args args = kind == EngineKind::VLLM ? given.renamed(vllm_flag_spelling) : given;
  d.engine = kind;
  d.engine_version = version;

  auto set_size = [&](char which, std::string_view flag) {
    auto v = args.get_int(flag, 1, 4096);
    if (!v) return;
    int n = static_cast<int>(*v);
    switch (which) {
      case 't': d.par.tp = n; break;
      case 'p': d.par.pp = n; break;
      case 'd': d.par.dp = n; break;
      case 'e': d.par.ep = n; break;
    }
  };
  for (const auto& a : kParallelFlags) set_size(a.which, a.flag);
  d.par.dp_attention = args.has("--enable-dp-attention");
  if (d.engine == EngineKind::VLLM && args.has("--enable-expert-parallel"))
    d.par.ep = d.par.tp * d.par.dp;  // vLLM: EP size = TP x DP (vllm/distributed/parallel_state.py)
  if (d.par.dp_attention) {
    if (d.par.dp < 1 || d.par.tp % d.par.dp != 0)
      fail_input("command line", "--dp-size", fmt::format("tp_size ({}) must be divisible by dp_size ({}) with --enable-dp-attention", d.par.tp, d.par.dp));
  }
  if (d.par.ep > 1 && d.engine == EngineKind::SGLang && d.par.tp % d.par.ep != 0)
    fail_input("command line", "--ep-size", fmt::format("tp_size ({}) must be divisible by ep_size ({})", d.par.tp, d.par.ep));

  int needed = d.par.tp * d.par.pp * ((d.engine == EngineKind::SGLang && d.par.dp_attention) ? 1 : d.par.dp);
  if (auto g = args.get_int("--gpus", 1, 65536)) {
    d.gpus = static_cast<int>(*g);
    if (d.gpus < needed)
      fail_input("command line", "--gpus", fmt::format("{} GPUs given but tp x pp{} needs {}", d.gpus,
                                                       d.par.dp > 1 ? " x dp" : "", needed));
  } else {
    d.gpus = needed;
  }

  std::string model = args.get_or("--model", args.get_or("--model-path", default_model));
  if (model.empty()) fail_input("command line", "--model", "is required (a catalog id such as nvidia/GLM-5-NVFP4, a model folder or a config.json)");
  d.model_spec = model;
  // Config keys the engine writes over config.json before it builds the model. Both merge a
  // nested sub-config key by key: vLLM by ModelConfig._apply_dict_overrides; SGLang (hf_config.update)
  // INFERRED from deployments that put Qwen3.5's rope override under "text_config" and keep the
  // rest of it (public-code 69248745228, 63043395797).
  std::optional<ConfigOverride> over;
  if (const auto v = args.get(d.engine == EngineKind::VLLM ? "--hf-overrides" : "--json-model-override-args");
      v && d.engine != EngineKind::TRTLLM)
    over = ConfigOverride{*v, d.engine == EngineKind::VLLM ? "--hf-overrides" : "--json-model-override-args", true};
  // llama.cpp reads a GGUF file itself (llamacpp model_source.cpp); other specs go through the catalog.
  // So does a Hub GGUF repo's file (`ORG/NAME:Q4_K_M`, or `--gguf FILE.gguf`): its header, by Range requests.
  // A web request's model is never a server path (hub_env.h LocalPathsScope), a GGUF one neither.
  const bool local_gguf = hub::local_paths_allowed() && gguf::is_gguf_path(model);
  const bool gguf_model = d.engine == EngineKind::LlamaCpp && (local_gguf || hub::parse_gguf_ref(model) || args.has("--gguf"));
  if (!gguf_model) d.model = load_model(model, over ? &*over : nullptr);

  std::optional<HostState> host;
  if (auto hs = args.get("--host-state")) host = read_host_state(*hs);
  std::string gpu = args.get_or("--gpu", default_gpu);
  auto mem = args.get("--gpu-memory");
  if (gpu.empty() && !mem && host) {  // the host's own GPU when none is named
    const GpuSpec* g = host_default_gpu(*host);
    if (!g) fail_input(host->source, "GPU 0", fmt::format("'{}' ({} MiB) is not in the GPU catalog: give --gpu or --gpu-memory",
                                                          host->gpus.front().name, host->gpus.front().total_bytes / MiB));
    gpu = g->name;
  }
  if (gpu.find(',') != std::string::npos) {
    // llama.cpp spreads layers over cards of different kinds (--gpu rtx-4090,rtx-3090).
    if (d.engine != EngineKind::LlamaCpp) fail_input("command line", "--gpu", "a list of GPUs is modelled for --engine llamacpp only");
    for (size_t at = 0; at <= gpu.size();) {
      const size_t end = std::min(gpu.find(',', at), gpu.size());
      d.gpu_list.push_back(require_gpu(gpu.substr(at, end - at)));
      at = end + 1;
    }
    if (args.has("--gpus") && d.gpus != static_cast<int>(d.gpu_list.size()))
      fail_input("command line", "--gpus", fmt::format("{} GPUs given but --gpu lists {}", d.gpus, d.gpu_list.size()));
    d.gpus = static_cast<int>(d.gpu_list.size());
    d.gpu = d.gpu_list.front();
  } else if (!gpu.empty()) {
    d.gpu = require_gpu(gpu);
  } else if (mem) {
    d.gpu = GpuSpec{};
    d.gpu.name = "custom";
    d.gpu.display = "custom GPU";
  } else {
    fail_input("command line", "--gpu", "is required (a catalog name such as h200, or --gpu-memory BYTES)");
  }
  d.capacity_bytes = d.gpu.capacity_bytes;
  if (mem) {
    d.capacity_bytes = parse_bytes(*mem, "command line", "--gpu-memory");
    if (d.gpu.name == "custom") d.gpu.smi_total_mib = 0;  // unknown: engines fall back as they do without nvidia-smi
  }
  if (d.capacity_bytes < 256 * MiB) fail_input("command line", "--gpu-memory", "capacity below 256 MiB is not a serving GPU");
  // --interconnect overrides the catalog row's fabric (an A100 PCIe card on the a100-80gb row, a
  // custom GPU): vLLM's multi-GPU context + NCCL estimates read it (vllm_estimates.cpp).
  if (auto ic = args.get("--interconnect")) {
    if (!is_interconnect(*ic)) fail_input("command line", "--interconnect", fmt::format("'{}' is not one of {}", *ic, fmt::join(kInterconnects, ", ")));
    d.gpu.interconnect = *ic;
  }

  // --host-memory: the RAM the server may use (llama.cpp keeps weights, KV and buffers there).
  if (auto hm = args.get("--host-memory")) {
    if (d.engine != EngineKind::LlamaCpp) fail_input("command line", "--host-memory", "host RAM is modelled for --engine llamacpp only");
    d.host_memory_bytes = parse_bytes(*hm, "command line", "--host-memory");
    if (d.host_memory_bytes < 256 * MiB) fail_input("command line", "--host-memory", "below 256 MiB is not a host that serves a model");
  }
  if (auto cc = args.get("--compile-cache")) {
    if (*cc != "cold" && *cc != "warm") fail_input("command line", "--compile-cache", fmt::format("'{}' is not one of cold, warm", *cc));
    d.compile_cache = *cc;
  }

  for (const auto& [k, v] : args.options()) {
    if (k != "--env") continue;
    auto eq = v.find('=');
    std::string name = v.substr(0, eq == std::string::npos ? 0 : eq);
    bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
      return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
    });
    if (!ok) fail_input("command line", "--env", fmt::format("'{}' is not NAME=VALUE (an environment variable name, '=', a value)", v));
    d.env.emplace_back(name, v.substr(eq + 1));
  }
  const auto& common = common_deployment_options();
  for (const auto& [k, v] : args.options()) {
    if (std::find(common.begin(), common.end(), k) != common.end()) continue;
    d.flags.emplace_back(k, v);
  }
  if (host) apply_host_state(d, *host);
  return d;
}

}  // namespace headroom
