// llama-server's flags (common/arg.cpp spellings) -> ServerSettings, with each build's defaults
// (llamacpp_rule_table.cpp). Flags without a memory effect are accepted and named in the notes.
#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <regex>

#include "headroom/engine_version.h"
#include "headroom/error.h"
#include "engines/llamacpp/build_dates.h"
#include "engines/llamacpp/device_select.h"
#include "engines/llamacpp/llamacpp_rule_table.h"
#include "headroom/llamacpp_plan.h"

namespace headroom::llamacpp {

namespace {
// Defaults that changed between builds. Boundaries are approximate [INF]: see docs/llamacpp-plan.md.
struct BuildDefaults {
  bool fit;              // --fit on by default
  bool ngl_all;          // -ngl defaults to every layer (llama_model_default_params n_gpu_layers = -1 -> all)
  FlashAttn fa;          // -fa default
  int64_t n_batch, n_ubatch;
};
// The build's defaults, from the rows of llamacpp_rule_table.cpp.
BuildDefaults defaults_for(int build) {
  return {has(Rule::FitOn, build), has(Rule::AllLayersOffloaded, build), has(Rule::FlashAttnAuto, build) ? FlashAttn::Auto : FlashAttn::Off,
          has(Rule::MicroBatches, build) ? 2048 : 512, 512};
}

// Flags accepted with no effect on memory (said in the notes when given).
constexpr std::string_view kNoMemoryEffect[] = {
    "--threads", "--threads-batch", "--jinja", "--host", "--port", "--seed", "--prio", "--no-conversation", "--prompt",
    "--n-predict", "--no-warmup", "--cont-batching", "--no-cont-batching", "--reasoning-budget", "--verbose",
    "--log-verbosity", "--metrics", "--slots", "--no-slots", "--numa", "--mlock", "--check-tensors", "--alias",
    "--api-key", "--temp", "--top-k", "--top-p", "--min-p", "--chat-template", "--ctx-checkpoints", "--timeout",
    "--draft-max", "--draft-min", "--draft-p-min", "--embedding", "--reranking", "--no-op-offload", "--no-repack"};
// Flags accepted whose memory effect is not modelled: named in the notes with what they change.
constexpr std::pair<std::string_view, std::string_view> kUnmodelled[] = {
    {"--cache-ram", "host RAM for the prompt cache"},
};
// Every flag the model reads.
constexpr std::string_view kModelled[] = {
    "--mmproj", "--no-mmproj-offload", "--gguf",
    "--quant", "--n-gpu-layers", "--gpu-layers", "--split-mode", "--tensor-split", "--main-gpu", "--ctx-size", "--parallel",
    "--kv-unified", "--no-kv-unified", "--cache-type-k", "--cache-type-v", "--flash-attn", "--batch-size", "--ubatch-size",
    "--no-kv-offload", "--cpu-moe", "--n-cpu-moe", "--override-tensor", "--swa-full", "--no-mmap", "--fit", "--fit-target",
    "--fit-ctx", "--model-draft", "--n-gpu-layers-draft", "--ctx-size-draft", "--cache-type-k-draft", "--cache-type-v-draft",
    "--device-draft", "--device"};

}  // namespace

int64_t int_flag(const Deployment& d, std::string_view flag, int64_t lo, int64_t hi) {
  const std::string* v = d.flag(flag);
  if (!v) return -1;
  try {
    size_t used = 0;
    const long long x = std::stoll(*v, &used);
    if (used == v->size() && x >= lo && x <= hi) return x;
  } catch (const std::exception&) {
  }
  fail_input("command line", flag, fmt::format("'{}' is not an integer in [{}, {}]", *v, lo, hi));
}

namespace {

gguf::GgmlType cache_type(const Deployment& d, std::string_view flag) {
  const std::string* v = d.flag(flag);
  if (!v) return gguf::GgmlType::F16;
  std::string want = *v;
  for (char& c : want) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // common/arg.cpp kv_cache_types: the types -ctk / -ctv take.
  for (auto t : {gguf::GgmlType::F32, gguf::GgmlType::F16, gguf::GgmlType::BF16, gguf::GgmlType::Q8_0, gguf::GgmlType::Q4_0,
                 gguf::GgmlType::Q4_1, gguf::GgmlType::IQ4_NL, gguf::GgmlType::Q5_0, gguf::GgmlType::Q5_1})
    if (gguf::type_traits(t).name == want) return t;
  fail_input("command line", flag, fmt::format("'{}' is not a KV cache type (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)", *v));
}

FlashAttn flash_attn(const Deployment& d, FlashAttn fallback) {
  const std::string* v = d.flag("--flash-attn");
  if (!v) return fallback;
  std::string x = *v;
  for (char& c : x) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (x == "on" || x == "1" || x == "true" || x == "enabled" || x.empty()) return FlashAttn::On;
  if (x == "off" || x == "0" || x == "false" || x == "disabled") return FlashAttn::Off;
  if (x == "auto") return FlashAttn::Auto;
  fail_input("command line", "--flash-attn", fmt::format("'{}' is not on, off or auto", *v));
}

std::vector<double> tensor_split(const std::string& text, int n_gpus) {
  std::vector<double> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find_first_of(",/", at), text.size());
    const std::string part = text.substr(at, end - at);
    try {
      size_t used = 0;
      const double x = std::stod(part, &used);
      if (used != part.size() || !(x >= 0) || x > 1e9) throw std::invalid_argument("range");
      out.push_back(x);
    } catch (const std::exception&) {
      fail_input("command line", "--tensor-split", fmt::format("'{}' is not a list of proportions such as 3,1", text));
    }
    at = end + 1;
  }
  if (static_cast<int>(out.size()) > n_gpus)
    fail_input("command line", "--tensor-split", fmt::format("{} proportions for {} GPUs (--gpus)", out.size(), n_gpus));
  if (std::all_of(out.begin(), out.end(), [](double x) { return x == 0; }))
    fail_input("command line", "--tensor-split", "every proportion is 0: no GPU would hold a layer");
  out.resize(static_cast<size_t>(n_gpus), 0.0);
  return out;
}

// -ot "regex=BUFT[,regex=BUFT...]": CPU buffer types go to the host, CUDAn / ROCmn / Vulkann to GPU n.
void overrides(const Deployment& d, int n_gpus, ServerSettings& s) {
  for (const auto& [k, v] : d.flags) {
    if (k != "--override-tensor") continue;
    size_t at = 0;
    while (at < v.size()) {
      const size_t end = std::min(v.find(',', at), v.size());
      const std::string rule = v.substr(at, end - at);
      at = end + 1;
      const size_t eq = rule.rfind('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == rule.size())
        fail_input("command line", "--override-tensor", fmt::format("'{}' is not PATTERN=BUFFER_TYPE (e.g. exps=CPU)", rule));
      TensorOverride o{rule.substr(0, eq), -1};
      try {
        (void)std::regex(o.pattern);
      } catch (const std::regex_error&) {
        fail_input("command line", "--override-tensor", fmt::format("'{}' is not a valid regular expression", o.pattern));
      }
      const std::string buft = rule.substr(eq + 1);
      const auto dev = parse_device_name(buft);
      if (buft.rfind("CPU", 0) == 0) o.device = -1;
      else if (dev && dev->number < n_gpus) o.device = dev->number;
      else fail_input("command line", "--override-tensor", fmt::format("buffer type '{}' is not CPU or a device of the {} GPUs", buft, n_gpus));
      s.overrides.push_back(std::move(o));
    }
  }
}
}  // namespace

const std::vector<std::string_view>& llamacpp_flags() {
  static const std::vector<std::string_view> v = [] {
    std::vector<std::string_view> o(std::begin(kModelled), std::end(kModelled));
    o.insert(o.end(), std::begin(kNoMemoryEffect), std::end(kNoMemoryEffect));
    for (const auto& [f, what] : kUnmodelled) o.push_back(f);
    return o;
  }();
  return v;
}

namespace {
int build_of(const EngineVersion& v) {
  if (v.form == EngineVersion::Form::Dated) return build_for_date(v.date);
  return v.form == EngineVersion::Form::Build ? v.build : 0;  // 0: the newest build's defaults
}
}  // namespace

int parse_build(const std::string& version) { return build_of(parse_engine_version(EngineKind::LlamaCpp, version)); }

// --mmproj FILE: the projector's type as its file name says (mmproj-BF16.gguf, mmproj-model-f16.gguf,
// mmproj-Q8_0.gguf); F16, the usual conversion, when the name does not say.
static ServerSettings::Mmproj parse_mmproj(const Deployment& d, std::vector<std::string>& notes) {
  ServerSettings::Mmproj m;
  const std::string* file = d.flag("--mmproj");
  if (!file) return m;
  m.on = true;
  m.offload = !d.flag("--no-mmproj-offload");
  std::string up;
  for (char ch : *file) up += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  static constexpr std::pair<std::string_view, double> kTypes[] = {{"BF16", 2.0}, {"F32", 4.0}, {"Q8_0", 34.0 / 32}, {"Q6_K", 210.0 / 256},
                                                                   {"Q5_K", 176.0 / 256}, {"Q4_K", 144.0 / 256}, {"Q4_0", 18.0 / 32}, {"F16", 2.0}};
  bool named = false;
  for (const auto& [t, b] : kTypes)
    if (!named && up.find(t) != std::string::npos) m.type = std::string(t), m.bytes_per_param = b, named = true;
  if (!named) notes.push_back(fmt::format("--mmproj {}: its type is not in the file name: F16 assumed", *file));
  return m;
}

ServerSettings parse_server_settings(const Deployment& d, int n_layer) {
  ServerSettings s;
  if (d.par.tp > 1 || d.par.pp > 1 || d.par.dp > 1 || d.par.ep > 1 || d.par.dp_attention)
    fail_input("command line", "--tp", "llama.cpp has no tensor / pipeline / data / expert parallel sizes: it splits layers over --gpus N (--split-mode layer|row)");
  const EngineVersion version = parse_engine_version(EngineKind::LlamaCpp, d.engine_version);
  s.build = build_of(version);
  if (version.form == EngineVersion::Form::Dated) {
    const int ymd = version.date;
    const std::string date = fmt::format("{:04}-{:02}-{:02}", ymd / 10000, ymd / 100 % 100, ymd % 100);
    s.notes.push_back(s.build > 0 ? fmt::format("a build dated {}: read as b{}, the build released then (INFERRED from release dates, build_dates.cpp)",
                                                date, s.build)
                                  : fmt::format("a build dated {}: after the last release date known, so the newest rules", date));
  }
  s.mmproj = parse_mmproj(d, s.notes);
  const BuildDefaults def = defaults_for(s.build);
  for (const auto& [k, v] : d.flags) {
    const auto known = llamacpp_flags();
    if (std::find(known.begin(), known.end(), k) == known.end())
      fail_input("command line", k, "not a llama-server flag headroom knows" + did_you_mean_hint(k, known));
    if (std::find(std::begin(kNoMemoryEffect), std::end(kNoMemoryEffect), k) != std::end(kNoMemoryEffect))
      s.notes.push_back(fmt::format("{}: no effect on memory", k));
    for (const auto& [f, what] : kUnmodelled)
      if (f == k) s.notes.push_back(fmt::format("{} {}: not modelled ({}); the forecast is as without it", k, v, what));
  }
  const std::string* ngl = d.flag("--n-gpu-layers") ? d.flag("--n-gpu-layers") : d.flag("--gpu-layers");
  // -ngl auto / -1 is llama_model_default_params' value: --fit still chooses the layers (common/fit.cpp
  // compares with the default); any other value, "all" included, is the user's.
  s.ngl_given = ngl != nullptr && *ngl != "auto" && *ngl != "-1";
  if (ngl && (*ngl == "all" || *ngl == "auto" || *ngl == "-1")) {
    s.n_gpu_layers = n_layer + 1;
    s.ngl_as_given = *ngl == "all" ? -2 : -1;
  } else if (ngl) {
    s.ngl_as_given = int_flag(d, d.flag("--n-gpu-layers") ? "--n-gpu-layers" : "--gpu-layers", 0, 100000);
    s.n_gpu_layers = static_cast<int>(std::min<int64_t>(s.ngl_as_given, n_layer + 1));
  } else {
    // Metal builds offloaded every layer by default long before the others did
    // (llama_model_default_params: "#ifdef GGML_USE_METAL ... n_gpu_layers = 999").
    s.n_gpu_layers = def.ngl_all || d.gpu.vendor == "apple" ? n_layer + 1 : 0;
  }
  if (const std::string* sm = d.flag("--split-mode")) {
    if (*sm == "layer") s.split = SplitMode::Layer;
    else if (*sm == "row") s.split = SplitMode::Row;
    else if (*sm == "none") s.split = SplitMode::None;
    else fail_input("command line", "--split-mode", fmt::format("'{}' is not none, layer or row", *sm));
  }
  if (const std::string* ts = d.flag("--tensor-split")) s.tensor_split = tensor_split(*ts, d.gpus);
  if (int64_t mg = int_flag(d, "--main-gpu", 0, d.gpus - 1); mg >= 0) s.main_gpu = static_cast<int>(mg);
  s.fa = flash_attn(d, def.fa);
  s.no_kv_offload = d.flag("--no-kv-offload") != nullptr;
  s.no_mmap = d.flag("--no-mmap") != nullptr;
  s.cpu_moe = d.flag("--cpu-moe") != nullptr;
  if (int64_t n = int_flag(d, "--n-cpu-moe", 0, 100000); n >= 0) s.n_cpu_moe = static_cast<int>(n);
  overrides(d, d.gpus, s);

  KvSettings& kv = s.kv;
  kv.build = s.build;
  kv.ctx_size = std::max<int64_t>(0, int_flag(d, "--ctx-size", 0, int64_t{1} << 32));
  kv.n_parallel = static_cast<int>(int_flag(d, "--parallel", -1, 4096));
  if (kv.n_parallel == 0) fail_input("command line", "--parallel", "0 slots: llama-server needs at least 1 (-1 = auto)");
  kv.kv_unified = d.flag("--kv-unified") != nullptr;
  kv.swa_full = d.flag("--swa-full") != nullptr;
  kv.n_batch = def.n_batch;
  kv.n_ubatch = def.n_ubatch;
  if (int64_t b = int_flag(d, "--batch-size", 1, 1 << 24); b > 0) kv.n_batch = b;
  if (int64_t ub = int_flag(d, "--ubatch-size", 1, 1 << 24); ub > 0) kv.n_ubatch = ub;
  if (!has(Rule::MicroBatches, s.build)) kv.n_ubatch = kv.n_batch;
  kv.n_ubatch = std::min(kv.n_ubatch, kv.n_batch);  // llama_context: n_ubatch = min(n_batch, n_ubatch)
  // GUESS: -fa auto resolves to on (CUDA, ROCm, Vulkan and Metal support it for the common head sizes).
  kv.flash_attn = s.fa != FlashAttn::Off;
  kv.type_k = cache_type(d, "--cache-type-k");
  kv.type_v = cache_type(d, "--cache-type-v");
  if (!kv.flash_attn && kv.type_v != gguf::GgmlType::F16 && kv.type_v != gguf::GgmlType::F32 && kv.type_v != gguf::GgmlType::BF16)
    fail_input("command line", "--cache-type-v", "a quantized V cache needs flash attention (-fa on): llama.cpp refuses it otherwise");
  if (const std::string* q = d.flag("--quant")) s.quant = *q;
  s.fit = def.fit;
  if (const std::string* f = d.flag("--fit")) {
    if (*f == "on" || *f == "true") s.fit = true;
    else if (*f == "off") s.fit = false;
    else fail_input("command line", "--fit", fmt::format("'{}' is not on or off", *f));
  }
  if (int64_t t = int_flag(d, "--fit-target", 0, 1 << 20); t >= 0) s.fit_target = t * 1024 * 1024;
  if (int64_t c = int_flag(d, "--fit-ctx", 1, int64_t{1} << 32); c > 0) s.fit_ctx_min = c;
  if (d.flag("--ctx-size") && s.kv.ctx_size == 0 && has(Rule::FitKeepsExplicitCtx0, s.build)) s.fit_ctx_min = INT64_MAX;
  return s;
}

}  // namespace headroom::llamacpp
