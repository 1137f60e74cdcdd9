// Pieces tune and fit share: the knobs each engine exposes (in its own spelling), flag edits
// on a Deployment, one plan() summarised against the safety margin, and the bisection of the
// primary knob (the memory fraction) for the largest value that keeps every stage safe.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/advise.h"
#include "headroom/engine.h"
#include "headroom/forecast.h"

namespace headroom::advise {

// The knobs of one engine, spelled as the engine spells them; "" where the engine has none.
struct EngineKnobs {
  std::string fraction;        // the primary knob: share of memory for the static pools / KV
  double lo = 0.05, hi = 0.99, step = 0.01;  // its search grid
  std::string kv_bytes;        // absolute KV budget (vLLM --kv-cache-memory-bytes)
  std::string context;         // context length
  std::string max_running;     // cap on running requests / batch size
  std::string graph_bs;        // largest decode CUDA-graph batch
  std::string prefill_tokens;  // tokens per prefill step
  std::string kv_dtype;        // KV-cache dtype
  std::string fp8_kv;          // the FP8 value of kv_dtype
};
const EngineKnobs& knobs_for(EngineKind engine);

// Replaces every value of `name` by `value` (appended at the end).
void set_flag(Deployment& d, std::string_view name, std::string value);
void erase_flag(Deployment& d, std::string_view name);
bool is_fixed(const TuneGoal& g, std::string_view flag);

// Independent KV pools of a deployment: data-parallel replicas or DP-attention groups.
int kv_groups(const Deployment& d);

// Which way a failing setting of the primary knob is off.
enum class Side { Low, Ok, High };

// One plan() summarised.
struct Point {
  double x = 0;                 // the primary knob's value (as the user would write it)
  Side side = Side::Ok;
  Verdict verdict = Verdict::Refused;
  bool safe = false;            // fits, every stage keeps the margin at its worst case
  int64_t kv_tokens = 0;
  int64_t max_running = 0;
  int64_t context = 0;
  int64_t min_free_worst = 0, capture_free_worst = 0;
  std::string limit;            // least-headroom stage, or "<stage>: <failure>"
  std::optional<Failure> failure;
  int64_t weights_bytes = 0;    // largest per-rank weights (free after init - free after weights)
  bool weights_overflow = false;
};

// The primary knob of a search and how its value maps onto the deployment planned. With
// --keep-free the deployment's capacity is reduced; vLLM's utilization is a share of the
// total memory, so the value planned is scaled by total / reduced to keep the same budget.
struct Primary {
  std::string flag;
  bool bytes = false;           // kv_bytes mode: the value is bytes
  double lo = 0, hi = 0, step = 0;
  double scale = 1.0;           // planned value = x * scale (fraction mode)
  std::string format(double x) const;   // as the user writes it
  int steps() const;            // grid points - 1
  double at(int i) const;       // grid value i
};
Primary primary_for(const Deployment& d, const TuneGoal& g, int64_t real_capacity);

// Points already planned in one search session, keyed by every engine flag (the primary
// knob's value included); the deployment's GPU and parallelism stay fixed within a session.
using Memo = std::map<std::string, Point>;

// Plans `d` with the primary knob at x and classifies it. `keep` receives the forecast (then
// the memo is bypassed: a kept forecast is always planned with `opt`).
Point evaluate(Deployment& d, const Primary& p, double x, int64_t margin, const PlanOptions& opt, int* plans,
               Forecast* keep = nullptr, Memo* memo = nullptr);

struct PrimaryResult {
  bool found = false;     // some grid value is not on the High side
  Point best;             // the largest such value (or the lowest tried when !found)
  std::vector<Point> tried;
};
// The largest grid value that is not High (assumes High is an upper set: a larger fraction
// never frees memory for the later stages). Plain bisection; or, given `known_ok` (a grid value
// known not to be High, e.g. the answer before a change that only lowers memory use), a
// galloping search up from it, which usually needs two or three plans.
PrimaryResult search_primary(Deployment& d, const Primary& p, int64_t margin, int* plans, Memo* memo = nullptr,
                             std::optional<double> known_ok = std::nullopt);

// "KV holds only N tokens < target M", "out of memory at cuda_graph at --mem-fraction-static
// 0.95" etc.: why a point does not serve the goal, or "".
// A context shorter than the target (TensorRT-LLM shrinks max_seq_len to what the pool holds)
// misses the goal as well.
std::string shortfall(const Point& pt, const Deployment& d, const Primary& p, const TuneGoal& g);

// The least value of the engine's fraction knob whose plan holds at least `target` KV tokens
// (compare's "same KV" column). The top of the accepted range can be refused outright (vLLM:
// free memory at start below utilization x total), so it walks down from the top by the grid
// step to the first value that holds the target, then bisects below it to 1e-4.
struct KvReach {
  bool found = false;
  double value = 0;          // the least value found
  Forecast at;               // the plan at that value
  int64_t most_tokens = 0;   // not found: the most any value held, and at which value
  double most_at = 0;
};
KvReach least_fraction_for_kv(const Deployment& d, int64_t target);

// The walks the doctor takes down one knob (tune and fit bisect with search_primary). `fits(x)`
// plans x and returns the forecast when it is acceptable, else nullopt.
// The first value of the decimal grid hi, hi - step, ... >= lo (integers in units of 1/scale, so
// no rounding creeps in) that fits.
template <class Fits>
std::optional<std::pair<double, Forecast>> first_fitting_down(int hi, int lo, int step, double scale, Fits fits) {
  for (int i = hi; i >= lo; i -= step) {
    const double x = i / scale;
    if (std::optional<Forecast> f = fits(x)) return std::make_pair(x, std::move(*f));
  }
  return std::nullopt;
}
// The first of start, start / 2, start / 4, ... >= floor that fits.
template <class Fits>
std::optional<std::pair<int64_t, Forecast>> first_fitting_halving(int64_t start, int64_t floor, Fits fits) {
  for (int64_t x = start; x >= floor && x > 0; x /= 2)
    if (std::optional<Forecast> f = fits(x)) return std::make_pair(x, std::move(*f));
  return std::nullopt;
}

}  // namespace headroom::advise
