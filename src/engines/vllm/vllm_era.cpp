// vLLM version string -> the era of its memory rules (research/vllm-trtllm-llamacpp-memory.md
// §1.2, §2, §11.1). Boundaries are the PRs that changed the rules, mapped to releases.
#include <cstdio>
#include <fmt/format.h>

#include "engines/vllm/vllm_rules.h"
#include "headroom/deployment.h"
#include "headroom/error.h"

namespace headroom::vllm {

namespace {

// Release dates (yyyymmdd) used to read "unknown@DATE" / "main@DATE" builds: the newest
// release on or before the date. 2025 dates are GitHub release dates; from 0.14 on they are
// INFERRED brackets from dated logs (0.21.0 logged 2026-05-28, 0.29.1rc1 2026-09, the v0.31.0
// image logged 10-06, xvllm-001).
struct Release { int ymd; int version; };
constexpr Release kReleases[] = {
    {20241118, 604}, {20241202, 605}, {20250115, 607}, {20250127, 700}, {20250220, 703},
    {20250318, 800}, {20250428, 805}, {20250515, 900}, {20250610, 901}, {20250708, 902},
    {20250724, 1000}, {20250818, 1001}, {20250913, 1002}, {20251002, 1100}, {20251118, 1101},
    {20251203, 1200}, {20251219, 1300}, {20260120, 1400}, {20260205, 1500}, {20260220, 1600},
    {20260305, 1700}, {20260320, 1800}, {20260405, 1900}, {20260420, 2000}, {20260505, 2100},
    {20260525, 2200}, {20260610, 2300}, {20260625, 2400}, {20260710, 2500}, {20260725, 2600},
    {20260810, 2700}, {20260825, 2800}, {20260910, 2900}, {20261001, 2901}, {20261006, 3100},
};

int version_for_date(int ymd) {
  int v = kReleases[0].version;
  for (const auto& r : kReleases)
    if (r.ymd <= ymd) v = r.version;
  return v;
}

Era make(int v, std::string reason) {
  Era e;
  e.version = v;
  e.reason = std::move(reason);
  e.v0 = v < 800;
  // PR #10511 ("[core] overhaul memory profiling and fix backward compatibility", merged
  // 2024-12-14, first release 0.6.5): V0 worker.py determine_num_available_blocks runs the
  // profile inside memory_profiling(baseline_memory_in_bytes = total - init_gpu_memory), where
  // init_gpu_memory is read in init_device after torch.cuda.set_device (context created) and
  // before init_worker_distributed_environment. non_kv = weights + torch peak increase +
  // non-torch increase over that baseline: the CUDA context is outside the budget. 0.6.4 and
  // earlier charged every non-torch byte in use ("Memory profiling results: ...
  // initial_memory_usage=..., non_torch_memory=0.35GiB" on an RTX 3090, vllm-021).
  e.v0_context_in_baseline = e.v0 && v >= 605;
  e.whole_gpu = v < 901;                 // PR #19312 (per-instance budget) in 0.9.1
  e.kv_memory_flag = v >= 1002;          // PR #21489: its suggestion line is in 0.10.2 logs (vllm-048)
  e.full_and_piecewise = v >= 1100;      // cudagraph_mode FULL_AND_PIECEWISE default from 0.11
  // Piecewise graphs whose memory grows with hidden_size x sum(capture sizes): seen in three 0.9.2
  // logs (vllm_estimates.cpp cuda_graph_memory_outputs_per_size); the flat per-(graph x layer) cost
  // holds from 0.10.1.1 (vllm-055). The cut between them is a GUESS at 0.10.1, the first release
  // with a log of the flat cost; V1 only (V0's graphs share an output buffer since PR #5074).
  e.graph_outputs_per_size = !e.v0 && v < 1001;
  // PR #25359 (merged 2025-09-22, after 0.10.2 of 2025-09-13; listed with PR #25444, the 0.11
  // FULL_AND_PIECEWISE default, in the week of 2025-09-26): first release 0.11.0.
  e.nccl_before_snapshot = v >= 1100;
  e.format_gib = v >= 1200;              // format_gib in gpu_model_runner / kv_cache_utils
  e.graph_estimate_logged = v >= 1700;   // PR #30515 (opt-in, logged)
  e.graph_estimate_applied = v >= 2100;  // PR #38284: default on, utilization 0.92
  e.ceil_request = v >= 2100;
  e.tokens_from_concurrency = v >= 2100; // bracket 0.17..0.21 (INFERRED), see §3.4
  // total_consumed accounting and its L18b suggestion line: logged by a 0.26.1rc0 build (vllm-080),
  // 0.27.1 (vllm-053) and later; not seen before. Cut at 0.26.1 (INFERRED from those logs).
  e.total_consumed = v >= 2601;
  // The L18a line printed "(x GiB)" after each suggested value and "in use is x GiB" in 2026 logs
  // (vllm-071), "in use is N bytes" without the GiB figures in 0.10.2 (vllm-048): cut INFERRED at 0.11.
  e.suggestion_gib = v >= 1100;
  // PR #41069 (merged 2026-04-28, "Account for num_gpu_blocks_override in max_model_len checks"):
  // first release after it 0.21.0 (release dates INFERRED, see kReleases).
  e.override_sets_memory = v >= 2100;
  e.combined_kv_line = v >= 2900;
  e.swa_in_flight = v >= 2600;           // PR #47728 (opened 2026-07-06, after 0.25): first in 0.26.0 (vllm#49878: 0.25.1 vs 0.26)
  // "models's" -> "model's": 0.11-era logs print the typo (vllm-005, 2025-10); 0.20.0 (vllm-057) and a
  // verbatim 0.22 engine-core line (xvllm-011, vllm#44376) print "model's". The fixing PR was not found.
  e.models_typo = v < 2000;
  e.default_utilization = v >= 2100 ? 0.92 : 0.9;
  int maj = v / 10000, min = (v / 100) % 100, pat = v % 100;
  std::string rules = e.v0 ? "V0 engine, whole-GPU profile"
                      : e.whole_gpu ? "V1 engine, whole-GPU peak (before PR #19312)"
                      : e.total_consumed ? "V1 engine, total_consumed accounting, CUDA-graph estimate applied"
                      : e.graph_estimate_applied ? "V1 engine, per-instance budget, CUDA-graph estimate applied"
                      : "V1 engine, per-instance budget (PR #19312)";
  e.label = fmt::format("vLLM {}.{}.{} rules ({})", maj, min, pat, rules);
  return e;
}

}  // namespace

Era era_for_version(const std::string& version) {
  if (version.empty() || version == "latest" || version == "main" || version == "newest")
    return make(kNewestVersion, "newest known rules (no version given)");
  if (auto at = version.find('@'); at != std::string::npos) {
    if (auto ymd = dated_build_ymd(version))
      return make(version_for_date(*ymd), fmt::format("build dated {}: newest release by then (release dates partly INFERRED)", version.substr(at + 1)));
    std::string head = version.substr(0, at);
    if (head == "unknown" || head == "main" || head == "latest")
      return make(kNewestVersion, "undated build: newest known rules");
    return era_for_version(head);
  }
  // "0.1.devN+g<sha>": a source build without a tag; the version cannot be told from it.
  if (version.rfind("0.1.dev", 0) == 0)
    return make(kNewestVersion, fmt::format("untagged source build {}: newest known rules (version unknown)", version));
  int a = 0, b = 0, c = 0;
  int n = std::sscanf(version.c_str(), "%d.%d.%d", &a, &b, &c);
  if (n >= 2 && a >= 0 && a < 10 && b >= 0 && b < 100 && c >= 0 && c < 100) {
    if (n < 3) c = 0;
    int v = a * 10000 + b * 100 + c;
    if (v > kNewestVersion)  // an unknown release: say so, and plan it by the newest rules
      return make(kNewestVersion, fmt::format("version {} is newer than the releases headroom knows (0.6 .. 0.31.0): planned by 0.31.0's "
                                              "rules", version));
    return make(v, fmt::format("version {}", version));
  }
  fail_input("--engine", "vllm@" + version, "cannot read the version (use e.g. 0.10.2, 0.21.0, or main@2025-10-16)");
}

}  // namespace headroom::vllm
