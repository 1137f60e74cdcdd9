// Engine rules as data (issue 27): the rule tables reproduce the era flags the engines used before
// them (the old version comparisons are the oracle here, release by release), and `headroom rules`
// lists what is in force for a version with since/until and source.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "engines/llamacpp/llamacpp_rule_table.h"
#include "engines/sglang/sglang_rule_table.h"
#include "engines/trtllm/trtllm_rule_table.h"
#include "engines/trtllm/trtllm_rules.h"
#include "engines/vllm/vllm_rule_table.h"
#include "engines/vllm/vllm_rules.h"
#include "headroom/cli.h"
#include "headroom/rules.h"

namespace headroom {
namespace {

const int kVllmReleases[] = {604, 605, 607, 700, 703, 800, 805, 900, 901, 902, 1000, 1001, 1002, 1100, 1101, 1200, 1300, 1400, 1500,
                             1600, 1700, 1800, 1900, 2000, 2100, 2200, 2300, 2400, 2500, 2600, 2601, 2700, 2800, 2900, 2901, 3100};
const int kTrtllmReleases[] = {700, 800, 900, 1000, 1800, 1900, 2000, 2100, 10000, 10100, 10200, 10300};

TEST(Rules, VllmEraFlagsAreTheOldVersionCuts) {
  for (int v : kVllmReleases) {
    const vllm::Era e = vllm::era_for_version(fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100));
    ASSERT_EQ(e.version, v);
    EXPECT_EQ(e.v0, v < 800) << v;
    EXPECT_EQ(e.v0_context_in_baseline, v < 800 && v >= 605) << v;
    EXPECT_EQ(e.whole_gpu, v < 901) << v;
    EXPECT_EQ(e.kv_memory_flag, v >= 1002) << v;
    EXPECT_EQ(e.full_and_piecewise, v >= 1100) << v;
    EXPECT_EQ(e.graph_outputs_per_size, v >= 800 && v < 1001) << v;
    EXPECT_EQ(e.nccl_before_snapshot, v >= 1100) << v;
    EXPECT_EQ(e.format_gib, v >= 1200) << v;
    EXPECT_EQ(e.graph_estimate_logged, v >= 1700) << v;
    EXPECT_EQ(e.graph_estimate_applied, v >= 2100) << v;
    EXPECT_EQ(e.ceil_request, v >= 2100) << v;
    EXPECT_EQ(e.tokens_from_concurrency, v >= 2100) << v;
    EXPECT_EQ(e.total_consumed, v >= 2601) << v;
    EXPECT_EQ(e.suggestion_gib, v >= 1100) << v;
    EXPECT_EQ(e.override_sets_memory, v >= 2100) << v;
    EXPECT_EQ(e.combined_kv_line, v >= 2900) << v;
    EXPECT_EQ(e.swa_in_flight, v >= 2600) << v;
    EXPECT_EQ(e.models_typo, v < 2000) << v;
    EXPECT_EQ(e.default_utilization, v >= 2100 ? 0.92 : 0.9) << v;
  }
}

// The cuts that were raw version comparisons in the engine model until issue 27: each row against
// the comparison it replaced, release by release (and the row the enum value names).
TEST(Rules, VllmRowsAreTheOldVersionComparisons) {
  using R = vllm::Rule;
  struct Cut {
    R rule;
    std::string_view id;
    bool (*old)(int);
  };
  const Cut cuts[] = {
      {R::NemotronNasUnsupported, "vllm.nemotron_nas_unsupported", [](int v) { return v > 0 && v < 802; }},
      {R::SamplerPromptTokenIds, "vllm.sampler_prompt_token_ids", [](int v) { return v >= 800 && v < 802; }},
      {R::FlashinferPre023Api, "vllm.flashinfer_pre_023_api", [](int v) { return v < 900; }},
      {R::GraphSizesFromMaxNumSeqs, "vllm.graph_sizes_from_max_num_seqs", [](int v) { return v >= 1000; }},
      {R::GptOssCapture1024, "vllm.gpt_oss_capture_1024", [](int v) { return v >= 1001; }},
      {R::CompilationCaptureSizes, "vllm.compilation_capture_sizes", [](int v) { return v >= 1100; }},
      {R::FlashinferSamplerUnlessFalse, "vllm.flashinfer_sampler_unless_false", [](int v) { return v < 1100; }},
      {R::PydanticMaxModelLen, "vllm.pydantic_max_model_len", [](int v) { return v >= 1100; }},
      {R::Mxfp4TritonSm90, "vllm.mxfp4_triton_sm90", [](int v) { return v >= 1100; }},
      {R::Qwen3VlVideoProfile, "vllm.qwen3_vl_video_profile", [](int v) { return !(v < 1100 || v >= 1800); }},
      {R::ModeloptKvFp8Auto, "vllm.modelopt_kv_fp8_auto", [](int v) { return v >= 1100; }},
      {R::KvDtypeFp8DsMla, "vllm.kv_dtype_fp8_ds_mla", [](int v) { return v >= 1100; }},
      {R::CudagraphSpecializeLora, "vllm.cudagraph_specialize_lora", [](int v) { return v >= 1101; }},
      {R::ConservingMemoryHint, "vllm.conserving_memory_hint", [](int v) { return v >= 1200; }},
      {R::StartupErrorNamesDevice, "vllm.startup_error_names_device", [](int v) { return v >= 1400; }},
      {R::OnlineFp8Streaming, "vllm.online_fp8_streaming", [](int v) { return !(v < 1400); }},
      {R::NeededCountsPadding, "vllm.needed_counts_padding", [](int v) { return v >= 1400; }},
      {R::HybridGroupSizeMax, "vllm.hybrid_group_size_max", [](int v) { return v >= 1400; }},
      {R::PpWholeModelKvCheck, "vllm.pp_whole_model_kv_check", [](int v) { return v >= 1400 && v < 1600; }},
      {R::TritonTopkToppSampler, "vllm.triton_topk_topp_sampler", [](int v) { return !(v < 1600); }},
      {R::V2RunnerEnv, "vllm.v2_runner_env", [](int v) { return v >= 1900; }},
      {R::HybridAlignBlockSize, "vllm.hybrid_align_block_size", [](int v) { return v >= 1900; }},
      {R::MaxModelLenAuto, "vllm.max_model_len_auto", [](int v) { return !(v < 2000); }},
      {R::KvDtypeNvfp4, "vllm.kv_dtype_nvfp4", [](int v) { return v >= 2000; }},
      {R::NcclInCapturedGraphs, "vllm.nccl_in_captured_graphs", [](int v) { return !(v >= 2000); }},
      {R::Dsv4Support, "vllm.dsv4_support", [](int v) { return !(v < 2000); }},        // was kDsv4FirstVersion
      {R::Dsv4BucketedBlock, "vllm.dsv4_bucketed_block", [](int v) { return v >= 2300; }},  // was kDsv4BucketedBlockVersion
      {R::Dsv4Packed, "vllm.dsv4_packed", [](int v) { return !(v < 2400); }},          // was kDsv4PackedVersion
      {R::KvDtypePerTokenHead, "vllm.kv_dtype_per_token_head", [](int v) { return v >= 2400; }},
      {R::Mrv2DenseDefault, "vllm.mrv2_dense_default", [](int v) { return v >= 2501; }},
      {R::HybridFullWarmupTransient, "vllm.hybrid_full_warmup_transient", [](int v) { return v >= 2600; }},
      // Was `v < 2800` under model_runner_v2(), which no release before 0.19 runs (checked below): since 0.19 in the table.
      {R::Mrv2CpuOffloadNoop, "vllm.mrv2_cpu_offload_noop", [](int v) { return v >= 1900 && v < 2800; }},
      {R::Mrv2GraphEstimateZero, "vllm.mrv2_graph_estimate_zero", [](int v) { return v >= 1900 && v < 2800; }},
      {R::HybridPrefixCachingDefault, "vllm.hybrid_prefix_caching_default", [](int v) { return v >= 2800; }},
      {R::Mrv2AllFamilies, "vllm.mrv2_all_families", [](int v) { return v >= 2801; }},
      {R::Mrv2CaptureAfterProfiling, "vllm.mrv2_capture_after_profiling", [](int v) { return v >= 2900; }},
  };
  EXPECT_EQ(std::size(cuts), static_cast<size_t>(R::Count) - static_cast<size_t>(R::NemotronNasUnsupported));
  // Releases around every cut, besides the release list (0.8.1, 0.25.0, 0.28.0, 0.28.1 are not in it).
  std::vector<int> versions(std::begin(kVllmReleases), std::end(kVllmReleases));
  versions.insert(versions.end(), {801, 802, 1001, 1101, 1700, 1800, 2500, 2501, 2800, 2801});
  for (const Cut& c : cuts) {
    EXPECT_EQ(vllm::rule_table()[static_cast<size_t>(c.rule)].id, c.id);
    for (int v : versions) EXPECT_EQ(vllm::has(c.rule, v), c.old(v)) << c.id << " at " << v;
  }
  ModelConfig dense;
  for (int v : versions) {
    vllm::Era e = vllm::era_for_version(fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100));
    e.v2_runner_env = 1;  // the earliest way to Model Runner V2
    if (v < 1900) EXPECT_FALSE(vllm::model_runner_v2(e, dense)) << v;
  }
}

TEST(Rules, TrtllmRowsAreTheOldVersionComparisons) {
  using R = trtllm::Rule;
  struct Cut {
    R rule;
    std::string_view id;
    bool (*old)(int);
  };
  const Cut cuts[] = {
      {R::PagesPerSequenceLine, "trtllm.pages_per_sequence_line", [](int v) { return v >= 2000 && v < 10000; }},
      {R::SummaryMaxBatchSize, "trtllm.summary_max_batch_size", [](int v) { return v >= 2000; }},
      {R::MaxSeqLenClamp, "trtllm.max_seq_len_clamp", [](int v) { return v >= 10100; }},
      {R::BlocksPerWindowLog, "trtllm.blocks_per_window_log", [](int v) { return v >= 10100; }},
      {R::BlocksPerSequenceLine, "trtllm.blocks_per_sequence_line", [](int v) { return v >= 10200; }},
      {R::AllowLongMaxSeqLen, "trtllm.allow_long_max_seq_len", [](int v) { return v >= 10300; }},
  };
  EXPECT_EQ(std::size(cuts), static_cast<size_t>(R::Count) - static_cast<size_t>(R::PagesPerSequenceLine));
  for (const Cut& c : cuts) {
    EXPECT_EQ(trtllm::rule_table()[static_cast<size_t>(c.rule)].id, c.id);
    for (int v : kTrtllmReleases) {
      ASSERT_EQ(trtllm::era_for_version(fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)).version, v);
      EXPECT_EQ(trtllm::has(c.rule, v), c.old(v)) << c.id << " at " << v;
    }
  }
}

TEST(Rules, SglangErasAreTheOldReleaseAndDateCuts) {
  using sglang::Era;
  for (int v : {300, 406, 407, 408, 502, 503, 508, 509, 512, 513, 514, 515, 516, 517, 519}) {
    const auto e = sglang::era_for_version(fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100));
    EXPECT_EQ(e.era, v >= 509 ? Era::Y2026 : v >= 503 ? Era::Late2025 : v >= 407 ? Era::Mid2025 : Era::V2024) << v;
    EXPECT_EQ(sglang::legacy_piecewise_graph(e), v < 517) << v;
    EXPECT_EQ(sglang::legacy_dsv4_pool(e), v < 515) << v;
    EXPECT_EQ(sglang::early_rocm_dsv4_rings(e), v < 513) << v;
  }
  for (int ymd : {20250101, 20250609, 20250610, 20250930, 20251001, 20260228, 20260301, 20260531, 20260601, 20260619, 20260620, 20260630, 20260701}) {
    const auto e = sglang::era_for_version(fmt::format("main@{:04}-{:02}-{:02}", ymd / 10000, (ymd / 100) % 100, ymd % 100));
    EXPECT_EQ(e.era, ymd >= 20260301 ? Era::Y2026 : ymd >= 20251001 ? Era::Late2025 : ymd >= 20250610 ? Era::Mid2025 : Era::V2024) << ymd;
    EXPECT_EQ(sglang::legacy_piecewise_graph(e), ymd < 20260701) << ymd;
    EXPECT_EQ(sglang::legacy_dsv4_pool(e), ymd < 20260620) << ymd;
    EXPECT_EQ(sglang::early_rocm_dsv4_rings(e), ymd < 20260601) << ymd;
  }
  const auto newest = sglang::era_for_version("");
  EXPECT_EQ(newest.era, Era::Y2026);
  EXPECT_FALSE(sglang::legacy_piecewise_graph(newest));
  // PR #37898's 20-35 GiB tier: from 0.5.20 / main 2026-09-04, and in the newest rules.
  const auto raised = [](const std::string& v) { return sglang::has(sglang::Rule::SmallGpuTierRaised, sglang::rule_version(sglang::era_for_version(v))); };
  EXPECT_FALSE(raised("0.5.19"));
  EXPECT_TRUE(raised("0.5.20"));
  EXPECT_FALSE(raised("main@2026-09-03"));
  EXPECT_TRUE(raised("main@2026-09-04"));
  EXPECT_TRUE(raised(""));
}

TEST(Rules, TrtllmAndLlamacppDefaultsAreTheOldCuts) {
  for (int v : kTrtllmReleases) {
    const trtllm::Era e = trtllm::era_for_version(fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100));
    EXPECT_EQ(e.pytorch_default, v >= 10000) << v;
    EXPECT_EQ(e.log_2026, v >= 10200) << v;
    EXPECT_EQ(e.estimation_floor, v >= 10300) << v;
    EXPECT_EQ(e.default_tokens_per_block, v < 1000 ? 128 : v < 1900 ? 64 : 32) << v;
    EXPECT_EQ(e.trt_lazy_context, v < 900) << v;
  }
  for (int b : {1000, 2449, 2450, 6249, 6250, 6799, 6800, 6894, 6895, 7779, 7780, 9000}) {
    EXPECT_EQ(llamacpp::has(llamacpp::Rule::FitOn, b), b >= 6895) << b;
    EXPECT_EQ(llamacpp::has(llamacpp::Rule::MicroBatches, b), b >= 2450) << b;
    EXPECT_EQ(llamacpp::has(llamacpp::Rule::MetalMtlNames, b), b >= 7780) << b;
  }
  EXPECT_TRUE(llamacpp::has(llamacpp::Rule::FitOn, 0));  // newest
  // The comparisons the llama.cpp code made before these cuts were rows (build 0 = newest).
  for (int b : {0, 1000, 2449, 2450, 5089, 5090, 5999, 6000, 6999, 7000, 7999, 8000, 9000}) {
    const bool newest = b == 0;
    EXPECT_EQ(llamacpp::has(llamacpp::Rule::OutputsPerSequence, b), newest || b >= 2450) << b;
    EXPECT_EQ(llamacpp::has(llamacpp::Rule::MlaLatentKv, b), newest || b >= 5090) << b;
    EXPECT_EQ(llamacpp::has(llamacpp::Rule::SwaUbatchSize, b), newest || b >= 6000) << b;
    EXPECT_EQ(llamacpp::has(llamacpp::Rule::KvPad256Streams, b), newest || b >= 7000) << b;
    EXPECT_EQ(llamacpp::has(llamacpp::Rule::MlaLatentKOnly, b), newest || b >= 8000) << b;
  }
}

TEST(Rules, SglangNemotronNasSupportIsTheOldCut) {
  // sglang_plan.cpp refused DeciLMForCausalLM when release < 0.5.1 or the build date < 2025-08-17.
  for (int v : {400, 500, 501, 519})
    EXPECT_EQ(sglang::has(sglang::Rule::NemotronNas, sglang::rule_version(sglang::era_for_version(fmt::format("0.{}.{}", v / 100 % 100, v % 100)))),
              v >= 501)
        << v;
  EXPECT_FALSE(sglang::has(sglang::Rule::NemotronNas, sglang::rule_version(sglang::era_for_version("main@2025-08-16"))));
  EXPECT_TRUE(sglang::has(sglang::Rule::NemotronNas, sglang::rule_version(sglang::era_for_version("main@2025-08-17"))));
  EXPECT_TRUE(sglang::has(sglang::Rule::NemotronNas, sglang::rule_version(sglang::era_for_version(""))));
}

TEST(Rules, TablesAreWellFormed) {
  for (EngineKind e : {EngineKind::VLLM, EngineKind::SGLang, EngineKind::TRTLLM, EngineKind::LlamaCpp}) {
    const EngineRuleSet s = engine_rules(e, "");
    std::set<std::string_view> ids;
    for (const auto& r : s.rules) {
      EXPECT_TRUE(ids.insert(r.rule->id).second) << r.rule->id;
      EXPECT_EQ(r.rule->id.rfind(std::string(engine_kind_name(e)) + ".", 0), 0u) << r.rule->id;
      EXPECT_FALSE(r.rule->source.empty()) << r.rule->id;
      if (r.rule->since.release > 0 && r.rule->until.release > 0) EXPECT_LT(r.rule->since.release, r.rule->until.release) << r.rule->id;
      // The newest rules: everything without an end.
      EXPECT_EQ(r.in_force, r.rule->until.release == 0 && r.rule->until.date == 0) << r.rule->id;
    }
  }
}

TEST(Rules, CliListsTheRulesInForceWithSinceAndSource) {
  std::ostringstream out, err;
  ASSERT_EQ(run_cli({"rules", "--engine", "vllm@0.10.2", "--json"}, out, err), 0) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  std::vector<std::string> ids;
  for (const auto& r : j["rules"]) ids.push_back(r["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"vllm.v1_engine", "vllm.per_instance_budget", "vllm.kv_cache_memory_bytes", "vllm.models_typo",
                                           "vllm.graph_sizes_from_max_num_seqs", "vllm.gpt_oss_capture_1024",
                                           "vllm.flashinfer_sampler_unless_false", "vllm.nccl_in_captured_graphs"}));
  EXPECT_EQ(j["rules"][1]["since"], "0.9.1");
  EXPECT_EQ(j["rules"][1]["source"], "PR #19312, first in 0.9.1");
  std::ostringstream o2, e2;
  EXPECT_EQ(run_cli({"rules", "--engine", "vllm@nope"}, o2, e2), kExitBadInput);
  std::ostringstream o3, e3;
  EXPECT_EQ(run_cli({"rules", "--engine", "llamacpp@b6000", "--all"}, o3, e3), 0);
  EXPECT_NE(o3.str().find("- llamacpp.fit_on"), std::string::npos) << o3.str();
  EXPECT_NE(o3.str().find("since b6895"), std::string::npos) << o3.str();
}

TEST(Rules, CliListsTheEstimatedConstantsWithTheirEvidence) {
  std::ostringstream out, err;
  ASSERT_EQ(run_cli({"rules", "--engine", "sglang", "--estimates", "--json"}, out, err), 0) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  bool fixed = false;
  for (const auto& r : j["estimates"])
    if (r["id"] == "sglang.graph.fixed") {
      fixed = true;
      EXPECT_DOUBLE_EQ(r["central"].get<double>(), 0.06);  // capture's fixed cost, xsgl-011 / xsgl-012
      EXPECT_EQ(r["evidence"], "ESTIMATE");
      EXPECT_EQ(r["cases"], "xsgl-011 xsgl-012");
    }
  EXPECT_TRUE(fixed) << out.str();
  // vLLM lists its own rows and the shared terms it calls.
  std::ostringstream o2, e2;
  ASSERT_EQ(run_cli({"rules", "--engine", "vllm@0.10.2", "--estimates"}, o2, e2), 0) << e2.str();
  EXPECT_NE(o2.str().find("vllm.graph.piecewise_unit  0.27 MiB per (graph x layer)"), std::string::npos) << o2.str();
  EXPECT_NE(o2.str().find("shared.context.multi_gpu"), std::string::npos) << o2.str();
}

}  // namespace
}  // namespace headroom
