// Config normalization (key aliases, VLM nesting, layer patterns), quantization formats and
// their tensor storage (hand-computed shapes/bytes), and bad configs -> one InputError.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "headroom/error.h"
#include "headroom/model.h"
#include "model/model_internal.h"

using namespace headroom;

namespace {
const std::string kLlama = R"("architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 2,
  "vocab_size": 32000, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 11008, "torch_dtype": "float16")";

ModelConfig parse(const std::string& body, const std::string& hq = {}) { return parse_model_config("{" + body + "}", "t/config.json", hq); }

const TensorInfo& find(const std::vector<TensorInfo>& ts, const std::string& name) {
  for (const auto& t : ts)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + name);
}

std::string error_of(const std::string& text) {
  try {
    parse_model_config(text, "bad/config.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(ModelConfig, AlternativeKeysAndDefaults) {
  // ChatGLM-style multi_query_group_num; head_dim defaults to hidden / heads = 128.
  auto c = parse(R"("architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 2, "vocab_size": 100,
                    "num_attention_heads": 32, "multi_query_group_num": 2, "intermediate_size": 8)");
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.dtype, DType::BF16);  // no torch_dtype: bf16
  auto d = parse(R"("architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 1, "vocab_size": 10,
                    "num_attention_heads": 4, "n_head_kv": 1, "intermediate_size": 8, "dtype": "float32")");
  EXPECT_EQ(d.num_kv_heads, 1);
  EXPECT_EQ(d.dtype, DType::F32);
  // Absent KV heads = MHA.
  auto e = parse(R"("architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 1, "vocab_size": 10,
                    "num_attention_heads": 4, "intermediate_size": 8)");
  EXPECT_EQ(e.num_kv_heads, 4);
}

TEST(ModelConfig, VlmTextConfigNestingAndVisionTower) {
  auto m = load_model("Qwen/Qwen3-VL-8B-Instruct");
  EXPECT_EQ(m->config.hidden_size, 4096);  // from text_config
  EXPECT_EQ(m->config.num_layers, 36);
  EXPECT_EQ(m->config.text_prefix, "model.language_model.");
  EXPECT_TRUE(m->config.vision.present);
  // Vision (h 1152, mlp 4304, merge 2 -> m = 4608, out 4096):
  //   patch embed 1152 x 3 x 2 x 16 x 16 + 1152 = 1,770,624; pos_embed 2304 x 1152 = 2,654,208;
  //   block = 4 x 1152 (2 LayerNorms) + qkv 3,984,768 + proj 1,328,256 + fc1 4,962,512 + fc2 4,959,360
  //         = 15,239,504; x 27 = 411,466,608;
  //   merger 2 x 1152 + (4608^2 + 4608) + (4096 x 4608 + 4096) = 40,119,040;
  //   3 deepstack mergers (norm over 4608) 40,125,952 each = 120,377,856.  Sum = 576,388,336.
  EXPECT_EQ(m->config.vision.params, 576'388'336);
  // Text model = Qwen3-8B: 36 x 192,946,432 + 2 x 622,329,856 + 4,096 = 8,190,735,360.
  EXPECT_EQ(m->params_total - 8'190'735'360, 576'388'336);
}

TEST(ModelConfig, LayerPatterns) {
  auto gemma = load_model("google/gemma-2-9b-it")->config;
  EXPECT_EQ(gemma.layers[0].attn, AttnKind::Sliding);
  EXPECT_EQ(gemma.layers[1].attn, AttnKind::Full);
  auto next = load_model("Qwen/Qwen3-Next-80B-A3B-Instruct")->config;
  EXPECT_EQ(next.layers[3].attn, AttnKind::Full);  // (i + 1) % 4 == 0
  EXPECT_EQ(next.layers[0].attn, AttnKind::Linear);
  auto scout = load_model("meta-llama/Llama-4-Scout-17B-16E-Instruct")->config;
  EXPECT_EQ(scout.count_layers(AttnKind::Chunked), 36);  // every 4th of 48 is a global NoPE layer
  auto mav = load_model("meta-llama/Llama-4-Maverick-17B-128E-Instruct")->config;
  EXPECT_FALSE(mav.layers[0].moe);  // interleave_moe_layer_step 2: layers 1, 3, 5, ... are MoE
  EXPECT_TRUE(mav.layers[1].moe);
  auto nemo = load_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")->config;
  EXPECT_EQ(nemo.layers[0].attn, AttnKind::Linear);  // 'M'
  EXPECT_TRUE(nemo.layers[1].moe);                   // 'E'
  EXPECT_EQ(nemo.count_layers(AttnKind::Full), 6);   // six '*'
  auto glm52 = load_model("zai-org/GLM-5.2")->config;
  int idx = 0;
  for (const auto& l : glm52.layers) idx += l.indexer;
  EXPECT_EQ(idx, 21);  // IndexShare: 21 of 78 layers are "full" (sglang test resolve_dsa_indexer_layer_ids)
  auto dsv3 = load_model("deepseek-ai/DeepSeek-V3")->config;
  EXPECT_FALSE(dsv3.layers[2].moe);  // first_k_dense_replace 3
  EXPECT_TRUE(dsv3.layers[3].moe);
}

TEST(Quantization, GlobMatchAndExcludes) {
  EXPECT_TRUE(glob_match("model.layers.*.self_attn", "model.layers.12.self_attn"));
  EXPECT_TRUE(glob_match("lm_head", "lm_head"));
  EXPECT_FALSE(glob_match("model.layers.1.*", "model.layers.10.mlp"));
  EXPECT_TRUE(glob_match("model.layers.[0-2].mlp", "model.layers.1.mlp"));
  EXPECT_TRUE(glob_match("*", ""));
  Quantization q;
  q.method = QuantMethod::Nvfp4;
  q.exclude = {"model.layers.*.self_attn", "lm_head", "re:.*shared_experts.*"};
  EXPECT_EQ(quant_for_module(q, "model.layers.0.self_attn.q_proj"), QuantMethod::None);  // parent matches
  EXPECT_EQ(quant_for_module(q, "model.layers.0.mlp.shared_experts.up_proj"), QuantMethod::None);
  EXPECT_EQ(quant_for_module(q, "model.layers.0.mlp.experts.7.up_proj"), QuantMethod::Nvfp4);
}

TEST(Quantization, Nvfp4StorageHonoursExcludeList) {
  // hf_quant_config.json (ModelOpt): layer 0 attention excluded.
  auto c = parse(kLlama, R"({"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16,
                              "exclude_modules": ["lm_head", "model.layers.0.self_attn*"]}})");
  auto ts = model_detail::derive_inventory(c);
  EXPECT_EQ(find(ts, "model.layers.0.self_attn.q_proj.weight").dtype, DType::F16);
  // q_proj [4096, 4096] NVFP4: weight U8 [4096, 2048] = 8,388,608 B; weight_scale F8 [4096, 256] = 1,048,576 B.
  const auto& w = find(ts, "model.layers.1.self_attn.q_proj.weight");
  EXPECT_EQ(w.dtype, DType::U8);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{4096, 2048}));
  EXPECT_EQ(w.params, 4096 * 4096);
  EXPECT_EQ(find(ts, "model.layers.1.self_attn.q_proj.weight_scale").bytes, 1'048'576);
  EXPECT_EQ(find(ts, "model.layers.1.self_attn.q_proj.weight_scale_2").dtype, DType::F32);
  EXPECT_EQ(find(ts, "model.layers.1.self_attn.q_proj.input_scale").bytes, 4);
  EXPECT_EQ(find(ts, "lm_head.weight").dtype, DType::F16);
  EXPECT_EQ(c.quant.kv_cache_quant, "FP8");
}

TEST(ModelConfigErrors, NumberOverflowIsAnInputError) {
  // nlohmann throws out_of_range (406) for 1e309 while parsing; json_util.cpp's parse_json reports
  // it as one input-error line (it escaped as an internal error before).
  EXPECT_THROW(parse(kLlama + R"(, "rope_theta": 1e309)"), InputError);
}

TEST(Quantization, KvCacheQuantAsEachLoaderReadsIt) {
  // vLLM and SGLang read config.json's quantization_config before hf_quant_config.json
  // (model_loader/weight_utils.py get_quant_config); TensorRT-LLM reads hf_quant_config.json first.
  // nvidia/Qwen3.6-35B-A3B-NVFP4's config.json states no KV quantization where its
  // hf_quant_config.json says FP8: vLLM 0.29 runs a bf16 cache (tests/data/extra xvllm-068: 4.9 GiB
  // = 207,842 tokens, bf16 pages of 1,056 tokens).
  const std::string hq = R"({"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16}})";
  auto c = parse(kLlama + R"(, "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16})", hq);
  EXPECT_EQ(c.quant.kv_cache_quant, "FP8");
  ASSERT_TRUE(c.quant.kv_cache_quant_config_json.has_value());
  EXPECT_EQ(c.quant.kv_cache_quant_hf_loaders(), "");
  // config.json's kv_cache_scheme {"type": "float", "num_bits": 8} is FP8 for both.
  c = parse(kLlama + R"(, "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
                         "kv_cache_scheme": {"type": "float", "num_bits": 8, "dynamic": false}})", hq);
  EXPECT_EQ(c.quant.kv_cache_quant_hf_loaders(), "FP8");
  // Without a config.json quantization_config every engine reads hf_quant_config.json.
  c = parse(kLlama, hq);
  EXPECT_FALSE(c.quant.kv_cache_quant_config_json.has_value());
  EXPECT_EQ(c.quant.kv_cache_quant_hf_loaders(), "FP8");
}

TEST(Quantization, Fp8BlockAndPerTensor) {
  auto c = parse(kLlama + R"(, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128],
                                                          "modules_to_not_convert": ["lm_head"]})");
  auto ts = model_detail::derive_inventory(c);
  // mlp.gate_proj [11008, 4096]: F8 11008 x 4096 = 45,088,768 B; scale_inv [86, 32] F32 = 11,008 B (11008/128 = 86).
  EXPECT_EQ(find(ts, "model.layers.0.mlp.gate_proj.weight").bytes, 45'088'768);
  EXPECT_EQ(find(ts, "model.layers.0.mlp.gate_proj.weight_scale_inv").shape, (std::vector<int64_t>{86, 32}));
  // k_proj [1024, 4096] -> scales [8, 32].
  EXPECT_EQ(find(ts, "model.layers.0.self_attn.k_proj.weight_scale_inv").bytes, 8 * 32 * 4);
  auto p = parse(kLlama + R"(, "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"})");
  EXPECT_EQ(p.quant.method, QuantMethod::Fp8PerTensor);
  EXPECT_EQ(find(model_detail::derive_inventory(p), "model.layers.0.mlp.up_proj.weight_scale").bytes, 4);
}

TEST(Quantization, AwqGptqInt4) {
  auto a = parse(kLlama + R"(, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true})");
  auto ts = model_detail::derive_inventory(a);
  // q_proj in=4096, out=4096: qweight I32 [4096, 512] = 8,388,608 B; qzeros I32 [32, 512] = 65,536 B;
  // scales F16 [32, 4096] = 262,144 B -> 4.16 bits per weight.
  EXPECT_EQ(find(ts, "model.layers.0.self_attn.q_proj.qweight").bytes, 8'388'608);
  EXPECT_EQ(find(ts, "model.layers.0.self_attn.q_proj.qzeros").bytes, 65'536);
  EXPECT_EQ(find(ts, "model.layers.0.self_attn.q_proj.scales").bytes, 262'144);
  EXPECT_EQ(find(ts, "model.layers.0.self_attn.q_proj.qweight").params, 4096 * 4096);
  auto g = parse(kLlama + R"(, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": true})");
  auto tg = model_detail::derive_inventory(g);
  // GPTQ down_proj in=11008, out=4096: qweight [1376, 4096] I32; g_idx [11008] I32 = 44,032 B.
  EXPECT_EQ(find(tg, "model.layers.0.mlp.down_proj.qweight").shape, (std::vector<int64_t>{1376, 4096}));
  EXPECT_EQ(find(tg, "model.layers.0.mlp.down_proj.g_idx").bytes, 44'032);
}

TEST(Quantization, Mxfp4GptOssExperts) {
  auto m = load_model("openai/gpt-oss-20b");
  // 32 experts, intermediate 2880, hidden 2880: gate_up blocks U8 [32, 5760, 90, 16] = 265,420,800 B,
  // scales U8 [32, 5760, 90] = 16,588,800 B (one E8M0 per 32 values).
  const auto& b = find(m->tensors, "model.layers.0.mlp.experts.gate_up_proj_blocks");
  EXPECT_EQ(b.bytes, 265'420'800);
  EXPECT_EQ(b.params, 32LL * 5760 * 2880);
  EXPECT_EQ(find(m->tensors, "model.layers.0.mlp.experts.gate_up_proj_scales").bytes, 16'588'800);
  EXPECT_EQ(find(m->tensors, "model.layers.0.self_attn.q_proj.weight").dtype, DType::BF16);  // not converted
}

TEST(Quantization, CompressedTensorsInt4Kimi) {
  auto m = load_model("moonshotai/Kimi-K2.5");
  EXPECT_EQ(m->config.quant.method, QuantMethod::CtInt4);
  // Expert up_proj [2048, 7168], group 32: weight_packed I32 [2048, 896] = 7,340,032 B; weight_scale BF16 [2048, 224] = 917,504 B.
  const auto& w = find(m->tensors, "language_model.model.layers.1.mlp.experts.0.up_proj.weight_packed");
  EXPECT_EQ(w.bytes, 7'340'032);
  EXPECT_EQ(find(m->tensors, "language_model.model.layers.1.mlp.experts.0.up_proj.weight_scale").bytes, 917'504);
  // re:.*self_attn.* is ignored -> BF16 attention.
  EXPECT_EQ(find(m->tensors, "language_model.model.layers.1.self_attn.q_b_proj.weight").dtype, DType::BF16);
}

TEST(Quantization, ModelOptMixedPrecision) {
  auto m = load_model("nvidia/Qwen3.6-35B-A3B-NVFP4");
  // quantized_layers: linear_attn.in_proj_qkv FP8, "mlp.experts" (parent) NVFP4, others unquantized.
  EXPECT_EQ(find(m->tensors, "model.language_model.layers.0.linear_attn.in_proj_qkv.weight").dtype, DType::F8_E4M3);
  EXPECT_EQ(find(m->tensors, "model.language_model.layers.0.mlp.experts.5.up_proj.weight").dtype, DType::U8);
  EXPECT_EQ(find(m->tensors, "model.language_model.embed_tokens.weight").dtype, DType::BF16);
}

TEST(ModelConfigErrors, EachBadInputIsOneInputError) {
  EXPECT_NE(error_of("{\"architectures\": [\"LlamaForCausalLM\"], ").find("bad/config.json: json"), std::string::npos);  // truncated
  EXPECT_NE(error_of("not json at all").find("json"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(error_of("{" + kLlama.substr(0, kLlama.find("\"hidden_size\"")) + R"("num_hidden_layers": 2, "vocab_size": 10, "num_attention_heads": 4})")
                .find("hidden_size: missing"),
            std::string::npos);
  std::string base = R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 10, "num_attention_heads": 4, "intermediate_size": 8, )";
  EXPECT_NE(error_of(base + R"("hidden_size": 64, "num_hidden_layers": -3})").find("num_hidden_layers: -3 is outside"), std::string::npos);
  EXPECT_NE(error_of(base + R"("hidden_size": 64, "num_hidden_layers": 0})").find("num_hidden_layers"), std::string::npos);
  EXPECT_NE(error_of(base + R"("hidden_size": 20000000, "num_hidden_layers": 2})").find("hidden_size: 20000000 is outside"), std::string::npos);
  EXPECT_NE(error_of(base + R"("hidden_size": "big", "num_hidden_layers": 2})").find("hidden_size: must be an integer"), std::string::npos);
  EXPECT_NE(error_of(base + R"("hidden_size": 64.5, "num_hidden_layers": 2})").find("must be an integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"architectures": ["FancyNewForCausalLM"], "hidden_size": 64})").find("unknown or unsupported architecture 'FancyNewForCausalLM'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"hidden_size": 64})").find("architectures: missing"), std::string::npos);
  EXPECT_NE(error_of(base + R"("hidden_size": 64, "num_hidden_layers": 2, "layer_types": ["full_attention"]})").find("layer_types: has 1 entries"),
            std::string::npos);
  EXPECT_NE(error_of(base + R"("hidden_size": 64, "num_hidden_layers": 2, "quantization_config": {"quant_method": "bitsandbytes"}})")
                .find("unsupported quantization method"),
            std::string::npos);
  EXPECT_NE(error_of(base + R"("hidden_size": 64, "num_hidden_layers": 2, "num_local_experts": 4})").find("num_experts_per_tok"), std::string::npos);
  EXPECT_NE(error_of(std::string(200, '[') + std::string(200, ']')).find("nesting deeper"), std::string::npos);
  // Every message is one line.
  EXPECT_EQ(error_of("{\"a\":\n").find('\n'), std::string::npos);
}

TEST(ModelConfigErrors, LoadModelSpecs) {
  EXPECT_THROW(load_model("no-such-org/no-such-model"), InputError);
  EXPECT_THROW(load_model(""), InputError);
  std::string dir = ::testing::TempDir() + "/empty_model_dir";
  std::filesystem::create_directories(dir);
  try {
    load_model(dir);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no config.json"), std::string::npos);
  }
  // A bare config.json the catalog does not hold works like a catalog model.
  std::string cfg = dir + "/custom.json";
  { std::ofstream(cfg) << "{" << kLlama << "}"; }
  auto m = load_model(cfg);
  EXPECT_EQ(m->config.num_layers, 2);
  EXPECT_GT(m->params_total, 0);
}

namespace {
// A two-layer DeepSeek-V4 (keys as in the deepseek-ai configs); `extra` appended.
std::string dsv4(const std::string& extra) {
  return R"("architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": 256, "num_hidden_layers": 2,
    "vocab_size": 1000, "num_attention_heads": 16, "num_key_value_heads": 1, "head_dim": 128, "qk_rope_head_dim": 64,
    "q_lora_rank": 64, "o_lora_rank": 32, "o_groups": 4, "hc_mult": 4, "num_hash_layers": 1, "n_routed_experts": 8,
    "num_experts_per_tok": 2, "moe_intermediate_size": 64, "n_shared_experts": 1, "index_topk": 16, "index_n_heads": 4,
    "index_head_dim": 128, "sliding_window": 128, "num_nextn_predict_layers": 1,
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128], "scale_fmt": "ue8m0"})" + extra;
}
}  // namespace

TEST(ModelConfig, DeepSeekV4LayersAndExpertDtype) {
  auto c = parse(dsv4(R"(, "compress_ratios": [4, 128, 0], "expert_dtype": "fp4")"));
  EXPECT_EQ(c.family, "deepseek_v4");
  EXPECT_EQ(c.qk_nope_head_dim, 64);
  EXPECT_EQ(c.layers[0].compress_ratio, 4);
  EXPECT_TRUE(c.layers[0].indexer);   // CSA layers own the indexer
  EXPECT_FALSE(c.layers[1].indexer);  // HCA (128) layers do not
  EXPECT_EQ(c.compress_ratios.size(), 3u);  // the MTP entry is kept for SGLang's layer count
  EXPECT_EQ(c.sliding_window, 128);
  EXPECT_TRUE(c.expert_fp4);
  // No expert_dtype: vLLM's default "fp4" applies to model_type deepseek_v4 only.
  EXPECT_TRUE(parse(dsv4(R"(, "compress_ratios": [4, 128])")).expert_fp4);
  std::string ref = dsv4(R"(, "compress_ratios": [4, 128])");
  ref.replace(ref.find("deepseek_v4"), 11, "deepseek_ref");
  EXPECT_FALSE(parse(ref).expert_fp4);
  // Hash layer 0 routes by tid2eid [vocab, top-k] I32; layer 1 by the score bias; FP4 expert w1 is
  // packed [64, 256/2] with an E8M0 scale [64, 256/32]; FP8 linears carry E8M0 128x128 block scales.
  auto ts = model_detail::derive_inventory(c);
  EXPECT_EQ(find(ts, "layers.0.ffn.gate.tid2eid").bytes, 1000 * 2 * 4);
  EXPECT_EQ(find(ts, "layers.1.ffn.gate.bias").bytes, 8 * 4);
  EXPECT_EQ(find(ts, "layers.0.ffn.experts.3.w1.weight").bytes, 64 * 128);
  EXPECT_EQ(find(ts, "layers.0.ffn.experts.3.w1.scale").bytes, 64 * 8);
  EXPECT_EQ(find(ts, "layers.0.attn.wq_b.scale").bytes, 16 * 1);  // ceil(2048/128) x ceil(64/128) E8M0
  EXPECT_EQ(find(ts, "layers.0.attn.compressor.ape").bytes, 4 * 2 * 128 * 4);  // [ratio, 2*head_dim] F32
  EXPECT_EQ(find(ts, "mtp.0.e_proj.weight").bytes, 256 * 256);
}

TEST(ModelConfig, DeepSeekV4BadInputsSayWhy) {
  EXPECT_THROW(parse(dsv4("")), InputError);                                      // compress_ratios missing
  EXPECT_THROW(parse(dsv4(R"(, "compress_ratios": [4])")), InputError);           // shorter than the layers
  EXPECT_THROW(parse(dsv4(R"(, "compress_ratios": [4, 16])")), InputError);       // ratio the engines lack
  EXPECT_THROW(parse(dsv4(R"(, "compress_ratios": [4, 4], "expert_dtype": "int4")")), InputError);
}

// Renamed Hugging Face repositories (data/models/renamed.json; Meta dropped "Meta-" from the
// Llama 3.1 ids, oumi-ai/oumi PR #1357): either name finds the catalog folder stored under the
// other, and an unknown id still fails with one InputError.
TEST(ModelCatalog, RenamedRepositoryFindsTheSameConfig) {
  auto old_name = load_model("meta-llama/Meta-Llama-3.1-8B-Instruct");
  EXPECT_EQ(old_name->config.hf_id, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(old_name->config.num_layers, 32);
  auto new_name = load_model("META-LLAMA/Llama-3.1-70B");  // stored as Meta-Llama-3.1-70B
  EXPECT_EQ(new_name->config.hf_id, "meta-llama/Meta-Llama-3.1-70B");
  EXPECT_EQ(new_name->config.num_layers, 80);
  EXPECT_THROW(load_model("meta-llama/Meta-Llama-3.1-9B-Instruct"), InputError);
}
