// --engine llamacpp: per-device model / KV / compute buffers against real llama.cpp logs
// (../shared/corpus/llamacpp.jsonl ids below), the placement rules (-ngl, --tensor-split, -ot,
// --cpu-moe, --no-kv-offload), the failure stage, and bad input as one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "headroom/advise.h"
#include "headroom/cli.h"
#include "headroom/report.h"
#include "gguf_writer.h"
#include "plan_test_util.h"

using namespace headroom;
using headroom::test::run;
using headroom::test::device;
using headroom::test::plus;
using headroom::test::rank0_item;

namespace {

constexpr int64_t MiB = 1 << 20;

// llamacpp-010 (b5622): Qwen3-30B-A3B Q4_K_M, -ngl 99 -c 16384, experts on the host, 12 of 49
// layers on CUDA0 (the log's KV split, 384 / 1152 MiB: its split came from free memory; -ts 12,37 gives it).
std::vector<std::string> case010() {
  return {"--engine", "llamacpp@b5622", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q4_K_M", "--gpu", "rtx-4090,rtx-5090",
          "-ngl", "99", "-c", "16384", "-ot", ".ffn_.*_exps.=CPU", "-ts", "12,37"};
}

}  // namespace

TEST(LlamacppPlan, Case010PerDevice) {
  const Forecast f = run(case010());
  EXPECT_EQ(f.verdict, Verdict::Fits);
  // Non-expert layer by hand: q, o 4096x2048 + k, v 512x2048 q4_K (144 B / 256), 4 norms f32,
  // router 128x2048 f32 = 11,682,816 B; attn_v q6_K (+270,336 B) on use_more_bits layers.
  // CUDA0: layers 0..11 (8 with q6_K attn_v). Log: "CUDA0 model buffer size = 135.76 MiB".
  EXPECT_EQ(device(f, "CUDA0").model_buffer_bytes, 12 * int64_t{11682816} + 8 * 270336);
  // CUDA1: layers 12..47 (16 q6_K) + output q6_K + output_norm. Log: 648.66 MiB.
  EXPECT_EQ(device(f, "CUDA1").model_buffer_bytes, 36 * int64_t{11682816} + 16 * 270336 + 255252480 + 8192);
  // "CUDA0 KV buffer size = 384.00 MiB", "CUDA1 KV buffer size = 1152.00 MiB".
  EXPECT_EQ(device(f, "CUDA0").kv_buffer_bytes, 384 * MiB);
  EXPECT_EQ(device(f, "CUDA1").kv_buffer_bytes, 1152 * MiB);
  // Estimate: f32 mask 32 MiB + KQ 16384 x 512 x 32 heads x 4 B (1024 MiB) + 2 x (4096 + 2048) x 512
  // x 4 B (24 MiB) = 1080 MiB; the log prints 1080.00 on both GPUs and CUDA_Host 36.01.
  EXPECT_EQ(device(f, "CUDA0").compute_buffer_bytes, 1080 * MiB);
  EXPECT_EQ(device(f, "CUDA1").compute_buffer_bytes, 1080 * MiB);
  EXPECT_EQ(device(f, "CPU_Mapped").compute_buffer_bytes, 36 * MiB);
  EXPECT_TRUE(test::has_line(f, "load_tensors:        CUDA0 model buffer size =   135.76 MiB"));
  EXPECT_TRUE(test::has_line(f, "llama_kv_cache_unified: size = 1536.00 MiB ( 16384 cells,  48 layers,  1/1 seqs), "
                                "K (f16):  768.00 MiB, V (f16):  768.00 MiB"));
}

TEST(LlamacppPlan, LayersAndOverrides) {
  // Without -ot the experts stay on the GPUs; --cpu-moe moves exactly them.
  auto without = case010();
  without.resize(without.size() - 4);  // drop -ot and -ts
  const Forecast all = run(test::plus(without, {"-ts", "12,37"}));
  const Forecast moe = run(test::plus(without, {"-ts", "12,37", "--cpu-moe"}));
  const Forecast f010 = run(case010());
  EXPECT_EQ(moe.devices[1].model_buffer_bytes, f010.devices[1].model_buffer_bytes);
  // Each layer's three expert tensors: 3 x 128 x 768 x 2048 elements, q4_K (down q6_K on use_more_bits).
  EXPECT_GT(all.devices[0].model_buffer_bytes - moe.devices[0].model_buffer_bytes, 12 * int64_t{3} * 128 * 768 * 2048 / 256 * 144);
  // -ngl 10: layers 38..47 on the GPUs, no output layer; the rest and token_embd on the host.
  const Forecast ten = run(test::plus(without, {"-ngl", "10"}));
  int layers = 0;
  for (const auto& d : ten.devices) layers += d.host ? 0 : d.layers;
  EXPECT_EQ(layers, 10);
  EXPECT_GT(ten.devices.back().model_buffer_bytes, all.devices.back().model_buffer_bytes);
  // --no-kv-offload: the whole cache on the host.
  const Forecast nkvo = run(test::plus(case010(), {"--no-kv-offload"}));
  EXPECT_EQ(nkvo.devices[0].kv_buffer_bytes, 0);
  EXPECT_EQ(nkvo.devices.back().kv_buffer_bytes, 1536 * MiB);
}

TEST(LlamacppPlan, WeightsDoNotFit) {
  // llamacpp-003: Qwen2.5-72B Q4_K_M, -ngl 999 on a 19.98 GiB RX 7900 XT: the weight buffer fails.
  const Forecast f = run({"--engine", "llamacpp", "--model", "Qwen/Qwen2.5-72B-Instruct", "--quant", "Q4_K_M", "--gpu-memory",
                          "19.98GiB", "-ngl", "999", "-c", "4096"});
  EXPECT_EQ(f.verdict, Verdict::Oom);
  ASSERT_TRUE(f.failure);
  EXPECT_EQ(f.failure->stage, StageId::Weights);
  EXPECT_NE(f.failure->message.find("failed to allocate CUDA0 buffer"), std::string::npos) << f.failure->message;
}

TEST(LlamacppPlan, Case027Llama2) {
  // llamacpp-027 (~b2200): Llama-2-7B Q4_K_M fully offloaded, n_ctx 2048: "CUDA0 buffer size = 3820.94 MiB",
  // "KV self size = 1024.00 MiB", "CUDA0 compute buffer size = 164.01 MiB".
  const Forecast f = run({"--engine", "llamacpp@b2200", "--model", "meta-llama/Llama-2-7b-hf", "--quant", "Q4_K_M", "--gpu", "rtx-4090",
                          "-ngl", "99", "-c", "2048"});
  EXPECT_NEAR(static_cast<double>(device(f, "CUDA0").model_buffer_bytes) / MiB, 3820.94, 0.005);
  EXPECT_EQ(device(f, "CUDA0").kv_buffer_bytes, 1024 * MiB);
  EXPECT_EQ(device(f, "CUDA0").compute_buffer_bytes, 164 * MiB);  // 4 MiB mask + 128 MiB KQ + 32 MiB residual
  EXPECT_TRUE(test::has_prefix(f, "llm_load_tensors:      CUDA0 buffer size ="));
}

TEST(LlamacppPlan, BadInputIsOneLine) {
  const std::vector<std::string> base = {"--engine", "llamacpp", "--model", "Qwen/Qwen3-30B-A3B", "--gpu", "rtx-4090"};
  EXPECT_THROW(run(base), InputError);  // no --quant for a Hugging Face id
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_X"})), InputError);
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M", "-ts", "3,x"})), InputError);
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M", "-ts", "1,1"})), InputError);  // 2 proportions, 1 GPU
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M", "-ot", "exps"})), InputError);
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M", "-ot", "exps=CUDA3"})), InputError);
  // A device number too long for an int is no device, not an internal error.
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M", "-ot", "exps=CUDA99999999999"})), InputError);
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M", "--device", "CUDA99999999999"})), InputError);
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M", "-ngl", "-5"})), InputError);
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M", "-ctk", "q3_k"})), InputError);
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M", "-fa", "off", "-ctv", "q8_0"})), InputError);
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M", "--no-such-flag", "1"})), InputError);
  EXPECT_THROW(run({"--engine", "llamacpp@v1.2", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q4_K_M", "--gpu", "rtx-4090"}), InputError);
  EXPECT_THROW(run({"--engine", "sglang", "--model", "Qwen/Qwen3-30B-A3B", "--gpu", "rtx-4090,rtx-3090"}), InputError);
}

TEST(LlamacppPlan, CliJsonHasDevices) {
  std::ostringstream out, err;
  const int rc = run_cli({"plan", "--engine", "llamacpp@b5622", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q4_K_M", "--gpu",
                          "rtx-4090", "-ngl", "99", "-c", "16384", "-ot", ".ffn_.*_exps.=CPU", "--json"},
                         out, err);
  EXPECT_EQ(rc, 0) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j.contains("devices"));
  EXPECT_EQ(j["devices"][0]["name"], "CUDA0");
  EXPECT_EQ(j["devices"][0]["kv_buffer_bytes"], 1536 * MiB);
  EXPECT_EQ(j["engine"]["name"], "llamacpp");
  // A bad quantization name: exit 2 and one line.
  std::ostringstream o2, e2;
  EXPECT_EQ(run_cli({"plan", "--engine", "llamacpp", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q4KM", "--gpu", "rtx-4090"}, o2, e2), 2);
  const std::string line = e2.str();
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
}

namespace {
// A 4-layer llama GGUF (tests/gguf_writer.h), rows of 512 / 1024 columns (no CUDA row padding):
// per layer 2 norms f32 (4096 B), q and o 512x512 q4_K (147,456 B each), k and v 512x256 q4_K
// (73,728 B each), gate, up, down 512x1024 q4_K (294,912 B each) = 1,331,200 B; token_embd
// 512x1000 q8_0 (544,000 B), output q6_K (420,000 B), output_norm f32 (2,048 B).
std::string tiny_gguf() {
  using namespace gguf_test;
  Writer w;
  w.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 4).kv_u32("llama.embedding_length", 512)
      .kv_u32("llama.attention.head_count", 4).kv_u32("llama.attention.head_count_kv", 2).kv_u32("llama.context_length", 4096)
      .kv_u32("llama.feed_forward_length", 1024).kv_u32("llama.vocab_size", 1000);
  w.tensor("token_embd.weight", {512, 1000}, T_Q8_0, 544000).tensor("output.weight", {512, 1000}, T_Q6_K, 420000)
      .tensor("output_norm.weight", {512}, T_F32, 2048);
  for (int i = 0; i < 4; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.tensor(b + "attn_norm.weight", {512}, T_F32, 2048).tensor(b + "ffn_norm.weight", {512}, T_F32, 2048)
        .tensor(b + "attn_q.weight", {512, 512}, T_Q4_K, 147456).tensor(b + "attn_k.weight", {512, 256}, T_Q4_K, 73728)
        .tensor(b + "attn_v.weight", {512, 256}, T_Q4_K, 73728).tensor(b + "attn_output.weight", {512, 512}, T_Q4_K, 147456)
        .tensor(b + "ffn_gate.weight", {512, 1024}, T_Q4_K, 294912).tensor(b + "ffn_up.weight", {512, 1024}, T_Q4_K, 294912)
        .tensor(b + "ffn_down.weight", {1024, 512}, T_Q4_K, 294912);
  }
  const std::string path = ::testing::TempDir() + "tiny-llama-Q4_K.gguf";
  w.write(path);
  return path;
}
}  // namespace

TEST(LlamacppPlan, GgufFileAllLayersAndFewer) {
  const std::string path = tiny_gguf();
  const std::vector<std::string> base = {"--engine", "llamacpp", "--model", path, "--gpu", "rtx-4090", "-c", "8192", "-np", "1"};
  const Forecast f = run(base);
  // Every layer on the GPU: the file's tensors less token_embd (kept on the host).
  EXPECT_EQ(device(f, "CUDA0").model_buffer_bytes, 4 * 1331200 + 420000 + 2048);
  EXPECT_EQ(device(f, "CPU_Mapped").model_buffer_bytes, 544000);
  // f16 K and V at -c 8192 -np 1: 2 x 4 layers x 2 KV heads x 128 x 2 B x 8192.
  EXPECT_EQ(device(f, "CUDA0").kv_buffer_bytes, int64_t{2} * 4 * 2 * 128 * 2 * 8192);
  // -ngl 2: layers 2 and 3 offloaded, the output layer stays with layer 4 on the host.
  const Forecast two = run(test::plus(base, {"-ngl", "2"}));
  EXPECT_EQ(device(two, "CUDA0").model_buffer_bytes, 2 * 1331200);
  EXPECT_EQ(device(two, "CPU_Mapped").model_buffer_bytes, 544000 + 2 * 1331200 + 420000 + 2048);
  EXPECT_EQ(device(two, "CUDA0").kv_buffer_bytes, int64_t{2} * 2 * 2 * 128 * 2 * 8192);
  EXPECT_TRUE(test::has_line(two, "load_tensors: offloaded 2/5 layers to GPU"));
  // A GGUF has its own types.
  EXPECT_THROW(run(test::plus(base, {"--quant", "Q4_K_M"})), InputError);
}

TEST(LlamacppPlan, VerbsNotModelledSaySo) {
  // A compare with llama.cpp and no GGUF type, and a TP size: llama.cpp's own one-line refusals
  // (fit, compare and doctor model llama.cpp: advise_fit_test, compare_test, llamacpp_doctor_test).
  const std::vector<std::vector<std::string>> calls = {
      {"compare", "--engine", "llamacpp,vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"},
      {"plan", "--engine", "llamacpp", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--gpu", "h100", "--tp", "2"}};
  for (const auto& argv : calls) {
    std::ostringstream out, err;
    EXPECT_EQ(run_cli(argv, out, err), 2) << argv[0];
    const std::string e = err.str();
    EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
    EXPECT_NE(e.find("llama"), std::string::npos) << e;
  }
}

TEST(LlamacppPlan, MlaLatentCacheAndDsaIndexer) {
  // llamacpp-021's log (GLM-5.2, 2026 build, 768000 cells, layers 55/9/8/6 over four GPUs):
  // "llama_kv_cache: size = 65812.50 MiB (768000 cells,  78 layers,  1/1 seqs), K (f16): 65812.50 MiB,
  // V (f16):    0.00 MiB" (the latent: 512 + 64 per layer, no V), KV buffers 46406.25 / 7593.75 /
  // 6750.00 / 5062.50 MiB, and the DSA indexer's 3000.00 / 375.00 / 375.00 / 187.50 MiB (21 indexer
  // layers of 128 f16 keys; 16, 2, 2 and 1 of them on each GPU). -ts 55,9,8,7 reproduces its split.
  const Forecast f = run({"--engine", "llamacpp", "--model", "zai-org/GLM-5.2", "--quant", "Q5_K_M", "--gpu", "rtx-pro-6000", "--gpus", "4",
                          "-c", "768000", "-np", "1", "-ts", "55,9,8,7", "--cpu-moe"});
  EXPECT_TRUE(test::has_line(f, "llama_kv_cache: size = 65812.50 MiB (768000 cells,  78 layers,  1/1 seqs), K (f16): 65812.50 MiB, "
                                "V (f16):    0.00 MiB"));
  const int64_t per_layer = int64_t{768000} * 576 * 2, idx = int64_t{768000} * 128 * 2;
  const int layers[] = {55, 9, 8, 6}, indexer[] = {16, 2, 2, 1};
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(f.devices[static_cast<size_t>(g)].kv_buffer_bytes, layers[g] * per_layer) << g;
    EXPECT_EQ(f.devices[static_cast<size_t>(g)].indexer_cache_bytes, indexer[g] * idx) << g;
  }
  // Builds before MLA support cached every head's K (nope 192 + rope 64) and V (256): 64 x 512 x 2 B per layer-token.
  const Forecast old = run({"--engine", "llamacpp@b4500", "--model", "zai-org/GLM-5.2", "--quant", "Q5_K_M", "--gpu", "rtx-pro-6000",
                            "--gpus", "4", "-c", "4096", "-ts", "55,9,8,7", "--cpu-moe", "-ngl", "99"});
  EXPECT_EQ(old.devices[0].kv_buffer_bytes, int64_t{55} * 4096 * 64 * (256 + 256) * 2);
}

TEST(LlamacppTune, MostContextElseMostLayers) {
  TuneGoal g;
  // Qwen3-30B-A3B Q4_K_M fits a 4090 whole: the largest safe context is the model's own 40960.
  const TuneResult r = tune(parse_deployment(Args::parse({"--engine", "llamacpp", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q4_K_M",
                                                          "--gpu", "rtx-4090"})),
                            g);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(r.primary_knob, "--ctx-size");
  EXPECT_EQ(r.kv_tokens, 40960);
  EXPECT_GE(r.min_free_worst, int64_t{1} << 30);
  // Qwen2.5-72B Q4_K_M (~44 GiB) does not: at 4096 tokens, the most layers that keep the margin;
  // one layer more breaks it.
  const std::vector<std::string> big = {"--engine", "llamacpp", "--model", "Qwen/Qwen2.5-72B-Instruct", "--quant", "Q4_K_M", "--gpu", "rtx-4090"};
  const TuneResult t = tune(parse_deployment(Args::parse(big)), g);
  ASSERT_TRUE(t.feasible) << t.reason;
  EXPECT_EQ(t.primary_knob, "--n-gpu-layers");
  const int ngl = std::stoi(t.recommended.front().second);
  EXPECT_GT(ngl, 10);
  EXPECT_LT(ngl, 81);
  auto worst = [&](int layers) {
    const Forecast f = run(test::plus(big, {"--ctx-size", "4096", "--fit", "off", "-ngl", std::to_string(layers)}));
    int64_t w = INT64_MAX;
    for (const auto& rk : f.ranks)
      for (const auto& st : rk.stages) w = std::min({w, st.free_worst, st.min_free_worst});
    return w;
  };
  EXPECT_GE(worst(ngl), int64_t{1} << 30);
  EXPECT_LT(worst(ngl + 1), int64_t{1} << 30);
}

TEST(LlamacppTune, MoeKeepsEveryLayerAndMovesTheFewestExperts) {
  // Qwen3-30B-A3B Q8_0 (30 GiB) on a 12 GB RTX 4070: not even 4096 tokens with every layer whole,
  // so every layer stays offloaded and the experts of the first K layers go to the host, K the
  // fewest that keep the margin (K - 1 breaks it); llama.cpp's own --fit choice is named too.
  const std::vector<std::string> moe = {"--engine", "llamacpp", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q8_0", "--gpu", "rtx-4070"};
  const TuneResult t = tune(parse_deployment(Args::parse(moe)), TuneGoal{});
  ASSERT_TRUE(t.feasible) << t.reason;
  EXPECT_EQ(t.primary_knob, "--n-cpu-moe");
  const int k = std::stoi(t.recommended.front().second);
  auto worst = [&](int n) {
    const Forecast f = run(test::plus(moe, {"--ctx-size", "4096", "--fit", "off", "-ngl", "49", "--n-cpu-moe", std::to_string(n)}));
    int64_t w = INT64_MAX;
    for (const auto& rk : f.ranks)
      for (const auto& st : rk.stages) w = std::min({w, st.free_worst, st.min_free_worst});
    return f.failure ? INT64_MIN : w;
  };
  EXPECT_GE(worst(k), int64_t{1} << 30);
  EXPECT_LT(worst(k - 1), int64_t{1} << 30);
  EXPECT_TRUE(std::any_of(t.notes.begin(), t.notes.end(), [](const std::string& n) { return n.rfind("llama.cpp's own --fit", 0) == 0; }));
  // The user's own placement is kept: with -ngl given, the layers are what tune searches.
  const TuneResult given = tune(parse_deployment(Args::parse(test::plus(moe, {"-ngl", "30"}))), TuneGoal{});
  EXPECT_NE(given.primary_knob, "--n-cpu-moe");
}

// --mmproj (issue 25): the projector llama-server loads after the text model, on the first GPU.
// A 2026-05 llama-server log of Qwen3.6-27B with unsloth's mmproj-BF16.gguf (public code index
// 56678392724): "load_hparams: model size: 887.99 MiB", "alloc_compute_meta: CUDA0 compute buffer
// size = 248.10 MiB". The derived projector (the vision tower's parameters x 2 B) is within 1.1% below.
TEST(LlamacppPlan, MmprojLoadsTheVisionTowerOnTheFirstGpu) {
  const std::vector<std::string> base = {"--engine", "llamacpp", "--model", "Qwen/Qwen3.6-27B", "--quant", "Q4_K_M", "--gpu", "rtx-3090", "-c", "32768"};
  const Forecast f = run(plus(base, {"--mmproj", "mmproj-BF16.gguf"}));
  const Item* proj = rank0_item(f, "CUDA0 projector (--mmproj, BF16)");
  ASSERT_NE(proj, nullptr);
  EXPECT_NEAR(static_cast<double>(proj->bytes) / (1 << 20), 887.99, 887.99 * 0.011);
  EXPECT_GE(static_cast<double>(proj->high) / (1 << 20), 887.99);  // the range holds the logged size
  const Item* compute = rank0_item(f, "CUDA0 projector image compute buffer");
  ASSERT_NE(compute, nullptr);
  EXPECT_LE(compute->low, 248LL << 20);
  EXPECT_GE(compute->high, 249LL << 20);
  EXPECT_EQ(f.ranks.at(0).stages.back().id, StageId::Mmproj);
  // The projector's note reaches the reader (it was once overwritten by the model's notes).
  EXPECT_TRUE(std::any_of(f.notes.begin(), f.notes.end(), [](const std::string& n) { return n.rfind("--mmproj: the vision tower", 0) == 0; }));
  // In host memory with --no-mmproj-offload: no GPU stage.
  const Forecast host = run(plus(base, {"--mmproj", "mmproj-BF16.gguf", "--no-mmproj-offload"}));
  EXPECT_EQ(rank0_item(host, "CUDA0 projector"), nullptr);
  // A card the text model fits on but not the projector fails where llama.cpp would: loading it.
  const std::vector<std::string> small = {"--engine", "llamacpp", "--model", "Qwen/Qwen3.6-27B", "--quant", "Q4_K_M", "--gpu-memory", "17GiB",
                                          "-c", "4096", "-ngl", "99", "--fit", "off"};
  EXPECT_FALSE(run(small).failure);
  const Forecast tight = run(plus(small, {"--mmproj", "mmproj-F16.gguf"}));
  ASSERT_TRUE(tight.failure);
  EXPECT_EQ(tight.failure->stage, StageId::Mmproj);
}

// A GGUF converted with --fuse_gate_up_exps (blk.N.ffn_gate_up_exps) under --cpu-moe: llama.cpp's
// expert regex caught the fused tensor only from PR #20416 (~b8290); on b8284 it stayed on the GPU
// (llama.cpp issue #20431: 141 GiB of Qwen3.5-397B experts on a 24 GiB card).
TEST(LlamacppPlan, CpuMoeMissesFusedGateUpBeforePr20416) {
  using namespace gguf_test;
  Writer w;
  w.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 2).kv_u32("llama.embedding_length", 512)
      .kv_u32("llama.attention.head_count", 4).kv_u32("llama.attention.head_count_kv", 2).kv_u32("llama.context_length", 4096)
      .kv_u32("llama.feed_forward_length", 1024).kv_u32("llama.vocab_size", 1000).kv_u32("llama.expert_count", 4)
      .kv_u32("llama.expert_used_count", 2);
  w.tensor("token_embd.weight", {512, 1000}, T_Q8_0, 544000).tensor("output.weight", {512, 1000}, T_Q6_K, 420000);
  for (int i = 0; i < 2; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    // gate_up: 512 x 2048 x 4 experts q4_K = 2,359,296 B; down: 1024 x 512 x 4 = 1,179,648 B.
    w.tensor(b + "attn_q.weight", {512, 512}, T_Q4_K, 147456).tensor(b + "attn_k.weight", {512, 256}, T_Q4_K, 73728)
        .tensor(b + "attn_v.weight", {512, 256}, T_Q4_K, 73728).tensor(b + "attn_output.weight", {512, 512}, T_Q4_K, 147456)
        .tensor(b + "ffn_gate_inp.weight", {512, 4}, T_F32, 8192)
        .tensor(b + "ffn_gate_up_exps.weight", {512, 2048, 4}, T_Q4_K, 2359296)
        .tensor(b + "ffn_down_exps.weight", {1024, 512, 4}, T_Q4_K, 1179648);
  }
  const std::string path = ::testing::TempDir() + "tiny-fused-moe-Q4_K.gguf";
  w.write(path);
  const std::vector<std::string> base = {"--model", path, "--gpu", "rtx-4090", "-c", "4096", "-np", "1", "--cpu-moe", "--fit", "off"};
  const Forecast old_build = run(plus({"--engine", "llamacpp@b8284"}, base));
  const Forecast fixed = run(plus({"--engine", "llamacpp@b8290"}, base));
  // The fixed build keeps attention, router and output on the GPU: 2 x 450,560 + 420,000 B.
  EXPECT_EQ(device(fixed, "CUDA0").model_buffer_bytes, 2 * (147456 * 2 + 73728 * 2 + 8192) + 420000);
  // b8284 also keeps both layers' fused gate_up experts there; down goes to the host either way.
  EXPECT_EQ(device(old_build, "CUDA0").model_buffer_bytes - device(fixed, "CUDA0").model_buffer_bytes, 2 * 2359296);
  auto noted = [](const Forecast& f) {
    return std::any_of(f.notes.begin(), f.notes.end(), [](const std::string& n) { return n.find("PR #20416") != std::string::npos; });
  };
  EXPECT_TRUE(noted(old_build));
  EXPECT_FALSE(noted(fixed));
}

// --host-memory: experts on the host (--cpu-moe) take ~16.5 GiB of RAM. Mapped from the file they
// may be evicted and re-read (at risk when they do not fit); copied (--no-mmap) they must fit (OOM).
TEST(LlamacppPlan, HostMemoryChecksWhatTheHostHolds) {
  const std::vector<std::string> base = {"--engine", "llamacpp", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q4_K_M",
                                         "--gpu", "rtx-4090", "-c", "32768", "--cpu-moe"};
  const Forecast plain = run(base);
  const DeviceMemory& host = device(plain, "CPU_Mapped");
  const int64_t buffers = host.kv_buffer_bytes + host.compute_buffer_bytes + host.output_buffer_bytes;
  ASSERT_GT(host.model_buffer_bytes, int64_t{16} << 30);  // the experts of 48 layers
  EXPECT_EQ(plain.verdict, Verdict::Fits);
  EXPECT_EQ(run(plus(base, {"--host-memory", "32GiB"})).verdict, Verdict::Fits);
  const Forecast mapped = run(plus(base, {"--host-memory", "16GiB"}));
  EXPECT_EQ(mapped.verdict, Verdict::AtRisk);
  EXPECT_FALSE(mapped.failure);
  const Forecast copied = run(plus(base, {"--host-memory", "16GiB", "--no-mmap"}));
  EXPECT_EQ(copied.verdict, Verdict::Oom);
  ASSERT_TRUE(copied.failure);
  EXPECT_EQ(copied.failure->stage, StageId::Weights);
  EXPECT_EQ(copied.failure->request_bytes, device(copied, "CPU").model_buffer_bytes + buffers);
  EXPECT_EQ(copied.failure->free_bytes, int64_t{16} << 30);
  // Other engines do not model the host: one line, exit 2.
  EXPECT_THROW(run({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--host-memory", "16GiB"}), InputError);
}

// --device (llama-server's device list): the plan runs on those GPUs alone, in that order, and names
// each buffer by its device as llama.cpp prints it.
TEST(LlamacppPlan, DeviceListPicksAndOrdersTheGpus) {
  auto base = case010();  // rtx-4090 (CUDA0), rtx-5090 (CUDA1), experts on the host
  base.resize(base.size() - 2);  // no -ts
  const Forecast one = run(plus(base, {"--device", "CUDA1"}));
  ASSERT_EQ(one.devices.size(), 2u);  // CUDA1, then the host
  EXPECT_EQ(one.devices[0].name, "CUDA1");
  EXPECT_EQ(one.devices[0].capacity_bytes, require_gpu("rtx-5090").capacity_bytes);
  EXPECT_EQ(one.devices[0].layers, 49);
  EXPECT_TRUE(test::has_line(one, "llama_kv_cache_unified:      CUDA1 KV buffer size =  1536.00 MiB"));
  // Both, 5090 first: the same buffers as a host whose cards are in that order.
  const Forecast both = run(plus(base, {"--device", "CUDA1,CUDA0", "-ts", "37,12"}));
  std::vector<std::string> swapped = base;
  std::replace(swapped.begin(), swapped.end(), std::string("rtx-4090,rtx-5090"), std::string("rtx-5090,rtx-4090"));
  const Forecast host = run(plus(swapped, {"-ts", "37,12"}));
  ASSERT_EQ(both.devices.size(), 3u);
  EXPECT_EQ(both.devices[0].name, "CUDA1");
  EXPECT_EQ(both.devices[1].name, "CUDA0");
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(both.devices[i].model_buffer_bytes, host.devices[i].model_buffer_bytes) << i;
    EXPECT_EQ(both.devices[i].kv_buffer_bytes, host.devices[i].kv_buffer_bytes) << i;
    EXPECT_EQ(both.devices[i].capacity_bytes, host.devices[i].capacity_bytes) << i;
  }
  EXPECT_EQ(both.devices[0].kv_buffer_bytes + both.devices[1].kv_buffer_bytes, 1536 * MiB);
  // -ot names a device on the host; one --device leaves out is one line.
  EXPECT_THROW(run(plus(base, {"--device", "CUDA1", "-ot", "exps=CUDA0"})), InputError);
  EXPECT_EQ(run(plus(base, {"--device", "CUDA1", "-ot", "blk\\.0\\.=CUDA1"})).devices[0].name, "CUDA1");
  EXPECT_THROW(run(plus(base, {"--device", "none"})), InputError);
  EXPECT_THROW(run(plus(base, {"--device", "CUDA2"})), InputError);
  EXPECT_THROW(run(plus(base, {"--device", "CUDA0,CUDA0"})), InputError);
}

// A unified-memory device (DGX Spark): the host's resident buffers come out of the GPU's memory, so
// they join its stages; weights mapped from the file stay page cache (noted, not counted).
TEST(LlamacppPlan, UnifiedMemoryCountsTheHostsBuffersOnTheGpu) {
  const std::vector<std::string> base = {"--engine", "llamacpp", "--model", "Qwen/Qwen3-30B-A3B", "--quant", "Q4_K_M",
                                         "--gpu", "dgx-spark", "-c", "32768", "--cpu-moe"};
  const Forecast mapped = run(base);
  EXPECT_EQ(rank0_item(mapped, "host model buffer (unified memory)"), nullptr);
  const Forecast copied = run(plus(base, {"--no-mmap"}));
  const Item* host = rank0_item(copied, "host model buffer (unified memory)");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->bytes, device(copied, "CPU").model_buffer_bytes);
  const Item* compute = rank0_item(copied, "host compute buffers (unified memory)");
  ASSERT_NE(compute, nullptr);
  EXPECT_EQ(compute->bytes, device(copied, "CPU").compute_buffer_bytes + device(copied, "CPU").output_buffer_bytes);
  // Mapped or copied, the host's compute buffers count; only the copied weights differ.
  ASSERT_NE(rank0_item(mapped, "host compute buffers (unified memory)"), nullptr);
  EXPECT_EQ(mapped.headroom_bytes - copied.headroom_bytes, host->bytes);
  // A discrete card keeps the host apart.
  std::vector<std::string> discrete = base;
  std::replace(discrete.begin(), discrete.end(), std::string("dgx-spark"), std::string("h100"));
  EXPECT_EQ(rank0_item(run(plus(discrete, {"--no-mmap"})), "host model buffer (unified memory)"), nullptr);
}

TEST(LlamacppPlan, MetalNamesAndDefaultsByBuild) {
  // Metal builds offloaded every layer by default before the other backends did
  // (llama_model_default_params: n_gpu_layers = 999 under GGML_USE_METAL), and named their one device
  // "Metal" until PR #18919 (2026-01, GGML_METAL_NAME "MTL"): LM Studio's 2025-08 llama.cpp logs
  // "Metal_Mapped model buffer size", "Metal KV buffer size", "CPU compute buffer size"
  // (llamacpp-015); a b10950 log "MTL0 compute buffer size" (llamacpp-016). Under mmap Metal wraps the
  // file (buffer_from_host_ptr), hence the _Mapped suffix; Metal has no pinned host type, so CPU.
  const auto lines = [](const std::string& engine, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"--engine", engine, "--model", "openai/gpt-oss-20b", "--quant", "MXFP4", "--gpu", "apple-m4-max-64gb", "-c", "4096"};
    a.insert(a.end(), extra.begin(), extra.end());
    std::string all;
    for (const auto& l : run(a).log) all += l + "\n";
    return all;
  };
  const std::string old = lines("llamacpp@b6100");
  EXPECT_NE(old.find("offloaded 25/25 layers to GPU"), std::string::npos) << old;
  EXPECT_NE(old.find("Metal_Mapped model buffer size"), std::string::npos) << old;
  EXPECT_NE(old.find("     Metal KV buffer size"), std::string::npos) << old;
  EXPECT_NE(old.find("CPU compute buffer size"), std::string::npos) << old;
  EXPECT_EQ(old.find("Metal0"), std::string::npos) << old;
  EXPECT_EQ(old.find("Metal_Host"), std::string::npos) << old;
  const std::string now = lines("llamacpp@b10950");
  EXPECT_NE(now.find("MTL0_Mapped model buffer size"), std::string::npos) << now;
  EXPECT_NE(now.find("MTL0 compute buffer size"), std::string::npos) << now;
  EXPECT_NE(lines("llamacpp@b10950", {"--no-mmap"}).find("        MTL0 model buffer size"), std::string::npos);
}

TEST(LlamacppPlan, SlidingWindowCachesLogTheirOwnBuffers) {
  // llamacpp-015 (LM Studio's 2025-08 llama.cpp, gpt-oss-120b MXFP4, -c 4096, full-size SWA cache):
  // each cache of llama_kv_cache_unified_iswa allocates and logs its own buffer, the full-attention
  // one first:
  //   llama_kv_cache_unified_iswa: creating non-SWA KV cache, size = 4096 cells
  //   llama_kv_cache_unified:      Metal KV buffer size =   144.00 MiB
  //   llama_kv_cache_unified: size =  144.00 MiB (  4096 cells,  18 layers,  1/1 seqs), ...
  //   llama_kv_cache_unified_iswa: creating     SWA KV cache, size = 4096 cells
  //   llama_kv_cache_unified:      Metal KV buffer size =   144.00 MiB
  const Forecast f = run({"--engine", "llamacpp@b6100", "--model", "openai/gpt-oss-120b", "--quant", "MXFP4", "--gpu", "apple-m4-max-128gb",
                          "-c", "4096", "--swa-full", "-b", "512", "-fa", "off"});
  std::vector<std::string> kv;
  for (const auto& l : f.log)
    if (l.find("llama_kv_cache_unified") == 0) kv.push_back(l);
  ASSERT_EQ(kv.size(), 6u);
  EXPECT_EQ(kv[0], "llama_kv_cache_unified_iswa: creating non-SWA KV cache, size = 4096 cells");
  EXPECT_EQ(kv[1], "llama_kv_cache_unified:      Metal KV buffer size =   144.00 MiB");
  EXPECT_EQ(kv[2].rfind("llama_kv_cache_unified: size =  144.00 MiB (  4096 cells,  18 layers,", 0), 0u) << kv[2];
  EXPECT_EQ(kv[3], "llama_kv_cache_unified_iswa: creating     SWA KV cache, size = 4096 cells");
  EXPECT_EQ(kv[4], "llama_kv_cache_unified:      Metal KV buffer size =   144.00 MiB");
  // The device's whole KV (both caches) is still one allocation figure for the plan.
  EXPECT_EQ(device(f, "Metal").kv_buffer_bytes, 288 * MiB);
}

TEST(LlamacppPlan, ADateIsTheBuildReleasedThen) {
  // Release dates of builds (winget-pkgs' "New version: ggml.llamacpp version bNNNN" pull requests):
  // b6337 on 2025-09-01, b6402 on 2025-09-07, b10507 on 2026-08-20 ... b10545 on 2026-08-21.
  // 2025-09-04 lies halfway between the first two: b6337 + 65 x 3/6 = b6369.
  const auto build_of = [](const std::string& engine) {
    const Forecast f = run({"--engine", engine, "--model", "Qwen/Qwen3-0.6B", "--quant", "Q8_0", "--gpu", "rtx-4090"});
    return f.version;
  };
  EXPECT_EQ(build_of("llamacpp@2025-09-01"), "b6337");
  EXPECT_EQ(build_of("llamacpp@2025-09-04"), "b6369");
  EXPECT_EQ(build_of("llamacpp@main@2026-08-21"), "b10545");
  // After the last date known: the newest rules, said so.
  const Forecast later = run({"--engine", "llamacpp@2027-01-01", "--model", "Qwen/Qwen3-0.6B", "--quant", "Q8_0", "--gpu", "rtx-4090"});
  EXPECT_EQ(later.version, "newest");
  bool said = false;
  for (const auto& n : later.notes) said = said || n.find("after the last release date known") != std::string::npos;
  EXPECT_TRUE(said);
  // The rules follow: -fa auto by default from ~b6250, so a 2025-07 build plans flash attention off.
  const Forecast july = run({"--engine", "llamacpp@2025-07-01", "--model", "Qwen/Qwen3-0.6B", "--quant", "Q8_0", "--gpu", "rtx-4090"});
  bool fa_off = false;
  for (const auto& l : july.log) fa_off = fa_off || l.find("flash_attn = disabled") != std::string::npos;
  EXPECT_TRUE(fa_off);
}
