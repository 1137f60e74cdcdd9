// validate_llamacpp_case(): a llama.cpp corpus case -> llama-server arguments -> plan() -> the
// per-device buffers and the outcome compared with the log. Flags of other front-ends (LM Studio's
// "Num Offload Layers", llama-cpp bindings' n_ctx) are read as llama-server's; flags of other
// tools (perplexity's -f, --chunks) and environment variables are left out and named in the row.
#include "validate/validate_llamacpp.h"

#include <cctype>
#include <fmt/format.h>
#include <regex>

#include "headroom/deployment.h"
#include "headroom/doctor.h"
#include "headroom/logscan.h"
#include "headroom/outcome.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/llamacpp_plan.h"
#include "headroom/units.h"

namespace headroom {

namespace {
using J = nlohmann::ordered_json;

std::optional<std::string> text(const J& o, const char* k) {
  if (!o.is_object() || !o.contains(k) || !o[k].is_string()) return std::nullopt;
  return o[k].get<std::string>();
}
std::optional<double> number(const J& o, const char* k) {
  if (!o.is_object() || !o.contains(k) || !o[k].is_number()) return std::nullopt;
  return o[k].get<double>();
}

// The build a record's engine_version names: "b8157", "b8284 (00de61534)", "~b2450 (...)",
// "llama.cpp build 3871 (...)"; a wrapper that gives only its date ("LM Studio ... (2025-08)"): the
// build released then (llamacpp/build_dates.cpp). Wrappers that say neither (RamaLama): newest.
std::string engine_arg(const std::optional<std::string>& version) {
  static const std::regex b(R"((?:^|[^0-9A-Za-z])b(\d{4,5})\b|build (\d{4,5})\b)");
  static const std::regex date(R"(\b(20\d\d-[01]\d(?:-[0-3]\d)?)\b)");
  std::smatch m;
  if (version && std::regex_search(*version, m, b)) return "llamacpp@b" + (m[1].matched ? m[1].str() : m[2].str());
  if (version && std::regex_search(*version, m, date)) return "llamacpp@main@" + m[1].str();
  return "llamacpp";
}

// Another front-end's name of a llama-server flag.
const std::pair<std::string_view, std::string_view> kForeign[] = {
    {"n_ctx", "--ctx-size"}, {"num_ctx", "--ctx-size"}, {"context length", "--ctx-size"},
    {"n_gpu_layers", "--n-gpu-layers"}, {"Num Offload Layers", "--n-gpu-layers"}, {"n_batch", "--batch-size"}};

// The case's flags as llama-server arguments; what is left out goes to `dropped`.
std::vector<std::string> flag_args(const J& flags, std::vector<std::string>& dropped) {
  std::vector<std::string> out;
  if (!flags.is_object()) return out;
  for (const auto& [k0, v] : flags.items()) {
    std::string k = k0;
    std::string val = v.is_string() ? v.get<std::string>() : v.dump();
    // "on (default)": the corpus notes that the value is the build's default; the value is "on".
    if (constexpr std::string_view note = " (default)"; val.size() > note.size() && val.ends_with(note))
      val.resize(val.size() - note.size());
    for (const auto& [from, to] : kForeign)
      if (k == from) k = to;
    if (k == "--n-gpu-layers" && (val.rfind("all", 0) == 0 || val == "max")) val = "all";
    if (k == "Offload KV Cache to GPU") {
      if (val == "OFF") out.push_back("--no-kv-offload");
      continue;
    }
    // Short spellings are the long ones (Args::parse reads them the same way).
    const Args one = Args::parse({k, "x"});
    const std::string name = one.options().empty() ? k : one.options().front().first;
    const auto& known = llamacpp::llamacpp_flags();
    if (name.rfind("--", 0) != 0 || std::find(known.begin(), known.end(), name) == known.end()) {
      dropped.push_back(k);
      continue;
    }
    if (is_boolean_flag(name)) out.push_back(name);
    else out.insert(out.end(), {name, val});
  }
  return out;
}

// "rtx-4090+rtx-5090", "rtx-5090+rtx-4090x2": the catalog GPUs in device order; empty if any is unknown.
std::vector<std::string> gpu_names(const std::string& field, std::string& unknown) {
  std::vector<std::string> out;
  static const std::regex times(R"(^(.*)x(\d)$)");
  for (size_t at = 0; at <= field.size();) {
    const size_t end = std::min(field.find('+', at), field.size());
    std::string g = field.substr(at, end - at);
    at = end + 1;
    int n = 1;
    std::smatch m;
    if (!find_gpu(g) && std::regex_match(g, m, times)) {
      g = m[1].str();
      n = std::stoi(m[2].str());
    }
    if (!find_gpu(g)) {
      unknown = g;
      return {};
    }
    for (int i = 0; i < n; ++i) out.push_back(g);
  }
  return out;
}

Outcome outcome_of(const Forecast& f) {
  if (!f.failure) return Outcome::Ok;
  if (f.failure->stage == StageId::Weights || f.failure->stage == StageId::Init) return Outcome::OomWeights;
  if (f.failure->stage == StageId::KvPool) return Outcome::OomKv;
  return Outcome::OomGraph;  // the compute buffer reservation (the corpus' name for it)
}

bool host_name(const std::string& n) {
  return n.rfind("CPU", 0) == 0 || n == "Host" || n.find("_Host") != std::string::npos;
}

// The accelerator entries of an observed per-device object, in the order the log printed them.
std::vector<double> device_values(const J& obs, const char* key) {
  std::vector<double> v;
  if (!obs.contains(key) || !obs[key].is_object()) return v;
  for (const auto& [name, x] : obs[key].items())
    if (!host_name(name) && x.is_number()) v.push_back(x.get<double>());
  return v;
}

void compare_devices(const J& obs, const char* key, const std::vector<int64_t>& pred, Metric& metric, J& row) {
  const std::vector<double> seen = device_values(obs, key);
  if (seen.empty()) return;
  if (seen.size() != pred.size()) {
    row["skipped"].push_back(fmt::format("{}: the log shows {} devices, the plan has {}", key, seen.size(), pred.size()));
    return;
  }
  J cmp = J::array();
  for (size_t i = 0; i < seen.size(); ++i) {
    const double p = to_mib(pred[i]);
    metric.add(p, seen[i]);
    cmp.push_back({std::round(p * 100) / 100, seen[i]});
  }
  row["compare"][key] = std::move(cmp);  // [predicted, observed] per device
}

// The stage doctor names for a llama.cpp outcome code ("" for ok and unknown).
std::string doctor_stage_of(std::optional<Outcome> o) {
  if (o == Outcome::OomWeights) return "weights";
  if (o == Outcome::OomKv) return "kv_pool";
  if (o == Outcome::OomGraph) return "compute_buffer";  // the compute-buffer reservation
  if (o == Outcome::OomRuntime) return "runtime";
  return "";
}

// doctor on the case's log, given what a user would add: the engine and the flags they passed.
void doctor_case(const J& c, const J& obs, LlamacppMetrics& metrics, J& row) {
  const std::string want = doctor_stage_of(parse_outcome(text(obs, "outcome").value_or("")));
  std::string raw = text(c, "raw").value_or("");
  if (want.empty() || raw.empty()) return;
  const std::string err = text(obs, "error_message").value_or("");
  J drow = J::object();
  if (!err.empty() && raw.find(err.substr(0, err.find('\n'))) == std::string::npos) {
    raw += "\n" + err.substr(0, err.find('\n'));  // the error line the record quotes, not in its excerpt
    drow["note"] = "error_message appended to raw";
  }
  try {
    std::vector<std::string> dropped;
    std::vector<std::string> hints = {"--engine", "llamacpp"};
    for (auto& a : flag_args(c.contains("flags") ? c["flags"] : J(), dropped)) hints.push_back(std::move(a));
    const Diagnosis dx = diagnose(scan_log_text(raw, text(c, "id").value_or("case")), Args::parse(hints));
    ++metrics.doctor_stage.n;
    if (dx.stage == want) ++metrics.doctor_stage.agree;
    if (dx.stage_basis == StageBasis::Guess) ++metrics.doctor_guessed;
    else {
      ++metrics.doctor_decided.n;
      if (dx.stage == want) ++metrics.doctor_decided.agree;
    }
    drow.update(J{{"stage", dx.stage}, {"stage_basis", name(dx.stage_basis)}, {"want_stage", want}, {"cause", dx.cause ? name(*dx.cause) : ""}});
    J fx = J::array();
    for (const auto& f : dx.fixes) fx.push_back(f.flag + "=" + f.value);
    drow["fixes"] = std::move(fx);
  } catch (const InputError& e) {
    drow["error"] = e.what();
  }
  row["doctor"] = std::move(drow);
}

// The free memory llama.cpp printed per GPU at start ("using device CUDA0 (...) - 9862 MiB free",
// "Device 0: ... (23863 MiB free)"), in device order: what other processes left on the host, as
// --host-state would give it. llama.cpp splits layers by it and --fit projects against it.
std::vector<int64_t> logged_free_at_start(const J& c) {
  const std::string raw = text(c, "raw").value_or("");
  if (raw.find("free") == std::string::npos) return {};
  std::vector<int64_t> free;
  try {
    const LogScan scan = scan_log_text(raw, text(c, "id").value_or("case"));
    for (const auto& dev : scan.llama.devices)
      if (dev.free) free.push_back(dev.free->value);
  } catch (const InputError&) {
    return {};
  }
  return free;
}
}  // namespace

J validate_llamacpp_case(const J& c, LlamacppMetrics& metrics) {
  metrics.seen = true;
  J row{{"id", text(c, "id").value_or("?")}, {"covered", false}};
  const J obs = c.contains("observed") && c["observed"].is_object() ? c["observed"] : J::object();
  const auto model = text(c, "model");
  const auto quant = text(c, "quant");
  auto uncovered = [&](std::string why) {
    row["reason"] = std::move(why);
    return row;
  };
  doctor_case(c, obs, metrics, row);
  if (!model) return uncovered("model unknown");
  if (!quant) return uncovered("quantization type unknown (the GGUF's mix sets every buffer)");
  std::vector<std::string> dropped;
  std::vector<std::string> args = {"--engine", engine_arg(text(c, "engine_version")), "--model", *model, "--quant",
                                   quant->substr(0, quant->find(' '))};
  for (auto& a : flag_args(c.contains("flags") ? c["flags"] : J(), dropped)) args.push_back(std::move(a));
  // LM Studio's llama.cpp keeps a full-size SWA cache ("using full-size SWA cache" in its logs,
  // ../shared/research/llamacpp-log-eras.md): its default, as --swa-full.
  // LM Studio passes flash attention as its own setting, off unless turned on ("flash_attn = 0" in its
  // logs on builds whose own default is auto).
  if (text(c, "engine_version").value_or("").find("LM Studio") != std::string::npos) {
    args.push_back("--swa-full");
    bool fa_given = false;
    for (const auto& a : args) fa_given = fa_given || a == "--flash-attn" || a == "-fa";
    if (!fa_given) args.insert(args.end(), {"--flash-attn", "off"});
    row["note"] = "LM Studio: full-size SWA cache (--swa-full), flash attention off unless set";
  }
  // The capacity: catalog GPUs, or the case's gpu_total_gib; without either the buffers are still
  // planned (they do not depend on it on one GPU) but the outcome is not scored.
  const auto gpu = text(c, "gpu");
  const auto total = number(c, "gpu_total_gib");
  const int gpus = static_cast<int>(number(c, "gpus").value_or(1));
  std::string unknown;
  std::vector<std::string> names = gpu ? gpu_names(*gpu, unknown) : std::vector<std::string>{};
  bool capacity_known = true;
  if (names.size() == 1 && gpus > 1) names.assign(static_cast<size_t>(gpus), names.front());  // "rtx-3090" x gpus
  if (!names.empty() && static_cast<int>(names.size()) == gpus) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
    args.insert(args.end(), {"--gpu", list});
    if (total && names.size() == 1) args.insert(args.end(), {"--gpu-memory", fmt::format("{}GiB", *total)});
  } else if (total) {
    args.insert(args.end(), {"--gpu-memory", fmt::format("{}GiB", *total), "--gpus", std::to_string(gpus)});
  } else if (gpus == 1) {
    args.insert(args.end(), {"--gpu-memory", "1024GiB"});
    capacity_known = false;
  } else {
    return uncovered(fmt::format("{} GPUs of unknown capacity ({}): the layer split depends on it", gpus, gpu.value_or("null")));
  }
  if (!dropped.empty()) {
    std::string d;
    for (const auto& x : dropped) d += (d.empty() ? "" : ", ") + x;
    row["flags_left_out"] = d;
  }
  Forecast f;
  try {
    PlanOptions opt;
    opt.files_elsewhere = true;
    opt.detail = false;
    Deployment d = parse_deployment(Args::parse(args));
    if (capacity_known) {
      if (auto held = llamacpp::held_from_free_at_start(d, logged_free_at_start(c)); !held.empty()) {
        d.held_by_others = std::move(held);
        d.host_state_source = "the log's free memory at start";
        row["host_state"] = "free memory at start from the log";
      }
    }
    f = plan(d, opt);
  } catch (const InputError& e) {
    return uncovered(e.what());
  }
  ++metrics.covered;
  row["covered"] = true;
  row["args"] = args;
  std::vector<int64_t> model_b, compute_b;
  int64_t kv_base = 0;
  for (const auto& d : f.devices)
    if (!d.host) {
      model_b.push_back(d.model_buffer_bytes);
      compute_b.push_back(d.compute_buffer_bytes);
    }
  compare_devices(obs, "model_buffer_mib", model_b, metrics.model_buffer, row);
  compare_devices(obs, "compute_buffer_mib", compute_b, metrics.compute_buffer, row);
  // The KV cache's size line (the base cache; an iswa model's SWA cache is a second line).
  for (const auto& d : f.devices) kv_base += d.kv_buffer_bytes;
  if (auto o = number(obs, "kv_size_mib"); o && f.kv_tokens == 0) {
    row["skipped"].push_back("kv_size_mib: the plan does not model this model's cache");
  } else if (o) {
    // The plan's cache lines: rebuilt from the settings it resolved (the devices hold base + SWA).
    const double p = to_mib(kv_base);
    const double swa_obs = number(obs, "kv_swa_size_mib").value_or(0);
    metrics.kv_size.add(p, *o + swa_obs);
    row["compare"]["kv_size_mib"] = {std::round(p * 100) / 100, *o + swa_obs};
  }
  const auto oo = text(obs, "outcome");
  const Outcome pred = outcome_of(f);
  row["predicted"] = {{"outcome", name(pred)}};
  row["verdict"] = verdict_name(f.verdict);
  if (oo) row["observed"] = {{"outcome", *oo}};
  if (oo && capacity_known) {
    ++metrics.outcome.n;
    if (parse_outcome(*oo) == pred) ++metrics.outcome.agree;
  } else if (oo) {
    row["skipped"].push_back("outcome: the GPU's capacity is not known");
  }
  return row;
}

}  // namespace headroom
