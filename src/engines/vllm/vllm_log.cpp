// Number formats of vLLM's log lines: "%.2f" GiB (to ~0.11), format_gib (0.12+: round to
// two decimals, Python float repr, so 51.1 not 51.10) and f"{n:,}" token counts; and the
// --kv-cache-memory suggestion line of gpu_worker.py in its three forms.
#include <cmath>
#include <fmt/format.h>

#include "engines/vllm/vllm_rules.h"
#include "headroom/units.h"

namespace headroom::vllm {

std::string gib_fmt(int64_t bytes) {
  // vllm/utils/mem_utils.py format_gib: round(b / GiB_bytes, 2), printed by Python's repr.
  double r = std::round(to_gib(bytes) * 100.0) / 100.0;
  std::string s = fmt::format("{:.2f}", r);
  if (s.size() > 3 && s.back() == '0') s.pop_back();  // 51.10 -> 51.1, 0.00 -> 0.0
  return s;
}

std::string gib(const Era& era, int64_t bytes) { return era.format_gib ? gib_fmt(bytes) : gib2(bytes); }

namespace {
// Python's repr of a float: 0.9 -> "0.9", 1.0 -> "1.0".
std::string py_float(double x) {
  std::string s = fmt::format("{}", x);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}
}  // namespace

std::string kv_suggestion_line(const Era& era, const KvSuggestion& k, int64_t* to_requested, int64_t* to_gpu) {
  // vllm/v1/worker/gpu_worker.py compile_or_warm_up_model (PR #21489 and later), after
  // capture_model(): redundancy_buffer_memory = 150 MiB;
  //   non_kv = weights + peak_activation + non_torch + cuda_graph_memory_bytes  (L18a)
  //   non_kv = total_consumed + peak_activation + cuda_graph_memory_bytes       (L18b)
  //   to_requested = int(requested_memory) - non_kv - 150 MiB
  //   to_gpu       = init_snapshot.free_memory - non_kv - 150 MiB
  // and "Current kv cache memory in use" is available_kv_cache_memory_bytes, the budget sized
  // before capture. Every GiB figure is round(b / 2^30, 2) printed by Python (a GiB lambda,
  // later format_gib), so trailing zeros are dropped in every era.
  // The fit figure is below the current KV memory by the 150 MiB buffer plus the captured graph
  // memory, minus the applied CUDA-graph estimate where `available` had subtracted it but the
  // line does not count it (L18a); in L18b peak_activation already holds the applied estimate,
  // so the graphs are charged twice (estimate + actual) against the fit figure.
  const int64_t buffer = 150LL * 1024 * 1024;
  const int64_t consumed = k.weights + k.non_torch;
  const int64_t non_kv = consumed + k.peak_activation + k.graph_actual;
  const int64_t req = k.requested - non_kv - buffer;
  const int64_t gpu = k.free_at_start - non_kv - buffer;
  if (to_requested) *to_requested = req;
  if (to_gpu) *to_gpu = gpu;
  const std::string head = fmt::format("Free memory on device ({}/{} GiB) on startup. Desired GPU memory utilization is ({}, {} GiB). ",
                                       gib_fmt(k.free_at_start), gib_fmt(k.total), py_float(k.utilization), gib_fmt(k.requested));
  if (era.total_consumed)
    return head + fmt::format("Actual usage is {} GiB for consumed memory (weights + non-torch), {} GiB for peak activation, and {} GiB for CUDAGraph "
                              "memory. Replace gpu_memory_utilization config with `--kv-cache-memory={}` ({} GiB) to fit into requested memory, or "
                              "`--kv-cache-memory={}` ({} GiB) to fully utilize gpu memory. Current kv cache memory in use is {} GiB.",
                              gib_fmt(consumed), gib_fmt(k.peak_activation), gib_fmt(k.graph_actual), req, gib_fmt(req), gpu, gib_fmt(gpu),
                              gib_fmt(k.kv_available));
  const std::string usage = fmt::format("Actual usage is {} GiB for weight, {} GiB for peak activation, {} GiB for non-torch memory, and {} GiB for "
                                        "CUDAGraph memory. ",
                                        gib_fmt(k.weights), gib_fmt(k.peak_activation), gib_fmt(k.non_torch), gib_fmt(k.graph_actual));
  if (era.suggestion_gib)
    return head + usage +
           fmt::format("Replace gpu_memory_utilization config with `--kv-cache-memory={}` ({} GiB) to fit into requested memory, or "
                       "`--kv-cache-memory={}` ({} GiB) to fully utilize gpu memory. Current kv cache memory in use is {} GiB.",
                       req, gib_fmt(req), gpu, gib_fmt(gpu), gib_fmt(k.kv_available));
  return head + usage +
         fmt::format("Replace gpu_memory_utilization config with `--kv-cache-memory={}` to fit into requested memory, or `--kv-cache-memory={}` to "
                     "fully utilize gpu memory. Current kv cache memory in use is {} bytes.",
                     req, gpu, k.kv_available);
}

std::string commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace headroom::vllm
