// The llama.cpp engine model (--engine llamacpp[@bNNNN]): llama-server's flags resolved for a
// build, the model's tensors placed on devices as llama_model::load_tensors places them, the KV
// cache split by the layers each device holds, and the compute buffers (an estimate).
// Derivations: docs/llamacpp-plan.md.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "headroom/deployment.h"
#include "headroom/gguf.h"
#include "headroom/llamacpp_kv.h"
#include "headroom/llamacpp_quant.h"

namespace headroom::llamacpp {

enum class SplitMode { Layer, Row, None };
enum class FlashAttn { Off, On, Auto };

// One -ot / --override-tensor rule: tensors whose name matches `pattern` go to `device`
// (-1: the host; >= 0: that GPU).
struct TensorOverride {
  std::string pattern;
  int device = -1;
};

// What llama.cpp's --fit moves off a partly offloaded layer (common/fit.cpp common_layer_fraction_t):
// Attn: every FFN tensor (blk.N.ffn_(gate|up|gate_up|down).*), Up: all but the up projections,
// Gate: the down projections, Moe: the routed experts (blk.N.ffn_(up|down|gate_up|gate)_(ch|)exps).
enum class LayerFraction { Attn, Up, Gate, Moe };
struct FitOverride {
  int layer = 0;
  LayerFraction fraction = LayerFraction::Moe;
  int device = -1;  // -1: the host; >= 0: the next GPU (a partial layer overflowing onto it)
};

struct ServerSettings {
  int build = 0;                  // bNNNN; 0 = newest known rules
  int n_gpu_layers = 0;           // resolved: layers offloaded (from the last), n_layer + 1 = all + output
  bool ngl_given = false;
  int64_t ngl_as_given = -1;      // the -ngl value as llama.cpp stores it (all = -2), for --fit's message
  SplitMode split = SplitMode::Layer;
  std::vector<double> tensor_split;  // empty: by device memory
  int main_gpu = 0;
  FlashAttn fa = FlashAttn::Auto;
  bool no_kv_offload = false, no_mmap = false;
  int n_cpu_moe = 0;              // --n-cpu-moe N: experts of the first N layers on the host; --cpu-moe: all
  bool cpu_moe = false;
  std::vector<TensorOverride> overrides;
  std::vector<FitOverride> fit_overrides;  // written by --fit (llamacpp_fit.h), never by the user
  KvSettings kv;
  std::string quant;              // --quant (derived tensor table); "" for a GGUF file
  bool cuda_row_padding = true;   // CUDA / ROCm buffers pad each quantized tensor (set from the backend)
  bool fit = false;               // --fit on (the default from ~b6895): llama_params_fit adjusts unset params
  int64_t fit_target = 1024 * 1024 * 1024LL;  // --fit-target MiB: free memory to keep per device
  int64_t fit_ctx_min = 4096;     // --fit-ctx: the smallest context fit may choose
  // --mmproj FILE: the multimodal projector (vision tower) llama-server loads after the text model,
  // on the first GPU unless --no-mmproj-offload; its type read from the file name (mmproj-BF16.gguf).
  struct Mmproj {
    bool on = false, offload = true;
    std::string type = "F16";
    double bytes_per_param = 2.0;
  } mmproj;
  std::vector<std::pair<std::string, std::string>> resolved;  // flag -> value in force, for the report
  std::vector<std::string> notes;
};
// Reads llama-server's flags from the deployment (its own spellings). InputError for bad values.
ServerSettings parse_server_settings(const Deployment& d, int n_layer);
// An integer llama-server flag in [lo, hi]: -1 when not given, InputError ("'x' is not an integer
// in [lo, hi]") otherwise.
int64_t int_flag(const Deployment& d, std::string_view flag, int64_t lo, int64_t hi);
// The build number of "b8157", "8157", "" / "latest" (0 = newest). InputError otherwise.
int parse_build(const std::string& version);
// Flags llama-server accepts (modelled or said to have no memory effect).
const std::vector<std::string_view>& llamacpp_flags();
// Memory other processes hold on each GPU (Deployment::held_by_others) given the free memory
// llama.cpp reported at start ("using device CUDA0 (...) - 9862 MiB free", after its own runtime):
// capacity - runtime - free, never below 0. Empty unless there is one figure per GPU.
std::vector<int64_t> held_from_free_at_start(const Deployment& d, const std::vector<int64_t>& free_bytes);

// What the plan needs from a model, from either source (derived or a real GGUF).
struct LlamaModel {
  uint64_t serial = 0;  // unique per model built (memo keys)
  std::string name;
  std::vector<QuantTensor> tensors;
  bool tied_output = false;
  KvModel kv;
  std::optional<std::string> kv_declined;  // why the KV cache is not modelled for this model
  // Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2, GLM-5): what each era caches per layer.
  struct Mla {
    int64_t latent_k = 0, latent_v = 0;  // kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    int64_t full_k = 0, full_v = 0;      // n_head x (qk_nope + qk_rope), n_head x v_head_dim
    int64_t index_dim = 0;               // DSA indexer keys (DeepSeek-V3.2, GLM-5): llama_kv_cache_dsa
    std::vector<char> indexer_layers;    // which layers keep indexer keys
  };
  std::optional<Mla> mla;
  int n_layer = 0;
  int n_dense_lead = 0;  // leading dense blocks of a MoE model (hparams n_layer_dense_lead)
  int64_t n_embd = 0, n_head = 0, head_dim = 0, n_vocab = 0, n_ff = 0;  // n_ff: per token (MoE: used experts)
  int64_t recurrent_state_bytes_per_seq = 0;  // hybrid/recurrent layers' state (llama_memory_recurrent)
  std::vector<std::string> notes;
};
LlamaModel llama_model_from_hf(const Model& m, const QuantName& q);
// The per-layer KV widths the build caches (MLA models differ by era; others are m.kv).
KvModel kv_model_for_build(const LlamaModel& m, int build);
LlamaModel llama_model_from_gguf(const std::string& path);
// A GGUF file's header(s) already read (a Hub repo's file by Range requests); `label` names it in the notes.
LlamaModel llama_model_from_gguf_files(const gguf::ModelFiles& files, const std::string& label);
// `--model ORG/NAME:TAG` or `--model ORG/NAME --gguf FILE.gguf`: that file's header from the Hub
// (hub_gguf.cpp); nullptr when the deployment names no Hub GGUF file.
std::shared_ptr<const LlamaModel> llama_model_from_hub(const Deployment& d);

// Per-device buffers, devices 0..n-1 the GPUs, then the host.
struct DeviceBuffers {
  int64_t model = 0, kv = 0, compute = 0, compute_low = 0, compute_high = 0, output = 0, recurrent = 0;
  int64_t kv_swa = 0;   // the sliding-window cache's part of kv (its own buffers and log lines)
  int64_t indexer = 0;  // the DSA indexer cache (MLA + DSA models)
  int layers = 0;
};
struct Placement {
  std::vector<DeviceBuffers> gpu;
  DeviceBuffers host;
  int layers_offloaded = 0;  // as "offloaded N/M layers to GPU" counts them (output layer included)
  int output_device = -1;    // the GPU holding the output layer; -1 = host
  std::vector<std::string> notes;
};
// Weights and KV per device (kv_cache: the sizes of the whole cache; split by each layer's width).
// free_bytes: each GPU's memory, which sets the default layer split (llama.cpp splits by free memory).
Placement place(const LlamaModel& m, const KvModel& kvm, const ServerSettings& s, const std::vector<int64_t>& free_bytes,
                const KvCache* kv_cache);

// The compute buffers (ggml_gallocr reserve of the worst-case ubatch graph): an ESTIMATE.
void estimate_compute(const LlamaModel& m, const ServerSettings& s, const KvCache* kv_cache, Placement& p);

// The whole layout for the given free memory: the build's KV cache (none when declined), each
// device's weights and KV, then the compute buffers (what the plan and the fit projection share).
struct LaidOut {
  std::optional<KvCache> kv;
  Placement p;
};
LaidOut lay_out(const LlamaModel& m, const ServerSettings& s, const std::vector<int64_t>& free_bytes);

// -md / --model-draft (draft_model.cpp): the draft's weights per device and ONE slot's draft
// context (its KV cache and compute buffer in p); llama-server creates `slots` such contexts.
struct DraftPlan {
  std::shared_ptr<const LlamaModel> model;  // null: a log's draft file not on this machine (files_elsewhere)
  ServerSettings s;
  std::optional<KvCache> kv;
  Placement p;
  int slots = 1;
  std::vector<std::string> notes;
};
// nullopt without --model-draft. free_after_target: each GPU's free memory once the target's
// context exists (what the draft's default split reads).
// files_elsewhere (PlanOptions): a draft .gguf that cannot be read gives a DraftPlan without a
// model and a note instead of an InputError.
std::optional<DraftPlan> plan_draft(const Deployment& d, const ServerSettings& target, const KvCache* target_kv,
                                    const std::vector<int64_t>& free_after_target, bool files_elsewhere = false);

}  // namespace headroom::llamacpp
