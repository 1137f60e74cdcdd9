// CUDA-graph capture of PyTorch models: graphs x decoder layers x a cost per (graph x layer)
// each engine passes from its own fit, and a drafter's graph objects (capture_terms.h). The
// derivation of the per-layer figures is vLLM's (docs/engines/vllm.md).
#include "engines/shared/capture_terms.h"

#include <algorithm>
#include <fmt/format.h>

#include "engines/graph_nodes.h"
#include "engines/shared/shared_constants.h"
#include "headroom/units.h"

namespace headroom {

Estimate layer_graph_memory(const ModelConfig& c, int64_t layers, int64_t linear_layers, int64_t piecewise, int64_t full, int tp,
                            bool gdn_as_attention, GraphUnit unit) {
  // ESTIMATE (INFERRED from logs; vLLM has no formula for it). What "Graph capturing finished ...
  // took X GiB" measures (v1/worker/gpu_model_runner.py capture_model, every V1 release read):
  // mem_get_info() free memory before the capture loop minus after it, so the graph pool (one
  // pool shared by all sizes, captured largest first so the smaller ones reuse its blocks; FULL
  // and PIECEWISE share it), everything allocated lazily during the warm-up runs before each
  // capture and cached by the allocator, and the driver's graph objects. No term of it has a
  // size vLLM fixes in advance, so it is modelled as captured graphs x decoder layers x a fitted
  // cost, + 16 MiB of fixed buffers.
  //
  // The first fit, one cost for every graph (what vLLM's own estimate is still calibrated on; the
  // capture now splits PIECEWISE from FULL, cuda_graph_memory below). Attention layers (and the
  // Gated-DeltaNet layers of dense hybrids, below): 0.19 MiB per (graph x layer). Figures, ("took" or "Estimated CUDA graph memory") - 16 MiB over graphs x
  // layers: Qwen3-8B 86 x 36 -> 0.167 MiB (0.21.0 estimate, vllm-029); Qwen3-235B TP4 18 x 94 ->
  // 0.184 (vllm-052); Qwen3-235B TP4 54 x 94 -> 0.190 (0.20.0, vllm-058); Llama-3.1-8B 67 x 32 ->
  // 0.241 (0.10.1.1, vllm-055); Llama-3.2-1B 67 x 16 -> 0.281 (vllm-019) -- the fit -- and,
  // checked after it (tests/vllm_graph_era_test.cpp): Qwen3-0.6B-W4A16 0.19.1 on an A100-40GB
  // (GPU INFERRED from its budget) 86 x 28 -> 0.189 (public-code 54187866445); the same model on
  // a ~31 GiB card (RTX 5090, INFERRED) -> 0.108 (54318626907); Qwen2.5-7B-Instruct 0.22.0 54 x 28 -> 0.199 (67144197265); Qwen2.5-0.5B
  // 0.27.1 86 x 24 -> 0.176 (xvllm-003). Median 0.19 MiB; no dependence on TP, capture size or
  // hidden size across them.
  // NOT an era effect, although the two 0.19.x extra logs miss by 3-4x (xvllm-010 Qwen3-8B on an
  // A100-40GB 2.44 GiB -> 0.80 MiB per graph x layer; xvllm-017 Qwen2.5-72B TP4 on four PCIe L40S
  // 2.62 -> 0.38): the 0.19.1 and 0.22 logs above, other models and GPUs in the same builds, hold
  // the flat cost, and vLLM's own 0.19 estimator (profile_cudagraph_memory: the largest two
  // graphs of each mode captured, the second one's delta extrapolated to the rest) agreed with the
  // capture in both misses (2.35 vs 2.44, 2.73 vs 2.62 GiB), so their cost is per graph, not per
  // captured token. xvllm-010 ran on the same host as xvllm-004 (0.9.2, 2.24 GiB); the
  // per-size law of 0.9 .. 0.10.0 below was fitted on that host's log and on Qwen2-7B on an
  // A100 vGPU slice, while a 0.9.2 L4 log keeps the flat cost. Whatever those hosts share (A100
  // hosts, PCIe TP4 with NCCL collectives in the graphs; not in the deployment) is not modelled;
  // the range's high end does not cover it.
  // PCIe hosts past two GPUs (custom all-reduce off, NCCL collectives captured in every graph):
  // xvllm-017 (4 x L40S, 0.19.0, nccl 2.27.5) takes 1.33 GiB above the flat cost, ~100 KiB per
  // captured all-reduce (86 graphs x 161); xvllm-019 (8 x L40S, 0.10.2, nccl 2.27.3) 2.27 GiB,
  // ~190 KiB each (67 x 189). NCCL's captured collectives are known to cost graph memory that depends
  // on the NCCL version, its cuMem setting and the CUDA driver (vllm PR #5091: NCCL >= 2.19 turns
  // NCCL_CUMEM_ENABLE on, which "costs memory during cudagraph capture"; vllm#5517: 3.8 vs 1.14 GiB
  // on A10G/L4 with CUDA drivers before / from 12.4; NVIDIA/nccl#1234) -- none of which is in the
  // deployment -- and corpus vllm-052 (4 x RTX PRO 6000 over PCIe, a 2026-08 build, 18 graphs x 94
  // layers x 2 all-reduces) took 0.32 GiB, the flat cost. So no per-collective term (not modelled).
  //
  // Gated-DeltaNet layers. Dense hybrids (no routed experts) cost as attention layers: Qwen3.5-9B
  // on an L40S, vLLM 0.19.0, 51 + 35 graphs x 32 layers (8 attention + 24 GDN), took 0.65 GiB ->
  // 0.236 MiB (public-code 51781852921); Qwen3.5-4B, 0.22.0, 86 x 32, took 0.55 GiB -> 0.199 MiB
  // (public-code 55770092662). The MoE hybrids cost far more per GDN layer, and their cost falls
  // with TP: with 0.19 MiB for their attention layers, 1.886 MiB x (1/tp) (Qwen3-Next TP2, 67
  // graphs, 12 + 36 layers, 2.37 GiB, 0.10.2, vllm-048) and 1.873 MiB x (1/tp) (Qwen3.5-35B-A3B
  // TP4, 86 graphs, 10 + 30 layers, 1.34 GiB, vllm-071): 1.88 MiB / tp per (graph x GDN layer),
  // n = 2, a GUESS for other widths. What the MoE adds is not established: 0.11.1+ (INFERRED
  // from the merge dates) runs the shared expert on an auxiliary stream for batches <= 256 tokens (vllm PR #26440, #28406;
  // fused_moe/runner/shared_experts.py should_run_shared_in_aux_stream, the input cloned and
  // record_stream'ed), and the caching allocator does not reuse record_stream'ed blocks inside a
  // capture (pytorch PR #158352, not merged), but vllm-048 is 0.10.2, older than that stream;
  // MoE models without a shared expert (Qwen3-235B, Qwen3-30B-A3B) show no extra.
  // Until 2026-11 both kinds took the MoE figure: 86 x 24 x 1.88 MiB = 3.8 GiB for the GDN layers
  // of Qwen3.5-9B alone, where 0.65 GiB was captured.
  // From 0.26 the hybrids' capture (and vLLM's estimate of it, which is charged to the KV budget)
  // also holds a warm-up transient that grows with max_num_batched_tokens: vllm#50780 ("CUDA
  // graph memory profiler charges an mnbt-linear profiling transient as graph memory -> KV cache
  // pool -18-24% on hybrid GDN models since v0.26.0 (the real FULL graphs cost ~24 MiB each)";
  // the profiler and the capture code are byte-identical between 0.23.1 and 0.26.1, the
  // transient is in the model's decode-with-context path, ~128 KiB per context token of the
  // warm-up sample, and "took" counts it because it is measured before the post-capture
  // empty_cache()) and vllm#52872 ("max-num-batched-tokens also sizes the CUDA-graph pool").
  // Its size per model is not known from the logs at hand (vllm-009: 3 graphs, 0.46 GiB at
  // max_num_batched_tokens 2048; vllm-085: Qwen3.5-4B on a B200 at 8192 holds ~1.5 GiB less KV
  // than the MoE figure's 3.9 GiB leaves), so 0.26+ dense hybrids kept the MoE figure until a
  // 2026-12 log at 2048 tokens (xvllm-060) showed it 3x too high: they now take the flat cost plus
  // a transient per batched token above 4096 (cuda_graph_memory below; vllm-085's record omits
  // flags its run had, so it does not decide the rate).
  // Logs read since (2026-12), checked against the MoE-figure rule, not fitted:
  //  - The estimator (profile_cudagraph_memory, public-code 52016549297) is max over modes of the
  //    first (largest) capture + the second one's delta x (graphs - 1), and the FULL warm-up of
  //    the first capture decodes min(max_model_len, max_num_batched_tokens // size) tokens of
  //    context per request, so a context transient lands in the estimate only when FULL graphs
  //    are captured. PIECEWISE-only 27B hybrids (spec decode) keep the flat cost: Qwen3.6-27B
  //    4 graphs 0.08 GiB (TP1), 5 graphs 0.13 (TP2), 7 graphs 0.17 (TP4) against 0.06 .. 0.10
  //    forecast (noonghunna/club-3090 issues #617, #104, PR #44), and so does one with 3 + 2 FULL
  //    graphs of at most 8 requests, 0.09 GiB at TP2 (issue #434; its max_num_batched_tokens is
  //    not shown).
  //  - With FULL graphs the first capture costs more than the flat figure: nvidia/Qwen3.6-27B-NVFP4
  //    on a DGX Spark, 0.23.1rc1, 5 + 4 graphs at max_num_batched_tokens 65536, estimate 0.61 /
  //    took 0.62 GiB where 9 x 64 x 0.19 + 16 = 0.12 (xvllm-020); Qwen3.8-27B, 0.27.1, DGX Spark,
  //    86 graphs at 8192: estimate 1.56 GiB, flat 1.06, this rule's MoE figure 7.85 (public-code
  //    61316607224; its checkpoint is not in the catalog); vllm#52872 (RTX 5090, a 64-layer hybrid):
  //    0.52 GiB at max_num_batched_tokens 2048 .. 4096, 0.89 at 8192. Per context token of the
  //    warm-up these are ~8 KiB (0.23) and ~60 .. 130 KiB (0.26+), while vllm-085 (Qwen3.5-4B, a
  //    2026 build on a B200) needs ~7 GiB at 8192 if its activation peak is the ~1.6 GiB that its
  //    sibling vllm-087 leaves. No one per-token rate fits both model sizes.
  //  - MoE hybrids at TP1 (the 1/tp scaling is from TP2 and TP4 logs): Qwen3.5-35B-A3B-FP8 on a
  //    DGX Spark, 0.18.1, 86 graphs at 2048, estimate 1.65 GiB against 5.0 forecast (xvllm-021);
  //    RedHatAI/Qwen3.6-35B-A3B-NVFP4, 0.19.2rc1, 11 + 7 graphs, estimate 1.21 against 1.04
  //    (public-code 52221836498). A first capture of ~1.1 GiB + ~7 MiB per further graph fits both;
  //    the TP2/TP4 corpus logs (vllm-048, vllm-071) are what the 1/tp figure reproduces, so it
  //    stays until a log gives the first/extra split at TP > 1.
  using shared::Const;
  const double per_linear_moe_tp1 = shared::constant(Const::GraphPerGdnLayer).central * MiB;
  const double pw = static_cast<double>(piecewise), fu = static_cast<double>(full);
  const double per_layer = (pw * unit.piecewise + fu * unit.full) * MiB;  // one decoder layer over every graph
  const double attn = static_cast<double>(layers - linear_layers), linear = static_cast<double>(linear_layers);
  const double per_linear = per_linear_moe_tp1 / static_cast<double>(std::max(1, tp));  // per (graph x GDN layer), MoE hybrids
  const double linear_cost = gdn_as_attention ? linear * per_layer : (pw + fu) * linear * per_linear;
  double central = attn * per_layer + linear_cost + shared::constant(Const::GraphFixedBuffers).central * MiB;
  std::string linear_what = linear_layers == 0 ? ""
                            : !gdn_as_attention ? fmt::format(", 1.88/tp = {:.2f} MiB per GDN layer (MoE-hybrid figure, GUESS, n=2)", per_linear / MiB)
                            : c.is_moe() ? ", GDN layers as attention layers (Model Runner V2, INFERRED n=2)"
                                         : ", GDN layers of a dense hybrid as attention layers (n=2)";
  return range(central, shared::constant(Const::GraphRange).low, shared::constant(Const::GraphRange).high,
               fmt::format("CUDA graphs: {} piecewise + {} full captures over {} layers ({} linear-attention); fitted {:.2f} MiB per (piecewise "
                           "graph x layer), {:.2f} per (full graph x layer){} (ESTIMATE, INFERRED from logs)",
                           piecewise, full, layers, linear_layers, unit.piecewise, unit.full, linear_what));
}

Estimate drafter_graph_memory(int64_t piecewise_graphs, int64_t drafter_layers, double kernels_per_layer) {
  // gpu_model_runner.py _dummy_run ends with self.drafter.dummy_run(num_tokens) when the method uses
  // the EAGLE proposer (eagle, eagle3, mtp; the draft-model proposer derives from it), and the
  // drafter's model is compiled piecewise at the same sizes, so each captured size adds the
  // drafter's graph objects (~3 KiB per kernel node, engines/graph_nodes.h). Its activations run
  // after the target's in the same private pool and are smaller, so the pool does not grow
  // (INFERRED). xvllm-063 (a 28-layer Qwen3-0.6B drafter, 0.29.0): +0.05 GiB this way, -10% against
  // the log where the target's 0.19 MiB per (graph x layer) gave +18%.
  const double central = kGraphNodeBytes * kernels_per_layer * static_cast<double>(piecewise_graphs) * static_cast<double>(drafter_layers);
  return range(central, shared::constant(shared::Const::DrafterGraphRange).low, shared::constant(shared::Const::DrafterGraphRange).high,
               fmt::format("drafter graphs: {} piecewise captures x {} drafter layers x {:.0f} kernels x 3 KiB (ESTIMATE)", piecewise_graphs,
                           drafter_layers, kernels_per_layer));
}

}  // namespace headroom
