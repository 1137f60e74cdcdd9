// SGLang's defaults as server_args resolves them, by era (research/sglang-memory.md §3):
// mem_fraction_static, chunked_prefill_size, cuda_graph_max_bs, capture lists, page size,
// KV dtype, max_running_requests and the request-to-token table.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "engines/sglang/sglang_rules.h"
#include "headroom/error.h"

namespace headroom::sglang {

// server_args.py: Era 1/2 chunked prefill; Era B table in arg_groups (GPU tiers in MiB).
int64_t default_chunked_prefill_size(Era era, int64_t gpu_mem_mib, int tp, bool small_tier_raised) {
  if (gpu_mem_mib <= 0) return 4096;
  switch (era) {
    case Era::V2024: return gpu_mem_mib < 25000 ? 2048 : 8192;
    case Era::Mid2025:
      if (gpu_mem_mib < 35 * 1024) return 2048;
      if (gpu_mem_mib < 160 * 1024) return 8192;
      return 16384;
    case Era::Late2025:
    case Era::Y2026:
      if (gpu_mem_mib < 20 * 1024) return 2048;
      if (gpu_mem_mib < 35 * 1024) return era == Era::Y2026 && small_tier_raised ? 4096 : 2048;
      if (gpu_mem_mib < 60 * 1024) return 4096;
      if (gpu_mem_mib < 160 * 1024) return 8192;
      return 16384;
  }
  return 8192;
}

// cuda_graph_max_bs default: Era A (cuda_graph_runner.py) only small GPUs had a cap; Era B
// (PR #10975, PR #10990 for H200 tp<=4) a tier table.
int64_t default_cuda_graph_max_bs(Era era, int64_t gpu_mem_mib, int tp, bool speculative, bool small_tier_raised) {
  if (era == Era::V2024 || era == Era::Mid2025) {
    if (gpu_mem_mib > 0 && gpu_mem_mib < 35 * 1024) return tp < 4 ? 8 : 80;
    // No explicit cap: the list itself ends at 160 / 256 / 512 by GPU size (§3.2 Era A).
    if (gpu_mem_mib > 160 * 1000) return 512;
    if (gpu_mem_mib > 96 * 1024) return 256;
    return 160;
  }
  if (gpu_mem_mib <= 0) return 160;
  if (gpu_mem_mib < 20 * 1024) return 8;
  if (gpu_mem_mib < 35 * 1024) return era == Era::Y2026 && small_tier_raised ? (tp < 4 ? 48 : 160) : (tp < 4 ? 24 : 80);
  if (gpu_mem_mib < 60 * 1024) return tp < 4 ? 32 : 160;
  if (gpu_mem_mib < 160 * 1024) return tp < 4 ? 256 : 512;
  return 512;
}

namespace {
double round3(double x) { return std::round(x * 1000.0) / 1000.0; }

// ViT-L/14 baseline adjustment for multimodal models (server_args.py adjust_mem_fraction_for_vlm,
// 2025+): vit_num_layers = getattr(vision_config, "num_hidden_layers", 24), vit_hidden_size =
// getattr(vision_config, "hidden_size", 1024) -- a tower whose config does not expose them counts as
// the ViT-L/14 baseline (factor 0.95) -- and mem_fraction_static = f * 0.95 * clamp(1 - 0.1 (ratio - 1),
// 0.8, 1.05), assigned without rounding (only the reserve-based f before it is round()ed to 3
// places). Real log: Kimi-K2.5 on MI355X, v0.5.8.post1, prints mem_fraction_static=0.8260405859375
// = 0.908 x 0.95 x 0.9576171875 (MoonViT 27 layers x 1152: ratio 1.423828125), tests/data/extra xsgl-005.
double vlm_adjust(double f, const DefaultInputs& in) {
  if (!in.multimodal) return f;
  const double layers = in.vit_layers > 0 ? static_cast<double>(in.vit_layers) : 24.0;
  const double hidden = in.vit_hidden > 0 ? static_cast<double>(in.vit_hidden) : 1024.0;
  double c = layers * hidden * hidden / (24.0 * 1024.0 * 1024.0);
  return f * 0.95 * std::clamp(1.0 - 0.1 * (c - 1.0), 0.8, 1.05);
}
}  // namespace

double default_mem_fraction_static(Era era, const DefaultInputs& in, double* reserve_mib) {
  const double gpu = static_cast<double>(in.gpu_mem_mib);
  const double p = static_cast<double>(in.tp) * in.pp;
  if (reserve_mib) *reserve_mib = 0;
  if (era == Era::V2024) {
    // server_args.py 2024/early 2025: by TP size (0.83 for TP>=8 before 2025, 0.81 after).
    int t = in.tp;
    double f = t >= 16 ? 0.79 : t >= 8 ? 0.81 : t >= 4 ? 0.85 : t >= 2 ? 0.87 : 0.88;
    return f;
  }
  if (in.gpu_mem_mib <= 0) return era == Era::Y2026 ? 0.95 : 0.88;
  double reserve = 0;
  if (era == Era::Mid2025) {
    // PR #7054 "Simplify the heuristics for setting --mem-fraction-static".
    if (gpu < 35 * 1024) reserve = (2.8 + p / 10) * 1024;
    else if (gpu < 90 * 1024) reserve = (9.5 + p / 2) * 1024;
    else if (gpu < 160 * 1024) reserve = (12 + p / 2) * 1024;
    else reserve = 32 * 1024;
    if (in.dp_attention) reserve += 4 * 1024;
    if (in.standalone_spec) reserve += 6 * 1024;
    else if (in.speculative) reserve += 2 * 1024;
  } else if (era == Era::Late2025) {
    // PR #10975 server_args._handle_gpu_memory_settings.
    double act = in.chunked_prefill_size > 0 ? static_cast<double>(in.chunked_prefill_size) : static_cast<double>(in.max_prefill_tokens);
    reserve = 512 + std::max(act, 2048.0) * 1.5 + static_cast<double>(in.cuda_graph_max_bs) * 2 + p / 8 * 1024;
    if (in.dp_attention) {
      double t = static_cast<double>(in.cuda_graph_max_bs) * in.dp * 3;
      if (in.cuda_graph_max_bs > 300) t *= 1.5;
      reserve += t;
    }
    if (in.piecewise_graph) reserve += static_cast<double>(in.piecewise_buckets) * 8;
    if (gpu > 60 * 1024) reserve = std::max(reserve, 10.0 * 1024);
    if (in.standalone_spec) reserve += 6 * 1024;
    else if (in.speculative) reserve += 2 * 1024;
  } else {
    // arg_groups/memory_hook.py handle_gpu_memory_settings (newest).
    double act = in.chunked_prefill_size > 0 ? static_cast<double>(in.chunked_prefill_size) : static_cast<double>(in.max_prefill_tokens);
    act = std::max(act, 2048.0);
    double graph = static_cast<double>(in.cuda_graph_max_bs) * 2;
    if (in.dp_attention) {
      double t = static_cast<double>(in.cuda_graph_max_bs) * in.dp * 3;
      if (in.cuda_graph_max_bs > 300) t *= 1.5;
      graph += t;
    }
    if (in.prefill_graph) graph += in.mla ? 1.5 * 1024 : static_cast<double>(in.prefill_graph_buckets) * 8;
    reserve = 512 + 1.5 * act + p / 8 * 1024 + graph;
    if (gpu > 60 * 1024) reserve = std::max(reserve, 10.0 * 1024);
    if (in.deepep) reserve += 2 * 1024;
  }
  if (reserve_mib) *reserve_mib = reserve;
  double f = round3((gpu - reserve) / gpu);
  return vlm_adjust(f, in);
}

std::vector<int64_t> capture_batch_sizes(Era era, int64_t max_bs, bool speculative, bool disable_padding,
                                         int64_t gpu_mem_mib, int dp, bool dp_attention) {
  std::vector<int64_t> v;
  auto range = [&](int64_t a, int64_t b, int64_t s) {
    for (int64_t x = a; x < b; x += s) v.push_back(x);
  };
  if (disable_padding) {
    range(1, max_bs + 1, 1);
    return v;
  }
  if (era == Era::V2024 || era == Era::Mid2025) {
    // cuda_graph_runner.get_batch_sizes_to_capture, Era A (PR #5604 extensions by GPU size).
    if (speculative) {
      range(1, 9, 1); range(10, 33, 2); range(40, 161, 16);
    } else {
      v = {1, 2, 4, 8};
      range(16, 161, 8);
    }
    if (gpu_mem_mib > 96 * 1024 && (dp == 1 || !dp_attention)) range(168, 257, 8);
    if (gpu_mem_mib > 160 * 1000 && (dp == 1 || !dp_attention)) range(272, 513, 16);
  } else {
    // arg_groups/cuda_graph_hook.generate_decode_cuda_graph_batch_sizes.
    if (speculative) {
      range(1, 9, 1); range(10, 33, 2); range(40, 65, 4); range(72, 257, 8); range(272, max_bs + 1, 16);
    } else {
      v = {1, 2, 4, 8, 12};
      range(16, 257, 8); range(272, 512, 16); range(512, max_bs + 1, 32);
    }
  }
  std::vector<int64_t> out;
  for (int64_t b : v)
    if (b <= max_bs) out.push_back(b);
  // Era B appends max_bs when the generated list misses it (PR #21005, 2026-03-20); Era A
  // appended range(max(list), max_bs+1, 16) when --cuda-graph-max-bs was larger.
  if (era == Era::Y2026 && (out.empty() || out.back() != max_bs)) out.push_back(max_bs);
  if ((era == Era::V2024 || era == Era::Mid2025) && !out.empty() && out.back() < max_bs)
    for (int64_t b = out.back() + 16; b <= max_bs; b += 16) out.push_back(b);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// cuda_graph_runner.get_batch_sizes_to_capture: sizes above the request pool are dropped and
// the pool size (rounded up to mul_base) appended.
std::vector<int64_t> filter_by_pool(std::vector<int64_t> bs, int64_t req_pool_size, int mul_base) {
  if (mul_base < 1) mul_base = 1;
  int64_t num_max = (req_pool_size + mul_base - 1) / mul_base * mul_base;
  std::vector<int64_t> out;
  bool over = false;
  for (int64_t b : bs) {
    if (b > num_max) { over = true; continue; }
    if (b % mul_base == 0) out.push_back(b);
  }
  if (over && (out.empty() || out.back() != num_max)) out.push_back(num_max);
  return out;
}

std::vector<int64_t> prefill_graph_buckets(int64_t max_tokens) {
  std::vector<int64_t> v;
  auto range = [&](int64_t a, int64_t b, int64_t s) {
    for (int64_t x = a; x < b && x <= max_tokens; x += s) v.push_back(x);
  };
  range(4, 33, 4); range(48, 257, 16); range(288, 513, 32); range(576, 1025, 64); range(1280, 4097, 256);
  range(4608, max_tokens + 1, 512);
  return v;
}

// server_args backend fix-ups (newest arg_groups/overrides.py): DSA 64, FlashMLA 64,
// CUTLASS MLA 128, TRT-LLM MLA/MHA 64.
int64_t forced_page_size(const ModelConfig& c, const std::string& backend, int64_t user_page_size) {
  if (c.has_indexer() && c.mla) return 64;
  if (backend == "flashmla") return 64;
  if (backend == "cutlass_mla") return 128;
  if (backend == "trtllm_mla" || backend == "trtllm_mha") return 64;
  return user_page_size > 0 ? user_page_size : 1;
}

std::string resolve_kv_dtype(const ModelConfig& c, const std::string& v, int sm) {
  static const char* kChoices[] = {"auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16", "fp4_e2m1", "float16", "fp16"};
  if (std::find(std::begin(kChoices), std::end(kChoices), v) == std::end(kChoices))
    fail_input("command line", "--kv-cache-dtype",
               fmt::format("argument --kv-cache-dtype: invalid choice: '{}' (choose from 'auto', 'fp8_e5m2', 'fp8_e4m3', 'bf16', 'bfloat16', 'fp4_e2m1')", v));
  if (v != "auto") return v == "bf16" ? "bfloat16" : (v == "fp16" ? "float16" : v);
  // A checkpoint that quantized its KV scales (ModelOpt kv_cache_quant_algo FP8) gets an FP8 cache.
  if (c.quant.kv_cache_quant_hf_loaders() == "FP8") return "fp8_e4m3";
  // DSA models: fp8_e4m3 on SM >= 100, bfloat16 on Hopper (_set_default_nsa_kv_cache_dtype).
  if (c.has_indexer() && c.mla) return sm >= 100 ? "fp8_e4m3" : "bfloat16";
  return c.dtype == DType::F16 ? "float16" : "bfloat16";
}

// model_runner (v0.4/0.5) and the newest pool configurator (§2.7).
RequestPool request_pool(Era era, int64_t tokens, int64_t context_len, std::optional<int64_t> user, int attn_dp,
                         int64_t extra_width) {
  RequestPool rp;
  rp.width = context_len + 4 + extra_width;
  int64_t estimated = std::clamp<int64_t>(static_cast<int64_t>(static_cast<double>(tokens) / static_cast<double>(context_len) * 512), 2048, 4096);
  if (attn_dp < 1) attn_dp = 1;
  if (era == Era::Y2026) {
    int64_t r = user ? *user / attn_dp : estimated;
    rp.max_running_requests = std::max<int64_t>(0, std::min(r, tokens / 2));
    rp.rows = rp.max_running_requests + 1;  // +1 padding row inside ReqToTokenPool
  } else {
    int64_t pool = user ? *user : estimated;
    int64_t r = user ? *user / attn_dp : tokens / 2;
    rp.max_running_requests = std::max<int64_t>(0, std::min(r, pool));
    rp.rows = pool;
  }
  return rp;
}

}  // namespace headroom::sglang
