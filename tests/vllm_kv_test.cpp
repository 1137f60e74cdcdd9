// vLLM KV arithmetic pinned by hand-computed values and real log figures: page sizes,
// hybrid grouping, blocks -> tokens -> concurrency, the capacity check and its estimated
// maximum model length, pipeline split, era table and capture sizes.
#include <gtest/gtest.h>

#include <cmath>

#include "engines/vllm/vllm_kv.h"
#include "engines/vllm/vllm_rules.h"
#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/error.h"
#include "headroom/kv.h"
#include "headroom/units.h"

using namespace headroom;
using namespace headroom::vllm;

namespace {

ModelConfig dense(int64_t layers, int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t hidden) {
  ModelConfig c;
  c.num_layers = layers;
  c.num_attention_heads = heads;
  c.num_kv_heads = kv_heads;
  c.head_dim = head_dim;
  c.hidden_size = hidden;
  c.max_position_embeddings = 40960;
  c.layers.assign(layers, LayerInfo{});
  return c;
}

// Qwen3-Next-80B-A3B: 48 layers, full attention every 4th, 2 KV heads x 256; GDN 16 key
// heads x 128, 32 value heads x 128, conv kernel 4 (data/models/Qwen/Qwen3-Next-80B-A3B-Instruct).
ModelConfig qwen3_next() {
  ModelConfig c = dense(48, 16, 2, 256, 2048);
  c.max_position_embeddings = 262144;
  for (int i = 0; i < 48; ++i) c.layers[i].attn = (i % 4 == 3) ? AttnKind::Full : AttnKind::Linear;
  c.linear_num_key_heads = 16;
  c.linear_num_value_heads = 32;
  c.linear_key_head_dim = 128;
  c.linear_value_head_dim = 128;
  c.linear_conv_kernel_dim = 4;
  return c;
}

// gpt-oss-120b: 36 layers alternating sliding (128) / full, 8 KV heads x 64.
ModelConfig gpt_oss_120b() {
  ModelConfig c = dense(36, 64, 8, 64, 2880);
  c.max_position_embeddings = 131072;
  c.sliding_window = 128;
  for (int i = 0; i < 36; ++i) c.layers[i].attn = (i % 2 == 0) ? AttnKind::Sliding : AttnKind::Full;
  return c;
}

KvDtype bf16() { return resolve_kv_dtype(era_for_version("0.10.2"), "auto", DType::BF16, Quantization{}, false); }

}  // namespace

TEST(VllmKv, Qwen3_8B_PageAndBlocksMatchLog) {
  // research §10.2 (log of 2025-09, Qwen3-8B bf16 KV, 1 GPU): "Available KV cache memory:
  // 8.60 GiB" from avail = 9,232,221,491 B; page = 16 tokens x 8 heads x (128 + 128) x 2 B =
  // 65,536 B per layer; floor(floor(9,232,221,491 / 65,536) / 36) = floor(140,872 / 36) = 3,913
  // blocks; 3,913 x 16 = 62,608 tokens ("GPU KV cache size: 62,608 tokens").
  ModelConfig c = dense(36, 32, 8, 128, 4096);
  Era era = era_for_version("0.10.2");
  auto specs = layer_specs(c, Parallel{}, bf16(), 0);
  ASSERT_EQ(specs.size(), 36u);
  EXPECT_EQ(specs[0].bytes_per_token, 8 * 256 * 2);
  KvLayout l = kv_layout(specs, 16, false, era);
  EXPECT_TRUE(l.uniform);
  EXPECT_EQ(l.page_bytes, 65536);
  EXPECT_EQ(l.tensors, 36);
  int64_t blocks = num_blocks(l, 9232221491LL);
  EXPECT_EQ(blocks, 3913);
  EXPECT_EQ(kv_tokens(era, l, blocks, 40960, 2048), 62608);
}

TEST(VllmKv, TpSplitsKvHeadsAndReplicatesBelowOneHead) {
  // 8 KV heads: TP4 -> 2 per rank (2 x 256 x 2 = 1,024 B/token/layer); TP16 -> max(1, 8/16) = 1.
  ModelConfig c = dense(2, 32, 8, 128, 4096);
  Parallel p4;
  p4.tp = 4;
  EXPECT_EQ(layer_specs(c, p4, bf16(), 0)[0].bytes_per_token, 1024);
  Parallel p16;
  p16.tp = 16;
  EXPECT_EQ(layer_specs(c, p16, bf16(), 0)[0].bytes_per_token, 512);
}

TEST(VllmKv, Qwen3NextHybridMatchesVllm048) {
  // vllm-048 (vLLM 0.10.2, H200, TP2): "Setting attention block size to 544 tokens",
  // "Current kv cache memory in use is 47878721024 bytes", "GPU KV cache size: 973,760 tokens",
  // "Maximum concurrency for 262,144 tokens per request: 14.77x".
  // Per rank: attention 1 KV head x (256 + 256) x 2 B = 1,024 B/token. GDN state:
  // conv (4-1) x (2*16*128 + 32*128)/2 x 2 B = 3 x 4,096 x 2 = 24,576; ssm 16 x 128 x 128 x 2 = 524,288;
  // total 548,864 B. Block = 16 * cdiv(548,864, 16 * 1,024) = 16 * 34 = 544; page = 544 x 1,024 = 557,056.
  // 12 full + 36 GDN layers: group_size 12, 4 groups. blocks = floor(floor(47,878,721,024 / 557,056) / 12)
  // = floor(85,949 / 12) = 7,162. Tokens (2025) = 7,162 // 4 * 544 = 973,760.
  // Concurrency: per request 482 + 3 blocks -> 7,162 / 485 = 14.767.
  ModelConfig c = qwen3_next();
  Parallel p;
  p.tp = 2;
  Era era = era_for_version("0.10.2");
  auto specs = layer_specs(c, p, bf16(), 0);
  ASSERT_EQ(specs.size(), 48u);
  EXPECT_EQ(specs[0].mamba_bytes, 548864);
  KvLayout l = kv_layout(specs, 16, false, era);
  EXPECT_EQ(l.block_size, 544);
  EXPECT_EQ(l.page_bytes, 557056);
  EXPECT_EQ(l.tensors, 12);
  EXPECT_EQ(l.num_groups, 4);
  int64_t blocks = num_blocks(l, 47878721024LL);
  EXPECT_EQ(blocks, 7162);
  EXPECT_EQ(kv_tokens(era, l, blocks, 262144, 8192), 973760);
  EXPECT_NEAR(max_concurrency(l, blocks, 262144, 8192), 14.767, 0.001);
  ASSERT_FALSE(l.notes.empty());
  EXPECT_EQ(l.notes[0], "Setting attention block size to 544 tokens to ensure that attention page size is >= mamba page size.");
}

TEST(VllmKv, AGivenBlockSizeIsTheHybridAlignmentFrom019) {
  // vllm/platforms/interface.py _align_hybrid_block_size (PR #37467, 2026-03): the alignment is
  // max(the backend's smallest kernel block, cache_config.block_size). The Qwen3-Next state of
  // 548,864 B per rank at TP2 with --block-size 128: 128 x cdiv(548,864, 128 x 1,024) = 640 tokens
  // (16 gives 544, as 0.10.2 logged for vllm-048 without the flag). Real log: xvllm-068,
  // Qwen3.6-35B-A3B --block-size 128 on 0.29.0 -> 1,152-token pages, 207,842 tokens exactly.
  ModelConfig c = qwen3_next();
  Parallel p;
  p.tp = 2;
  auto specs = layer_specs(c, p, bf16(), 0);
  EXPECT_EQ(kv_layout(specs, 128, true, era_for_version("0.29.0")).block_size, 640);
  EXPECT_EQ(kv_layout(specs, 16, false, era_for_version("0.29.0")).block_size, 544);
  EXPECT_EQ(kv_layout(specs, 128, true, era_for_version("0.10.2")).block_size, 544);
  // A given block at or above the need stays as given.
  EXPECT_EQ(kv_layout(specs, 1024, true, era_for_version("0.29.0")).block_size, 1024);
}

TEST(VllmKv, GptOssNeededBytesMatchVllm005) {
  // vllm-005: "To serve at least one request with the models's max seq len (131072), (4.54 GiB KV
  // cache is needed". Page = 16 x 8 x (64 + 64) x 2 = 32,768 B. Full: 18 layers x cdiv(131,072, 16)
  // = 8,192 blocks -> 4,831,838,208 B. Sliding: 18 x (cdiv(min(128 - 1 + 1,024, 131,072), 16) + 1)
  // = 18 x 73 blocks -> 43,057,152 B. Sum 4,874,895,360 B = 4.54 GiB.
  ModelConfig c = gpt_oss_120b();
  Era era = era_for_version("unknown@2025-10-31");
  KvLayout l = kv_layout(layer_specs(c, Parallel{}, bf16(), 0), 16, false, era);
  EXPECT_EQ(l.tensors, 18);
  EXPECT_EQ(l.num_groups, 2);
  int64_t need = needed_bytes(l, 131072, 1024);
  EXPECT_EQ(need, 4874895360LL);
  EXPECT_EQ(gib2(need), "4.54");
  // Estimated maximum model length with 1.71 GiB: the largest L with 18 x 32,768 x (cdiv(L,16)
  // + cdiv(min(L, 1,151), 16) + 1) <= 1.71 GiB. 1.71 GiB = 1,836,098,519 B -> / 589,824 = 3,112.9
  // blocks of all 18 layers; sliding part 73 at L >= 1,151, so cdiv(L,16) <= 3,039 -> L = 48,624.
  int64_t avail = static_cast<int64_t>(1.71 * GiB);
  EXPECT_EQ(estimate_max_model_len(l, avail, 131072, 1024), 48624);
}

TEST(VllmKv, TokensFromConcurrencyIn2026) {
  // From 0.21 the token count is int(concurrency x L): with L = 100,000 (not a multiple of 16):
  // blocks 10,000, blocks per request cdiv(100,000, 16) = 6,250 -> 1.6 x 100,000 = 160,000
  // (2025 rule: 10,000 x 16 = 160,000 too); with 10,001 blocks: 1.60016 x 100,000 = 160,016.
  ModelConfig c = dense(4, 8, 8, 128, 1024);
  KvLayout l = kv_layout(layer_specs(c, Parallel{}, bf16(), 0), 16, false, era_for_version("0.21.0"));
  EXPECT_EQ(kv_tokens(era_for_version("0.21.0"), l, 10001, 100000, 2048), 160016);
  EXPECT_EQ(kv_tokens(era_for_version("0.10.2"), l, 10001, 100000, 2048), 160016);
  // Sliding-window hybrid: the 2026 count is not a multiple of the block size.
  ModelConfig g = gpt_oss_120b();
  // 0.25.1: the 2026 report without the 0.26 in-flight bound (vllm_gemma4_test.cpp pins that).
  KvLayout lg = kv_layout(layer_specs(g, Parallel{}, bf16(), 0), 16, false, era_for_version("0.25.1"));
  // blocks per request at L = 131,072, mnbt 8,192: 8,192 + (cdiv(min(127 + 8,192, 131,072), 16) + 1) = 8,192 + 521 = 8,713.
  EXPECT_NEAR(max_concurrency(lg, 50000, 131072, 8192), 50000.0 / 8713.0, 1e-9);
  EXPECT_EQ(kv_tokens(era_for_version("0.25.1"), lg, 50000, 131072, 8192), static_cast<int64_t>(50000.0 / 8713.0 * 131072));
  // 0.26+ (PR #47728, async scheduling): the sliding group holds 127 + 2 x 8,192 tokens ->
  // cdiv(16,511, 16) + 1 = 1,033 blocks; 8,192 + 1,033 = 9,225 per request.
  KvLayout lg26 = kv_layout(layer_specs(g, Parallel{}, bf16(), 0), 16, false, era_for_version("0.26.0"));
  EXPECT_NEAR(max_concurrency(lg26, 50000, 131072, 8192), 50000.0 / 9225.0, 1e-9);
  EXPECT_EQ(kv_tokens(era_for_version("0.10.2"), lg, 50000, 131072, 8192), 50000 / 2 * 16);
}

TEST(VllmKv, MlaPagesAndFp8DsMla) {
  // DeepSeek-V3 MLA: (kv_lora_rank 512 + rope 64) x 2 B = 1,152 B/token/layer, not split by TP;
  // fp8_ds_mla: 656 B (512 fp8 + 4 x 4 B scales + 64 x 2 B rope).
  ModelConfig c = dense(3, 128, 128, 192, 7168);
  c.mla = true;
  c.kv_lora_rank = 512;
  c.qk_rope_head_dim = 64;
  Parallel p;
  p.tp = 8;
  Era era = era_for_version("0.11.0");
  auto s = layer_specs(c, p, resolve_kv_dtype(era, "auto", DType::BF16, Quantization{}, true), 0);
  EXPECT_EQ(s[0].kind, SpecKind::Mla);
  EXPECT_EQ(s[0].bytes_per_token, 1152);
  EXPECT_EQ(layer_specs(c, p, resolve_kv_dtype(era, "fp8_ds_mla", DType::BF16, Quantization{}, true), 0)[0].bytes_per_token, 656);
  EXPECT_THROW(resolve_kv_dtype(era, "fp8_ds_mla", DType::BF16, Quantization{}, false), InputError);
}

TEST(VllmKv, Fp8AndNvfp4AndPerTokenHeadDtypes) {
  ModelConfig c = dense(1, 32, 8, 128, 4096);
  Era era = era_for_version("0.26.0");
  // fp8: 8 x 256 x 1 = 2,048; nvfp4: 8 x 2 x (64 + 8) = 1,152; per-token-head: 2,048 + 2 x 8 x 4 = 2,112.
  EXPECT_EQ(layer_specs(c, Parallel{}, resolve_kv_dtype(era, "fp8", DType::BF16, {}, false), 0)[0].bytes_per_token, 2048);
  EXPECT_EQ(layer_specs(c, Parallel{}, resolve_kv_dtype(era, "nvfp4", DType::BF16, {}, false), 0)[0].bytes_per_token, 1152);
  EXPECT_EQ(layer_specs(c, Parallel{}, resolve_kv_dtype(era, "fp8_per_token_head", DType::BF16, {}, false), 0)[0].bytes_per_token, 2112);
  try {
    resolve_kv_dtype(era, "fp7", DType::BF16, {}, false);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("argument --kv-cache-dtype: invalid choice: 'fp7'"), std::string::npos);
  }
}

TEST(VllmKv, PipelineSplitAsGetPpIndices) {
  // 61 layers, PP4 -> [15, 15, 16, 15] (remainder to the second-to-last stage).
  EXPECT_EQ(pp_indices(61, 4, 0), std::make_pair(0, 15));
  EXPECT_EQ(pp_indices(61, 4, 1), std::make_pair(15, 30));
  EXPECT_EQ(pp_indices(61, 4, 2), std::make_pair(30, 46));
  EXPECT_EQ(pp_indices(61, 4, 3), std::make_pair(46, 61));
  // 62 layers, PP4 -> [15, 16, 16, 15].
  EXPECT_EQ(pp_indices(62, 4, 1), std::make_pair(15, 31));
}

TEST(VllmKv, KvPerTokenPublicApi) {
  // kv.h vllm_kv_per_token: gpt-oss-120b TP1 bf16: 18 full x 2,048 B, 18 sliding x 2,048 B.
  KvPerToken k = vllm_kv_per_token(gpt_oss_120b(), Parallel{}, "auto", 90);
  EXPECT_EQ(k.full_bytes, 18 * 2048);
  EXPECT_EQ(k.swa_bytes, 18 * 2048);
  EXPECT_EQ(k.full_layers, 18);
  EXPECT_EQ(k.kv_dtype, "bfloat16");
  KvPerToken n = vllm_kv_per_token(qwen3_next(), Parallel{}, "auto", 90);
  EXPECT_EQ(n.linear_layers, 36);
  // TP1 GDN state: 3 x 8,192 x 2 + 32 x 128 x 128 x 2 = 49,152 + 1,048,576 = 1,097,728 per layer.
  EXPECT_EQ(n.state_bytes_per_request, 36 * 1097728);
}

TEST(VllmEra, VersionStrings) {
  EXPECT_EQ(era_for_version("0.10.2").version, 1002);
  EXPECT_FALSE(era_for_version("0.10.2").graph_estimate_applied);
  EXPECT_DOUBLE_EQ(era_for_version("0.10.2").default_utilization, 0.9);
  EXPECT_DOUBLE_EQ(era_for_version("0.21.0").default_utilization, 0.92);
  EXPECT_TRUE(era_for_version("0.21.0").graph_estimate_applied);
  EXPECT_EQ(era_for_version("0.26.1rc1.dev608+g99a10304d").version, 2601);
  EXPECT_TRUE(era_for_version("0.6.4.post1").v0);
  EXPECT_TRUE(era_for_version("0.8.5").whole_gpu);
  EXPECT_FALSE(era_for_version("0.9.1").whole_gpu);
  EXPECT_EQ(era_for_version("unknown@2025-07-22").version, 902);
  EXPECT_EQ(era_for_version("main@2025-04").version, 805);
  EXPECT_EQ(era_for_version("").version, kNewestVersion);
  EXPECT_THROW(era_for_version("banana"), InputError);
}

TEST(VllmDefaults, CaptureSizesByVersion) {
  Era e11 = era_for_version("0.11.0");
  // max_num_seqs 1024 -> min(2048, 512) = 512: [1,2,4] + 8..248 (31) + 256..512 step 16 (17) = 51.
  auto s = capture_sizes(e11, 1024, 8192, 1, 0);
  EXPECT_EQ(s.size(), 51u);
  EXPECT_EQ(s.back(), 512);
  // FULL decode graphs: the capture sizes up to max_num_seqs x query length (cudagraph_dispatcher.py):
  // all 51 at 1,024 sequences (GLM-5.2 on GB200, xvllm-067: "FULL=51 (largest=512)"), 35 at 256
  // (the A100 / sub-70 GiB logs: "FULL=35 (largest=256)", e.g. corpus vllm-029).
  EXPECT_EQ(full_graph_count(e11, s, 1024, 1), 51);
  EXPECT_EQ(full_graph_count(e11, s, 256, 1), 35);
  EXPECT_EQ(capture_sizes(e11, 128, 8192, 1, 0).size(), 35u);  // max 256: 3 + 31 + 1
  EXPECT_EQ(capture_sizes(e11, 32, 8192, 1, 0).size(), 11u);    // max 64: 3 + 8
  // 0.10: [1,2,4] + range(8, 513, 8) = 67 sizes (vllm-019 engine config "67 cudagraph capture sizes").
  EXPECT_EQ(capture_sizes(era_for_version("0.10.1"), 256, 2048, 1, 0).size(), 67u);
  // batch defaults: H100 8192/1024, A100-80GB 2048/256, RTX 4090 2048/256.
  EXPECT_EQ(default_batch(e11, static_cast<int64_t>(79.19 * GiB), "h100").max_num_seqs, 1024);
  EXPECT_EQ(default_batch(e11, static_cast<int64_t>(79.15 * GiB), "a100-80gb").max_num_batched_tokens, 2048);
  EXPECT_EQ(default_batch(e11, static_cast<int64_t>(23.64 * GiB), "rtx-4090").max_num_seqs, 256);
}

TEST(VllmLog, NumberFormats) {
  EXPECT_EQ(commas(1215552), "1,215,552");
  EXPECT_EQ(commas(512), "512");
  EXPECT_EQ(gib_fmt(static_cast<int64_t>(51.1 * GiB)), "51.1");
  EXPECT_EQ(gib_fmt(0), "0.0");
  EXPECT_EQ(gib_fmt(static_cast<int64_t>(27.85 * GiB) + 1), "27.85");
}

TEST(VllmKv, EstimatedMaxModelLenMatchesVllm012) {
  // vllm-012 (vLLM 0.29.1rc1, MiniMax-M2.7 AWQ, TP2 over two DGX Sparks): "To serve at least one
  // request with the model's max seq len (196608), 23.25 GiB KV cache is needed, which is larger
  // than the available KV cache memory (22.5 GiB). Based on the available memory, the estimated
  // maximum model length is 190272."
  // MiniMax-M2.7: 62 layers, 8 KV heads x 128 (data/models/MiniMaxAI/MiniMax-M2.7/config.json);
  // TP2 -> 4 heads x (128 + 128) x 2 B = 2,048 B/token/layer; page 16 x 2,048 = 32,768 B.
  // Needed: 62 x cdiv(196,608, 16) x 32,768 = 62 x 12,288 x 32,768 = 24,964,497,408 B = 23.25 GiB exactly.
  ModelConfig c = dense(62, 48, 8, 128, 3072);
  Parallel p;
  p.tp = 2;
  Era era = era_for_version("0.29.1rc1.dev17+gd2d649e67.d20260913");
  KvLayout l = kv_layout(layer_specs(c, p, bf16(), 0), 16, false, era);
  EXPECT_EQ(l.page_bytes, 32768);
  EXPECT_EQ(needed_bytes(l, 196608, 2048), 24964497408LL);
  EXPECT_EQ(gib_fmt(needed_bytes(l, 196608, 2048)), "23.25");
  // Binary search over L with the page rule: needed(L) = 62 x cdiv(L, 16) x 32,768 <= avail, so
  // M = floor(avail / 2,031,616) x 16. 190,272 = 11,892 blocks needs avail >= 24,159,977,472 B
  // (22.5007 GiB, printed "22.5"); exactly 22.5 GiB (the log's rounded figure) gives 11,891 blocks
  // -> 190,256, 0.008% below the logged M (the rounding of the printed memory, not the rule).
  EXPECT_EQ(estimate_max_model_len(l, 24159977472LL, 196608, 2048), 190272);
  EXPECT_EQ(estimate_max_model_len(l, 24159977471LL, 196608, 2048), 190256);
  EXPECT_EQ(estimate_max_model_len(l, static_cast<int64_t>(22.5 * GiB), 196608, 2048), 190256);
  // The search never goes above the configured length, and returns 0 when one block does not fit.
  EXPECT_EQ(estimate_max_model_len(l, 30LL * GiB, 196608, 2048), 196608);
  EXPECT_EQ(estimate_max_model_len(l, 2031615, 196608, 2048), 0);
}

TEST(VllmKv, EstimatedMaxModelLenForAMambaHybrid) {
  // Qwen3-Next TP2 (layout of vllm-048): page 557,056 B; 12 attention layers of 544-token blocks
  // plus 36 GDN layers holding one state block per request:
  // needed(L) = 12 x cdiv(L, 544) x 557,056 + 36 x 557,056. With 1 GiB: 1,073,741,824 / 557,056 =
  // 1,927.5 pages -> 12 x cdiv(L, 544) <= 1,891 -> cdiv <= 157 -> M = 157 x 544 = 85,408.
  ModelConfig c = qwen3_next();
  Parallel p;
  p.tp = 2;
  Era era = era_for_version("0.10.2");
  KvLayout l = kv_layout(layer_specs(c, p, bf16(), 0), 16, false, era);
  EXPECT_EQ(needed_bytes(l, 544, 8192), (12 + 36) * 557056LL);
  EXPECT_EQ(estimate_max_model_len(l, 1LL * GiB, 262144, 8192), 85408);
}

TEST(VllmEstimates, GraphMemoryPerGraphAndLayer) {
  // ESTIMATE fitted to captured-graph figures (vllm_estimates.cpp): 0.19 MiB per (graph x attention
  // layer), 1.88 MiB / tp per (graph x GDN layer), + 16 MiB.
  // Qwen3-Next TP2, 0.10.2, 67 piecewise graphs, 12 attention + 36 GDN layers:
  // 67 x 12 x 0.19 + 67 x 36 x 0.94 + 16 = 152.76 + 2,267.28 + 16 = 2,436.04 MiB = 2.38 GiB (logged "took 2.37 GiB", vllm-048).
  ModelConfig c = qwen3_next();
  EXPECT_NEAR(to_gib(layer_graph_memory(c, 48, 36, 67, 0, 2, false, GraphUnit{0.19, 0.19}).central), 2.379, 0.001);
  // Qwen3.5-35B-A3B TP4, 51 + 35 graphs, 10 + 30 layers: 86 x 10 x 0.19 + 86 x 30 x 0.47 + 16 = 1,392.0 MiB
  // = 1.36 GiB (logged 1.34, vllm-071).
  EXPECT_NEAR(to_gib(layer_graph_memory(c, 40, 30, 51, 35, 4, false, GraphUnit{0.19, 0.19}).central), 1.359, 0.001);
  // Qwen3-8B, 86 graphs x 36 layers: 604.2 MiB = 0.59 GiB (the 0.21 estimator logged 0.52, vllm-029: +13%).
  Estimate q = layer_graph_memory(c, 36, 0, 51, 35, 1, false, GraphUnit{0.19, 0.19});
  EXPECT_NEAR(to_gib(q.central), 0.590, 0.001);
  EXPECT_LT(q.low, static_cast<int64_t>(0.52 * GiB));  // the logged figure lies inside the range
  EXPECT_GT(q.high, static_cast<int64_t>(0.52 * GiB));
}

TEST(VllmEstimates, EarlyV1GraphMemoryGrowsWithHiddenSize) {
  // V1 before 0.10.1 (vllm_estimates.cpp cuda_graph_memory_outputs_per_size): 0.5 x sum(sizes) x
  // hidden x 2 B x layers + 16 MiB. The 67 default sizes (1, 2, 4, 8 .. 512 step 8) sum to 16,647.
  std::vector<int64_t> sizes = {1, 2, 4};
  for (int64_t x = 8; x <= 512; x += 8) sizes.push_back(x);
  ASSERT_EQ(sizes.size(), 67u);
  ModelConfig c;
  c.hidden_size = 4096;
  // Qwen3-8B (hidden 4096, 36 layers): 0.5 x 16,647 x 4,096 x 2 x 36 = 2,454,700,032 + 16,777,216
  // = 2,471,477,248 B = 2.30 GiB; 0.9.2 logged "Graph capturing finished in 23 secs, took 2.24 GiB"
  // (public-code index id 58028398527, tests/data/extra/vllm.jsonl xvllm-004): +2.8%.
  Estimate e = cuda_graph_memory_outputs_per_size(c, 36, sizes, 2);
  EXPECT_EQ(e.central, 2471477248);
  EXPECT_LT(e.low, static_cast<int64_t>(2.24 * GiB));
  EXPECT_GT(e.high, static_cast<int64_t>(2.24 * GiB));
  // Qwen2.5-0.5B (hidden 896, 24 layers): 0.5 x 16,647 x 896 x 2 x 24 + 16 MiB = 374,754,304 B
  // = 0.349 GiB; 0.9.2 logged "took 0.37 GiB" (public-code index id 55921714709): -5.7%.
  c.hidden_size = 896;
  EXPECT_EQ(cuda_graph_memory_outputs_per_size(c, 24, sizes, 2).central, 374754304);
  // The era: V1 from 0.8 to 0.10.0 only; V0 (0.7.3) and 0.10.1.1 (vllm-055, flat cost) are outside.
  EXPECT_TRUE(era_for_version("0.9.2").graph_outputs_per_size);
  EXPECT_TRUE(era_for_version("0.8.5").graph_outputs_per_size);
  EXPECT_FALSE(era_for_version("0.10.1.1").graph_outputs_per_size);
  EXPECT_FALSE(era_for_version("0.7.3").graph_outputs_per_size);
}

TEST(VllmKv, CapacityCheckCountsGroupPaddingFrom2026) {
  // 4 full + 9 sliding (window 1,024) layers, 8 KV heads x 128, bf16: page 16 x 4,096 = 65,536 B.
  // group_size = min(4, 9) = 4 (9 >= 1.5 x 4): groups full x1, sliding x3 -> 3 padding layers.
  // L = 32,768, mnbt 2,048: full layer cdiv(32,768, 16) = 2,048 blocks = 134,217,728 B;
  // sliding layer cdiv(min(1,023 + 2,048, 32,768), 16) + 1 = 193 blocks = 12,648,448 B.
  // 2025 (sum over the model's layers): 4 x 134,217,728 + 9 x 12,648,448 = 650,706,944 B.
  // 2026 (sum over padded groups):      4 x 134,217,728 + 12 x 12,648,448 = 688,652,288 B.
  ModelConfig c = dense(13, 8, 8, 128, 1024);
  c.sliding_window = 1024;
  for (int i = 0; i < 13; ++i) c.layers[i].attn = (i % 3 == 0 && i < 12) ? AttnKind::Full : AttnKind::Sliding;
  KvLayout l25 = kv_layout(layer_specs(c, Parallel{}, bf16(), 0), 16, false, era_for_version("0.10.2"));
  // 0.25.1: the 2026 planner before the 0.26 in-flight bound (vllm_gemma4_test.cpp pins that).
  KvLayout l26 = kv_layout(layer_specs(c, Parallel{}, bf16(), 0), 16, false, era_for_version("0.25.1"));
  EXPECT_EQ(l25.padding_layers, 3);
  EXPECT_EQ(l26.num_groups, 4);
  EXPECT_EQ(needed_bytes(l25, 32768, 2048), 650706944LL);
  EXPECT_EQ(needed_bytes(l26, 32768, 2048), 688652288LL);
}

namespace {
// DeepSeek-V4-Flash as data/models/deepseek-ai/DeepSeek-V4-Flash/config.json: 43 layers,
// compress_ratios [0, 0, 4, 128, 4, ..., 128, 4] (21 CSA layers ratio 4, 20 HCA ratio 128, two
// sliding-only) plus the MTP entry 0; head_dim 512, rope 64, index_head_dim 128, window 128.
ModelConfig dsv4_flash() {
  ModelConfig c = dense(43, 64, 1, 512, 4096);
  c.family = "deepseek_v4";
  c.model_type = "deepseek_v4";
  c.mla = true;
  c.qk_rope_head_dim = 64;
  c.index_head_dim = 128;
  c.index_topk = 512;
  c.sliding_window = 128;
  c.num_nextn_predict_layers = 1;
  for (int i = 0; i < 43; ++i) c.compress_ratios.push_back(i < 2 ? 0 : (i % 2 == 0 ? 4 : 128));
  c.compress_ratios.push_back(0);  // MTP layer
  for (int i = 0; i < 43; ++i) c.layers[i].compress_ratio = c.compress_ratios[i];
  return c;
}
KvDtype v4_fp8() { return resolve_kv_dtype(era_for_version("0.26.0"), "fp8", DType::BF16, Quantization{}, true); }
}  // namespace

TEST(VllmKvDsv4, FlashPagesAndPackedBlockByHand) {
  // Pages (kv_cache_interface.py, 576 B alignment), block 256:
  //   swa_cache   64 x 584 = 37,376 -> 37,440      CSA latent 256/4 x 584 = 37,376 -> 37,440
  //   HCA latent  256/128 x 584 = 1,168 -> 1,728   indexer keys 64 x 132 = 8,448 -> 8,640
  //   C4 state    4 x 2048 x 4 = 32,768 -> 32,832 (padded to the MLA page 37,440)
  //   indexer C4 state 4 x 512 x 4 = 8,192 -> 8,640; C128 state 8 x 1024 x 4 = 32,768 -> 32,832 (-> 37,440)
  // Layer-tuple counts [MLA 21, SWA 43, C4 states 21, C128 states 20] -> _approximate_gcd with
  // lower bound 21 = 22 (padding 1+1+1+2 = 5 beats 21's 20): groups MLA(62 layers), SWA 22 + 21,
  // C4 states (21+21), C128 states (20). Packed block = 22 x 37,440 + 21 x 8,640 + 20 x 1,728
  // = 823,680 + 181,440 + 34,560 = 1,039,680 B.
  auto specs = layer_specs(dsv4_flash(), Parallel{}, v4_fp8(), 0);
  EXPECT_EQ(specs.size(), 43u + 21u * 4 + 20u * 2);
  KvLayout l = kv_layout(specs, 256, true, era_for_version("0.26.0"));
  EXPECT_TRUE(l.packed);
  EXPECT_EQ(l.page_bytes, 1039680);
  EXPECT_EQ(l.bytes_per_block_all(), 1039680);
  EXPECT_EQ(l.num_groups, 5);
  EXPECT_EQ(l.v4_tuple_bytes, 37440 + 8640 + 1728);
  EXPECT_EQ(l.v4[0].page_sum, 21 * 37440 + 21 * 8640 + 20 * 1728);  // 1,002,240
  EXPECT_EQ(l.v4[1].layers, 22);
  EXPECT_EQ(l.v4[2].layers, 21);
  // TP does not split the latent caches (one KV head).
  Parallel tp4;
  tp4.tp = 4;
  EXPECT_EQ(kv_layout(layer_specs(dsv4_flash(), tp4, v4_fp8(), 0), 256, true, era_for_version("0.26.0")).page_bytes, 1039680);
  // No --block-size: the DEEPSEEK_SPARSE_SWA backend's preferred 256.
  KvLayout d = kv_layout(specs, 16, false, era_for_version("0.26.0"));
  EXPECT_EQ(d.block_size, 256);
  EXPECT_EQ(d.page_bytes, 1039680);
}

TEST(VllmKvDsv4, CorpusTokensAndConcurrencyReplay) {
  // vllm#51041 (vllm-035, 0.26.0, H20 TP2, --block-size 256, fp8, MTP on): "7.01 GiB",
  // "1,009,661 tokens", 1.11x at 912,128. 7,236 blocks (7,236 x 1,039,680 B = 7.006 GiB).
  // Per request (get_max_concurrency_for_kv_cache_config) at max_num_batched_tokens 8192:
  // MLA cdiv(912128, 256) = 3,563 pages x 1,002,240; SWA groups (22 + 22 layers with the MTP
  // layer) 131 pages x 823,680 each; C4 states 2,051 x 967,680; C128 states 1,041 x 748,800;
  // in blocks of 1,002,240: 6,537 -> 7,236 / 6,537 = 1.10693 -> int(x 912,128) = 1,009,661.
  const Era era = era_for_version("0.26.0");
  KvLayout mtp = kv_layout(layer_specs(dsv4_flash(), Parallel{}, v4_fp8(), 0, 1), 256, true, era);
  EXPECT_EQ(num_blocks(mtp, 7236LL * 1039680), 7236);
  EXPECT_EQ(kv_tokens(era, mtp, 7236, 912128, 8192), 1009661);
  EXPECT_NEAR(max_concurrency(mtp, 7236, 912128, 8192), 1.11, 0.005);
  // Without the MTP layer (43 sliding caches): 6,532 blocks per request -> 1,010,434.
  KvLayout plain = kv_layout(layer_specs(dsv4_flash(), Parallel{}, v4_fp8(), 0), 256, true, era);
  EXPECT_EQ(kv_tokens(era, plain, 7236, 912128, 8192), 1010434);
  // vllm-036 (same issue, -0731 checkpoint, same layout): "7.71 GiB", "150,992 tokens", 1.24x at
  // 121,344 -- reproduced with MTP and max_num_batched_tokens 16384 (7,965 blocks, 6,401 per request).
  EXPECT_EQ(kv_tokens(era, mtp, 7965, 121344, 16384), 150992);
  EXPECT_NEAR(max_concurrency(mtp, 7965, 121344, 16384), 1.24, 0.005);
}

TEST(VllmKvDsv4, CapacityCheckMatchesVllm44376) {
  // vllm#44376 (DeepSeek-V4-Flash, TP2, LLM(max_model_len=30000), fp8, block 256; offline LLM
  // default max_num_batched_tokens 16384): "(6.66 GiB KV cache is needed, which is larger than
  // the available KV cache memory (5.44 GiB) ... the estimated maximum model length is 13528".
  // _max_memory_usage_bytes_from_groups: 22 tuples x pages x 47,808 B; pages at 30,000 =
  // 118 + 2 x 259 + 4,099 + 2,065 = 6,800 -> 7,152,076,800 B = 6.66 GiB. 13,528 needs
  // 5,841,563,904 B (5.4404 GiB) and 13,529 needs 5.4423 GiB: the logged avail lies between.
  KvLayout l = kv_layout(layer_specs(dsv4_flash(), Parallel{}, v4_fp8(), 0), 256, true, era_for_version("0.26.0"));
  EXPECT_EQ(needed_bytes(l, 30000, 16384), 7152076800LL);
  EXPECT_EQ(needed_bytes(l, 13528, 16384), 5841563904LL);
  EXPECT_EQ(estimate_max_model_len(l, 5841563904LL, 30000, 16384), 13528);
}

TEST(VllmKvDsv4, RefusalsAsVllm) {
  // DeepseekV4MLAAttention asserts an fp8 cache ("got auto"); reported against --model.
  KvDtype autod = resolve_kv_dtype(era_for_version("0.26.0"), "auto", DType::BF16, Quantization{}, true);
  try {
    layer_specs(dsv4_flash(), Parallel{}, autod, 0);
    FAIL() << "auto KV dtype accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--model");
    EXPECT_NE(e.problem().find("got auto"), std::string::npos);
  }
  // vLLM before 0.20 has no DeepSeek-V4 (0.20-0.23 layouts: vllm_dsv4_legacy_test.cpp).
  auto specs = layer_specs(dsv4_flash(), Parallel{}, v4_fp8(), 0);
  EXPECT_THROW(kv_layout(specs, 256, true, era_for_version("0.19.1")), InputError);
  // A block size the HCA ratio does not divide.
  EXPECT_THROW(kv_layout(specs, 64, true, era_for_version("0.26.0")), InputError);
}

namespace {
// vLLM's KV layout for a command line (catalog model), and the tokens for a logged KV GiB figure
// at the interval ends [X - 0.005, X + 0.005) GiB.
KvSizing sizing(std::vector<std::string> argv) { return kv_sizing(parse_deployment(Args::parse(argv))); }
std::pair<int64_t, int64_t> tokens_for_gib2(const KvSizing& k, double x) {
  const long double g = static_cast<long double>(GiB);
  int64_t lo = static_cast<int64_t>(std::ceil((x - 0.005L) * g)), hi = static_cast<int64_t>(std::ceil((x + 0.005L) * g)) - 1;
  return {kv_tokens_for_memory(k, lo), kv_tokens_for_memory(k, hi)};
}
}  // namespace

TEST(VllmKv, Qwen35MambaAlignModeMatchesVllm085) {
  // vllm-085 (vLLM 0.30.0, B200, Qwen3.5-4B, --max-model-len 65536 --max-num-seqs 48, prefix
  // caching on by default for hybrids since 0.28): "11.58 GiB = 359,197 tokens; at 65,536
  // tokens/request: 5.48x" (serving notes, public-code index 70166912399). GDN state: conv
  // 3 x (2*16*128 + 32*128) x 2 B = 49,152 + ssm fp32 32 x 128 x 128 x 4 = 2,097,152 -> 2,146,304 B;
  // attention 4 heads x 512 x 2 B = 4,096 B/token -> block 16 x cdiv(2,146,304, 65,536) = 528.
  // 8 full + 24 GDN: 8 tensors, 4 groups. blocks = floor(floor(11.58 GiB / 2,162,688) / 8) = 718.
  // mamba_cache_mode "align": 2 state blocks per GDN group -> per request cdiv(65,536, 528) + 3 x 2
  // = 125 + 6 = 131 blocks; 718 / 131 = 5.481x; int(5.481 x 65,536) = 359,197. With "none"
  // (1 block per group) it would be 718 / 128 -> 367,616.
  KvSizing k = sizing({"--engine", "vllm@0.30.0", "--model", "Qwen/Qwen3.5-4B", "--gpu", "b200", "--gpu-memory-utilization", "0.16",
                       "--max-model-len", "65536", "--max-num-seqs", "48"});
  const KvLayout& l = k.stages.front();
  EXPECT_EQ(l.block_size, 528);
  EXPECT_EQ(l.tensors, 8);
  EXPECT_EQ(l.num_groups, 4);
  EXPECT_NE(k.summary.find("mamba cache align"), std::string::npos) << k.summary;
  auto [lo, hi] = tokens_for_gib2(k, 11.58);
  EXPECT_LE(lo, 359197);
  EXPECT_GE(hi, 359197);
  EXPECT_EQ(kv_tokens_for_memory(k, 718LL * 8 * 2162688), 359197);
  // --no-enable-prefix-caching: "none", one state block per request.
  KvSizing off = sizing({"--engine", "vllm@0.30.0", "--model", "Qwen/Qwen3.5-4B", "--gpu", "b200", "--max-model-len", "65536",
                         "--no-enable-prefix-caching"});
  EXPECT_EQ(kv_tokens_for_memory(off, 718LL * 8 * 2162688), 367616);
}

TEST(VllmKv, Qwen35MtpWidensConvStateAndKeepsSpecBlocksVllm087) {
  // vllm-087 (same notes, per DP rank): + --speculative-config {"method":"mtp",
  // "num_speculative_tokens":2}, utilization 0.12: "KV 10.91 GiB = 287,767 tokens (the MTP layer +
  // 3 padding layers ...)". The GDN conv state keeps kernel - 1 + 2 columns: 5 x 8,192 x 2 = 81,920
  // + 2,097,152 = 2,179,072 B -> block 16 x cdiv(2,179,072, 65,536) = 544, page 2,228,224. 9 full
  // (8 + the MTP layer) + 24 GDN: group_size 9, 1 + 3 groups, 27 - 24 = 3 padding layers, 9 tensors.
  // blocks = floor(floor(10.91 GiB / 2,228,224) / 9) = 584; align mode keeps 2 + 2 spec blocks per
  // GDN group: per request cdiv(65,536, 544) + 3 x 4 = 121 + 12 = 133; int(584 / 133 x 65,536) = 287,767.
  KvSizing k = sizing({"--engine", "vllm@0.30.0", "--model", "Qwen/Qwen3.5-4B", "--gpu", "b200", "--gpu-memory-utilization", "0.12",
                       "--max-model-len", "65536", "--max-num-seqs", "48", "--speculative-config",
                       R"({"method":"mtp","num_speculative_tokens":2})"});
  const KvLayout& l = k.stages.front();
  EXPECT_EQ(l.block_size, 544);
  EXPECT_EQ(l.page_bytes, 2228224);
  EXPECT_EQ(l.tensors, 9);
  EXPECT_EQ(l.num_groups, 4);
  EXPECT_EQ(l.padding_layers, 3);
  auto [lo, hi] = tokens_for_gib2(k, 10.91);
  EXPECT_LE(lo, 287767);
  EXPECT_GE(hi, 287767);
  EXPECT_EQ(kv_tokens_for_memory(k, 584LL * 9 * 2228224), 287767);
}

TEST(VllmKv, Qwen36PrefixCachingAlignModeMatchesVllm008) {
  // vllm-008 (vLLM 0.24.0, RTX 5090, a Qwen3.6-35B-A3B NVFP4 checkpoint, --kv-cache-dtype fp8,
  // --max-model-len 131072, prefix caching on per the record): "Available KV cache memory:
  // 6.01 GiB", "GPU KV cache size: 569,878 tokens", "Maximum concurrency for 131,072 tokens per
  // request: 4.35x"; a near-identical run: 5.98 GiB / 567,978 / 4.33x. fp8 attention 2 heads x
  // 512 x 1 B = 1,024 B/token; GDN 49,152 + 2,097,152 = 2,146,304 B -> block 16 x cdiv(2,146,304,
  // 16,384) = 2,096 (page exactly 2,146,304). 10 full + 30 GDN: 10 tensors, 4 groups.
  // 6.01 GiB: floor(3,006 / 10) = 300 blocks; align: cdiv(131,072, 2,096) + 3 x 2 = 63 + 6 = 69;
  // 300 / 69 = 4.35x -> 569,878. 5.98 GiB: 299 blocks -> 567,978. (Before 0.28 prefix caching is
  // opt-in for hybrids: without it the same memory gives 300 / 66 -> 595,781.)
  std::vector<std::string> argv{"--engine", "vllm@0.24.0", "--model", "Qwen/Qwen3.6-35B-A3B", "--gpu", "rtx-5090", "--kv-cache-dtype", "fp8",
                                "--max-model-len", "131072", "--max-num-seqs", "1", "--max-num-batched-tokens", "8192"};
  KvSizing off = sizing(argv);
  argv.push_back("--enable-prefix-caching");
  KvSizing k = sizing(argv);
  EXPECT_EQ(k.stages.front().block_size, 2096);
  EXPECT_EQ(k.stages.front().page_bytes, 2146304);
  auto [lo, hi] = tokens_for_gib2(k, 6.01);
  EXPECT_LE(lo, 569878);
  EXPECT_GE(hi, 569878);
  auto [lo2, hi2] = tokens_for_gib2(k, 5.98);
  EXPECT_LE(lo2, 567978);
  EXPECT_GE(hi2, 567978);
  EXPECT_EQ(kv_tokens_for_memory(k, 300LL * 10 * 2146304), 569878);
  EXPECT_EQ(kv_tokens_for_memory(off, 300LL * 10 * 2146304), 595781);
}

TEST(VllmKv, MambaCacheModeFlagIsReadAsVllmReadsIt) {
  // --mamba-cache-mode overrides the default; a value outside vLLM's choices is argparse's error.
  std::vector<std::string> base{"--engine", "vllm@0.30.0", "--model", "Qwen/Qwen3.5-4B", "--gpu", "b200", "--max-model-len", "65536"};
  auto with = [&](const char* mode) {
    auto a = base;
    a.insert(a.end(), {"--mamba-cache-mode", mode});
    return a;
  };
  EXPECT_NE(sizing(with("none")).summary.find("mamba cache none"), std::string::npos);
  EXPECT_NE(sizing(with("align")).summary.find("mamba cache align"), std::string::npos);
  try {
    sizing(with("sometimes"));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("invalid choice: 'sometimes'"), std::string::npos) << e.what();
  }
}

TEST(VllmKv, MambaBlockSizeAlignsTheAttentionBlockInAllMode) {
  // Qwen3.5-4B: attention 2 x 4 KV heads x 256 x 2 B = 4,096 B/token; GDN state conv 8,192 x 3 x 2 B
  // + SSM 32 x 128 x 128 x 4 B (fp32) = 2,146,304 B = 524 attention tokens exactly. In
  // mamba_cache_mode "all" the block is lcm(--mamba-block-size, 16) x cdiv(524, that)
  // (platforms/interface.py _align_hybrid_block_size): 256 -> 768 tokens (page 3,145,728 B),
  // 512 -> 1,024. In "align" the option leaves the block at 16 x cdiv(524, 16) = 528.
  std::vector<std::string> base{"--engine", "vllm@0.30.0", "--model", "Qwen/Qwen3.5-4B", "--gpu", "b200", "--max-model-len", "65536"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return sizing(a);
  };
  KvSizing k256 = with({"--mamba-cache-mode", "all", "--mamba-block-size", "256"});
  EXPECT_EQ(k256.stages.front().block_size, 768);
  EXPECT_EQ(k256.stages.front().page_bytes, 3145728);
  EXPECT_EQ(with({"--mamba-cache-mode", "all", "--mamba-block-size", "512"}).stages.front().block_size, 1024);
  EXPECT_EQ(with({"--mamba-cache-mode", "align", "--mamba-block-size", "512"}).stages.front().block_size, 528);
  try {
    with({"--mamba-block-size", "0"});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mamba_block_size: Input should be greater than 0"), std::string::npos) << e.what();
  }
}

TEST(VllmKvLayout, DsaIndexerKeysJoinTheLatentGroup) {
  // GLM-5.2-NVFP4 (78 MLA layers, fp8 latent 512 + 64 = 576 B; indexer_types "full" on 21 layers,
  // "shared" on the rest), TP4 + EP on GB200, vLLM 0.26.0 (tests/data/extra xvllm-067): every layer
  // caches its latent, the 21 indexer layers also their keys, 128 + 128/128 x 4 = 132 B, all in one
  // UniformTypeKVCacheSpecs group. One block of 128 tokens: 128 x (78 x 576 + 21 x 132) = 6,105,600 B.
  // Logged "Available KV cache memory: 50.62 GiB" -> "GPU KV cache size: 1,139,456 tokens":
  // 50.62 GiB = 54,352,874,004 B // 6,105,600 = 8,902 blocks x 128 = 1,139,456.
  KvSizing k = sizing({"--engine", "vllm@0.26.0", "--model", "nvidia/GLM-5.2-NVFP4", "--gpu", "gb200", "--tp", "4", "--ep", "4",
                       "--enable-expert-parallel", "--max-model-len", "819200"});
  ASSERT_EQ(k.stages.size(), 1u);
  EXPECT_EQ(k.stages[0].bytes_per_block_all(), 6105600);
  EXPECT_EQ(kv_tokens_for_memory(k, static_cast<int64_t>(50.62 * 1073741824.0)), 1139456);
}

TEST(VllmKv, DecodeContextParallelismShardsTokens) {
  // -dcp N keeps cdiv(L, N) tokens of each request per rank (FullAttentionSpec.max_memory_usage_bytes)
  // and logs N times the blocks' tokens (_report_kv_cache_config, with its "Multiplying ..." line).
  KvLayout l;
  l.block_size = 64;
  l.page_bytes = 64 * 1152;  // one MLA layer's 576 bf16 values per token
  l.tensors = 61;
  l.groups = {KvLayout::Group{SpecKind::Mla, 64, 0, 61, 61}};
  const Era era = era_for_version("0.20.0");
  const int64_t blocks = 10000, L = 163840;
  const int64_t plain = kv_tokens(era, l, blocks, L, 8192);
  EXPECT_EQ(plain, 640000);
  const double conc = max_concurrency(l, blocks, L, 8192);
  EXPECT_NEAR(conc, 10000.0 / 2560.0, 1e-9);  // 163,840 / 64 blocks per request
  l.cp = 8;
  EXPECT_EQ(kv_tokens(era, l, blocks, L, 8192), 8 * 640000);
  EXPECT_NEAR(max_concurrency(l, blocks, L, 8192), 10000.0 / 320.0, 1e-9);  // cdiv(163,840, 8) / 64
  EXPECT_EQ(needed_bytes(l, L, 8192), 61 * 320 * 64 * 1152);
}
