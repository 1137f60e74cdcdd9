// headroom tune: the seed deployment (tests/data/seed/README.md), the bisection's edge, the
// margin, --keep-free, --fix, targets, and bad or contradictory input (exit 2).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "headroom/engine.h"
#include "headroom/advise.h"
#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/error.h"
#include "headroom/units.h"

using namespace headroom;

namespace {

Deployment dep(std::vector<std::string> argv) { return parse_deployment(Args::parse(argv)); }

const std::vector<std::string> kSeed{"--engine", "sglang", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "rtx-pro-6000", "--tp", "8"};

std::string flag_value(const FlagList& flags, const std::string& k) {
  for (const auto& [f, v] : flags)
    if (f == k) return v;
  return "";
}

int cli(std::vector<std::string> argv, std::string* out_text = nullptr, std::string* err_text = nullptr) {
  std::ostringstream out, err;
  int rc = run_cli(argv, out, err);
  if (out_text) *out_text = out.str();
  if (err_text) *err_text = err.str();
  return rc;
}

std::vector<std::string> plus(std::vector<std::string> a, std::vector<std::string> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST(AdviseTune, SeedRecommendsAFractionThatFits) {
  // The seed: 0.95 crashed in CUDA-graph capture, 0.88 served (tests/data/seed/README.md).
  TuneResult r = tune(dep(kSeed), TuneGoal{});
  ASSERT_TRUE(r.feasible) << r.reason;
  ASSERT_FALSE(r.recommended.empty());
  EXPECT_EQ(r.recommended.front().first, "--mem-fraction-static");
  double f = std::stod(r.recommended.front().second);
  EXPECT_GE(f, 0.85);
  EXPECT_LE(f, 0.91);
  EXPECT_EQ(r.forecast.verdict, Verdict::Fits);
  EXPECT_GT(r.kv_tokens, 0);
  EXPECT_EQ(r.kv_tokens, r.forecast.kv_tokens);
  EXPECT_GE(r.min_free_worst, kDefaultMarginBytes);
  EXPECT_EQ(r.launch_command.rfind("python -m sglang.launch_server --model-path nvidia/GLM-5-NVFP4 --tp-size 8", 0), 0u) << r.launch_command;
  EXPECT_NE(r.launch_command.find("--mem-fraction-static " + r.recommended.front().second), std::string::npos);
}

TEST(AdviseTune, SeedTradeoffsBracketTheEdge) {
  TuneResult r = tune(dep(plus(kSeed, {"--mem-fraction-static", "0.95"})), TuneGoal{});
  ASSERT_TRUE(r.feasible);
  const std::string rec = r.recommended.front().second;
  bool saw_rec = false, saw_given = false, saw_default = false;
  for (size_t i = 0; i < r.tradeoffs.size(); ++i) {
    const auto& t = r.tradeoffs[i];
    if (t.label.find("recommended") != std::string::npos) {
      saw_rec = true;
      EXPECT_EQ(t.value, rec);
      EXPECT_TRUE(t.safe);
      // The next grid value up is not safe: the bisection found the edge.
      ASSERT_LT(i + 1, r.tradeoffs.size());
      EXPECT_FALSE(r.tradeoffs[i + 1].safe) << r.tradeoffs[i + 1].value;
    }
    if (t.label.find("as given") != std::string::npos) {
      saw_given = true;
      EXPECT_EQ(t.value, "0.95");
      EXPECT_FALSE(t.safe);  // the seed crash
    }
    if (t.label.find("engine default") != std::string::npos) saw_default = true;
    if (i > 0) {
      EXPECT_GE(t.kv_tokens, r.tradeoffs[i - 1].kv_tokens) << "KV grows with the fraction";
      EXPECT_LE(t.min_free_worst, r.tradeoffs[i - 1].min_free_worst) << "free memory shrinks with the fraction";
    }
  }
  EXPECT_TRUE(saw_rec);
  EXPECT_TRUE(saw_given);
  EXPECT_TRUE(saw_default);
  // The launch replaces the user's 0.95 by the recommendation.
  EXPECT_EQ(r.launch_command.find("0.95"), std::string::npos) << r.launch_command;
}

TEST(AdviseTune, LargerMarginLowersTheFraction) {
  TuneGoal g;
  g.margin_bytes = 4 * GiB;
  TuneResult wide = tune(dep(kSeed), g);
  TuneResult base = tune(dep(kSeed), TuneGoal{});
  ASSERT_TRUE(wide.feasible);
  EXPECT_LT(std::stod(wide.recommended.front().second), std::stod(base.recommended.front().second));
  EXPECT_GE(wide.min_free_worst, 4 * GiB);
  EXPECT_FALSE(wide.margin_default);
}

TEST(AdviseTune, KeepFreeLeavesTheMemory) {
  // 8 GiB kept for another process lowers both P (free before weights) and A (after), so at
  // one fraction f SGLang's rest = A - P(1 - f) drops by 8 f GiB; tune may also step f down
  // (each 0.01 of P ~ 94 GiB is 0.94 GiB). With the 61,464 B cell (GLM-5 FP8 MLA + indexer,
  // sglang_kv_test): at least 8 x 0.85 GiB / 61,464 = 118,794 tokens, at most
  // (8 + 3 x 0.94) GiB / 61,464 = 189,180 tokens fewer.
  TuneGoal g;
  g.keep_free_bytes = 8 * GiB;
  TuneResult kept = tune(dep(kSeed), g);
  TuneResult base = tune(dep(kSeed), TuneGoal{});
  ASSERT_TRUE(kept.feasible);
  EXPECT_LT(kept.kv_tokens, base.kv_tokens);
  EXPECT_GE(base.kv_tokens - kept.kv_tokens, 118794);
  EXPECT_LE(base.kv_tokens - kept.kv_tokens, 189180);
  EXPECT_EQ(kept.deployment.capacity_bytes, dep(kSeed).capacity_bytes - 8 * GiB);
}

TEST(AdviseTune, TargetContextSetsTheFlagAndConcurrencyIsChecked) {
  TuneGoal g;
  g.target_context = 131072;
  g.target_concurrency = 2;
  TuneResult r = tune(dep(kSeed), g);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(flag_value(r.recommended, "--context-length"), "131072");
  EXPECT_EQ(r.context_len, 131072);
  EXPECT_GE(r.kv_tokens, 2 * 131072);
  EXPECT_NE(r.launch_command.find("--context-length 131072"), std::string::npos);

  g.target_concurrency = 100;  // 13.1M tokens: far beyond 8 x 95 GiB
  TuneResult no = tune(dep(kSeed), g);
  EXPECT_FALSE(no.feasible);
  EXPECT_NE(no.reason.find("KV holds only"), std::string::npos) << no.reason;
}

TEST(AdviseTune, FixedPrimaryIsJudgedNotMoved) {
  TuneGoal g;
  g.fixed = {"--mem-fraction-static"};
  TuneResult r = tune(dep(plus(kSeed, {"--mem-fraction-static", "0.95"})), g);
  EXPECT_FALSE(r.feasible);  // the seed crash, kept as given
  EXPECT_EQ(flag_value(r.recommended, "--mem-fraction-static"), "0.95");
}

TEST(AdviseTune, VllmDenseOnH100) {
  // Llama-3.1-70B BF16 = 2 B x 70.55B params = 131.4 GiB; TP 4 -> 32.9 GiB per H100 (79.19 GiB).
  TuneResult r = tune(dep({"--engine", "vllm", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--tp", "4"}), TuneGoal{});
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(r.primary_knob, "--gpu-memory-utilization");
  double u = std::stod(r.recommended.front().second);
  EXPECT_GT(u, 0.5);
  EXPECT_LE(u, 0.99);
  EXPECT_EQ(r.forecast.verdict, Verdict::Fits);
  EXPECT_EQ(r.launch_command.rfind("vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --gpu-memory-utilization", 0), 0u)
      << r.launch_command;
}

TEST(AdviseTune, CliExitCodes) {
  std::string out, err;
  EXPECT_EQ(cli(plus({"tune"}, kSeed), &out), kExitOk);
  EXPECT_NE(out.find("recommended: --mem-fraction-static"), std::string::npos) << out;
  EXPECT_NE(out.find("python -m sglang.launch_server"), std::string::npos);
  EXPECT_EQ(cli(plus(plus({"tune"}, kSeed), {"--json"}), &out), kExitOk);
  auto j = nlohmann::json::parse(out);
  EXPECT_TRUE(j.contains("recommended"));
  EXPECT_TRUE(j.contains("forecast"));
  EXPECT_TRUE(j.contains("tradeoffs"));
  EXPECT_EQ(j["forecast"]["verdict"], "fits");
  // No feasible setting: exit 1.
  EXPECT_EQ(cli(plus(plus({"tune"}, kSeed), {"--mem-fraction-static", "0.95", "--fix", "mem-fraction-static"})), kExitFails);
  // Bad or contradictory input: exit 2, one line.
  EXPECT_EQ(cli(plus(plus({"tune"}, kSeed), {"--target-context", "1000000"}), nullptr, &err), kExitBadInput);  // GLM-5: 202,752 max
  EXPECT_NE(err.find("context"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);
  EXPECT_EQ(cli({"tune", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "voodoo-5"}, nullptr, &err), kExitBadInput);
  EXPECT_EQ(cli({"tune", "--model", "nvidia/GLM-5-NVFP4", "--gpu", "h200", "--gpus", "0"}, nullptr, &err), kExitBadInput);
  EXPECT_EQ(cli(plus(plus({"tune"}, kSeed), {"--context-length", "8192", "--fix", "context-length", "--target-context", "131072"}), nullptr, &err),
            kExitBadInput);
  EXPECT_NE(err.find("contradicts"), std::string::npos) << err;
  EXPECT_EQ(cli(plus(plus({"tune"}, kSeed), {"--fix", "no-such-flag"}), nullptr, &err), kExitBadInput);
  EXPECT_EQ(cli(plus(plus({"tune"}, kSeed), {"--keep-free", "200GiB"}), nullptr, &err), kExitBadInput);
  EXPECT_EQ(cli(plus(plus({"tune"}, kSeed), {"--target-concurrency", "0"}), nullptr, &err), kExitBadInput);
}

TEST(AdviseTune, ContradictoryTargetsEveryEngine) {
  // One clear line on stderr and exit 2, for each engine model: a context beyond the model's
  // (Llama-3.1-70B: max_position_embeddings 131,072), zero GPUs, a GPU not in the catalog, and
  // absurd values (zero concurrency, a tensor-parallel size that does not divide the 64 heads).
  for (const char* engine : {"sglang", "vllm", "trtllm"}) {
    SCOPED_TRACE(engine);
    const std::vector<std::string> base{"tune", "--engine", engine, "--model", "meta-llama/Llama-3.1-70B-Instruct"};
    for (const auto& extra : std::vector<std::vector<std::string>>{{"--gpu", "h100", "--tp", "4", "--target-context", "262144"},
                                                                   {"--gpu", "h100", "--gpus", "0"},
                                                                   {"--gpu", "voodoo-5", "--tp", "4"},
                                                                   {"--gpu", "h100", "--tp", "4", "--target-concurrency", "0"},
                                                                   {"--gpu", "h100", "--tp", "4", "--target-context", "-1"},
                                                                   {"--gpu", "h100", "--tp", "3"},
                                                                   {"--gpu", "h100", "--tp", "4", "--keep-free", "80GiB"}}) {
      std::string err;
      EXPECT_EQ(cli(plus(base, extra), nullptr, &err), kExitBadInput) << extra.back();
      EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    }
    std::string err;
    cli(plus(base, {"--gpu", "h100", "--tp", "4", "--target-context", "262144"}), nullptr, &err);
    // Llama-3.1's llama3 rope block leaves every engine's limit at max_position_embeddings.
    const std::string rule = std::string(engine) == "vllm"     ? "vLLM's derived max_model_len (config/model.py _get_and_verify_max_len)"
                             : std::string(engine) == "sglang" ? "SGLang's derived context_length (configs/model_config.py get_context_length)"
                                                               : "TensorRT-LLM's inferred max_seq_len (_torch/pyexecutor/model_engine.py _infer_max_seq_len_from_config)";
    EXPECT_NE(err.find("262144 is longer than meta-llama/Llama-3.1-70B-Instruct supports (" + rule + " 131072)"), std::string::npos) << err;
  }
}

TEST(AdviseTune, TargetContextIsCheckedAgainstTheEnginesDerivedLimit) {
  // Qwen's long-context recipe: max_position_embeddings 32768 + rope_scaling {yarn, factor 4,
  // original 32768}. vLLM derives 32768 x 4 = 131072 (config/model.py: YaRN scales the original
  // length); SGLang keeps 32768 (get_context_length: a block naming the original length is not
  // multiplied). So a 131072 target is a goal for vLLM and a contradiction for SGLang, until
  // SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN lifts it.
  auto dir = std::filesystem::temp_directory_path() / "headroom_tune_yarn_test";
  std::filesystem::create_directories(dir);
  const std::string cfg = (dir / "config.json").string();
  std::ofstream(cfg) << R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "torch_dtype": "bfloat16",
    "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
    "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768, "tie_word_embeddings": false,
    "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}})";
  TuneGoal g;
  g.target_context = 131072;
  TuneResult v = tune(dep({"--engine", "vllm", "--model", cfg, "--gpu", "h100"}), g);
  EXPECT_EQ(v.context_len, 131072);
  std::string err;
  EXPECT_EQ(cli({"tune", "--engine", "sglang", "--model", cfg, "--gpu", "h100", "--target-context", "131072"}, nullptr, &err), kExitBadInput);
  EXPECT_NE(err.find("131072 is longer than " + cfg + " supports (SGLang's derived context_length (configs/model_config.py get_context_length) 32768)"),
            std::string::npos)
      << err;
  TuneResult s = tune(dep({"--engine", "sglang", "--model", cfg, "--gpu", "h100", "--env", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"}), g);
  EXPECT_EQ(s.context_len, 131072);
}

TEST(AdviseTune, TrtllmTargetContextIsTheLengthThePyTorchBackendCutsTo) {
  // Gemma-3-27B: max_position_embeddings 131,072 with rope_scaling {linear, factor 8}. TensorRT-LLM's
  // _infer_max_seq_len_from_config scales by any factor but su/longrope/llama3/yarn: 131,072 x 8 =
  // 1,048,576, the length the PyTorch backend (1.1+) cuts a longer --max_seq_len to. A TensorRT
  // engine, a 1.0 release, or TLLM_ALLOW_LONG_MAX_MODEL_LEN=1 on 1.3 keep any length: no limit.
  auto lim = [](std::vector<std::string> extra) {
    return context_limit(dep(plus({"--engine", "trtllm", "--model", "google/gemma-3-27b-it", "--gpu", "h200"}, extra)));
  };
  ASSERT_TRUE(lim({}).has_value());
  EXPECT_EQ(lim({})->tokens, 1048576);
  EXPECT_EQ(lim({"--engine", "trtllm@1.2.0"})->tokens, 1048576);
  EXPECT_FALSE(lim({"--backend", "tensorrt"}).has_value());
  EXPECT_FALSE(lim({"--engine", "trtllm@1.0.0"}).has_value());
  EXPECT_FALSE(lim({"--engine", "trtllm@1.3.0", "--env", "TLLM_ALLOW_LONG_MAX_MODEL_LEN=1"}).has_value());
  // Before 1.3 the variable is not read: the cut stands.
  EXPECT_EQ(lim({"--engine", "trtllm@1.2.0", "--env", "TLLM_ALLOW_LONG_MAX_MODEL_LEN=1"})->tokens, 1048576);
  std::string err;
  EXPECT_EQ(cli({"tune", "--engine", "trtllm", "--model", "google/gemma-3-27b-it", "--gpu", "h200", "--target-context", "2000000"}, nullptr, &err),
            kExitBadInput);
  EXPECT_NE(err.find("2000000 is longer than google/gemma-3-27b-it supports (TensorRT-LLM's inferred max_seq_len "
                     "(_torch/pyexecutor/model_engine.py _infer_max_seq_len_from_config) 1048576)"),
            std::string::npos)
      << err;
}

TEST(AdviseTune, LaunchCommandSetsTheEnvironmentItWasGiven) {
  // --env is part of the deployment: the command to paste sets it the way a shell does.
  TuneResult r = tune(dep({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--env",
                           "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0"}),
                      TuneGoal{});
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(r.launch_command.rfind("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 vllm serve Qwen/Qwen3-8B", 0), 0u) << r.launch_command;
}

TEST(AdviseTune, TrtllmEngineQuantizationIsNotATrtllmServeOption) {
  // --quantization W4A16_AWQ says how the TensorRT engine was built (quantize.py --qformat int4_awq);
  // trtllm-serve has no such option, so the command to paste leaves it out and says which engine
  // directory to serve.
  TuneResult r = tune(dep({"--engine", "trtllm@0.13.0", "--backend", "tensorrt", "--quantization", "W4A16_AWQ", "--model",
                           "meta-llama/Meta-Llama-3-8B-Instruct", "--gpu", "l4"}),
                      TuneGoal{});
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(r.launch_command.rfind("# serve the TensorRT engine built from meta-llama/Meta-Llama-3-8B-Instruct with quantization W4A16_AWQ", 0), 0u)
      << r.launch_command;
  EXPECT_EQ(r.launch_command.find("--quantization"), std::string::npos) << r.launch_command;
  EXPECT_NE(r.launch_command.find("\ntrtllm-serve meta-llama/Meta-Llama-3-8B-Instruct --tp_size 1 --backend tensorrt"), std::string::npos)
      << r.launch_command;
}

TEST(Tune, VllmSamplerWarmUpPeakKeepsTheMargin) {
  // vLLM's sampler warm-up (1024 dummy requests on an H100) allocates after the KV pool and is
  // freed again, so free memory after the stage does not show it; the stage's peak does. The
  // recommended utilization keeps the margin at that peak in the worst case, and one step up
  // (0.01) no longer does -- before peaks were read, tune recommended a value whose warm-up
  // went below zero at the unfavourable end of the sampler estimate.
  const std::vector<std::string> d{"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen3-32B", "--gpu", "h100", "--tp", "2",
                                   "--max-model-len", "32768"};
  std::string out;
  ASSERT_EQ(cli(plus({"tune"}, plus(d, {"--json"})), &out), 0);
  auto t = nlohmann::json::parse(out);
  const std::string u = t["recommended"]["--gpu-memory-utilization"].get<std::string>();
  const int64_t margin = t["margin_bytes"].get<int64_t>();
  auto warmup_peak_worst = [&](const std::string& util) {
    std::string p;
    cli(plus({"plan"}, plus(d, {"--gpu-memory-utilization", util, "--json"})), &p);
    auto j = nlohmann::json::parse(p);
    for (const auto& s : j["ranks"][0]["stages"])
      if (s["name"] == "warmup") return s["min_free_bytes_worst"].get<int64_t>();
    ADD_FAILURE() << "no warmup stage at " << util;
    return int64_t{0};
  };
  EXPECT_GE(warmup_peak_worst(u), margin);
  EXPECT_LT(warmup_peak_worst(fmt::format("{:.2f}", std::stod(u) + 0.01)), margin);
  EXPECT_LE(t["min_free_worst_bytes"].get<int64_t>(), warmup_peak_worst(u));
}
