// SGLang's rules by era, pinned with values computed by hand from the formulas in
// research/sglang-memory.md §2-3 (the arithmetic is in each comment).
#include <gtest/gtest.h>

#include "engines/sglang/sglang_rules.h"
#include "headroom/error.h"
#include "headroom/kv.h"
#include "headroom/model.h"

using namespace headroom;
using namespace headroom::sglang;

TEST(SglangEra, VersionStrings) {
  EXPECT_EQ(era_for_version("").era, Era::Y2026);
  EXPECT_EQ(era_for_version("0.3.3.post1").era, Era::V2024);
  EXPECT_EQ(era_for_version("0.4.8.post1").era, Era::Mid2025);
  EXPECT_EQ(era_for_version("0.5.4").era, Era::Late2025);
  EXPECT_EQ(era_for_version("0.5.15").era, Era::Y2026);
  EXPECT_EQ(era_for_version("main@2025-10-16").era, Era::Late2025);
  EXPECT_EQ(era_for_version("unknown@2025-07-22").era, Era::Mid2025);
  EXPECT_EQ(era_for_version("docker@2025-04").era, Era::V2024);
  EXPECT_THROW(era_for_version("banana"), InputError);
}

static DefaultInputs inputs(int64_t gpu_mib, int tp, Era era, bool mla = false) {
  DefaultInputs in;
  in.gpu_mem_mib = gpu_mib;
  in.tp = tp;
  in.mla = mla;
  in.chunked_prefill_size = default_chunked_prefill_size(era, gpu_mib, tp);
  in.cuda_graph_max_bs = default_cuda_graph_max_bs(era, gpu_mib, tp, false);
  return in;
}

TEST(SglangDefaults, MemFractionEra1ByTp) {
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::V2024, inputs(81559, 8, Era::V2024)), 0.81);
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::V2024, inputs(81559, 1, Era::V2024)), 0.88);
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::V2024, inputs(81559, 2, Era::V2024)), 0.87);
}

TEST(SglangDefaults, MemFractionEra2Tiers) {
  // H100 TP8: reserve (9.5 + 8/2) * 1024 = 13824 MiB; (81559 - 13824) / 81559 = 0.8305 -> 0.831.
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::Mid2025, inputs(81559, 8, Era::Mid2025)), 0.831);
  // H200 TP1: reserve (12 + 0.5) * 1024 = 12800; (143771 - 12800) / 143771 = 0.91097 -> 0.911.
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::Mid2025, inputs(143771, 1, Era::Mid2025)), 0.911);
}

TEST(SglangDefaults, MemFractionEra3Reserve) {
  // RTX 4090 TP1: chunked 2048, max_bs 24: 512 + 2048*1.5 + 24*2 + 1/8*1024 = 3760 MiB;
  // (24564 - 3760) / 24564 = 0.84693 -> 0.847.
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::Late2025, inputs(24564, 1, Era::Late2025)), 0.847);
  // H100 TP8: chunked 8192, max_bs 512: 512 + 12288 + 1024 + 1024 = 14848 (> 10240 floor);
  // (81559 - 14848) / 81559 = 0.81795 -> 0.818.
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::Late2025, inputs(81559, 8, Era::Late2025)), 0.818);
}

TEST(SglangDefaults, MemFractionEra4WithGraphReserve) {
  // H200 TP8 non-MLA, prefill graph on with 58 buckets (max 8192): graph = 512*2 + 58*8 = 1488;
  // reserve = 512 + 1.5*8192 + 1024 + 1488 = 15312; (143771 - 15312)/143771 = 0.89350 -> 0.893.
  DefaultInputs in = inputs(143771, 8, Era::Y2026);
  in.prefill_graph = true;
  in.prefill_graph_buckets = static_cast<int64_t>(prefill_graph_buckets(8192).size());
  EXPECT_EQ(in.prefill_graph_buckets, 58);
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::Y2026, in), 0.893);
  // MLA: prefill graph reserve is 1.5 GiB: reserve = 512 + 12288 + 1024 + 1024 + 1536 = 16384 -> 0.886.
  in.mla = true;
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::Y2026, in), 0.886);
  // Seed deployment: RTX PRO 6000 (97887 MiB) TP8, GLM-5 (MLA, prefill graph off for DSA):
  // reserve = 512 + 12288 + 1024 + 512*2 = 14848; (97887 - 14848)/97887 = 0.84831 -> 0.848.
  DefaultInputs seed = inputs(97887, 8, Era::Y2026, true);
  EXPECT_EQ(seed.chunked_prefill_size, 8192);
  EXPECT_EQ(seed.cuda_graph_max_bs, 512);
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::Y2026, seed), 0.848);
  // Unknown GPU memory: 0.95 in the newest era, 0.88 before.
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::Y2026, inputs(0, 1, Era::Y2026)), 0.95);
  EXPECT_DOUBLE_EQ(default_mem_fraction_static(Era::Late2025, inputs(0, 1, Era::Late2025)), 0.88);
}

TEST(SglangDefaults, ChunkedPrefillAndMaxBsTiers) {
  EXPECT_EQ(default_chunked_prefill_size(Era::Late2025, 143771, 8), 8192);
  EXPECT_EQ(default_chunked_prefill_size(Era::Late2025, 183359, 8), 16384);
  EXPECT_EQ(default_chunked_prefill_size(Era::Y2026, 32607, 1), 4096);     // newest 5090 tier
  EXPECT_EQ(default_chunked_prefill_size(Era::Late2025, 32607, 1), 2048);
  EXPECT_EQ(default_cuda_graph_max_bs(Era::Late2025, 143771, 2, false), 256);  // PR #10990: "256 if tp < 4" on H200
  EXPECT_EQ(default_cuda_graph_max_bs(Era::Late2025, 143771, 4, false), 512);
  EXPECT_EQ(default_cuda_graph_max_bs(Era::Late2025, 143771, 8, false), 512);
  EXPECT_EQ(default_cuda_graph_max_bs(Era::Y2026, 24564, 1, false), 48);
  // Before PR #37898 (2026-09) the 2026 rules kept 2048 / 24 (80 at tp >= 4) on 20-35 GiB cards: a
  // 2026-04-14 RTX 4090 TP2 log captures "bs [1, 2, 4, 8, 12, 16, 24]" and prints
  // chunked_prefill_size=2048 (tests/data/extra xsgl-013).
  EXPECT_EQ(default_cuda_graph_max_bs(Era::Y2026, 24564, 2, false, false), 24);
  EXPECT_EQ(default_cuda_graph_max_bs(Era::Y2026, 24564, 4, false, false), 80);
  EXPECT_EQ(default_chunked_prefill_size(Era::Y2026, 24564, 2, false), 2048);
  EXPECT_EQ(default_chunked_prefill_size(Era::Y2026, 46068, 2, false), 4096);  // the 35-60 GiB tier did not move
}

TEST(SglangCapture, EraBListCounts) {
  // cuda_graph_hook: counts 8->4, 24->7, 48->10, 80->14, 160->24, 256->36, 512->52 (§3.2; a
  // 2025-10 log with max_bs 512 shows exactly 52 sizes, corpus sglang-001).
  const std::pair<int64_t, size_t> expect[] = {{8, 4}, {24, 7}, {48, 10}, {80, 14}, {160, 24}, {256, 36}, {512, 52}};
  for (auto [bs, n] : expect) EXPECT_EQ(capture_batch_sizes(Era::Late2025, bs, false, false, 143771, 1, false).size(), n) << bs;
  auto l = capture_batch_sizes(Era::Late2025, 512, false, false, 143771, 1, false);
  EXPECT_EQ(l.front(), 1);
  EXPECT_EQ(l[4], 12);
  EXPECT_EQ(l.back(), 512);
  // Newest appends max_bs when the generated list misses it (PR #21005): 100 -> ..., 96, 100.
  auto n = capture_batch_sizes(Era::Y2026, 100, false, false, 143771, 1, false);
  EXPECT_EQ(n.back(), 100);
  EXPECT_EQ(n[n.size() - 2], 96);
}

TEST(SglangCapture, RequestPoolFilter) {
  // Sizes above the request pool are dropped and the pool size appended (get_batch_sizes_to_capture).
  auto f = filter_by_pool({1, 2, 4, 8, 12, 16, 24, 32}, 20, 1);
  EXPECT_EQ(f, (std::vector<int64_t>{1, 2, 4, 8, 12, 16, 20}));
  EXPECT_EQ(filter_by_pool({1, 2, 4, 8}, 100, 1), (std::vector<int64_t>{1, 2, 4, 8}));
}

TEST(SglangRequests, DocExample) {
  // hyperparameter_tuning.md: max_total_num_tokens=665690, context_len=65536 ->
  // int(665690/65536*512) = 5200 -> clamp(2048, 4096) = 4096; tokens//2 = 332845 -> 4096.
  RequestPool rp = request_pool(Era::Y2026, 665690, 65536, std::nullopt, 1, 0);
  EXPECT_EQ(rp.max_running_requests, 4096);
  EXPECT_EQ(rp.width, 65540);
  EXPECT_EQ(rp.rows, 4097);
  // User value divided across attention-DP workers and capped by tokens//2.
  EXPECT_EQ(request_pool(Era::Y2026, 1000, 65536, int64_t{4096}, 8, 0).max_running_requests, 500);
  // v0.5.x: the pool has max_num_reqs rows (estimated 2048 here: 20000/131072*512 = 78 -> 2048).
  RequestPool old = request_pool(Era::Late2025, 20000, 131072, std::nullopt, 1, 0);
  EXPECT_EQ(old.rows, 2048);
  EXPECT_EQ(old.max_running_requests, 2048);
  // ReqToTokenPool bytes: R=4096 rows at context 131072: 4096 x 131076 x 4 B = 2.0 GiB.
  RequestPool big = request_pool(Era::Late2025, 10'000'000, 131072, std::nullopt, 1, 0);
  EXPECT_EQ(big.bytes(), int64_t{4096} * 131076 * 4);
}

TEST(SglangKv, PageAndDtype) {
  ModelConfig dsa;
  dsa.mla = true;
  dsa.index_topk = 2048;
  dsa.index_head_dim = 128;
  EXPECT_EQ(forced_page_size(dsa, "nsa", 1), 64);
  ModelConfig dense;
  EXPECT_EQ(forced_page_size(dense, "flashmla", 1), 64);
  EXPECT_EQ(forced_page_size(dense, "cutlass_mla", 1), 128);
  EXPECT_EQ(forced_page_size(dense, "flashinfer", 16), 16);
  EXPECT_EQ(resolve_kv_dtype(dsa, "auto", 120), "fp8_e4m3");  // DSA on SM >= 100
  EXPECT_EQ(resolve_kv_dtype(dsa, "auto", 90), "bfloat16");   // DSA on Hopper
  EXPECT_EQ(resolve_kv_dtype(dense, "auto", 90), "bfloat16");
  EXPECT_EQ(resolve_kv_dtype(dense, "fp8_e5m2", 90), "fp8_e5m2");
  EXPECT_THROW(resolve_kv_dtype(dense, "int3", 90), InputError);
}
