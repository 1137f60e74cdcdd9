// validate on the llama.cpp corpus (tests/data/corpus/llamacpp.jsonl, a copy of
// ../shared/corpus/llamacpp.jsonl): the figures the README reports, pinned, and the rows of the
// cases whose buffers the plan reproduces from the log's own numbers.
#include <gtest/gtest.h>

#include "headroom/validate.h"
#include "validate_test_util.h"

using namespace headroom;

namespace {
const nlohmann::ordered_json& corpus() {
  static const nlohmann::ordered_json j = validate_corpus(std::string(HEADROOM_TEST_DATA) + "/corpus/llamacpp.jsonl");
  return j;
}
}  // namespace

TEST(LlamacppValidate, Figures) {
  const auto& j = corpus();
  EXPECT_EQ(j["cases"], 28);
  // 15 uncovered: 12 models not in the catalog (offline), 2 without a quant, 1 with -ot not posted.
  // llamacpp-006 joined when microsoft/Phi-4-mini-instruct's config joined the catalog (its two
  // Vulkan model buffers are 2 more model_buffer_mib rows, both within 0.3%: the median moved from
  // 1.19% to 0.21%, p90 from 43.43% to 30.36%; its KV 256 MiB is exact).
  EXPECT_EQ(j["covered"], 13);
  EXPECT_EQ(j["model_buffer_mib"]["n"], 9);
  // With each GPU's free memory at start read from the log (host state, as --host-state gives it),
  // llamacpp-010's default split follows the 9862 / 31518 MiB llama.cpp saw: 0.21% -> 0.09%, p90
  // 30.36% -> 1.29%.
  EXPECT_DOUBLE_EQ(j["model_buffer_mib"]["median_abs_pct_err"].get<double>(), 0.09);
  EXPECT_DOUBLE_EQ(j["model_buffer_mib"]["p90_abs_pct_err"].get<double>(), 1.29);
  EXPECT_EQ(j["kv_size_mib"]["n"], 5);
  EXPECT_DOUBLE_EQ(j["kv_size_mib"]["median_abs_pct_err"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["kv_size_mib"]["p90_abs_pct_err"].get<double>(), 0.0);
  EXPECT_EQ(j["compute_buffer_mib"]["n"], 5);
  EXPECT_DOUBLE_EQ(j["compute_buffer_mib"]["median_abs_pct_err"].get<double>(), 0.01);
  // llamacpp-001 (Radeon 8060S, Vulkan) joined when its row joined the GPU catalog: its 113909 MiB
  // make the outcome comparable, and the plan fits as the log did (4 of 8 -> 5 of 9).
  EXPECT_EQ(j["outcome"]["n"], 9);
  // 4 of 9: -002 (the log's fit shrank a context the record gives as set; then a compute-buffer
  // failure the author puts on fragmentation), -004 (weights left on the GPU by -cmoe), -024 (a
  // runtime failure at the first request) and -006 (llama.cpp's own fit dry run also said it fits,
  // from the same 3169 MiB free per card the plan now reads from the log; Vulkan refused a 397 MiB
  // buffer with ~1.6 GiB left) are missed.
  EXPECT_DOUBLE_EQ(j["outcome"]["agreement"].get<double>(), 0.556);
}

TEST(LlamacppValidate, Rows) {
  const auto& j = corpus();
  // llamacpp-002 (RamaLama, Qwen2.5-32B Q4_K_M from the Ollama registry): "ROCm0 model buffer size = 18,508.35 MiB".
  const auto& r2 = test::case_row(j, "llamacpp-002");
  EXPECT_DOUBLE_EQ(r2["compare"]["model_buffer_mib"][0][0].get<double>(), 18508.35);
  // llamacpp-027 (~b2200, Llama-2-7B Q4_K_M): 3820.94 MiB weights, 1024 MiB KV, 164.01 MiB compute.
  const auto& r27 = test::case_row(j, "llamacpp-027");
  EXPECT_DOUBLE_EQ(r27["compare"]["model_buffer_mib"][0][0].get<double>(), 3820.94);
  EXPECT_DOUBLE_EQ(r27["compare"]["kv_size_mib"][0].get<double>(), 1024.0);
  EXPECT_DOUBLE_EQ(r27["compare"]["compute_buffer_mib"][0][0].get<double>(), 164.0);
  EXPECT_EQ(r27["skipped"][0], "outcome: the GPU's capacity is not known");
  // llamacpp-015 (LM Studio, gpt-oss-120b): its full-size SWA cache, 144 + 144 MiB.
  const auto& r15 = test::case_row(j, "llamacpp-015");
  EXPECT_DOUBLE_EQ(r15["compare"]["kv_size_mib"][0].get<double>(), 288.0);
  // llamacpp-003: the 72B weights do not fit a 19.98 GiB card, where llama.cpp failed.
  EXPECT_EQ(test::case_row(j, "llamacpp-003")["predicted"]["outcome"], "oom_weights");
  // llamacpp-006 (Docker Model Runner, Phi-4-mini Q4_K_M on RX 580 + RX 560): the corpus' "--fit":
  // "on (default)" reads as --fit on; Vulkan0/Vulkan1 model buffers 999.77 / 1368.79 MiB, KV 256 MiB.
  const auto& r6 = test::case_row(j, "llamacpp-006");
  EXPECT_EQ(r6["predicted"]["outcome"], "ok");
  EXPECT_EQ(r6["compare"]["model_buffer_mib"].size(), 2u);
  EXPECT_NEAR(r6["compare"]["model_buffer_mib"][0][0].get<double>(), 999.77, 2.0);
  EXPECT_NEAR(r6["compare"]["model_buffer_mib"][1][0].get<double>(), 1368.79, 4.0);
  EXPECT_DOUBLE_EQ(r6["compare"]["kv_size_mib"][0].get<double>(), 256.0);
  // llamacpp-010 (RTX 4090 + RTX 5090, experts on the host): "using device CUDA0 (...) - 9862 MiB
  // free", CUDA1 31518 MiB free; the default split by free memory puts 12 of 48 layers on CUDA0
  // (KV 384 / 1152 MiB), model buffers 135.76 / 648.66 MiB as logged (247.95 / 536.47 by capacity).
  const auto& r10 = test::case_row(j, "llamacpp-010");
  EXPECT_EQ(r10["host_state"], "free memory at start from the log");
  EXPECT_NEAR(r10["compare"]["model_buffer_mib"][0][0].get<double>(), 135.76, 0.01);
  EXPECT_NEAR(r10["compare"]["model_buffer_mib"][1][0].get<double>(), 648.66, 0.01);
  // Uncovered cases say why.
  EXPECT_EQ(test::case_row(j, "llamacpp-008")["reason"], "quantization type unknown (the GGUF's mix sets every buffer)");
}
