// TensorRT-LLM PyTorch backend: the executor overhead fitted in src/engines/trtllm/trtllm_estimates.cpp
// (pytorch_executor_overhead, ESTIMATE n = 3) replayed on the single-GPU logs it was fitted on, and
// the places it does (PyTorch backend) and does not (TensorRT engines) enter the profiled peak.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "engines/trtllm/trtllm_estimates.h"
#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
// HuggingFaceTB/SmolLM2-135M-Instruct's architecture (not in the catalog): LlamaForCausalLM, 30
// layers, 9 heads / 3 KV heads of 64, hidden 576, MLP 1536, vocab 49,152, tied embeddings - 134.5M
// parameters. Its KV cell, 2 x 30 x 3 x 64 x 2 B = 23,040 B per token, is what the LM7 log's
// "Allocated 9.06 GiB for max tokens in paged KV cache (422048)" implies (9.06 GiB / 422,048).
std::string smollm2_config() {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "headroom_trtllm_overhead_smollm2";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "config.json").string();
  std::ofstream(path) << R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 576,
 "intermediate_size": 1536, "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
 "head_dim": 64, "vocab_size": 49152, "max_position_embeddings": 8192, "tie_word_embeddings": true,
 "torch_dtype": "bfloat16", "rms_norm_eps": 1e-05, "rope_theta": 100000})";
  return path;
}

double rel_err(int64_t predicted, double logged) { return (static_cast<double>(predicted) - logged) / logged; }

}  // namespace

TEST(TrtllmOverhead, EstimateIsTheFittedRange) {
  // 0.64 GiB central (mean of the two text-model logs' 0.49 and 0.79 GiB), 0.45 .. 1.35 GiB.
  auto e = trtllm::pytorch_executor_overhead();
  EXPECT_NEAR(to_gib(e.central), 0.64, 1e-9);
  EXPECT_NEAR(to_gib(e.low), 0.45, 1e-9);
  EXPECT_NEAR(to_gib(e.high), 1.35, 1e-9);
}

TEST(TrtllmOverhead, SmolLM2OnRtx4070SuperReplaysTheLog) {
  // LM7 docs (public-code 61586403107; tests/data/extra xtrt-008/009): trtllm-serve 1.2.1,
  // max_seq_len 2049, RTX 4070 SUPER. Default fraction 0.9: "(422048)"; fraction 0.25: 117,216.
  const std::string cfg = smollm2_config();
  Forecast a = run({"--engine", "trtllm@1.2.1", "--model", cfg, "--gpu", "rtx-4070-super", "--max_seq_len", "2049"});
  // 415,904 tokens: -1.46% (442,752, +4.91%, before the overhead term).
  EXPECT_EQ(a.kv_tokens, 415904);
  EXPECT_LT(std::abs(rel_err(a.kv_tokens, 422048)), 0.02);
  Forecast b = run({"--engine", "trtllm@1.2.1", "--model", cfg, "--gpu", "rtx-4070-super", "--max_seq_len", "2049",
                    "--kv_cache_free_gpu_memory_fraction", "0.25"});
  EXPECT_EQ(b.kv_tokens, 115552);  // -1.42%
  EXPECT_LT(std::abs(rel_err(b.kv_tokens, 117216)), 0.02);
}

TEST(TrtllmOverhead, Qwen3_0_6BOnH100ReplaysTheLog) {
  // xtrt-001: Qwen3-0.6B architecture, H100, 1.2.1, LLM-API defaults: "(643136)".
  Forecast f = run({"--engine", "trtllm@1.2.1", "--model", "Qwen/Qwen3-0.6B", "--gpu", "h100"});
  // 644,384 tokens: +0.19% (649,792, +1.03%, before the overhead term).
  EXPECT_EQ(f.kv_tokens, 644384);
  EXPECT_LT(std::abs(rel_err(f.kv_tokens, 643136)), 0.005);
}

TEST(TrtllmOverhead, OnlyThePytorchBackendCarriesIt) {
  // The PyTorch executor's warm-up holds it; a TensorRT engine's C++ runtime has its own fitted
  // execution-context and runtime-buffer terms instead.
  Forecast py = run({"--engine", "trtllm@1.2.1", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"});
  const Item* it = rank0_item(py, "executor overhead");
  ASSERT_NE(it, nullptr);
  EXPECT_TRUE(it->estimated);
  EXPECT_EQ(it->bytes, trtllm::pytorch_executor_overhead().central);
  Forecast trt = run({"--engine", "trtllm@0.19.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--backend", "tensorrt"});
  EXPECT_EQ(rank0_item(trt, "executor overhead"), nullptr);
}
