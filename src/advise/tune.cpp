// tune(): the engine flags that maximise KV capacity while every startup stage keeps the safety
// margin at the unfavourable end of the estimated terms, honouring the targets.
//   step 1: the context target sets the engine's context flag; --keep-free lowers the capacity.
//   step 2: bisection of the primary knob (SGLang --mem-fraction-static, vLLM
//           --gpu-memory-utilization or --kv-cache-memory-bytes, TensorRT-LLM
//           free_gpu_memory_fraction) with the other knobs as given or defaulted.
//   step 3: if that is not safe or misses the targets, turn the other knobs one more at a time
//           (cap running requests at the target, halve the CUDA-graph batch cap, halve the
//           prefill chunk, FP8 KV cache), each with its own bisection; the first that serves
//           the goal wins. With detail the whole ladder is kept as the alternatives table.
//   step 4: the trade-off table around the recommendation, and the forecast there.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "advise/search.h"
#include "advise/tune_llamacpp.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

using namespace advise;

namespace {

const char* kSrc = "command line";

std::optional<int64_t> setting_int(const Forecast& f, const std::string& key) {
  if (key.empty()) return std::nullopt;
  const std::string* v = f.setting(key);
  if (!v) return std::nullopt;
  try {
    size_t pos = 0;
    long long x = std::stoll(*v, &pos);
    if (pos == v->size()) return x;
  } catch (...) {
  }
  return std::nullopt;
}

std::optional<double> parse_number(const std::string* v) {
  if (!v) return std::nullopt;
  try {
    size_t pos = 0;
    double x = std::stod(*v, &pos);
    if (pos == v->size() && std::isfinite(x)) return x;
  } catch (...) {
  }
  return std::nullopt;
}

const std::vector<std::string_view>& engine_flags(EngineKind e) {
  switch (e) {
    case EngineKind::VLLM: return vllm_flags();
    case EngineKind::TRTLLM: return trtllm_flags();
    default: return sglang_flags();
  }
}

// One step of the ladder: a knob and the value it takes.
struct Step {
  std::string flag, value;
};

// The other knobs, least invasive first, each only when not fixed and when it lowers memory.
std::vector<Step> ladder(const Deployment& d, const Forecast& base, const TuneGoal& g, const EngineKnobs& k) {
  std::vector<Step> steps;
  const int groups = kv_groups(d);
  const int64_t per_group = g.target_concurrency ? (*g.target_concurrency + groups - 1) / groups : 0;
  if (g.target_concurrency && !k.max_running.empty() && !is_fixed(g, k.max_running)) {
    // SGLang divides --max-running-requests by the DP-attention size; replicas each take theirs.
    int64_t want = (d.engine == EngineKind::SGLang && d.par.dp_attention) ? *g.target_concurrency : per_group;
    auto cur = setting_int(base, k.max_running);
    if (!cur || *cur > want) steps.push_back({k.max_running, std::to_string(want)});
  }
  if (!k.graph_bs.empty() && !is_fixed(g, k.graph_bs)) {
    const int64_t floor_bs = std::max<int64_t>(per_group, 8);  // below 8 graphs cost little (guess)
    if (auto cur = setting_int(base, k.graph_bs); cur && *cur > 0)
      for (int64_t bs = *cur / 2, n = 0; bs >= floor_bs && n < 4; bs /= 2, ++n) steps.push_back({k.graph_bs, std::to_string(bs)});
  }
  if (!k.prefill_tokens.empty() && !is_fixed(g, k.prefill_tokens)) {
    int64_t floor_tokens = 2048;  // smaller chunks make long prompts slow (a judgement, not a limit)
    if (d.engine == EngineKind::VLLM)
      if (auto seqs = setting_int(base, k.max_running)) floor_tokens = std::max(floor_tokens, *seqs);
    if (auto cur = setting_int(base, k.prefill_tokens); cur && *cur > 0)
      for (int64_t t = *cur / 2, n = 0; t >= floor_tokens && n < 2; t /= 2, ++n) steps.push_back({k.prefill_tokens, std::to_string(t)});
  }
  if (!k.kv_dtype.empty() && !is_fixed(g, k.kv_dtype) && d.gpu.fp8) {
    const std::string* cur = base.setting(k.kv_dtype);
    bool narrow = cur && (cur->find("fp8") != std::string::npos || cur->find("fp4") != std::string::npos || cur->find("int8") != std::string::npos);
    if (!narrow) steps.push_back({k.kv_dtype, k.fp8_kv});
  }
  return steps;
}

TradeoffRow row_of(const Point& pt, const Primary& p, const Deployment& d, std::string label, FlagList changes, const TuneGoal& g) {
  TradeoffRow r;
  r.shortfall = shortfall(pt, d, p, g);
  r.knob = p.flag;
  r.value = p.format(pt.x);
  r.label = std::move(label);
  r.changes = std::move(changes);
  r.verdict = pt.verdict;
  r.safe = pt.safe;
  r.kv_tokens = pt.kv_tokens;
  r.concurrency = pt.context > 0 ? static_cast<double>(kv_groups(d)) * static_cast<double>(pt.kv_tokens) / static_cast<double>(pt.context) : 0;
  r.capture_free_worst = pt.capture_free_worst;
  r.min_free_worst = pt.min_free_worst;
  r.limit = pt.limit;
  return r;
}

void validate_goal(const Deployment& d, const TuneGoal& g, const EngineKnobs& k) {
  if (g.margin_bytes && *g.margin_bytes < 0) fail_input(kSrc, "--margin", "must not be negative");
  if (g.keep_free_bytes < 0) fail_input(kSrc, "--keep-free", "must not be negative");
  if (d.capacity_bytes - g.keep_free_bytes < 256 * MiB)
    fail_input(kSrc, "--keep-free", fmt::format("{} leaves less than 256 MiB of the {} GiB GPU", human_bytes(g.keep_free_bytes), gib2(d.capacity_bytes)));
  const auto& known = engine_flags(d.engine);
  for (const auto& f : g.fixed)
    if (std::find(known.begin(), known.end(), f) == known.end())
      fail_input(kSrc, "--fix", fmt::format("'{}' is not a {} flag headroom knows", f, engine_kind_name(d.engine)));
  if (g.target_context) {
    if (k.context.empty()) fail_input(kSrc, "--target-context", fmt::format("the {} engine model has no context-length flag", engine_kind_name(d.engine)));
    const std::string* v = d.flag(k.context);
    if (is_fixed(g, k.context) && v && *v != std::to_string(*g.target_context))
      fail_input(kSrc, "--target-context", fmt::format("{} contradicts --fix {} ({} {})", *g.target_context, k.context, k.context, *v));
    // Every engine: a target beyond the context the engine derives for the model is a
    // contradiction, not a setting to plan (SGLang and vLLM refuse such a context flag unless
    // the environment overrides it).
    if (auto lim = context_limit(d); lim && *g.target_context > lim->tokens)
      fail_input(kSrc, "--target-context", fmt::format("{} is longer than {} supports ({} {})", *g.target_context, d.model_spec, lim->rule, lim->tokens));
  }
  if (g.target_concurrency && !k.max_running.empty() && is_fixed(g, k.max_running))
    if (auto v = parse_number(d.flag(k.max_running)); v && static_cast<int64_t>(*v) * kv_groups(d) < *g.target_concurrency &&
                                                       !(d.engine == EngineKind::SGLang && d.par.dp_attention && static_cast<int64_t>(*v) >= *g.target_concurrency))
      fail_input(kSrc, "--target-concurrency", fmt::format("{} contradicts --fix {} ({} {})", *g.target_concurrency, k.max_running, k.max_running, *v));
}

}  // namespace

TuneResult tune(const Deployment& d0, const TuneGoal& g) {
  if (d0.engine == EngineKind::LlamaCpp) return tune_llamacpp(d0, g);
  const EngineKnobs& k = knobs_for(d0.engine);
  if (k.fraction.empty()) fail_input(kSrc, "--engine", fmt::format("the {} engine model names no memory-fraction flag to tune", engine_kind_name(d0.engine)));
  validate_goal(d0, g, k);

  TuneResult res;
  res.margin_bytes = g.margin_bytes.value_or(kDefaultMarginBytes);
  res.margin_default = !g.margin_bytes;
  res.keep_free_bytes = g.keep_free_bytes;
  res.target_concurrency = g.target_concurrency;
  const int64_t margin = res.margin_bytes;

  Deployment d = d0;
  d.capacity_bytes -= g.keep_free_bytes;
  if (g.target_context) set_flag(d, k.context, std::to_string(*g.target_context));
  Primary p = primary_for(d, g, d0.capacity_bytes);
  res.primary_knob = p.flag;
  const bool primary_fixed = is_fixed(g, p.flag);
  if (primary_fixed) {
    // The primary knob stays as given (or at the engine's default): judge that one value.
    PlanOptions opt;
    opt.detail = false;
    Forecast f = plan(d, opt);
    ++res.plans;
    auto x = parse_number(f.setting(p.flag));
    if (!x) fail_input(kSrc, "--fix", fmt::format("{} has no value in force to keep", p.flag));
    p.lo = p.hi = *x;
    p.step = 0;
  }

  // step 2: the primary knob alone.
  FlagList chosen_changes;
  Memo memo;
  // Without detail (fit) every point is planned once: the memo would only cost its keys.
  PrimaryResult best = search_primary(d, p, margin, &res.plans, g.detail ? &memo : nullptr);
  Deployment chosen = d;
  std::string why = shortfall(best.best, d, p, g);
  bool ok = best.found && why.empty();

  // step 3: the ladder of other knobs (tune only; fit keeps to the primary knob).
  if (g.detail) {
    Forecast base;
    PlanOptions quick;
    quick.detail = false;
    evaluate(d, p, best.best.x, margin, quick, &res.plans, &base);
    if (g.detail) res.alternatives.push_back(row_of(best.best, p, d, "", {}, g));
    Deployment step_d = d;
    FlagList changes;
    std::optional<double> known_ok;  // each step only lowers memory use: start from the last answer
    if (best.found) known_ok = best.best.x;
    for (const Step& s : ladder(d, base, g, k)) {
      const Deployment before = step_d;
      const FlagList changes_before = changes;
      set_flag(step_d, s.flag, s.value);
      auto same = std::find_if(changes.begin(), changes.end(), [&](const auto& c) { return c.first == s.flag; });
      if (same != changes.end()) same->second = s.value;
      else changes.emplace_back(s.flag, s.value);
      PrimaryResult r;
      try {
        r = search_primary(step_d, p, margin, &res.plans, &memo, known_ok);
      } catch (const InputError& e) {
        // The engine rejects this combination (e.g. vLLM's batched tokens below max_num_seqs): skip it.
        res.notes.push_back(fmt::format("not tried: {} {} ({})", s.flag, s.value, e.problem()));
        step_d = before;
        changes = changes_before;
        continue;
      }
      if (r.found) known_ok = r.best.x;
      std::string w = shortfall(r.best, step_d, p, g);
      if (g.detail) res.alternatives.push_back(row_of(r.best, p, step_d, "", changes, g));
      if (!ok && r.found && w.empty()) {
        ok = true;
        best = r;
        chosen = step_d;
        chosen_changes = changes;
        why.clear();
      } else if (!ok && r.found && !best.found) {
        best = r;  // a safe point at least, to show
        chosen = step_d;
        chosen_changes = changes;
        why = w;
      }
    }
    if (ok && g.detail)
      for (auto& a : res.alternatives)
        if (a.changes == chosen_changes) a.label = "recommended";
  }
  res.feasible = ok;
  res.reason = ok ? "" : why;

  // The recommendation (or the best point seen, to show what fails).
  const Point& pt = best.best;
  res.recommended.emplace_back(p.flag, p.format(pt.x));
  for (const auto& c : chosen_changes) res.recommended.push_back(c);
  if (g.target_context) res.recommended.emplace_back(k.context, std::to_string(*g.target_context));
  res.groups = kv_groups(chosen);
  res.kv_tokens = pt.kv_tokens;
  res.context_len = pt.context;
  res.concurrency = pt.context > 0 ? static_cast<double>(res.groups) * static_cast<double>(pt.kv_tokens) / static_cast<double>(pt.context) : 0;
  res.min_free_worst = pt.min_free_worst;

  // step 4: trade-off table around the recommendation (primary knob only, the chosen other knobs).
  if (g.detail && !primary_fixed) {
    PlanOptions quick;
    quick.detail = false;
    std::vector<double> xs;
    const double step = p.bytes ? p.step * 16 : p.step;  // bytes: 1 GiB rows
    for (int i = -5; i <= 3; ++i) {
      double x = p.bytes ? pt.x + step * i : std::round((pt.x + step * i) * 10000.0) / 10000.0;
      if (x >= p.lo - 1e-9 && x <= p.hi + 1e-9) xs.push_back(x);
    }
    std::vector<std::pair<double, std::string>> labelled{{pt.x, "recommended"}};
    if (!p.bytes) {
      Deployment dd = chosen;
      erase_flag(dd, p.flag);
      Forecast fd = plan(dd, quick);
      ++res.plans;
      if (auto x = parse_number(fd.setting(p.flag))) labelled.emplace_back(*x, "engine default");
    }
    if (auto x = parse_number(d0.flag(p.flag))) labelled.emplace_back(*x, "as given");
    for (const auto& [x, l] : labelled)
      if (std::none_of(xs.begin(), xs.end(), [&, x = x](double y) { return std::abs(y - x) < 1e-9; })) xs.push_back(x);
    std::sort(xs.begin(), xs.end());
    Deployment td = chosen;
    for (double x : xs) {
      std::string label;
      for (const auto& [lx, l] : labelled)
        if (std::abs(lx - x) < 1e-9) label += (label.empty() ? "" : ", ") + l;
      Point tp = evaluate(td, p, x, margin, quick, &res.plans, nullptr, &memo);
      res.tradeoffs.push_back(row_of(tp, p, td, label, {}, g));
    }
  }

  // The forecast at the recommendation, with detail (fit reads the point only).
  res.deployment = chosen;
  if (g.detail) {
    evaluate(res.deployment, p, pt.x, margin, PlanOptions{}, &res.plans, &res.forecast);
  } else {
    res.forecast.verdict = pt.verdict;
    res.forecast.kv_tokens = pt.kv_tokens;
    res.forecast.context_len = pt.context;
    res.forecast.failure = pt.failure;
  }
  if (!p.bytes && p.scale != 1.0) set_flag(res.deployment, p.flag, p.format(pt.x));

  // The launch: the user's flags with the recommended ones set.
  Deployment launch = d0;
  for (const auto& [f, v] : res.recommended) set_flag(launch, f, v);
  res.launch_flags = launch.flags;
  res.launch_command = launch_command(launch, launch.flags);

  if (res.margin_default)
    res.notes.push_back(fmt::format("safety margin {} of worst-case free memory at every stage is a default GUESS (allocator slack the forecast "
                                    "does not model); set it with --margin", human_bytes(margin)));
  if (g.keep_free_bytes > 0) {
    res.notes.push_back(fmt::format("planned on {} of the {} GPU: {} kept free for another process (--keep-free)", human_bytes(d.capacity_bytes),
                                    human_bytes(d0.capacity_bytes), human_bytes(g.keep_free_bytes)));
    if (p.scale != 1.0)
      res.notes.push_back(fmt::format("{} is a share of the whole GPU: the value recommended already leaves the memory kept free", p.flag));
  }
  for (const auto& c : chosen_changes)
    if (c.first == k.kv_dtype) res.notes.push_back("an FP8 KV cache changes numerics: check output quality before relying on it");
  for (const auto& f : g.fixed) res.notes.push_back(fmt::format("{} kept as given (--fix)", f));
  return res;
}

}  // namespace headroom
