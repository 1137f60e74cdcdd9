// fit(): which GPUs, how many and which parallelism serve a model at a target context and
// concurrency. Enumerates GPU types x counts (1, 2, 4, ... <= max) x the layouts the engine
// supports x KV dtype choices, tunes each cheaply (bisection of the primary knob only) and
// ranks the feasible ones; the others keep one phrase saying why not.
// Layouts: TP; TP x PP; for MoE expert parallel (SGLang --ep-size, vLLM
// --enable-expert-parallel, TensorRT-LLM --ep_size); SGLang DP attention for MLA / MoE models
// (an MLA cache is replicated on every attention-TP rank: DP attention splits requests
// instead), likewise TensorRT-LLM attention DP; vLLM data parallel + expert parallel for MoE.
#include <algorithm>
#include <fmt/format.h>

#include "advise/search.h"
#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/units.h"

namespace headroom {

using namespace advise;

namespace {

struct Layout {
  Parallel par;
  bool vllm_ep = false;  // vLLM --enable-expert-parallel
};

std::vector<Layout> layouts_for(EngineKind e, const ModelConfig& c, int n) {
  std::vector<Layout> out;
  out.push_back({Parallel{.tp = n}});
  for (int pp = 2; pp <= n; pp *= 2)
    if (n % pp == 0 && c.num_layers >= pp) out.push_back({Parallel{.tp = n / pp, .pp = pp}});
  if (n < 2) return out;
  if (c.is_moe()) {
    if (e == EngineKind::VLLM) {
      out.push_back({Parallel{.tp = n, .ep = n}, true});
      out.push_back({Parallel{.tp = 1, .ep = n, .dp = n}, true});  // data parallel attention + EP
    } else {
      out.push_back({Parallel{.tp = n, .ep = n}});
    }
  }
  if ((e == EngineKind::SGLang || e == EngineKind::TRTLLM) && (c.mla || c.is_moe())) {
    out.push_back({Parallel{.tp = n, .dp = n, .dp_attention = true}});
    if (c.is_moe()) out.push_back({Parallel{.tp = n, .ep = n, .dp = n, .dp_attention = true}});
  }
  return out;
}

int gpus_of(EngineKind e, const Parallel& p) {
  // SGLang --enable-dp-attention and TensorRT-LLM enable_attention_dp split the TP group itself.
  return p.tp * p.pp * (p.dp_attention ? 1 : p.dp);
}

int64_t kv_total(const FitCandidate& c) { return c.kv_tokens * c.groups; }

// A candidate's answer: what tune found for its deployment.
void take_tune(FitCandidate& c, const TuneResult& t) {
  c.feasible = t.feasible;
  c.reason = t.reason;
  c.verdict = t.forecast.verdict;
  c.primary_knob = t.primary_knob;
  c.primary_value = t.recommended.empty() ? "" : t.recommended.front().second;
  c.kv_tokens = t.kv_tokens;
  c.concurrency = t.concurrency;
  c.min_free_worst = t.min_free_worst;
  c.recommended = t.recommended;
  c.launch_command = t.launch_command;
}

// llama.cpp on n GPUs of one kind, layers split over them: every layer on the GPUs unless the
// user placed them (-ngl, --cpu-moe, -ot), a target concurrency as that many slots (--parallel,
// each slot its share of --ctx-size), tuned by tune_llamacpp.
FitCandidate fit_llamacpp(const Deployment& base, const GpuSpec& g, int n, TuneGoal goal) {
  FitCandidate c;
  c.gpu = g.name;
  c.gpus = n;
  c.layer_split = true;
  Deployment d = base;
  d.gpu = g;
  d.capacity_bytes = g.capacity_bytes;
  d.gpus = n;
  d.gpu_list.clear();
  if (!d.flag("--n-gpu-layers") && !d.flag("--cpu-moe") && !d.flag("--n-cpu-moe") && !d.flag("--override-tensor"))
    set_flag(d, "--n-gpu-layers", "all");
  if (goal.target_concurrency) {
    set_flag(d, "--parallel", std::to_string(*goal.target_concurrency));
    if (goal.target_context) goal.target_context = *goal.target_context * *goal.target_concurrency;
    goal.target_concurrency.reset();
  }
  try {
    take_tune(c, tune(d, goal));
    if (!c.feasible) c.reason = "every layer on " + std::to_string(n) + " GPU(s) does not keep the margin";
  } catch (const InputError& e) {
    if (e.kind() == InputError::Kind::UnknownOption) throw;
    c.reason = "llama.cpp rejects this: " + e.problem();
  }
  return c;
}

}  // namespace

static FitResult fit_once(const FitRequest& req);

// When nothing fits with the default KV cache dtype and none was asked for, an FP8 KV cache (half
// the bytes per token) is tried, and the result says so: it is often what makes a target fit.
FitResult fit(const FitRequest& req) {
  FitResult r = fit_once(req);
  if (req.base.engine == EngineKind::LlamaCpp) return r;  // its cache types are -ctk/-ctv, chosen by the user
  const EngineKnobs& k = knobs_for(req.base.engine);
  if (!r.candidates.empty() || !req.kv_dtypes.empty() || k.kv_dtype.empty() || req.base.flag(k.kv_dtype)) return r;
  FitRequest fp8 = req;
  fp8.kv_dtypes = {req.base.engine == EngineKind::SGLang ? "fp8_e4m3" : "fp8"};
  FitResult f = fit_once(fp8);
  if (f.candidates.empty()) {
    r.notes.push_back(fmt::format("an FP8 KV cache ({} {}) does not make any deployment fit either", k.kv_dtype, fp8.kv_dtypes.front()));
    return r;
  }
  f.notes.insert(f.notes.begin(), fmt::format("no deployment fits with the model's default KV cache dtype; these use an FP8 KV cache ({} {}), "
                                              "half the bytes per token (quality: check your model with it)",
                                              k.kv_dtype, fp8.kv_dtypes.front()));
  f.evaluated += r.evaluated;
  f.plans += r.plans;
  return f;
}

static FitResult fit_once(const FitRequest& req) {
  const Deployment& base = req.base;
  const ModelConfig& mc = base.model->config;
  if (req.max_gpus < 1) fail_input("command line", "--max-gpus", "must be at least 1");
  if (auto lim = context_limit(base); req.goal.target_context && lim && *req.goal.target_context > lim->tokens)
    fail_input("command line", "--target-context",
               fmt::format("{} is longer than {} supports ({} {})", *req.goal.target_context, base.model_spec, lim->rule, lim->tokens));
  std::vector<const GpuSpec*> gpus;
  if (req.gpu_names.empty())
    for (const auto& g : gpu_catalog()) gpus.push_back(&g);
  else
    for (const auto& n : req.gpu_names) gpus.push_back(&require_gpu(n));
  const EngineKnobs& k = knobs_for(base.engine);
  std::vector<std::string> kv_choices = req.kv_dtypes;
  if (kv_choices.empty()) kv_choices.push_back("");
  if (!kv_choices.front().empty() && k.kv_dtype.empty())
    fail_input("command line", "--kv-cache-dtype", fmt::format("the {} engine model has no KV dtype flag", engine_kind_name(base.engine)));

  FitResult res;
  res.engine = fmt::format("{} {}", engine_kind_name(base.engine), base.engine_version.empty() ? "newest" : base.engine_version);
  res.model = base.model_spec;
  res.target_concurrency = req.goal.target_concurrency;
  res.margin_bytes = req.goal.margin_bytes.value_or(kDefaultMarginBytes);
  res.context_len = req.goal.target_context.value_or(0);
  TuneGoal goal = req.goal;
  goal.detail = false;

  // Per KV dtype choice: candidates planned, and how many the engine rejected for that flag.
  std::vector<int> kv_planned(kv_choices.size(), 0), kv_rejected(kv_choices.size(), 0);
  std::vector<std::string> kv_problem(kv_choices.size());
  bool single_boxes = false;
  for (const GpuSpec* g : gpus) {
    for (int n = 1; n <= req.max_gpus; n *= 2) {
      // A device that is its own box (DGX Spark, Jetson: the catalog's "network" fabric) is not
      // offered as a multi-GPU cluster: those would talk over Ethernet, not NVLink.
      if (n > 1 && g->interconnect == "network" && n > req.nodes) {
        single_boxes = true;
        break;
      }
      if (base.engine == EngineKind::LlamaCpp) {  // one layout: llama-server's layer split
        FitCandidate c = fit_llamacpp(base, *g, n, goal);
        res.plans += c.feasible ? 1 : 0;
        ++res.evaluated;
        if (c.feasible && res.context_len == 0) res.context_len = c.kv_tokens;
        (c.feasible ? res.candidates : res.rejected).push_back(std::move(c));
        continue;
      }
      for (const Layout& lay : layouts_for(base.engine, mc, n)) {
        for (size_t ki = 0; ki < kv_choices.size(); ++ki) {
          const std::string& kv = kv_choices[ki];
          FitCandidate c;
          c.gpu = g->name;
          c.par = lay.par;
          c.gpus = gpus_of(base.engine, lay.par);
          c.kv_dtype = kv;
          c.groups = std::max(1, lay.par.dp);
          Deployment d = base;
          d.gpu = *g;
          d.capacity_bytes = g->capacity_bytes;
          d.par = lay.par;
          d.gpus = c.gpus;
          if (lay.vllm_ep) set_flag(d, "--enable-expert-parallel", "true");
          if (!kv.empty()) set_flag(d, k.kv_dtype, kv);
          ++res.evaluated;
          try {
            TuneResult t = tune(d, goal);
            ++kv_planned[ki];
            res.plans += t.plans;
            take_tune(c, t);
            if (res.context_len == 0) res.context_len = t.context_len;
          } catch (const InputError& e) {
            // An option the engine does not know is wrong in every layout: bad input, once.
            if (e.kind() == InputError::Kind::UnknownOption) throw;
            c.feasible = false;
            c.reason = "the engine rejects this layout: " + e.problem();
            if (!kv.empty() && e.field() == k.kv_dtype) {
              ++kv_rejected[ki];
              if (kv_problem[ki].empty()) kv_problem[ki] = e.problem();
            }
          }
          (c.feasible ? res.candidates : res.rejected).push_back(std::move(c));
        }
      }
    }
  }

  // A KV dtype the engine rejects wherever it gets that far, and no layout plans, is a bad
  // value, not a layout problem.
  for (size_t ki = 0; ki < kv_choices.size(); ++ki)
    if (kv_planned[ki] == 0 && kv_rejected[ki] > 0)
      fail_input("command line", "--kv-cache-dtype", fmt::format("'{}': {}", kv_choices[ki], kv_problem[ki]));

  // What an operator would choose: the fewest GPUs, then tensor parallelism within a node before
  // pipeline stages (PP only across nodes), then the most KV cache. A node is taken to hold 8 GPUs
  // (an ASSUMPTION: HGX/DGX boards; the catalog has no per-node count).
  // A single-GPU box is a node of one.
  auto layout_cost = [](const FitCandidate& c) {
    const GpuSpec* g = find_gpu(c.gpu);
    const int per_node = g && g->interconnect == "network" ? 1 : 8;
    const bool tp_beyond_node = c.par.tp > per_node;
    const bool pp_within_node = c.par.pp > 1 && c.par.tp * c.par.pp <= per_node;
    return (tp_beyond_node ? 2 : 0) + (pp_within_node ? 1 : 0);
  };
  auto by_gpus = [&](const FitCandidate& a, const FitCandidate& b) {
    if (a.gpus != b.gpus) return a.gpus < b.gpus;
    // llama.cpp's cache is the context asked for, whatever the card: the smallest card that holds it.
    if (a.layer_split && b.layer_split && a.kv_tokens == b.kv_tokens && a.min_free_worst != b.min_free_worst)
      return a.min_free_worst < b.min_free_worst;
    if (layout_cost(a) != layout_cost(b)) return layout_cost(a) < layout_cost(b);
    if (kv_total(a) != kv_total(b)) return kv_total(a) > kv_total(b);
    return a.min_free_worst > b.min_free_worst;
  };
  auto by_kv = [](const FitCandidate& a, const FitCandidate& b) {
    if (kv_total(a) != kv_total(b)) return kv_total(a) > kv_total(b);
    return a.gpus < b.gpus;
  };
  auto by_headroom = [](const FitCandidate& a, const FitCandidate& b) {
    if (a.min_free_worst != b.min_free_worst) return a.min_free_worst > b.min_free_worst;
    return a.gpus < b.gpus;
  };
  switch (req.sort) {
    case FitSort::Gpus: std::stable_sort(res.candidates.begin(), res.candidates.end(), by_gpus); break;
    case FitSort::Kv: std::stable_sort(res.candidates.begin(), res.candidates.end(), by_kv); break;
    case FitSort::Headroom: std::stable_sort(res.candidates.begin(), res.candidates.end(), by_headroom); break;
  }
  // Rows that differ only in expert parallelism and give the same KV cache and knob: one row.
  auto same = [](const FitCandidate& a, const FitCandidate& b) {
    return a.gpu == b.gpu && a.gpus == b.gpus && a.par.tp == b.par.tp && a.par.pp == b.par.pp && a.par.dp == b.par.dp &&
           a.par.dp_attention == b.par.dp_attention && a.kv_dtype == b.kv_dtype && a.kv_tokens == b.kv_tokens && a.primary_value == b.primary_value;
  };
  std::vector<FitCandidate> unique;
  for (auto& c : res.candidates) {
    auto dup = std::find_if(unique.begin(), unique.end(), [&](const FitCandidate& u) { return same(u, c); });
    if (dup == unique.end()) unique.push_back(std::move(c));
    else if (c.par.ep < dup->par.ep) *dup = std::move(c);  // the simpler layout of the two
  }
  res.candidates = std::move(unique);
  std::stable_sort(res.rejected.begin(), res.rejected.end(), [](const FitCandidate& a, const FitCandidate& b) { return a.gpus < b.gpus; });
  if (single_boxes)
    res.notes.push_back(fmt::format("single-GPU devices (DGX Spark, Jetson) are tried {}: more would be separate boxes on a network (--nodes N to try them)",
                                    req.nodes > 1 ? fmt::format("up to {} boxes", req.nodes) : std::string("one at a time")));
  if (req.nodes > 1)
    res.notes.push_back(fmt::format("up to {} single-GPU boxes are tried together over the network (--nodes): tensor parallelism across boxes is "
                                    "ranked after pipeline stages; start each box with the engine's multi-node options (SGLang --nnodes, "
                                    "--node-rank, --dist-init-addr; vLLM on a Ray cluster; TensorRT-LLM under mpirun), which the launch line leaves out",
                                    req.nodes));
  if (!req.goal.margin_bytes)
    res.notes.push_back(fmt::format("safety margin {} of worst-case free memory at every stage is a default GUESS; set it with --margin",
                                    human_bytes(res.margin_bytes)));
  res.notes.push_back("each candidate is tuned on its primary knob only (bisection); `headroom tune` on a candidate also tries the other knobs");
  return res;
}

}  // namespace headroom
