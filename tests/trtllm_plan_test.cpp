// TensorRT-LLM rules pinned by hand-computed values and real log figures (research §7.4),
// and plan_trtllm(): its [MemUsageChange] lines, max_seq_len shrinking, flag errors.
#include <gtest/gtest.h>

#include <algorithm>

#include "engines/trtllm/trtllm_rules.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
ModelConfig dense(int64_t layers, int64_t heads, int64_t kv_heads, int64_t head_dim) {
  ModelConfig c;
  c.num_layers = layers;
  c.num_attention_heads = heads;
  c.num_kv_heads = kv_heads;
  c.head_dim = head_dim;
  c.hidden_size = heads * head_dim;
  c.dtype = DType::F16;
  c.layers.assign(layers, LayerInfo{});
  return c;
}
}  // namespace

TEST(TrtllmRules, BytesPerTokenQwen25_1_5B) {
  // Qwen2.5-1.5B fp16: 2 (K, V) x 2 KV heads x 128 x 2 B x 28 layers = 28,672 B/token; the log
  // "[MemUsageChange] Allocated 7.31 GiB for max tokens in paged KV cache (273792)":
  // 273,792 x 28,672 = 7,850,164,224 B = 7.31 GiB; 273,792 = 8,556 blocks of 32.
  trtllm::Settings s;
  s.kv_elem_bytes = 2;
  ModelConfig c = dense(28, 12, 2, 128);
  int64_t bpt = trtllm::bytes_per_token(c, s, 0);
  EXPECT_EQ(bpt, 28672);
  EXPECT_EQ(trtllm::blocks_for(7850164224LL, bpt, 32), 8556);
  EXPECT_EQ(gib2(273792LL * bpt), "7.31");
  // TP2 halves the heads; attention DP keeps them all.
  s.tp = 2;
  EXPECT_EQ(trtllm::bytes_per_token(c, s, 0), 14336);
  s.attention_dp = true;
  EXPECT_EQ(trtllm::bytes_per_token(c, s, 0), 28672);
}

TEST(TrtllmRules, BudgetIsFractionOfFreeAfterPeakThenCaps) {
  // (total - peak) x fraction: (80 - 20) GiB x 0.9 = 54 GiB; max_tokens 100,000 x 131,072 B = 12.2 GiB caps it;
  // max_gpu_total_bytes 10 GiB caps it further.
  int64_t total = 80 * GiB, peak = 20 * GiB;
  EXPECT_EQ(trtllm::kv_budget(total, peak, 0.9, std::nullopt, 131072, 0), static_cast<int64_t>(60.0 * GiB * 0.9));
  EXPECT_EQ(trtllm::kv_budget(total, peak, 0.9, 100000, 131072, 0), 100000LL * 131072);
  EXPECT_EQ(trtllm::kv_budget(total, peak, 0.9, 100000, 131072, 10 * GiB), 10 * GiB);
}

TEST(TrtllmRules, PipelineLayersFirstStagesTakeTheRemainder) {
  EXPECT_EQ(trtllm::pp_layers(61, 4, 0), std::make_pair(0, 16));
  EXPECT_EQ(trtllm::pp_layers(61, 4, 3), std::make_pair(46, 61));
}

TEST(TrtllmPlan, Qwen3_8BOnH100) {
  Forecast f = run({"--engine", "trtllm@1.2.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"});
  EXPECT_EQ(f.verdict, Verdict::Fits);
  EXPECT_EQ(f.kv_tokens % 32, 0);
  // Qwen3-8B bf16: 2 x 8 x 128 x 2 x 36 = 147,456 B/token.
  EXPECT_NE(std::find(f.notes.begin(), f.notes.end(),
                      "KV budget = (total - profiled peak) x free_gpu_memory_fraction 0.9 (default), min over ranks; 147456 B per token per rank"),
            f.notes.end());
  EXPECT_TRUE(has_prefix(f, "[TensorRT-LLM][INFO] [MemUsageChange] Allocated "));
  EXPECT_TRUE(has_prefix(f, "Peak memory during memory usage profiling (torch + non-torch): "));
  // The pool is about 0.9 x (79.19 GiB - weights 15.3 GiB - peak terms): between 300k and 420k tokens.
  EXPECT_GT(f.kv_tokens, 300000);
  EXPECT_LT(f.kv_tokens, 420000);
}

TEST(TrtllmPlan, ShrinksMaxSeqLenInsteadOfRefusing) {
  // --max_tokens 4096 holds fewer tokens than one 40,960-token sequence: TensorRT-LLM lowers
  // max_seq_len to the pool (4,096 = 128 blocks of 32) and starts.
  Forecast f = run({"--engine", "trtllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max_tokens", "4096"});
  EXPECT_EQ(f.verdict, Verdict::Fits);
  EXPECT_EQ(f.kv_tokens, 4096);
  EXPECT_EQ(f.context_len, 4096);
  EXPECT_TRUE(has_prefix(f, "Attention window size 40960 exceeds upper bound 4096 for available blocks. Reducing to 4096."));
  EXPECT_TRUE(has_prefix(f, "Adjusted max_seq_len to 4096"));
}

TEST(TrtllmPlan, MaxNumTokensIsCappedAtMaxSeqLenTimesMaxBatchSize) {
  // trtllm-build's check_max_num_tokens (tensorrt_llm/_utils.py) and the PyTorch backend's
  // _init_max_num_tokens: "max_num_tokens (8192) shouldn't be greater than max_seq_len *
  // max_batch_size (2048), specifying to max_seq_len * max_batch_size (2048)." xtrt-026's
  // Qwen2.5-7B INT4-AWQ engine (--max_batch_size 1 --max_seq_len 2048) logs 262 MB of activation
  // memory at build: the execution context for 2,048 tokens (32 x 3,584 x 2,048 B = 224 MiB), not
  // for the default 8,192 (896 MiB).
  const std::string cap = "max_num_tokens (8192) shouldn't be greater than max_seq_len * max_batch_size (2048), specifying to max_seq_len * max_batch_size (2048).";
  Forecast f = run({"--engine", "trtllm@1.2.1", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "l4", "--backend", "tensorrt", "--quantization",
                    "W4A16_AWQ", "--max_batch_size", "1", "--max_seq_len", "2048"});
  EXPECT_NE(std::find(f.notes.begin(), f.notes.end(), cap), f.notes.end());
  bool found = false;
  for (const auto& st : f.ranks.at(0).stages)
    for (const auto& it : st.items)
      if (it.what.rfind("execution context memory", 0) == 0) {
        found = true;
        EXPECT_EQ(it.bytes, 32 * 3584 * 2048);
      }
  EXPECT_TRUE(found);
  // A given count within the cap stands.
  f = run({"--engine", "trtllm@1.2.1", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "l4", "--max_batch_size", "4", "--max_seq_len", "2048",
           "--max_num_tokens", "8192"});
  EXPECT_EQ(std::count_if(f.notes.begin(), f.notes.end(), [](const std::string& n) { return n.rfind("max_num_tokens (", 0) == 0; }), 0);
}

TEST(TrtllmPlan, MaxSeqLenAboveTheModelsLimitIsCutNotRefused) {
  // tensorrt_llm/_torch/pyexecutor/model_engine.py _init_max_seq_len: Qwen3-8B's limit is its
  // max_position_embeddings 40,960 (rope_scaling none); --max_seq_len 131072 is cut to it with
  // "Specified self.max_seq_len=131072 is larger than what the model can support (40960)...".
  const std::string cut = "Specified self.max_seq_len=131072 is larger than what the model can support (40960). Setting max_seq_len to 40960.";
  Forecast f = run({"--engine", "trtllm@1.3.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max_seq_len", "131072"});
  EXPECT_EQ(f.context_len, 40960);
  EXPECT_NE(std::find(f.notes.begin(), f.notes.end(), cut), f.notes.end());
  // PR #10600 (2026-01): TLLM_ALLOW_LONG_MAX_MODEL_LEN=1 keeps the given value.
  f = run({"--engine", "trtllm@1.3.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max_seq_len", "131072", "--env",
           "TLLM_ALLOW_LONG_MAX_MODEL_LEN=yes"});
  EXPECT_EQ(f.context_len, 131072);
  // Before the clamp (1.0) and for a TensorRT engine built at that length, the value stands.
  EXPECT_EQ(run({"--engine", "trtllm@1.0.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max_seq_len", "131072"}).context_len, 131072);
  EXPECT_EQ(run({"--engine", "trtllm@1.3.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max_seq_len", "131072", "--backend", "tensorrt"})
                .context_len,
            131072);
  // The inferred limit scales by a rope_scaling factor unless the type is su/longrope/llama3/yarn:
  // Gemma-3-12B's text_config has {"factor": 8.0, "rope_type": "linear"} over 131,072 positions
  // -> 1,048,576; Llama-3.1-8B's llama3 factor 8 leaves 131,072.
  f = run({"--engine", "trtllm@1.3.0", "--model", "google/gemma-3-12b-it", "--gpu", "h200"});
  EXPECT_NE(std::find(f.notes.begin(), f.notes.end(), "max_seq_len is scaled to 1048576 by rope scaling 8"), f.notes.end());
  f = run({"--engine", "trtllm@1.3.0", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h200"});
  EXPECT_NE(std::find(f.notes.begin(), f.notes.end(), "max_seq_len is not specified, using inferred value 131072"), f.notes.end());
}

TEST(TrtllmPlan, FlagErrorsInTrtllmWords) {
  std::vector<std::string> base{"--engine", "trtllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"};
  auto with = [&](std::vector<std::string> extra) {
    auto v = base;
    v.insert(v.end(), extra.begin(), extra.end());
    return input_error(v);
  };
  EXPECT_NE(with({"--gpu-memory-utilization", "0.9"}).find("Error: No such option: --gpu-memory-utilization"), std::string::npos);
  EXPECT_NE(with({"--kv_cache_free_gpu_memory_fraction", "1.5"}).find("must be a float between 0 and 1"), std::string::npos);
  EXPECT_NE(with({"--kv_cache_free_gpu_memory_fraction", "1.0"}).find("must be smaller than 1.0f"), std::string::npos);
  EXPECT_NE(with({"--max_batch_size", "x"}).find("is not a valid integer"), std::string::npos);
}

TEST(TrtllmRules, CudaGraphBatchSizesAsCudaGraphConfigGeneratesThem) {
  // llm_args.py CudaGraphConfig._generate_cuda_graph_batch_sizes: enable_padding defaults to
  // False -> 1..31, 32, 64, 128 (34 sizes at the default max 128); padding -> [1, 2, 4, 8, 16, ..., 128]
  // (19, the list the 1.1.0rc3 gpt-oss log prints in PyTorchConfig(cuda_graph_batch_sizes=...)),
  // of which max_batch_size 64 keeps 11 ("Creating CUDA graph instances for 11 batch sizes.").
  trtllm::Settings s;
  EXPECT_EQ(trtllm::cuda_graph_batch_sizes(s).size(), 34u);
  s.cuda_graph_padding = true;
  EXPECT_EQ(trtllm::cuda_graph_batch_sizes(s).size(), 19u);
  s.max_batch_size = 64;
  auto v = trtllm::cuda_graph_batch_sizes(s);
  EXPECT_EQ(v.size(), 11u);
  EXPECT_EQ(v.back(), 64);
  // A max of 300 adds 256 (2^8 < 2^ceil(log2 300)) and 300 itself.
  s.max_batch_size = 2048;
  s.cuda_graph_padding = false;
  s.cuda_graph_max_batch_size = 300;
  v = trtllm::cuda_graph_batch_sizes(s);
  EXPECT_EQ(v.size(), 36u);
  EXPECT_EQ(v[v.size() - 2], 256);
  EXPECT_EQ(v.back(), 300);
}

TEST(TrtllmPlan, ServeAliasesAndFailFastWindow) {
  // serve.py (2026): --tensor_parallel_size is --tp_size's other spelling.
  Forecast a = run({"--engine", "trtllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--tensor_parallel_size", "2"});
  Forecast b = run({"--engine", "trtllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--tp_size", "2"});
  EXPECT_EQ(a.kv_tokens, b.kv_tokens);
  EXPECT_EQ(a.ranks.size(), 2u);
  // --fail_fast_on_attention_window_too_large turns the max_seq_len shrink into an exit.
  Forecast f = run({"--engine", "trtllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max_tokens", "4096", "--fail_fast_on_attention_window_too_large"});
  EXPECT_EQ(f.verdict, Verdict::Refused);
}
