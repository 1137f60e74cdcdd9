// tune and fit: searches over a forecast. tune finds the engine flags that maximise KV capacity
// while every startup stage keeps a safety margin at the unfavourable end of the estimated
// terms; fit finds which GPUs, how many and which parallelism serve a workload.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "headroom/deployment.h"
#include "headroom/forecast.h"

namespace headroom {

using FlagList = std::vector<std::pair<std::string, std::string>>;

// Free memory every stage must keep in the unfavourable scenario (every estimated term at its
// high end), on top of what the forecast already models. A GUESS, not calibrated: about the
// largest single allocation seen failing in CUDA-graph capture in the seed crash (694 MiB,
// tests/data/seed/seed-crash.log) rounded up, for allocator slack the forecast does not model.
inline constexpr int64_t kDefaultMarginBytes = int64_t{1} << 30;

struct TuneGoal {
  std::optional<int64_t> target_context;      // --target-context: sets the engine's context flag
  std::optional<int64_t> target_concurrency;  // --target-concurrency: requests at that context
  int64_t keep_free_bytes = 0;                // --keep-free: memory left to another process
  std::optional<int64_t> margin_bytes;        // --margin (default kDefaultMarginBytes)
  std::vector<std::string> fixed;             // --fix: engine flags tune must not change
  bool detail = true;   // false (fit): primary-knob bisection only, no tables, no log lines
};

// One setting of the primary knob (and the other knobs as in the row's deployment).
struct TradeoffRow {
  std::string knob, value;  // e.g. "--mem-fraction-static", "0.88"
  std::string label;        // "recommended", "engine default", "as given", or ""
  FlagList changes;         // other knobs set for this row (alternatives table)
  Verdict verdict = Verdict::Fits;
  bool safe = false;        // verdict fits and every stage keeps the margin at its worst case
  int64_t kv_tokens = 0;    // per KV pool (per DP group)
  double concurrency = 0;   // requests at the target context, all DP groups together
  int64_t capture_free_worst = 0;  // worst-case free memory after CUDA-graph capture (min over ranks)
  int64_t min_free_worst = 0;      // worst-case free memory over every stage and rank
  std::string limit;        // the stage with the least worst-case free memory, or the failure
  std::string shortfall;    // why this row does not serve the goal; "" when it does
};

struct TuneResult {
  bool feasible = false;    // a safe setting exists that meets the targets
  std::string reason;       // one phrase when !feasible
  std::string primary_knob;
  FlagList recommended;     // flags tune sets (engine spelling); empty values never
  FlagList launch_flags;    // every engine flag of the recommended launch
  std::string launch_command;
  Deployment deployment;    // the deployment at the recommendation (capacity as the engine sees it)
  Forecast forecast;        // plan() at the recommendation
  int64_t margin_bytes = kDefaultMarginBytes;
  bool margin_default = true;
  int64_t keep_free_bytes = 0;
  int64_t context_len = 0;  // the context in force
  std::optional<int64_t> target_concurrency;
  int groups = 1;           // independent KV pools (data-parallel / DP-attention groups)
  int64_t kv_tokens = 0;    // per pool
  double concurrency = 0;   // requests at context_len, all groups
  int64_t min_free_worst = 0;
  std::vector<TradeoffRow> tradeoffs;     // the primary knob around the recommendation
  std::vector<TradeoffRow> alternatives;  // other knobs, each with its best primary value
  std::vector<std::string> notes;
  int plans = 0;            // plan() calls made
};

// Searches the engine's knobs for `d` (engine flags in d.flags are starting values, those named
// in goal.fixed stay as they are). Throws InputError for contradictory input.
TuneResult tune(const Deployment& d, const TuneGoal& goal);

// The shell command that launches the engine with these flags (engine spelling).
std::string launch_command(const Deployment& d, const FlagList& flags);

enum class FitSort { Gpus, Kv, Headroom };

struct FitRequest {
  Deployment base;                       // engine, version, model and engine flags; GPU ignored
  std::vector<std::string> gpu_names;    // empty: the whole catalog
  int max_gpus = 8;
  std::vector<std::string> kv_dtypes;    // --kv-cache-dtype choices; empty: the engine default
  TuneGoal goal;
  FitSort sort = FitSort::Gpus;
  int nodes = 1;  // boxes of a single-GPU device (DGX Spark, Jetson) that may serve one deployment over the network
};

struct FitCandidate {
  std::string gpu;          // catalog name
  int gpus = 0;
  Parallel par;
  bool layer_split = false; // llama.cpp: the layers spread over the GPUs (--split-mode layer)
  std::string kv_dtype;     // as passed to the engine ("" = default)
  bool feasible = false;
  std::string reason;       // why not, one phrase
  Verdict verdict = Verdict::Refused;
  std::string primary_knob, primary_value;
  int64_t kv_tokens = 0;    // per pool
  int groups = 1;
  double concurrency = 0;   // at the target context, all groups
  int64_t min_free_worst = 0;
  FlagList recommended;
  std::string launch_command;
};

struct FitResult {
  std::string engine;                      // "sglang newest", "vllm 0.10.1"
  std::string model;                       // as given
  int64_t context_len = 0;                 // the target context (or the model's)
  std::optional<int64_t> target_concurrency;
  int64_t margin_bytes = kDefaultMarginBytes;
  std::vector<FitCandidate> candidates;    // feasible, ranked
  std::vector<FitCandidate> rejected;
  std::vector<std::string> notes;
  int evaluated = 0;                       // deployments tried
  int plans = 0;                           // plan() calls made
};

FitResult fit(const FitRequest& req);

// Command-line pieces of the tune and fit verbs (and the web API): the goal options, and the
// arguments without them (and without `drop`), for parse_deployment().
inline constexpr std::string_view kGoalOptions[] = {"--target-context", "--target-concurrency", "--keep-free", "--margin", "--fix"};
TuneGoal parse_tune_goal(const Args& args);
Args strip_options(const Args& args, std::initializer_list<std::string_view> drop = {});

nlohmann::ordered_json tune_json(const TuneResult& r);
void print_tune(std::ostream& out, const TuneResult& r);
nlohmann::ordered_json fit_json(const FitResult& r);
// `all`: every feasible row and every rejected one; else the best per GPU type.
void print_fit(std::ostream& out, const FitResult& r, bool all = false);

}  // namespace headroom
