// Calibrated estimates of SGLang's unmodelled memory (see sglang_estimates.h). The constants
// are fitted to the corpus logs; each cites the cases it rests on. They are estimates: the
// report marks them and the verdict uses their ranges.
#include "engines/sglang/sglang_estimates.h"
#include "engines/graph_nodes.h"
#include "engines/sglang/sglang_constants.h"
#include "engines/vllm/vllm_constants.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "headroom/alloc_margin.h"
#include "headroom/units.h"

#include <map>
#include <mutex>
#include <tuple>

namespace headroom::sglang {

namespace {
int64_t gib(double x) { return static_cast<int64_t>(x * static_cast<double>(GiB)); }
// A GiB row of sglang_constants.cpp as an estimate.
Estimate row(Const k, std::string basis) {
  const EstimatedConstant& c = constant(k);
  return {gib(c.central), gib(c.low), gib(c.high), std::move(basis)};
}
// Data-centre boards on NVLink/NVSwitch (SXM) allocate NVLS / larger NCCL buffers than PCIe cards.
bool nvswitch_class(const GpuSpec& g) {
  return g.vendor == "nvidia" && (g.sm == 90 || g.sm == 100 || g.sm == 103) && g.name.find("pcie") == std::string::npos &&
         g.name.find("nvl") == std::string::npos;
}
}  // namespace

Estimate init_overhead(const GpuSpec& gpu, int world) {
  // CUDA context with lazy module loading: 0.51 GiB on RTX 5090 TP1 (sglang-025: 31.37 - 16.47 - 14.39),
  // 0.60 GiB on H200 TP1 (sglang-037: 139.81 - 131.08 - 8.13); PyTorch PR #86509 measured 274 MiB bare.
  Estimate e = row(Const::InitContext, "CUDA context (corpus sglang-025, sglang-037)");
  if (gpu.sm == 121) {
    // DGX Spark (GB10): the 121.69 GiB are unified memory shared with the host OS, and what
    // SGLang's get_available_gpu_memory reads before the weights is what the host leaves: Gemma-4
    // 26B-A4B, main@2026-09-05, "avail mem=66.05 GB, mem usage=47.23 GB" at Load weight end ->
    // 113.28 GiB free at Load weight begin, 8.41 GiB gone (tests/data/extra xsgl-022); vLLM logs on
    // the same box read 97-115 GiB free at start (data/gpus.json dgx-spark). GUESS: 8.4 GiB, range
    // 6.7 (115 free) .. 24.7 (97 free); the host's own use, not the engine's.
    return row(Const::InitDgxSparkHost, "host OS share of the DGX Spark unified memory at start (extra log xsgl-022; vLLM DGX Spark logs 97-115 GiB free)");
  }
  if (world <= 1) return e;
  if (gpu.vendor == "amd") {
    // MI300X TP8: 191.98 - 21.73 - 166.59 = 3.66 GiB before weights (sglang-003).
    return row(Const::InitAmdRccl, "context + RCCL, TP>1 on AMD (corpus sglang-003)");
  }
  if (nvswitch_class(gpu)) {
    // H200 TP8: "Init torch distributed ends. mem usage=1.96 GB" + context -> 2.47 GiB before
    // weights (sglang-001); H200 TP2 "1.6 GB + 1 GB NCCL" (sglang-036); DP-attention TP8 2.26 (sglang-039).
    return row(Const::InitNvswitch, "context + NCCL (NVLS) + custom all-reduce on NVSwitch GPUs (corpus sglang-001/036/039)");
  }
  // PCIe boards, 3-4 ranks: SGLang disables its custom all-reduce on more than two PCIe-only GPUs
  // ("Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs",
  // custom_all_reduce.py), leaving context + NCCL: L4 TP4 22.03 - 21.63 = 0.40 GiB ("Init torch
  // distributed ends. mem usage=0.13 GB", tests/data/extra xsgl-001); RTX 4090 TP4 23.64 - (16.00 +
  // 7.08) = 0.56 GiB (xsgl-003). GUESS for 3 ranks (no log): as 4. Two GeForce ranks without peer
  // access end the same way ("Setup Custom allreduce failed with CUDART error: peer access is not
  // supported between these two devices"): RTX 4090 TP2 23.64 - 22.93 = 0.71 GiB ("Init torch
  // distributed ends. mem usage=0.19 GB", xsgl-013); the 1.67 GiB below was a TP8 RTX PRO 6000.
  const bool geforce = gpu.name.rfind("rtx-", 0) == 0 && gpu.name.find("pro") == std::string::npos &&
                       gpu.name.find("rtx-a") == std::string::npos && gpu.name.find("ada") == std::string::npos;
  if (world <= 4 && world > 2)
    return row(Const::InitPcie3To4, "context + NCCL over PCIe, 3-4 ranks, no custom all-reduce (extra logs xsgl-001/003)");
  if (world == 2 && geforce)
    return row(Const::InitPcie2Geforce, "context + NCCL over PCIe, 2 GeForce ranks, custom all-reduce fails without P2P (extra log xsgl-013)");
  // PCIe boards (RTX PRO 6000, 4090, L40S): GLM-5.2 TP8 on RTX PRO 6000 "Load weight begin.
  // avail mem=93.30 GB" -> 1.67 GiB (sglang#29562); seed crash: 0.85 GiB non-PyTorch.
  return row(Const::InitPcieOther, "context + NCCL over PCIe (sglang#29562, seed crash)");
}

Estimate backend_workspace(const std::string& backend) {
  // "Memory pool end" -> "Capture cuda graph begin" deltas: FlashInfer 0.64 (sglang-024),
  // 0.66 (sglang-037), 0.53 (sglang-021); FA3 / Triton / others 0.05 (sglang-001), 0.01
  // (sglang-025, sglang-028), 0.07 (sglang-031). FlashInfer's workspace is 384-512 MiB.
  if (backend == "flashinfer") return row(Const::WorkspaceFlashinfer, "FlashInfer workspace + cuBLAS (corpus sglang-021/024/037)");
  return row(Const::WorkspaceOther, "cuBLAS handle + backend buffers (corpus sglang-001/025/028/031)");
}

Estimate fp4_moe_warmup_residue(const ModelConfig& c, const GpuSpec& gpu) {
  if (!c.is_moe() || c.quant.method != QuantMethod::Nvfp4 || gpu.sm < 100) return {0, 0, 0, ""};
  // FlashInfer FP4 MoE autotuning holds tactic workspaces during warm-up: "Tried to allocate
  // 4.00 GiB" in FP4 autotuning after the KV pool (corpus sglang-012, GB200, DeepSeek-R1 NVFP4
  // TP4); a 1.85 GiB request in vLLM's FP4 MoE warm-up (research/models-quant-gpus.md §5.4);
  // the seed crash (GLM-5-NVFP4, RTX PRO 6000 TP8) logged "avail mem=0.96 GB" at capture begin
  // with 6.44 GiB reserved-but-unallocated. GUESS for the part that stays unusable: 2 GiB.
  return row(Const::Fp4MoeResidue, "FP4 MoE autotune/warm-up residue on Blackwell (corpus sglang-012, vLLM FP4 MoE warm-up, seed crash)");
}

namespace {
// Bytes per token the graph pool keeps for the largest batch: residual, norms, q/k/v/o in flight
// (~8 hidden-sized bf16 buffers) and one layer's MLP/MoE intermediates (graph_capture, term 1).
double pool_bytes_per_token(const ModelConfig& c, int tp) {
  double per_token = static_cast<double>(c.hidden_size) * 2.0 * 8.0;
  if (c.is_moe()) per_token += static_cast<double>(c.experts_per_token) * 2.0 * static_cast<double>(c.moe_intermediate_size) / tp * 2.0 * 2.0;
  else per_token += 3.0 * static_cast<double>(c.intermediate_size) / tp * 2.0;
  return per_token;
}
}  // namespace

bool custom_allreduce_off(const GpuSpec& gpu, int tp) { return tp > 2 && gpu.vendor == "nvidia" && !nvswitch_class(gpu); }

Estimate graph_capture(const ModelConfig& c, int tp, int attn_tp, int64_t max_bs, int64_t n_graphs, int64_t tokens_per_bs,
                       bool nccl_captured) {
  // ESTIMATE, fitted per mechanism on the "Capture cuda graph end ... mem usage" lines of nine real
  // logs (tests/data/extra xsgl-001/006/007/011/012/013/018/023/024; decode graphs only, after the
  // exact terms the plan adds - the attention backend's metadata and the graph output logits).
  // SGLang measures the capture (cuda_graph_runner.py: free memory before - after, empty_cache) and
  // computes nothing, so each term below is a mechanism of cuda_graph_runner.py fitted on those logs.
  const double tokens = static_cast<double>(max_bs * std::max<int64_t>(1, tokens_per_bs));
  const double layers = static_cast<double>(c.num_layers);
  // (1) The private graph pool keeps the peak of the largest batch: batch sizes are captured in
  // descending order into one pool ("to enable better memory sharing across cuda graphs"), so the
  // smaller graphs reuse the largest one's blocks; measured on an H200, the pool holds the largest
  // batch's live activations once (torch.cuda.graph empties the warm-up's cache before capture;
  // docs/measurements/h200-2026-11-30.md). Its intermediates: residual, norms, q/k/v/o in flight
  // (~8 hidden-sized bf16 buffers) and the MLP/MoE intermediates of one layer ...
  double pool = tokens * pool_bytes_per_token(c, tp);
  // ... and the lm_head output in the model dtype (LogitsProcessor: the bf16 [tokens, vocab] matmul,
  // cast to fp32 into the graph's output - the fp32 copy is the "graph output logits" line).
  // 2 B x tokens x vocab is what the fit asks for: Qwen3-8B decode to 512 logged 0.60 GB with 0.29 of
  // fp32 output logits (xsgl-006/014); without this term the largest-batch cases are 15-30% low.
  if (max_bs > 0) pool += tokens * static_cast<double>(c.vocab_size) * 2.0;
  if (c.has_indexer()) {
    // DSA indexer scores over the whole context window [bs, max_context] in fp32 during decode
    // capture (nsa_backend: max_seqlen_k = page_table width), and the top-k it selects: sgl-kernel's
    // fast_topk_v2 writes [bs, index_topk] int32 (score.new_empty((bs, topk), dtype=torch.int32)) from
    // an in-kernel selection, no [bs, context] workspace. Held once, like the other intermediates of
    // the largest batch (the previous estimate counted scores + a same-size workspace, twice).
    pool += tokens * (static_cast<double>(c.max_position_embeddings) + static_cast<double>(c.index_topk)) * 4.0;
  }
  // (2) Graph objects: ~3 KiB per captured kernel node (engines/graph_nodes.h).
  const double kernels_per_layer = decode_kernels_per_layer(c);
  const double nodes = static_cast<double>(n_graphs) * layers * kernels_per_layer * kGraphNodeBytes;
  // (3) Each all-reduce captured into a graph (TP > 1): one per attention block (attention TP > 1),
  // one per MLP/MoE block and one for the vocab-parallel embedding - the count custom all-reduce logs
  // at the end of capture: "Registering 4947 cuda graph addresses" = 51 graphs x (2 x 48 + 1)
  // (Qwen3-30B-A3B TP8, xsgl-023), 6273 = 51 x (2 x 61 + 1) (DeepSeek-R1 TP8, xsgl-018). ESTIMATE:
  // 150 KiB per captured all-reduce, the same with NCCL (custom all-reduce off: QwQ-32B TP4 on L4,
  // xsgl-001; Qwen3.5-9B TP2 on RTX 4090, xsgl-013) - fitted on those four logs, n=4; what holds it
  // (per-capture collective buffers the pool cannot share) is INFERRED, not read in the source.
  double collectives = 0;
  if (tp > 1) {
    const double per_graph = layers * ((attn_tp > 1 ? 1.0 : 0.0) + 1.0) + 1.0;
    collectives = static_cast<double>(n_graphs) * per_graph * constant(Const::GraphPerAllReduce).central * KiB;
  }
  // (4) Fixed: cuBLAS/cuBLASLt workspaces of the capture stream, input buffers sized by max_bs, kernel
  // modules loaded on first capture (~70 MiB outside PyTorch for the first eager warm-up on the capture
  // stream, measured on the H200): 0.06 GiB, from TP1 logs whose other terms are near zero
  // (Qwen2.5-0.5B 3 graphs 0.07 GB, Qwen3-0.6B 4 graphs 0.11 GB: xsgl-012/011).
  const double fixed = constant(Const::GraphFixed).central * GiB;
  // (5) NCCL's all-reduces captured into the graphs (custom all-reduce off past two PCIe-only GPUs)
  // keep more per graph and layer than the term above: vLLM's row for the same NCCL path
  // (vllm.graph.nccl_captured, its nccl_graph_capture; ESTIMATE, n=5 vLLM logs, 0.20 .. 0.45 MiB);
  // xsgl-001 (QwQ-32B TP4 on four L4, 13 graphs x 64 layers) took 0.28 GiB above the other terms,
  // 0.35 MiB each.
  const double nccl_unit = vllm::constant(vllm::Const::NcclCapturedGraphs).central;
  const double nccl = nccl_captured && tp > 1 ? static_cast<double>(n_graphs) * layers * nccl_unit * MiB : 0;
  const double central = fixed + pool + nodes + collectives + nccl;
  // Range: observed / forecast p10 0.88 .. p90 1.26 over the 14 logged captures validate reads
  // (tests/data/extra/sglang.jsonl, 2026-12-03), widened to 0.8 .. 1.3 for the few logs behind it.
  const EstimatedConstant& r = constant(Const::GraphRange);
  return {static_cast<int64_t>(central), static_cast<int64_t>(central * r.low), static_cast<int64_t>(central * r.high),
          "ESTIMATE (n=9 real logs, extra xsgl-001..024): 0.06 GiB + the largest batch's activations and bf16 logits in the graph pool + ~3 KiB "
          "per kernel node per graph (measured, H200) + 150 KiB per captured all-reduce (TP > 1)" +
              (nccl > 0 ? fmt::format(" + {:.2f} MiB per graph x layer of captured NCCL all-reduces (custom all-reduce off)", nccl_unit) : "")};
}

Estimate flashinfer_graph_wrappers(int64_t wrapper_sets) {
  // flashinfer_backend.py (_create_decode_wrappers / _create_prefill_wrappers) builds a new
  // BatchDecode/BatchPrefillWithPagedKVCacheWrapper per wrapper for every captured batch size and
  // keeps it for replay; each __init__ allocates an 8 MiB int workspace on the device
  // (torch.empty((8 * 1024 * 1024,), uint8): flashinfer v0.2.0 .. 2026 decode.py, prefill.py).
  // The caching allocator serves a request under 10 MiB from a 20 MiB segment (kLargeBuffer), two
  // per segment; carved from blocks the warm-up left cached, each costs only its 8 MiB (low).
  // Checked against the 4-graph FlashInfer logs: +0.04 GiB (xsgl-011/024 logged 0.11, 0.08 without it).
  if (wrapper_sets <= 0) return {0, 0, 0, ""};
  const int64_t low = wrapper_sets * 8 * static_cast<int64_t>(MiB);
  const int64_t central = (wrapper_sets + 1) / 2 * 20 * static_cast<int64_t>(MiB);
  return {central, low, central, "FlashInfer's per-batch-size wrappers: 8 MiB int workspace each, two per 20 MiB allocator segment"};
}

DraftCapture draft_capture(const ModelConfig& c, int tp, const DraftSpec& spec, int64_t max_bs, int64_t n_graphs) {
  // ESTIMATE from the runners' mechanisms (speculative/eagle_draft_cuda_graph_runner.py and
  // eagle_draft_extend_cuda_graph_runner.py); no real log at hand prints the draft captures' "mem
  // usage", so the range is wide (x0.5 .. x2). The draft model is the target's architecture cut to
  // `layers` layers (MTP / NextN modules; an EAGLE head). Both runners share the target's graph
  // pool and are captured after it, so their activations take the blocks the target's largest
  // batch left; what they add is what exceeds that peak, their static buffers and graph objects.
  const double hidden = static_cast<double>(c.hidden_size), vocab = static_cast<double>(c.vocab_size);
  const double b = static_cast<double>(max_bs), layers = static_cast<double>(spec.layers);
  const double target_peak = b * static_cast<double>(spec.draft_tokens) * (pool_bytes_per_token(c, tp) + vocab * 2.0);
  const double kernel_nodes = decode_kernels_per_layer(c) * layers * kGraphNodeBytes;
  const double sampling_nodes = constant(Const::DraftSamplingKernels).central * kGraphNodeBytes;  // top-k, softmax, index bookkeeping per step
  const double hidden_in = spec.eagle3 ? 3.0 * hidden : hidden;
  DraftCapture out;
  {  // draft decode: bs x topk tokens per step; logits (bf16) and their softmax (fp32) per step.
    const double t = b * static_cast<double>(spec.topk);
    const double peak = t * (pool_bytes_per_token(c, tp) + vocab * 6.0);
    const double statics = t * (hidden * 2.0 + 8.0 * static_cast<double>(spec.steps + 3));
    const double nodes = static_cast<double>(n_graphs) * (static_cast<double>(spec.steps - 1) * kernel_nodes + static_cast<double>(spec.steps) * sampling_nodes);
    const double central = std::max(0.0, peak - target_peak) + statics + nodes;
    out.decode = {static_cast<int64_t>(central), static_cast<int64_t>(central * constant(Const::DraftCaptureRange).low),
                  static_cast<int64_t>(central * constant(Const::DraftCaptureRange).high),
                  "ESTIMATE (mechanism, no log): draft-decode graphs' static buffers, graph objects (~3 KiB per kernel node) and pool growth past the target's peak"};
  }
  {  // draft extend: bs x num_draft_tokens tokens through the draft layers, the last tokens' fp32 logits.
    const double t = b * static_cast<double>(spec.draft_tokens);
    const double peak = t * pool_bytes_per_token(c, tp) + b * vocab * 4.0;
    const double statics = t * (hidden_in * 2.0 + 8.0 * 3.0);
    const double nodes = static_cast<double>(n_graphs) * (kernel_nodes + sampling_nodes);
    const double central = std::max(0.0, peak - target_peak) + statics + nodes;
    out.extend = {static_cast<int64_t>(central), static_cast<int64_t>(central * constant(Const::DraftCaptureRange).low),
                  static_cast<int64_t>(central * constant(Const::DraftCaptureRange).high),
                  "ESTIMATE (mechanism, no log): draft-extend graphs' static buffers, graph objects and pool growth past the target's peak"};
  }
  return out;
}

Estimate prefill_activations(const ModelConfig& c, int tp, int64_t tokens, int64_t context_len) {
  // GUESS: per-token activations of one prefill chunk (hidden states, attention q/k/v,
  // MLP/MoE intermediates) + the last-token logits; SGLang's own reserve assumes 1.5 MiB/token
  // (server_args), far above what dense models use. Range x0.6 .. x1.6.
  const double t = static_cast<double>(tokens);
  const double hidden = static_cast<double>(c.hidden_size);
  double per_token = hidden * 2.0 * 6.0;
  if (c.is_moe()) per_token += static_cast<double>(c.experts_per_token) * 3.0 * static_cast<double>(c.moe_intermediate_size) / tp * 2.0;
  else per_token += 3.0 * static_cast<double>(c.intermediate_size) / tp * 2.0;
  double q_heads = static_cast<double>(std::max<int64_t>(1, c.num_attention_heads / tp));
  per_token += q_heads * static_cast<double>(std::max<int64_t>(c.head_dim, c.qk_nope_head_dim + c.qk_rope_head_dim)) * 2.0 * 3.0;
  double central = t * per_token;
  if (c.has_indexer()) central += t * static_cast<double>(std::min<int64_t>(context_len, tokens)) * 4.0;  // indexer scores [q, k] fp32
  central += constant(Const::PrefillSampling).central * MiB;  // sampling / logits temporaries
  const EstimatedConstant& r = constant(Const::PrefillRange);
  return {static_cast<int64_t>(central), static_cast<int64_t>(central * r.low), static_cast<int64_t>(central * r.high),
          "GUESS: per-token activations of one chunk (hidden, attention, MLP/MoE intermediates) + 256 MiB sampling"};
}

Estimate prefill_allocator_slack(const ModelConfig& c, int tp, int64_t tokens) {
  // Per-layer tensors of a prefill step, allocated in order and freed in reverse: residual and
  // norm output (hidden, bf16), q/k/v (heads/tp x head_dim), attention output, MLP/MoE
  // intermediates (gate+up, then down input). Sizes per token; the model replays them at
  // `tokens` tokens through every layer and reports reserved - allocated at the peak.
  const int64_t hd = std::max<int64_t>(c.head_dim, c.qk_nope_head_dim + c.qk_rope_head_dim);
  const int64_t heads = std::max<int64_t>(1, c.num_attention_heads / std::max(1, tp));
  const int64_t inter = c.is_moe() ? c.experts_per_token * c.moe_intermediate_size / std::max(1, tp) : c.intermediate_size / std::max(1, tp);
  std::vector<int64_t> per_token{c.hidden_size * 2, c.hidden_size * 2, heads * hd * 2 * 3, heads * hd * 2, inter * 2 * 2, inter * 2};
  for (int64_t& b : per_token) b = std::max<int64_t>(2, b);
  using Key = std::tuple<std::vector<int64_t>, int64_t, int64_t>;
  static std::mutex mu;
  static std::map<Key, int64_t> memo;
  Key key{per_token, tokens, c.num_layers};
  int64_t margin = -1;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) margin = it->second;
  }
  if (margin < 0) {
    static const alloc::AllocConf conf = alloc::parse_alloc_conf("", "default");
    margin = alloc::activation_fragmentation_margin(conf, tokens, per_token, std::max<int64_t>(1, c.num_layers));
    std::lock_guard<std::mutex> lock(mu);
    if (memo.size() < 4096) memo.emplace(key, margin);
  }
  return {margin, 0, margin * 2, "allocator slack at the prefill peak from the caching-allocator model (src/alloc, default PYTORCH_CUDA_ALLOC_CONF)"};
}

}  // namespace headroom::sglang
