// The doctor's fix against the value the thread's resolution shows (issue 26, fix-range check): the
// value must lie between what the user ran and what worked. Two rules the check found wrong, each on
// its corpus log (tests/data/corpus/*.jsonl, `raw` as posted):
//  - vLLM V0's refusal prints the tokens its KV cache holds; the fix is that length, not a shorter
//    one from the forecast (vllm-021: 29000 failed, 20000 worked; the doctor said 18432), unless the
//    forecast runs out of memory in a later stage at it (DoctorVllm.ContextFixWhenAnotherStageIsAtRisk...);
//  - with the model known, a forecast that finds no fitting setting left no fix at all, where the
//    log's own arithmetic gives one (sglang-027: 0.88 refused, the minimum viable is 0.9113).
#include <gtest/gtest.h>

#include "headroom/cli.h"
#include "headroom/doctor.h"
#include "headroom/logscan.h"

using namespace headroom;

namespace {
std::string fix_value(const Diagnosis& d, const std::string& flag) {
  for (const auto& f : d.fixes)
    if (f.flag == flag) return f.value;
  return "";
}
}  // namespace

TEST(DoctorFixRange, VllmV0MaxLenFixIsTheCapacityItPrinted) {
  // vllm-project/vllm#10517 (corpus vllm-021): Llama-3.1-8B on an RTX 3090, --gpu-memory-utilization 0.9,
  // --max-model-len 29000 refused; 20000 started (the thread's resolution).
  const std::string log =
      "Loading model weights took 14.9888 GB\n"
      "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB "
      "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90\n"
      "# GPU blocks: 1478, # CPU blocks: 2048\n"
      "Maximum concurrency for 29000 tokens per request: 0.82x\n"
      "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648). Try "
      "increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n";
  Diagnosis d = diagnose(scan_log_text(log, "vllm-021.log"),
                         Args::parse({"--engine", "vllm@0.6.4", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory-utilization",
                                      "0.9", "--max-model-len", "29000", "--gpu", "rtx-3090", "--gpu-memory", "23.58GiB"}));
  EXPECT_EQ(d.cause, Cause::KvTooSmallForContext);
  // 1478 blocks x 16 tokens = 23648: V0's check passes at exactly that length; inside [20000, 29000).
  EXPECT_EQ(fix_value(d, "--max-model-len"), "23648");
}

TEST(DoctorFixRange, SglangRefusalKeepsTheLogsFixWhenTheForecastFindsNone) {
  // SemiAnalysisAI/InferenceX#2128 (corpus sglang-027): DeepSeek-V4-Pro FP8 on 8 H200, --mem-fraction-static 0.88
  // refused; SGLang put the minimum viable fraction at 0.9113. The forecast of this deployment finds no fitting
  // fraction (its weights differ from the log's), which used to leave no fix.
  const std::string log =
      "Load weight end. quant=fp8, fmt=e4m3, avail mem=12.25 GB, mem usage=125.65 GB.\n"
      "# non-MTP:\n"
      "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88.\n";
  Diagnosis d = diagnose(scan_log_text(log, "sglang-027.log"),
                         Args::parse({"--engine", "sglang", "--model", "deepseek-ai/DeepSeek-V4-Pro", "--gpu", "h200", "--tp-size", "8",
                                      "--mem-fraction-static", "0.88", "--quantization", "fp8"}));
  EXPECT_EQ(d.cause, Cause::StaticFractionTooLow);
  const std::string v = fix_value(d, "--mem-fraction-static");
  ASSERT_FALSE(v.empty());
  EXPECT_GT(std::stod(v), 0.9113);  // above what SGLang called the minimum, and raised from 0.88
  EXPECT_LE(std::stod(v), 0.98);
  EXPECT_NE(d.fixes.front().effect.find("the forecast of this deployment finds no setting that fits"), std::string::npos)
      << d.fixes.front().effect;
}
