// diagnose(): LogScan + the user's deployment options -> Diagnosis.
//  1. rebuild the deployment from what the log says (server args, capture list, OOM capacity),
//     filling gaps from the command line;
//  2. classify the failure (stage from the log reader; cause from the numbers);
//  3. calibrate the forecast with the log's own figures and search the engine's knobs for the
//     fix (doctor_fixes.cpp); list what will not help, and why.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>

#include "doctor/doctor_internal.h"
#include "headroom/calibrate.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/units.h"

namespace headroom {

namespace {

const std::vector<std::string_view>& engine_flags(EngineKind k) {
  switch (k) {
    case EngineKind::VLLM: return vllm_flags();
    case EngineKind::TRTLLM: return trtllm_flags();
    default: return sglang_flags();
  }
}

bool loadable_model(const std::string& spec) {
  try {
    load_model(spec);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

std::string fmt_gib(int64_t b) { return fmt::format("{:.2f} GiB", to_gib(b)); }
int stage_order(const std::string& s);  // below
Outcome outcome_for_stage(const std::string& stage, bool refusal);  // below

}  // namespace

// The deployment arguments the log implies, with the user's options on top.
RebuiltArgs rebuild_args(const LogScan& scan, const Args& user) {
  RebuiltArgs r;
  std::vector<std::string>& a = r.args;
  // Engine.
  std::string engine = user.get_or("--engine", "");
  // A bare --engine NAME names the engine, not a version: the log's printed version stays.
  if (!engine.empty() && engine.find('@') == std::string::npos && !scan.engine_version.empty() &&
      engine == log_engine_name(scan.engine)) {
    engine += "@" + scan.engine_version;
    r.notes.push_back(fmt::format("the log's version {} is used (--engine {} names no version; give {}@X to plan another)", scan.engine_version,
                                 user.get_or("--engine", ""), user.get_or("--engine", "")));
  }
  if (engine.empty()) {
    switch (scan.engine) {
      case LogEngine::VLLM: engine = "vllm"; break;
      case LogEngine::TRTLLM: engine = "trtllm"; break;
      case LogEngine::SGLang: engine = "sglang"; break;
      default:
        engine = "sglang";
        r.gaps.push_back("the log does not say which engine wrote it: assuming SGLang (give --engine)");
    }
    if (!scan.engine_version.empty()) {
      engine += "@" + scan.engine_version;
    } else if (!scan.engine_version_hint.empty()) {
      engine += "@" + scan.engine_version_hint;
      r.gaps.push_back(fmt::format("the log does not print the engine's version: {} rules INFERRED from {}", scan.engine_version_hint,
                                   scan.engine_version_hint_why));
    }
  }
  a.insert(a.end(), {"--engine", engine});
  EngineKind kind = parse_engine_spec(engine).first;
  r.engine = kind;

  // Model.
  std::string model = user.get_or("--model", "");
  if (model.empty()) {
    for (const char* k : {"--model-path", "--model"}) {
      auto it = scan.flags.find(k);
      if (it != scan.flags.end() && loadable_model(it->second)) {
        model = it->second;
        break;
      }
    }
  }
  if (model.empty()) r.gaps.push_back("model unknown (the log names none headroom can read): give --model");
  else a.insert(a.end(), {"--model", model});

  // GPU: the user's, else the capacity printed by an OOM report or the engine.
  if (auto g = user.get("--gpu")) a.insert(a.end(), {"--gpu", *g});
  if (auto m = user.get("--gpu-memory")) a.insert(a.end(), {"--gpu-memory", *m});
  if (!user.get("--gpu") && !user.get("--gpu-memory")) {
    int64_t total = -1;
    for (const auto& o : scan.ooms)
      if (o.total > 0) { total = o.total; break; }
    if (total <= 0 && scan.summary.total) total = scan.summary.total->value;
    if (total > 0) {
      const GpuSpec* best = nullptr;
      for (const auto& g : gpu_catalog())
        if (std::llabs(g.capacity_bytes - total) <= 12 * MiB) { best = &g; break; }
      if (best) a.insert(a.end(), {"--gpu", best->name});
      a.insert(a.end(), {"--gpu-memory", std::to_string(total)});
    } else {
      r.gaps.push_back("GPU unknown (no capacity in the log): give --gpu or --gpu-memory");
    }
  }
  // Parallelism, then engine flags from the log, then the user's flags (they win).
  const auto& known = engine_flags(kind);
  const auto& common = common_deployment_options();
  std::vector<std::pair<std::string, std::string>> flags;
  for (const auto& [k, v] : scan.flags) {
    if (k.rfind("--env:", 0) == 0) {  // set before the launch command (log_args.cpp)
      flags.emplace_back("--env", k.substr(6) + "=" + v);
      continue;
    }
    bool is_common = std::find(common.begin(), common.end(), k) != common.end();
    bool is_known = std::find(known.begin(), known.end(), k) != known.end();
    if (k == "--model" || k == "--model-path" || k == "--gpu") continue;
    if (!is_common && !is_known) continue;
    if (v == "false" || v == "None" || v.empty()) continue;
    flags.emplace_back(k, v);
  }
  // The capture list SGLang printed fixes the largest captured batch.
  if (kind == EngineKind::SGLang && !scan.summary.graph_bs.empty() && !scan.flags.count("--cuda-graph-max-bs") &&
      !scan.flags.count("--cuda-graph-bs") && !user.has("--cuda-graph-max-bs"))
    flags.emplace_back("--cuda-graph-max-bs", std::to_string(*std::max_element(scan.summary.graph_bs.begin(), scan.summary.graph_bs.end())));
  for (const auto& a : scan.arg_sets)
    if (a.source == "command" || a.source == "vllm_non_default")
      for (const auto& [k, v] : a.flags) r.user_set.insert(k);
  for (const auto& [k, v] : user.options()) {
    if (k == "--engine" || k == "--model" || k == "--gpu" || k == "--gpu-memory" || k == "--json" || k == "--brief") continue;
    r.user_set.insert(k);
    // --env repeats (one variable each; the last value of a name counts): appended, never replaced.
    if (k != "--env") flags.erase(std::remove_if(flags.begin(), flags.end(), [&k = k](const auto& f) { return f.first == k; }), flags.end());
    flags.emplace_back(k, v);
  }
  for (const auto& [k, v] : flags) {
    if (is_boolean_flag(k)) {
      if (v == "true" || v == "True" || v == "1") a.push_back(k);
    } else {
      a.insert(a.end(), {k, v});
    }
  }
  r.has_model = !model.empty();
  return r;
}

Diagnosis diagnose(const LogScan& scan, const Args& args) {
  // llama.cpp's reader when the log reads as llama.cpp, unless the user named another engine (what
  // the user gives explicitly wins over the log).
  const bool named = args.has("--engine");
  const bool named_llama = named && parse_engine_spec(args.get_or("--engine", "")).first == EngineKind::LlamaCpp;
  if (named_llama || (scan.engine == LogEngine::LlamaCpp && !named)) return diagnose_llamacpp(scan, args);
  Diagnosis dx;
  dx.engine = std::string(log_engine_name(scan.engine));
  RebuiltArgs rebuilt = rebuild_args(scan, args);
  dx.gaps = rebuilt.gaps;
  dx.gaps.insert(dx.gaps.end(), rebuilt.notes.begin(), rebuilt.notes.end());
  if (dx.engine == "unknown") dx.engine = std::string(engine_kind_name(rebuilt.engine));

  // The log as the user completes it: their flags win over the log's.
  LogScan sc = scan;
  for (const auto& [k, v] : args.options())
    if (k.rfind("--", 0) == 0 && k != "--json" && k != "--brief") sc.flags[k] = v;
  dx.rank = scan.failure_device;

  // The deployment, when the log and the options are enough to plan it.
  std::optional<Deployment> dep;
  // Plannable when every gap is only the engine assumption.
  const bool only_engine_assumed = std::all_of(rebuilt.gaps.begin(), rebuilt.gaps.end(), [](const std::string& g) {
    return g.find("assuming SGLang") != std::string::npos;
  });
  if (rebuilt.has_model && only_engine_assumed) {
    try {
      dep = parse_deployment(Args::parse(rebuilt.args));
    } catch (const InputError& e) {
      dx.gaps.push_back(std::string("could not rebuild the deployment: ") + e.what());
    }
  }
  // --profile: the forecasts use the host's terms (exit 2 on a mismatch). Only when given: validate
  // diagnoses corpus logs, which no user's HEADROOM_PROFILE describes (verb_doctor turns it into --profile).
  if (dep && args.has("--profile")) attach_profile(args, *dep);

  // SGLang's fraction neither given nor printed: the value whose forecast reproduces the free
  // memory the log printed (the planner would otherwise assume the engine's default).
  if (dep && dep->engine == EngineKind::SGLang && !sc.flags.count("--mem-fraction-static") && !sc.summary.mem_fraction_static)
    if (auto f = infer_sglang_fraction(sc, *dep)) {
      const auto& at = sc.summary.graph_begin_avail ? sc.summary.graph_begin_avail : sc.summary.pool_end_avail;
      dep->flags.emplace_back("--mem-fraction-static", fmt::format("{:.3f}", *f));
      sc.flags["--mem-fraction-static"] = fmt::format("{:.3f}", *f);
      dx.gaps.push_back(fmt::format("--mem-fraction-static is not in the log: {:.3f} is the value at which the forecast has the {} free "
                                    "the log printed at line {} (give --mem-fraction-static to set it)",
                                    *f, fmt_gib(at->value), at->line));
    }

  // Stage: the reader's; else where the failing rank's startup stopped; else, for a bare OOM
  // report, the stage the forecast fails at.
  std::optional<Forecast> forecast;
  if (dep) try { forecast = plan(*dep); } catch (const InputError&) {}
  sc.outcome = effective_outcome(sc, forecast, dx.gaps);
  for (const auto& r : sc.ranks)
    if (stage_order(r.stage) > stage_order(dx.reached_stage)) dx.reached_stage = r.stage;
  // A log that stops inside a stage reached that stage (vLLM's post-weights profile run is
  // labelled "warmup", which orders after capture: the furthest label is not how far it got).
  if (sc.outcome == Outcome::NoError && !sc.failure_stage.empty()) dx.reached_stage = sc.failure_stage;
  // "none": a healthy start. Any failure gets a CONTRACT stage: the log's, else the OOM figures'
  // against the forecast or the engine's budget, else a guess from how far the log got.
  std::string placed_why;
  if (!sc.outcome || sc.outcome == Outcome::Ok) dx.stage = "none";
  else {
    const bool bare_oom = sc.outcome == Outcome::Oom;
    placed_why = place_failure(sc, dep, forecast, dx);
    // Figures that place an OOM make it that stage's OOM (its cause and fixes follow); a guessed
    // stage keeps the outcome "oom", whose fixes are conditional.
    if ((bare_oom || sc.failure_basis == StageBasis::Numbers) && dx.stage_basis == StageBasis::Numbers) sc.outcome = outcome_for_stage(dx.stage, false);
  }
  classify(sc, dep, dx);
  if (!placed_why.empty() && dx.explanation.find(placed_why) == std::string::npos) dx.explanation += " " + placed_why;
  collect_evidence(sc, dx);
  if (dep) plan_fixes(sc, *dep, rebuilt.user_set, dx);
  else static_fixes(sc, dx);
  return dx;
}

std::string doctor_gib(int64_t b) { return fmt_gib(b); }

namespace {
int stage_order(const std::string& s) {
  static const char* order[] = {"init", "weights", "kv_pool", "cuda_graph", "warmup", "ready", "runtime"};
  for (int i = 0; i < 7; ++i) if (s == order[i]) return i;
  return -1;
}
Outcome outcome_for_stage(const std::string& stage, bool refusal) {
  if (stage == "init" || stage == "weights") return Outcome::OomWeights;
  if (stage == "kv_pool") return refusal ? Outcome::RefusedKv : Outcome::OomKv;
  if (stage == "cuda_graph") return Outcome::OomGraph;
  if (stage == "warmup") return Outcome::OomWarmup;
  return Outcome::OomRuntime;
}
}  // namespace

// The outcome the diagnosis works from, and sc.failure_stage filled in when the reader left it
// open: a failure line without a stage takes the stage the startup had reached; a log that
// stops mid-startup without an error takes that stage (said in gaps); a bare OOM report with
// no startup lines takes the stage the forecast fails at.
std::optional<Outcome> effective_outcome(LogScan& sc, const std::optional<Forecast>& forecast, std::vector<std::string>& gaps) {
  const bool oom = !sc.ooms.empty();
  bool refusal = false, fatal = false;
  for (const auto& e : sc.errors) {
    if (e.kind.rfind("sglang_not_enough", 0) == 0 || e.kind == "sglang_weights_leave_no_kv" || e.kind == "vllm_no_cache_blocks" ||
        e.kind == "vllm_max_seq_len" || e.kind == "vllm_autofit_failed" || e.kind == "trtllm_kv_too_small")
      refusal = true;
    // a build tool's error line is a hint about a failure's kind, not a failure of its own
    if (e.kind != "trtllm_window_reduced" && e.kind != "tool_error") fatal = true;
  }
  std::string reached;
  int64_t last_stage_line = 0;
  for (const auto& r : sc.ranks) {
    if (stage_order(r.stage) > stage_order(reached)) reached = r.stage;
    last_stage_line = std::max(last_stage_line, r.stage_line);
  }
  // The last traceback whose frames (or the call its last printed source line makes) name a
  // stage, when it comes after every stage line: the more direct evidence of where it failed.
  const LogTraceback* tb = nullptr;
  for (const auto& t : sc.tracebacks)
    if (!t.stage.empty() && t.line >= last_stage_line) tb = &t;
  // The stage a rank is inside when its lines end: its last stage line began a stage, and no
  // rank printed a line of a later stage after it (lines of earlier stages from lagging ranks,
  // or Ray's deduplicated repeats printed after the fact, do not end it). Unlike the furthest
  // stage reached, this does not confuse vLLM's profile run after the weights ("warmup") with
  // the warm-up after capture.
  std::string open_stage;
  int64_t open_line = 0;
  for (const auto& r : sc.ranks) {
    if (!r.stage_open || r.stage == "ready" || r.stage == "runtime") continue;
    bool ended = false;
    for (const auto& o : sc.ranks) ended = ended || (o.stage_line > r.stage_line && stage_order(o.stage) > stage_order(r.stage));
    if (ended) continue;
    if (open_stage.empty() || stage_order(r.stage) > stage_order(open_stage) || (r.stage == open_stage && r.stage_line > open_line)) {
      open_stage = r.stage;
      open_line = r.stage_line;
    }
  }
  if (!sc.failure_stage.empty() && sc.outcome != Outcome::OtherError) {
    if (!sc.outcome) return outcome_for_stage(sc.failure_stage, refusal);
    return sc.outcome;
  }
  // The engine's wrapper message ("Scheduler hit an exception:", "EngineCore failed to start.")
  // with its traceback cut before the exception: the failure's stage is in the frames, what it
  // was is not in the log (it may well have been an OOM), so it is not called "not an OOM".
  const bool wrapper_only = !sc.errors.empty() && std::all_of(sc.errors.begin(), sc.errors.end(), [](const LogError& e) {
    return e.kind == "scheduler_exception" || e.kind == "vllm_engine_failed" || e.kind == "error_line";
  });
  const LogTraceback* last_tb = sc.tracebacks.empty() ? nullptr : &sc.tracebacks.back();
  if (sc.outcome == Outcome::OtherError && !oom && !refusal && wrapper_only && last_tb && last_tb->exception.empty() &&
      last_tb->line >= sc.errors.front().line) {
    if (!last_tb->stage.empty()) sc.failure_stage = last_tb->stage;
    // vLLM's "EngineCore failed to start" after its post-weights profile line ("Model loading
    // took", "torch.compile takes") and before any KV line: the last stage line's label
    // ("warmup") does not say whether the profile run or the KV sizing after it failed; the
    // placement guesses (doctor_place.cpp).
    else if (sc.failure_stage == "warmup" && !sc.summary.kv_tokens && !sc.summary.kv_bytes && !sc.summary.graph_bytes &&
             std::any_of(sc.errors.begin(), sc.errors.end(), [](const LogError& e) { return e.kind == "vllm_engine_failed"; }))
      sc.failure_stage.clear();
    sc.failure_line = last_tb->line;
    gaps.push_back(fmt::format("the traceback at line {} ends before its exception line: what failed{} is not in the log", last_tb->line,
                               sc.failure_stage.empty() ? std::string() : " in " + sc.failure_stage));
    return Outcome::NoError;
  }
  if (sc.outcome == Outcome::OtherError && !oom && !refusal) {
    if (reached == "kv_pool" && fatal && std::any_of(sc.errors.begin(), sc.errors.end(), [](const LogError& e) { return e.kind == "vllm_engine_failed"; })) {
      sc.failure_stage = "kv_pool";  // the engine died right after sizing its KV cache
      gaps.push_back("the log names no cause for the failure; it came right after the KV cache was sized");
      return Outcome::RefusedKv;
    }
    return sc.outcome;
  }
  if (sc.outcome == Outcome::Ok || (reached == "ready" && !oom && !fatal)) return sc.outcome.value_or(Outcome::Ok);
  if (oom || refusal || fatal) {
    if (tb && (reached.empty() || reached == "ready" || stage_order(tb->stage) >= stage_order(reached))) {
      sc.failure_stage = tb->stage;
    } else if (!open_stage.empty()) {
      sc.failure_stage = open_stage;  // the error came while that stage was running
    } else if (!reached.empty() && reached != "ready") {
      sc.failure_stage = reached;
    } else if (oom && reached.empty()) {
      // A bare OOM report: no startup line, no traceback frame and no wording that places it.
      // place_failure (doctor_place.cpp) places it by its figures against the forecast or the
      // engine's budget, else guesses, and says which.
      sc.failure_stage.clear();
      gaps.push_back(forecast ? "the log is a bare out-of-memory report with no startup lines: its stage comes from its figures"
                              : "the log is a bare out-of-memory report with no startup lines: give --model and --gpu so its figures "
                                "can be held against the forecast");
      return Outcome::Oom;
    } else if (forecast && forecast->failure) {
      sc.failure_stage = name(forecast->failure->stage);
      sc.failure_basis = StageBasis::Guess;
      gaps.push_back("the log shows no startup lines; the stage is the one the forecast fails at");
    } else if (!reached.empty()) {
      sc.failure_stage = "runtime";
    } else if (sc.outcome) {
      return sc.outcome;
    } else {
      // An error line (a worker's ERROR line, a failure message) with nothing that places it and
      // no forecast: a failure, not a healthy start; where, the log does not say.
      gaps.push_back("the log holds an error line but no startup line, traceback frame or wording that places it in a stage");
      return Outcome::NoError;
    }
    return outcome_for_stage(sc.failure_stage, refusal);
  }
  // No error line and no finished startup: an excerpt cut mid-startup, or a process stopped from
  // outside (the host's OOM killer, an NCCL abort, a scheduler). Where the log stops *inside* a
  // stage (a traceback whose exception line is missing, or the furthest rank's last stage line is
  // a begin line with no end line after it), the process was in that stage when it stopped: that
  // stage is reported. Where it stops between two stages, nothing places a failure.
  std::string inside = open_stage;
  int64_t inside_line = open_line;
  if (tb && tb->exception.empty()) {
    inside = tb->stage;
    inside_line = tb->line;
  }
  if (!inside.empty()) {
    sc.failure_stage = inside;
    sc.failure_line = inside_line;
    gaps.push_back(fmt::format("the log ends inside {} (line {}) without an error line: the process stopped there, the log does not "
                               "say why (include the lines after it, or the error)",
                               inside, inside_line));
    return Outcome::NoError;
  }
  if (!reached.empty() && reached != "ready" && reached != "runtime") {
    gaps.push_back("the log ends during " + reached + " without an error line and without a finished startup: no failure is "
                   "placed (include the lines after it, or the error)");
    return Outcome::NoError;
  }
  if (!sc.outcome && !sc.tracebacks.empty()) {
    // A traceback whose frames place it nowhere and no exception line: something failed, where
    // is not in the log; it is not a healthy start.
    gaps.push_back("the log holds a traceback without its exception line and no frame that places it in a stage");
    return Outcome::NoError;
  }
  return sc.outcome;
}

}  // namespace headroom
