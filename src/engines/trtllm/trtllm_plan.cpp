// plan_trtllm(): TensorRT-LLM's startup per rank. PyTorch backend (KvCacheCreator in
// tensorrt_llm/_torch/pyexecutor/_util.py): weights, a profiling executor (autotuner, CUDA
// graphs, dummy context requests filling max_num_tokens), then the KV pool =
// (total - profiled peak) x free_gpu_memory_fraction, capped by max_tokens /
// max_gpu_total_bytes, min over ranks, blocks of tokens_per_block; max_seq_len shrinks when
// one sequence does not fit. C++ runtime (TRT engines): the same fraction of the memory free
// after the engine's execution context, runtime buffers and decoder (kvCacheManager.cpp).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "engines/layout_cache.h"
#include "engines/plan_memo.h"
#include "engines/trtllm/trtllm_estimates.h"
#include "engines/trtllm/trtllm_rule_table.h"
#include "engines/trtllm/trtllm_rules.h"
#include "engines/shared/capture_terms.h"
#include "engines/trtllm/trtllm_constants.h"
#include "engines/shared/process_terms.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/kv.h"
#include "headroom/layout.h"
#include "headroom/sim.h"
#include "engines/deployment_host.h"
#include "engines/graph_nodes.h"
#include "headroom/units.h"

namespace headroom {

namespace {
struct Terms {
  int rank = 0, pp_rank = 0;
  int64_t weights = 0, bpt = 0, state = 0;
  int64_t bpt_sizing = 0;  // KvCacheCreator's get_cache_size_per_token (differs from bpt for Nemotron-NAS)
  Estimate ctx, act, other, graphs;
  Estimate exec;            // PyTorch backend: executor overhead beyond vLLM's terms (trtllm_estimates.h)
  int64_t mtp = 0;                // of weights: the MTP module(s) loaded for --speculative_config MTP
  int64_t draft_bpt = 0;          // of bpt: the drafter's KV layers (get_num_spec_layers)
  Estimate draft_graphs;    // of graphs: drafter layer passes inside the captured graphs
  int64_t peak[3] = {0, 0, 0};    // profiled peak: central, best, worst
  int64_t budget[3] = {0, 0, 0};  // central, best, worst (per plan: depends on the fraction)
  // Index of an earlier rank with the same terms (same weights, same pipeline stage), or -1: it
  // plays the same timeline, so it is simulated once (and copied into the report with detail).
  int same_as = -1;
};
// PyTorch-backend CUDA graphs: every graph at the 0.19 MiB per (graph x layer) that vLLM's
// 86-graph mixes average (engines/shared/capture_terms.h; not refitted for TensorRT-LLM).
GraphUnit torch_graph_unit() {
  const double mib = trtllm::constant(trtllm::Const::GraphUnit).central;
  return {mib, mib};
}

int64_t pick(const Estimate& e, int sc) { return sc == 0 ? e.central : sc == 1 ? e.low : e.high; }

// The one-model drafter (MTP, Eagle3) on the last pipeline stage: its KV layers join the pool at
// the size of one of the target's attention layers (the KV manager's num_layers + spec layers),
// its layer passes add their kernels' graph objects to each captured graph (ESTIMATE).
void add_drafter(Terms& t, const trtllm::SpecDecoding& sp, int64_t attn_layers, int64_t graphs, double kernels_per_layer) {
  if (sp.kv_layers > 0 && attn_layers > 0) {
    t.draft_bpt = t.bpt / attn_layers * sp.kv_layers;
    t.bpt += t.draft_bpt;
    t.bpt_sizing += t.draft_bpt;
  }
  if (sp.graph_layer_runs > 0 && graphs > 0) {
    t.draft_graphs = drafter_graph_memory(graphs, sp.graph_layer_runs, kernels_per_layer);
    t.graphs.central += t.draft_graphs.central;
    t.graphs.low += t.draft_graphs.low;
    t.graphs.high += t.draft_graphs.high;
  }
}
std::string g2(int64_t b) { return fmt::format("{:.2f}", to_gib(b)); }

// What plans of one deployment share when only free_gpu_memory_fraction differs (tune's and
// fit's bisection): the flags resolved, the per-rank terms. Kept for the last deployment planned
// on the thread (engines/plan_memo.h); the fraction is applied to `s` and the budgets per plan.
// Only the Deployment is the key: a term computed here must not read PlanOptions.
struct Prepared {
  bool valid = false;
  Deployment key;
  trtllm::Settings s;
  std::string era_text;
  std::vector<int64_t> graph_sizes;
  std::vector<Terms> terms;
};

void prepare(Prepared& P, const Deployment& d) {
  P.valid = false;
  P.key = d;
  P.s = trtllm::resolve_settings(d);
  const trtllm::Settings& s = P.s;
  const ModelConfig& c = d.model->config;
  P.era_text = s.era.label + "; " + s.era.reason;
  Parallel par = d.par;
  par.tp = s.tp;
  par.pp = s.pp;
  par.ep = s.ep;
  par.dp_attention = s.attention_dp;
  if (s.attention_dp) par.dp = s.tp;

  std::vector<RankWeights> ws = cached_weights_per_rank(d.model, EngineKind::TRTLLM, par);
  if (ws.empty()) fail_input("trtllm", "--model", "no ranks to plan");
  // Dummy context requests of min(max_num_tokens, max_seq_len) tokens fill max_num_tokens:
  // their last-token logits are what the sampler sees.
  int64_t reqs = std::max<int64_t>(1, s.max_num_tokens / std::max<int64_t>(1, std::min(s.max_num_tokens, s.max_seq_len)));
  // The profile step's sampler: vLLM's top-k/top-p figure of 2026 (14 B per logit, 6..24 B logged), not
  // re-derived for TensorRT-LLM's sampler (ESTIMATE).
  const EstimatedConstant& sb = trtllm::constant(trtllm::Const::SamplerBytes);
  const SamplerBytes sampler{sb.central, sb.low, sb.high, "sampler 14 B/logit (vLLM's top-k/top-p figure, 6..24 B; not re-derived for TensorRT-LLM: ESTIMATE)"};
  P.graph_sizes = trtllm::cuda_graph_batch_sizes(s);

  P.terms.clear();
  for (const auto& w : ws) {
    Terms t;
    t.rank = w.rank;
    t.pp_rank = w.pp_rank;
    // A TensorRT engine built with quantized linears from a 16-bit checkpoint (--quantization).
    t.weights = s.engine_quant ? trtllm::engine_quant_weights(c, w, *s.engine_quant) : w.bytes;
    t.mtp = s.spec && s.spec->loads_mtp_weights ? w.mtp_bytes : 0;
    t.weights += t.mtp;
    // Every term below depends on the pipeline stage only: reuse an earlier rank's of this stage.
    const Terms* same_stage = nullptr;
    for (const auto& e : P.terms)
      if (e.pp_rank == w.pp_rank) { same_stage = &e; break; }
    if (same_stage) {
      t.bpt = same_stage->bpt;
      t.bpt_sizing = same_stage->bpt_sizing;
      t.state = same_stage->state;
      t.ctx = same_stage->ctx;
      t.act = same_stage->act;
      t.other = same_stage->other;
      t.graphs = same_stage->graphs;
      t.draft_bpt = same_stage->draft_bpt;
      t.draft_graphs = same_stage->draft_graphs;
      t.exec = same_stage->exec;
    } else {
      t.bpt = trtllm::bytes_per_token(c, s, w.pp_rank);
      t.bpt_sizing = trtllm::sizing_bytes_per_token(c, s, w.pp_rank, t.bpt);
      auto [l0, l1] = trtllm::pp_layers(static_cast<int>(c.num_layers), s.pp, w.pp_rank);
      int64_t layers = l1 - l0, linear = 0;
      for (int i = l0; i < l1 && i < static_cast<int>(c.layers.size()); ++i)
        if (c.layers[i].attn == AttnKind::Linear) ++linear;
      if (linear > 0) {
        KvPerToken k = vllm_kv_per_token(c, par, "auto", d.gpu.sm, w.pp_rank);
        t.state = k.state_bytes_per_request * s.max_batch_size;  // Mamba cache manager: one state slot per request
      }
      t.ctx = context_and_nccl(s.tp, s.pp, d.gpu.vendor == "amd");
      if (unified_memory_device(d.gpu.sm)) {
        // Unified memory (Jetson Orin / Thor, DGX Spark GB10): torch.cuda.mem_get_info() sees what
        // the host OS, page cache and other processes take from the same LPDDR, and KvCacheCreator
        // charges it all as memory outside torch (_util.py configure_kv_cache_capacity: extra_cost
        // = total used - torch used). The DGX Spark log (1.1.0rc3, gpt-oss-120b, tests/data/extra
        // xtrt-002) had 49.78 GiB of 119.70 outside torch after loading (0.42 of the device), so
        // its KV pool was 86,720 tokens where a discrete 120 GiB GPU would hold ~750,000. The
        // central cannot know the host; the unfavourable end takes 0.42 of the device (GUESS, n = 1).
        t.ctx.high += static_cast<int64_t>(trtllm::constant(trtllm::Const::UnifiedMemoryOutsideTorch).high * static_cast<double>(d.capacity_bytes));
        t.ctx.basis += "; unified memory: what the host OS / page cache holds counts as memory outside torch (unfavourable end + 0.42 x "
                       "device, GUESS from one DGX Spark log where it was 49.78 of 119.70 GiB)";
      }
      t.act = profile_peak(c, par, s.max_num_tokens, reqs, w.pp_rank == s.pp - 1, sampler);
      t.other = non_torch_growth(s.tp * s.pp);
      t.graphs = P.graph_sizes.empty() ? Estimate{} : layer_graph_memory(c, layers, linear, static_cast<int64_t>(P.graph_sizes.size()), 0, s.tp, false, torch_graph_unit());
      if (s.spec && w.pp_rank == s.pp - 1) add_drafter(t, *s.spec, layers - linear, static_cast<int64_t>(P.graph_sizes.size()), decode_kernels_per_layer(c));
      if (s.backend == "pytorch") t.exec = trtllm::pytorch_executor_overhead();
      if (s.backend == "trt" && !s.era.trt_lazy_context) {
        // A TensorRT engine (0.9+): TllmRuntime allocates the engine's execution context, then
        // TrtGptModelInflightBatching its runtime buffers and decoder, before the KV pool is sized
        // from the memory still free (kvCacheManager.cpp calculateMaxNumBlocks). Fitted on the
        // C++ runtime's own "[MemUsageChange] Allocated ..." lines (trtllm_estimates.cpp).
        t.act = trtllm::trt_execution_context(c, s.max_num_tokens);
        t.other = trtllm::trt_runtime_buffers(c, s.max_batch_size * s.max_beam_width);
      }
      if (s.backend == "trt" && s.era.trt_lazy_context) {
        // Before 0.9 the TensorRT engine's execution context and the runtime buffers took nothing
        // before the KV pool was sized: the 0.8.0 log prints "IExecutionContext creation: ... GPU
        // +0" and then "Allocate 7952400384 bytes for k/v cache" = 0.9 x (23.56 GiB - 15,316 MiB
        // engine - ~0.37 GiB context) on an RTX 3090 (tests/data/extra xtrt-015), although the
        // build logged 1.69 GiB of activation memory. GUESS (era boundary): 0.9.
        t.act = Estimate{0, 0, 0, "TensorRT execution context: none before the KV pool is sized (GptSession, TensorRT-LLM < 0.9)"};
        t.other = Estimate{0, 0, 0, "runtime buffers + decoder: none before the KV pool is sized (TensorRT-LLM < 0.9)"};
      }
    }
    for (int sc = 0; sc < 3; ++sc)
      t.peak[sc] = pick(t.ctx, sc) + t.weights + pick(t.act, sc) + pick(t.other, sc) + pick(t.graphs, sc) + pick(t.exec, sc) + t.state;
    for (size_t j = 0; j < P.terms.size(); ++j)
      if (P.terms[j].same_as < 0 && P.terms[j].pp_rank == t.pp_rank && P.terms[j].weights == t.weights) {
        t.same_as = static_cast<int>(j);
        break;
      }
    P.terms.push_back(std::move(t));
  }
  P.valid = true;
}

}  // namespace

Forecast plan_trtllm(const Deployment& d, const PlanOptions& opt) {
  // DeepSeek-V4's compressed / sliding-window KV groups are not in this KV model: a generic MLA/MHA
  // cell would be silently wrong, so refuse as the vLLM model does.
  if (d.model->config.model_type == "deepseek_v4" || d.model->config.architecture == "DeepseekV4ForCausalLM")
    fail_input("trtllm", "--model", "DeepSeek-V4's compressed sparse attention KV cache is not modelled by headroom's TensorRT-LLM engine");
  thread_local Prepared P;
  if (P.valid && same_but_budget(P.key, d, trtllm::kBudgetFlags)) trtllm::apply_budget(P.s, trtllm::resolve_budget(d));
  else prepare(P, d);
  const trtllm::Settings& s = P.s;
  const ModelConfig& c = d.model->config;
  const std::vector<int64_t>& graph_sizes = P.graph_sizes;
  std::vector<Terms>& terms = P.terms;
  Forecast f;
  f.engine = "trtllm";
  f.version = d.engine_version.empty() ? "newest" : d.engine_version;
  f.era = P.era_text;
  f.settings = s.table;
  if (opt.detail) f.notes = s.notes;
  if (opt.detail)
    note_host_state(f, d, "TensorRT-LLM's free_gpu_memory_fraction is a share of the memory free after its profiled peak, read off the "
                          "whole card: the KV pool shrinks by what they hold x the fraction");
  const int64_t T = d.capacity_bytes;
  const bool pytorch = s.backend == "pytorch";
  // A TensorRT engine before 0.9: context and runtime buffers come after the KV pool (prepare()).
  const bool lazy_context = !pytorch && s.era.trt_lazy_context;
  // The fraction applies to the free memory after the profiled peak, read off the whole card
  // (cudaMemGetInfo): what other processes hold (--host-state) is in that peak.
  const int64_t others = d.held_by_others_max();
  for (auto& t : terms)
    for (int sc = 0; sc < 3; ++sc) t.budget[sc] = trtllm::kv_budget(T, t.peak[sc] + others, s.fraction, s.max_tokens, t.bpt_sizing, s.max_gpu_total_bytes);

  // All-reduce MIN of max tokens over ranks, then blocks of tokens_per_block.
  int64_t blocks[3] = {INT64_MAX, INT64_MAX, INT64_MAX};
  for (const auto& t : terms)
    if (t.same_as < 0)
      for (int sc = 0; sc < 3; ++sc) blocks[sc] = std::min(blocks[sc], trtllm::blocks_for(t.budget[sc], t.bpt_sizing, s.tokens_per_block));
  for (auto& b : blocks) b = std::max<int64_t>(0, b);
  int64_t tokens = blocks[0] * s.tokens_per_block;

  // Temporary KV of the profiling run (rank 0's terms; the estimation is all-reduced the same way).
  const int64_t tmp_tokens = pytorch ? trtllm::estimation_tokens(s, T - others - terms.front().ctx.central - terms.front().weights, terms.front().bpt_sizing) : 0;

  std::optional<Failure> oom, refusal;
  int64_t headroom = INT64_MAX;
  for (const auto& t : terms) {
    if (t.same_as >= 0) {
      // Same terms as an earlier rank: the same timeline (it cannot be the first to fail).
      if (opt.detail) f.repeat_rank(static_cast<size_t>(t.same_as), t.rank);
      continue;
    }
    RankSim sim(t.rank, T);
    sim.begin_stage(StageId::Init);
    sim_held_by_others(sim, d, others);
    sim.alloc_estimated(s.tp * s.pp > 1 ? "CUDA context + NCCL" : "CUDA context", t.ctx.central, t.ctx.low, t.ctx.high);
    sim.begin_stage(StageId::Weights);
    sim.alloc("model weights", t.weights - t.mtp);
    if (t.mtp > 0) sim.alloc("draft (MTP) weights", t.mtp);
    if (!sim.failed()) {
      sim.begin_stage(StageId::Warmup);
      if (pytorch) {
        sim.alloc_estimated("NCCL / cuBLAS / autotuner workspaces (outside torch)", t.other.central, t.other.low, t.other.high);
        sim.alloc_estimated("executor overhead: sampler, runtime buffers, kernel modules (fitted)", t.exec.central, t.exec.low, t.exec.high);
        const Estimate& dg = t.draft_graphs;
        if (t.graphs.central > 0)
          sim.alloc_estimated(fmt::format("CUDA graphs ({} batch sizes)", graph_sizes.size()), t.graphs.central - dg.central, t.graphs.low - dg.low,
                              t.graphs.high - dg.high);
        if (dg.central > 0)
          sim.alloc_estimated(fmt::format("drafter in the graphs ({}, {} tokens/request)", s.spec->type, 1 + s.spec->draft_len), dg.central,
                              dg.low, dg.high);
        sim.alloc_estimated(fmt::format("profiling activations ({} dummy context tokens)", s.max_num_tokens), t.act.central, t.act.low, t.act.high);
        sim.release_estimated("profiling activations freed", t.act.central, t.act.low, t.act.high);
      } else if (!lazy_context) {
        sim.alloc_estimated("execution context memory (TensorRT engine activations)", t.act.central, t.act.low, t.act.high);
        sim.alloc_estimated("runtime buffers + decoder", t.other.central, t.other.low, t.other.high);
      }
      if (t.state > 0) sim.alloc(fmt::format("Mamba/linear-attention state for {} requests", s.max_batch_size), t.state);
      if (pytorch && tmp_tokens > 0) {
        // The profiling executor's own KV pool is live through the warm-up; KvCacheCreator adds
        // it back to the budget (_cal_max_memory allocated_bytes), so it moves no budget, but a
        // GPU without room for it fails here.
        int64_t tmp = tmp_tokens * t.bpt;
        sim.alloc(fmt::format("temporary KV cache of the estimation run ({} tokens)", tmp_tokens), tmp);
        sim.release("temporary KV cache freed (executor rebuilt)", tmp);
      }
    }
    if (!sim.failed()) {
      sim.begin_stage(StageId::KvPool);
      int64_t per_block = t.bpt * s.tokens_per_block;
      const int64_t draft_block = t.draft_bpt * s.tokens_per_block, target_block = per_block - draft_block;
      sim.alloc_estimated(fmt::format("paged KV cache ({} blocks x {} tokens x {} B)", blocks[0], s.tokens_per_block, t.bpt - t.draft_bpt),
                          blocks[0] * target_block, blocks[1] * target_block, blocks[2] * target_block);
      if (draft_block > 0)
        sim.alloc_estimated(fmt::format("draft KV layers ({} B per token)", t.draft_bpt), blocks[0] * draft_block,
                            blocks[1] * draft_block, blocks[2] * draft_block);
      headroom = std::min(headroom, sim.free());
    }
    if (sim.failed() && !oom) oom = sim.failure();
    f.ranks.push_back(sim.finish());
  }

  const Terms& t0 = terms.front();
  int64_t seq = s.max_seq_len;
  if (!oom && blocks[0] <= 0) {
    // resource_manager.py get_max_atten_window_upper_bound: `assert max_blocks_per_seq > 0,
    // "Impossible to fit in any sequence in kvCache"` (spelled "Impossibe" in 2025 copies).
    refusal = Failure{StageId::KvPool, 0, t0.bpt * s.tokens_per_block, t0.budget[0],
                      fmt::format("AssertionError: {} to fit in any sequence in kvCache ((total {} GiB - profiled peak) x fraction {} = {} GiB, "
                                  "less than one token of {} B)",
                                  s.era.log_2026 ? "Impossible" : "Impossibe", g2(T), s.fraction, g2(t0.budget[0]), t0.bpt_sizing)};
  }
  // TensorRT-LLM shrinks max_seq_len when one sequence does not fit in the pool; it does not
  // refuse unless --fail_fast_on_attention_window_too_large (serve.py, default False) asks it to.
  const int64_t seq_given = seq;
  if (!oom && !refusal && tokens < seq && s.fail_fast_window)
    refusal = Failure{StageId::KvPool, 0, seq * t0.bpt, tokens * t0.bpt,
                      fmt::format("RuntimeError: attention window {} does not fit in the KV cache ({} tokens) and "
                                  "--fail_fast_on_attention_window_too_large is set (headroom's words; the exit is TensorRT-LLM's)",
                                  seq, tokens)};
  // The pre-0.9 runtimes refused instead (NVIDIA/TensorRT-LLM#542 and tensorrtllm_backend#168,
  // 2023: "[TensorRT-LLM][ERROR] maxTokensInPagedKvCache must be large enough to process at least 1
  // sequence to completion (i.e. must be larger than beam_width * tokensPerBlock *
  // maxBlocksPerSeq)"). GUESS: the same < 0.9 boundary as trt_lazy_context.
  const int64_t one_seq = (seq + s.tokens_per_block - 1) / s.tokens_per_block * s.tokens_per_block * s.max_beam_width;
  if (!oom && !refusal && lazy_context && tokens < one_seq)
    refusal = Failure{StageId::KvPool, 0, one_seq * t0.bpt, tokens * t0.bpt,
                      fmt::format("[TensorRT-LLM][ERROR] maxTokensInPagedKvCache must be large enough to process at least 1 sequence to completion "
                                  "(i.e. must be larger than beam_width * tokensPerBlock * maxBlocksPerSeq) ({} tokens in the pool, {} needed)",
                                  tokens, one_seq)};
  if (!oom && !refusal && tokens < seq) seq = tokens;
  // Logs (rank 0), only with detail: tune and fit never read them. Texts checked against
  // _util.py / resource_manager.py (NVIDIA/TensorRT-LLM 2025 copies and @0004396, 2026) and the
  // real 1.1.0rc3 log quoted in trtllm_kv.cpp; order as that log prints them.
  if (opt.detail) {
    // Through 1.1 the LLM-API KvCacheConfig reached _util.py as the C++ binding, so its fraction
    // prints as a float32 widened to double ("fraction is set 0.8999999761581421" in the 1.1.0rc3
    // log). GUESS: 1.2+ (Python KvCacheConfig in the 2026 source) prints the value as given.
    const std::string frac = s.era.log_2026 ? fmt::format("{}", s.fraction) : fmt::format("{}", static_cast<double>(static_cast<float>(s.fraction)));
    int64_t peak0 = t0.ctx.central + t0.weights + t0.act.central + t0.other.central + t0.graphs.central + t0.exec.central + t0.state;
    // One KV-manager creation: the warning when KvCacheCreator handed it max_tokens (resource_manager.py
    // calculate_max_num_blocks; GUESS: 1.2+ words it differently, not predicted there), the window
    // shrink, the C++ manager's two lines, the executor's summary. Returns max_seq_len after it.
    auto manager_lines = [&](int64_t max_tokens, int64_t pool_tokens, int64_t seq_in) {
      if (pytorch && !s.era.log_2026)
        f.log.push_back(fmt::format("Both free_gpu_memory_fraction and max_tokens are set (to {} and {}, respectively). The smaller value will be used.", frac,
                                    max_tokens));
      int64_t seq_out = seq_in;
      if (pool_tokens < seq_in) {
        f.log.push_back(fmt::format("Attention window size {} exceeds upper bound {} for available blocks. Reducing to {}.", seq_in, pool_tokens, pool_tokens));
        f.log.push_back(fmt::format("Adjusted max_attention_window_vec to [{}]", pool_tokens));
        if (pytorch && trtllm::has(trtllm::Rule::BlocksPerWindowLog, s.era.version)) f.log.push_back(fmt::format("Adjusted window size {} to {} in blocks_per_window", seq_in, pool_tokens));
        f.log.push_back(fmt::format("Adjusted max_seq_len to {}", pool_tokens));
        seq_out = pool_tokens;
      }
      // The C++ manager's per-window summary (docs/engines/trtllm.md: blocks_per_sequence_line, pages_per_sequence_line).
      const int64_t tpb = s.tokens_per_block;
      const int64_t window = std::min(seq_in, pool_tokens);
      if (trtllm::has(trtllm::Rule::BlocksPerSequenceLine, s.era.version))
        f.log.push_back(fmt::format("[TensorRT-LLM][INFO] Max KV cache blocks per sequence: {} [window size={}], tokens per block={}, primary blocks={}, "
                                    "secondary blocks=0, max sequence length={}",
                                    (seq_in + tpb - 1) / tpb, window, tpb, pool_tokens / tpb, seq_in));
      else if (pytorch && trtllm::has(trtllm::Rule::PagesPerSequenceLine, s.era.version))
        f.log.push_back(fmt::format("[TensorRT-LLM][INFO] Max KV cache pages per sequence: {} [window size={}]", (window + tpb - 1) / tpb, window));
      f.log.push_back(fmt::format("[TensorRT-LLM][INFO] Number of tokens per block: {}.", s.tokens_per_block));
      f.log.push_back(fmt::format("[TensorRT-LLM][INFO] [MemUsageChange] Allocated {} GiB for max tokens in paged KV cache ({}).", g2(pool_tokens * t0.bpt),
                                  pool_tokens));
      // py_executor_creator's summary, PyTorch path only (trtllm.summary_max_batch_size).
      if (pytorch && trtllm::has(trtllm::Rule::SummaryMaxBatchSize, s.era.version))
        f.log.push_back(fmt::format("max_seq_len={}, max_num_requests={}, max_num_tokens={}, max_batch_size={}", seq_out, s.max_batch_size,
                                    s.max_num_tokens, s.max_batch_size));
      else if (pytorch)
        f.log.push_back(fmt::format("max_seq_len={}, max_num_requests={}, max_num_tokens={}", seq_out, s.max_batch_size, s.max_num_tokens));
      return seq_out;
    };
    if (!oom || oom->stage != StageId::Weights) {
      if (pytorch) {
        // The estimation executor's KV manager comes first (its pool is the "temporary kv cache").
        int64_t tmp_pool = (tmp_tokens + s.tokens_per_block - 1) / s.tokens_per_block * s.tokens_per_block;
        if (tmp_tokens > 0) manager_lines(tmp_tokens, tmp_pool, s.max_seq_len);
        int64_t tmp_bytes = tmp_pool * t0.bpt;
        f.log.push_back(fmt::format("Memory used after loading model weights (inside torch) in memory usage profiling: {} GiB", g2(t0.weights)));
        // The estimation executor's KV pool exists before these lines are measured and is the C++
        // KVCacheManager's (BufferManager, not torch's allocator): it is outside torch, and the
        // torch peak above the weights is the activations alone. Real 1.1.0rc3 log (tests/data/extra
        // xtrt-002, gpt-oss-120b, 8192 dummy tokens, 0.56 GiB temporary pool): "Memory dynamically
        // allocated during inference (inside torch) ...: 0.85 GiB", this model's activations 0.84.
        f.log.push_back(fmt::format("Memory used after loading model weights (outside torch) in memory usage profiling: {} GiB", g2(t0.ctx.central + tmp_bytes)));
        f.log.push_back(fmt::format("Memory dynamically allocated during inference (inside torch) in memory usage profiling: {} GiB", g2(t0.act.central)));
        f.log.push_back(fmt::format("Memory used outside torch (e.g., NCCL and CUDA graphs) in memory usage profiling: {} GiB",
                                    g2(t0.ctx.central + t0.other.central + t0.graphs.central + t0.exec.central + tmp_bytes)));
        int64_t kv_max = static_cast<int64_t>(static_cast<double>(T - peak0) * s.fraction);
        if (s.era.log_2026)
          f.log.push_back(fmt::format("Peak memory during memory usage profiling (torch + non-torch): {} GiB, available KV cache memory when calculating max "
                                      "tokens: {} GiB, fraction is set {}, kv size per token is {}. device total memory {} GiB, temporary kv cache memory "
                                      "during profiling {} GiB",
                                      g2(peak0 + tmp_bytes), g2(kv_max), frac, t0.bpt_sizing, g2(T), g2(tmp_bytes)));
        else
          f.log.push_back(fmt::format("Peak memory during memory usage profiling (torch + non-torch): {} GiB, available KV cache memory when calculating max "
                                      "tokens: {} GiB, fraction is set {}, kv size is {}. device total memory {} GiB, , tmp kv_mem {} GiB",
                                      g2(peak0 + tmp_bytes), g2(kv_max), frac, t0.bpt_sizing, g2(T), g2(tmp_bytes)));
        if (s.max_tokens)
          f.log.push_back(fmt::format("max_tokens={} is provided. It limits max memory to {} GiB. New max_memory is set to {} GiB", *s.max_tokens,
                                      g2(*s.max_tokens * t0.bpt_sizing), g2(t0.budget[0])));
        if (s.max_gpu_total_bytes > 0)
          f.log.push_back(fmt::format("max_gpu_total_bytes={} GiB is provided. New max memory is {} GiB", g2(s.max_gpu_total_bytes), g2(t0.budget[0])));
        f.log.push_back(fmt::format("Estimated max memory in KV cache : {} GiB", g2(t0.budget[0])));
      } else if (lazy_context) {
        // GptSession (< 0.9) prints the pool in bytes and tokens, nothing else (the 0.8.0 log of
        // tests/data/extra xtrt-015: "Allocate 7952400384 bytes for k/v cache. " then "Using 60672
        // tokens in paged KV cache." = 474 blocks x 128 x 131,072 B).
        if (!refusal && !oom) {
          f.log.push_back(fmt::format("[TensorRT-LLM][INFO] Allocate {} bytes for k/v cache. ", tokens * t0.bpt));
          f.log.push_back(fmt::format("[TensorRT-LLM][INFO] Using {} tokens in paged KV cache.", tokens));
          int64_t seq_log = std::min(seq_given, tokens);
          if (seq_log < seq_given)
            f.notes.push_back(fmt::format("TensorRT-LLM shrinks max_seq_len from {} to {} (one sequence does not fit); it does not refuse", seq_given, seq_log));
        }
      } else {
        f.log.push_back(fmt::format("[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: {} GiB, available: {} GiB", g2(T),
                                    g2(T - peak0)));
        // kvCacheManager.cpp calculateMaxNumBlocks, as the 0.19.0 RTX 5090 log prints them
        // (tests/trtllm_logs_test.cpp, case C); no host cache -> 0 secondary blocks.
        if (!refusal && !oom) {
          f.log.push_back(fmt::format("[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: {}", blocks[0]));
          f.log.push_back("[TensorRT-LLM][INFO] Number of blocks in KV cache secondary pool: 0, onboard blocks to primary memory before reuse: true");
        }
      }
      if (!refusal && !oom && !lazy_context) {
        int64_t seq_log = manager_lines(t0.budget[0] / std::max<int64_t>(1, t0.bpt_sizing), tokens, seq_given);
        if (seq_log < seq_given)
          f.notes.push_back(fmt::format("TensorRT-LLM shrinks max_seq_len from {} to {} (one sequence does not fit); it does not refuse", seq_given, seq_log));
      }
    }
  }
  f.kv_tokens = (oom || refusal) ? 0 : tokens;
  f.context_len = seq;
  f.max_running_requests = s.max_batch_size;
  f.max_concurrency = seq > 0 ? static_cast<double>(f.kv_tokens) / static_cast<double>(seq) : 0;
  f.headroom_bytes = headroom == INT64_MAX ? 0 : headroom;
  if (refusal) {
    f.verdict = Verdict::Refused;
    f.failure = refusal;
    f.log.push_back(refusal->message);
  } else if (oom) {
    f.verdict = Verdict::Oom;
    f.failure = oom;
    f.log.push_back("torch.OutOfMemoryError: CUDA out of memory. (" + oom->message + ")");
  } else {
    f.verdict = verdict_from_ranks(f.ranks, std::nullopt);
    if (f.verdict != Verdict::Oom && f.verdict != Verdict::Refused && blocks[2] <= 0) {
      f.verdict = Verdict::AtRisk;
      f.refused_at_worst = true;
    }
    // A drafter this plan does not count (two-model Eagle3, draft-target, ...): at most at risk.
    if (f.verdict == Verdict::Fits && s.spec && s.spec->type != "NGram" && !s.spec->loads_mtp_weights) {
      f.verdict = Verdict::AtRisk;
      f.notes.push_back(fmt::format("at risk rather than fits: the {} drafter's weights are not counted", s.spec->type));
    }
  }
  if (opt.detail) {  // what the forecast rests on (the search loops never read it)
    f.notes.push_back(fmt::format("KV budget = (total - profiled peak) x free_gpu_memory_fraction {} ({}), min over ranks; {} B per token per rank",
                                  s.fraction, s.fraction_given ? "given" : "default", t0.bpt));
    f.notes.push_back("ESTIMATED: " + t0.ctx.basis);
    if (lazy_context) {
      f.notes.push_back("GUESS: before TensorRT-LLM 0.9 the engine's execution context and the runtime buffers take memory only after the KV pool is "
                        "sized (0.8.0 log: 'IExecutionContext creation: ... GPU +0'); they are not in the budget nor in this timeline");
    } else {
      f.notes.push_back("ESTIMATED: " + t0.act.basis + (pytorch ? " (vLLM profile-run model reused for TensorRT-LLM's dummy context requests)" : ""));
      f.notes.push_back("ESTIMATED: " + t0.other.basis);
    }
    if (t0.graphs.central > 0) f.notes.push_back("ESTIMATED: " + t0.graphs.basis);
    if (t0.exec.central > 0) f.notes.push_back("ESTIMATED: " + t0.exec.basis);
    if (c.sliding_window > 0) f.notes.push_back("sliding-window layers planned with full-length KV (no max_attention_window given)");
    if (const auto& q = s.engine_quant)
      f.notes.push_back(fmt::format("engine weights: {} linears of the 16-bit checkpoint at {:.4g} B per weight (group-wise scales per 128 input "
                                    "rows where the format has them: the quantize.py / convert_checkpoint.py default); embedding, lm_head "
                                    "and norms 16-bit",
                                    q->algo, q->bytes_per_weight));
  }
  if (!opt.detail) f.log.clear();  // items stay: validate and tune read the stage sums
  return f;
}

}  // namespace headroom
