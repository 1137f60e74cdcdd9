// doctor_fix_value: the doctor's value against the thread's resolution range (validate_fix_value.h).
//
// Tolerance beyond the working value, per knob kind:
// - fractions of the device (--gpu-memory-utilization, --mem-fraction-static, TensorRT-LLM's
//   free_gpu_memory_fraction): 0.02. The doctors' own margins are 0.01 - 0.02, the threads report
//   values in steps of 0.01 - 0.05, and 0.02 of an 80 GiB device (1.6 GiB) is about the CUDA-graph
//   or activation headroom such a fix buys: a value 0.02 past the one that worked is the same fix.
// - integer knobs (--max-model-len, --max-num-seqs, --max-num-batched-tokens, ...): a factor 1.25
//   past the working value. The 0.02 fraction margin is 10 - 20 % of a typical KV pool (0.1 - 0.2 of
//   the device); 25 % of a token or sequence count costs the same order, and covers the rounding to
//   the multiples engines and users prefer (blocks of 16 - 256 tokens, 1024-multiples, 8, 16, 32 ...).
// When the case does not give the failed value, the range is the working value widened by the same
// tolerance on both sides: without the start point, "between" cannot be judged.
#include "validate/validate_fix_value.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <string_view>

namespace headroom {

namespace {

enum class Knob { kFraction, kInteger };

struct KnobRow {
  std::string_view flag;
  Knob kind;
};

constexpr KnobRow kFixValueKnobs[] = {
    {"--gpu-memory-utilization", Knob::kFraction},
    {"--mem-fraction-static", Knob::kFraction},
    {"free_gpu_memory_fraction", Knob::kFraction},
    {"--kv-cache-free-gpu-memory-fraction", Knob::kFraction},
    {"--max-model-len", Knob::kInteger},
    {"--context-length", Knob::kInteger},
    {"--max-num-seqs", Knob::kInteger},
    {"--max-running-requests", Knob::kInteger},
    {"--max-num-batched-tokens", Knob::kInteger},
    {"--chunked-prefill-size", Knob::kInteger},
    {"--max-prefill-tokens", Knob::kInteger},
    {"--max-total-tokens", Knob::kInteger},
    {"--cuda-graph-max-bs", Knob::kInteger},
    {"--max_batch_size", Knob::kInteger},
    {"--max_num_tokens", Knob::kInteger},
    {"--max_seq_len", Knob::kInteger},
};

constexpr double kFractionTolerance = 0.02;
constexpr double kIntegerFactor = 1.25;

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    if (used != s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

Knob kind_of(const std::string& flag, double working) {
  for (const auto& r : kFixValueKnobs)
    if (r.flag == flag) return r.kind;
  return working > 0 && working < 1.0 ? Knob::kFraction : Knob::kInteger;  // a knob not in the table: by its value
}

// The working value moved `by` the tolerance away from `from` (beyond it) or towards it.
double beyond(Knob k, double working, bool up) {
  if (k == Knob::kFraction) return up ? working + kFractionTolerance : working - kFractionTolerance;
  return up ? working * kIntegerFactor : working / kIntegerFactor;
}

}  // namespace

std::optional<FixValueVerdict> judge_fix_value(const std::string& flag, const std::string& ours, const std::string& failed,
                                               const std::string& working) {
  const auto o = number(ours), w = number(working), f = number(failed);
  FixValueVerdict v;
  if (!w || !o) {
    if (working.empty() || ours.empty()) return std::nullopt;
    v.agree = ours == working;
    v.why = fmt::format("{} {} against the thread's {}: compared as text", flag, ours, working);
    return v;
  }
  const Knob k = kind_of(flag, *w);
  const double eps = 1e-9 * std::max(1.0, std::fabs(*w));
  if (f && *f != *w) {
    const bool up = *w > *f;  // the thread's change raised the value
    v.low = up ? *f : beyond(k, *w, false);
    v.high = up ? beyond(k, *w, true) : *f;
    // the failed value itself is no fix: the interval is open at that end
    const bool at_failed = std::fabs(*o - *f) <= eps;
    v.agree = !at_failed && *o >= v.low - eps && *o <= v.high + eps;
    v.why = up ? fmt::format("{}: failed at {}, worked at {}; accepted ({} .. {:g}]", flag, failed, working, failed, v.high)
               : fmt::format("{}: failed at {}, worked at {}; accepted [{:g} .. {})", flag, failed, working, v.low, failed);
  } else {
    v.low = beyond(k, *w, false);
    v.high = beyond(k, *w, true);
    v.agree = *o >= v.low - eps && *o <= v.high + eps;
    v.why = fmt::format("{}: worked at {}, failed value not given; accepted [{:g} .. {:g}]", flag, working, v.low, v.high);
  }
  return v;
}

}  // namespace headroom
