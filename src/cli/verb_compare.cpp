// `headroom compare [deployment options] [--engines sglang,vllm,trtllm] [--reference ENGINE] [--json]`:
// (llama.cpp joins with --quant or a .gguf model: the same KV as --ctx-size cells)
// one deployment under several engines side by side (KV tokens, concurrency, headroom,
// verdict), and the value of each engine's memory knob that gives it the reference engine's
// KV capacity (SGLang --mem-fraction-static, vLLM --gpu-memory-utilization, TensorRT-LLM
// --kv_cache_free_gpu_memory_fraction), found by bisection over the engine model itself.
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/verbs.h"
#include "headroom/advise.h"
#include "headroom/calibrate.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/engine_traits.h"
#include "headroom/error.h"
#include "headroom/llamacpp_plan.h"
#include "advise/search.h"
#include "headroom/units.h"

namespace headroom {

namespace {

// The knob compare turns per engine: the fraction of advise's knob table; llama.cpp has no share
// of memory (its KV is --ctx-size cells, same_ctx()).
std::string knob_flag(EngineKind k) { return k == EngineKind::LlamaCpp ? "--ctx-size" : advise::knobs_for(k).fraction; }
const std::vector<std::string_view>& flags_of(EngineKind k) { return traits(k).flags(); }
// One setting the engines spell differently: given in one engine's spelling, it is carried to
// the engines that do not accept that spelling, so the rows compare the same deployment.
struct SharedSetting {
  std::string_view sglang, vllm, trtllm, llamacpp;
};
// llama.cpp: --ctx-size is the cache's cells, the longest request with one slot or a unified
// cache; --parallel its slots; --batch-size the logical batch. Its cache types are not the others'.
constexpr SharedSetting kSharedSettings[] = {
    {"--context-length", "--max-model-len", "--max_seq_len", "--ctx-size"},                    // longest request
    {"--max-running-requests", "--max-num-seqs", "--max_batch_size", "--parallel"},            // requests in flight
    {"--chunked-prefill-size", "--max-num-batched-tokens", "--max_num_tokens", "--batch-size"},  // tokens per forward step
    {"--kv-cache-dtype", "--kv-cache-dtype", "--kv_cache_dtype", ""},
};
std::string_view spelling_in(const SharedSetting& s, EngineKind k) {
  switch (k) {
    case EngineKind::SGLang: return s.sglang;
    case EngineKind::VLLM: return s.vllm;
    case EngineKind::TRTLLM: return s.trtllm;
    case EngineKind::LlamaCpp: return s.llamacpp;
  }
  return {};
}
// The engine's own name for a flag as typed (vLLM also takes --max_model_len, SGLang does not).
std::string own_spelling(EngineKind k, const std::string& flag) { return k == EngineKind::VLLM ? vllm_flag_spelling(flag) : flag; }
bool accepts(EngineKind k, const std::string& flag) {
  const auto& a = flags_of(k);
  return std::find(a.begin(), a.end(), own_spelling(k, flag)) != a.end();
}
// The shared setting `flag` spells in any engine's spelling (vLLM's underscores included), or null.
const SharedSetting* shared_setting_of(const std::string& flag) {
  for (const auto& ss : kSharedSettings)
    if (flag == ss.sglang || flag == ss.trtllm || vllm_flag_spelling(flag) == ss.vllm || (!ss.llamacpp.empty() && flag == ss.llamacpp)) return &ss;
  return nullptr;
}
bool is_kv_dtype(const SharedSetting* ss) { return ss && ss->sglang == "--kv-cache-dtype"; }
// FP8 KV cache by each engine's value names: SGLang has no bare "fp8" (fp8_e4m3 / fp8_e5m2),
// trtllm-serve's kv_cache_dtype has only "fp8" (E4M3); vLLM takes all three.
std::string kv_dtype_for(EngineKind k, const std::string& v) {
  if (k == EngineKind::SGLang && v == "fp8") return "fp8_e4m3";
  if (k == EngineKind::TRTLLM && v == "fp8_e4m3") return "fp8";
  return v;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The weights one GPU holds: the largest per-rank sum of the "weights" stage.
int64_t weights_per_gpu(const Forecast& f) {
  int64_t most = 0;
  for (const auto& r : f.ranks)
    for (const auto& st : r.stages)
      if (st.id == StageId::Weights) {
        int64_t t = 0;
        for (const auto& i : st.items) t += i.bytes;
        most = std::max(most, t);
      }
  return most;
}

struct Row {
  std::string spec;
  Deployment d;
  Forecast f;
  std::string knob_flag, knob_value;
  std::optional<double> same_value;
  int64_t same_tokens = 0;
  std::string same_note;
  std::string unsupported;  // this engine's model of the engine cannot plan this model (the reason)
  bool refused = false;     // ... because the engine refuses one of its flags for this deployment
  // A setting given in another spelling or value name and passed to this engine as `as value`.
  struct Carried {
    std::string given, given_value, as, value;
    std::string text() const { return fmt::format("{} {} as {} {}", given, given_value, as, value); }
  };
  std::vector<Carried> carried;
  std::vector<std::string> carried_texts() const {
    std::vector<std::string> out;
    for (const auto& c : carried) out.push_back(c.text());
    return out;
  }
};

bool usable(const Forecast& f) { return f.verdict == Verdict::Fits || f.verdict == Verdict::AtRisk; }

// llama.cpp's cache is --ctx-size cells, allocated whole: the target's cells if they fit, else the
// most that do (in llama.cpp's 256-cell padding), by bisection.
void same_ctx(Row& r, int64_t target) {
  auto at = [&](int64_t cells) {
    Deployment d = r.d;
    std::erase_if(d.flags, [](const auto& p) { return p.first == "--ctx-size" || p.first == "-c"; });
    d.flags.emplace_back("--ctx-size", std::to_string(cells));
    PlanOptions o;
    o.detail = false;
    return plan(d, o);
  };
  const Forecast full = at(target);
  if (usable(full)) {
    r.same_value = static_cast<double>(target);
    r.same_tokens = full.kv_tokens;
    return;
  }
  int64_t lo = 0, hi = target / 256;
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (usable(at(mid * 256)) ? lo : hi) = mid;
  }
  r.same_note = lo > 0 ? fmt::format("not reachable: the most is --ctx-size {}", lo * 256) : "not reachable: no context fits";
}

}  // namespace

int verb_compare(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom compare --model ID --gpu NAME [--tp N ...] [--engines sglang,vllm,trtllm] [--reference ENGINE]\n"
           "                        [engine flags, each passed to the engines that spell it] [--json]\n"
           "Plans the deployment under each engine and finds each engine's memory-knob value that gives the\n"
           "reference engine's KV capacity (default reference: the first engine listed).\n";
    return kExitOk;
  }
  if (!args.positionals().empty()) fail_input("command line", args.positionals().front(), "unexpected argument for 'headroom compare'");
  // llama.cpp joins the default list where it applies: a GGUF type (--quant) or a GGUF file.
  const std::string model = args.get_or("--model", "");
  const bool gguf = args.has("--quant") || (model.size() > 5 && model.substr(model.size() - 5) == ".gguf");
  std::vector<std::string> specs = split_list(args.get_or("--engines", args.get_or("--engine", gguf ? "sglang,vllm,trtllm,llamacpp" : "sglang,vllm,trtllm")));
  if (specs.empty()) fail_input("command line", "--engines", "no engine given (e.g. --engines sglang,vllm,trtllm)");

  // Common options go to every engine; each engine flag to the engines that accept it.
  const auto& common = common_deployment_options();
  std::vector<std::pair<std::string, std::string>> shared, engine_flags;
  for (const auto& [k, v] : args.options()) {
    if (k == "--engine" || k == "--engines" || k == "--reference" || k == "--json") continue;
    if (std::find(common.begin(), common.end(), k) != common.end()) shared.emplace_back(k, v);
    else engine_flags.emplace_back(k, v);
  }
  // A host profile calibrates the engine it was fitted on; the others keep their estimates.
  const std::string profile = profile_name_from(args);
  const std::string profile_engine = profile.empty() ? "" : load_profile(profile).terms.engine;
  std::vector<Row> rows;
  for (const auto& spec : specs) {
    auto [kind, version] = parse_engine_spec(spec);
    std::vector<std::string> argv{"--engine", spec};
    for (const auto& [k, v] : shared) {
      argv.push_back(k);
      if (!(is_boolean_flag(k) && v == "true")) argv.push_back(v);
    }
    Row r;
    for (const auto& [k, v] : engine_flags) {
      const SharedSetting* ss = shared_setting_of(k);
      // SGLang and vLLM share the name --kv-cache-dtype, not the value names.
      const std::string value = is_kv_dtype(ss) ? kv_dtype_for(kind, v) : v;
      if (accepts(kind, k)) {
        argv.push_back(k);
        if (is_boolean_flag(k) && v == "true") continue;
        if (value != v) r.carried.push_back({k, v, k, value});
        argv.push_back(value);
        continue;
      }
      // Another engine's spelling of a shared setting: carried over unless this engine's own
      // spelling is also on the line, or another engine's was carried first.
      const std::string mine(ss ? spelling_in(*ss, kind) : std::string_view{});
      if (mine.empty()) continue;
      const bool own_given = std::any_of(engine_flags.begin(), engine_flags.end(), [&, kind = kind](const auto& p) { return own_spelling(kind, p.first) == mine; });
      const bool carried_already = std::any_of(r.carried.begin(), r.carried.end(), [&](const Row::Carried& c) { return c.as == mine; });
      if (own_given || carried_already) continue;
      argv.insert(argv.end(), {mine, value});
      r.carried.push_back({k, v, mine, value});
    }
    r.spec = spec;
    r.d = parse_deployment(Args::parse(argv));
    if (!profile.empty() && engine_kind_name(r.d.engine) == profile_engine) attach_profile(args, r.d);
    try {
      r.f = plan(r.d);
    } catch (const InputError& e) {
      // A model one engine's model cannot plan (e.g. vLLM's DeepSeek-V4 KV groups), or an engine flag
      // one engine refuses for this deployment (TensorRT-LLM's --quantization on the PyTorch
      // backend, where vLLM and SGLang quantize online), leaves the others comparable; any other
      // bad input is still the user's to fix (exit 2).
      const bool flag_of_this_engine =
          std::any_of(engine_flags.begin(), engine_flags.end(), [&](const auto& p) { return p.first == e.field(); }) ||
          std::any_of(r.carried.begin(), r.carried.end(), [&](const Row::Carried& c) { return c.as == e.field(); });
      if ((e.field() != "--model" && !flag_of_this_engine) || specs.size() < 2) throw;
      r.unsupported = flag_of_this_engine ? e.field() + " " + e.problem() : e.problem();
      r.refused = flag_of_this_engine;
    }
    r.knob_flag = knob_flag(kind);
    if (const std::string* v = r.f.setting(r.knob_flag)) r.knob_value = *v;
    rows.push_back(std::move(r));
  }
  if (!profile.empty() && std::none_of(rows.begin(), rows.end(), [](const Row& r) { return r.d.calibration != nullptr; }))
    fail_input("--profile", profile, fmt::format("fitted on {} logs, and no compared engine is {}", profile_engine, profile_engine));
  for (const auto& [k, v] : engine_flags) {
    const bool anyone = std::any_of(rows.begin(), rows.end(), [&, &k = k](const Row& r) {
      return accepts(r.d.engine, k) || std::any_of(r.carried.begin(), r.carried.end(), [&](const Row::Carried& c) { return c.given == k; });
    });
    if (!anyone) fail_input("command line", k, "no compared engine accepts this flag");
  }

  if (std::all_of(rows.begin(), rows.end(), [](const Row& r) { return !r.unsupported.empty(); }))
    fail_input("command line", rows.front().refused ? "" : "--model", rows.front().unsupported);
  const auto first_ok = std::find_if(rows.begin(), rows.end(), [](const Row& r) { return r.unsupported.empty(); });
  std::string ref = args.get_or("--reference", first_ok->spec);
  auto ref_it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.spec == ref || std::string(engine_kind_name(r.d.engine)) == ref; });
  if (ref_it == rows.end()) fail_input("command line", "--reference", fmt::format("'{}' is not one of the compared engines", ref));
  if (!ref_it->unsupported.empty()) fail_input("command line", "--reference", fmt::format("{}: {}", ref, ref_it->unsupported));
  int64_t target = ref_it->f.kv_tokens;

  for (auto& r : rows) {
    if (&r == &*ref_it || target <= 0 || !r.unsupported.empty()) continue;
    if (r.d.engine == EngineKind::LlamaCpp) {
      same_ctx(r, target);
      continue;
    }
    const advise::KvReach reach = advise::least_fraction_for_kv(r.d, target);
    if (!reach.found) {
      r.same_note = fmt::format("not reachable: the most is {} tokens at {} {:.2f}", reach.most_tokens, knob_flag(r.d.engine), reach.most_at);
      continue;
    }
    r.same_value = reach.value;
    r.same_tokens = reach.at.kv_tokens;
    if (!usable(reach.at)) r.same_note = fmt::format("forecast at that value: {}", verdict_name(reach.at.verdict));
  }

  if (args.has("--json")) {
    nlohmann::ordered_json j;
    j["reference"] = ref_it->spec;
    j["target_kv_tokens"] = target;
    j["engines"] = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
      if (!r.unsupported.empty()) {
        j["engines"].push_back({{"engine", std::string(engine_kind_name(r.d.engine))}, {"verdict", nullptr}, {"unsupported", r.unsupported},
                                {"refused", r.refused}});
        continue;
      }
      nlohmann::ordered_json e{{"engine", std::string(engine_kind_name(r.d.engine))},
                               {"version", r.f.version},
                               {"verdict", std::string(verdict_name(r.f.verdict))},
                               {"kv_tokens", r.f.kv_tokens},
                               {"context_len", r.f.context_len},
                               {"max_concurrency", r.f.max_concurrency},
                               {"headroom_bytes", r.f.headroom_bytes},
                               {"knob", {{"flag", r.knob_flag}, {"value", r.knob_value}}}};
      if (r.same_value && r.d.engine == EngineKind::LlamaCpp)
        e["same_kv_budget"] = {{"flag", r.knob_flag}, {"value", static_cast<int64_t>(*r.same_value)}, {"kv_tokens", r.same_tokens}};
      else if (r.same_value) e["same_kv_budget"] = {{"flag", r.knob_flag}, {"value", std::round(*r.same_value * 10000) / 10000}, {"kv_tokens", r.same_tokens}};
      else e["same_kv_budget"] = nullptr;
      if (!r.same_note.empty()) e["note"] = r.same_note;
      if (r.f.failure) e["failure"] = r.f.failure->message;
      if (!r.carried.empty()) e["carried_flags"] = r.carried_texts();
      if (!r.f.calibrated_host.empty()) e["calibrated_host"] = r.f.calibrated_host;
      e["weights_per_gpu_bytes"] = weights_per_gpu(r.f);
      e["launch_command"] = launch_command(r.d, r.d.flags);
      j["engines"].push_back(e);
    }
    out << j.dump(2) << "\n";
  } else {
    for (const auto& r : rows)
      if (!r.f.calibrated_host.empty()) out << engine_kind_name(r.d.engine) << ": calibrated (host " << r.f.calibrated_host << ")\n";
    std::string rules;
    bool newest = false;
    for (const auto& r : rows) {
      const std::string v = r.d.engine_version.empty() ? "newest" : r.d.engine_version;
      newest = newest || r.d.engine_version.empty();
      rules += (rules.empty() ? "" : ", ") + std::string(engine_kind_name(r.d.engine)) + " " + v;
    }
    out << fmt::format("{} on {} x {} ({} GiB), tp {} pp {}; rules: {}{}\n\n", rows.front().d.model_spec, rows.front().d.gpus, rows.front().d.gpu.name,
                       gib2(rows.front().d.capacity_bytes), rows.front().d.par.tp, rows.front().d.par.pp, rules,
                       newest ? " (pass --engines NAME@VERSION,... for yours)" : "");
    out << fmt::format("{:<16} {:<8} {:>12} {:>9} {:>12} {:>11} {:>11}  {:<44} {}\n", "engine", "verdict", "KV tokens", "context", "concurrency",
                       "headroom", "weights/GPU", "memory knob in force", "same KV as " + ref_it->spec);
    for (const auto& r : rows) {
      if (!r.unsupported.empty()) {
        out << fmt::format("{:<16} {:<8} {}: {}\n", r.spec, "-", r.refused ? "refused" : "not modelled", r.unsupported);
        continue;
      }
      std::string same = &r == &*ref_it ? "(reference)"
                         : r.same_value ? fmt::format("{} {} -> {} tokens{}", r.knob_flag,
                                                      r.d.engine == EngineKind::LlamaCpp ? fmt::format("{:.0f}", *r.same_value) : fmt::format("{:.4f}", *r.same_value),
                                                      r.same_tokens, r.same_note.empty() ? "" : " (" + r.same_note + ")")
                                        : r.same_note;
      out << fmt::format("{:<16} {:<8} {:>12} {:>9} {:>11.2f}x {:>11} {:>11}  {:<44} {}\n", r.spec, verdict_name(r.f.verdict), r.f.kv_tokens, r.f.context_len,
                         r.f.max_concurrency, human_bytes(r.f.headroom_bytes), human_bytes(weights_per_gpu(r.f)), r.knob_flag + " " + r.knob_value, same);
    }
    for (const auto& r : rows)
      if (r.unsupported.empty()) out << fmt::format("launch ({}): {}\n", r.spec, launch_command(r.d, r.d.flags));
    out << "\nThe knobs mean different things: SGLang's fraction and vLLM's utilization are shares of total memory\n"
           "(weights + KV, resp. the whole instance); TensorRT-LLM's fraction is a share of the memory free after\n"
           "weights and the profiled activation peak.\n";
    if (std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.d.engine == EngineKind::LlamaCpp; }))
      out << "llama.cpp has no share of memory to set: its KV cache is --ctx-size cells, allocated whole, and the rest stays free.\n";
    if (std::any_of(rows.begin(), rows.end(), [](const Row& r) { return !r.carried.empty(); })) {
      out << "\nSettings carried over in each engine's own spelling:\n";
      for (const auto& r : rows)
        if (!r.carried.empty()) out << fmt::format("  {}: {}\n", r.spec, fmt::join(r.carried_texts(), ", "));
    }
    for (const auto& r : rows)
      if (r.f.failure) out << fmt::format("{}: {}\n", r.spec, r.f.failure->message);
  }
  (void)err;
  bool all_ok = std::all_of(rows.begin(), rows.end(), [](const Row& r) { return !r.unsupported.empty() || usable(r.f); });
  return all_ok ? kExitOk : kExitFails;
}

}  // namespace headroom
