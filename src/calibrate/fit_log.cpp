// One log -> its deployment (the doctor's reading: scan_log_file, rebuild_args, parse_deployment)
// and its host terms (fit_sglang.cpp, fit_vllm.cpp); several fits -> one profile; a forecast's
// distance from a log.
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <sstream>

#include "calibrate/calibrate_internal.h"
#include "calibrate/forecast_read.h"
#include "doctor/doctor_internal.h"
#include "headroom/error.h"
#include "headroom/units.h"
#include "headroom/validate.h"
#include "model/headroom_cache.h"

namespace headroom {

namespace calib {
std::string gib(int64_t b) { return fmt::format("{:.2f} GiB", to_gib(b)); }

Calibration as_calibration(const LogFit& fit) {
  Calibration c;
  c.host = "log";
  c.gpu = fit.deployment.gpu.name;
  c.capacity_bytes = fit.deployment.capacity_bytes;
  c.engine = std::string(engine_kind_name(fit.deployment.engine));
  c.per_tp[std::max(1, fit.deployment.par.tp)] = fit.at_tp;
  c.activation_scale = fit.activation_scale;
  c.graph_scale = fit.graph_scale;
  c.graph_estimate_scale = fit.graph_estimate_scale;
  return c;
}

Forecast plan_with(const LogFit& fit, bool with_terms) {
  PlanOptions o;
  if (with_terms) o.calibration = as_calibration(fit);
  Deployment d = fit.deployment;
  d.calibration.reset();
  return plan(d, o);
}
}  // namespace calib

namespace {
std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The user's options as deployment arguments: calibrate's own options left out.
Args deployment_options(const Args& user) {
  std::vector<std::string> argv;
  for (const auto& [k, v] : user.options()) {
    if (k == "--name" || k == "--json" || k == "--profile") continue;
    argv.push_back(k);
    if (!(is_boolean_flag(k) && v == "true")) argv.push_back(v);
  }
  return Args::parse(argv);
}
}  // namespace

LogFit fit_log(const std::string& path, const Args& user) {
  LogScan scan = scan_log_file(path);
  const std::string raw = read_all(path);
  Args opts = deployment_options(user);
  RebuiltArgs rb = rebuild_args(scan, opts);
  for (const auto& g : rb.gaps)
    if (g.find("assuming SGLang") == std::string::npos) fail_input(path, "", g);
  if (rb.engine != EngineKind::SGLang && rb.engine != EngineKind::VLLM)
    fail_input(path, "--engine", fmt::format("{} logs are not calibrated yet (SGLang and vLLM are)", engine_kind_name(rb.engine)));
  if (rb.engine == EngineKind::VLLM && !opts.has("--compile-cache")) {
    std::vector<std::string> env_given = opts.get_all("--env");
    for (const auto& a : vllm_environment_from_log(raw, env_given)) rb.args.push_back(a);
  }
  // The capacity the log prints (vLLM "(F/T GiB)", SGLang total_gpu_memory) is this host's, over the catalog's.
  if (!opts.has("--gpu-memory") && scan.summary.total && scan.summary.total->value > 0)
    rb.args.insert(rb.args.end(), {"--gpu-memory", std::to_string(scan.summary.total->value)});
  LogFit fit;
  fit.path = path;
  fit.args = rb.args;
  fit.deployment = parse_deployment(Args::parse(rb.args));
  fit.engine_version = scan.engine_version;
  static const std::regex driver(R"(Driver Version:\s*([0-9][0-9.]*))");
  if (std::smatch m; std::regex_search(raw, m, driver)) fit.driver = m[1].str();
  if (!scan.summary.kv_tokens)
    fail_input(path, "KV cache", "the log prints no KV cache size ('#tokens: N' / 'GPU KV cache size: N tokens'): nothing to calibrate against");
  fit.kv_tokens = scan.summary.kv_tokens->value;
  if (fit.deployment.engine == EngineKind::SGLang) calib::fit_sglang(scan, fit);
  else calib::fit_vllm(scan, fit);
  fit.digest = "fnv1a64:" + hub::fnv1a64_hex(raw);
  fit.bytes = static_cast<int64_t>(raw.size());
  return fit;
}

LogErrors errors_against(const LogFit& fit, const Calibration* cal) {
  PlanOptions o;
  if (cal) o.calibration = *cal;
  Deployment d = fit.deployment;
  d.calibration.reset();
  const Forecast f = plan(d, o);
  LogErrors e;
  e.kv_tokens = f.kv_tokens;
  e.kv_pct = fit.kv_tokens > 0 ? 100.0 * static_cast<double>(f.kv_tokens - fit.kv_tokens) / static_cast<double>(fit.kv_tokens) : 0;
  e.capture_begin_free = calib::free_after(f, fit.deployment.engine == EngineKind::SGLang ? StageId::Workspaces : StageId::KvPool);
  if (e.capture_begin_free && fit.capture_begin_free) e.capture_begin_gib = to_gib(*e.capture_begin_free - *fit.capture_begin_free);
  return e;
}

}  // namespace headroom
