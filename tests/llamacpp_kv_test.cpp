// llama.cpp's KV cache size against the `llama_kv_cache: size = …` / `KV self size = …` lines of
// real logs (../shared/corpus/llamacpp.jsonl, case ids below). Layer shapes from each model's
// config.json (data/models where catalogued) or the case's notes.
#include <gtest/gtest.h>

#include "headroom/error.h"
#include "headroom/llamacpp_kv.h"

using namespace headroom;
using namespace headroom::llamacpp;
using G = gguf::GgmlType;

namespace {

constexpr int64_t MiB = 1 << 20;

KvModel uniform(int layers, int64_t kv_heads, int64_t head_dim, int64_t n_ctx_train) {
  KvModel m;
  m.layers.assign(static_cast<size_t>(layers), KvLayer{kv_heads * head_dim, kv_heads * head_dim, false});
  m.n_ctx_train = n_ctx_train;
  return m;
}

// gemma-4-12B-it (llamacpp-016 notes): 48 layers = 8 global (1 KV head x 512) + 40 SWA (8 x 256), window 1024.
KvModel gemma4_12b() {
  KvModel m;
  for (int il = 0; il < 48; ++il) {
    bool global = il % 6 == 5;
    m.layers.push_back(global ? KvLayer{512, 512, false} : KvLayer{2048, 2048, true});
  }
  m.n_swa = 1024;
  m.n_ctx_train = 131072;
  return m;
}

}  // namespace

TEST(LlamacppKv, OpenLlama7bB2459) {
  // llamacpp-025: open_llama_7b_v2 (32 layers, 32 heads x 128, no GQA), -c 2048, f16:
  // "KV self size  = 1024.00 MiB, K (f16):  512.00 MiB, V (f16):  512.00 MiB".
  KvSettings s;
  s.build = 2459;
  s.ctx_size = 2048;
  s.n_parallel = 1;
  s.flash_attn = false;
  auto c = kv_cache_size(uniform(32, 32, 128, 2048), s);
  EXPECT_EQ(c.base.cells, 2048);
  EXPECT_EQ(c.base.k_bytes, 512 * MiB);
  EXPECT_EQ(c.base.v_bytes, 512 * MiB);
  EXPECT_EQ(c.bytes(), 1024 * MiB);
  EXPECT_EQ(c.swa.layers, 0);
}

TEST(LlamacppKv, CommandRAndGraniteLegacyEra) {
  // llamacpp-008: c4ai-command-r-v01 (40 layers, 64 KV heads x 128), -c 4096: 5120 MiB.
  KvSettings s;
  s.build = 2450;
  s.ctx_size = 4096;
  s.n_parallel = 1;
  s.flash_attn = false;
  EXPECT_EQ(kv_cache_size(uniform(40, 64, 128, 131072), s).bytes(), 5120 * MiB);
  // llamacpp-019: granite-8b-code-instruct-128k (36 layers, 8 KV heads x 128) at num_ctx 128000
  // (a multiple of 32, so unpadded without flash attention): 18000 MiB.
  s.build = 3871;
  s.ctx_size = 128000;
  auto c = kv_cache_size(uniform(36, 8, 128, 128000), s);
  EXPECT_EQ(c.base.cells, 128000);
  EXPECT_EQ(c.bytes(), 18000 * MiB);
  // With flash attention the cells pad to 256: 128000 -> 128000 (500 x 256); 100 -> 256.
  s.flash_attn = true;
  s.ctx_size = 100;
  EXPECT_EQ(kv_cache_size(uniform(36, 8, 128, 128000), s).base.cells, 256);
  s.flash_attn = false;
  EXPECT_EQ(kv_cache_size(uniform(36, 8, 128, 128000), s).base.cells, 128);
}

TEST(LlamacppKv, Qwen3MoeB5622AndB8157) {
  // Qwen3-30B-A3B (data/models/Qwen/Qwen3-30B-A3B: 48 layers, 4 KV heads x 128).
  // llamacpp-010 (b5622): -c 16384, f16: "size = 1536.00 MiB ( 16384 cells,  48 layers,  1 seqs)".
  KvSettings s;
  s.build = 5622;
  s.ctx_size = 16384;
  s.n_parallel = 1;
  auto c = kv_cache_size(uniform(48, 4, 128, 40960), s);
  EXPECT_EQ(c.base.cells, 16384);
  EXPECT_EQ(c.base.layers, 48);
  EXPECT_EQ(c.base.k_bytes, 768 * MiB);
  EXPECT_EQ(c.bytes(), 1536 * MiB);
  // llamacpp-001 (b8157): --parallel 4 --ctx-size 32768, q8_0 K and V, not unified: n_ctx_seq
  // 8192 per slot, four streams: K 816 MiB (48 x 512 x 34/32 B x 8192 x 4), 1632 MiB in all.
  s.build = 8157;
  s.ctx_size = 32768;
  s.n_parallel = 4;
  s.type_k = s.type_v = G::Q8_0;
  c = kv_cache_size(uniform(48, 4, 128, 262144), s);
  EXPECT_FALSE(c.unified);
  EXPECT_EQ(c.n_ctx, 32768);
  EXPECT_EQ(c.n_ctx_seq, 8192);
  EXPECT_EQ(c.n_stream, 4);
  EXPECT_EQ(c.base.cells, 8192);
  EXPECT_EQ(c.base.k_bytes, 816 * MiB);
  EXPECT_EQ(c.bytes(), 1632 * MiB);
  // -kvu: one stream of 32768 cells, the same bytes.
  s.kv_unified = true;
  c = kv_cache_size(uniform(48, 4, 128, 262144), s);
  EXPECT_EQ(c.n_stream, 1);
  EXPECT_EQ(c.base.cells, 32768);
  EXPECT_EQ(c.bytes(), 1632 * MiB);
}

TEST(LlamacppKv, ServerDefaultSlotsAndRounding) {
  // llamacpp-006: Phi-4-mini (32 layers, 8 KV heads x 128), llama-server without -np in a 2026
  // build ("n_parallel is set to auto, using n_parallel = 4 and kv_unified = true"), n_ctx 2048:
  // "size =  256.00 MiB (  2048 cells,  32 layers,  4/1 seqs)".
  KvSettings s;
  s.ctx_size = 2048;
  auto c = kv_cache_size(uniform(32, 8, 128, 131072), s);
  EXPECT_EQ(c.n_seq_max, 4);
  EXPECT_EQ(c.n_stream, 1);
  EXPECT_EQ(c.base.cells, 2048);
  EXPECT_EQ(c.bytes(), 256 * MiB);
  EXPECT_EQ(kv_cache_log_line(c, c.base, s),
            "llama_kv_cache: size =  256.00 MiB (  2048 cells,  32 layers,  4/1 seqs), K (f16):  128.00 MiB, V (f16):  128.00 MiB");
  // -np 6 -c 8192 (not unified): 8192 / 6 = 1365 -> 1536 per slot, n_ctx "rounding down to 9216".
  s.ctx_size = 8192;
  s.n_parallel = 6;
  c = kv_cache_size(uniform(32, 8, 128, 131072), s);
  EXPECT_EQ(c.n_ctx_seq, 1536);
  EXPECT_EQ(c.n_ctx, 9216);
  EXPECT_EQ(c.base.cells, 1536);
  // -c 0: the model's context, padded to 256.
  s.ctx_size = 0;
  s.n_parallel = 1;
  KvModel odd = uniform(2, 1, 32, 1000);
  EXPECT_EQ(kv_cache_size(odd, s).base.cells, 1024);
}

TEST(LlamacppKv, SlidingWindowCaches) {
  // llamacpp-016 (b10950, llama-cli, 1 sequence): -c 16384, q8_0, -ub 512:
  // non-SWA "136.00 MiB ( 16384 cells,   8 layers,  1/1 seqs)", SWA "255.00 MiB ( 1536 cells,  40 layers".
  KvSettings s;
  s.build = 10950;
  s.ctx_size = 16384;
  s.n_parallel = 1;
  s.type_k = s.type_v = G::Q8_0;
  auto c = kv_cache_size(gemma4_12b(), s);
  EXPECT_EQ(c.base.cells, 16384);
  EXPECT_EQ(c.base.layers, 8);
  EXPECT_EQ(c.base.bytes(), 136 * MiB);
  EXPECT_EQ(c.swa.cells, 1536);
  EXPECT_EQ(c.swa.layers, 40);
  EXPECT_EQ(c.swa.bytes(), 255 * MiB);
  // llamacpp-017: -ub 2048 -> 1024 + 2048 = 3072 cells, 510 MiB.
  s.n_ubatch = 2048;
  EXPECT_EQ(kv_cache_size(gemma4_12b(), s).swa.bytes(), 510 * MiB);
  // llamacpp-018: -c 8192 -np 2 -ub 512, f16, not unified: two streams of 4096 base cells (128 MiB)
  // and of 1536 SWA cells (960 MiB).
  s.ctx_size = 8192;
  s.n_parallel = 2;
  s.n_ubatch = 512;
  s.type_k = s.type_v = G::F16;
  s.build = 0;
  c = kv_cache_size(gemma4_12b(), s);
  EXPECT_EQ(c.n_stream, 2);
  EXPECT_EQ(c.base.cells, 4096);
  EXPECT_EQ(c.base.bytes(), 128 * MiB);
  EXPECT_EQ(c.swa.cells, 1536);
  EXPECT_EQ(c.swa.bytes(), 960 * MiB);
  // "a -ub 256 run gave 1280" cells.
  s.n_ubatch = 256;
  EXPECT_EQ(kv_cache_size(gemma4_12b(), s).swa.cells, 1280);
}

TEST(LlamacppKv, GptOssFullSizeSwaAndOlderRules) {
  // gpt-oss-120b (data/models/openai/gpt-oss-120b: 36 layers alternating sliding/full, 8 KV heads
  // x 64, window 128). llamacpp-015 (LM Studio, 2025-08, --swa-full): both caches 4096 cells,
  // "size =  144.00 MiB (  4096 cells,  18 layers,  1/1 seqs)" each.
  KvModel m;
  for (int il = 0; il < 36; ++il) m.layers.push_back(KvLayer{512, 512, il % 2 == 0});
  m.n_swa = 128;
  m.n_ctx_train = 131072;
  KvSettings s;
  s.build = 6100;
  s.ctx_size = 4096;
  s.n_parallel = 1;
  s.swa_full = true;
  auto c = kv_cache_size(m, s);
  EXPECT_EQ(c.base.bytes(), 144 * MiB);
  EXPECT_EQ(c.swa.cells, 4096);
  EXPECT_EQ(c.swa.bytes(), 144 * MiB);
  EXPECT_EQ(kv_cache_log_line(c, c.swa, s),
            "llama_kv_cache: size =  144.00 MiB (  4096 cells,  18 layers,  1/1 seqs), K (f16):   72.00 MiB, V (f16):   72.00 MiB");
  // Without --swa-full, b6182-era rule: 128 + ubatch 512 = 640 cells (flash attention off pads
  // to 32; "b6182: SWA cache 640 cells, unpadded" in the log-era notes).
  s.swa_full = false;
  s.flash_attn = false;
  EXPECT_EQ(kv_cache_size(m, s).swa.cells, 640);
  // The first iswa rule took n_batch: 128 + 2048 = 2176 cells.
  s.build = 5500;
  EXPECT_EQ(kv_cache_size(m, s).swa.cells, 2176);
  // Newest: padded to 256 after the min: 640 -> 768.
  s.build = 0;
  EXPECT_EQ(kv_cache_size(m, s).swa.cells, 768);
}

TEST(LlamacppKv, RecurrentLayersAndBadTypes) {
  // Hybrid models: layers without KV (recurrent) are left out. llamacpp-014: 16 attention layers
  // of 1024 (4 KV heads x 256) at 200704 cells, q4_0: "size = 3528.00 MiB (200704 cells,  16 layers".
  KvModel m;
  for (int il = 0; il < 64; ++il) m.layers.push_back(il % 4 == 3 ? KvLayer{1024, 1024, false} : KvLayer{0, 0, false});
  m.n_ctx_train = 262144;
  KvSettings s;
  s.ctx_size = 200704;
  s.n_parallel = 1;
  s.type_k = s.type_v = G::Q4_0;
  auto c = kv_cache_size(m, s);
  EXPECT_EQ(c.base.layers, 16);
  EXPECT_EQ(c.base.k_bytes, 1764 * MiB);
  EXPECT_EQ(c.bytes(), 3528 * MiB);
  s.type_k = G::Q4_K;
  EXPECT_THROW(kv_cache_size(m, s), InputError);
  // Sizes int64 cannot hold, and contexts past llama.cpp's uint32, are one InputError.
  s.type_k = G::F16;
  KvModel huge = uniform(4, int64_t{1} << 20, int64_t{1} << 20, 1 << 30);
  s.ctx_size = 0;
  EXPECT_THROW(kv_cache_size(huge, s), InputError);
  s.ctx_size = (int64_t{1} << 32) + 1;
  EXPECT_THROW(kv_cache_size(m, s), InputError);
}

TEST(LlamacppKv, ModelFromGguf) {
  // Per layer key_length x head_count_kv; sliding-window, MLA and recurrent models are not modelled.
  gguf::ModelSummary g;
  g.block_count = 2;
  g.context_length = 4096;
  g.key_length = 128;
  g.value_length = 64;
  g.head_count_kv = {8, 0};
  std::string why;
  auto m = kv_model_from_gguf(g, &why);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->layers.size(), 2u);
  EXPECT_EQ(m->layers[0].k_gqa, 1024);
  EXPECT_EQ(m->layers[0].v_gqa, 512);
  EXPECT_EQ(m->layers[1].k_gqa, 0);
  EXPECT_EQ(m->n_ctx_train, 4096);
  g.sliding_window = 4096;
  g.architecture = "mistral3";
  EXPECT_FALSE(kv_model_from_gguf(g, &why));
  EXPECT_NE(why.find("sliding-window layers of mistral3"), std::string::npos);
  // gpt-oss (set_swa_pattern(2)): even layers slide. gpt-oss-120b at -c 4096 with llama-server's
  // default 4 unified slots, newest rules: 18 full layers x 4096 cells; SWA PAD(128 x 4 + 512, 256) = 1024.
  gguf::ModelSummary oss;
  oss.architecture = "gpt-oss";
  oss.block_count = 36;
  oss.context_length = 131072;
  oss.key_length = oss.value_length = 64;
  oss.head_count_kv.assign(36, 8);
  oss.sliding_window = 128;
  auto om = kv_model_from_gguf(oss, &why);
  ASSERT_TRUE(om) << why;
  EXPECT_TRUE(om->layers[0].swa);
  EXPECT_FALSE(om->layers[1].swa);
  KvSettings s;
  s.ctx_size = 4096;
  auto c = kv_cache_size(*om, s);
  EXPECT_EQ(c.base.layers, 18);
  EXPECT_EQ(c.base.bytes(), 144 * MiB);
  EXPECT_EQ(c.swa.layers, 18);
  EXPECT_EQ(c.swa.cells, 1024);
  // gemma3 (set_swa_pattern(6)): 48 layers -> 40 sliding, 8 full (every sixth).
  gguf::ModelSummary g3 = oss;
  g3.architecture = "gemma3";
  g3.block_count = 48;
  g3.head_count_kv.assign(48, 8);
  auto gm = kv_model_from_gguf(g3, &why);
  ASSERT_TRUE(gm);
  int full = 0;
  for (const auto& l : gm->layers) full += !l.swa;
  EXPECT_EQ(full, 8);
  EXPECT_TRUE(gm->layers[4].swa);
  EXPECT_FALSE(gm->layers[5].swa);
  // gemma2 without the key: llama.cpp's default window 4096.
  gguf::ModelSummary g2 = g3;
  g2.architecture = "gemma2";
  g2.sliding_window = 0;
  auto g2m = kv_model_from_gguf(g2, &why);
  ASSERT_TRUE(g2m);
  EXPECT_EQ(g2m->n_swa, 4096);
  g.sliding_window = 0;
  g.mla = true;
  EXPECT_FALSE(kv_model_from_gguf(g, &why));
  g.mla = false;
  g.recurrent = true;
  EXPECT_FALSE(kv_model_from_gguf(g, &why));
  EXPECT_NE(why.find("recurrent"), std::string::npos);
}
