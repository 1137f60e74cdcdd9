// -md / --model-draft: llama-server's draft model for speculative decoding, as server.cpp's
// load_model and init load it (2025-2026 builds): the draft's weights once, split over the
// devices with the target's --split-mode / --tensor-split (or on --device-draft's GPU); its own
// -ngld; then one draft context per slot, each a KV cache of --ctx-size-draft cells (default: the
// target's context per sequence) for one sequence, in -ctkd / -ctvd (f16), and its compute buffer
// (n_batch = the draft context). The target's -ot / --cpu-moe do not apply (the draft has its own
// overrides, not modelled). Derivation: docs/llamacpp-plan.md "Draft model".
#include <algorithm>
#include <fmt/format.h>

#include "headroom/error.h"
#include "headroom/llamacpp_plan.h"
#include "headroom/units.h"
#include "engines/llamacpp/llamacpp_rule_table.h"

namespace headroom::llamacpp {

namespace {

std::shared_ptr<const LlamaModel> load_draft(const Deployment& d, const std::string& spec, std::vector<std::string>& notes) {
  const bool gguf_file = spec.size() > 5 && spec.compare(spec.size() - 5, 5, ".gguf") == 0;
  if (gguf_file) return std::make_shared<const LlamaModel>(llama_model_from_gguf(spec));
  const std::string* q = d.flag("--quant");
  if (!q) fail_input("command line", "--model-draft", "give the draft as a .gguf file (or a model id with --quant for the target's type)");
  notes.push_back(fmt::format("draft {} derived in the target's type {} (a GUESS: give its .gguf for its own types)", spec, *q));
  return std::make_shared<const LlamaModel>(llama_model_from_hf(*load_model(spec), require_quant(*q)));
}

// --device-draft CUDA1 (ROCm1, Vulkan1, ...): every draft layer on that GPU; -1 when not one GPU.
int draft_device(const Deployment& d) {
  const std::string* v = d.flag("--device-draft");
  if (!v) return -1;
  size_t i = v->size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>((*v)[i - 1]))) --i;
  if (i == v->size() || v->find(',') != std::string::npos) fail_input("command line", "--device-draft", fmt::format("'{}' is not one device such as CUDA1", *v));
  const int n = v->size() - i > 6 ? d.gpus : std::stoi(v->substr(i));  // more digits: no such GPU
  if (n >= d.gpus) fail_input("command line", "--device-draft", fmt::format("{}: there are {} GPUs (--gpus)", *v, d.gpus));
  return n;
}

// The draft's llama-server flags: the target's, with its draft spellings in their place.
Deployment draft_deployment(const Deployment& d, int64_t n_ctx_draft) {
  static constexpr std::pair<std::string_view, std::string_view> kDraftOf[] = {
      {"--n-gpu-layers-draft", "--n-gpu-layers"}, {"--cache-type-k-draft", "--cache-type-k"}, {"--cache-type-v-draft", "--cache-type-v"}};
  static constexpr std::string_view kTargetOnly[] = {
      "--n-gpu-layers", "--gpu-layers", "--cache-type-k", "--cache-type-v", "--ctx-size", "--parallel", "--kv-unified", "--override-tensor",
      "--cpu-moe", "--n-cpu-moe", "--mmproj", "--no-mmproj-offload", "--model-draft", "--ctx-size-draft", "--device-draft", "--fit",
      "--fit-target", "--fit-ctx", "--batch-size", "--swa-full", "--quant"};
  Deployment dd = d;
  dd.flags.clear();
  for (const auto& [k, v] : d.flags) {
    if (std::find(std::begin(kTargetOnly), std::end(kTargetOnly), k) != std::end(kTargetOnly)) continue;
    const auto as = std::find_if(std::begin(kDraftOf), std::end(kDraftOf), [&k = k](const auto& p) { return p.first == k; });
    dd.flags.emplace_back(as != std::end(kDraftOf) ? std::string(as->second) : k, v);
  }
  dd.flags.emplace_back("--ctx-size", std::to_string(n_ctx_draft));
  dd.flags.emplace_back("--parallel", "1");
  dd.flags.emplace_back("--batch-size", std::to_string(n_ctx_draft));  // cparams_dft.n_batch = n_ctx_dft
  dd.flags.emplace_back("--fit", "off");
  return dd;
}

}  // namespace

std::optional<DraftPlan> plan_draft(const Deployment& d, const ServerSettings& target, const KvCache* target_kv,
                                    const std::vector<int64_t>& free_after_target, bool files_elsewhere) {
  const std::string* spec = d.flag("--model-draft");
  if (!spec) return std::nullopt;
  DraftPlan out;
  try {
    out.model = load_draft(d, *spec, out.notes);
  } catch (const InputError& e) {
    if (!files_elsewhere) throw;
    out.notes.push_back(fmt::format("draft model not read ({}): its weights, KV cache and compute buffers are not counted, so the forecast "
                                    "is low and at most AT RISK; give the draft's .gguf to plan it",
                                    e.what()));
    return out;
  }
  // server.cpp: params_dft.n_ctx = speculative.n_ctx == 0 ? llama_n_ctx_seq(ctx) (n_ctx / n_parallel in 2025) : speculative.n_ctx.
  int64_t n_ctx = std::max<int64_t>(0, int_flag(d, "--ctx-size-draft", 0, int64_t{1} << 32));
  if (n_ctx == 0) n_ctx = target_kv ? target_kv->n_ctx_seq : std::max<int64_t>(target.kv.ctx_size, 512);
  out.s = parse_server_settings(draft_deployment(d, n_ctx), out.model->n_layer);
  out.s.notes.clear();
  out.s.cuda_row_padding = target.cuda_row_padding;
  if (const int dev = draft_device(d); dev >= 0) {
    out.s.tensor_split.assign(free_after_target.size(), 0.0);
    out.s.tensor_split[static_cast<size_t>(dev)] = 1.0;
    out.s.split = SplitMode::Layer;
  }
  LaidOut lo = lay_out(*out.model, out.s, free_after_target);
  out.kv = lo.kv;
  out.p = std::move(lo.p);
  out.slots = target_kv ? std::max(1, target_kv->n_seq_max) : 1;
  out.notes.push_back(fmt::format("draft model {}: {} layers on the GPUs, then one draft context per slot ({} slot{}): {} cells each for one "
                                  "sequence (server.cpp: a llama_context per slot) and its compute buffer (an ESTIMATE); {}",
                                  out.model->name, out.p.layers_offloaded, out.slots, out.slots == 1 ? "" : "s", out.kv ? out.kv->n_ctx : n_ctx,
                                  has(Rule::FitCountsDraft, target.build) ? "llama.cpp's --fit (~b9270+) keeps room for one draft context"
                                                                          : "llama.cpp's --fit does not count the draft (builds before ~b9270)"));
  return out;
}

}  // namespace headroom::llamacpp
