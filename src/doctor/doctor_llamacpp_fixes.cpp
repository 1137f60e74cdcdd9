// Fixes for a llama.cpp failure. With the deployment rebuilt: the llama.cpp planner searches
// -ngl, --ctx-size, the KV cache type and --ubatch-size for the values that fit every device.
// Without it: the same knobs sized from the log's own numbers (the request and free memory of
// the failing device, the model buffer per offloaded layer, the KV bytes per cell), each with its
// arithmetic, and the knobs that act on a buffer made later than the one that failed listed as
// not helping.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "doctor/doctor_internal.h"
#include "headroom/engine.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

namespace {

constexpr int64_t kMargin = 1024 * MiB;  // llama.cpp's own --fit target per device (common/fit.cpp)
// GUESS: what a fix moving memory off the failing device adds to the shortfall it covers.
constexpr int64_t kShortfallSlack = 256 * MiB;

std::string mib(int64_t b) { return fmt::format("{:.2f} MiB", static_cast<double>(b) / static_cast<double>(MiB)); }

// What the failing device had and needed, from the log.
struct Need {
  int64_t request = -1, free = -1, held = 0, model = 0, kv = 0;
  int64_t short_by = -1;  // request + held - free when both are known and positive
  std::string dev;
};

Need need_of(const LogScan& s, const LlamaFailure& f) {
  Need n;
  n.request = f.request;
  n.dev = f.device.empty() ? "the device" : f.device;
  if (const LlamaDevice* d = s.llama.device(f.device)) {
    if (d->free) n.free = d->free->value;
    if (d->model && d->model->line < f.line) n.model = d->model->value;
    if (d->kv && d->kv->line < f.line) n.kv = d->kv->value;
    n.held = n.model + n.kv + (d->compute && d->compute->line < f.line ? d->compute->value : 0);
  }
  if (n.free >= 0 && n.request >= 0 && n.request + n.held > n.free) n.short_by = n.request + n.held - n.free;
  // No size in the failure line: --fit's own deficit (projected use over free, before it changed anything).
  const auto& L = s.llama;
  if (n.request < 0 && L.fit_projected && L.fit_free && L.fit_projected->value > L.fit_free->value)
    n.short_by = L.fit_projected->value - L.fit_free->value;
  return n;
}

std::optional<int64_t> flag_int(const LogScan& s, const char* name) {
  auto it = s.flags.find(name);
  if (it == s.flags.end()) return std::nullopt;
  try {
    return std::stoll(it->second);
  } catch (...) {
    return std::nullopt;
  }
}

bool moe(const LogScan& s) {
  return (s.llama.n_expert && s.llama.n_expert->value > 1) || s.flags.count("--cpu-moe") || s.flags.count("--n-cpu-moe");
}

bool host_buffer(const std::string& name) { return name.rfind("CPU", 0) == 0 || name.find("Host") != std::string::npos; }

int accelerators(const LlamaLogFacts& L) {
  return static_cast<int>(std::count_if(L.devices.begin(), L.devices.end(), [](const LlamaDevice& d) { return !host_buffer(d.name) && d.model; }));
}

// Several GPUs: a --tensor-split that moves `need` of weights and KV off the failing device (the
// layers take their KV with them; the compute buffer stays about the same), the others keeping
// their proportions.
void tensor_split_fix(const LlamaLogFacts& L, const Need& n, Diagnosis& dx) {
  std::vector<std::pair<std::string, int64_t>> held;  // accelerator -> model + KV
  int64_t total = 0, mine = -1;
  for (const auto& d : L.devices) {
    if (host_buffer(d.name) || !d.model) continue;
    const int64_t b = d.model->value + (d.kv ? d.kv->value : 0);
    held.emplace_back(d.name, b);
    total += b;
    if (d.name == n.dev) mine = b;
  }
  const int64_t need = n.short_by > 0 ? n.short_by + kShortfallSlack : n.request;
  if (mine <= need || total <= mine || need <= 0) return;
  const double my_share = static_cast<double>(mine - need) / static_cast<double>(total);
  std::string split, shares;
  for (const auto& [name, b] : held) {
    const double share = name == n.dev ? my_share : static_cast<double>(b) / static_cast<double>(total - mine) * (1.0 - my_share);
    split += fmt::format("{}{:.0f}", split.empty() ? "" : ",", share * 100);
    shares += fmt::format("{}{} {:.1f}% -> {:.1f}%", shares.empty() ? "" : ", ", name, static_cast<double>(b) * 100 / static_cast<double>(total), share * 100);
  }
  dx.fixes.push_back({"--tensor-split", split,
                      fmt::format("model + KV per GPU as the log printed them ({} in all): {} moves {} off {} (weights and KV go with their "
                                  "layers; the other GPUs need the room for it)",
                                  mib(total), shares, mib(need), n.dev)});
}

void weights_fixes(const LogScan& s, const Need& n, Diagnosis& dx) {
  const auto& L = s.llama;
  int64_t layers = L.layers_offloaded > 0 ? L.layers_offloaded : -1;
  if (layers < 0 && L.n_layer) layers = std::min<int64_t>(L.n_layer->value + 1, flag_int(s, "--n-gpu-layers").value_or(L.n_layer->value + 1));
  if (n.request > 0 && n.free > 0) {
    const int64_t room = n.free - n.held - kMargin;
    if (layers > 0) {
      const double per_layer = static_cast<double>(n.request) / static_cast<double>(layers);
      const int64_t fit = static_cast<int64_t>(std::clamp(std::floor(static_cast<double>(room) / per_layer), 0.0, static_cast<double>(layers - 1)));
      dx.fixes.push_back({"--n-gpu-layers", std::to_string(fit),
                          fmt::format("{} buffer {} / {} layers = {} per layer; ({} free - {} held - {} margin) / {} = {} layers, "
                                      "about {} of weights on {} (the KV cache and compute buffers of those layers need the margin)",
                                      n.dev, mib(n.request), layers, mib(static_cast<int64_t>(per_layer)), mib(n.free), mib(n.held), mib(kMargin),
                                      mib(static_cast<int64_t>(per_layer)), fit, mib(static_cast<int64_t>(per_layer * static_cast<double>(fit))), n.dev)});
    } else {
      const double share = std::max(0.0, static_cast<double>(room) / static_cast<double>(n.request));
      dx.fixes.push_back({"--n-gpu-layers", fmt::format("{:.0f}% of the layers offloaded now", std::floor(share * 100)),
                          fmt::format("the log does not print the layer count: {} can hold ({} free - {} held - {} margin) / {} = {:.1f}% of "
                                      "the weights it was asked for",
                                      n.dev, mib(n.free), mib(n.held), mib(kMargin), mib(n.request), share * 100)});
    }
  }
  if (moe(s)) {
    if (s.flags.count("--cpu-moe") || s.flags.count("--override-tensor"))
      dx.fixes.push_back({"--override-tensor", "exps=CPU",
                          fmt::format("--cpu-moe / -ot were set and {} was still asked for {}: an -ot rule that matches no tensor name moves "
                                      "nothing (llama.cpp's expert tensors are blk.N.ffn_{{up,down,gate}}_exps); the first matching rule wins",
                                      n.dev, mib(n.request))});
    else
      dx.fixes.push_back({"--cpu-moe", "true", "every layer's routed experts to host memory, the dense part stays on the GPU; then --n-cpu-moe K "
                                               "for the first K layers only, as memory allows"});
  }
  dx.will_not_help.push_back("--ctx-size, --cache-type-k/-v, --parallel: the KV cache is allocated after the weights, which already failed");
  dx.will_not_help.push_back("--ubatch-size / --batch-size: the compute buffers come after the weights");
}

void kv_fixes(const LogScan& s, const Need& n, Diagnosis& dx) {
  const auto& L = s.llama;
  const int64_t ctx = L.n_ctx ? L.n_ctx->value : flag_int(s, "--ctx-size").value_or(0);
  if (n.request > 0 && n.free > 0 && ctx > 0) {
    const double per_cell = static_cast<double>(n.request) / static_cast<double>(ctx);
    const double room_cells = std::clamp(std::floor(static_cast<double>(n.free - n.held - kMargin) / per_cell), 0.0, static_cast<double>(ctx));
    const int64_t cells = static_cast<int64_t>(room_cells) / 256 * 256;
    if (cells > 0 && cells < ctx)
      dx.fixes.push_back({"--ctx-size", std::to_string(cells),
                          fmt::format("{} KV buffer {} / {} cells = {:.1f} KiB per cell; ({} free - {} held - {} for the compute buffers) / "
                                      "per cell = {} cells, rounded down to 256",
                                      n.dev, mib(n.request), ctx, per_cell / 1024, mib(n.free), mib(n.held), mib(kMargin), cells)});
  }
  const std::string tk = L.type_k.empty() ? s.flags.count("--cache-type-k") ? s.flags.at("--cache-type-k") : "f16" : L.type_k;
  if (tk == "f16" && n.request > 0) {
    const int64_t after = n.request / 32 * 17;  // q8_0: 34 bytes per 32 values against f16's 64
    dx.fixes.push_back({"--cache-type-k", "q8_0",
                        fmt::format("with --cache-type-v q8_0 the KV buffer on {} becomes {} x 34/64 = {}{}", n.dev, mib(n.request), mib(after),
                                    n.short_by > 0 ? fmt::format(" (frees {} of the {} short)", mib(n.request - after), mib(n.short_by)) : "")});
    dx.fixes.push_back({"--cache-type-v", "q8_0", "a quantized V cache needs flash attention", true});
    auto fa = s.flags.find("--flash-attn");
    if (fa == s.flags.end() || fa->second == "off" || fa->second == "auto")
      dx.fixes.push_back({"--flash-attn", "on", "llama.cpp refuses a quantized V cache without it", true});
  }
  dx.will_not_help.push_back("--ubatch-size / --batch-size: the compute buffers are reserved after the KV cache, which already failed");
}

void compute_fixes(const LogScan& s, const Need& n, Diagnosis& dx) {
  const auto& L = s.llama;
  const int64_t ub = L.n_ubatch ? L.n_ubatch->value : flag_int(s, "--ubatch-size").value_or(512);
  if (n.request < 0 && ub > 32)
    dx.fixes.push_back({"--ubatch-size", std::to_string(ub / 2),
                        fmt::format("the compute buffer grows with the ubatch: {} -> {} about halves it (the log does not print its size)", ub, ub / 2)});
  if (n.request > 0 && ub > 1) {
    const int64_t target = n.short_by > 0 ? n.request - n.short_by - 64 * MiB : n.request / 2;
    auto scaled = [&](int64_t u) { return static_cast<int64_t>(static_cast<double>(n.request) * static_cast<double>(u) / static_cast<double>(ub)); };
    int64_t u = ub / 2;
    while (u > 32 && scaled(u) > target) u /= 2;
    dx.fixes.push_back({"--ubatch-size", std::to_string(u),
                        fmt::format("the compute buffer grows with the ubatch (its largest tensors are n_ubatch x ...): {} x {}/{} = about "
                                    "{} on {} (ESTIMATE){}",
                                    mib(n.request), u, ub, mib(scaled(u)), n.dev,
                                    n.short_by > 0 ? fmt::format(", against {} short", mib(n.short_by)) : "")});
  }
  if (accelerators(L) > 1) tensor_split_fix(L, n, dx);
  else if (n.model > 0 && L.layers_offloaded > 0) {
    const int64_t per_layer = (n.model + n.kv) / std::max(1, L.layers_offloaded);
    const int64_t need = n.short_by > 0 ? n.short_by + kShortfallSlack : n.request;
    const int64_t k = per_layer > 0 ? static_cast<int64_t>(std::ceil(static_cast<double>(need) / static_cast<double>(per_layer))) : 0;
    if (need > 0 && per_layer > 0 && k < L.layers_offloaded)
      dx.fixes.push_back({"--n-gpu-layers", std::to_string(L.layers_offloaded - k),
                          fmt::format("{} fewer layers: ({} model + {} KV) / {} layers = {} per layer; {} needed{} / per layer = {} layers, "
                                      "freeing {} on {}",
                                      k, mib(n.model), mib(n.kv), L.layers_offloaded, mib(per_layer), mib(need),
                                      n.short_by > 0 ? fmt::format(" ({} short + 256 MiB)", mib(n.short_by)) : std::string(" (the request)"), k,
                                      mib(k * per_layer), n.dev)});
  }
  if (n.kv > 0 && n.short_by > 0 && n.kv / 32 * 15 < n.short_by)
    dx.will_not_help.push_back(fmt::format("--cache-type-k/-v q8_0 alone: it frees {} x 30/64 = {} of the KV on {}, less than the {} short", mib(n.kv),
                                           mib(n.kv / 32 * 15), n.dev, mib(n.short_by)));
}

void runtime_fixes(const LogScan& s, Diagnosis& dx) {
  const int64_t ub = s.llama.n_ubatch ? s.llama.n_ubatch->value : flag_int(s, "--ubatch-size").value_or(512);
  dx.fixes.push_back({"--ubatch-size", std::to_string(std::max<int64_t>(32, ub / 2)),
                      "the memory a batch takes while computing grows with the ubatch: half of it"});
  if (auto ctx = flag_int(s, "--ctx-size"); ctx && *ctx > 4096)
    dx.fixes.push_back({"--ctx-size", std::to_string(*ctx / 2), "attention over fewer cells: the per-batch buffers and the KV cache both shrink"});
  auto fa = s.flags.find("--flash-attn");
  if (fa == s.flags.end() || fa->second == "off")
    dx.fixes.push_back({"--flash-attn", "on", "no n_kv x n_ubatch x n_head score matrix per layer"});
  if (s.flags.count("--no-warmup"))
    dx.will_not_help.push_back("--no-warmup: it only moves the first batch's allocation from the start to the first request");
}

}  // namespace

void llamacpp_static_fixes(const LogScan& s, const LlamaFailure& f, Diagnosis& dx) {
  const Need n = need_of(s, f);
  if (dx.stage == "weights") weights_fixes(s, n, dx);
  else if (dx.stage == "kv_pool") kv_fixes(s, n, dx);
  else if (dx.stage == "compute_buffer") compute_fixes(s, n, dx);
  else runtime_fixes(s, dx);
}

}  // namespace headroom
