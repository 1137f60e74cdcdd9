// headroom compare: one deployment under SGLang, vLLM and TensorRT-LLM, each engine's knob value
// for the reference engine's KV budget, and engines that cannot plan the model shown as such.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "headroom/cli.h"

using headroom::run_cli;

namespace {
int run(const std::vector<std::string>& argv, std::string& out, std::string& err) {
  std::ostringstream o, e;
  int rc = run_cli(argv, o, e);
  out = o.str();
  err = e.str();
  return rc;
}
}  // namespace

TEST(Compare, SameKvBudgetIsFoundForEachEngine) {
  std::string out, err;
  int rc = run({"compare", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--tp", "1", "--json"}, out, err);
  ASSERT_EQ(rc, 0) << err;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["reference"], "sglang");
  ASSERT_EQ(j["engines"].size(), 3u);
  const int64_t target = j["target_kv_tokens"].get<int64_t>();
  EXPECT_EQ(j["engines"][0]["kv_tokens"].get<int64_t>(), target);
  for (int i = 1; i < 3; ++i) {
    const auto& e = j["engines"][i];
    SCOPED_TRACE(e["engine"].get<std::string>());
    ASSERT_TRUE(e["same_kv_budget"].is_object());
    // The bisection stops at the smallest knob value (to 1e-4) whose pool holds the target:
    // at least the target, and within a few pages of it (Llama-3.1-8B bf16: 128 KiB/token,
    // 1e-4 of 79 GiB is ~63 tokens).
    const int64_t got = e["same_kv_budget"]["kv_tokens"].get<int64_t>();
    EXPECT_GE(got, target);
    EXPECT_LT(got - target, target / 100);
  }
}

TEST(Compare, AnEngineThatCannotPlanTheModelIsShownNotFatal) {
  // DeepSeek-V4: vLLM refuses it at --kv-cache-dtype auto (fp8 only), TensorRT-LLM is not modelled.
  std::string out, err;
  int rc = run({"compare", "--model", "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "h200", "--tp", "4", "--json"}, out, err);
  auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["engines"].size(), 3u);
  EXPECT_TRUE(j["engines"][0]["kv_tokens"].get<int64_t>() > 0);
  EXPECT_TRUE(j["engines"][1]["verdict"].is_null());
  EXPECT_NE(j["engines"][1]["unsupported"].get<std::string>().find("DeepSeek-V4"), std::string::npos);
  EXPECT_TRUE(j["engines"][2]["verdict"].is_null());
  EXPECT_TRUE(rc == 0 || rc == 1);
  // Alone, the engine that cannot plan it is bad input (exit 2, one line).
  rc = run({"compare", "--model", "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "h200", "--tp", "4", "--engines", "vllm"}, out, err);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("--model"), std::string::npos);
}

TEST(Compare, PlanWithSeveralEnginesIsTheCompareView) {
  // Issue 4 names `headroom plan --engine sglang,vllm ...` for the cross-engine view: the same
  // JSON as `compare --engines sglang,vllm` (reference: the first engine listed).
  std::string out, err, out2, err2;
  int rc = run({"plan", "--engine", "sglang,vllm", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--json"}, out, err);
  ASSERT_EQ(rc, 0) << err;
  int rc2 = run({"compare", "--engines", "sglang,vllm", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--json"}, out2, err2);
  ASSERT_EQ(rc2, 0) << err2;
  EXPECT_EQ(out, out2);
  auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["engines"].size(), 2u);
  EXPECT_EQ(j["engines"][1]["engine"], "vllm");
  // A single engine stays a plan (its own JSON has no "engines" list).
  rc = run({"plan", "--engine", "vllm", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--json"}, out, err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_FALSE(nlohmann::json::parse(out).contains("engines"));
}

TEST(Compare, AFlagOneEngineRefusesLeavesTheOthersCompared) {
  // --quantization fp8 on the bf16 Qwen3-8B: SGLang and vLLM quantize online; trtllm-serve's PyTorch
  // backend refuses it (it applies to TensorRT engines), shown as that engine's row, not fatal.
  std::string out, err;
  int rc = run({"compare", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--quantization", "fp8", "--json"}, out, err);
  ASSERT_TRUE(rc == 0 || rc == 1) << err;
  auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["engines"].size(), 3u);
  EXPECT_GT(j["engines"][0]["kv_tokens"].get<int64_t>(), 0);
  EXPECT_GT(j["engines"][1]["kv_tokens"].get<int64_t>(), 0);
  EXPECT_TRUE(j["engines"][2]["verdict"].is_null());
  EXPECT_EQ(j["engines"][2]["unsupported"].get<std::string>().rfind("--quantization ", 0), 0u);
  EXPECT_EQ(j["engines"][2]["refused"], true);
  // A flag no engine can take stays bad input.
  rc = run({"compare", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--engines", "trtllm", "--quantization", "fp8"}, out, err);
  EXPECT_EQ(rc, 2);
}

TEST(Compare, SettingsSpelledForOneEngineAreCarriedToTheOthers) {
  // vLLM's spellings of the context length, the request cap and an FP8 KV cache: SGLang runs them as
  // --context-length / --max-running-requests / --kv-cache-dtype fp8_e4m3 (SGLang has no bare "fp8"),
  // trtllm-serve as --max_seq_len / --max_batch_size / --kv_cache_dtype fp8, so every row plans a
  // 32,768-token context (it was SGLang's and TensorRT-LLM's 40,960 default beside vLLM's 32,768).
  std::string out, err;
  int rc = run({"compare", "--model", "Qwen/Qwen3-32B", "--gpu", "h100", "--tp", "2", "--max-model-len", "32768", "--max_num_seqs", "64",
                "--kv-cache-dtype", "fp8", "--json"},
               out, err);
  ASSERT_TRUE(rc == 0 || rc == 1) << err;
  auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["engines"].size(), 3u);
  for (const auto& e : j["engines"]) EXPECT_EQ(e["context_len"].get<int64_t>(), 32768) << e["engine"];
  EXPECT_EQ(j["engines"][0]["carried_flags"],
            nlohmann::json({"--max-model-len 32768 as --context-length 32768", "--max_num_seqs 64 as --max-running-requests 64",
                            "--kv-cache-dtype fp8 as --kv-cache-dtype fp8_e4m3"}));
  EXPECT_FALSE(j["engines"][1].contains("carried_flags"));
  EXPECT_EQ(j["engines"][2]["carried_flags"],
            nlohmann::json({"--max-model-len 32768 as --max_seq_len 32768", "--max_num_seqs 64 as --max_batch_size 64",
                            "--kv-cache-dtype fp8 as --kv_cache_dtype fp8"}));
  // The SGLang row is what SGLang's own spellings plan.
  std::string out2, err2;
  ASSERT_LE(run({"compare", "--engines", "sglang", "--model", "Qwen/Qwen3-32B", "--gpu", "h100", "--tp", "2", "--context-length", "32768",
                 "--max-running-requests", "64", "--kv-cache-dtype", "fp8_e4m3", "--json"},
                out2, err2),
            1)
      << err2;
  EXPECT_EQ(nlohmann::json::parse(out2)["engines"][0]["kv_tokens"], j["engines"][0]["kv_tokens"]);
  // An engine's own spelling on the line wins over a carried one.
  rc = run({"compare", "--model", "Qwen/Qwen3-32B", "--gpu", "h100", "--tp", "2", "--max-model-len", "32768", "--context-length", "16384", "--json"},
           out, err);
  ASSERT_TRUE(rc == 0 || rc == 1) << err;
  j = nlohmann::json::parse(out);
  EXPECT_EQ(j["engines"][0]["context_len"].get<int64_t>(), 16384);
  EXPECT_EQ(j["engines"][1]["context_len"].get<int64_t>(), 32768);
  EXPECT_EQ(j["engines"][2]["context_len"].get<int64_t>(), 32768);  // the first spelling on the line
  EXPECT_EQ(j["engines"][2]["carried_flags"], nlohmann::json({"--max-model-len 32768 as --max_seq_len 32768"}));
  // A carried value the engine refuses is that engine's row: Qwen3-8B's derived limit is 40,960 in
  // both SGLang and vLLM, so 131,072 is refused by each in its own words.
  rc = run({"compare", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-model-len", "131072", "--json"}, out, err);
  ASSERT_TRUE(rc == 0 || rc == 1) << err;
  j = nlohmann::json::parse(out);
  EXPECT_EQ(j["engines"][0]["refused"], true);
  EXPECT_EQ(j["engines"][0]["unsupported"].get<std::string>().rfind("--context-length ValueError: Warning: User-specified context_length (131072)", 0), 0u);
  EXPECT_EQ(j["engines"][1]["refused"], true);
  // TensorRT-LLM's PyTorch backend cuts it to the model's 40,960 and starts (model_engine.py
  // _init_max_seq_len).
  EXPECT_EQ(j["engines"][2]["context_len"].get<int64_t>(), 40960);
}

// llama.cpp joins the comparison when a GGUF type is given (issue 25 item 7): its KV cache is
// --ctx-size cells, so the same KV as the reference is a context of that many cells (padded to
// 256), and its weights are the GGUF's (Q4_K_M) while the others load the 16-bit checkpoint.
TEST(Compare, LlamacppJoinsWithAGgufTypeAndMatchesKvByContext) {
  std::string out, err;
  int rc = run({"compare", "--model", "Qwen/Qwen3-8B", "--gpu", "rtx-4090", "--quant", "Q4_K_M", "--context-length", "32768", "--json"}, out, err);
  ASSERT_LE(rc, 1) << err;
  auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["engines"].size(), 4u);
  const auto& l = j["engines"][3];
  EXPECT_EQ(l["engine"], "llamacpp");
  EXPECT_EQ(l["kv_tokens"], 32768);  // --context-length carried as --ctx-size
  EXPECT_EQ(l["knob"]["flag"], "--ctx-size");
  const int64_t target = j["target_kv_tokens"].get<int64_t>();
  EXPECT_EQ(l["same_kv_budget"]["value"].get<int64_t>(), target);
  EXPECT_EQ(l["same_kv_budget"]["kv_tokens"].get<int64_t>(), (target + 255) / 256 * 256);
  EXPECT_LT(l["weights_per_gpu_bytes"].get<int64_t>(), j["engines"][0]["weights_per_gpu_bytes"].get<int64_t>() / 3);
  // Without a GGUF type the default list stays the three serving engines.
  rc = run({"compare", "--model", "Qwen/Qwen3-8B", "--gpu", "rtx-4090", "--json"}, out, err);
  EXPECT_EQ(nlohmann::json::parse(out)["engines"].size(), 3u);
}
