// diagnose_llamacpp(): a llama.cpp log -> the failing buffer and device (weights, kv_pool,
// compute_buffer or runtime), the arithmetic from the log's own per-device numbers (request vs
// free, the buffers already made), the deployment rebuilt where the model can be (the planner's
// fixes then), else fixes from the log's numbers alone (doctor_llamacpp_fixes.cpp).
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "doctor/doctor_internal.h"
#include "doctor/log_parse.h"
#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/llamacpp_plan.h"
#include "headroom/units.h"

namespace headroom {

namespace {

std::string mib(int64_t b) { return fmt::format("{:.2f} MiB", static_cast<double>(b) / static_cast<double>(MiB)); }

const LlamaFailure* failing(const LogScan& s) {
  for (const auto& f : s.llama.failures)
    if (f.line == s.failure_line) return &f;
  return nullptr;
}

Cause cause_of(const std::string& stage) {
  if (stage == "weights") return Cause::WeightsDoNotFit;
  if (stage == "kv_pool") return Cause::KvCacheDoesNotFit;
  if (stage == "compute_buffer") return Cause::ComputeBufferDoesNotFit;
  return Cause::ActivationPeak;
}

std::string reached(const LlamaLogFacts& L) {
  if (L.ready_line) return "ready";
  std::string r = L.offloaded_line ? "weights" : "";
  for (const auto& d : L.devices) {
    if (d.model && r.empty()) r = "weights";
    if (d.kv && r != "compute_buffer") r = "kv_pool";
    if (d.compute) r = "compute_buffer";
  }
  if (L.kv_size && r != "compute_buffer") r = "kv_pool";
  return r;
}

// The GPUs the log lists, as --gpu names (catalog rows by reported name and VRAM); empty when any is unknown.
std::string gpu_list(const LlamaLogFacts& L) {
  std::string out;
  for (const auto& d : L.devices) {
    if (d.description.empty() || !d.total) continue;
    const GpuSpec* g = find_gpu_for_host(d.description, d.total->value);
    if (!g) return "";
    out += (out.empty() ? "" : ",") + g->name;
  }
  return out;
}

// The arithmetic of the failing allocation on its device.
void failure_arithmetic(const LogScan& s, const LlamaFailure& f, Diagnosis& dx) {
  const auto& L = s.llama;
  const LlamaDevice* d = L.device(f.device);
  const std::string dev = f.device.empty() ? "the device" : f.device;
  if (f.request >= 0) dx.arithmetic.push_back(fmt::format("{} requested {} on {} (line {})", f.stage == "runtime" ? "the failing call" : "llama.cpp",
                                                          mib(f.request), dev, f.line));
  if (!d) return;
  int64_t held = 0;
  std::string parts;
  auto add = [&](const std::optional<LogFigure>& x, const char* what) {
    if (!x || x->line > f.line) return;
    held += x->value;
    parts += fmt::format("{}{} {} (line {})", parts.empty() ? "" : " + ", what, mib(x->value), x->line);
  };
  add(d->model, "model buffer");
  add(d->kv, "KV buffer");
  add(d->compute, "compute buffer");
  if (!parts.empty()) dx.arithmetic.push_back(fmt::format("{} already held {} = {}", dev, parts, mib(held)));
  if (d->free) {
    dx.arithmetic.push_back(fmt::format("{} had {} free at start (line {}){}", dev, mib(d->free->value), d->free->line,
                                        d->total ? fmt::format(" of {}", mib(d->total->value)) : ""));
    if (f.request >= 0) {
      const int64_t need = held + f.request, short_by = need - d->free->value;
      dx.arithmetic.push_back(short_by > 0 ? fmt::format("{} + {} = {} > {}: short by {}", mib(held), mib(f.request), mib(need), mib(d->free->value), mib(short_by))
                                           : fmt::format("{} + {} = {} <= {} free at start: by the log's own figures it fits, so something "
                                                         "the log does not count (another process, the driver, a free figure this backend "
                                                         "over-reports) took {}",
                                                         mib(held), mib(f.request), mib(need), mib(d->free->value), mib(-short_by + 1)));
    }
  }
}

void buffer_arithmetic(const LlamaLogFacts& L, Diagnosis& dx) {
  for (const auto& d : L.devices) {
    if (!d.model && !d.kv && !d.compute) continue;
    std::string row;
    if (d.model) row += ", model " + mib(d.model->value);
    if (d.kv) row += ", KV " + mib(d.kv->value);
    if (d.compute) row += ", compute " + mib(d.compute->value);
    dx.arithmetic.push_back(d.name + ":" + row.substr(1));
  }
  if (L.layers_offloaded >= 0) dx.arithmetic.push_back(fmt::format("offloaded {}/{} layers to the GPU (line {})", L.layers_offloaded, L.layers_total, L.offloaded_line));
  if (L.kv_size && L.kv_cells > 0)
    dx.arithmetic.push_back(fmt::format("KV cache {} for {} cells: {:.1f} KiB per cell (line {})", mib(L.kv_size->value), L.kv_cells,
                                        static_cast<double>(L.kv_size->value) / static_cast<double>(L.kv_cells) / 1024.0, L.kv_size->line));
  if (L.fit_projected && L.fit_free)
    dx.arithmetic.push_back(fmt::format("--fit projected {} against {} free (line {})", mib(L.fit_projected->value), mib(L.fit_free->value), L.fit_projected->line));
}

// --fit gave up before the failure: llama.cpp only warns and starts with the values as set
// (llama.cpp#27872), so the start went on short by what fit had projected.
void fit_gave_up(const LlamaLogFacts& L, const LlamaFailure& f, Diagnosis& dx) {
  if (L.fit_gave_up.empty() || L.fit_gave_up_line > f.line) return;
  dx.arithmetic.push_back(fmt::format("--fit gave up (line {}): {}; the start went on with the values as set", L.fit_gave_up_line, L.fit_gave_up));
  using logscan_detail::icontains;
  if (icontains(L.fit_gave_up, "n_gpu_layers already set")) {
    dx.explanation += " llama.cpp's --fit would have lowered the layers per device, but a number given to -ngl stops it.";
    dx.fixes.push_back({"--n-gpu-layers", "auto", "let --fit choose the layers per device, keeping 1024 MiB free on each: -ngl auto is the "
                                                  "default it may change, a number (or 'all') stops it (common/fit.cpp)"});
  } else if (icontains(L.fit_gave_up, "tensor_buft_overrides")) {
    dx.explanation += " llama.cpp's --fit gave up because the command sets tensor overrides (-ot, --cpu-moe or --n-cpu-moe): without "
                      "them it moves the experts of whole layers to host memory itself until every device keeps 1024 MiB "
                      "(llama.cpp#27872).";
  } else if (icontains(L.fit_gave_up, "tensor_split")) {
    dx.explanation += " llama.cpp's --fit gave up because the command sets --tensor-split: without it fit splits the layers itself.";
  }
}

void llama_evidence(const LogScan& s, Diagnosis& dx) {
  std::vector<LogEvidence> ev;
  for (const auto& e : s.evidence)
    if (e.kind.rfind("llamacpp.", 0) == 0 || e.kind == "command" || e.line == s.failure_line) ev.push_back(e);
  if (ev.size() > 24) ev.erase(ev.begin(), ev.end() - 24);  // the failure and the lines before it
  dx.evidence = std::move(ev);
}

std::string explanation(const LlamaFailure& f, const std::string& stage, StageBasis basis) {
  const std::string dev = f.device.empty() ? "a device" : f.device;
  std::string what = stage == "weights"          ? "the model buffer (the weights of the layers offloaded to it)"
                     : stage == "kv_pool"        ? "the KV cache buffer"
                     : stage == "compute_buffer" ? "the compute buffer (the graph of the largest ubatch, reserved after the weights and the KV cache)"
                                                 : "memory while computing a batch, after the start";
  std::string s = fmt::format("llama.cpp could not allocate {} on {}.", what, dev);
  if (basis == StageBasis::Guess)
    s += " Nothing printed before the failure names the buffer: the first allocation of a start (the model buffers) is assumed.";
  return s;
}

}  // namespace

// The deployment a llama.cpp log implies: llama-server's flags from its launch line, the model
// where headroom can read it (--model/--quant given, -hf REPO:QUANT of a catalog model, a local
// GGUF), the GPUs from the device lines; gaps say what is missing.
std::optional<Deployment> rebuild_llamacpp(const LogScan& s, const Args& user, std::vector<std::string>& gaps) {
  std::vector<std::string> a = {"--engine", user.get_or("--engine", s.engine_version.empty() ? "llamacpp" : "llamacpp@" + s.engine_version)};
  if (a[1].find('@') == std::string::npos && !s.engine_version.empty()) a[1] += "@" + s.engine_version;
  std::string model = user.get_or("--model", "");
  std::string quant = user.get_or("--quant", "");
  if (model.empty())
    if (auto it = s.flags.find("--hf-repo"); it != s.flags.end()) {
      const size_t colon = it->second.find(':');
      model = it->second.substr(0, colon);
      if (model.size() > 5 && model.ends_with("-GGUF")) model.resize(model.size() - 5);
      if (quant.empty() && colon != std::string::npos) quant = it->second.substr(colon + 1);
    }
  if (model.empty())
    if (auto it = s.flags.find("--model"); it != s.flags.end() && std::filesystem::exists(it->second)) model = it->second;
  if (model.empty()) {
    gaps.push_back(fmt::format("the model is not readable here ({}): the fixes come from the log's numbers; give --model HF_ID --quant TYPE "
                               "(or the GGUF file) for the planner's",
                               s.llama.model_file.empty() ? (s.flags.count("--model") ? s.flags.at("--model") : "no -m in the log") : s.llama.model_file));
    return std::nullopt;
  }
  a.insert(a.end(), {"--model", model});
  if (!quant.empty() && !model.ends_with(".gguf")) a.insert(a.end(), {"--quant", quant});
  std::string gpus = user.get_or("--gpu", gpu_list(s.llama));
  if (gpus.empty() && !user.has("--gpu-memory")) {
    gaps.push_back("the GPUs are not known (no device line with a catalog GPU): give --gpu");
    return std::nullopt;
  }
  if (!gpus.empty()) a.insert(a.end(), {"--gpu", gpus});
  for (const auto& [k, v] : user.options())
    if (k != "--engine" && k != "--model" && k != "--quant" && k != "--gpu" && k != "--json") a.insert(a.end(), {k, v});
  const auto& known = llamacpp::llamacpp_flags();
  for (const auto& [k, v] : s.flags) {
    if (user.has(k) || std::find(known.begin(), known.end(), k) == known.end()) continue;
    if (v == "true" && is_boolean_flag(k)) a.push_back(k);
    else a.insert(a.end(), {k, v});
  }
  try {
    return parse_deployment(Args::parse(a));
  } catch (const InputError& e) {
    gaps.push_back(std::string("could not rebuild the deployment: ") + e.what());
    return std::nullopt;
  }
}

Diagnosis diagnose_llamacpp(const LogScan& scan0, const Args& args) {
  // The log as the user completes it: their flags win over the log's; a log the reader did not
  // take for llama.cpp (--engine llamacpp given) gets llama.cpp's reading of its failure lines.
  LogScan scan = scan0;
  for (const auto& [k, v] : args.options())
    if (k.rfind("--", 0) == 0 && k != "--json" && k != "--brief" && k != "--engine") scan.flags[k] = v;
  if (scan.engine != LogEngine::LlamaCpp) {
    scan.engine = LogEngine::LlamaCpp;
    logscan_detail::finish_llamacpp(scan);
  }
  Diagnosis dx;
  dx.engine = "llamacpp";
  const auto& L = scan.llama;
  dx.reached_stage = reached(L);
  dx.rank = scan.failure_device;
  const LlamaFailure* f = failing(scan);
  if (!f) {
    dx.stage = "none";
    const bool ok = scan.outcome == Outcome::Ok;
    dx.cause = ok ? Cause::None : scan.errors.empty() ? Cause::NoErrorInLog : Cause::NotOom;
    dx.explanation = ok ? "llama.cpp made every buffer it needed: a healthy start." 
                        : scan.errors.empty() ? "The log shows no allocation failure and no finished start (the excerpt may be cut before the error)."
                                              : "The log's errors are not llama.cpp memory failures.";
    buffer_arithmetic(L, dx);
    llama_evidence(scan, dx);
    return dx;
  }
  std::optional<Deployment> dep = rebuild_llamacpp(scan, args, dx.gaps);
  dx.stage = scan.failure_stage.empty() ? "weights" : scan.failure_stage;
  dx.stage_basis = scan.failure_stage.empty() ? StageBasis::Guess : StageBasis::Log;
  dx.cause = cause_of(dx.stage);
  dx.explanation = explanation(*f, dx.stage, dx.stage_basis);
  failure_arithmetic(scan, *f, dx);
  buffer_arithmetic(L, dx);
  llama_evidence(scan, dx);
  if (dep) llamacpp_plan_fixes(scan, *f, *dep, dx);
  if (dx.fixes.empty()) llamacpp_static_fixes(scan, *f, dx);
  fit_gave_up(L, *f, dx);
  return dx;
}

}  // namespace headroom
