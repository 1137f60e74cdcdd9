// Where each tensor and each layer's KV cache lives, as llama_model::load_tensors decides
// (src/llama-model.cpp): the last -ngl layers offloaded, split over the GPUs at the cumulative
// --tensor-split points (default: by device memory), the output layer with layer n_layer, the
// token embedding on the host, -ot / --cpu-moe / --n-cpu-moe overrides first-match.
#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>

#include "headroom/llamacpp_plan.h"
#include "engines/llamacpp/llamacpp_rule_table.h"

namespace headroom::llamacpp {

namespace {
struct Layout {
  int n_gpus = 0, n_layer = 0, i_gpu_start = 0, act = 0;
  SplitMode split = SplitMode::Layer;
  int main_gpu = 0;
  std::vector<double> points;  // cumulative split points in (0, 1]

  // The device of layer il (il == n_layer: the output layer); -1 = host.
  int device(int il) const {
    if (n_gpus == 0 || il < i_gpu_start || il - i_gpu_start >= act) return -1;
    if (split != SplitMode::Layer) return main_gpu;
    const double x = static_cast<double>(il - i_gpu_start) / act;
    const auto it = std::upper_bound(points.begin(), points.end(), x);
    return std::min(static_cast<int>(it - points.begin()), n_gpus - 1);
  }
};

Layout layout(const LlamaModel& m, const ServerSettings& s, const std::vector<int64_t>& free_bytes) {
  const int n_gpus = static_cast<int>(free_bytes.size());
  Layout l;
  l.n_gpus = n_gpus;
  l.n_layer = m.n_layer;
  l.split = s.split;
  l.main_gpu = s.main_gpu;
  l.i_gpu_start = std::max(m.n_layer - s.n_gpu_layers, 0);
  l.act = n_gpus == 0 ? 0 : std::min(s.n_gpu_layers, m.n_layer + 1);
  // Without --tensor-split llama.cpp splits by each device's free memory at start (GUESS: its capacity).
  // (an all-zero split, as --fit writes with no layer on the GPUs, also means "by free memory").
  std::vector<double> w = s.tensor_split;
  if (std::all_of(w.begin(), w.end(), [](double x) { return x <= 0; })) {
    w.clear();
    for (int64_t b : free_bytes) w.push_back(static_cast<double>(b));
  }
  double sum = 0;
  for (double x : w) l.points.push_back(sum += x);
  for (double& x : l.points) x /= sum;
  return l;
}

// One override: which tensors it matches (by index in the model's table) and where they go.
struct OverrideRule {
  std::shared_ptr<const std::vector<char>> matches;
  int device;
};

// Which tensors an -ot pattern matches (std::regex_search on the GGUF name, as llama.cpp does),
// remembered per model and pattern: tune-style loops plan the same deployment many times.
std::shared_ptr<const std::vector<char>> regex_matches(const LlamaModel& m, const std::string& pattern) {
  static std::mutex mu;
  static std::map<std::pair<uint64_t, std::string>, std::shared_ptr<const std::vector<char>>> memo;
  const auto key = std::make_pair(m.serial, pattern);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  const std::regex re(pattern);
  auto v = std::make_shared<std::vector<char>>();
  for (const auto& t : m.tensors) {
    const bool suffixed = t.name.find(".weight") != std::string::npos || t.name.find(".bias") != std::string::npos;
    v->push_back(std::regex_search(suffixed ? t.name : t.name + ".weight", re) ? 1 : 0);
  }
  std::lock_guard<std::mutex> lock(mu);
  if (memo.size() > 256) memo.clear();
  memo[key] = v;
  return v;
}

std::vector<OverrideRule> override_rules(const LlamaModel& m, const ServerSettings& s) {
  std::vector<OverrideRule> r;
  for (const auto& o : s.overrides) r.push_back({regex_matches(m, o.pattern), o.device});
  // common/arg.cpp: --cpu-moe adds `\.ffn_(up|down|gate_up|gate)_(ch|)exps` with the CPU buffer
  // type (every expert tensor), --n-cpu-moe N `blk\.i\.ffn_(up|down|gate)_exps` for i < N; a fused
  // gate_up tensor only from PR #20416 (Rule::CpuMoeFusedGateUp).
  if (s.cpu_moe || s.n_cpu_moe > 0) {
    const bool gate_up = has(Rule::CpuMoeFusedGateUp, s.build);
    auto all = std::make_shared<std::vector<char>>(), first = std::make_shared<std::vector<char>>();
    for (const auto& t : m.tensors) {
      all->push_back(t.expert && (gate_up || t.name.find("gate_up") == std::string::npos) ? 1 : 0);
      const bool plain = (gate_up || t.name.find("gate_up") == std::string::npos) && t.name.find("chexps") == std::string::npos;
      first->push_back(t.expert && plain && t.layer >= 0 && t.layer < s.n_cpu_moe ? 1 : 0);
    }
    if (s.cpu_moe) r.push_back({all, -1});
    if (s.n_cpu_moe > 0) r.push_back({first, -1});
  }
  return r;
}

// Whether --fit's pattern for `f` in layer `layer` (common/fit.cpp get_overflow_pattern, matched
// with regex_search) names tensor `t`: its name after "blk.N." starts with the FFN projections named.
bool fit_fraction_matches(const QuantTensor& t, LayerFraction f) {
  // Layer tensors are named "blk.<t.layer>.<base>": the base follows the second dot.
  const std::string_view name = t.name;
  const size_t dot = name.substr(0, 4) == "blk." ? name.find('.', 4) : std::string_view::npos;
  if (dot == std::string_view::npos) return false;
  const std::string_view base = name.substr(dot + 1);
  auto starts = [&](std::string_view p) { return base.substr(0, p.size()) == p; };
  switch (f) {
    case LayerFraction::Attn: return starts("ffn_gate") || starts("ffn_up") || starts("ffn_down");
    case LayerFraction::Up: return starts("ffn_gate") || starts("ffn_down");
    case LayerFraction::Gate: return starts("ffn_down");
    case LayerFraction::Moe:
      for (std::string_view proj : {"ffn_up_", "ffn_down_", "ffn_gate_up_", "ffn_gate_"})
        if (starts(proj) && (base.substr(proj.size(), 4) == "exps" || base.substr(proj.size(), 6) == "chexps")) return true;
      return false;
  }
  return false;
}

// The device --fit's overrides send tensor `t` to, if one names it (std::nullopt otherwise).
std::optional<int> fit_override_device(const QuantTensor& t, const std::vector<const FitOverride*>& by_layer) {
  if (t.layer < 0 || t.layer >= static_cast<int>(by_layer.size()) || !by_layer[static_cast<size_t>(t.layer)]) return std::nullopt;
  const FitOverride& o = *by_layer[static_cast<size_t>(t.layer)];
  if (!fit_fraction_matches(t, o.fraction)) return std::nullopt;
  return o.device;
}

// ggml-cuda's buffer type allocates a quantized tensor whose rows are not a multiple of
// MATRIX_ROW_PADDING (512) with one padding row more (ggml_backend_cuda_buffer_type_get_alloc_size).
int64_t cuda_alloc_size(const QuantTensor& t) {
  const auto& tr = gguf::type_traits(t.type);
  const bool quantized = t.type != gguf::GgmlType::F32 && t.type != gguf::GgmlType::F16 && t.type != gguf::GgmlType::BF16;
  if (!quantized || t.ne0 % 512 == 0) return t.bytes;
  return t.bytes + (512 - t.ne0 % 512) / tr.block_size * tr.type_size;
}

DeviceBuffers& at(Placement& p, int dev) { return dev < 0 ? p.host : p.gpu[static_cast<size_t>(dev)]; }

void place_kv(const KvModel& kvm, const ServerSettings& s, const Layout& l, const KvCache& c, Placement& p) {
  int64_t k_base = 0, v_base = 0, k_swa = 0, v_swa = 0;
  for (const auto& x : kvm.layers) {
    if (x.k_gqa <= 0) continue;
    (x.swa && c.swa.layers > 0 ? k_swa : k_base) += x.k_gqa;
    (x.swa && c.swa.layers > 0 ? v_swa : v_base) += x.v_gqa;
  }
  for (int il = 0; il < static_cast<int>(kvm.layers.size()); ++il) {
    const KvLayer& x = kvm.layers[static_cast<size_t>(il)];
    if (x.k_gqa <= 0) continue;
    const bool swa = x.swa && c.swa.layers > 0;
    const KvCacheLine& line = swa ? c.swa : c.base;
    const int64_t k_all = swa ? k_swa : k_base, v_all = swa ? v_swa : v_base;
    // Row bytes are linear in the width (whole blocks), so each layer's share is exact.
    const int64_t bytes = line.k_bytes / k_all * x.k_gqa + (v_all > 0 ? line.v_bytes / v_all * x.v_gqa : 0);
    DeviceBuffers& b = at(p, s.no_kv_offload ? -1 : l.device(il));
    b.kv += bytes;
    if (swa) b.kv_swa += bytes;
  }
}
}  // namespace

Placement place(const LlamaModel& m, const KvModel& kvm, const ServerSettings& s, const std::vector<int64_t>& free_bytes,
                const KvCache* kv) {
  const int n_gpus = static_cast<int>(free_bytes.size());
  Placement p;
  p.gpu.resize(static_cast<size_t>(n_gpus));
  const Layout l = layout(m, s, free_bytes);
  const std::vector<OverrideRule> rules = override_rules(m, s);
  std::vector<bool> rule_used(rules.size(), false);
  std::vector<const FitOverride*> fit_by_layer(static_cast<size_t>(m.n_layer + 1), nullptr);
  for (const auto& o : s.fit_overrides)
    if (o.layer >= 0 && o.layer <= m.n_layer) fit_by_layer[static_cast<size_t>(o.layer)] = &o;
  for (size_t ti = 0; ti < m.tensors.size(); ++ti) {
    const QuantTensor& t = m.tensors[ti];
    int dev = t.cat == TensorCategory::TokenEmbd ? -1 : l.device(t.layer >= 0 ? t.layer : m.n_layer);
    if (auto fd = fit_override_device(t, fit_by_layer)) dev = *fd;
    for (size_t i = 0; i < rules.size(); ++i)
      if ((*rules[i].matches)[ti]) {
        dev = rules[i].device;
        rule_used[i] = true;
        break;
      }
    const int64_t bytes = dev >= 0 && s.cuda_row_padding ? cuda_alloc_size(t) : t.bytes;
    if (dev >= 0 && s.split == SplitMode::Row && t.elements != t.ne0) {
      // Row split: each matrix's rows shared out by --tensor-split (the main GPU keeps the rest).
      for (int g = 0; g < n_gpus; ++g) {
        const double lo = g == 0 ? 0.0 : l.points[static_cast<size_t>(g - 1)];
        p.gpu[static_cast<size_t>(g)].model += static_cast<int64_t>(static_cast<double>(bytes) * (l.points[static_cast<size_t>(g)] - lo));
      }
    } else {
      at(p, dev).model += bytes;
    }
  }
  // Tied embeddings: the output layer's copy of token_embd (TENSOR_DUPLICATED) on the output device.
  const int out_dev = l.device(m.n_layer);
  if (m.tied_output && out_dev >= 0)
    for (const auto& t : m.tensors)
      if (t.cat == TensorCategory::TokenEmbd) p.gpu[static_cast<size_t>(out_dev)].model += s.cuda_row_padding ? cuda_alloc_size(t) : t.bytes;
  for (int il = 0; il <= m.n_layer; ++il)
    if (int d = l.device(il); d >= 0) ++p.gpu[static_cast<size_t>(d)].layers;
  for (size_t i = 0; i < rules.size(); ++i)
    if (!rule_used[i] && i < s.overrides.size())
      p.notes.push_back(fmt::format("-ot {}: matches no tensor of this model (as in llama.cpp, it moves nothing)", s.overrides[i].pattern));
  p.layers_offloaded = l.act;
  p.output_device = out_dev;
  if (kv) place_kv(kvm, s, l, *kv, p);
  // DSA indexer keys (llama_kv_cache_dsa, 2026 builds): index_dim f16 per cell on each indexer layer
  // (GUESS: f16 whatever -ctk says; llamacpp-021's 21 layers x 187.50 MiB at 768000 cells).
  if (kv && m.mla && m.mla->index_dim > 0 && has(Rule::MlaLatentKOnly, s.build))
    for (int il = 0; il < static_cast<int>(m.mla->indexer_layers.size()); ++il)
      if (m.mla->indexer_layers[static_cast<size_t>(il)])
        at(p, s.no_kv_offload ? -1 : l.device(il)).indexer += kv->base.cells * kv->n_stream * m.mla->index_dim * 2;
  // Recurrent state (one per sequence) beside the layer it belongs to.
  if (m.recurrent_state_bytes_per_seq > 0 && kv) {
    int n_rec = 0;
    for (const auto& x : m.kv.layers) n_rec += x.k_gqa == 0;
    const int64_t per_layer = n_rec > 0 ? m.recurrent_state_bytes_per_seq / n_rec : 0;
    for (int il = 0; il < static_cast<int>(m.kv.layers.size()); ++il)
      if (m.kv.layers[static_cast<size_t>(il)].k_gqa == 0)
        at(p, s.no_kv_offload ? -1 : l.device(il)).recurrent += per_layer * std::max(1, kv->n_seq_max);
  }
  return p;
}

}  // namespace headroom::llamacpp
