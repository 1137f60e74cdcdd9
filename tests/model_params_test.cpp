// Model reader: published parameter counts and checkpoint sizes reproduced from the catalog
// configs (data/models), each with the hand arithmetic or the published figure it checks.
#include <gtest/gtest.h>

#include <cmath>

#include "headroom/error.h"
#include "headroom/model.h"

using namespace headroom;

namespace {
double billions(int64_t p) { return static_cast<double>(p) / 1e9; }
// Rounds to the published precision: 1 decimal ("8.03B" -> 2 decimals passed explicitly).
double round_to(double v, int decimals) {
  double f = std::pow(10.0, decimals);
  return std::round(v * f) / f;
}
}  // namespace

TEST(ModelParams, Llama31_8B_Exact) {
  // embed = lm_head = 128256 x 4096 = 525,336,576 each.
  // layer: q 4096x4096 = 16,777,216; k, v 1024x4096 = 4,194,304 each; o 16,777,216;
  //        mlp 3 x 14336 x 4096 = 176,160,768; 2 norms 8,192 -> 218,112,000; x 32 = 6,979,584,000.
  // total = 6,979,584,000 + 2 x 525,336,576 + 4,096 (final norm) = 8,030,261,248 (card: 8.03B).
  auto m = load_model("meta-llama/Meta-Llama-3.1-8B");
  EXPECT_EQ(m->params_total, 8'030'261'248);
  EXPECT_EQ(m->params_active, m->params_total);
  EXPECT_EQ(m->checkpoint_bytes, 2 * 8'030'261'248);  // BF16
  EXPECT_EQ(m->params_embedding, 2 * 525'336'576);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 2), 8.03);
}

TEST(ModelParams, CatalogIdIsCaseInsensitiveAndCached) {
  auto a = load_model("META-LLAMA/meta-llama-3.1-8b");
  auto b = load_model("meta-llama/Meta-Llama-3.1-8B");
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->config.hf_id, "meta-llama/Meta-Llama-3.1-8B");
}

TEST(ModelParams, Gemma2_9B_CheckpointMatchesIndexTotalSize) {
  // facts.json checkpoint_total_size_bytes = 18,483,411,968 (model.safetensors.index.json).
  // layer: q 4096x3584 = 14,680,064; k, v 2048x3584 = 7,340,032 each; o 14,680,064;
  //        mlp 3 x 14336 x 3584 = 154,140,672; 4 norms x 3584 = 14,336 -> 198,195,200; x 42.
  // total = 42 x 198,195,200 + 256000 x 3584 (tied embedding) + 3584 = 9,241,705,984 params x 2 B.
  auto m = load_model("google/gemma-2-9b-it");
  EXPECT_EQ(m->params_total, 9'241'705'984);
  EXPECT_EQ(m->checkpoint_bytes, 18'483'411'968);
  EXPECT_EQ(m->config.count_layers(AttnKind::Sliding), 21);  // even layers windowed (4096)
}

TEST(ModelParams, Mixtral_46_7B_12_9B) {
  auto m = load_model("mistralai/Mixtral-8x7B-Instruct-v0.1");
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 1), 46.7);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active), 1), 12.9);  // top-2 of 8 experts
}

TEST(ModelParams, Glm5_744B_And_Mtp) {
  // research/models-quant-gpus.md 1.2: main 743,911,218,432; MTP layer 78: 9,952,920,576.
  auto m = load_model("zai-org/GLM-5");
  EXPECT_EQ(m->params_total, 743'911'218'432);
  EXPECT_EQ(m->params_mtp, 9'952'920'576);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 0), 744);
  // Card "40B active": active without embedding and lm_head = 39.88B.
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active - m->params_embedding), 0), 40);
  EXPECT_EQ(m->config.count_layers(AttnKind::Full), 78);
  EXPECT_TRUE(m->config.has_indexer());
}

TEST(ModelParams, Glm5Nvfp4_441GB_WithoutMtp) {
  // NVFP4 Linear [o, i] = o*i/2 (U8) + o*i/16 (F8 scales) + 8 (two F32 scalars).
  // BF16: MLA attention 330,044,416 B and indexer 18,743,808 B per layer (excluded from NVFP4),
  // norms, router 256x6144 BF16 + 256 F32 bias, embed + lm_head 154880x6144 BF16.
  // Dense MLP (layers 0-2) and routed + shared experts NVFP4: one expert 21,233,688 B.
  // Sum (python, exact integers): 440,911,290,192 B; plus the BF16 MTP layer 19.9 GB.
  auto m = load_model("nvidia/GLM-5-NVFP4");
  EXPECT_EQ(m->checkpoint_bytes - m->checkpoint_bytes_mtp, 440'911'290'192);
  EXPECT_NEAR(static_cast<double>(m->checkpoint_bytes_mtp) / 1e9, 19.9, 0.05);
  EXPECT_EQ(m->config.quant.method, QuantMethod::Nvfp4);
  EXPECT_EQ(m->config.quant.kv_cache_quant, "FP8");
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 0), 744);  // packed FP4 counts 2 params per byte
}

TEST(ModelParams, KimiK2_1T_32B) {
  auto m = load_model("moonshotai/Kimi-K2-Instruct");
  EXPECT_NEAR(billions(m->params_total), 1000.0, 50.0);  // "1T" = 1.0T +- 5%
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active - m->params_embedding / 2), 0), 32);  // without the input embedding
}

TEST(ModelParams, DeepSeekV3_671B_37B_Plus14BMtp) {
  auto m = load_model("deepseek-ai/DeepSeek-V3");
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 0), 671);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active - m->params_embedding / 2), 0), 37);
  // Card: 685B = 671B main + 14B MTP module (with its own embed_tokens and shared_head.head).
  EXPECT_NEAR(billions(m->params_total + m->params_mtp), 685.0, 685.0 * 0.005);
  EXPECT_EQ(m->config.quant.method, QuantMethod::Fp8Block);
}

TEST(ModelParams, GptOss_117B_5_1B_And_21B_3_6B) {
  auto big = load_model("openai/gpt-oss-120b");
  EXPECT_DOUBLE_EQ(round_to(billions(big->params_total), 0), 117);
  // Active 5.1B counts the routed experts (4 of 128) without the input embedding.
  EXPECT_DOUBLE_EQ(round_to(billions(big->params_active - big->params_embedding / 2), 1), 5.1);
  auto small = load_model("openai/gpt-oss-20b");
  EXPECT_DOUBLE_EQ(round_to(billions(small->params_total), 0), 21);
  EXPECT_DOUBLE_EQ(round_to(billions(small->params_active - small->params_embedding / 2), 1), 3.6);
  EXPECT_EQ(big->config.count_layers(AttnKind::Sliding), 18);
  EXPECT_EQ(big->config.quant.method, QuantMethod::Mxfp4);
}

TEST(ModelParams, Qwen3Family) {
  EXPECT_DOUBLE_EQ(round_to(billions(load_model("Qwen/Qwen3-14B")->params_total), 1), 14.8);  // card 14.8B
  auto moe = load_model("Qwen/Qwen3-30B-A3B");
  EXPECT_DOUBLE_EQ(round_to(billions(moe->params_total), 1), 30.5);  // card: 30.5B total, 3.3B activated
  EXPECT_EQ(static_cast<int>(billions(moe->params_active) * 10), 33);  // 3.353B; Qwen truncates
  auto next = load_model("Qwen/Qwen3-Next-80B-A3B-Instruct");
  EXPECT_DOUBLE_EQ(round_to(billions(next->params_total), 0), 80);
  EXPECT_DOUBLE_EQ(round_to(billions(next->params_active - next->params_embedding), 0), 3);
  EXPECT_EQ(next->config.count_layers(AttnKind::Linear), 36);  // every 4th of 48 is full attention
}

TEST(ModelParams, Glm45Air_106B_12B) {
  // Published "106B total / 12B active" (truncated: 106.85B without the MTP layer).
  auto m = load_model("zai-org/GLM-4.5-Air");
  EXPECT_EQ(static_cast<int>(billions(m->params_total)), 106);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active - m->params_embedding), 0), 12);
}

TEST(ModelParams, EveryCatalogModelLoadsOrSaysWhy) {
  int loaded = 0, unsupported = 0;
  for (const auto& id : model_catalog_ids()) {
    try {
      auto m = load_model(id);
      EXPECT_GT(m->params_total, 0) << id;
      EXPECT_GT(m->checkpoint_bytes, 0) << id;
      ++loaded;
    } catch (const InputError& e) {
      // An unknown architecture, or a known one whose variant is refused by name (DeepSeek-V4 NVFP4).
      const std::string w = e.what();
      EXPECT_TRUE(w.find("unsupported architecture") != std::string::npos || w.find("is not modelled") != std::string::npos)
          << id << ": " << w;
      ++unsupported;
    }
  }
  EXPECT_GE(loaded, 85);
  EXPECT_LE(unsupported, 20);
}

TEST(ModelParams, Gemma4_31B_DenseHybridAttentionAndVision) {
  // nvidia/Gemma-4-31B-IT-NVFP4 config (text_config): hidden 5376, 60 layers (layer_types: full at
  // 5, 11, ..., 59 = 10 layers, 50 sliding), 32 heads, sliding head_dim 256 x 16 KV heads, full layers
  // global_head_dim 512 x num_global_key_value_heads 4 with attention_k_eq_v (no v_proj), MLP 21504,
  // vocab 262144 tied. Layer shapes from vLLM gemma4.py / transformers modeling_gemma4.py.
  //   sliding layer: q 32*256*5376 = 44,040,192; k = v = 16*256*5376 = 22,020,096; o 44,040,192;
  //     q_norm + k_norm 512; mlp 3*21504*5376 = 346,816,512; 4 norms 21,504; layer_scalar 1 -> 478,959,105
  //   full layer: q 32*512*5376 = 88,080,384; k 4*512*5376 = 11,010,048; o 88,080,384; norms 1,024;
  //     mlp 346,816,512; 4 norms 21,504; layer_scalar 1 -> 534,009,857
  //   text = 262144*5376 + 50*478,959,105 + 10*534,009,857 + 5376 = 30,697,345,340
  //   vision (27 layers, hidden 1152, 16 heads x 72, MLP 4304, patch 16, 10240 positions, standardize):
  //     1152*768 + 2*10240*1152 + 27*(4*1152*1152 + 144 + 3*1152*4304 + 4*1152) + 2*1152 + 5376*1152
  //     = 575,743,536  -> total 31,273,088,876 ("31B").
  auto m = load_model("nvidia/Gemma-4-31B-IT-NVFP4");
  const auto& c = m->config;
  EXPECT_EQ(c.family, "gemma4");
  EXPECT_EQ(c.count_layers(AttnKind::Full), 10);
  EXPECT_EQ(c.count_layers(AttnKind::Sliding), 50);
  EXPECT_EQ(c.sliding_window, 1024);
  EXPECT_TRUE(c.attention_k_eq_v);
  EXPECT_EQ(c.layers[5].head_dim, 512);
  EXPECT_EQ(c.layers[5].kv_heads, 4);
  EXPECT_EQ(c.layers[0].head_dim, 0);  // model value (256)
  EXPECT_FALSE(c.is_moe());
  EXPECT_EQ(c.vision.params, 575'743'536);
  EXPECT_EQ(m->params_total, 31'273'088'876);
  EXPECT_EQ(m->params_active, 31'273'088'876 - 575'743'536);  // vision tower not counted as active
  // Checkpoint: NVFP4 MLPs (hf_quant_config excludes self_attn of every layer, lm_head, vision):
  //   per MLP linear 21504 x 5376: U8 weight 57,802,752 + F8 scales (1/16) 7,225,344 + 2 F32 scalars 8
  //   = 65,028,104 B, x 3 x 60 = 11,705,058,720 B; BF16 rest (embedding, attention, norms) 19,776,709,240 B;
  //   vision 1,151,487,072 B -> 32,633,255,032 B (30.39 GiB).
  EXPECT_EQ(m->checkpoint_bytes, 32'633'255'032);
}

TEST(ModelParams, Gemma4_26B_A4B_MoeBlockBesideDenseMlp) {
  // google/gemma-4-26B-A4B text_config: hidden 2816, 30 layers (5 full, 25 sliding), 16 heads, KV 8 x 256
  // sliding / 2 x 512 full (k_eq_v), dense MLP 2112 in every layer plus a MoE block of 128 experts
  // (moe_intermediate_size 704, top_k_experts 8): router proj 128*2816 + scale 2816 + per_expert_scale 128,
  // 3 more norms, experts gate_up [128, 1408, 2816] + down [128, 2816, 704].
  //   moe block = 360,448 + 2,816 + 128 + 8,448 + 2 * 128 * 704 * 2816 (= 507,510,784) = 507,882,624
  //   text total = 25,233,141,790; vision tower as the 31B's but embed_vision 2816 x 1152:
  //   575,743,536 - (5376 - 2816) * 1152 = 572,794,416 -> 25,805,936,206.
  //   active = text - 30 layers x 120 unrouted experts x 3 x 704 x 2816 = 3,822,530,590.
  auto m = load_model("google/gemma-4-26B-A4B");
  EXPECT_EQ(m->config.num_experts, 128);
  EXPECT_EQ(m->config.experts_per_token, 8);
  EXPECT_TRUE(m->config.layers[0].moe);
  EXPECT_EQ(m->params_total, 25'805'936'206);
  EXPECT_EQ(m->params_active, 3'822'530'590);
}

TEST(ModelParams, MiMoV2Flash_309B_15B) {
  // XiaomiMiMo/MiMo-V2-Flash README: 309B total, 15B active. Config: 48 layers, hidden 4096, 64 heads,
  // head_dim 192 / v_head_dim 128; hybrid_layer_pattern: 39 sliding (8 KV heads, sink bias [64]) and 9 full
  // (4 KV heads); moe_layer_freq: layer 0 dense (16384), 47 MoE layers of 256 experts (2048), top-8.
  //   attention: q 64*192*4096 = 50,331,648; o 4096*64*128 = 33,554,432; k/v = kv*(192 + 128)*4096
  //   MoE layer: gate 256*4096 + bias 256 + 256 experts x 3 x 2048 x 4096 = 6,443,499,776
  //   total (with 2 x 152576 x 4096 embedding/lm_head) = 308,778,780,864; active = 15,445,936,320.
  auto m = load_model("XiaomiMiMo/MiMo-V2-Flash");
  const auto& c = m->config;
  EXPECT_EQ(c.family, "mimo_v2");
  EXPECT_EQ(c.count_layers(AttnKind::Sliding), 39);
  EXPECT_EQ(c.sliding_window, 128);
  EXPECT_EQ(c.layers[1].kv_heads, 8);
  EXPECT_EQ(c.layers[0].kv_heads, 0);  // full layer: the model's 4
  EXPECT_FALSE(c.layers[0].moe);
  EXPECT_TRUE(c.layers[1].moe);
  EXPECT_EQ(m->params_total, 308'778'780'864);
  EXPECT_EQ(m->params_active, 15'445'936'320);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 0), 309);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active), 0), 15);
}

TEST(ModelParams, DeepSeekV4Pro_1_6T_49B_865GB) {
  // DeepSeek-V4 report (arXiv 2606.19348 abstract): V4-Pro 1.6T parameters, 49B activated; repo size
  // 865 GB (press). Config: 61 layers, hidden 7168, 128 heads x head_dim 512, q_lora 1536, o_lora 1024 x
  // 16 groups, hc_mult 4, 384 experts (3072) top-6 + 1 shared, compress_ratios [128,128,4,128,...,4,0].
  // Per layer (vLLM deepseek_v4.py shapes): wq_a 1536*7168, wkv 512*7168, wq_b 65536*1536, wo_a
  // 16384*4096, wo_b 7168*16384 (FP8, E8M0 128x128 scales), hc fn 2 x 24 x 28672 F32, experts
  // 384 x 3 x 3072 x 7168 as MXFP4 (0.5 B + 1/32 B scale per weight); CSA layers add the indexer
  // (wq_b 8192*1536, weights_proj 64*7168, compressor 2x256 wide) and compressors (ape r x coff*512,
  // wkv/wgate coff*512 x 7168 BF16). Summed by hand (script over the config, same rules):
  // total 1,572,999,528,803 (published 1.6T); active 49,781,408,099 (published "49B", truncated);
  // checkpoint incl. MTP layer 864,695,484,536 B (published 865 GB).
  auto m = load_model("deepseek-ai/DeepSeek-V4-Pro");
  const auto& c = m->config;
  EXPECT_EQ(c.family, "deepseek_v4");
  EXPECT_TRUE(c.expert_fp4);
  EXPECT_EQ(c.layers[0].compress_ratio, 128);
  EXPECT_EQ(c.layers[2].compress_ratio, 4);
  EXPECT_TRUE(c.layers[2].indexer);
  EXPECT_FALSE(c.layers[3].indexer);
  EXPECT_EQ(m->params_total, 1'572'999'528'803);
  EXPECT_EQ(m->params_active, 49'781'408'099);
  EXPECT_EQ(m->checkpoint_bytes, 864'695'484'536);
  EXPECT_EQ(m->params_mtp, 25'840'145'979);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total) / 1000, 1), 1.6);
  EXPECT_DOUBLE_EQ(std::floor(billions(m->params_active)), 49);
  EXPECT_DOUBLE_EQ(round_to(m->checkpoint_bytes / 1e9, 0), 865);
}

TEST(ModelParams, DeepSeekV4Flash_284B_13B_and_FP8_requant) {
  // V4-Flash: 284B parameters, 13B activated (arXiv 2606.19348); FP4 repo 160 GB / "149 GB" (GiB),
  // sgl-project FP8 re-quantization "274 GB" (a deployment note; F32 scales assumed, so a GiB-ish figure).
  // 43 layers, hidden 4096, 64 heads, q_lora 1024, o_lora 1024 x 8, 256 experts (2048) top-6,
  // compress_ratios [0,0,4,128,...,4,0]. Hand sums as for Pro: total 284,334,567,511, active
  // 13,801,959,511; checkpoint 159,600,177,736 B (FP4 experts) and 292,546,037,320 B (FP8 experts).
  auto m = load_model("deepseek-ai/DeepSeek-V4-Flash");
  EXPECT_EQ(m->params_total, 284'334'567'511);
  EXPECT_EQ(m->params_active, 13'801'959'511);
  EXPECT_EQ(m->checkpoint_bytes, 159'600'177'736);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 0), 284);
  EXPECT_DOUBLE_EQ(std::floor(billions(m->params_active)), 13);
  EXPECT_EQ(m->config.layers[0].compress_ratio, 0);
  auto f = load_model("sgl-project/DeepSeek-V4-Flash-FP8");  // model_type deepseek_ref, no expert_dtype
  EXPECT_FALSE(f->config.expert_fp4);
  EXPECT_EQ(f->params_total, 284'334'567'511);
  EXPECT_EQ(f->checkpoint_bytes, 292'546'037'320);
}

TEST(ModelParams, Qwen25_72B_And_QwQ32B_MatchCheckpointCounts) {
  // Both configs come from model reports that also sum the safetensors ('参数总量'): 72,706,203,648 over
  // 37 files (135.43 GiB) and 32,763,876,352 over 14 files (61.03 GiB); see each facts.json.
  // Qwen2.5-72B by hand: layer = q 8192^2 + 8192 bias + k/v 2 x (1024*8192 + 1024) + o 8192^2
  //   + mlp 3*8192*29568 + 2 norms 8192 = 877,684,736; x 80 + 2 x 152064*8192 (untied) + 8192.
  auto q72 = load_model("Qwen/Qwen2.5-72B-Instruct");
  EXPECT_EQ(q72->params_total, 80LL * 877'684'736 + 2LL * 152'064 * 8192 + 8192);
  EXPECT_EQ(q72->params_total, 72'706'203'648);
  EXPECT_EQ(q72->checkpoint_bytes, 2 * 72'706'203'648LL);  // BF16
  EXPECT_DOUBLE_EQ(round_to(q72->checkpoint_bytes / 1073741824.0, 2), 135.43);
  auto qwq = load_model("Qwen/QwQ-32B");
  EXPECT_EQ(qwq->params_total, 32'763'876'352);
  EXPECT_DOUBLE_EQ(round_to(qwq->checkpoint_bytes / 1073741824.0, 2), 61.03);
}

TEST(ModelParams, Qwen35_4B_And_Qwen36_27B_MatchCheckpointCounts) {
  // Model reports sum the safetensors (language model, vision tower and the MTP layer together):
  // Qwen3.5-4B 4,659,865,088 parameters in 8.68 GiB (tied embeddings), Qwen3.6-27B 27,781,427,952 in
  // 51.75 GiB. headroom keeps the MTP layer apart (params_mtp), so total + mtp must give the file count.
  auto small = load_model("Qwen/Qwen3.5-4B");
  EXPECT_EQ(small->params_total + small->params_mtp, 4'659'865'088);
  EXPECT_EQ(small->config.count_layers(AttnKind::Linear), 24);  // 3 linear : 1 full over 32 layers
  EXPECT_DOUBLE_EQ(round_to(small->checkpoint_bytes / 1073741824.0, 2), 8.68);
  auto big = load_model("Qwen/Qwen3.6-27B");
  EXPECT_EQ(big->params_total + big->params_mtp, 27'781'427'952);
  EXPECT_EQ(big->config.count_layers(AttnKind::Linear), 48);
  EXPECT_DOUBLE_EQ(round_to(big->checkpoint_bytes / 1073741824.0, 2), 51.75);
}

TEST(ModelParams, Qwen3Coder30B_IndexTotals) {
  // deepit-cz/amd-npu-converting copies of the two checkpoints' model.safetensors.index.json:
  // BF16 total_parameters 30,532,122,624, total_size 61,064,245,248 B; FP8 total_parameters
  // 30,533,947,392 (1,824,768 more: the weight_scale_inv tensors), total_size 31,170,895,872 B.
  auto bf16 = load_model("Qwen/Qwen3-Coder-30B-A3B-Instruct");
  EXPECT_EQ(bf16->params_total, 30'532'122'624);
  EXPECT_EQ(bf16->checkpoint_bytes, 61'064'245'248);
  auto fp8 = load_model("Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8");
  EXPECT_EQ(fp8->params_total, 30'532'122'624);
  EXPECT_EQ(fp8->config.quant.method, QuantMethod::Fp8Block);
  // headroom sizes the 128x128 block scales as F32 (DeepSeek's layout); Qwen's FP8 files store
  // weight_scale_inv in BF16 (also seen in a Qwen3-30B-A3B-Thinking-2507-FP8 weight table), so the
  // estimate is 2 B x 1,824,768 scales (3.5 MiB, 0.01%) above the index.
  EXPECT_EQ(fp8->checkpoint_bytes - 2LL * 1'824'768, 31'170'895'872);
}

TEST(ModelParams, Glm45Fp8_355B_32B_ByHand) {
  // transformers glm4_moe docs: "GLM-4.5 has 355 billion total parameters with 32 billion active".
  // zai-org/GLM-4.5-FP8 config: 92 layers (3 dense, intermediate 12288), hidden 5120, 96 heads / 8 KV x 128
  // with q/k/v biases and qk norm, 160 experts (1536) top-8 + 1 shared, vocab 151552 untied, 1 MTP layer.
  //   attention = 2 x 5120*12288 + 12288 + 2 x (1024*5120 + 1024) + 2 x 128 = 136,329,472; + 2 norms 10,240
  //   dense mlp 3*5120*12288 = 188,743,680; MoE = 160*3*5120*1536 + 3*5120*1536 + 160*5120 + 160
  //   = 3,799,285,920 (active: 8 experts 188,743,680 + shared 23,592,960 + router 819,360 = 213,156,000)
  //   total = 92 x 136,339,712 + 3 x 188,743,680 + 89 x 3,799,285,920 + 2 x 151552*5120 + 5120
  //   MTP = MoE layer + attention/norms + eh_proj 2*5120*5120 + enorm/hnorm/shared_head.norm 3*5120.
  // 352.8B is 0.6% under the published 355B (its rounding or count is not stated).
  auto m = load_model("zai-org/GLM-4.5-FP8");
  EXPECT_EQ(m->params_total, 352'797'829'024);
  EXPECT_EQ(m->params_active, 92LL * 136'339'712 + 3LL * 188'743'680 + 89LL * 213'156'000 + 2LL * 151'552 * 5120 + 5120);
  EXPECT_EQ(m->params_mtp, 3'799'285'920LL + 136'339'712 + 2LL * 5120 * 5120 + 3 * 5120);
  EXPECT_NEAR(billions(m->params_total), 355.0, 355.0 * 0.01);
  EXPECT_DOUBLE_EQ(std::floor(billions(m->params_active - m->params_embedding)), 32);
  EXPECT_EQ(m->config.quant.method, QuantMethod::Fp8PerChannel);
  // The FP8 Air re-quantization keeps the BF16 Air's parameter count (106.85B, published 106B).
  EXPECT_EQ(load_model("zai-org/GLM-4.5-Air-FP8")->params_total, load_model("zai-org/GLM-4.5-Air")->params_total);
}

TEST(ModelParams, Olmo2_32B_ByHand) {
  // allenai/OLMo-2-0325-32B-Instruct ("32B"): 64 layers, hidden 5120, 40 heads / 8 KV heads x 128, MLP 27648,
  // vocab 100352 untied. OLMo-2 layers (vLLM olmo2.py): q/k/v/o without bias, q_norm over 40*128 and k_norm
  // over 8*128, post-attention and post-feedforward RMSNorms, no input norm.
  //   layer = 2 x 5120^2 + 2 x 1024*5120 + 5120 + 1024 + 3*5120*27648 + 2*5120 = 487,604,224
  auto m = load_model("allenai/OLMo-2-0325-32B-Instruct");
  EXPECT_EQ(m->params_total, 64LL * 487'604'224 + 2LL * 100'352 * 5120 + 5120);
  EXPECT_EQ(m->params_total, 32'234'279'936);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 0), 32);
}

TEST(ModelParams, Qwen3VL30B_Fp8_ExpertsAreFp8) {
  // Qwen/Qwen3-VL-30B-A3B-Instruct-FP8: same text model as Qwen3-Coder-30B-A3B (hidden 2048, 48 layers,
  // 128 experts x 768, vocab 151936 untied) plus a 27-block vision tower that ignored_layers keeps in BF16;
  // the experts are not ignored, so vLLM loads them with Fp8MoEMethod (qwen3_vl_moe.py takes the fused BF16
  // layout or per-expert tensors). The checkpoint is therefore the Coder FP8 estimate plus 2 B per vision
  // parameter (538,631,408), not the BF16 fused experts (which would put it at 62.1 GB).
  auto vl = load_model("Qwen/Qwen3-VL-30B-A3B-Instruct-FP8");
  auto coder = load_model("Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8");
  EXPECT_EQ(vl->config.vision.params, 31'070'754'032 - 30'532'122'624);
  EXPECT_EQ(vl->checkpoint_bytes, coder->checkpoint_bytes + 2 * vl->config.vision.params);
  EXPECT_EQ(load_model("Qwen/Qwen3-VL-30B-A3B-Instruct")->checkpoint_bytes, 2 * vl->params_total);  // BF16 sibling
}
