// vLLM's host terms from one startup log. vLLM prints its budget's terms (by version: "Free
// memory on device (F/T GiB) on startup", "Initial free memory", "X GiB for consumed memory
// (weights + non-torch), Y GiB for peak activation, Z GiB for CUDAGraph memory", "non-torch
// memory", "Estimated CUDA graph memory", "Graph capturing finished ... took X GiB"):
//   CUDA context        = capacity - free at startup
//   non-torch growth    = as logged, else consumed - weights, else FITTED to the logged KV memory
//                         ("Available KV cache memory") with the other terms held: it then also
//                         carries the weights' forecast error, which one log cannot separate
//   activation, graphs  = logged / estimated (scales, so they carry over to other models)
#include <fmt/format.h>

#include "calibrate/calibrate_internal.h"
#include "calibrate/forecast_read.h"
#include "headroom/error.h"

namespace headroom::calib {

namespace {
void term(LogFit& fit, std::string name, std::string source, std::string how, std::optional<double> v = std::nullopt) {
  fit.terms.push_back({std::move(name), std::move(source), std::move(how), v});
}

// logged / estimated for one term, when both are there and the ratio is sane.
void fit_scale(LogFit& fit, const char* name, const std::optional<LogFigure>& logged, int64_t est, const char* line, std::optional<double>& out) {
  if (!logged) return term(fit, name, "model default", fmt::format("the log prints no {}", line));
  if (est <= 0) return term(fit, name, "model default", fmt::format("{} {} logged, none in the forecast", line, gib(logged->value)));
  const double k = static_cast<double>(logged->value) / static_cast<double>(est);
  if (!(k > 0.05 && k < 20)) return term(fit, name, "model default", fmt::format("{} {} over estimate {}: {:.2f} is outside 0.05-20, not used", line, gib(logged->value), gib(est), k));
  out = k;
  term(fit, name, "fitted", fmt::format("{} {} (line {}) over the estimate {}", line, gib(logged->value), logged->line, gib(est)), k);
}

void fit_non_torch(const LogScan& scan, LogFit& fit) {
  const auto& s = scan.summary;
  if (s.non_torch) {
    fit.at_tp.non_torch_bytes = s.non_torch->value;
    return term(fit, "non_torch_bytes", "logged", fmt::format("'non-torch memory' {} (line {})", gib(s.non_torch->value), s.non_torch->line),
                static_cast<double>(s.non_torch->value));
  }
  if (s.consumed && s.weights && s.consumed->value >= s.weights->value) {
    fit.at_tp.non_torch_bytes = s.consumed->value - s.weights->value;
    return term(fit, "non_torch_bytes", "logged",
                fmt::format("consumed (weights + non-torch) {} (line {}) - 'Model loading took' {}", gib(s.consumed->value), s.consumed->line,
                            gib(s.weights->value)),
                static_cast<double>(*fit.at_tp.non_torch_bytes));
  }
  if (!s.kv_bytes) return term(fit, "non_torch_bytes", "model default", "the log prints neither non-torch memory nor the KV cache memory");
  const Forecast f = plan_with(fit, true);
  const int64_t nt = item_bytes(f, StageId::ProfileRun, "non-torch memory growth");
  const int64_t kv = stage_total(f, StageId::KvPool);
  if (kv <= 0) return term(fit, "non_torch_bytes", "model default", "the forecast allocates no KV cache to fit against");
  fit.at_tp.non_torch_bytes = nt + (kv - s.kv_bytes->value);
  term(fit, "non_torch_bytes", "fitted",
       fmt::format("estimate {} + forecast KV memory {} - 'Available KV cache memory' {} (line {}): also carries the weights' forecast error "
                   "(one log cannot separate them)",
                   gib(nt), gib(kv), gib(s.kv_bytes->value), s.kv_bytes->line),
       static_cast<double>(*fit.at_tp.non_torch_bytes));
}
}  // namespace

void fit_vllm(const LogScan& scan, LogFit& fit) {
  const auto& s = scan.summary;
  const int64_t cap = fit.deployment.capacity_bytes;
  if (s.init_avail && s.init_avail->value > cap)
    fail_input(fit.path, "--gpu-memory", fmt::format("the log has {} free at startup, more than the capacity {}: give --gpu-memory as the host "
                                                     "reports its total (the log's 'F/T GiB')", gib(s.init_avail->value), gib(cap)));
  if (s.init_avail) {
    fit.at_tp.init_bytes = cap - s.init_avail->value;
    term(fit, "init_bytes", "logged", fmt::format("capacity {} - free at startup {} (line {})", gib(cap), gib(s.init_avail->value), s.init_avail->line),
         static_cast<double>(*fit.at_tp.init_bytes));
  } else {
    term(fit, "init_bytes", "model default", "the log prints no free memory at startup ('Free memory on device' / 'Initial free memory')");
  }
  const Forecast f = plan_with(fit, false);
  fit_scale(fit, "activation_scale", s.activation, item_bytes(f, StageId::ProfileRun, "profile_run activation peak") + item_bytes(f, StageId::ProfileRun, "sparse-attention workspace"),
            "peak activation", fit.activation_scale);
  fit_scale(fit, "graph_estimate_scale", s.graph_estimate, item_bytes(f, StageId::ProfileRun, "CUDA-graph memory estimate"), "estimated CUDA graph memory",
            fit.graph_estimate_scale);
  fit_scale(fit, "graph_scale", s.graph_bytes, stage_total(f, StageId::CudaGraph), "CUDA-graph memory", fit.graph_scale);
  fit_non_torch(scan, fit);
  // Free memory when capture begins, from the logged figures: free at start - weights - non-torch - KV.
  if (s.init_avail && s.weights && s.kv_bytes && fit.at_tp.non_torch_bytes) {
    fit.capture_begin_free = s.init_avail->value - s.weights->value - *fit.at_tp.non_torch_bytes - s.kv_bytes->value;
    fit.capture_begin_basis = "derived: free at startup - weights - non-torch - KV cache memory, as logged";
  }
}

}  // namespace headroom::calib
