// -md / --model-draft on the llama.cpp engine (draft_model.cpp): the draft's weights once, one draft
// context per slot (server.cpp), its own -ngld / -cd / -ctkd / -ctvd / --device-draft. KV sizes by
// hand from the draft's config (Qwen3-0.6B: 28 layers, 8 KV heads x 128).
#include <gtest/gtest.h>

#include "headroom/error.h"
#include "plan_test_util.h"

using namespace headroom;
using headroom::test::plus;
using headroom::test::run;

namespace {

constexpr int64_t MiB = 1 << 20;
// One f16 cell of Qwen3-0.6B: 28 layers x (K + V) x 8 heads x 128 x 2 B.
constexpr int64_t kDraftCellF16 = 28 * 2 * 8 * 128 * 2;

std::vector<std::string> target() {
  return {"--engine", "llamacpp@b6000", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--gpu", "rtx-4090", "-ngl", "99", "-c", "16384", "-np", "2"};
}

const DeviceMemory& gpu0(const Forecast& f) { return f.devices.front(); }

}  // namespace

TEST(LlamacppDraft, OneDraftContextPerSlotAtTheTargetsContextPerSequence) {
  const Forecast base = run(target());
  const Forecast f = run(plus(target(), {"-md", "Qwen/Qwen3-0.6B", "-ngld", "99"}));
  // 2 slots x 8,192 cells (16,384 / 2: server.cpp's n_ctx / n_parallel) x 114,688 B = 1,792 MiB.
  EXPECT_EQ(gpu0(f).kv_buffer_bytes - gpu0(base).kv_buffer_bytes, 2 * 8192 * kDraftCellF16);
  EXPECT_EQ(2 * 8192 * kDraftCellF16, 1792 * MiB);
  // The draft's weights are those of the same model planned alone in the same type.
  const Forecast alone = run({"--engine", "llamacpp@b6000", "--model", "Qwen/Qwen3-0.6B", "--quant", "Q4_K_M", "--gpu", "rtx-4090", "-ngl", "99"});
  EXPECT_EQ(gpu0(f).model_buffer_bytes - gpu0(base).model_buffer_bytes, gpu0(alone).model_buffer_bytes);
  EXPECT_GT(gpu0(f).compute_buffer_bytes, gpu0(base).compute_buffer_bytes);
  // Its contexts are allocated last, after the target's compute buffer.
  const RankForecast& r = f.ranks.front();
  ASSERT_GE(r.stages.size(), 2u);
  EXPECT_EQ(r.stages.back().id, StageId::DraftContexts);
  EXPECT_EQ(r.stages[r.stages.size() - 2].id, StageId::DraftModel);
}

TEST(LlamacppDraft, DraftContextSizeAndCacheTypes) {
  // -cd 4096: 2 slots x 4,096 cells.
  const Forecast base = run(target());
  const Forecast cd = run(plus(target(), {"-md", "Qwen/Qwen3-0.6B", "-ngld", "99", "-cd", "4096"}));
  EXPECT_EQ(gpu0(cd).kv_buffer_bytes - gpu0(base).kv_buffer_bytes, 2 * 4096 * kDraftCellF16);
  // -ctkd / -ctvd q8_0 (34 B per 32 values), flash attention on for the quantized V.
  const Forecast fa = run(plus(target(), {"-fa", "on"}));
  const Forecast q8 = run(plus(target(), {"-fa", "on", "-md", "Qwen/Qwen3-0.6B", "-ngld", "99", "-ctkd", "q8_0", "-ctvd", "q8_0"}));
  EXPECT_EQ(gpu0(q8).kv_buffer_bytes - gpu0(fa).kv_buffer_bytes, 2 * 8192 * (28 * 2 * 8 * 128 / 32 * 34));
}

TEST(LlamacppDraft, DeviceDraftPutsEveryDraftLayerOnThatGpu) {
  const auto two = std::vector<std::string>{"--engine", "llamacpp@b6000", "--model", "Qwen/Qwen3-8B", "--quant", "Q4_K_M",
                                            "--gpu", "rtx-4090,rtx-4090", "-ngl", "99", "-c", "8192", "-np", "1"};
  const Forecast base = run(two);
  const Forecast f = run(plus(two, {"-md", "Qwen/Qwen3-0.6B", "-ngld", "99", "--device-draft", "CUDA1"}));
  EXPECT_EQ(f.devices[0].model_buffer_bytes, base.devices[0].model_buffer_bytes);
  EXPECT_EQ(f.devices[0].kv_buffer_bytes, base.devices[0].kv_buffer_bytes);
  EXPECT_EQ(f.devices[1].kv_buffer_bytes - base.devices[1].kv_buffer_bytes, 8192 * kDraftCellF16);
  EXPECT_THROW(run(plus(two, {"-md", "Qwen/Qwen3-0.6B", "--device-draft", "CUDA2"})), InputError);
  EXPECT_THROW(run(plus(two, {"-md", "Qwen/Qwen3-0.6B", "--device-draft", "CUDA0,CUDA1"})), InputError);
  EXPECT_THROW(run(plus(two, {"-md", "Qwen/Qwen3-0.6B", "-cd", "lots"})), InputError);
}

TEST(LlamacppDraft, TooManySlotsFailWhereTheDraftContextsAreCreated) {
  // The target's 65,536 cells (7 GiB) fit a 24 GB card; 16 slots of 32,768 draft cells each
  // (16 x 32,768 x 114,688 B = 56 GiB) do not.
  const Forecast f = run({"--engine", "llamacpp@b6000", "--model", "Qwen/Qwen3-0.6B", "--quant", "Q4_K_M", "--gpu", "rtx-4090", "-ngl", "99",
                          "-c", "65536", "-np", "16", "-md", "Qwen/Qwen3-0.6B", "-ngld", "99", "--ctx-size-draft", "32768"});
  ASSERT_TRUE(f.failure.has_value());
  EXPECT_EQ(f.failure->stage, StageId::DraftContexts);
  EXPECT_NE(f.failure->message.find("failed to create draft context"), std::string::npos) << f.failure->message;
  EXPECT_GE(f.failure->request_bytes, 16 * 32768 * kDraftCellF16);  // the KV buffers of every slot, asked at once
}
