// SGLang's host terms from one startup log. SGLang prints free memory at each step, so each
// term is the gap between two logged figures less what the model explains:
//   CUDA context + NCCL   = capacity - "Load weight begin ... avail mem" (P)
//   after weights         = forecast free after weights (at that P) - "Load weight end ... avail mem" (A)
//   at capture begin      = forecast free at capture begin (at those P, A) - "Capture ... begin ... avail mem"
//   CUDA graphs (scale)   = logged capture memory ("mem usage" of the capture ends, else begin - end
//                           avail) over the estimated capture, the buffers headroom computes exactly kept.
#include <fmt/format.h>

#include "calibrate/calibrate_internal.h"
#include "calibrate/forecast_read.h"
#include "headroom/error.h"

namespace headroom::calib {

namespace {
void term(LogFit& fit, std::string name, std::string source, std::string how, std::optional<double> v = std::nullopt) {
  fit.terms.push_back({std::move(name), std::move(source), std::move(how), v});
}

void fit_graph(const LogScan& scan, LogFit& fit) {
  const auto& s = scan.summary;
  std::optional<int64_t> logged;
  std::string how;
  if (s.graph_bytes) {
    logged = s.graph_bytes->value;
    how = fmt::format("capture 'mem usage' {} (line {})", gib(*logged), s.graph_bytes->line);
  } else if (s.graph_begin_avail && s.graph_end_avail) {
    logged = s.graph_begin_avail->value - s.graph_end_avail->value;
    how = fmt::format("capture begin - end avail mem = {} (lines {}, {})", gib(*logged), s.graph_begin_avail->line, s.graph_end_avail->line);
  }
  if (!logged) return term(fit, "graph_scale", "model default", "the log prints no CUDA-graph capture end");
  const Forecast f = plan_with(fit, true);
  const int64_t total = stage_total(f, StageId::CudaGraph);
  const int64_t est = item_bytes(f, StageId::CudaGraph, "capture of") + item_bytes(f, StageId::CudaGraph, "piecewise prefill graphs only");
  if (est <= 0) return term(fit, "graph_scale", "model default", "the forecast captures no graph to scale");
  const double k = static_cast<double>(*logged - (total - est)) / static_cast<double>(est);
  if (!(k > 0.05 && k < 20)) return term(fit, "graph_scale", "model default", fmt::format("{}: a scale of {:.2f} is outside 0.05-20, not used", how, k));
  fit.graph_scale = k;
  term(fit, "graph_scale", "fitted", fmt::format("{} over the estimated capture {} (metadata and logits {} kept)", how, gib(est), gib(total - est)), k);
}
}  // namespace

void fit_sglang(const LogScan& scan, LogFit& fit) {
  const auto& s = scan.summary;
  const int64_t cap = fit.deployment.capacity_bytes;
  std::optional<int64_t> p;
  std::string p_how;
  if (s.init_avail) {
    p = s.init_avail->value;
    p_how = fmt::format("'Load weight begin ... avail mem' {} (line {})", gib(*p), s.init_avail->line);
  } else if (s.post_weights_avail && s.weights) {
    p = s.post_weights_avail->value + s.weights->value;
    p_how = fmt::format("'Load weight end' avail mem + mem usage = {} (line {})", gib(*p), s.post_weights_avail->line);
  }
  if (!p) fail_input(fit.path, "Load weight begin", "the log prints no free memory before the weights ('Load weight begin ... avail mem=X GB'): nothing to calibrate");
  if (*p > cap) fail_input(fit.path, "--gpu-memory", fmt::format("the log has {} free before the weights, more than the capacity {}: give --gpu-memory as "
                                                                "the host reports its total (PyTorch's total_memory)", gib(*p), gib(cap)));
  fit.at_tp.init_bytes = cap - *p;
  term(fit, "init_bytes", "logged", fmt::format("capacity {} - {}", gib(cap), p_how), static_cast<double>(cap - *p));

  if (s.post_weights_avail) {
    const auto fw = free_after(plan_with(fit, true), StageId::Weights);
    if (!fw) fail_input(fit.path, "weights", "the rebuilt deployment does not reach its weights in the forecast");
    fit.at_tp.after_load_extra_bytes = *fw - s.post_weights_avail->value;
    term(fit, "after_load_extra_bytes", "fitted",
         fmt::format("forecast free after weights {} - 'Load weight end ... avail mem' {} (line {}): weights, their allocator slack and any other "
                     "process's growth cannot be told apart by one log",
                     gib(*fw), gib(s.post_weights_avail->value), s.post_weights_avail->line),
         static_cast<double>(*fit.at_tp.after_load_extra_bytes));
  } else {
    term(fit, "after_load_extra_bytes", "model default", "the log prints no 'Load weight end ... avail mem'");
  }
  if (s.graph_begin_avail) {
    const auto fb = free_after(plan_with(fit, true), StageId::Workspaces);
    if (!fb) fail_input(fit.path, "KV cache", "the forecast of the rebuilt deployment allocates no KV cache (the log's does): check its flags");
    fit.at_tp.before_capture_extra_bytes = *fb - s.graph_begin_avail->value;
    term(fit, "before_capture_extra_bytes", "fitted",
         fmt::format("forecast free at capture begin {} - 'Capture ... begin ... avail mem' {} (line {}): workspaces and the KV pool's own "
                     "error are one term here",
                     gib(*fb), gib(s.graph_begin_avail->value), s.graph_begin_avail->line),
         static_cast<double>(*fit.at_tp.before_capture_extra_bytes));
    fit.capture_begin_free = s.graph_begin_avail->value;
    fit.capture_begin_basis = fmt::format("'Capture ... begin ... avail mem' (line {})", s.graph_begin_avail->line);
  } else {
    term(fit, "before_capture_extra_bytes", "model default", "the log prints no 'Capture cuda graph begin ... avail mem'");
  }
  fit_graph(scan, fit);
}

}  // namespace headroom::calib
