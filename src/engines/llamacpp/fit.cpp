// llama.cpp's --fit (on by default from ~b6895), restated from ggml-org/llama.cpp common/fit.cpp
// common_params_fit_impl (code index copy, 2026; src/llama.cpp llama_params_fit_impl before it):
// project each device's use (model + context + compute); when a device would keep less than its
// target (1024 MiB) lower what the user left unset — the context first, then the layers per device
// by a false-position search back to front (a MoE model's dense parts first, its experts on the host),
// then, when the dense parts fit, whole MoE layers front to back with one layer partly overflowing.
// Every projection is this plan's own layout (lay_out). docs/llamacpp-plan.md.
#include <algorithm>
#include <fmt/format.h>

#include "engines/llamacpp/llamacpp_fit.h"
#include "engines/llamacpp/llamacpp_rule_table.h"

namespace headroom::llamacpp {

namespace {
constexpr int64_t kMiB = 1024 * 1024;

struct Projection {
  std::vector<int64_t> used;
  int64_t sum_used = 0, sum_model = 0, sum_ctx = 0;
  int streams = 1;  // KV streams: one per sequence unless the cache is unified
};

Projection project(const LlamaModel& m, const ServerSettings& s, const std::vector<int64_t>& free) {
  const LaidOut lo = lay_out(m, s, free);
  Projection r;
  if (lo.kv && !lo.kv->unified) r.streams = std::max(1, lo.kv->n_seq_max);
  for (const auto& b : lo.p.gpu) {
    r.used.push_back(b.model + b.kv + b.indexer + b.recurrent + b.compute);
    r.sum_used += r.used.back();
    r.sum_model += b.model;
    r.sum_ctx += b.kv + b.indexer + b.recurrent;
  }
  return r;
}

// Layers given to one device: the first n_full() whole, the last n_part without their experts (the
// first of those without the FFN parts `overflow` names instead, onto overflow_device).
struct DeviceLayers {
  int n_layer = 0, n_part = 0;
  LayerFraction overflow = LayerFraction::Moe;
  int n_full() const { return n_layer - n_part; }
};

class LayerSearch {
 public:
  LayerSearch(const LlamaModel& m, const ServerSettings& s, const std::vector<int64_t>& free) : m_(m), s_(s), free_(free) {}

  // set_ngl_tensor_split_tbo: -ngl, the split by layer counts and the per-layer overrides.
  ServerSettings apply(const std::vector<DeviceLayers>& ngl, const std::vector<int>& overflow_device) const {
    ServerSettings t = s_;
    const size_t nd = ngl.size();
    t.n_gpu_layers = 0;
    for (const auto& n : ngl) t.n_gpu_layers += n.n_layer;
    if (nd > 1) {
      t.tensor_split.clear();
      for (const auto& n : ngl) t.tensor_split.push_back(n.n_layer);
    }
    t.fit_overrides.clear();
    int il0 = m_.n_layer + 1 - t.n_gpu_layers;
    for (size_t id = 0; id < nd; ++id) {
      il0 += ngl[id].n_full();
      for (int il = il0; il < il0 + ngl[id].n_part; ++il)
        t.fit_overrides.push_back(il == il0 ? FitOverride{il, ngl[id].overflow, overflow_device[id]} : FitOverride{il, LayerFraction::Moe, -1});
      il0 += ngl[id].n_part;
    }
    return t;
  }
  std::vector<int64_t> memory(const std::vector<DeviceLayers>& ngl, const std::vector<int>& overflow_device) const {
    return project(m_, apply(ngl, overflow_device), free_).used;
  }
  int64_t free(size_t id) const { return free_[id]; }

 private:
  const LlamaModel& m_;
  const ServerSettings& s_;
  const std::vector<int64_t>& free_;
};

// The false-position step: how many of the `delta` layers between the bound that fits (`mem`) and
// the one that does not (`mem_high`) to try next (unsigned arithmetic as in fit.cpp: a negative
// guess wraps and is clamped to delta - 1).
int step_size(int delta, int64_t target, int64_t mem, int64_t mem_high) {
  const int64_t headroom = mem_high - mem;
  int64_t step = headroom > 0 ? static_cast<int64_t>(delta) * (target - mem) / headroom : delta - 1;
  if (step < 0) step = delta - 1;
  return static_cast<int>(std::clamp<int64_t>(step, 1, delta - 1));
}

// Step 2 before PR #18372: the deficit over the context's bytes per token (KV and state only),
// done when that is enough, on one GPU or several.
bool reduce_context_by_kv(const LlamaModel& m, ServerSettings& s, const std::vector<int64_t>& free, const std::vector<int64_t>& margins,
                          int64_t n_ctx_min,
                          const Projection& full, FitOutcome& out) {
  int64_t surplus = 0;
  for (size_t id = 0; id < free.size(); ++id) surplus += free[id] - full.used[id] - margins[id];
  const int64_t per_ctx = std::max<int64_t>(1, full.sum_ctx / m.kv.n_ctx_train);
  const int64_t cut = std::min((-surplus + per_ctx - 1) / per_ctx, m.kv.n_ctx_train - n_ctx_min);
  s.kv.ctx_size = m.kv.n_ctx_train - cut;
  out.changed = true;
  out.log.push_back(fmt::format("context size reduced from {} to {} -> need {} MiB less memory in total", m.kv.n_ctx_train, s.kv.ctx_size,
                                cut * per_ctx / kMiB));
  if (surplus + cut * per_ctx <= 0) return false;
  out.log.push_back("entire model can be fit across devices by reducing context");
  return true;
}

// Step 2: a context between --fit-ctx and the model's, linear in the projected use, rounded down to
// 256 per stream (only when the user left -c unset).
// `streams`: KV streams the context is shared by (one per slot without a unified cache, PR #27496).
bool reduce_context(const LlamaModel& m, ServerSettings& s, const std::vector<int64_t>& free, const std::vector<int64_t>& margins, int64_t n_ctx_min,
                    const Projection& full, bool moe, bool ctx_auto, int64_t streams, FitOutcome& out) {
  const int64_t nd = static_cast<int64_t>(free.size());
  if (!ctx_auto) {
    out.log.push_back(fmt::format("context size set by user to {} -> no change", s.kv.ctx_size));
    return false;
  }
  const int64_t n_ctx_max = m.kv.n_ctx_train * streams;
  const int64_t align = 256 * streams;
  if (n_ctx_min != INT64_MAX) n_ctx_min *= streams;
  if (n_ctx_max <= n_ctx_min) {
    out.log.push_back(n_ctx_min == INT64_MAX
                          ? fmt::format("user has requested full context size of {} -> no change", n_ctx_max)
                          : fmt::format("default model context size is {} which is <= the min. context size of {} -> no change", n_ctx_max, n_ctx_min));
    return false;
  }
  if (!has(Rule::FitContextInterpolated, s.build)) return reduce_context_by_kv(m, s, free, margins, n_ctx_min, full, out);
  int64_t target = 0;
  for (size_t id = 0; id < free.size(); ++id) target += free[id] - margins[id];
  if (nd > 1) {  // only whole layers (dense) or whole tensors (MoE, ~1/3 layer) move: keep more back
    const int64_t per_layer = full.sum_model / std::max(1, std::min(s.n_gpu_layers, m.n_layer));
    target -= (nd + 1) * per_layer / (moe ? 6 : 2);
  }
  s.kv.ctx_size = n_ctx_min;
  out.changed = true;
  const int64_t used_min = project(m, s, free).sum_used;
  if (target > used_min && full.sum_used > used_min) {
    int64_t n_ctx = n_ctx_min + (n_ctx_max - n_ctx_min) * (target - used_min) / (full.sum_used - used_min);
    n_ctx = std::max(n_ctx - n_ctx % align, n_ctx_min);
    s.kv.ctx_size = n_ctx;
    const int64_t per_ctx = (full.sum_used - used_min) / (n_ctx_max - n_ctx_min);
    out.log.push_back(fmt::format("context size reduced from {} to {} -> need {} MiB less memory in total", n_ctx_max, n_ctx,
                                  (n_ctx_max - n_ctx) * per_ctx / kMiB));
    out.log.push_back(nd <= 1 ? "entire model can be fit by reducing context" : "entire model should be fit across devices by reducing context");
    return nd <= 1;
  }
  out.log.push_back(fmt::format("context size reduced from {} to {} -> need {} MiB less memory in total", n_ctx_max, n_ctx_min,
                                (full.sum_used - used_min) / kMiB));
  return false;
}

// One device of step 3: the most layers of those left (back to front) that keep its target.
void fill_device(const LayerSearch& ls, int n_layer, bool moe, const std::vector<int64_t>& targets, int id, std::vector<DeviceLayers>& ngl,
                 const std::vector<int>& overflow, std::vector<int64_t>& mem) {
  const int nd = static_cast<int>(ngl.size());
  int n_unassigned = n_layer + 1;
  for (int jd = id + 1; jd < nd; ++jd) n_unassigned -= ngl[static_cast<size_t>(jd)].n_layer;
  std::vector<DeviceLayers> high = ngl;
  auto& h = high[static_cast<size_t>(id)];
  h.n_layer = n_unassigned;
  if (moe) h.n_part = id < nd - 1 ? h.n_layer : h.n_layer - 1;
  if (h.n_layer <= 0) return;
  std::vector<int64_t> mem_high = ls.memory(high, overflow);
  const size_t i = static_cast<size_t>(id);
  if (mem_high[i] <= targets[i]) {
    ngl = high, mem = mem_high;
    return;
  }
  for (int delta = high[i].n_layer - ngl[i].n_layer; delta > 1; delta = high[i].n_layer - ngl[i].n_layer) {
    const int step = step_size(delta, targets[i], mem[i], mem_high[i]);
    std::vector<DeviceLayers> test = ngl;
    test[i].n_layer += step;
    if (moe) test[i].n_part += id == nd - 1 && test[i].n_part == 0 ? step - 1 : step;
    std::vector<int64_t> mem_test = ls.memory(test, overflow);
    if (mem_test[i] <= targets[i])
      ngl = std::move(test), mem = std::move(mem_test);
    else
      high = std::move(test), mem_high = std::move(mem_test);
  }
}

// Step 3: every device, last first, takes as many layers as keep its target (a MoE model's layers
// dense-only: experts on the host; the last device's output layer whole).
void fill_back_to_front(const LayerSearch& ls, int n_layer, bool moe, const std::vector<int64_t>& targets, std::vector<DeviceLayers>& ngl,
                        const std::vector<int>& overflow, std::vector<int64_t>& mem, const std::vector<std::string>& names,
                        std::vector<std::string>& log) {
  const int nd = static_cast<int>(ngl.size());
  log.push_back(moe ? "filling dense-only layers back-to-front:" : "filling dense layers back-to-front:");
  for (int id = nd - 1; id >= 0; --id) {
    fill_device(ls, n_layer, moe, targets, id, ngl, overflow, mem);
    const size_t i = static_cast<size_t>(id);
    log.push_back(fmt::format("  - {}: {:2} layers, {:6} MiB used, {:6} MiB free", names[i], ngl[i].n_layer, mem[i] / kMiB,
                              (ls.free(i) - mem[i]) / kMiB));
  }
}

// Step 4's last move on device `id`: part of one more layer (its up, then up + gate, or only its
// attention) taken from the first dense-only layer, the rest overflowing to the next device.
void extra_layer(const LayerSearch& ls, const std::vector<int64_t>& targets, size_t id, size_t& dense_start, std::vector<DeviceLayers>& ngl,
                 std::vector<int>& overflow, std::vector<int64_t>& mem) {
  const size_t nd = ngl.size();
  if (dense_start >= nd || ngl[dense_start].n_layer <= (id < nd - 1 ? 0 : 1)) return;
  std::vector<DeviceLayers> test = ngl;
  size_t ds = dense_start;
  test[ds].n_layer--, test[ds].n_part--;
  test[id].n_layer++, test[id].n_part++;
  if (test[ds].n_part == 0) ++ds;
  std::vector<int> overflow_test = overflow;
  if (id < nd - 1) overflow_test[id] = static_cast<int>(id) + 1;
  auto fits = [&](const std::vector<int64_t>& mt) { return mt[id] < targets[id] && (id + 1 == nd || mt[id + 1] < targets[id + 1]); };
  auto accept = [&](std::vector<int64_t> mt) { ngl = test, overflow = overflow_test, mem = std::move(mt), dense_start = ds; };
  test[id].overflow = LayerFraction::Up;
  if (std::vector<int64_t> mt = ls.memory(test, overflow_test); fits(mt)) {
    accept(std::move(mt));
    test[id].overflow = LayerFraction::Gate;
    if (std::vector<int64_t> mg = ls.memory(test, overflow_test); fits(mg)) accept(std::move(mg));
  } else {
    test[id].overflow = LayerFraction::Attn;
    if (std::vector<int64_t> ma = ls.memory(test, overflow_test); fits(ma)) accept(std::move(ma));
  }
}

// Step 4 (MoE, the dense parts fit): dense-only layers become whole layers front to back, then one
// more layer partly on each device (its up / up+gate / attention parts), the rest overflowing to
// the next device or the host.
void fill_front_to_back(const LayerSearch& ls, const std::vector<int64_t>& targets, std::vector<DeviceLayers>& ngl,
                        std::vector<int>& overflow, std::vector<int64_t>& mem, const std::vector<std::string>& names,
                        std::vector<std::string>& log) {
  const size_t nd = ngl.size();
  log.push_back("converting dense-only layers to full layers and filling them front-to-back with overflow to next device/system memory:");
  auto line = [&](size_t id) {
    log.push_back(fmt::format("  - {}: {:2} layers ({:2} overflowing), {:6} MiB used, {:6} MiB free", names[id], ngl[id].n_layer, ngl[id].n_part,
                              mem[id] / kMiB, (ls.free(id) - mem[id]) / kMiB));
  };
  size_t dense_start = nd;
  for (size_t id = nd; id-- > 0;) {
    if (ngl[id].n_layer == 0) break;
    dense_start = id;
  }
  for (size_t id = 0; id <= dense_start && dense_start < nd; ++id) {
    std::vector<DeviceLayers> high = ngl;
    for (size_t jd = dense_start; jd < nd; ++jd) {
      const int move = jd < nd - 1 ? high[jd].n_layer : high[jd].n_layer - 1;
      high[id].n_layer += move;
      high[jd].n_layer -= move;
      high[jd].n_part = 0;
    }
    size_t dense_start_high = nd - 1;
    std::vector<int64_t> mem_high = ls.memory(high, overflow);
    if (mem_high[id] > targets[id]) {
      for (int delta = high[id].n_full() - ngl[id].n_full(); delta > 1; delta = high[id].n_full() - ngl[id].n_full()) {
        const int step = step_size(delta, targets[id], mem[id], mem_high[id]);
        std::vector<DeviceLayers> test = ngl;
        size_t ds = dense_start;
        for (int converted = 0; ds < nd; ++ds) {
          const int n = std::min(step - converted, test[ds].n_part);
          test[ds].n_layer -= n, test[ds].n_part -= n;
          test[id].n_layer += n;
          converted += n;
          if (test[ds].n_part > 0) break;
        }
        std::vector<int64_t> mem_test = ls.memory(test, overflow);
        if (mem_test[id] <= targets[id])
          ngl = std::move(test), mem = std::move(mem_test), dense_start = ds;
        else
          high = std::move(test), mem_high = std::move(mem_test), dense_start_high = ds;
      }
    } else {
      ngl = std::move(high), mem = std::move(mem_high), dense_start = dense_start_high;
    }
    extra_layer(ls, targets, id, dense_start, ngl, overflow, mem);
    line(id);
  }
  for (size_t id = dense_start + 1; id < nd; ++id) line(id);
}

bool is_moe(const LlamaModel& m) {
  return std::any_of(m.tensors.begin(), m.tensors.end(), [](const QuantTensor& t) { return t.expert; });
}
}  // namespace

FitOutcome fit_params(const LlamaModel& m, ServerSettings& s, const std::vector<int64_t>& free, const std::vector<int64_t>& margins, int64_t n_ctx_min,
                      const std::vector<std::string>& names) {
  FitOutcome out;
  out.ran = true;
  const size_t nd = free.size();
  if (nd == 0) return out;
  const bool ctx_auto = s.kv.ctx_size == 0;
  int64_t streams = 1;
  Projection full = project(m, s, free);
  if (ctx_auto && has(Rule::FitNStreams, s.build)) {
    // The context is resolved before anything is measured: the model's per stream (PR #27496).
    streams = full.streams;
    s.kv.ctx_size = m.kv.n_ctx_train * streams;
    if (streams > 1) {
      out.log.push_back(fmt::format("context size unset and KV cache not unified -> using {} for {} sequences:", s.kv.ctx_size, streams));
      full = project(m, s, free);
    }
  }
  int64_t sum_free = 0, surplus = 0;
  bool changes_needed = false;
  for (size_t id = 0; id < nd; ++id) {
    sum_free += free[id];
    surplus += free[id] - full.used[id] - margins[id];
    changes_needed = changes_needed || free[id] - full.used[id] < margins[id];
  }
  out.log.push_back(fmt::format("projected to use {} MiB of device memory vs. {} MiB of free device memory", full.sum_used / kMiB, sum_free / kMiB));
  if (!changes_needed) {
    out.log.push_back(nd == 1 ? fmt::format("will leave {} >= {} MiB of free device memory, no changes needed", (free[0] - full.used[0]) / kMiB,
                                            margins[0] / kMiB)
                              : "targets for free memory can be met on all devices, no changes needed");
    return out;
  }
  const bool moe = is_moe(m);
  if (surplus < 0) {
    const bool old = !has(Rule::FitContextInterpolated, s.build);  // the b6895 README's wording
    out.log.push_back(nd == 1 ? fmt::format(fmt::runtime(old ? "cannot fulfill margin of {} MiB, need to reduce device memory by {} MiB"
                                                             : "cannot meet free memory target of {} MiB, need to reduce device memory by {} MiB"),
                                            margins[0] / kMiB, -surplus / kMiB)
                              : fmt::format("cannot meet free memory targets on all devices, need to use {} MiB less in total", -surplus / kMiB));
    if (reduce_context(m, s, free, margins, n_ctx_min, full, moe, ctx_auto, streams, out)) return out;
  }
  auto abort = [&](std::string why) {
    out.failed = true;
    out.gave_up = why;
    out.log.push_back("failed to fit params to free device memory: " + why + ", abort");
    return out;
  };
  if (s.ngl_given) return abort(fmt::format("n_gpu_layers already set by user to {}", s.ngl_as_given));
  if (nd > 1 && !s.tensor_split.empty()) return abort("model_params::tensor_split already set by user");
  if (nd > 1 && s.split == SplitMode::Row) return abort("changing weight allocation for LLAMA_SPLIT_MODE_ROW not implemented");
  if (!s.overrides.empty() || s.cpu_moe || s.n_cpu_moe > 0) return abort("model_params::tensor_buft_overrides already set by user");

  int64_t surplus_cpu_moe = 0;
  if (moe) {  // every expert tensor on the host: do the dense parts fit?
    ServerSettings dense = s;
    dense.cpu_moe = true;
    const Projection p = project(m, dense, free);
    for (size_t id = 0; id < nd; ++id) surplus_cpu_moe += free[id] - p.used[id] - margins[id];
    out.log.push_back(surplus_cpu_moe > 0 ? fmt::format("with only dense weights in device memory there is a total surplus of {} MiB", surplus_cpu_moe / kMiB)
                                          : fmt::format("with only dense weights in device memory there is still a total deficit of {} MiB", -surplus_cpu_moe / kMiB));
  }
  std::vector<int64_t> targets;
  for (size_t id = 0; id < nd; ++id) targets.push_back(free[id] - margins[id]);
  const LayerSearch ls(m, s, free);
  std::vector<DeviceLayers> ngl(nd);
  std::vector<int> overflow(nd, -1);
  std::vector<int64_t> mem = ls.memory(ngl, overflow);
  fill_back_to_front(ls, m.n_layer, moe, targets, ngl, overflow, mem, names, out.log);
  if (moe && surplus_cpu_moe > 0) fill_front_to_back(ls, targets, ngl, overflow, mem, names, out.log);
  s = ls.apply(ngl, overflow);
  out.changed = true;
  return out;
}

}  // namespace headroom::llamacpp
