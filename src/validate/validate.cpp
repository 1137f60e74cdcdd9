// validate_corpus(): each corpus case -> the CLI arguments it implies -> plan() -> compare
// with the observed figures; metrics as corpus/README.md defines them.
#include "headroom/validate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <regex>

#include "headroom/deployment.h"
#include "headroom/doctor.h"
#include "headroom/logscan.h"
#include "headroom/outcome.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/units.h"
#include "validate/validate_fix_value.h"
#include "validate/validate_llamacpp.h"
#include "validate/validate_metrics.h"
#include "validate/validate_vllm_kv.h"

namespace headroom {

namespace {
using J = nlohmann::ordered_json;

// Environment variables a case's notes record as set for the run ("env NAME=VALUE[, NAME=VALUE]"
// or space-separated, the corpus conversion's wording; "Env" at a sentence start): passed to the
// plan as --env NAME=VALUE.
std::vector<std::string> env_from_notes(const J& c) {
  std::vector<std::string> out;
  if (!c.contains("notes") || !c["notes"].is_string()) return out;
  const std::string notes = c["notes"].get<std::string>();
  static const std::regex run(R"(\b[Ee]nv ((?:[A-Z][A-Z0-9_]*=[^\s,;]+[ ,]*)+))");
  static const std::regex one(R"(([A-Z][A-Z0-9_]*)=([^\s,;]+))");
  for (std::sregex_iterator it(notes.begin(), notes.end(), run), end; it != end; ++it) {
    const std::string group = (*it)[1].str();
    for (std::sregex_iterator jt(group.begin(), group.end(), one); jt != end; ++jt) {
      std::string value = (*jt)[2].str();
      // The sentence's punctuation: a full stop, or the ')' closing "(env NAME=VALUE)".
      while (!value.empty() && (value.back() == '.' || value.back() == ')')) value.pop_back();
      if (!value.empty()) out.push_back((*jt)[1].str() + "=" + value);
    }
  }
  return out;
}

}  // namespace

// What a vLLM log states about the environment it ran in, which no flag of the case carries:
// FlashInfer's top-p/top-k sampler in use (topk_topp_sampler.py logs "Using FlashInfer for top-p &
// top-k sampling", so the install had FlashInfer: VLLM_USE_FLASHINFER_SAMPLER=1 plans that path)
// a TP group spread over nodes (custom_all_reduce.py: "Custom allreduce is disabled because this
// process group spans across nodes": --interconnect network) and GPUs without peer access ("...
// because your platform lacks GPU P2P capability or P2P test failed": --interconnect pcie, cards
// on PCIe, not NVLink). A variable the notes set wins. A line a post wrapped at a fixed width
// ("Custom allre\nduce is disabled") is read with the wrap undone.
std::vector<std::string> vllm_environment_from_log(const std::string& raw, const std::vector<std::string>& env_given) {
  std::vector<std::string> out;
  std::string unwrapped = raw;
  unwrapped.erase(std::remove(unwrapped.begin(), unwrapped.end(), '\n'), unwrapped.end());
  auto says = [&](const char* line) { return raw.find(line) != std::string::npos || unwrapped.find(line) != std::string::npos; };
  const bool sampler_given = std::any_of(env_given.begin(), env_given.end(),
                                         [](const std::string& e) { return e.rfind("VLLM_USE_FLASHINFER_SAMPLER=", 0) == 0; });
  if (!sampler_given && says("Using FlashInfer for top-p & top-k sampling")) out.insert(out.end(), {"--env", "VLLM_USE_FLASHINFER_SAMPLER=1"});
  if (says("Custom allreduce is disabled because this process group spans across nodes"))
    out.insert(out.end(), {"--interconnect", "network"});
  else if (says("Custom allreduce is disabled because your platform lacks GPU P2P capability"))
    out.insert(out.end(), {"--interconnect", "pcie"});
  // The torch.compile cache the start found: loaded ("Directly load AOT compilation from path",
  // "Directly load the compiled graph(s)") -> warm; compiled ("Compiling a graph for ...", or
  // "torch.compile took N s in total" with N >= 5 s) -> cold. The logs read took 0.18 and 0.30 s on a
  // hit, 14 to 41 s compiling (extra xvllm-111..115, xvllm-041); 5 s is a cut between them, not a figure.
  static const std::regex took(R"(torch\.compile (?:took|takes) ([0-9]+(?:\.[0-9]+)?) ?s)");
  std::smatch m;
  if (says("Directly load AOT compilation") || says("Directly load the compiled graph"))
    out.insert(out.end(), {"--compile-cache", "warm"});
  else if (says("Compiling a graph for") || (std::regex_search(raw, m, took) && std::strtod(m[1].str().c_str(), nullptr) >= 5))
    out.insert(out.end(), {"--compile-cache", "cold"});
  // The model runner the log names: V1's gpu_model_runner.py lines and no "Using V2 Model Runner"
  // say the V1 runner ran, whatever the version's default (untagged builds get the newest rules).
  const bool runner_given = std::any_of(env_given.begin(), env_given.end(),
                                        [](const std::string& e) { return e.rfind("VLLM_USE_V2_MODEL_RUNNER=", 0) == 0; });
  if (!runner_given && says("[gpu_model_runner.py:") && !says("Using V2 Model Runner"))
    out.insert(out.end(), {"--env", "VLLM_USE_V2_MODEL_RUNNER=0"});
  return out;
}

namespace {

// A record whose engine_version names no release (null, "unknown", "unknown@2024", "latest@..."):
// the version the log prints ("Initializing a V1 LLM engine (v0.10.1.1)", "vLLM API server version
// ..."), else the release whose rules its own line formats belong to (logscan's version hint, e.g.
// V0's pre-0.6.5 "Memory profiling results: ... initial_memory_usage=" line), with a note saying
// which. Either is closer to the code that ran than a date bracket. Untagged source builds
// ("0.1.dev...") tell nothing and are not used.
std::optional<std::pair<std::string, std::string>> version_from_log(const std::optional<std::string>& version, const std::string& raw,
                                                                    const std::string& id) {
  auto head = version ? version->substr(0, version->find('@')) : std::string();
  if (version && *version != "null" && head != "unknown" && head != "latest") return std::nullopt;
  if (raw.empty()) return std::nullopt;
  LogScan scan = scan_log_text(raw, id);
  const std::string& v = scan.engine_version;
  // A release number as the engines print them (0.10.1.1, 0.6.3.post1, 1.1.0rc3); anything else
  // (a garbled or foreign stamp) is not used, so the case keeps the record's own version.
  static const std::regex release(R"([0-9]\.[0-9]{1,2}(\.[0-9]{1,2})?([.+a-z][0-9a-z.+]*)?)");
  if (std::regex_match(v, release) && v.rfind("0.1.dev", 0) != 0) return std::pair{v, fmt::format("version {} as the log prints it", v)};
  if (!scan.engine_version_hint.empty())
    return std::pair{scan.engine_version_hint, fmt::format("{} rules INFERRED from the log's {}", scan.engine_version_hint, scan.engine_version_hint_why)};
  return std::nullopt;
}

std::optional<double> num(const J& o, const char* k) {
  if (!o.is_object() || !o.contains(k) || o[k].is_null()) return std::nullopt;
  if (o[k].is_number()) return o[k].get<double>();
  // A number written as a string ("tp": "4", "gpu_total_gib": "79.19"): the same number.
  if (o[k].is_string()) {
    const std::string& t = o[k].get_ref<const std::string&>();
    try {
      size_t used = 0;
      double x = std::stod(t, &used);
      if (used == t.size() && std::isfinite(x)) return x;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

// A case whose parallelism field is null but whose flags carry it (the launch command was
// recorded, the field was not filled): the flag's value, as the engine would read it.
void parallelism_from_flags(J& c) {
  if (!c.contains("flags") || !c["flags"].is_object()) return;
  static const std::pair<const char*, std::vector<const char*>> kFields[] = {
      {"tp", {"--tensor-parallel-size", "--tp-size", "--tp", "--tp_size", "--tensor_parallel_size"}},
      {"pp", {"--pipeline-parallel-size", "--pp-size", "--pp", "--pp_size", "--pipeline_parallel_size"}},
      {"dp", {"--data-parallel-size", "--dp-size", "--dp"}},
      {"ep", {"--ep-size", "--ep", "--ep_size", "--moe_expert_parallel_size", "--expert-parallel-size"}},
  };
  for (const auto& [field, flags] : kFields) {
    if (num(c, field)) continue;
    for (const char* f : flags)
      if (auto v = num(c["flags"], f); v && *v >= 1 && *v <= 4096 && *v == std::floor(*v)) {
        c[field] = static_cast<int64_t>(*v);
        break;
      }
  }
}
std::optional<std::string> str(const J& o, const char* k) {
  if (!o.is_object() || !o.contains(k) || !o[k].is_string()) return std::nullopt;
  return o[k].get<std::string>();
}

// Predicted outcome in the corpus vocabulary.
Outcome outcome_of(const Forecast& f) {
  switch (f.verdict) {
    case Verdict::Fits:
    case Verdict::AtRisk: return Outcome::Ok;
    case Verdict::Refused: return Outcome::RefusedKv;
    case Verdict::Oom: break;
  }
  const StageId s = f.failure ? f.failure->stage : StageId::Runtime;
  if (s == StageId::Weights || s == StageId::Init || s == StageId::Draft) return Outcome::OomWeights;
  if (s == StageId::KvPool) return Outcome::OomKv;
  if (s == StageId::CudaGraph || s == StageId::Workspaces) return Outcome::OomGraph;
  if (s == StageId::Warmup) return Outcome::OomWarmup;
  return Outcome::OomRuntime;
}

int64_t stage_sum(const RankForecast& r, StageId id) {
  int64_t t = 0;
  for (const auto& s : r.stages)
    if (s.id == id)
      for (const auto& i : s.items) t += i.bytes;
  return t;
}
std::optional<int64_t> free_after(const RankForecast& r, StageId id) {
  for (const auto& s : r.stages)
    if (s.id == id) return s.free_bytes_after;
  return std::nullopt;
}

// The number that follows `key` in `text` ("... is 190272." -> 190272; "(22.5 GiB" -> 22.5).
std::optional<double> find_number_after(const std::string& text, std::string_view key) {
  size_t at = text.find(key);
  if (at == std::string::npos) return std::nullopt;
  size_t i = at + key.size(), j = i;
  while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
  while (j > i && text[j - 1] == '.') --j;  // a sentence's full stop
  if (j == i) return std::nullopt;
  try {
    return std::stod(text.substr(i, j - i));
  } catch (...) {
    return std::nullopt;
  }
}

// The value a knob had in the failed run when neither the case nor the log's flags give it: the
// figure the engine printed for it (vLLM's refusal "max seq len (L)", SGLang "context_len=N",
// "mem_fraction_static=F", vLLM's "(u, R GiB)" utilization, ...).
std::optional<std::string> logged_knob_value(const LogScan& scan, const std::string& flag) {
  const auto& s = scan.summary;
  auto as_int = [](const std::optional<LogFigure>& f) -> std::optional<std::string> {
    if (!f || f->value <= 0) return std::nullopt;
    return std::to_string(f->value);
  };
  auto as_ratio = [](const std::optional<LogRatio>& r) -> std::optional<std::string> {
    if (!r || r->value <= 0) return std::nullopt;
    return fmt::format("{:g}", r->value);
  };
  if (flag == "--max-model-len" || flag == "--context-length" || flag == "--max_seq_len") return as_int(s.context_len);
  if (flag == "--max-running-requests" || flag == "--max_batch_size") return as_int(s.max_running_requests);
  if (flag == "--chunked-prefill-size") return as_int(s.chunked_prefill_size);
  if (flag == "--mem-fraction-static" || flag == "free_gpu_memory_fraction") return as_ratio(s.mem_fraction_static);
  if (flag == "--gpu-memory-utilization") return as_ratio(s.gpu_memory_utilization);
  return std::nullopt;
}

// Stage a crash outcome points at (CONTRACT doctor stages).
std::string stage_of_outcome(std::optional<Outcome> o) {
  if (o == Outcome::OomWeights) return "weights";
  if (o == Outcome::OomKv || o == Outcome::RefusedKv) return "kv_pool";
  if (o == Outcome::OomGraph) return "cuda_graph";
  if (o == Outcome::OomWarmup) return "warmup";
  if (o == Outcome::OomRuntime) return "runtime";
  return "";
}

// +1 raise, -1 lower, 0 set (booleans / non-numeric values).
int direction(const std::string& from, const std::string& to) {
  try {
    double a = std::stod(from), b = std::stod(to);
    return b > a ? 1 : (b < a ? -1 : 0);
  } catch (...) {
    return 0;
  }
}

// The GPU's capacity when the case gives neither a GPU nor gpu_total_gib but its log prints the
// total: PyTorch's OOM text "GPU 0 has a total capacity of T GiB", vLLM's "Free memory on device
// (F/T GiB)", TensorRT-LLM's "device total memory T GiB" and "Total GPU memory (GiB): T", or vLLM's
// "Requested memory: U (util), R GiB" (T = R / U, to about +-0.01 GiB from the rounding).
std::optional<std::pair<double, std::string>> total_from_raw(const std::string& raw) {
  if (raw.empty()) return std::nullopt;
  struct TotalLine {
    std::regex re;
    const char* what;
  };
  static const TotalLine direct[] = {
      {std::regex(R"(total capacity of ([0-9]+(?:\.[0-9]+)?) GiB)"), "'total capacity of' (PyTorch OOM)"},
      {std::regex(R"(Free memory on device \([0-9.]+/([0-9]+(?:\.[0-9]+)?) GiB\))"), "'Free memory on device' line"},
      {std::regex(R"(device total memory ([0-9]+(?:\.[0-9]+)?) GiB)"), "'device total memory' line"},
      {std::regex(R"(Total GPU memory \(GiB\): ([0-9]+(?:\.[0-9]+)?))"), "'Total GPU memory (GiB)' line"},
  };
  std::smatch m;
  for (const auto& line : direct)
    if (std::regex_search(raw, m, line.re)) {
      double t = std::stod(m[1].str());
      if (t > 0.5 && t < 4096) return std::make_pair(t, std::string(line.what));
    }
  static const std::regex requested(R"(Requested memory: ([0-9]+(?:\.[0-9]+)?) \(util\), ([0-9]+(?:\.[0-9]+)?) GiB)");
  if (std::regex_search(raw, m, requested)) {
    double u = std::stod(m[1].str()), r = std::stod(m[2].str());
    if (u > 0.01 && u <= 1.0 && r > 0.1) return std::make_pair(std::round(r / u * 100.0) / 100.0, std::string("'Requested memory' line (requested / util)"));
  }
  return std::nullopt;
}

// A GPU the case does not name, from the first free-memory figure its log prints (SGLang "Load
// weight begin. avail mem=X GB", vLLM "Initial free memory X GiB"): the catalog GPUs whose
// capacity is 0.3 to 6 GiB above it (GUESS bracket for what the CUDA context and NCCL / custom
// all-reduce buffers take before that line: 0.61 GiB context measured on H200, SGLang prints "Init
// torch distributed ends. mem usage=1.96 GB" at TP8 on H200). Inferred only when every candidate has the same architecture and capacities within 1 %,
// so the forecast does not depend on which one it was.
const GpuSpec* gpu_from_free_memory(double free_gib) {
  const GpuSpec* pick = nullptr;
  for (const auto& g : gpu_catalog()) {
    double gap = to_gib(g.capacity_bytes) - free_gib;
    if (gap < 0.3 || gap > 6.0) continue;
    if (pick && (pick->arch != g.arch ||
                 std::abs(static_cast<double>(pick->capacity_bytes - g.capacity_bytes)) > 0.01 * static_cast<double>(pick->capacity_bytes)))
      return nullptr;
    if (!pick) pick = &g;
  }
  return pick;
}
}  // namespace

J validate_corpus(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail_input(path, "", "cannot open the corpus file");
  Metric kv, weights, post_weights, graph;
  graph.loo = true;  // an estimated term: its leave-one-out figures too (issue 28)
  // vLLM "... the estimated maximum model length is M": the forecast's M (refusals it predicts)
  // and M recomputed from the log's own "available KV cache memory (X GiB)".
  Metric max_len, max_len_given;
  // kv_tokens_given_memory: |err| of the point value (SGLang: the recomputed pool; vLLM: the
  // tokens at the printed KV GiB figure).
  Metric given_err;
  Agreement outcome, given_memory, doctor_stage, doctor_fix, doctor_fix_value, doctor_decided;
  LlamacppMetrics llama;
  int doctor_guessed = 0;
  J rows = J::array();
  int cases = 0, covered = 0;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    J c;
    try {
      c = J::parse(line);
    } catch (const std::exception& e) {
      fail_input(path, fmt::format("line {}", lineno), "not valid JSON");
    }
    if (!c.is_object()) fail_input(path, fmt::format("line {}", lineno), "a case must be a JSON object");
    parallelism_from_flags(c);
    ++cases;
    if (str(c, "engine") == "llamacpp") {
      J r = validate_llamacpp_case(c, llama);
      if (r["covered"].get<bool>()) ++covered;
      rows.push_back(std::move(r));
      continue;
    }
    J row{{"id", str(c, "id").value_or(fmt::format("line-{}", lineno))}, {"covered", false}};
    const J obs = c.contains("observed") && c["observed"].is_object() ? c["observed"] : J::object();
    const auto oo = str(obs, "outcome");
    const std::optional<Outcome> observed = oo ? parse_outcome(*oo) : std::nullopt;
    std::vector<std::string> args;
    std::string why;
    auto engine = str(c, "engine").value_or("");
    const std::string raw = str(c, "raw").value_or("");
    auto version = str(c, "engine_version");
    std::string version_note;
    if (auto lv = version_from_log(version, raw, str(c, "id").value_or(""))) {
      version = lv->first;
      version_note = lv->second;
    }
    auto model = str(c, "model");
    auto gpu = str(c, "gpu");
    auto total = num(c, "gpu_total_gib");
    std::string gpu_note;
    if (!gpu && !total)
      if (auto t = total_from_raw(raw)) {
        total = t->first;
        gpu_note = fmt::format("capacity {:.2f} GiB read from the log's {}", t->first, t->second);
      }
    if (!gpu && !total)
      if (auto f = num(obs, "init_avail_gib"))
        if (const GpuSpec* g = gpu_from_free_memory(*f)) {
          gpu = g->name;
          gpu_note = fmt::format("GPU inferred: {} ({:.2f} GiB) from the log's {:.2f} GiB free at start", g->name, to_gib(g->capacity_bytes), *f);
        }
    if (engine.empty()) why = "engine unknown";
    else if (!model) why = "model unknown";
    else if (!gpu && !total) why = "GPU unknown";
    else if (!num(c, "tp") && num(c, "gpus").value_or(0) != 1) why = "parallelism unknown";
    // The deployment's arguments without the GPU (engine, model, parallelism, flags) and the
    // GPU's: plan() needs both; vLLM's KV layout given the logged memory needs only the first.
    std::vector<std::string> base;
    std::vector<std::string> gpu_args;
    bool gpu_known = false;
    // One GPU leaves no parallelism to know: tp = 1 (the flag is then simply not passed).
    if (!engine.empty() && model && (num(c, "tp") || num(c, "gpus").value_or(0) == 1)) {
      base = {"--engine", version && *version != "null" ? engine + "@" + *version : engine, "--model", *model};
      auto add_int = [&](const char* key, const char* flag) {
        if (auto v = num(c, key); v && *v > 1) base.insert(base.end(), {flag, std::to_string(static_cast<int64_t>(*v))});
      };
      add_int("tp", "--tp");
      add_int("pp", "--pp");
      add_int("dp", "--dp");
      add_int("ep", "--ep");
      if (c.contains("enable_dp_attention") && c["enable_dp_attention"].is_boolean() && c["enable_dp_attention"].get<bool>())
        base.push_back("--enable-dp-attention");
      if (c.contains("flags") && c["flags"].is_object())
        for (const auto& [k, v] : c["flags"].items()) {
          static const char* skip[] = {"--model-path", "--model", "--tp-size", "--tensor-parallel-size", "--dp-size",
                                       "--data-parallel-size", "--ep-size", "--pp-size", "--pipeline-parallel-size",
                                       "--enable-dp-attention"};
          if (std::find(std::begin(skip), std::end(skip), k) != std::end(skip)) continue;
          if (v.is_null()) continue;  // a flag recorded without a value: the engine's default
          std::string val = v.is_string() ? v.get<std::string>() : v.dump();
          if (is_boolean_flag(k)) {
            if (val == "true") base.push_back(k);
          } else {
            base.insert(base.end(), {k, val});
          }
        }
      const std::vector<std::string> env_given = env_from_notes(c);
      for (const auto& e : env_given) base.insert(base.end(), {"--env", e});
      if (engine == "vllm")
        for (const auto& a : vllm_environment_from_log(raw, env_given)) base.push_back(a);
      if (gpu && find_gpu(*gpu)) {
        gpu_args = {"--gpu", *gpu};
        if (total) gpu_args.insert(gpu_args.end(), {"--gpu-memory", fmt::format("{}GiB", *total)});
        gpu_known = true;
      } else if (total) {
        gpu_args = {"--gpu-memory", fmt::format("{}GiB", *total)};
        gpu_known = true;
      }
    }
    if (why.empty()) {
      if (gpu_known) {
        args = base;
        args.insert(args.end(), gpu_args.begin(), gpu_args.end());
      } else {
        why = "GPU '" + *gpu + "' not in the catalog";
      }
    }
    if (why.empty()) {
      try {
        Deployment d = parse_deployment(Args::parse(args));
        PlanOptions opt;
        opt.detail = false;
        Forecast f = plan(d, opt);
        ++covered;
        row["covered"] = true;
        J pred = J::object();
        pred["kv_tokens"] = f.kv_tokens;
        const Outcome predicted = outcome_of(f);
        pred["outcome"] = name(predicted);
        if (!f.ranks.empty()) {
          const RankForecast& r0 = f.ranks.front();
          pred["weights_gib"] = std::round(to_gib(stage_sum(r0, StageId::Weights)) * 100) / 100;
          if (auto a = free_after(r0, StageId::Weights)) pred["post_weights_avail_gib"] = std::round(to_gib(*a) * 100) / 100;
          int64_t g = stage_sum(r0, StageId::CudaGraph);
          if (g > 0) pred["graph_gib"] = std::round(to_gib(g) * 100) / 100;
          if (auto o = num(obs, "weights_gib")) weights.add(to_gib(stage_sum(r0, StageId::Weights)), *o);
          if (auto o = num(obs, "post_weights_avail_gib"); o && free_after(r0, StageId::Weights)) post_weights.add(to_gib(*free_after(r0, StageId::Weights)), *o);
          if (auto o = num(obs, "graph_gib"); o && g > 0) graph.add(to_gib(g), *o);
        }
        if (auto o = num(obs, "kv_tokens"); o && f.verdict != Verdict::Refused) kv.add(static_cast<double>(f.kv_tokens), *o);
        if (oo && observed != Outcome::OtherError) {
          ++outcome.n;
          if (observed == predicted) ++outcome.agree;
        }
        // kv_tokens_given_memory: SGLang's pool recomputed from the log's own free memory.
        auto pre = num(obs, "init_avail_gib"), post = num(obs, "post_weights_avail_gib"), okv = num(obs, "kv_tokens");
        if (d.engine == EngineKind::SGLang && pre && post && okv && !d.flag("--max-total-tokens")) {
          PlanOptions o2;
          o2.detail = false;
          o2.pre_load_free_bytes = gib_to_bytes(*pre);
          o2.post_load_free_bytes = gib_to_bytes(*post);
          Forecast g = plan(d, o2);
          int64_t page = 1;
          if (const std::string* p = g.setting("--page-size")) page = std::max<int64_t>(1, std::stoll(*p));
          // SGLang prints both figures to 0.01 GB (GiB): the pool grows with the free memory after
          // the weights and shrinks with the free memory before them, so the logged count agrees
          // when it lies between the pools of the rounding's two extreme corners (one page either way).
          auto corner = [&](double pre_gib, double post_gib) {
            PlanOptions oc = o2;
            oc.pre_load_free_bytes = gib_to_bytes(pre_gib);
            oc.post_load_free_bytes = gib_to_bytes(post_gib);
            return plan(d, oc).kv_tokens;
          };
          int64_t low = corner(*pre + 0.005, *post - 0.005), high = corner(*pre - 0.005, *post + 0.005);
          int64_t logged = static_cast<int64_t>(*okv);
          bool exact = logged >= std::min(low, high) - page && logged <= std::max(low, high) + page;
          ++given_memory.n;
          if (exact) ++given_memory.agree;
          given_err.add(static_cast<double>(g.kv_tokens), *okv);
          pred["kv_tokens_given_memory"] = g.kv_tokens;
          pred["kv_tokens_given_memory_range"] = {std::min(low, high), std::max(low, high)};
        }
        // vLLM's estimated maximum model length (kv_cache_utils.py estimate_max_model_len).
        if (d.engine == EngineKind::VLLM) {
          const std::string text = raw + "\n" + str(obs, "error_message").value_or("");
          auto logged = find_number_after(text, "estimated maximum model length is ");
          if (logged) {
            if (f.failure) {
              if (auto m = find_number_after(f.failure->message, "estimated maximum model length is ")) {
                pred["max_model_len"] = static_cast<int64_t>(*m);
                max_len.add(*m, *logged);
              }
            }
            // Given memory: vLLM checks against exactly --kv-cache-memory-bytes, so the logged
            // available figure (2 decimals) replayed through it isolates the page arithmetic.
            if (auto avail = find_number_after(text, "available KV cache memory (")) {
              try {
                auto a2 = args;
                a2.insert(a2.end(), {"--kv-cache-memory-bytes", std::to_string(gib_to_bytes(*avail))});
                PlanOptions o3;
                o3.detail = false;
                Forecast g = plan(parse_deployment(Args::parse(a2)), o3);
                if (g.failure)
                  if (auto m = find_number_after(g.failure->message, "estimated maximum model length is ")) {
                    pred["max_model_len_given_memory"] = static_cast<int64_t>(*m);
                    max_len_given.add(*m, *logged);
                  }
              } catch (const InputError&) {
                // versions before 0.10.2 have no --kv-cache-memory-bytes: nothing to replay
              }
            }
          }
        }
        row["predicted"] = pred;
        row["plan_args"] = args;  // what `headroom plan` was given, to replay the case
        row["verdict"] = verdict_name(f.verdict);
      } catch (const InputError& e) {
        why = e.what();
      }
    }
    // kv_tokens_given_memory, vLLM: the logged tokens recomputed from the logged "Available KV
    // cache memory" through the KV layout alone, so it needs no GPU: a case whose GPU is unknown
    // is tried on GPUs that select each batch default and MLA block size (the union is kept).
    if (engine == "vllm" && !base.empty()) {
      auto kv_gib = num(obs, "kv_gib");
      auto kv_tok = num(obs, "kv_tokens");
      if (kv_gib && kv_tok && *kv_gib > 0) {
        std::vector<std::vector<std::string>> variants;
        if (gpu_known) variants.push_back(gpu_args);
        else
          for (const char* g : {"h100", "l40s", "b200", "a100-80gb"}) variants.push_back({"--gpu", g});
        VllmKvGiven r = vllm_kv_given_memory(*kv_gib, static_cast<int64_t>(*kv_tok), base, variants);
        if (r.counted) {
          ++given_memory.n;
          if (r.agree) ++given_memory.agree;
          given_err.add(static_cast<double>(r.point), *kv_tok);
        }
        row["kv_given_memory"] = std::move(r.row);
      }
    }
    // doctor on the case's own log: the stage it names, and whether its fixes move the flags the
    // thread's resolution moved, in the same direction.
    const std::string want_stage = stage_of_outcome(observed);
    if (!raw.empty() && !want_stage.empty()) {
      try {
        LogScan scan = scan_log_text(raw, row["id"].get<std::string>());
        std::vector<std::string> hints;
        if (why.empty()) {
          hints = args;
        } else {  // what the user would add: the engine, the model if loadable, the flags they passed
          hints = {"--engine", engine.empty() ? "sglang" : engine};
          if (c.contains("flags") && c["flags"].is_object())
            for (const auto& [k, v] : c["flags"].items()) {
              if (k == "--model-path" || k == "--model" || v.is_null()) continue;
              std::string val = v.is_string() ? v.get<std::string>() : v.dump();
              if (is_boolean_flag(k)) { if (val == "true") hints.push_back(k); }
              else hints.insert(hints.end(), {k, val});
            }
          for (const auto& e : env_from_notes(c)) hints.insert(hints.end(), {"--env", e});
        }
        Diagnosis dx = diagnose(scan, Args::parse(hints));
        ++doctor_stage.n;
        if (dx.stage == want_stage) ++doctor_stage.agree;
        // A stage the doctor guessed (stage_basis "guess": nothing in the log places the failure)
        // counts above; the stages the log or its figures placed are also scored apart, so that a
        // lucky guess and evidence can be told apart.
        if (dx.stage_basis == StageBasis::Guess) ++doctor_guessed;
        else {
          ++doctor_decided.n;
          if (dx.stage == want_stage) ++doctor_decided.agree;
        }
        row["doctor"] = J{{"stage", dx.stage}, {"stage_basis", name(dx.stage_basis)}, {"want_stage", want_stage}, {"cause", dx.cause ? name(*dx.cause) : ""}};
        J fx = J::array();
        for (const auto& f : dx.fixes) fx.push_back(f.flag + "=" + f.value);
        row["doctor"]["fixes"] = std::move(fx);
        const J fix = c.contains("fix") && c["fix"].is_object() && c["fix"].contains("flags") ? c["fix"]["flags"] : J();
        if (fix.is_object() && !fix.empty()) {
          ++doctor_fix.n;
          bool agree = false;
          for (const auto& [flag, v] : fix.items()) {
            std::string to = v.is_string() ? v.get<std::string>() : v.dump();
            std::string from = c.contains("flags") && c["flags"].contains(flag) && c["flags"][flag].is_string() ? c["flags"][flag].get<std::string>() : "";
            for (const auto& f : dx.fixes) {
              if (f.flag != flag) continue;
              if (from.empty() || direction(from, to) == direction(from, f.value)) agree = true;
            }
          }
          if (agree) ++doctor_fix.agree;
          row["doctor"]["fix_agrees"] = agree;
          // doctor_fix_value: the value of our first fix, when the thread's fix names that flag,
          // within the range from the failed value to the working one (validate_fix_value.h).
          // The failed value: the case's flags, else what the log itself shows was set.
          if (!dx.fixes.empty() && fix.contains(dx.fixes.front().flag)) {
            const auto& first = dx.fixes.front();
            const J& w = fix[first.flag];
            std::string working = w.is_string() ? w.get<std::string>() : w.dump();
            std::string failed;
            if (c.contains("flags") && c["flags"].is_object() && c["flags"].contains(first.flag) && c["flags"][first.flag].is_string())
              failed = c["flags"][first.flag].get<std::string>();
            else if (auto it = scan.flags.find(first.flag); it != scan.flags.end())
              failed = it->second;
            else if (auto lv = logged_knob_value(scan, first.flag))
              failed = *lv;
            else
              failed = first.from;  // the engine default the doctor assumed was in force
            if (auto v = judge_fix_value(first.flag, first.value, failed, working)) {
              ++doctor_fix_value.n;
              if (v->agree) ++doctor_fix_value.agree;
              row["doctor"]["fix_value"] = J{{"flag", first.flag}, {"ours", first.value}, {"failed", failed}, {"working", working},
                                             {"agrees", v->agree}, {"range", v->why}};
            }
          }
        }
      } catch (const InputError& e) {
        row["doctor"] = J{{"error", e.what()}};
      }
    }
    if (!why.empty()) row["reason"] = why;
    else if (!gpu_note.empty() || !version_note.empty())
      row["note"] = gpu_note + (gpu_note.empty() || version_note.empty() ? "" : "; ") + version_note;
    J o = J::object();
    for (const char* k : {"kv_tokens", "weights_gib", "post_weights_avail_gib", "graph_gib", "outcome"})
      if (obs.contains(k) && !obs[k].is_null()) o[k] = obs[k];
    row["observed"] = o;
    rows.push_back(std::move(row));
  }
  J out{{"corpus", path},
           {"cases", cases},
           {"covered", covered},
           {"kv_tokens", kv.json()},
           {"weights_gib", weights.json()},
           {"post_weights_avail", post_weights.json()},
           {"graph_gib", graph.json()},
           {"max_model_len", max_len.json()},
           {"max_model_len_given_memory", max_len_given.json()},
           {"outcome", outcome.json()},
           {"kv_tokens_given_memory", given_memory.json()},
           {"kv_tokens_given_memory_err", given_err.json()},
           {"doctor_stage", doctor_stage.json()},
           {"doctor_stage_decided", doctor_decided.json()},
           {"doctor_stage_guessed", doctor_guessed},
           {"doctor_fix_direction", doctor_fix.json()},
           {"doctor_fix_value", doctor_fix_value.json()},
           {"per_case", std::move(rows)}};
  if (llama.seen) {  // llama.cpp cases: per-device buffers (corpus/README.md "llama.cpp cases")
    out["model_buffer_mib"] = llama.model_buffer.json();
    out["kv_size_mib"] = llama.kv_size.json();
    out["compute_buffer_mib"] = llama.compute_buffer.json();
    Agreement all = outcome;
    all.n += llama.outcome.n;
    all.agree += llama.outcome.agree;
    out["outcome"] = all.json();
    Agreement st = doctor_stage, dec = doctor_decided;
    st.n += llama.doctor_stage.n;
    st.agree += llama.doctor_stage.agree;
    dec.n += llama.doctor_decided.n;
    dec.agree += llama.doctor_decided.agree;
    out["doctor_stage"] = st.json();
    out["doctor_stage_decided"] = dec.json();
    out["doctor_stage_guessed"] = doctor_guessed + llama.doctor_guessed;
  }
  return out;
}

}  // namespace headroom
