// What vLLM allocates at load beyond the checkpoint (vllm_load_extras.cpp): LoRA adapter slots and
// Marlin's re-laid FP8 scales, hand-computed from vLLM's tensor shapes, and the LoRA and DP
// deployments of real logs they change (tests/data/extra/vllm.jsonl xvllm-055, xvllm-057/058).
#include <gtest/gtest.h>

#include "engines/vllm/vllm_load_extras.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
const std::vector<std::string> kQwen14bLora{"--engine", "vllm@0.26.0", "--model", "Qwen/Qwen3-14B-FP8", "--gpu", "a10g",
                                           "--quantization", "fp8", "--gpu-memory-utilization", "0.85", "--max-num-seqs", "16",
                                           "--max-model-len", "16384", "--enable-lora", "--max-lora-rank", "64",
                                           "--max-num-batched-tokens", "8192"};
}  // namespace

TEST(VllmLoadExtras, LoraSlotsOfQwen3_14B) {
  // Qwen3-14B: hidden 5120, 40 heads / 8 KV heads x 128, intermediate 17408, 40 layers; rank 64,
  // one slot, bf16. Per layer (elements), A = rank x input, B = slice output x rank:
  //   qkv_proj  A 3 x 64 x 5120 = 983,040        B (5120 + 1024 + 1024) x 64 = 458,752
  //   o_proj    A 64 x 5120 = 327,680            B 5120 x 64 = 327,680
  //   gate_up   A 2 x 64 x 5120 = 655,360        B 2 x 17408 x 64 = 2,228,224
  //   down      A 64 x 17408 = 1,114,112         B 5120 x 64 = 327,680
  // = 6,422,528 x 40 layers x 2 B = 513,802,240 B.
  Forecast f = run(kQwen14bLora);
  const Item* lora = rank0_item(f, "LoRA adapter slots");
  ASSERT_NE(lora, nullptr);
  EXPECT_EQ(lora->bytes, 513802240);
  EXPECT_FALSE(lora->estimated);

  // TP2: column outputs and row inputs halve, KV 4 heads per rank; the full-size A (column) and B
  // (row) stay: qkv 983,040 + (2560 + 1024) x 64; o 64 x 2560 + 327,680; gate_up 655,360 +
  // 2 x 8704 x 64; down 64 x 8704 + 327,680 = 4,358,144 per layer -> 348,651,520 B.
  std::vector<std::string> tp2 = kQwen14bLora;
  tp2.insert(tp2.end(), {"--tensor-parallel-size", "2"});
  const Forecast f2 = run(tp2);  // held: the item points into it
  const Item* lora2 = rank0_item(f2, "LoRA adapter slots");
  ASSERT_NE(lora2, nullptr);
  EXPECT_EQ(lora2->bytes, 348651520);

  // Four slots of rank 16 hold as much as one of rank 64 (both linear in slots x rank).
  std::vector<std::string> four = kQwen14bLora;
  four[16] = "16";
  four.insert(four.end(), {"--max-loras", "4"});
  EXPECT_EQ(rank0_item(run(four), "LoRA adapter slots")->bytes, 513802240);

  // Without --enable-lora there is no such item.
  Forecast plain = run({"--engine", "vllm@0.26.0", "--model", "Qwen/Qwen3-14B-FP8", "--gpu", "a10g"});
  EXPECT_EQ(rank0_item(plain, "LoRA adapter slots"), nullptr);
}

TEST(VllmLoadExtras, MarlinFp8ScalesOnlyWithoutFp8Compute) {
  // Qwen3-14B-FP8 (128 x 128 block scales): FP8 elements per layer 5120 x (5120 + 1024 + 1024 +
  // 5120 + 3 x 17408) = 330,301,440, x 40 = 13,212,057,600. Marlin's bf16 group scales take 2/128 B
  // per element where the block scales took 4/16384: 206,438,400 - 3,225,600 = 203,212,800 B.
  Forecast a10g = run({"--engine", "vllm@0.26.0", "--model", "Qwen/Qwen3-14B-FP8", "--gpu", "a10g"});
  const Item* m = rank0_item(a10g, "Marlin FP8 group scales");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->bytes, 203212800);
  // sm89 (L40S) and sm90 (H100) run FP8 natively: no re-laid scales.
  EXPECT_EQ(rank0_item(run({"--engine", "vllm@0.26.0", "--model", "Qwen/Qwen3-14B-FP8", "--gpu", "l40s"}), "Marlin FP8"), nullptr);
  EXPECT_EQ(rank0_item(run({"--engine", "vllm@0.26.0", "--model", "Qwen/Qwen3-14B-FP8", "--gpu", "h100"}), "Marlin FP8"), nullptr);
}

TEST(VllmLoadExtras, LoraRealLogXvllm055) {
  // xvllm-055 (offline LLM on a Modal A10G, 0.26.0): "16.07 GiB weights" logged. Checkpoint
  // 15.22 GiB + Marlin scales 0.19 + LoRA 0.48 = 15.88 GiB (-1.2%). Its KV (1.05 GiB logged,
  // 1.57 here) is still short by ~0.5 GiB of profile memory this model does not find.
  Forecast f = run(kQwen14bLora);
  const double took = number_after(f, "Model loading took ");
  EXPECT_NEAR(took, 16.07, 0.02 * 16.07);
  EXPECT_EQ(f.verdict, Verdict::Refused);
}

TEST(VllmLoadExtras, LoraFlagsInVllmWords) {
  EXPECT_NE(input_error({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--enable-lora", "--max-loras", "0"})
                .find("max_loras"),
            std::string::npos);
  EXPECT_NE(input_error({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--enable-lora", "--lora-dtype", "float32"})
                .find("argument --lora-dtype: invalid choice: 'float32'"),
            std::string::npos);
  EXPECT_NE(input_error({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--enable-lora", "--max-lora-rank", "-8"})
                .find("max_lora_rank"),
            std::string::npos);
}

TEST(VllmLoadExtras, DataParallelRanksCarryNccl) {
  // xvllm-057/058 (vllm-project/recipes#12, 0.10.1.dev, 8 x H20 141 GB, DP8 + EP): each replica is
  // one GPU, but the DP / EP groups span all eight, so its profile carries 0.10.x's multi-GPU NCCL
  // growth. Logged M 205,728 at u = 0.9 and 235,296 at 0.95; forecast within 5% of both (with the
  // one-GPU figure they were +7.8% and +6.8%).
  std::vector<std::string> base{"--engine", "vllm@0.10.1", "--model", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "--gpu", "h20",
                                "--gpu-memory", "139.8GiB", "--dp", "8", "--ep", "8", "--enable-expert-parallel"};
  Forecast f = run(base);
  ASSERT_EQ(f.verdict, Verdict::Refused);
  auto M = [](const Forecast& g) {
    for (const auto& l : g.log) {
      auto p = l.find("the estimated maximum model length is ");
      if (p != std::string::npos) return std::stod(l.substr(p + 38));
    }
    return 0.0;
  };
  EXPECT_NEAR(M(f), 205728, 0.05 * 205728);
  base.insert(base.end(), {"--gpu-memory-utilization", "0.95"});
  EXPECT_NEAR(M(run(base)), 235296, 0.05 * 235296);
}

TEST(VllmLoadExtras, OnlineFp8OfQwen3_8B) {
  // --quantization fp8 on the bf16 Qwen3-8B: the linears of 36 layers (hidden 4096, 32 / 8 heads x
  // 128, intermediate 12288) = q 16,777,216 + k 4,194,304 + v 4,194,304 + o 16,777,216 + gate/up/down
  // 3 x 50,331,648 = 192,937,984 elements per layer, 6,945,767,424 in all: one byte each instead of
  // two. Embeddings, lm_head and norms stay bf16 (quantization/fp8.py; docs fp8.md).
  const std::vector<std::string> base{"--engine", "vllm@0.20.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s"};
  auto with = [&](std::vector<std::string> extra) {
    auto v = base;
    v.insert(v.end(), extra.begin(), extra.end());
    return run(v);
  };
  const Forecast plain = with({});
  const Item* bf16 = rank0_item(plain, "model weights");
  const Forecast fp8 = with({"--quantization", "fp8"});
  const Item* w8 = rank0_item(fp8, "model weights");
  ASSERT_NE(bf16, nullptr);
  ASSERT_NE(w8, nullptr);
  EXPECT_EQ(bf16->bytes - w8->bytes, 6945767424);
  // From 0.14 (PR #31914) the weights are quantized layer by layer as they load: one layer's bf16
  // linears on top, 192,937,984 x 2 B (INFERRED, so an estimate).
  const Item* tr = rank0_item(fp8, "16-bit weights during online FP8 quantization");
  ASSERT_NE(tr, nullptr);
  EXPECT_EQ(tr->bytes, 385875968);
  EXPECT_TRUE(tr->estimated);
  EXPECT_TRUE(has_prefix(fp8, "Model loading took 8.8 GiB"));
  // -q is vLLM's alias of --quantization (arg_utils.py "--quantization", "-q").
  const Forecast short_q = with({"-q", "fp8"});
  EXPECT_EQ(rank0_item(short_q, "model weights")->bytes, w8->bytes);
  // An FP8 checkpoint given --quantization fp8 is not quantized twice.
  const std::vector<std::string> ckpt{"--engine", "vllm@0.20.0", "--model", "Qwen/Qwen3-32B-FP8", "--gpu", "h100"};
  std::vector<std::string> ckpt_q = ckpt;
  ckpt_q.insert(ckpt_q.end(), {"--quantization", "fp8"});
  const Forecast a = run(ckpt_q), b = run(ckpt);
  EXPECT_EQ(rank0_item(a, "model weights")->bytes, rank0_item(b, "model weights")->bytes);
}

TEST(VllmLoadExtras, OnlineFp8LoadsTheWhole16BitModelBefore0_14) {
  // Before PR #31914 (merged 2026-01-07) every 16-bit weight was loaded before any was quantized
  // (docs fp8.md: "you need enough memory to load the whole model"; vllm#7200 is such an OOM):
  // Qwen3-32B (61.0 GiB in bf16, 32.0 GiB after) cannot load on a 44.4 GiB L40S in 0.11, and can
  // in 0.20, where it is quantized layer by layer.
  const std::vector<std::string> old_build{"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen3-32B", "--gpu", "l40s", "--quantization", "fp8"};
  Forecast f = run(old_build);
  EXPECT_EQ(f.verdict, Verdict::Oom);
  ASSERT_TRUE(f.failure.has_value());
  EXPECT_EQ(f.failure->stage, StageId::Weights);
  EXPECT_FALSE(has_prefix(f, "Model loading took"));  // printed only once load_model returns
  std::vector<std::string> new_build = old_build;
  new_build[1] = "vllm@0.20.0";
  Forecast g = run(new_build);
  ASSERT_TRUE(g.failure.has_value());
  EXPECT_NE(g.failure->stage, StageId::Weights);
}

TEST(VllmLoadExtras, CpuOffloadGb) {
  // --cpu-offload-gb N moves N x 1024^3 B of decoder-layer weights to pinned CPU memory
  // (models/utils.py maybe_offload_to_cpu): Qwen3-8B's 16,391,956,480 B on the GPU less 4 GiB.
  const std::vector<std::string> base{"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s"};
  auto weights = [&](std::vector<std::string> extra) {
    auto v = base;
    v.insert(v.end(), extra.begin(), extra.end());
    const Forecast f = run(v);
    return rank0_item(f, "model weights")->bytes;
  };
  EXPECT_EQ(weights({}), 16391956480);
  EXPECT_EQ(weights({"--cpu-offload-gb", "4"}), 16391956480 - 4 * 1073741824LL);
  // At most every parameter of the 36 layers: the linears (6,945,767,424 x 2 B) and the layers'
  // norms (input + post-attention 2 x 4,096, q_norm + k_norm 2 x 128 = 8,448 x 36 x 2 B = 608,256 B).
  // Embeddings, lm_head and the final norm stay.
  EXPECT_EQ(weights({"--cpu-offload-gb", "100"}), 16391956480 - 13891534848 - 608256);
  // With online FP8 on a Gated-DeltaNet hybrid (Qwen3.5-4B: 24 of 32 layers linear attention) an
  // offload larger than the layers leaves the same bytes on the GPU as without FP8 -- embeddings,
  // final norm, vision tower -- the FP8 saving and the cap both run over every layer parameter
  // (the cap once stopped at attention + MLP + experts and left half the GDN projections).
  const std::vector<std::string> hybrid{"--engine", "vllm@0.20.0", "--model", "Qwen/Qwen3.5-4B", "--gpu", "l40s", "--cpu-offload-gb", "100"};
  auto hybrid_weights = [&](const std::vector<std::string>& extra) { return rank0_item(run(plus(hybrid, extra)), "model weights")->bytes; };
  EXPECT_EQ(hybrid_weights({"--quantization", "fp8"}), hybrid_weights({}));
  EXPECT_NE(input_error({"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--cpu-offload-gb", "-1"})
                .find("Input should be greater than or equal to 0"),
            std::string::npos);
  // Model Runner V2 (dense models from 0.25.1) never installs the offloader (vllm#51396): no effect.
  const Forecast v2 = run({"--engine", "vllm@0.27.1", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--cpu-offload-gb", "4"});
  EXPECT_EQ(rank0_item(v2, "model weights")->bytes, 16391956480);
  EXPECT_TRUE(std::any_of(v2.notes.begin(), v2.notes.end(), [](const std::string& n) { return n.find("vllm#51396") != std::string::npos; }));
  // PR #51413 gave Model Runner V2 the offloader (0.28.0 INFERRED): the 4 GiB leave the GPU again.
  const Forecast v28 = run({"--engine", "vllm@0.28.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--cpu-offload-gb", "4"});
  EXPECT_EQ(rank0_item(v28, "model weights")->bytes, 16391956480 - 4 * 1073741824LL);
}

TEST(VllmLoadExtras, HfOverridesRewriteTheConfigBeforeTheBuild) {
  // --hf-overrides '{"num_hidden_layers": 18}' builds Qwen3-8B with 18 of its 36 layers: each layer
  // holds q/o 2 x 4096 x 4096 + k/v 2 x 4096 x 1024 + MLP 3 x 4096 x 12288 + norms 8,448
  // = 192,946,432 parameters x 2 B = 385,892,864 B, so 18 x that less than 16,391,956,480 B.
  const std::vector<std::string> base{"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s"};
  const Forecast f = run(plus(base, {"--hf-overrides", R"({"num_hidden_layers": 18})"}));
  EXPECT_EQ(rank0_item(f, "model weights")->bytes, 16391956480 - 18 * 385892864LL);
  EXPECT_TRUE(std::any_of(f.notes.begin(), f.notes.end(), [](const std::string& n) { return n == "config.json as --hf-overrides rewrites it: num_hidden_layers"; }));
  // A nested sub-config is updated key by key (ModelConfig._apply_dict_overrides): Qwen3-VL-8B's
  // text_config keeps its shapes and takes the shorter context.
  const Forecast vl = run({"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen3-VL-8B-Instruct", "--gpu", "h100", "--hf-overrides",
                           R"({"text_config": {"max_position_embeddings": 65536}})"});
  EXPECT_EQ(vl.context_len, 65536);
  // Not a JSON object of config keys: bad input, exit 2.
  EXPECT_NE(input_error({"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--hf-overrides", "[18]"})
                .find("must be a JSON object"),
            std::string::npos);
  EXPECT_NE(input_error({"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--hf-overrides", R"({"num_hidden_layers":)"})
                .find("command line --hf-overrides: json: parse error"),
            std::string::npos);
  // A number past double's range is nlohmann's out_of_range 406, not a parse_error: still one
  // input-error line (it was an internal error, exit 3).
  EXPECT_NE(input_error({"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--hf-overrides", R"({"rope_theta": 1e309})"})
                .find("number overflow"),
            std::string::npos);
}
