// Nemotron-NAS (DeciLMForCausalLM) end to end on the catalog's nvidia/Llama-3_3-Nemotron-Super-49B-v1:
// block_configs -> layers (config_nemotron_nas.cpp), tensor inventory, KV bytes per token as each
// engine sizes them, weights per rank, one realistic plan per engine and the engines' refusals.
// Hand counts from the config's 80 block_configs: 49 blocks with attention (n_heads_in_group 8 ->
// 64 / 8 = 8 KV heads), 31 no_op attention; every FFN real, ffn_mult -> width
// (int(2 x mult x 8192 / 3) rounded up to 256): 5.25 -> 28672 (49 layers), 2.625 -> 14336 (6),
// 1.3125 -> 7168 (10), 1.0 -> 5461 -> 5632 (8), 0.5 -> 2730 -> 2816 (6), 3.28125 -> 17920 (1).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "engines/trtllm/trtllm_rules.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/kv.h"
#include "headroom/layout.h"
#include "headroom/model.h"
#include "model/model_internal.h"
#include "plan_test_util.h"
#include "parallel_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
const char* kId = "nvidia/Llama-3_3-Nemotron-Super-49B-v1";
std::shared_ptr<const Model> super49b() { return load_model(kId); }
}  // namespace

TEST(NemotronNas, FfnMultToIntermediateRoundsUpTo256) {
  // vLLM / SGLang / TensorRT-LLM _ffn_mult_to_intermediate_size with hidden 8192.
  EXPECT_EQ(model_detail::nas_ffn_mult_to_intermediate(5.25, 8192), 28672);
  EXPECT_EQ(model_detail::nas_ffn_mult_to_intermediate(1.0, 8192), 5632);   // 5461.33 -> 5461 -> 5632
  EXPECT_EQ(model_detail::nas_ffn_mult_to_intermediate(0.5, 8192), 2816);   // 2730.67 -> 2730 -> 2816
  EXPECT_EQ(model_detail::nas_ffn_mult_to_intermediate(3.28125, 8192), 17920);
}

TEST(NemotronNas, Super49BLayersFromBlockConfigs) {
  const ModelConfig& c = super49b()->config;
  EXPECT_EQ(c.family, "nemotron_nas");
  ASSERT_EQ(c.layers.size(), 80u);
  EXPECT_EQ(c.count_layers(AttnKind::Full), 49);
  EXPECT_EQ(c.count_layers(AttnKind::None), 31);
  EXPECT_EQ(c.num_kv_heads, 8);               // num_key_value_heads is null; the first attention block's 64 / 8
  EXPECT_EQ(c.intermediate_size, 28672);      // intermediate_size is null; the widest FFN
  EXPECT_EQ(c.layers[0].attn, AttnKind::Full);
  EXPECT_EQ(c.layers[0].ffn_intermediate, 14336);  // block 0: ffn_mult 2.625
  EXPECT_EQ(c.layers[0].kv_heads, 0);               // same as the model-wide 8
}

TEST(NemotronNas, Super49BParameterCountMatchesPublished) {
  // 2 x 128256 x 8192 (embed + lm_head) + 8192 (norm) + 49 x (2 x 8192^2 + 2 x 1024 x 8192 + 8192)
  // + sum over FFNs of (3 x 8192 x I + 8192) = 49,867,145,216; llama.cpp prints "model params =
  // 49.87 B" for Llama-3_3-Nemotron-Super-49B-V1 (ggml-org/llama.cpp issue #14752, print_info).
  auto m = super49b();
  EXPECT_EQ(m->params_total, 49'867'145'216LL);
  EXPECT_EQ(m->checkpoint_bytes, 2 * 49'867'145'216LL);  // bf16
  int q = 0, linear_attn = 0, gate = 0;
  for (const auto& t : m->tensors) {
    if (t.name.find("self_attn.q_proj") != std::string::npos) ++q;
    if (t.name.find("linear_attn") != std::string::npos) ++linear_attn;
    if (t.name.find("mlp.gate_proj") != std::string::npos) ++gate;
    if (t.name == "model.layers.0.self_attn.k_proj.weight") EXPECT_EQ(t.shape, (std::vector<int64_t>{1024, 8192}));
    if (t.name == "model.layers.0.mlp.gate_proj.weight") EXPECT_EQ(t.shape, (std::vector<int64_t>{14336, 8192}));
  }
  EXPECT_EQ(q, 49);
  EXPECT_EQ(linear_attn, 0);
  EXPECT_EQ(gate, 80);
}

TEST(NemotronNas, WeightsPerRankSplitEverythingButNorms) {
  // 130 RMSNorm weights (final + 49 input_layernorm + 80 post_attention_layernorm) = 2,129,920 B stay
  // replicated; everything else divides evenly (vocab 128256 is a multiple of 64, 8 KV heads >= tp).
  // The RoPE table (131,072 x 128 x 2 B = 33,554,432, engines/rope_tables.cpp) is on every rank too.
  auto m = super49b();
  const int64_t norms = 130 * 8192 * 2 + 33'554'432, rest = 2 * 49'867'145'216LL - 130 * 8192 * 2;
  for (int n : {1, 2, 4, 8}) {
    auto w = weights_per_rank(*m, EngineKind::VLLM, tp(n));
    ASSERT_EQ(w.size(), static_cast<size_t>(n));
    EXPECT_EQ(w.front().bytes, rest / n + norms) << "tp " << n;
  }
  EXPECT_EQ(weights_per_rank(*m, EngineKind::VLLM, tp(2)).front().bytes, 49'901'764'608LL);
}

TEST(NemotronNas, KvBytesPerTokenPerEngine) {
  const ModelConfig& c = super49b()->config;
  trtllm::Settings s;
  s.kv_elem_bytes = 2;
  for (int n : {1, 2, 4, 8}) {
    // vLLM: a FullAttentionSpec per real attention layer only: 49 x 2 (K, V) x 8/tp x 128 x 2 B.
    EXPECT_EQ(vllm_kv_per_token(c, tp(n), "auto", 90).total(), 49 * 2 * (8 / n) * 128 * 2) << "tp " << n;
    // SGLang: the MHA pool has all 80 layers (no start/end layer on DeciModel): 80 x 2 x 8/tp x 128 x 2 B.
    EXPECT_EQ(sglang_kv_per_token(c, tp(n), "auto", 90).total(), 80 * 2 * (8 / n) * 128 * 2) << "tp " << n;
    // TensorRT-LLM: the pool holds each real layer's heads (as vLLM) ...
    s.tp = n;
    const int64_t exact = trtllm::bytes_per_token(c, s, 0);
    EXPECT_EQ(exact, 49 * 2 * (8 / n) * 128 * 2) << "tp " << n;
    // ... but max_tokens divides by get_cache_size_per_token: mean heads 392/80 = 4.9,
    // floor(128 x 4.9 / tp) x 80 layers x 2 x 2 B.
    const int64_t per_layer[] = {0, 627, 313, 0, 156, 0, 0, 0, 78};
    EXPECT_EQ(trtllm::sizing_bytes_per_token(c, s, 0, exact), per_layer[n] * 80 * 2 * 2) << "tp " << n;
  }
  EXPECT_EQ(vllm_kv_per_token(c, tp(1), "auto", 90).total(), 200'704);
  EXPECT_EQ(sglang_kv_per_token(c, tp(1), "auto", 90).total(), 327'680);
}

TEST(NemotronNas, VllmTwoH100Tp2Plan) {
  // vLLM 0.11 on 2 x H100 TP2, --max-model-len 32768: weights 49,868,210,176 B per rank + the 32 MiB
  // RoPE table = 49,901,764,608 B (46.47 GiB),
  // KV pool pages of 16 tokens x 100,352 B.
  Forecast f = run({"--engine", "vllm@0.11.0", "--model", kId, "--gpu", "h100", "--tp", "2", "--max-model-len", "32768"});
  ASSERT_FALSE(f.ranks.empty());
  int64_t weights = 0, kv = 0;
  for (const auto& st : f.ranks.front().stages)
    for (const auto& it : st.items) {
      if (st.id == StageId::Weights && it.what.find("weights") != std::string::npos) weights += it.bytes;
      if (st.id == StageId::KvPool && it.what.find("KV cache") != std::string::npos) kv += it.bytes;
    }
  EXPECT_EQ(weights, 49'901'764'608LL);
  ASSERT_GT(f.kv_tokens, 0);
  // (80 GiB x 0.9 - 46.44 GiB - activations/NCCL) ~ 20 GiB of KV at 100,352 B/token: 150k-230k tokens.
  EXPECT_GT(f.kv_tokens, 150'000);
  EXPECT_LT(f.kv_tokens, 230'000);
  EXPECT_EQ(kv, f.kv_tokens * 100'352);  // blocks x 49 layer tensors x 16 x 8/2 x 128 x 2 x 2 B
}

namespace {
int64_t stage_item(const Forecast& f, const std::string& stage, const std::string& what) {
  int64_t b = 0;
  for (const auto& st : f.ranks.front().stages)
    if (name(st.id) == stage)
      for (const auto& it : st.items)
        if (it.what.find(what) != std::string::npos) b += it.bytes;
  return b;
}
}  // namespace

TEST(NemotronNas, VllmBefore082RefusesWithTheDeciLmError) {
  // vllm#15779: under 0.7.3 "DeciLMConfig object has no attribute 'num_key_value_heads_per_layer'".
  EXPECT_NE(input_error({"--engine", "vllm@0.7.3", "--model", kId, "--gpu", "h100", "--tp", "2"}).find("num_key_value_heads_per_layer"),
            std::string::npos);
  EXPECT_EQ(input_error({"--engine", "vllm@0.8.3", "--model", kId, "--gpu", "h100", "--tp", "2", "--max-model-len", "32768"}), "");
}

TEST(NemotronNas, TrtllmOneH200Plan) {
  // TensorRT-LLM 1.0 (PyTorch backend) on 1 x H200: 99.73 GB of weights leave ~30 GiB; the pool
  // tokens are max_tokens = budget / 200,640 rounded up to blocks of 32, each token 200,704 B.
  Forecast f = run({"--engine", "trtllm@1.0.0", "--model", kId, "--gpu", "h200"});
  ASSERT_NE(f.verdict, Verdict::Oom) << (f.failure ? f.failure->message : "");
  EXPECT_EQ(f.kv_tokens % 32, 0);
  EXPECT_GT(f.kv_tokens, 60'000);   // (139.8 GiB - 92.9 GiB - overheads) x 0.9 / 200,640 B
  EXPECT_LT(f.kv_tokens, 230'000);
  EXPECT_EQ(stage_item(f, "weights", "weights"), 2 * 49'867'145'216LL);
  EXPECT_EQ(stage_item(f, "kv_pool", "paged KV cache"), f.kv_tokens * 200'704);  // the pool: each real layer's heads
  EXPECT_TRUE(std::any_of(f.log.begin(), f.log.end(), [](const std::string& l) { return l.find("kv size is 200640.") != std::string::npos; }));
}

TEST(NemotronNas, SglangSupportsItFrom051AndRefusesBefore) {
  Forecast f = run({"--engine", "sglang@0.5.4", "--model", kId, "--gpu", "h200", "--context-length", "32768"});
  ASSERT_GT(f.kv_tokens, 0);
  // 80 layers x 8 x 256 x 2 B per slot; the pool holds size + page_size slots (memory_pool.py, the
  // padded slot 0; page_size 1 here).
  EXPECT_EQ(stage_item(f, "kv_pool", "KV cache ("), (f.kv_tokens + 1) * 327'680);
  EXPECT_TRUE(std::any_of(f.log.begin(), f.log.end(), [](const std::string& l) { return l.find("type=DeciLMForCausalLM") != std::string::npos; }));
  EXPECT_NE(input_error({"--engine", "sglang@0.4.6", "--model", kId, "--gpu", "h200"})
                .find("Model architectures ['DeciLMForCausalLM'] are not supported for now"),
            std::string::npos);
}

TEST(NemotronNas, BadBlockConfigsAreOneInputError) {
  const std::string head = R"({"architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas", "hidden_size": 256,
    "num_attention_heads": 8, "num_hidden_layers": 2, "vocab_size": 1000, "num_key_value_heads": null, "intermediate_size": null,)";
  const std::string ok_block = R"({"attention": {"no_op": false, "n_heads_in_group": 4}, "ffn": {"ffn_mult": 1.0}})";
  // One block for two layers.
  EXPECT_THROW(parse_model_config(head + R"("block_configs": [)" + ok_block + "]}", "c.json"), InputError);
  // Attention without n_heads_in_group.
  EXPECT_THROW(parse_model_config(head + R"("block_configs": [)" + ok_block +
                                      R"(, {"attention": {"no_op": false}, "ffn": {"ffn_mult": 1.0}}]})",
                                  "c.json"),
               InputError);
  // No block with attention at all (vLLM: "Couldn't determine number of kv heads").
  const std::string noop = R"({"attention": {"no_op": true}, "ffn": {"ffn_mult": 1.0}})";
  EXPECT_THROW(parse_model_config(head + R"("block_configs": [)" + noop + "," + noop + "]}", "c.json"), InputError);
  // A valid toy: 8 / 4 = 2 KV heads, FFN int(2 x 1.0 x 256 / 3) = 170 -> 256.
  ModelConfig c = parse_model_config(head + R"("block_configs": [)" + ok_block + "," + noop + "]}", "c.json");
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.intermediate_size, 256);
  EXPECT_EQ(c.layers[1].attn, AttnKind::None);
}

TEST(NemotronNas, ReplaceWithLinearBlocksAreOneLinearAndOnlyTensorRtLlmBuildsThem) {
  // Toy in the Llama-3.1-Nemotron-51B style: hidden 1024, 8 heads of 128, 4 blocks:
  //   0: attention n_heads_in_group 2 (4 KV heads), ffn_mult 1.0 -> int(682.67) = 682 -> 768
  //   1: attention and FFN replace_with_linear (self_attn.linear_attn / mlp.linear_mlp, 1024 x 1024)
  //   2: both no_op (no tensors, not even norms)
  //   3: attention n_heads_in_group 4 (2 KV heads), ffn_mult 2.0 -> int(1365.33) = 1365 -> 1536
  // Parameters: 2 x 1000 x 1024 + 1024 (final norm)
  //   + [1024 + 2 x 1024^2 + 2 x 512 x 1024] + [1024 + 3 x 1024 x 768]           = 5,507,072
  //   + [1024 + 1024^2] + [1024 + 1024^2]                                          = 2,099,200
  //   + [1024 + 2 x 1024^2 + 2 x 256 x 1024] + [1024 + 3 x 1024 x 1536]          = 7,342,080
  //   = 16,997,376.
  // Own folder per process: ctest runs of other build trees share /tmp.
  const std::string dir = ::testing::TempDir() + "/nas_linear_toy_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir + "/config.json");
    out << R"({"architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas", "hidden_size": 1024,
      "num_attention_heads": 8, "num_hidden_layers": 4, "vocab_size": 1000, "num_key_value_heads": null,
      "intermediate_size": null, "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "block_configs": [
      {"attention": {"no_op": false, "replace_with_linear": false, "n_heads_in_group": 2}, "ffn": {"no_op": false, "replace_with_linear": false, "ffn_mult": 1.0}},
      {"attention": {"no_op": false, "replace_with_linear": true, "n_heads_in_group": null}, "ffn": {"no_op": false, "replace_with_linear": true, "ffn_mult": null}},
      {"attention": {"no_op": true, "replace_with_linear": false, "n_heads_in_group": null}, "ffn": {"no_op": true, "replace_with_linear": false, "ffn_mult": null}},
      {"attention": {"no_op": false, "replace_with_linear": false, "n_heads_in_group": 4}, "ffn": {"no_op": false, "replace_with_linear": false, "ffn_mult": 2.0}}]})";
  }
  auto m = load_model(dir);
  EXPECT_EQ(m->params_total, 16'997'376);
  int layer2 = 0;
  bool linear_attn = false, linear_mlp = false;
  for (const auto& t : m->tensors) {
    if (t.layer == 2) ++layer2;
    if (t.name == "model.layers.1.self_attn.linear_attn.weight") linear_attn = t.shape == std::vector<int64_t>{1024, 1024};
    if (t.name == "model.layers.1.mlp.linear_mlp.weight") linear_mlp = t.shape == std::vector<int64_t>{1024, 1024};
  }
  EXPECT_EQ(layer2, 0);
  EXPECT_TRUE(linear_attn);
  EXPECT_TRUE(linear_mlp);
  const ModelConfig& c = m->config;
  EXPECT_EQ(c.num_kv_heads, 4);
  EXPECT_EQ(c.layers[3].kv_heads, 2);
  // TensorRT-LLM KV: layer 0 4 x 128 x 2 x 2 B + layer 3 2 x 128 x 2 x 2 B = 3,072 B/token; TP2:
  // 2 heads + max(1, 1) head -> 1,536. The sizing figure: mean heads (4 + 2) / 4 = 1.5,
  // floor(128 x 1.5) x 4 layers x 2 x 2 = 3,072 at TP1, floor(192 / 2) x 16 = 1,536 at TP2.
  trtllm::Settings s;
  s.kv_elem_bytes = 2;
  EXPECT_EQ(trtllm::bytes_per_token(c, s, 0), 3072);
  EXPECT_EQ(trtllm::sizing_bytes_per_token(c, s, 0, 3072), 3072);
  s.tp = 2;
  EXPECT_EQ(trtllm::bytes_per_token(c, s, 0), 1536);
  EXPECT_EQ(trtllm::sizing_bytes_per_token(c, s, 0, 1536), 1536);
  // vLLM and SGLang build no linear replacement: refused with the block named.
  EXPECT_NE(input_error({"--engine", "vllm", "--model", dir, "--gpu", "h100"}).find("block_configs[1] replace_with_linear"), std::string::npos);
  EXPECT_NE(input_error({"--engine", "sglang", "--model", dir, "--gpu", "h100"}).find("block_configs[1] replace_with_linear"), std::string::npos);
  EXPECT_EQ(input_error({"--engine", "trtllm", "--model", dir, "--gpu", "h100"}), "");
  std::filesystem::remove_all(dir);
}
