// The doctor's fix from the log's own figures (issue 26): the seed log alone, the seed with its
// model (the fraction inferred from the log and the forecast confirming the fix), an SGLang
// runtime activation OOM, the user's own command with the fix, and the log's version winning
// over a bare --engine.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "headroom/cli.h"
#include "headroom/doctor.h"
#include "headroom/logscan.h"

using namespace headroom;

namespace {

const std::string kSeedLog = std::string(HEADROOM_TEST_DATA) + "/seed/seed-crash.log";

std::string fix_value(const Diagnosis& d, const std::string& flag) {
  for (const auto& f : d.fixes)
    if (f.flag == flag) return f.value;
  return "";
}

bool any_contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x.find(s) != std::string::npos) return true;
  return false;
}

// An SGLang start on one H100 (79.19 GiB) at --mem-fraction-static 0.95 that serves, then dies on
// an 800 MiB prefill activation. Line formats as SGLang 0.4.x-0.5.x prints them (model_runner.py,
// scheduler.py; corpus sglang-001 for the memory lines). The figures: P = 78.34 GB at start,
// 47.63 GB after weights; KV = 47.63 - 78.34 x 0.05 = 43.71 GB, 196,608 B per token (48 layers x
// 8 KV heads x 128 x 2 x bf16: Qwen2.5-14B) = 238,735 tokens.
const char* kRuntimeOom = R"(
[2025-06-01 10:00:00 TP0] Init torch distributed ends. mem usage=0.85 GB
[2025-06-01 10:00:01 TP0] Load weight begin. avail mem=78.34 GB
[2025-06-01 10:00:30 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=47.63 GB, mem usage=30.71 GB.
[2025-06-01 10:00:31 TP0] KV Cache is allocated. #tokens: 238735, K size: 21.86 GB, V size: 21.86 GB
[2025-06-01 10:00:31 TP0] Memory pool end. avail mem=3.41 GB
[2025-06-01 10:00:31 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=3.38 GB
[2025-06-01 10:00:50 TP0] Capture cuda graph end. Time elapsed: 19.01 s. mem usage=1.05 GB. avail mem=2.33 GB.
[2025-06-01 10:00:51 TP0] max_total_num_tokens=238735, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=32768, available_gpu_mem=2.33 GB
[2025-06-01 10:00:52] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)
[2025-06-01 10:00:53] The server is fired up and ready to roll!
[2025-06-01 10:05:00 TP0] Prefill batch. #new-seq: 3, #new-token: 8192, #cached-token: 0, token usage: 0.41, #running-req: 61, #queue-req: 12
[2025-06-01 10:05:00 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2400, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 690, in event_loop_overlap
    result = self.run_batch(batch)
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 1100, in forward_extend
    return self.model.forward(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 800.00 MiB. GPU 0 has a total capacity of 79.19 GiB of which 211.81 MiB is free. Process 4121 has 78.97 GiB memory in use. Of the allocated memory 77.50 GiB is allocated by PyTorch, and 120.45 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
)";

}  // namespace

// The seed log alone (three lines, no model, no fraction): the fraction is implied by the OOM
// report, (87.43 allocated - 0.72 capture took) / (94.97 - 0.85 outside PyTorch) = 0.921, and the
// fix frees the capture's 0.44 GiB shortfall (694 MiB asked, 247.44 MiB free) plus a 1 GiB margin:
// 0.921 - 1.44 / 94.12 = 0.906 -> 0.90.
TEST(DoctorLogFix, SeedLogAloneGivesTheFractionFromItsOwnFigures) {
  Diagnosis d = diagnose(scan_log_file(kSeedLog), Args::parse({}));
  EXPECT_EQ(d.stage, "cuda_graph");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes.front().flag, "--mem-fraction-static");
  EXPECT_EQ(d.fixes.front().value, "0.90");
  EXPECT_TRUE(any_contains(d.arithmetic, "0.921 is implied")) << d.arithmetic.front();
  EXPECT_TRUE(any_contains(d.arithmetic, "0.44 GiB short"));
  EXPECT_EQ(fix_value(d, "--cuda-graph-max-bs"), "4");  // the log captured [1, 2, 4, 8]
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"doctor", kSeedLog}, out, err), kExitFails);
}

// With the fraction given (the seed README: 0.95), the same arithmetic from it: 0.95 - 1.44 / 94.12
// = 0.9347 -> 0.93.
TEST(DoctorLogFix, SeedLogWithTheLaunchFraction) {
  Diagnosis d = diagnose(scan_log_file(kSeedLog), Args::parse({"--mem-fraction-static", "0.95"}));
  EXPECT_EQ(fix_value(d, "--mem-fraction-static"), "0.93");
  EXPECT_FALSE(any_contains(d.arithmetic, "is implied"));
}

// With the model and GPUs but no fraction, the fraction is the one whose forecast has the 0.96 GB
// the log printed at capture begin (the forecast gives 1.05 GB at 0.95, so just above 0.95), and
// the forecast's fix agrees with the log's arithmetic above.
TEST(DoctorLogFix, SeedWithModelInfersTheFractionAndConfirmsTheFix) {
  Diagnosis d = diagnose(scan_log_file(kSeedLog), Args::parse({"--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8"}));
  EXPECT_EQ(d.stage, "cuda_graph");
  ASSERT_TRUE(any_contains(d.gaps, "--mem-fraction-static is not in the log: 0.95"));
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes.front().flag, "--mem-fraction-static");
  // The same 0.90 the log alone gives (SeedLogAloneGivesTheFractionFromItsOwnFigures).
  EXPECT_DOUBLE_EQ(std::stod(d.fixes.front().value), 0.90);
  ASSERT_TRUE(d.forecast_after_fix.has_value());
  EXPECT_EQ(d.forecast_after_fix->verdict, Verdict::Fits);
  EXPECT_TRUE(any_contains(d.arithmetic, "from the log's figures alone"));
}

// The runtime activation OOM with no model: the fraction implied by SGLang's own sizing is
// 1 - (47.63 - 43.72) / 78.34 = 0.950; the fix frees 588 MiB short + 1 GiB: 0.950 - 1.574 / 78.34
// = 0.930 -> 0.92 (rounded down), freeing 2.35 GB = 12.8k of 238,735 tokens (5.4%). The chunk that
// fits: 8192 x 211.81 / 800 = 2169 -> 2048.
TEST(DoctorLogFix, RuntimeActivationOomKeepsTheKvCacheAndOffersTheChunk) {
  Diagnosis d = diagnose(scan_log_text(kRuntimeOom, "runtime-oom.log"), Args::parse({}));
  EXPECT_EQ(d.stage, "runtime");
  EXPECT_EQ(d.cause, Cause::ActivationPeak);
  const std::string frac = fix_value(d, "--mem-fraction-static");
  ASSERT_FALSE(frac.empty());
  EXPECT_EQ(frac, "0.92");
  // At least 90% of the logged KV tokens stay: 43.72 GB of KV, the fix takes (0.950 - 0.92) x 78.34.
  const double kept = 1.0 - (0.9501 - std::stod(frac)) * 78.34 / 43.72;
  EXPECT_GE(kept, 0.90);
  EXPECT_EQ(fix_value(d, "--chunked-prefill-size"), "2048");
  EXPECT_EQ(d.fixes.front().flag, "--mem-fraction-static");  // costs under 10% of the KV cache: first
  EXPECT_TRUE(any_contains(d.arithmetic, "8192 x"));
}

// The command of a fix is the user's launch line plus the fix: values of SGLang's server_args
// dump appear only where they differ from the engine's default.
TEST(DoctorLogFix, CommandIsTheUsersOwnPlusTheFix) {
  const std::string log = std::string(R"(python -m sglang.launch_server --model-path Qwen/Qwen2.5-14B-Instruct --mem-fraction-static 0.95
[2025-06-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen2.5-14B-Instruct', tokenizer_mode='auto', device='cuda', random_seed=42, tp_size=1, mem_fraction_static=0.95, chunked_prefill_size=8192, cuda_graph_max_bs=160, context_length=None)
)") + (kRuntimeOom + 1);
  Diagnosis d = diagnose(scan_log_text(log, "runtime-oom-with-args.log"), Args::parse({"--gpu", "h100"}));
  ASSERT_FALSE(d.command.empty());
  EXPECT_NE(d.command.find("--model-path Qwen/Qwen2.5-14B-Instruct"), std::string::npos) << d.command;
  EXPECT_EQ(d.command.find("--random-seed"), std::string::npos) << d.command;
  EXPECT_EQ(d.command.find("--tokenizer-mode"), std::string::npos) << d.command;
  EXPECT_EQ(d.command.find("--device"), std::string::npos) << d.command;
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_NE(d.command.find(d.fixes.front().flag + " " + d.fixes.front().value), std::string::npos) << d.command;
}

// A bare --engine names the engine; the version the log prints stays.
TEST(DoctorLogFix, LogVersionWinsOverABareEngine) {
  const std::string log = "[2025-06-01 10:00:00] sglang version: 0.4.6.post5\n" + std::string(kRuntimeOom + 1);
  Diagnosis d = diagnose(scan_log_text(log, "v.log"), Args::parse({"--engine", "sglang"}));
  EXPECT_TRUE(any_contains(d.gaps, "the log's version")) << (d.gaps.empty() ? "" : d.gaps.front());
}
