// llama.cpp's --fit (on by default in recent builds): before loading, llama_params_fit projects
// each device's use (model + context + compute) and, when a device would keep less than the
// target (1024 MiB), lowers what the user left unset — first the context, then the experts of MoE
// layers (one GPU) or the offloaded layers (dense). Restated from ggml-org/llama.cpp
// src/llama.cpp llama_params_fit_impl (code index copy; commit not known). docs/llamacpp-plan.md.
#include <algorithm>
#include <fmt/format.h>

#include "engines/llamacpp/llamacpp_fit.h"

namespace headroom::llamacpp {

namespace {
constexpr int64_t kMiB = 1024 * 1024;

struct Projection {
  std::vector<int64_t> used, ctx;
  int64_t sum_used = 0, sum_ctx = 0;
};

Projection project(const LlamaModel& m, const ServerSettings& s, const std::vector<int64_t>& free) {
  const Placement p = lay_out(m, s, free).p;
  Projection r;
  for (const auto& b : p.gpu) {
    r.used.push_back(b.model + b.kv + b.indexer + b.recurrent + b.compute);
    r.ctx.push_back(b.kv + b.indexer + b.recurrent);
    r.sum_used += r.used.back();
    r.sum_ctx += r.ctx.back();
  }
  return r;
}

int64_t min_surplus(const Projection& p, const std::vector<int64_t>& free) {
  int64_t s = INT64_MAX;
  for (size_t i = 0; i < free.size(); ++i) s = std::min(s, free[i] - p.used[i]);
  return s;
}
int64_t global_surplus(const Projection& p, const std::vector<int64_t>& free, int64_t margin) {
  int64_t s = 0;
  for (size_t i = 0; i < free.size(); ++i) s += free[i] - p.used[i] - margin;
  return s;
}

// Step 4: every layer alike: memory = base + per_layer x layers, per device, extrapolated.
void fit_dense(const LlamaModel& m, ServerSettings& s, const std::vector<int64_t>& free, int64_t margin, FitOutcome& out) {
  const int nd = static_cast<int>(free.size());
  const int per_dev = std::max(2, m.n_layer / nd);
  auto use_with = [&](int layers_each) {
    ServerSettings t = s;
    t.n_gpu_layers = layers_each * nd;
    if (nd > 1) t.tensor_split.assign(static_cast<size_t>(nd), static_cast<double>(layers_each));
    return project(m, t, free).used;
  };
  const std::vector<int64_t> one = use_with(1), many = use_with(per_dev);
  int total = 0;
  for (int d = 0; d < nd; ++d) {
    const int64_t per_layer = std::max<int64_t>(1, (many[static_cast<size_t>(d)] - one[static_cast<size_t>(d)]) / (per_dev - 1));
    const int64_t base = one[static_cast<size_t>(d)] - per_layer;
    total += static_cast<int>(std::clamp<int64_t>((free[static_cast<size_t>(d)] - margin - base) / per_layer, 0, m.n_layer + 1));
  }
  s.n_gpu_layers = std::min(total, m.n_layer + 1);
  out.changed = true;
  if (nd > 1) s.tensor_split.assign(static_cast<size_t>(nd), static_cast<double>(per_dev));
  out.log.push_back(fmt::format("set n_gpu_layers to {}", s.n_gpu_layers));
}

// Step 3a (one GPU): the dense part of every layer on the GPU, the experts of the first layers on
// the host, as many full layers as the surplus pays for (linear interpolation).
bool fit_moe_one_gpu(const LlamaModel& m, ServerSettings& s, const std::vector<int64_t>& free, int64_t margin,
                     int64_t projected_full, FitOutcome& out) {
  ServerSettings all_cpu = s;
  all_cpu.cpu_moe = true;
  const Projection dense = project(m, all_cpu, free);
  const int64_t surplus = global_surplus(dense, free, margin);
  if (surplus < 0) {
    out.log.push_back(fmt::format("with only dense weights in device memory there is still a total deficit of {} MiB", -surplus / kMiB));
    return false;
  }
  const int64_t per_layer = std::max<int64_t>(1, (projected_full - dense.used[0]) / std::max(1, m.n_layer - m.n_dense_lead));
  const int full = static_cast<int>(std::min<int64_t>(surplus / per_layer + m.n_dense_lead + 1, m.n_layer + 1));
  const int part = m.n_layer + 1 - full;
  s.n_cpu_moe = part;  // experts of blocks 0..part-1 on the host (leading dense blocks have none)
  out.changed = true;
  out.log.push_back(fmt::format("set to use {} dense-only layers and {} full layers", part, full));
  return true;
}
}  // namespace

FitOutcome fit_params(const LlamaModel& m, ServerSettings& s, const std::vector<int64_t>& free, int64_t margin, int64_t n_ctx_min) {
  FitOutcome out;
  out.ran = true;
  const int nd = static_cast<int>(free.size());
  if (nd == 0) return out;
  const Projection full = project(m, s, free);
  int64_t sum_free = 0;
  for (int64_t f : free) sum_free += f;
  out.log.push_back(fmt::format("projected to use {} MiB of device memory vs. {} MiB of free device memory", full.sum_used / kMiB, sum_free / kMiB));
  if (min_surplus(full, free) >= margin) {
    out.log.push_back(fmt::format("will leave at least {} >= {} MiB of free device memory, no changes needed", min_surplus(full, free) / kMiB, margin / kMiB));
    return out;
  }
  // Step 2: a smaller context, when the user left it to the model (-c 0).
  int64_t surplus = global_surplus(full, free, margin), reduction_bytes = 0;
  if (s.kv.ctx_size == 0 && m.kv.n_ctx_train > n_ctx_min && full.sum_ctx > 0) {
    const int64_t per_ctx = std::max<int64_t>(1, full.sum_ctx / m.kv.n_ctx_train);
    const int64_t cut = std::min((-surplus + per_ctx - 1) / per_ctx, m.kv.n_ctx_train - n_ctx_min);
    s.kv.ctx_size = m.kv.n_ctx_train - cut;
    out.changed = true;
    reduction_bytes = cut * per_ctx;
    surplus += reduction_bytes;
    out.log.push_back(fmt::format("context size reduced from {} to {} -> need {} MiB less memory in total", m.kv.n_ctx_train,
                                  s.kv.ctx_size, reduction_bytes / kMiB));
  } else if (s.kv.ctx_size != 0) {
    out.log.push_back(fmt::format("context size set by user to {} -> no change", s.kv.ctx_size));
  }
  if (surplus > 0) {
    out.log.push_back("entire model can be fit across devices by reducing context");
    return out;
  }
  // Step 3/4: layers, unless the user fixed them.
  auto abort = [&](std::string why) {
    out.failed = true;
    out.log.push_back("failed to fit params to free device memory: " + why + ", abort");
    return out;
  };
  if (s.ngl_given) return abort(fmt::format("n_gpu_layers already set by user to {}", s.n_gpu_layers));
  if (nd > 1 && !s.tensor_split.empty()) return abort("model_params::tensor_split already set by user");
  if (nd > 1 && s.split == SplitMode::Row) return abort("changing weight allocation for LLAMA_SPLIT_MODE_ROW not implemented");
  if (!s.overrides.empty() || s.cpu_moe || s.n_cpu_moe > 0) return abort("model_params::tensor_buft_overrides already set by user");
  const bool moe = std::any_of(m.tensors.begin(), m.tensors.end(), [](const QuantTensor& t) { return t.expert; });
  if (moe && nd > 1) {
    out.unmodelled = "llama.cpp's layer search for a MoE model over several GPUs (step 3b) is not modelled: the plan keeps every layer offloaded";
    return out;
  }
  if (moe && fit_moe_one_gpu(m, s, free, margin, full.used[0] - reduction_bytes, out)) return out;
  fit_dense(m, s, free, margin, out);
  return out;
}

}  // namespace headroom::llamacpp
