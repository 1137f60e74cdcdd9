// SGLang's Mamba / GDN state pool for hybrid models (Qwen3.5, Qwen3-Next): which flag sets the
// slot count K (handle_max_mamba_cache in model_runner_kv_cache_mixin.py v0.5.9 and
// kv_cache_configurator.py 2026) and what the KV pool keeps after it. Replayed on the xsgl-013
// deployment (Qwen3.5-9B, 2 x RTX 4090, TP2, --mem-fraction-static 0.8, main@2026-04-14) with the
// log's own free-memory figures: "Load weight begin. avail mem=22.93 GB", "Load weight end ...
// avail mem=14.08 GB" (tests/data/extra/sglang.jsonl). Also the version rule that decides whether
// --disable-cuda-graph switches the piecewise prefill graph off.
#include <gtest/gtest.h>

#include "engines/sglang/sglang_rules.h"
#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/units.h"

using namespace headroom;

namespace {
Forecast qwen35_9b(std::vector<std::string> extra) {
  std::vector<std::string> a{"--engine", "sglang@main@2026-04-14", "--model", "Qwen/Qwen3.5-9B", "--gpu", "rtx-4090", "--tp", "2",
                             "--mem-fraction-static", "0.8", "--context-length", "262144"};
  a.insert(a.end(), extra.begin(), extra.end());
  PlanOptions o;
  o.pre_load_free_bytes = gib_to_bytes(22.93);
  o.post_load_free_bytes = gib_to_bytes(14.08);
  return plan(parse_deployment(Args::parse(a)), o);
}
}  // namespace

// Per request and rank: 24 GDN layers x (conv 4,096 channels x 3 taps x 2 B = 24,576 B + SSM
// 16 value heads x 128 x 128 x 4 B = 1,048,576 B) = 25,755,648 B. rest = 14.08 - 22.93 x 0.2 =
// 9.494 GiB = 10,194,104,877 B. KV cell: 8 full layers x 2 KV heads x 256 x 2 (K, V) x 2 B = 16,384 B.
// The pool keeps (rest - (K + 1) x per_req) // 16,384 tokens (the +1 is the 2026 padding slot).

TEST(SglangMamba, RatioSplitSizesThePoolByDefault) {
  // K = int(rest x 0.9 / 1.9 // per_req) = int(187.48) = 187 (the log printed 186: its avail
  // figures are rounded to 0.01 GB); tokens = (rest - 188 x per_req) // 16,384 = 326,662 (logged
  // 327,310, -0.2%).
  EXPECT_EQ(qwen35_9b({}).kv_tokens, 326662);
}

TEST(SglangMamba, MaxRunningRequestsAloneDoesNotSizeThePool) {
  // With the radix cache on, --max-running-requests only caps the requests; K stays the ratio's
  // 187 and the pool its 326,662 tokens. (headroom used K = 32 before: 570,322 tokens, +75%.)
  Forecast f = qwen35_9b({"--max-running-requests", "32"});
  EXPECT_EQ(f.kv_tokens, 326662);
  EXPECT_EQ(f.max_running_requests, 32);
}

TEST(SglangMamba, NoRadixCacheTakesMaxRunningRequestsAsTheSlotCount) {
  // --disable-radix-cache with --max-running-requests 32: K = 32, tokens = (rest - 33 x per_req)
  // // 16,384 = 570,322; the request cap is K // 1 = 32.
  Forecast f = qwen35_9b({"--disable-radix-cache", "--max-running-requests", "32"});
  EXPECT_EQ(f.kv_tokens, 570322);
  EXPECT_EQ(f.max_running_requests, 32);
}

TEST(SglangMamba, MaxMambaCacheSizeIsTakenAsGiven) {
  // --max-mamba-cache-size 100: K = 100 (real logs print the flag's value back: "--max-mamba-cache-size
  // 360" -> "max_mamba_cache_size: 360", DGX Spark, public-code index id 69213517065), tokens =
  // (rest - 101 x per_req) // 16,384 = 463,426; requests capped at K // 3 = 33.
  Forecast f = qwen35_9b({"--max-mamba-cache-size", "100"});
  EXPECT_EQ(f.kv_tokens, 463426);
  EXPECT_EQ(f.max_running_requests, 33);
}

TEST(SglangMamba, PiecewiseGraphEraFromVersion) {
  // "Capture piecewise CUDA graph" builds (0.5.13 with --disable-cuda-graph still captured it,
  // tests/data/extra xsgl-020) vs the cuda_graph_config rework (0.5.17, main@2026-07-21 logs).
  EXPECT_TRUE(sglang::legacy_piecewise_graph(sglang::era_for_version("0.5.13")));
  EXPECT_TRUE(sglang::legacy_piecewise_graph(sglang::era_for_version("0.5.13.post1")));
  EXPECT_TRUE(sglang::legacy_piecewise_graph(sglang::era_for_version("main@2026-05-24")));
  EXPECT_FALSE(sglang::legacy_piecewise_graph(sglang::era_for_version("0.5.17")));
  EXPECT_FALSE(sglang::legacy_piecewise_graph(sglang::era_for_version("main@2026-07-21")));
  EXPECT_FALSE(sglang::legacy_piecewise_graph(sglang::era_for_version("")));
}

TEST(SglangMamba, SsmDtypeFlagSizesTheState) {
  // Qwen3-Next-80B at TP2, per request: 36 Gated-DeltaNet layers x (conv (2 x 16 x 128 + 32 x 128) / 2
  // x 3 x 2 B = 24,576 + SSM 32 / 2 x 128 x 128 x 4 B = 1,048,576) = 38,633,472 B in float32 (the
  // default); --mamba-ssm-dtype bfloat16 halves the SSM part: 36 x (24,576 + 524,288) = 19,759,104 B.
  const Model& m = *load_model("Qwen/Qwen3-Next-80B-A3B-Instruct");
  Parallel par;
  par.tp = 2;
  EXPECT_EQ(sglang_kv_per_token(m.config, par, "auto", 90, 0).state_bytes_per_request, 38633472);
  EXPECT_EQ(sglang_kv_per_token(m.config, par, "auto", 90, 0, 2).state_bytes_per_request, 19759104);
}
