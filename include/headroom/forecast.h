// The result of playing a deployment's per-rank timeline against its GPUs: stages, what each
// stage allocated, free memory after it (with a range for estimated terms), the verdict.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "headroom/stage_names.h"

namespace headroom {

enum class Verdict { Fits, AtRisk, Oom, Refused };
std::string_view verdict_name(Verdict v);  // "fits" | "at_risk" | "oom" | "refused"

// One allocation (or release, when bytes < 0). Estimated items carry the value they take in
// the favourable scenario (low: every estimated term at its best end) and the unfavourable
// one (high). For sizes an engine derives from free memory (the KV pool) low may exceed high.
struct Item {
  std::string what;
  int64_t bytes = 0;
  bool estimated = false;
  int64_t low = 0, high = 0;  // == bytes when exact
};

struct Stage {
  StageId id = StageId::Init;
  std::vector<Item> items;
  int64_t free_bytes_after = 0;
  // Free memory after the stage if every estimated term so far lands at its high (worst) or
  // low (best) end.
  int64_t free_worst = 0, free_best = 0;
  // The least free memory at any point of the stage (a temporary allocated and given back
  // within it, e.g. vLLM's sampler warm-up, peaks there): central and worst-case.
  int64_t min_free = 0, min_free_worst = 0;
  bool estimated = false;
};

struct RankForecast {
  int rank = 0;
  int64_t capacity_bytes = 0;
  std::vector<Stage> stages;
};

struct Failure {
  StageId stage = StageId::Init;
  int rank = 0;
  int64_t request_bytes = 0;
  int64_t free_bytes = 0;
  std::string message;
};

// One device's buffers, for engines that size memory per device rather than per stage (llama.cpp:
// "CUDA0 model buffer size", "KV buffer size", "compute buffer size"; the host as "CPU").
struct DeviceMemory {
  std::string name;
  bool host = false;
  int layers = 0;
  int64_t capacity_bytes = 0;  // the host's: --host-memory, else 0 (not checked)
  int64_t model_buffer_bytes = 0, kv_buffer_bytes = 0, compute_buffer_bytes = 0, output_buffer_bytes = 0;
  int64_t recurrent_state_bytes = 0;
  int64_t compute_low_bytes = 0, compute_high_bytes = 0;  // the compute buffer is an estimate
  int64_t indexer_cache_bytes = 0;  // a second KV cache (llama.cpp's DSA indexer keys)
};

struct Forecast {
  Verdict verdict = Verdict::Fits;
  std::string engine, version, era;  // era: which version rules were used and why
  std::vector<std::pair<std::string, std::string>> settings;  // engine flag -> value in force
  int64_t kv_tokens = 0;         // engine's KV capacity (min over ranks)
  int64_t max_running_requests = 0;
  int64_t context_len = 0;
  double max_concurrency = 0;    // kv_tokens / context_len (requests at full context)
  int64_t headroom_bytes = 0;    // free memory at steady state (min over ranks), central estimate
  std::optional<Failure> failure;
  // At the unfavourable end of the estimates the engine would refuse (its KV cache could not hold
  // one request): one of the reasons for "at_risk", the one a shorter context or more memory fixes.
  bool refused_at_worst = false;
  std::vector<RankForecast> ranks;
  std::vector<DeviceMemory> devices;  // llama.cpp: every GPU, then the host
  std::vector<std::string> log;    // lines the engine would print, in its format
  // The host profile whose terms replaced the estimates ("" when none): JSON "calibrated_host".
  std::string calibrated_host;
  std::vector<std::string> notes;  // assumptions, estimates, warnings

  const std::string* setting(std::string_view key) const;
  // Appends rank `rank` with the timeline of ranks[index] (ranks holding the same bytes play the
  // same startup; engines simulate each distinct one once).
  void repeat_rank(size_t index, int rank);
};

}  // namespace headroom
