// plan_llamacpp(): llama-server's start, device by device, in the order llama.cpp allocates —
// every model buffer (load_tensors), then the KV cache (llama_context), then the compute
// buffers (sched reserve) — and the first allocation that does not fit, where llama.cpp fails.
#include <algorithm>
#include <climits>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <mutex>

#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/llamacpp_plan.h"
#include "engines/llamacpp/llamacpp_rule_table.h"
#include "headroom/sim.h"
#include "engines/deployment_host.h"
#include "headroom/units.h"
#include "engines/llamacpp/llamacpp_constants.h"
#include "engines/llamacpp/llamacpp_fit.h"
#include "engines/llamacpp/device_select.h"
#include "engines/shared/process_terms.h"
#include "engines/llamacpp/llamacpp_log.h"

namespace headroom {

namespace {

using namespace llamacpp;

// What the host keeps resident, by the stage that allocates it: weights copied with --no-mmap, KV and
// state, compute and output. Weights mapped from the file are page cache the OS can drop. Checked
// against --host-memory, and on a unified-memory device (DGX Spark, Jetson, Apple silicon) it joins
// the one GPU's stages, since it comes out of the same memory.
struct HostShare {
  int64_t weights = 0, kv = 0, compute = 0;
};
bool unified_memory(const GpuSpec& g) { return g.vendor == "apple" || (g.vendor == "nvidia" && unified_memory_device(g.sm)); }
HostShare host_share(const DeviceBuffers& h, bool no_mmap) {
  return {no_mmap ? h.model : 0, h.kv + h.recurrent + h.indexer, h.compute + h.output};
}

// --host-memory: what the host must hold resident (weights copied with --no-mmap, KV cache, compute
// and output buffers) against the RAM given. Past it the start fails or swaps: OOM. Weights mapped
// from the file need not stay resident, but when they do not fit beside the rest the OS re-reads
// them from disk as it generates (slow, not a failure): at risk. Returns the note that says which.
std::string check_host_ram(Forecast& f, const DeviceBuffers& host, bool no_mmap, int64_t ram) {
  if (ram <= 0) return {};
  const HostShare share = host_share(host, no_mmap);
  const int64_t buffers = share.kv + share.compute;
  const int64_t resident = buffers + share.weights, mapped = no_mmap ? 0 : host.model;
  const std::string sums = fmt::format("host RAM {:.2f} GiB against --host-memory {:.2f} GiB", static_cast<double>(resident + mapped) / GiB,
                                       static_cast<double>(ram) / GiB);
  if (resident > ram) {
    if (!f.failure) {
      const StageId stage = no_mmap && host.model > buffers ? StageId::Weights : host.kv > 0 ? StageId::KvPool : StageId::ComputeBuffer;
      f.failure = Failure{stage, 0, resident, ram, fmt::format("{}: the host must hold {:.2f} GiB resident{}", sums,
                                                               static_cast<double>(resident) / GiB, no_mmap ? " (--no-mmap copies the weights)" : "")};
    }
    f.verdict = Verdict::Oom;
    return sums + ": more than the host has; the start fails or swaps";
  }
  if (resident + mapped > ram) {
    if (f.verdict == Verdict::Fits) f.verdict = Verdict::AtRisk;
    return sums + fmt::format(": the {:.2f} GiB of weights mapped from the file do not all stay in RAM; the OS re-reads them from disk "
                              "while generating (slow; more layers on the GPUs or a smaller quant avoid it)",
                              static_cast<double>(mapped) / GiB);
  }
  return sums + ": fits";
}

// A GGUF with fused ffn_gate_up_exps tensors under --cpu-moe / --n-cpu-moe on a build before PR
// #20416: llama.cpp's regex misses them and they stay on the GPU (issue #20431); say so and how.
std::string fused_gate_up_note(const LlamaModel& m, const ServerSettings& s) {
  if ((!s.cpu_moe && s.n_cpu_moe <= 0) || has(Rule::CpuMoeFusedGateUp, s.build)) return {};
  int64_t bytes = 0;
  for (const auto& t : m.tensors)
    if (t.expert && t.name.find("gate_up") != std::string::npos) bytes += t.bytes;
  if (bytes == 0) return {};
  return fmt::format("this GGUF fuses gate and up experts (ffn_gate_up_exps, {:.2f} GiB): before ~b8290 (PR #20416) --cpu-moe / "
                     "--n-cpu-moe do not move them, so they stay on the GPU as planned above; add -ot 'ffn_gate_up_exps=CPU' "
                     "or use a newer build",
                     static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

// GUESS rows of llamacpp_constants.cpp: what the GPU runtime takes before llama.cpp allocates
// anything (llama.cpp's own fit leaves a 1 GiB margin for it and more), and the projector's image
// compute buffer (clip alloc_compute_meta; 2026 builds warm it up with a large image).
int64_t mib_row(llamacpp::Const k, double EstimatedConstant::*end) { return static_cast<int64_t>(llamacpp::constant(k).*end * MiB); }
const int64_t kRuntimeBytes = mib_row(llamacpp::Const::RuntimeContext, &EstimatedConstant::central);
const int64_t kRuntimeLow = mib_row(llamacpp::Const::RuntimeContext, &EstimatedConstant::low);
const int64_t kRuntimeHigh = mib_row(llamacpp::Const::RuntimeContext, &EstimatedConstant::high);
const int64_t kMmprojCompute = mib_row(llamacpp::Const::MmprojCompute, &EstimatedConstant::central);
const int64_t kMmprojComputeLow = mib_row(llamacpp::Const::MmprojCompute, &EstimatedConstant::low);
const int64_t kMmprojComputeHigh = mib_row(llamacpp::Const::MmprojCompute, &EstimatedConstant::high);

// The projector as llama-server loads it after the text model: the vision tower's parameters (from
// the model's vision_config) in the file's type, on the first GPU. Zero bytes when not known.
struct MmprojLoad {
  int64_t bytes = 0;
  std::string what;
};
MmprojLoad mmproj_load(const Deployment& d, const ServerSettings& s, std::vector<std::string>& notes) {
  if (!s.mmproj.on) return {};
  const VisionTower* v = d.model ? &d.model->config.vision : nullptr;
  if (!v || !v->present || v->params <= 0) {
    notes.push_back("--mmproj: the vision tower of this model is not known (a GGUF file, or a tower headroom does not lay out): not counted");
    return {};
  }
  const int64_t bytes = static_cast<int64_t>(static_cast<double>(v->params) * s.mmproj.bytes_per_param);
  notes.push_back(fmt::format("--mmproj: the vision tower's {:.0f}M parameters in {} = {:.2f} MiB (clip \"model size\"; derived from the "
                              "config), {}; {}",
                              static_cast<double>(v->params) / 1e6, s.mmproj.type, static_cast<double>(bytes) / MiB,
                              s.mmproj.offload ? "on the first GPU with its image compute buffer (a GUESS)" : "in host memory (--no-mmproj-offload)",
                              has(Rule::FitCountsMmproj, s.build) ? "llama.cpp's --fit keeps room for it and its compute buffer (PR #21489, ~b8690)"
                                                                  : "llama.cpp's --fit does not count it (llama.cpp#19980; counted from ~b8690)"));
  if (!s.mmproj.offload) return {};
  return {bytes, fmt::format("projector (--mmproj, {})", s.mmproj.type)};
}

// The derived table of (model, quant), remembered: deriving it walks every tensor of the
// checkpoint (tens of thousands for a MoE model) and tune-style loops plan the same model often.
// Entries hold their Model, so a key's address is never reused while it is cached.
std::shared_ptr<const LlamaModel> derived(const std::shared_ptr<const Model>& model, const QuantName& q) {
  struct Entry {
    std::shared_ptr<const Model> model;
    std::shared_ptr<const LlamaModel> table;
  };
  static std::mutex mu;
  static std::map<std::pair<const Model*, std::string_view>, Entry> memo;
  const auto key = std::make_pair(model.get(), q.name);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) return it->second.table;
  }
  auto table = std::make_shared<const LlamaModel>(llama_model_from_hf(*model, q));
  std::lock_guard<std::mutex> lock(mu);
  if (memo.size() >= 32) memo.clear();
  memo[key] = Entry{model, table};
  return table;
}

std::shared_ptr<const LlamaModel> load(const Deployment& d) {
  if (!d.model) {
    if (d.flag("--quant")) fail_input("command line", "--quant", "a GGUF file has its own tensor types: drop --quant");
    if (auto hub = llama_model_from_hub(d)) return hub;
    return std::make_shared<const LlamaModel>(llama_model_from_gguf(d.model_spec));
  }
  const std::string* q = d.flag("--quant");
  if (!q)
    fail_input("command line", "--quant", fmt::format("is required with --engine llamacpp for a Hugging Face model (the GGUF type, "
                                                      "e.g. --quant Q4_K_M), or give --model FILE.gguf"));
  return derived(d.model, require_quant(*q));
}

std::vector<int64_t> capacities(const Deployment& d) {
  std::vector<int64_t> c;
  for (int i = 0; i < d.gpus; ++i)
    c.push_back(d.gpu_list.empty() ? d.capacity_bytes : d.gpu_list[static_cast<size_t>(i)].capacity_bytes);
  return c;
}

}  // namespace

std::vector<int64_t> llamacpp::held_from_free_at_start(const Deployment& d, const std::vector<int64_t>& free_bytes) {
  const std::vector<int64_t> cap = capacities(d);
  if (free_bytes.size() != cap.size()) return {};
  std::vector<int64_t> held;
  for (size_t g = 0; g < cap.size(); ++g) held.push_back(std::max<int64_t>(0, cap[g] - kRuntimeBytes - free_bytes[g]));
  return held;
}

namespace {
// Each GPU's start, stage by stage; llama.cpp's failure is the first stage (in its order) any device fails.
std::vector<RankForecast> simulate(const Deployment& d, const Placement& p, const std::vector<int64_t>& cap, const DeviceNaming& names,
                                   const MmprojLoad& mm, const std::optional<DraftPlan>& draft, const HostShare& host,
                                   std::optional<Failure>& failure) {
  std::vector<RankForecast> ranks;
  static constexpr StageId kOrder[] = {StageId::Init,          StageId::Weights,    StageId::KvPool,       StageId::ComputeBuffer,
                                       StageId::DraftModel,    StageId::Mmproj,     StageId::DraftContexts};
  auto order = [](StageId s) { return std::find(std::begin(kOrder), std::end(kOrder), s) - std::begin(kOrder); };
  for (size_t g = 0; g < p.gpu.size(); ++g) {
    const DeviceBuffers& b = p.gpu[g];
    const std::string dev = names(g);
    RankSim sim(static_cast<int>(g), cap[g]);
    sim.begin_stage(StageId::Init);
    sim_held_by_others(sim, d, d.held_by_others_on(g));
    sim.alloc_estimated("GPU runtime context (estimate)", kRuntimeBytes, kRuntimeLow, kRuntimeHigh);
    sim.begin_stage(StageId::Weights);
    sim.alloc(dev + " model buffer", b.model);
    if (g == 0 && host.weights > 0) sim.alloc("host model buffer (unified memory)", host.weights);
    sim.begin_stage(StageId::KvPool);
    sim.alloc(dev + " KV buffer", b.kv);
    if (g == 0 && host.kv > 0) sim.alloc("host KV buffers (unified memory)", host.kv);
    if (b.indexer > 0) sim.alloc(dev + " KV buffer of the DSA indexer", b.indexer);
    if (b.recurrent > 0) sim.alloc(dev + " RS buffer (recurrent state)", b.recurrent);
    sim.begin_stage(StageId::ComputeBuffer);
    if (b.compute > 0) sim.alloc_estimated(dev + " compute buffer (estimate)", b.compute, b.compute_low, b.compute_high);
    if (g == 0 && host.compute > 0) sim.alloc("host compute buffers (unified memory)", host.compute);
    const DeviceBuffers* db = draft ? &draft->p.gpu[g] : nullptr;
    if (db && db->model > 0) {  // server.cpp load_model: the draft loads after the target's context
      sim.begin_stage(StageId::DraftModel);
      sim.alloc(dev + " draft model buffer", db->model);
    }
    if (g == 0 && mm.bytes > 0) {  // clip's backend: the first GPU
      sim.begin_stage(StageId::Mmproj);
      // Derived from the config in the file's type; llama.cpp keeps norms, biases and the patch
      // embedding in F32 (Qwen3.6-27B: 878.8 MiB derived, 887.99 MiB logged): up to 5% more.
      sim.alloc_estimated(dev + " " + mm.what, mm.bytes, mm.bytes, mm.bytes + mm.bytes / 20);
      sim.alloc_estimated(dev + " projector image compute buffer (estimate)", kMmprojCompute, kMmprojComputeLow, kMmprojComputeHigh);
    }
    if (db && (db->kv > 0 || db->compute > 0)) {  // server init: one draft context per slot
      sim.begin_stage(StageId::DraftContexts);
      const int64_t n = draft->slots;
      sim.alloc(fmt::format("{} draft KV buffers ({} slot{})", dev, n, n == 1 ? "" : "s"), db->kv * n);
      if (db->compute > 0)
        sim.alloc_estimated(fmt::format("{} draft compute buffers ({} slot{}, estimate)", dev, n, n == 1 ? "" : "s"), db->compute * n,
                            db->compute_low * n, db->compute_high * n);
    }
    if (sim.failure() && (!failure || order(sim.failure()->stage) < order(failure->stage))) failure = sim.failure();
    ranks.push_back(sim.finish());
  }
  if (failure) failure->message = failure_line(*failure, names);
  return ranks;
}

// The draft's buffers join each device's (its weights to the model buffer, every slot's draft KV
// and compute buffer to the KV and compute).
void add_draft(Placement& p, const DraftPlan& dp) {
  auto add = [&](DeviceBuffers& b, const DeviceBuffers& x) {
    const int64_t n = dp.slots;
    b.model += x.model;
    b.kv += x.kv * n;
    b.compute += x.compute * n;
    b.compute_low += x.compute_low * n;
    b.compute_high += x.compute_high * n;
    b.output += x.output * n;
  };
  for (size_t g = 0; g < p.gpu.size(); ++g) add(p.gpu[g], dp.p.gpu[g]);
  add(p.host, dp.p.host);
}

void add_devices(Forecast& f, const Placement& p, const std::vector<int64_t>& cap, const DeviceNaming& names, bool mmap,
                 int64_t host_memory) {
  for (size_t g = 0; g < p.gpu.size(); ++g) {
    const DeviceBuffers& b = p.gpu[g];
    f.devices.push_back(DeviceMemory{names(g), false, b.layers, cap[g], b.model, b.kv, b.compute,
                                     b.output, b.recurrent, b.compute_low, b.compute_high, b.indexer});
  }
  const DeviceBuffers& h = p.host;
  f.devices.push_back(DeviceMemory{mmap ? "CPU_Mapped" : "CPU", true, 0, host_memory, h.model, h.kv, h.compute, h.output, h.recurrent,
                                   h.compute_low, h.compute_high, h.indexer});
}

// --fit's overrides as llama-fit-params prints them (-ot blk\.14\.ffn_(up|down|gate)_(ch|)exps=CPU,...).
std::string fit_override_list(const ServerSettings& s, const DeviceNaming& names) {
  std::string out;
  for (const auto& o : s.fit_overrides) {
    const char* pattern = o.fraction == LayerFraction::Attn   ? "ffn_(gate|up|gate_up|down).*"
                          : o.fraction == LayerFraction::Up   ? "ffn_(gate|gate_up|down).*"
                          : o.fraction == LayerFraction::Gate ? "ffn_down.*"
                                                              : "ffn_(up|down|gate_up|gate)_(ch|)exps";
    out += fmt::format("{}blk\\.{}\\.{}={}", out.empty() ? "" : ",", o.layer, pattern,
                       o.device < 0 ? std::string("CPU") : names(static_cast<size_t>(o.device)));
  }
  return out;
}

void add_settings(Forecast& f, const ServerSettings& s, const std::optional<KvCache>& kv, const std::string& quant, const DeviceNaming& names) {
  auto& st = f.settings;
  if (!quant.empty()) st.emplace_back("--quant", quant);
  st.emplace_back("--n-gpu-layers", std::to_string(s.n_gpu_layers));
  st.emplace_back("--split-mode", s.split == SplitMode::Layer ? "layer" : s.split == SplitMode::Row ? "row" : "none");
  if (!s.tensor_split.empty()) {
    std::string ts;
    for (double x : s.tensor_split) ts += (ts.empty() ? "" : ",") + fmt::format("{:g}", x);
    st.emplace_back("--tensor-split", ts);
  }
  if (!s.fit_overrides.empty()) st.emplace_back("--override-tensor", fit_override_list(s, names));
  st.emplace_back("--flash-attn", s.fa == FlashAttn::On ? "on" : s.fa == FlashAttn::Off ? "off" : "auto");
  st.emplace_back("--ctx-size", std::to_string(kv ? kv->n_ctx : s.kv.ctx_size));
  if (kv) st.emplace_back("--parallel", std::to_string(kv->n_seq_max));
  st.emplace_back("--kv-unified", kv && kv->unified ? "true" : "false");
  st.emplace_back("--batch-size", std::to_string(s.kv.n_batch));
  st.emplace_back("--ubatch-size", std::to_string(s.kv.n_ubatch));
  st.emplace_back("--cache-type-k", std::string(gguf::type_traits(s.kv.type_k).name));
  st.emplace_back("--cache-type-v", std::string(gguf::type_traits(s.kv.type_v).name));
  if (s.no_kv_offload) st.emplace_back("--no-kv-offload", "true");
  if (s.cpu_moe) st.emplace_back("--cpu-moe", "true");
  if (s.n_cpu_moe > 0) st.emplace_back("--n-cpu-moe", std::to_string(s.n_cpu_moe));
  st.emplace_back("--mmap", s.no_mmap ? "false" : "true");
}
}  // namespace

// --fit's target per device: --fit-target, plus from PR #23485 (~b9270) what the draft model (-md)
// takes there, measured before the target is fitted, at the target's context as then set (the
// model's whole context when -c is unset: llama.cpp#25408).
std::vector<int64_t> fit_margins(const Deployment& d, const LlamaModel& m, const ServerSettings& s, const std::vector<int64_t>& free,
                                 const MmprojLoad& mm, bool files_elsewhere) {
  std::vector<int64_t> margins(free.size(), s.fit_target);
  // From PR #21489 (~b8690) the projector's weights and compute buffer join the first GPU's target.
  if (mm.bytes > 0 && !margins.empty() && has(Rule::FitCountsMmproj, s.build)) margins[0] += mm.bytes + kMmprojCompute;
  if (!has(Rule::FitCountsDraft, s.build) || !d.flag("--model-draft")) return margins;
  const LaidOut unfitted = lay_out(m, s, free);
  const std::optional<DraftPlan> draft = plan_draft(d, s, unfitted.kv ? &*unfitted.kv : nullptr, free, files_elsewhere);
  if (!draft || !draft->model) return margins;
  for (size_t g = 0; g < margins.size(); ++g) {
    const DeviceBuffers& b = draft->p.gpu[g];
    margins[g] += b.model + b.kv + b.compute;
  }
  return margins;
}

Forecast plan_llamacpp(const Deployment& given, const PlanOptions& opt) {
  // --device CUDA2,CUDA1: the plan runs on those GPUs alone, in that order, named as llama.cpp names them.
  std::vector<std::string> device_notes;
  const std::vector<int> device_ids = device_list(given);
  const Deployment d = device_ids.empty() ? given : on_devices(given, device_ids, device_notes);
  const std::shared_ptr<const LlamaModel> held = load(d);
  const LlamaModel& m = *held;
  ServerSettings s = parse_server_settings(d, m.n_layer);
  const std::string backend = backend_name(d.gpu, s.build);
  const DeviceNaming names{backend, device_ids};
  s.cuda_row_padding = backend == "CUDA" || backend == "ROCm";
  const std::vector<int64_t> cap = capacities(d);
  // What llama.cpp sees free at start (the split and --fit read it): capacity less the runtime.
  std::vector<int64_t> free_at_start;
  for (size_t g = 0; g < cap.size(); ++g) free_at_start.push_back(cap[g] - kRuntimeBytes - d.held_by_others_on(g));
  std::vector<std::string> mm_notes;
  const MmprojLoad mm = mmproj_load(d, s, mm_notes);
  FitOutcome fit;
  if (s.fit) {
    std::vector<std::string> labels;
    for (size_t g = 0; g < cap.size(); ++g)
      labels.push_back(fmt::format("{} ({})", names(g), (g < d.gpu_list.size() ? d.gpu_list[g] : d.gpu).display));
    fit = fit_params(m, s, free_at_start, fit_margins(d, m, s, free_at_start, mm, opt.files_elsewhere), s.fit_ctx_min, labels);
  }
  auto [kv, p] = lay_out(m, s, free_at_start);

  Forecast f;
  f.engine = "llamacpp";
  f.version = s.build > 0 ? fmt::format("b{}", s.build) : "newest";
  f.era = era_name(s.build);
  add_settings(f, s, kv, d.flag("--quant") ? *d.flag("--quant") : "", names);
  std::vector<int64_t> free_after_target = free_at_start;
  for (size_t g = 0; g < free_after_target.size(); ++g) free_after_target[g] -= p.gpu[g].model + p.gpu[g].kv + p.gpu[g].compute;
  std::optional<DraftPlan> draft = plan_draft(d, s, kv ? &*kv : nullptr, free_after_target, opt.files_elsewhere);
  std::vector<std::string> draft_notes;
  if (draft && !draft->model) draft_notes = std::move(draft->notes), draft.reset();
  const HostShare host = unified_memory(d.gpu) && cap.size() == 1 ? host_share(p.host, s.no_mmap) : HostShare{};
  f.ranks = simulate(d, p, cap, names, mm, draft, host, f.failure);
  f.verdict = verdict_from_ranks(f.ranks, f.failure);
  if (!draft_notes.empty() && f.verdict == Verdict::Fits) f.verdict = Verdict::AtRisk;  // a draft not counted
  if (kv) {
    f.kv_tokens = kv->n_ctx;
    f.context_len = kv->n_ctx_seq;
    f.max_running_requests = kv->n_seq_max;
    f.max_concurrency = kv->n_ctx_seq > 0 ? static_cast<double>(kv->n_ctx) / static_cast<double>(kv->n_ctx_seq) : 0;
  }
  int64_t least = INT64_MAX;
  for (const auto& r : f.ranks) least = std::min(least, r.stages.empty() ? r.capacity_bytes : r.stages.back().free_bytes_after);
  f.headroom_bytes = least == INT64_MAX ? 0 : least;
  Placement shown = p;
  if (draft) add_draft(shown, *draft);
  const std::string host_note = check_host_ram(f, shown.host, s.no_mmap, d.host_memory_bytes);
  add_devices(f, shown, cap, names, !s.no_mmap, d.host_memory_bytes);
  if (!opt.detail) return f;
  f.notes = m.notes;
  for (auto& n : mm_notes) f.notes.push_back(std::move(n));
  note_host_state(f, d, "llama.cpp reads each device's free memory at start: the default split and --fit work from what is left");
  for (const auto& line : fit.log) f.log.push_back("llama_params_fit_impl: " + line);
  for (auto& line : log_lines(m, s, kv ? &*kv : nullptr, p, names)) f.log.push_back(std::move(line));
  if (m.kv_declined) f.notes.push_back("KV cache not modelled: " + *m.kv_declined + "; the plan counts none");
  if (m.mla)
    f.notes.push_back(fmt::format("multi-head latent attention: {}{}", has(Rule::MlaLatentKOnly, s.build)
                                      ? "the cache holds the latent K only (kv_lora_rank + rope dims; V 0 MiB, as 2026 logs print)"
                                        : has(Rule::MlaLatentKv, s.build) ? "latent K and V (kv_lora_rank) per layer (GUESS for builds b5090-b7999)"
                                                        : "builds before MLA support (~b5090) cache every head's K and V",
                                  m.mla->index_dim > 0 && !has(Rule::MlaLatentKOnly, s.build) ? "; the DSA indexer cache of this build is not modelled" : ""));
  f.notes.insert(f.notes.end(), s.notes.begin(), s.notes.end());
  f.notes.insert(f.notes.end(), device_notes.begin(), device_notes.end());
  f.notes.insert(f.notes.end(), p.notes.begin(), p.notes.end());
  if (draft) f.notes.insert(f.notes.end(), draft->notes.begin(), draft->notes.end());
  f.notes.insert(f.notes.end(), draft_notes.begin(), draft_notes.end());
  f.notes.push_back("compute buffers are an ESTIMATE (the largest tensors of the worst-case ubatch graph; docs/llamacpp-plan.md), "
                    "shown with their range; model and KV buffers are exact from the tensor table");
  if (fit.ran)
    f.notes.push_back(fmt::format("--fit on (llama.cpp's default from ~b6895): {}; pass --fit off to plan the values as given",
                                  fit.failed    ? "it gives up (see the log) and the start goes on with the values as set"
                                  : fit.changed ? "the context / layers above are what it chose for its free-memory target per device"
                                                : "every device keeps its target, nothing changed"));
  if (fit.gave_up.find("n_gpu_layers") != std::string::npos)
    f.notes.push_back("--fit stopped at the layers because -ngl is a number: -ngl auto (the default) lets it choose them per device");
  else if (fit.gave_up.find("tensor_buft_overrides") != std::string::npos)
    f.notes.push_back("--fit stopped at the layers because -ot / --cpu-moe / --n-cpu-moe set tensor overrides (llama.cpp#27872): "
                      "without them it moves the experts of whole layers to host memory itself; `headroom tune` gives the fewest --n-cpu-moe");
  if (std::string n = fused_gate_up_note(m, s); !n.empty()) f.notes.push_back(std::move(n));
  if (!host_note.empty()) f.notes.push_back(host_note);
  if (s.split == SplitMode::Row && cap.size() > 1 && (backend == "CUDA" || backend == "ROCm"))
    f.notes.push_back("--split-mode row: each row-split matrix product also takes scratch from the backend's memory pool on every "
                      "device while it runs (ggml-cuda's multi-GPU mul_mat), beyond the compute buffers reserved at start; not "
                      "modelled, so keep room on the devices that hold rows (a start that fits can fail at the first request)");
  if (unified_memory(d.gpu))
    f.notes.push_back(fmt::format("{}: the host's buffers come out of the GPU's memory and are counted in its stages{}",
                                  d.gpu.display, !s.no_mmap && shown.host.model > 0
                                                     ? fmt::format("; the {:.2f} GiB of weights mapped from the file sit in the page cache beside "
                                                                   "them, which the OS drops under pressure (slower, not a failure)",
                                                                   static_cast<double>(shown.host.model) / GiB)
                                                     : ""));
  if (!s.ngl_given && s.n_gpu_layers == 0)
    f.notes.push_back("-ngl not given: builds before ~b6800 offload no layer by default (pass -ngl 99 to offload all)");
  return f;
}

}  // namespace headroom
