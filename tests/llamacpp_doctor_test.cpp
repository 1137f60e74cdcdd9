// doctor on llama.cpp logs (issue 25 item 5): the real excerpts of tests/data/corpus/llamacpp.jsonl
// (each test names its case id), read by log_llamacpp.cpp and diagnosed by diagnose_llamacpp.cpp.
// The figures asserted are the log's own; the fixes' numbers are worked by hand in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "headroom/cli.h"
#include "headroom/doctor.h"
#include "headroom/logscan.h"
#include "headroom/units.h"
#include "headroom/validate.h"

using namespace headroom;

namespace {

// The case's "raw" (and its "error_message") from the corpus.
nlohmann::json corpus_case(const std::string& id) {
  std::ifstream in(std::string(HEADROOM_TEST_DATA) + "/corpus/llamacpp.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j["id"] == id) return j;
  }
  ADD_FAILURE() << "no case " << id;
  return {};
}
// "X MiB" as the reader turns it into bytes (rounded to the byte).
int64_t to_bytes(double mib, int64_t unit) { return static_cast<int64_t>(std::llround(mib * static_cast<double>(unit))); }

std::string raw(const std::string& id) { return corpus_case(id)["raw"].get<std::string>(); }

Diagnosis doctor(const std::string& log, std::vector<std::string> args = {}) {
  return diagnose(scan_log_text(log, "llamacpp.log"), Args::parse(args));
}

const DoctorFix* fix(const Diagnosis& d, const std::string& flag) {
  for (const auto& f : d.fixes)
    if (f.flag == flag) return &f;
  return nullptr;
}

bool has_line(const std::vector<std::string>& v, const std::string& part) {
  for (const auto& s : v)
    if (s.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(LlamacppDoctor, WeightsOnCuda0) {
  // llamacpp-004 (b8284, Qwen3.5-397B Q4_K_S on an RTX 3090): "allocating 144817.04 MiB on device 0:
  // cudaMalloc failed: out of memory alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624".
  const LogScan s = scan_log_text(raw("llamacpp-004"), "004");
  EXPECT_EQ(s.engine, LogEngine::LlamaCpp);
  EXPECT_EQ(s.engine_version, "b8284");
  EXPECT_EQ(s.outcome, Outcome::OomWeights);
  ASSERT_EQ(s.llama.failures.size(), 1u);
  EXPECT_EQ(s.llama.failures[0].device, "CUDA0");
  EXPECT_EQ(s.llama.failures[0].request, 151851674624);
  ASSERT_NE(s.llama.device("CUDA0"), nullptr);
  EXPECT_EQ(s.llama.device("CUDA0")->free->value, 23863 * MiB);
  EXPECT_EQ(s.llama.device("CUDA0")->total->value, 24126 * MiB);
  // The user adds the flags of the issue (-cmoe, -ot ffn_exps=CPU, -ngl 99).
  const Diagnosis d = doctor(raw("llamacpp-004"), {"--cpu-moe", "-ot", "ffn_exps=CPU", "-ngl", "99"});
  EXPECT_EQ(d.engine, "llamacpp");
  EXPECT_EQ(d.stage, "weights");
  EXPECT_EQ(d.stage_basis, StageBasis::Log);
  EXPECT_EQ(d.rank, 0);
  EXPECT_EQ(d.cause, Cause::WeightsDoNotFit);
  EXPECT_TRUE(has_line(d.arithmetic, "requested 144817.04 MiB on CUDA0 (line 4)")) << d.arithmetic.front();
  // 144817.04 - 23863 free = 120954.04 MiB short
  EXPECT_TRUE(has_line(d.arithmetic, "short by 120954.04 MiB"));
  // No layer count printed: (23863 - 1024 margin) / 144817.04 = 15.77% of the layers offloaded now.
  const DoctorFix* ngl = fix(d, "--n-gpu-layers");
  ASSERT_NE(ngl, nullptr);
  EXPECT_EQ(ngl->value, "15% of the layers offloaded now");
  // -cmoe and -ot were set and the GPU was still asked for the weights: the override rule is named.
  EXPECT_NE(fix(d, "--override-tensor"), nullptr);
  EXPECT_TRUE(has_line(d.will_not_help, "--ctx-size"));
}

TEST(LlamacppDoctor, ComputeOnVulkan1AfterTheRetry) {
  // llamacpp-006 (Docker Model Runner, Phi-4-mini on RX 580 + RX 560, Vulkan): the compute buffer
  // failed on Vulkan1 at 455917568 B, llama.cpp retried without pipeline parallelism and failed at
  // 416022528 B: the second is the failure.
  const LogScan s = scan_log_text(raw("llamacpp-006"), "006");
  EXPECT_EQ(s.engine, LogEngine::LlamaCpp);
  EXPECT_EQ(s.engine_version, "");  // "build_info: b1-e365e65" names no era
  EXPECT_EQ(s.outcome, Outcome::OomGraph);
  EXPECT_EQ(s.failure_stage, "compute_buffer");
  EXPECT_EQ(s.failure_line, 34);
  EXPECT_EQ(s.failure_device, 1);
  ASSERT_EQ(s.llama.failures.size(), 2u);
  EXPECT_TRUE(s.llama.failures[0].retried);
  EXPECT_EQ(s.llama.failures[0].request, 455917568);
  EXPECT_EQ(s.llama.failures[1].device, "Vulkan1");
  EXPECT_EQ(s.llama.failures[1].request, 416022528);
  const LlamaDevice* v1 = s.llama.device("Vulkan1");
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(v1->free->value, 3169 * MiB);  // 1947 used + 1222 free in --fit's line = "using device Vulkan1 ... 3169 MiB free"
  EXPECT_EQ(v1->model->value, to_bytes(1368.79, MiB));
  EXPECT_EQ(v1->kv->value, 120 * MiB);
  EXPECT_EQ(s.llama.kv_size->value, 256 * MiB);
  EXPECT_EQ(s.llama.kv_cells, 2048);
  EXPECT_EQ(s.llama.layers_offloaded, 33);

  const Diagnosis d = doctor(raw("llamacpp-006"));
  EXPECT_EQ(d.stage, "compute_buffer");
  EXPECT_EQ(d.cause, Cause::ComputeBufferDoesNotFit);
  EXPECT_EQ(d.rank, 1);
  // 1368.79 + 120 = 1488.79 MiB held; + 396.75 = 1885.54 <= 3169 free: the log's figures say it fits.
  EXPECT_TRUE(has_line(d.arithmetic, "requested 396.75 MiB on Vulkan1"));
  EXPECT_TRUE(has_line(d.arithmetic, "1488.79 MiB + 396.75 MiB = 1885.54 MiB <= 3169.00 MiB free at start"));
  // ubatch 512 -> 256: 396.75 x 256/512 = 198.38 MiB.
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].flag, "--ubatch-size");
  EXPECT_EQ(d.fixes[0].value, "256");
  // Two GPUs: Vulkan1 holds 1488.79 of 2624.56 MiB of model + KV; moving the 396.75 MiB request off it
  // leaves (1488.79 - 396.75) / 2624.56 = 41.6%, Vulkan0 58.4%.
  const DoctorFix* ts = fix(d, "--tensor-split");
  ASSERT_NE(ts, nullptr);
  EXPECT_EQ(ts->value, "58,42");
}

TEST(LlamacppDoctor, RocmErrorBeforeTheComputeBuffers) {
  // llamacpp-002 (RamaLama, ROCm, Qwen2.5-32B on an RX 7900 XT): the model buffer was made, then
  // "ROCm error: out of memory" before any KV or compute buffer line: the first graph (compute buffer).
  const Diagnosis d = doctor(raw("llamacpp-002"));
  EXPECT_EQ(d.engine, "llamacpp");
  EXPECT_EQ(d.stage, "compute_buffer");
  EXPECT_EQ(d.stage_basis, StageBasis::Log);
  EXPECT_EQ(d.rank, 0);  // the only GPU the log shows, ROCm0
  // --fit's own deficit: 27091 projected - 20252 free = 6839 MiB; + 256 MiB = 7095 MiB over
  // 18508.35 / 65 = 284.74 MiB per layer = 25 layers: -ngl 65 -> 40.
  const DoctorFix* ngl = fix(d, "--n-gpu-layers");
  ASSERT_NE(ngl, nullptr);
  EXPECT_EQ(ngl->value, "40");
  EXPECT_NE(fix(d, "--ubatch-size"), nullptr);
}

TEST(LlamacppDoctor, RocmComputeBufferNamedByGallocr) {
  // llamacpp-022 (ROCm, Apertus-70B IQ4_XS): "cudaMalloc failed" on device 0, then
  // "ggml_gallocr_reserve_n: failed to allocate ROCm0 buffer of size 14822711296".
  const LogScan s = scan_log_text(raw("llamacpp-022"), "022");
  EXPECT_EQ(s.outcome, Outcome::OomGraph);
  ASSERT_EQ(s.llama.failures.size(), 1u);
  EXPECT_EQ(s.llama.failures[0].device, "ROCm0");
  EXPECT_EQ(s.llama.failures[0].request, 14822711296);
  const Diagnosis d = doctor(raw("llamacpp-022"));
  EXPECT_EQ(d.stage, "compute_buffer");
  // ubatch 512 -> 256: 14136.04 x 256 / 512 = 7068.02 MiB
  ASSERT_NE(fix(d, "--ubatch-size"), nullptr);
  EXPECT_NE(fix(d, "--ubatch-size")->effect.find("7068.02 MiB"), std::string::npos) << fix(d, "--ubatch-size")->effect;
}

TEST(LlamacppDoctor, RuntimeCudaError) {
  // llamacpp-024 (b5172, Mistral-Small-3.1 Q8_0, row split, draft model): the models loaded, the
  // first request failed with the record's error line "CUDA error: out of memory" (not in the excerpt:
  // appended as the log printed it). The launch command spans 7 lines with '\' continuations.
  const auto c = corpus_case("llamacpp-024");
  const std::string log = c["raw"].get<std::string>() + "\n" + c["observed"]["error_message"].get<std::string>();
  const LogScan s = scan_log_text(log, "024");
  EXPECT_EQ(s.engine, LogEngine::LlamaCpp);
  EXPECT_EQ(s.engine_version, "b5172");
  EXPECT_EQ(s.flags.at("--ctx-size"), "65536");
  EXPECT_EQ(s.flags.at("--split-mode"), "row");
  EXPECT_EQ(s.flags.at("--model"), "/models/Mistral-Small-3.1-24B-Instruct-2503-Q8_0.gguf");
  EXPECT_EQ(s.flags.at("--tensor-split"), "0,1,1");
  EXPECT_EQ(s.flags.at("--no-warmup"), "true");
  const Diagnosis d = doctor(log);
  EXPECT_EQ(d.stage, "runtime");
  EXPECT_EQ(d.cause, Cause::ActivationPeak);
  ASSERT_NE(fix(d, "--ctx-size"), nullptr);
  EXPECT_EQ(fix(d, "--ctx-size")->value, "32768");
  EXPECT_EQ(fix(d, "--ubatch-size")->value, "256");
  EXPECT_EQ(fix(d, "--flash-attn"), nullptr);  // -fa was on
  EXPECT_TRUE(has_line(d.will_not_help, "--no-warmup"));
  // The GGUF file is not on this machine: the planner's fixes need --model HF_ID --quant.
  EXPECT_TRUE(has_line(d.gaps, "not readable here"));
}

TEST(LlamacppDoctor, HealthyStartReadsEveryBuffer) {
  // llamacpp-010 (b5622, Qwen3-30B-A3B Q4_K_M on RTX 4090 + RTX 5090, experts on the host).
  const LogScan s = scan_log_text(raw("llamacpp-010"), "010");
  EXPECT_EQ(s.engine_version, "b5622");
  EXPECT_EQ(s.outcome, Outcome::Ok);
  EXPECT_EQ(s.llama.device("CUDA0")->model->value, to_bytes(135.76, MiB));
  EXPECT_EQ(s.llama.device("CUDA1")->kv->value, 1152 * MiB);
  EXPECT_EQ(s.llama.device("CUDA1")->compute->value, 1080 * MiB);
  EXPECT_EQ(s.llama.device("CUDA0")->free->value, 9862 * MiB);
  EXPECT_EQ(s.llama.device("CPU_Mapped")->model->value, to_bytes(17447.91, MiB));
  EXPECT_EQ(s.llama.kv_size->value, 1536 * MiB);
  EXPECT_EQ(s.llama.kv_cells, 16384);
  EXPECT_EQ(s.llama.type_k, "f16");
  EXPECT_EQ(s.llama.n_ubatch->value, 512);
  const Diagnosis d = doctor(raw("llamacpp-010"));
  EXPECT_EQ(d.stage, "none");
  EXPECT_EQ(d.engine, "llamacpp");
}

TEST(LlamacppDoctor, PlannerFixOnARebuiltDeployment) {
  // llamacpp-003 (RamaLama, Qwen2.5-72B Q4_K_M, -ngl 999 on a 20 GB RX 7900 XT): the paraphrased
  // "cudaMalloc failed: out of memory - tried to allocate 44,545 MiB". With the model given, the
  // llama.cpp planner finds the most layers that fit (the card's 19.98 GiB as the record gives it).
  const Diagnosis d = doctor(raw("llamacpp-003"), {"--engine", "llamacpp", "--model", "Qwen/Qwen2.5-72B-Instruct", "--quant", "Q4_K_M",
                                                  "--gpu-memory", "19.98GiB", "--n-gpu-layers", "999"});
  EXPECT_EQ(d.stage, "weights");
  EXPECT_EQ(d.stage_basis, StageBasis::Guess);  // nothing before the failure names the buffer
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].flag, "--n-gpu-layers");
  ASSERT_TRUE(d.forecast_after_fix.has_value());
  EXPECT_FALSE(d.forecast_after_fix->failure.has_value());
  EXPECT_EQ(d.forecast_after_fix->verdict, Verdict::Fits);
  // 80 layers + output = 81 asked; the Q4_K_M layers are ~0.23 GiB each: 35 fit only "at risk"
  // (270 MiB left, -70 MiB at the estimates' bad end), so the fix is fewer.
  const int ngl = std::stoi(d.fixes[0].value);
  EXPECT_GT(ngl, 20);
  EXPECT_LT(ngl, 35);
  // The effect names the step the search took.
  EXPECT_NE(d.fixes[0].effect.find("81 -> " + d.fixes[0].value), std::string::npos) << d.fixes[0].effect;
}

TEST(LlamacppDoctor, ValidateCountsLlamacppDoctorStages) {
  const auto j = validate_corpus(std::string(HEADROOM_TEST_DATA) + "/corpus/llamacpp.jsonl");
  // 7 failing cases: 002, 006, 022 (compute), 004 (weights), 024 (runtime) placed by their lines;
  // 003 (weights) and 005 guessed (005 is the vision encoder's compute at the first image: runtime).
  EXPECT_EQ(j["doctor_stage"]["n"], 7);
  EXPECT_NEAR(j["doctor_stage"]["agreement"].get<double>(), 6.0 / 7.0, 0.01);
  EXPECT_EQ(j["doctor_stage_decided"]["n"], 5);
  EXPECT_DOUBLE_EQ(j["doctor_stage_decided"]["agreement"].get<double>(), 1.0);
  EXPECT_EQ(j["doctor_stage_guessed"], 2);
}

TEST(LlamacppDoctor, FitGaveUpIsNamedWithItsReason) {
  // llama.cpp#27872 (b10621, RTX 3090): --cpu-moe sets tensor overrides, so --fit only warns and the
  // start goes on unfitted. Its lines, then a compute-buffer failure (buffer figures for the test):
  // 19000 + 3000 MiB held + 2200 requested = 24200 > 22341 free at start (the fit line's "vs."
  // figure): short by 1859 MiB.
  const std::string head =
      "build: 10621 (c1d0e7a00) with cc (Ubuntu 13.3.0) 13.3.0 for x86_64-linux-gnu\n"
      "common_params_fit_impl: projected to use 24840 MiB of device memory vs. 22341 MiB of free device memory\n"
      "common_params_fit_impl: cannot meet free memory target of 1024 MiB, need to reduce device memory by 3523 MiB\n";
  const std::string tail =
      "load_tensors: offloaded 44/44 layers to GPU\n"
      "load_tensors:        CUDA0 model buffer size = 19000.00 MiB\n"
      "llama_kv_cache:      CUDA0 KV buffer size =  3000.00 MiB\n"
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2200.00 MiB on device 0: cudaMalloc failed: out of memory\n"
      "ggml_gallocr_reserve_n_impl: failed to allocate CUDA0 buffer of size 2306867200\n"
      "graph_reserve: failed to allocate compute buffers\n";
  const Diagnosis dx = doctor(head +
                              "common_fit_params: failed to fit params to free device memory: model_params::tensor_buft_overrides already set by "
                              "user, abort\n" +
                              tail);
  EXPECT_EQ(dx.stage, "compute_buffer");
  auto has = [&](const Diagnosis& d, const std::string& text) {
    return std::any_of(d.arithmetic.begin(), d.arithmetic.end(), [&](const std::string& a) { return a == text; });
  };
  EXPECT_TRUE(has(dx, "22000.00 MiB + 2200.00 MiB = 24200.00 MiB > 22341.00 MiB: short by 1859.00 MiB"));
  EXPECT_TRUE(has(dx, "--fit gave up (line 4): model_params::tensor_buft_overrides already set by user; the start went on with the values as set"));
  EXPECT_NE(dx.explanation.find("llama.cpp#27872"), std::string::npos);
  // -ngl 99 stops it the same way: the fix lets fit choose the layers.
  const Diagnosis ngl = doctor(head + "common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user to 99, abort\n" + tail);
  ASSERT_FALSE(ngl.fixes.empty());
  EXPECT_EQ(ngl.fixes.back().flag, "--n-gpu-layers");
  EXPECT_EQ(ngl.fixes.back().value, "auto");
}

TEST(LlamacppDoctor, CliExitCodes) {
  const auto path = std::filesystem::temp_directory_path() / "headroom_llamacpp_doctor_004.log";
  std::ofstream(path, std::ios::binary) << raw("llamacpp-004");
  std::ostringstream out, err;
  EXPECT_EQ(run_cli({"doctor", path.string(), "--json"}, out, err), kExitFails) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["stage"], "weights");
  EXPECT_EQ(j["engine"], "llamacpp");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << raw("llamacpp-010");
  std::ostringstream out2, err2;
  EXPECT_EQ(run_cli({"doctor", path.string(), "--engine", "llamacpp"}, out2, err2), kExitOk) << err2.str();
  std::filesystem::remove(path);
}

TEST(LlamacppDoctor, HostileFiguresStayBounded) {
  // Absurd sizes, a thousand devices and repeated buffers: the sums saturate, the diagnosis is
  // finite JSON, and nothing overflows (UBSan builds run this too).
  std::string log = "ggml_cuda_init: found 1 CUDA devices:\n";
  for (int i = 0; i < 1000; ++i) {
    log += "llama_model_load_from_file_impl: using device CUDA" + std::to_string(i) + " (X) - 999999999999 MiB free\n";
    log += "load_tensors: CUDA0 model buffer size = 999999999999.99 MiB\n";
    log += "llama_kv_cache: CUDA0 KV buffer size = 999999999999 MiB\n";
  }
  log += "load_tensors: offloaded 100000/100000 layers to GPU\n";
  log += "llama_kv_cache: size = 999999999999 MiB (1 cells, 1 layers, 1/1 seqs), K (f16): 1 MiB, V (f16): 1 MiB\n";
  log += "llama_context: n_ubatch = 16777216\n";
  log += "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 999999999999.99 MiB on device 0: cudaMalloc failed: out of memory\n";
  log += "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 99999999999999999999\n";
  const LogScan s = scan_log_text(log, "hostile");
  EXPECT_LE(s.llama.devices.size(), 64u);
  EXPECT_LE(s.llama.device("CUDA0")->model->value, int64_t{1} << 60);
  const Diagnosis d = doctor(log);
  EXPECT_EQ(d.stage, "compute_buffer");
  EXPECT_NO_THROW(diagnosis_json(d).dump());
}
