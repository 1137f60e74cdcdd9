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
  // 16 uncovered: 13 models not in the catalog (offline), 2 without a quant, 1 with -ot not posted.
  EXPECT_EQ(j["covered"], 12);
  EXPECT_EQ(j["model_buffer_mib"]["n"], 7);
  EXPECT_DOUBLE_EQ(j["model_buffer_mib"]["median_abs_pct_err"].get<double>(), 1.19);
  EXPECT_EQ(j["kv_size_mib"]["n"], 4);
  EXPECT_DOUBLE_EQ(j["kv_size_mib"]["median_abs_pct_err"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["kv_size_mib"]["p90_abs_pct_err"].get<double>(), 0.0);
  EXPECT_EQ(j["compute_buffer_mib"]["n"], 5);
  EXPECT_DOUBLE_EQ(j["compute_buffer_mib"]["median_abs_pct_err"].get<double>(), 0.01);
  EXPECT_EQ(j["outcome"]["n"], 7);
  // 4 of 7: -002 (the log's fit shrank a context the record gives as set; then a compute-buffer
  // failure the author puts on fragmentation), -004 (weights left on the GPU by -cmoe), -024 (a
  // runtime failure at the first request) are missed.
  EXPECT_DOUBLE_EQ(j["outcome"]["agreement"].get<double>(), 0.571);
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
  // Uncovered cases say why.
  EXPECT_EQ(test::case_row(j, "llamacpp-008")["reason"], "quantization type unknown (the GGUF's mix sets every buffer)");
}
