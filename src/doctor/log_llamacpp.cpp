// llama.cpp log lines (llama-server, llama-cli, and what wraps them: Ollama, LM Studio, RamaLama):
// engine and build, devices and their free memory, per-device model / KV / compute buffers, the
// KV size line, "offloaded N/M layers", --fit's projection, and every backend's allocation failure.
// Formats by era: ../shared/research/llamacpp-log-eras.md; the failure patterns and the stage
// each one means are the llama.cpp table of docs/doctor-messages.md (kFailurePatterns below).
#include <algorithm>
#include <cctype>
#include <fmt/format.h>

#include "doctor/log_parse.h"
#include "headroom/units.h"

namespace headroom::logscan_detail {

namespace {

// One table: a failure line's words -> the stage it means ("" = the next line or the log's
// progress decides) and whether it is the low-level half of a pair (the allocator's message,
// followed by the caller's that names the buffer).
struct FailurePattern {
  const char* words;  // lower case, all must appear (separated by '|')
  const char* kind;
  const char* stage;
  bool low_level;
};
constexpr FailurePattern kFailurePatterns[] = {
    // ggml-cuda.cu ggml_backend_cuda_buffer_type_alloc_buffer (ROCm builds print it too)
    {"mib on device|cudamalloc failed", "cuda_malloc", "", true},
    {"cudamalloc failed", "cuda_malloc", "", true},  // the same, cut or paraphrased
    {"hipmalloc|failed", "hip_malloc", "", true},
    // ggml-vulkan.cpp: "ggml_vulkan: Device memory allocation of size N failed." + vk::...ErrorOutOfDeviceMemory
    {"device memory allocation of size", "vulkan_alloc", "", true},
    {"erroroutofdevicememory", "vulkan_oom", "", true},
    // ggml-metal: "error: failed to allocate buffer, size = X MiB"
    {"failed to allocate buffer, size", "metal_alloc", "", true},
    // ggml-alloc.c ggml_backend_alloc_ctx_tensors_from_buft (the model's and the KV cache's buffers alike)
    {"alloc_ctx_tensors|failed to allocate", "ctx_tensors", "", true},
    // ggml-metal at run time: "[METAL] Command buffer execution failed: Insufficient Memory (...ErrorOutOfMemory)"
    {"command buffer execution failed|insufficient memory", "metal_runtime", "runtime", false},
    // ggml-backend.cpp CPU buffer: host RAM
    {"cpu_buffer_type_alloc_buffer|failed to allocate", "cpu_alloc", "", true},
    // llama-model.cpp load_tensors via ggml-alloc.c alloc_tensor_range; 2025 "unable to allocate CUDA0 buffer"
    {"alloc_tensor_range|failed to allocate", "weights_buffer", "weights", false},
    {"unable to allocate|buffer", "weights_buffer", "weights", false},
    // llama-kv-cache.cpp
    {"failed to allocate buffer for kv cache", "kv_buffer", "kv_pool", false},
    {"llama_kv_cache|failed to allocate", "kv_buffer", "kv_pool", false},
    // ggml-alloc.c ggml_gallocr_reserve_n[_impl], llama-context.cpp graph_reserve / sched_reserve
    {"gallocr_reserve|failed to allocate", "compute_buffer", "compute_buffer", false},
    {"failed to allocate compute", "compute_buffer", "compute_buffer", false},
    {"compute buffer allocation failed", "compute_buffer", "compute_buffer", false},
    // CUDA_CHECK / HIP: an allocation inside a kernel launch or the memory pool while computing
    {"cuda error|out of memory", "backend_error", "", false},
    {"rocm error|out of memory", "backend_error", "", false},
    {"hip error|out of memory", "backend_error", "", false},
};

bool has_all(std::string_view b, std::string_view words) {
  while (!words.empty()) {
    size_t bar = words.find('|');
    if (!icontains(b, words.substr(0, bar))) return false;
    if (bar == std::string_view::npos) break;
    words.remove_prefix(bar + 1);
  }
  return true;
}

// A number after `key` (spaces and '=' skipped), thousands separators allowed.
std::optional<double> value_after(std::string_view b, std::string_view key) {
  auto a = after(b, key);
  if (!a) return std::nullopt;
  std::string_view s = *a;
  while (!s.empty() && (s.front() == ' ' || s.front() == '=' || s.front() == ':' || s.front() == '\t')) s.remove_prefix(1);
  double v = 0;
  if (!take_number(s, v, true)) return std::nullopt;
  return v;
}
constexpr int64_t kMaxSum = int64_t{1} << 60;  // a sum of figures stops here (no overflow on hostile logs)

std::optional<int64_t> mib_after(std::string_view b, std::string_view key) {
  auto v = value_after(b, key);
  if (!v || *v < 0 || *v > 1e12) return std::nullopt;  // at most ~2^60 bytes
  return to_bytes(*v, MiB);
}

LlamaDevice& device(Ctx& c, std::string_view name) {
  auto& ds = c.scan.llama.devices;
  for (auto& d : ds) if (d.name == name) return d;
  if (ds.size() >= 64) return ds.back();  // bounded
  ds.push_back(LlamaDevice{std::string(name), {}, {}, {}, {}, {}, {}});
  return ds.back();
}

std::string backend_or(const Ctx& c, std::string_view fallback) {
  return c.scan.llama.backend.empty() ? std::string(fallback) : c.scan.llama.backend;
}

// The word before `pos` in b ("CUDA0" in "load_tensors:   CUDA0 model buffer size").
std::string_view word_before(std::string_view b, size_t pos) {
  size_t e = pos;
  while (e > 0 && b[e - 1] == ' ') --e;
  size_t s = e;
  while (s > 0 && b[s - 1] != ' ' && b[s - 1] != ':' && b[s - 1] != '\t' && b[s - 1] != '`') --s;
  return b.substr(s, e - s);
}

void read_version(Ctx& c, const Line& l) {
  std::string_view b = l.body;
  // "build: 6895 (4341dc8bc) with cc", "version: 8284 (00de61534)", "build_info: b9026-a817a22bc",
  // "build info | build=3871 commit=..."
  for (std::string_view key : {"build: ", "version: ", "build_info: b", "build="}) {
    auto a = after(b, key);
    if (!a) continue;
    std::string_view s = *a;
    skip_spaces(s);
    size_t n = 0;
    while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
    if (n < 4 || n > 5) continue;  // "b1-e365e65", "b0-unknown": a build number that names no era
    std::string_view rest = s.substr(n);
    // Only llama.cpp's own forms: a number with its commit ("8284 (00de61534)", "b9026-a817a22bc",
    // "build=3871 commit=..."), so another engine's "build: 2024" is not read as a build.
    const bool llama_form = key == "build=" ? icontains(b, "commit=")
                            : key == "build_info: b" ? rest.rfind("-", 0) == 0
                                                     : rest.rfind(" (", 0) == 0;
    if (!llama_form) continue;
    c.version(fmt::format("b{}", s.substr(0, n)), l.no);
    c.keep(l, "llamacpp.build");
    c.score_llama += 3;
    return;
  }
}

void read_devices(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  std::string_view b = l.body;
  auto& L = c.scan.llama;
  if (k[kLCudaInit]) {
    if (icontains(b, "rocm devices")) L.backend = "ROCm";
    else if (icontains(b, "cuda devices") && L.backend.empty()) L.backend = "CUDA";
    c.keep(l, "llamacpp.devices");
    c.score_llama += 3;
  }
  if (k[kLVulkanDev] && L.backend.empty()) L.backend = "Vulkan";
  if (k[kLMetal] && L.backend.empty()) L.backend = "Metal";
  if (k[kLDeviceLine]) {
    // "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes, VRAM: 24126 MiB (23863 MiB free)"
    auto idx = int_after(b, "device ");
    if (!idx || *idx < 0 || *idx > 63) return;
    auto& d = device(c, fmt::format("{}{}", backend_or(c, icontains(b, "gfx") ? "ROCm" : "CUDA"), *idx));
    if (auto col = b.find(':', ifind(b, "device ")); col != std::string_view::npos) {
      std::string_view desc = b.substr(col + 1, b.find(',', col) - col - 1);
      skip_spaces(desc);
      if (d.description.empty()) d.description = std::string(desc.substr(0, 120));
    }
    if (auto t = mib_after(b, "vram:")) set_first(d.total, *t, l.no);
    if (auto open = b.rfind('('); open != std::string_view::npos && icontains(b.substr(open), "free"))
      if (auto f = mib_after(b.substr(open), "(")) set_first(d.free, *f, l.no);
    c.keep(l, "llamacpp.device");
    c.score_llama += 2;
  }
  if (k[kLUsingDevice]) {
    // "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 9862 MiB free"
    auto a = after(b, "using device ");
    if (!a) return;
    std::string_view s = *a;
    std::string_view name = s.substr(0, s.find(' '));
    if (name.empty() || name.size() > 40) return;
    auto& d = device(c, name);
    if (auto open = s.find('('); open != std::string_view::npos && d.description.empty())
      d.description = std::string(s.substr(open + 1, std::min<size_t>(120, s.find(')', open) - open - 1)));
    if (auto dash = s.rfind(" - "); dash != std::string_view::npos && icontains(s.substr(dash), "free"))
      if (auto f = mib_after(s.substr(dash), "-")) set_last(d.free, *f, l.no);
    if (L.backend.empty()) {
      size_t n = 0;
      while (n < name.size() && std::isalpha(static_cast<unsigned char>(name[n]))) ++n;
      L.backend = std::string(name.substr(0, n));
    }
    c.keep(l, "llamacpp.using_device");
    c.score_llama += 3;
  }
}

void read_buffers(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  std::string_view b = l.body;
  auto& L = c.scan.llama;
  if (k[kLBufferSize]) {
    // "load_tensors: CUDA0 model buffer size = X MiB", 2024 "llm_load_tensors: CUDA0 buffer size = X MiB",
    // "llama_kv_cache: CUDA0 KV buffer size = X MiB", "llama_context: CUDA0 compute buffer size = X MiB"
    size_t at = ifind(b, "buffer size");
    auto v = mib_after(b.substr(at), "buffer size");
    if (!v) return;
    std::string_view kind = word_before(b, at);
    std::string_view name = kind;
    const bool typed = kind == "model" || kind == "KV" || kind == "compute" || kind == "output" || kind == "input";
    if (typed) name = word_before(b, static_cast<size_t>(kind.data() - b.data()));
    else kind = k[kLLoadTensors] ? "model" : "";
    if (name.empty() || name.size() > 40 || !std::isalpha(static_cast<unsigned char>(name.front())) || kind.empty() ||
        kind == "output" || kind == "input")
      return;
    auto& d = device(c, name);
    // several lines of one device add up (split GGUFs, iswa's two caches), saturating on hostile input
    auto add = [&](std::optional<LogFigure>& f) { f = LogFigure{std::min<int64_t>((f ? f->value : 0) + *v, kMaxSum), f ? f->line : l.no}; };
    if (kind == "model") add(d.model);
    else if (kind == "KV") add(d.kv);
    else add(d.compute);
    c.keep(l, fmt::format("llamacpp.{}_buffer", kind == "KV" ? "kv" : kind));
    c.score_llama += 2;
  }
  if ((k[kLKvCache] || k[kLKvSelf]) && icontains(b, "size") && icontains(b, "k (")) {
    // "llama_kv_cache: size = 256.00 MiB (2048 cells, 32 layers, 4/1 seqs), K (f16): 128.00 MiB, V (f16): 128.00 MiB",
    // 2024 "llama_new_context_with_model: KV self size = 5120.00 MiB, K (f16): 2560.00 MiB, V (f16): 2560.00 MiB"
    auto v = k[kLKvSelf] ? mib_after(b, "kv self size") : mib_after(b, "size");
    if (!v) return;
    L.kv_size = LogFigure{std::min<int64_t>((L.kv_size ? L.kv_size->value : 0) + *v, kMaxSum), L.kv_size ? L.kv_size->line : l.no};
    if (L.kv_cells == 0) {
      if (auto n = int_after(b, "(")) L.kv_cells = *n;
      if (auto n = int_after(b, "cells,")) L.kv_layers = *n;
    }
    auto type = [&](std::string_view key) {
      auto a = after(b, key);
      return a ? std::string(a->substr(0, std::min<size_t>(a->find(')'), 12))) : std::string();
    };
    if (L.type_k.empty()) L.type_k = type("k (");
    if (L.type_v.empty()) L.type_v = type("v (");
    c.keep(l, "llamacpp.kv_size");
    c.score_llama += 3;
  }
  if (k[kLOffloaded]) {
    // "load_tensors: offloaded 33/33 layers to GPU" (Ollama prints the same)
    auto a = after(b, "offloaded ");
    if (!a) return;
    std::string_view s = *a;
    int64_t n = 0, m = 0;
    if (!take_int(s, n) || s.empty() || s.front() != '/') return;
    s.remove_prefix(1);
    if (!take_int(s, m) || n < 0 || m <= 0 || n > m || m > 100000) return;
    L.layers_offloaded = static_cast<int>(n);
    L.layers_total = static_cast<int>(m);
    L.offloaded_line = l.no;
    c.keep(l, "llamacpp.offloaded");
    c.score_llama += 2;
  }
}

// "n_ctx = N" exactly (not n_ctx_per_seq / n_ctx_seq / n_ctx_train).
std::optional<int64_t> field(std::string_view b, std::string_view key) {
  size_t at = ifind(b, key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view s = b.substr(at + key.size());
  skip_spaces(s);
  if (s.empty() || s.front() != '=') return std::nullopt;
  s.remove_prefix(1);
  int64_t v = 0;
  if (!take_int(s, v) || v < 0) return std::nullopt;
  return v;
}

void read_context(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  std::string_view b = l.body;
  auto& L = c.scan.llama;
  if (k[kLContext]) {
    if (auto v = field(b, "n_ctx")) set_first(L.n_ctx, *v, l.no);
    if (auto v = field(b, "n_ubatch")) set_first(L.n_ubatch, *v, l.no);
    if (auto v = field(b, "n_seq_max")) set_first(L.n_seq, *v, l.no);
    c.score_llama += 1;
  }
  if (k[kLPrintInfo]) {
    if (auto v = field(b, "n_layer")) set_first(L.n_layer, *v, l.no);
    if (auto v = field(b, "n_expert")) set_first(L.n_expert, *v, l.no);
    if (auto a = after(b, "general.name"); a && L.model_name.empty()) {
      std::string_view s = *a;
      while (!s.empty() && (s.front() == ' ' || s.front() == '=')) s.remove_prefix(1);
      L.model_name = std::string(s.substr(0, 120));
    }
    c.score_llama += 1;
  }
  if (k[kLLoadingModel]) {
    // "srv    load_model: loading model '/models/X.gguf'"
    auto a = after(b, "loading model '");
    if (a && L.model_file.empty()) L.model_file = std::string(a->substr(0, std::min<size_t>(a->find('\''), 400)));
    c.keep(l, "llamacpp.loading_model");
    c.score_llama += 2;
  }
  if (k[kLFit]) {
    // "llama_params_fit_impl: projected to use X MiB of device memory vs. Y MiB of free device memory"
    // (2026 "vs. a total of"); RamaLama's paraphrase "projected to use X MiB vs Y MiB free"
    if (auto p = mib_after(b, "projected to use")) {
      set_first(L.fit_projected, *p, l.no);
      if (auto f = mib_after(b, " vs.") ? mib_after(b, " vs.") : mib_after(b, " vs")) set_first(L.fit_free, *f, l.no);
    }
    // "common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user to 99, abort"
    if (auto a = after(b, "failed to fit params to free device memory: "); a && L.fit_gave_up.empty()) {
      std::string_view why = a->substr(0, std::min<size_t>(a->size(), 200));
      if (size_t end = why.rfind(", abort"); end != std::string_view::npos) why = why.substr(0, end);
      L.fit_gave_up = std::string(why);
      L.fit_gave_up_line = l.no;
    }
    // "  - Vulkan0 (Radeon RX 580 Series):   4096 total,   1237 used,   1932 free vs. target of   1024"
    if (auto a = after(b, "- "); a && icontains(b, " used,") && icontains(b, " total,")) {
      std::string_view name = a->substr(0, a->find_first_of(" :"));
      auto& d = device(c, name);
      auto num_before = [&](std::string_view word) -> std::optional<int64_t> {
        size_t at = ifind(b, word);
        if (at == std::string_view::npos) return std::nullopt;
        std::string_view w = word_before(b, at);
        std::string_view s = w;
        int64_t v = 0;
        if (!take_int(s, v, true)) return std::nullopt;
        return v * MiB;
      };
      auto t = num_before(" total,"), u = num_before(" used,"), f = num_before(" free");
      if (t) set_first(d.total, *t, l.no);
      if (u && f) set_first(d.free, *u + *f, l.no);  // free at start = projected use + what it leaves
    }
    c.keep(l, "llamacpp.fit");
    c.score_llama += 3;
  }
  if (k[kLModelLoad] || k[kLLoadTensors]) c.score_llama += 1;
  if (k[kLReady] && (icontains(b, "server is listening") || icontains(b, "all slots are idle") || icontains(b, "main: model loaded") ||
                     icontains(b, "llama runner started"))) {
    if (!L.ready_line) L.ready_line = l.no;
    c.keep(l, "llamacpp.ready");
    c.score_llama += 1;
  }
}

// The failing device a line names: "failed to allocate CUDA0 buffer", "on device 0", "Vulkan1 buffer".
std::string failing_device(const Ctx& c, std::string_view b) {
  if (auto a = after(b, "failed to allocate ")) {
    std::string_view w = a->substr(0, a->find(' '));
    if (!w.empty() && w.size() < 40 && icontains(a->substr(w.size(), 8), "buffer") && w != "buffer" && w != "compute")
      return std::string(w);
  }
  if (auto a = after(b, "unable to allocate ")) {
    std::string_view w = a->substr(0, a->find(' '));
    if (!w.empty() && w.size() < 40) return std::string(w);
  }
  if (auto n = int_after(b, "on device "); n && *n >= 0 && *n < 64) return fmt::format("{}{}", backend_or(c, "CUDA"), *n);
  if (icontains(b, "metal")) return "Metal";
  if (icontains(b, "cpu_buffer_type")) return "CPU";
  return "";
}

// The request: the caller's exact bytes ("buffer of size N") before the allocator's MiB figure.
std::optional<int64_t> failing_request(std::string_view b) {
  if (auto v = value_after(b, "of size"); v && *v >= 0 && *v < 1e16) return static_cast<int64_t>(*v);  // bytes
  if (auto v = mib_after(b, "allocating ")) return v;                   // "allocating 144817.04 MiB on device 0"
  if (auto v = mib_after(b, "buffer, size")) return v;                   // Metal "size = X MiB"
  if (auto v = mib_after(b, "to allocate ")) return v;                   // "tried to allocate 44,545 MiB"
  return std::nullopt;
}

void read_failures(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  auto& L = c.scan.llama;
  std::string_view b = l.body;
  if (k[kLRetry] && !L.failures.empty()) {
    for (auto& f : L.failures) f.retried = true;
    c.keep(l, "llamacpp.retry");
  }
  if (!(k[kLAllocOnDevice] || k[kLFailedAlloc] || k[kLVkOom] || k[kLVkAlloc] || k[kLBackendOom] || k[kCudaErrorColon] ||
        (k[kOutOfMemory] && icontains(b, "error")) || (k[kMemoryWords] && icontains(b, "command buffer"))))
    return;
  // One line may hold both halves ("...cudaMalloc failed: out of memory alloc_tensor_range: failed to
  // allocate CUDA0 buffer of size N" in an issue title): the low-level half first.
  // PyTorch raises the same CUDA runtime text as a Python exception ("RuntimeError: CUDA error: out of
  // memory", "torch.AcceleratorError: CUDA error: ..."); llama.cpp's CUDA_CHECK prints it bare.
  const bool python_exception = icontains(b, "error: cuda error") || icontains(b, "error: hip error");
  bool any = false;
  for (const auto& p : kFailurePatterns) {
    if (!has_all(b, p.words)) continue;
    if (python_exception && std::string_view(p.kind) == "backend_error") continue;
    if (p.low_level && any) continue;
    std::string dev = failing_device(c, b);
    std::optional<int64_t> req = failing_request(b);
    // The caller's line names what the allocator's line (just before) failed to allocate: one failure.
    LlamaFailure* prev = L.failures.empty() ? nullptr : &L.failures.back();
    const bool near = prev && l.no - prev->line <= 4 && !prev->retried;
    if (near && (prev->stage.empty() || (prev->stage == p.stage && (dev.empty() || prev->device.empty() || prev->device == dev)))) {
      if (prev->stage.empty()) prev->stage = p.stage;
      if (!p.low_level && prev->kind != p.kind && std::string_view(p.stage).size()) prev->kind = p.kind;
      if (!dev.empty() && (prev->device.empty() || !p.low_level)) prev->device = dev;
      if (req && (prev->request < 0 || !p.low_level)) prev->request = *req;
    } else if (L.failures.size() < 64) {
      L.failures.push_back(LlamaFailure{l.no, p.kind, p.stage, dev, req ? *req : -1, false});
    }
    c.keep(l, std::string("llamacpp.") + p.kind);
    c.score_llama += 2;
    any = true;
    if (!p.low_level) break;
  }
}

}  // namespace

void read_llamacpp(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  if (k[kLBuild] || k[kVersionWord]) read_version(c, l);
  if (k[kLCudaInit] || k[kLVulkanDev] || k[kLMetal] || k[kLDeviceLine] || k[kLUsingDevice]) read_devices(c, l);
  if (k[kLBufferSize] || k[kLKvCache] || k[kLKvSelf] || k[kLOffloaded]) read_buffers(c, l);
  if (k[kLContext] || k[kLPrintInfo] || k[kLLoadingModel] || k[kLFit] || k[kLModelLoad] || k[kLLoadTensors] || k[kLReady])
    read_context(c, l);
  read_failures(c, l);
}

namespace {

// How far the start got before `line`: 0 nothing, 1 model buffers, 2 KV cache, 3 compute buffers, 4 serving.
int progress_before(const LlamaLogFacts& L, int64_t line) {
  int p = 0;
  auto before = [&](const std::optional<LogFigure>& f) { return f && f->line < line; };
  if (L.offloaded_line && L.offloaded_line < line) p = 1;
  for (const auto& d : L.devices) {
    if (before(d.model)) p = std::max(p, 1);
    if (before(d.kv)) p = std::max(p, 2);
    if (before(d.compute)) p = std::max(p, 3);
  }
  if (before(L.kv_size)) p = std::max(p, 2);
  if (L.ready_line && L.ready_line < line) p = 4;
  return p;
}

// The stage of a failure whose own lines do not name the buffer.
std::string stage_from_progress(const LlamaFailure& f, int progress) {
  if (f.kind == "backend_error") {
    // CUDA_CHECK / HIP_CHECK fire while computing (buffers go through the allocator's message):
    // before the compute buffers were reserved that is the first graph (reserve / warm-up),
    // else a request being served. With no startup line at all, a served request (GUESS-free:
    // a start that failed would have printed its allocator's message).
    return progress >= 1 && progress <= 2 ? "compute_buffer" : "runtime";
  }
  switch (progress) {
    case 1: return "kv_pool";          // the model buffers were made: the KV cache is next
    case 2: return "compute_buffer";   // then the compute buffers
    case 3: case 4: return "runtime";
    default: return "";                // nothing printed before it: the log does not say
  }
}

Outcome outcome_of_stage(std::string_view st) {
  if (st == "weights") return Outcome::OomWeights;
  if (st == "kv_pool") return Outcome::OomKv;
  if (st == "compute_buffer") return Outcome::OomGraph;  // the corpus' code for the compute-buffer reservation
  if (st == "runtime") return Outcome::OomRuntime;
  return Outcome::Oom;
}

}  // namespace

void finish_llamacpp(LogScan& s) {
  auto& L = s.llama;
  // The failure that ended the start: the first one llama.cpp did not retry (else the last).
  LlamaFailure* f = nullptr;
  for (auto& x : L.failures)
    if (!x.retried) {
      f = &x;
      break;
    }
  if (!f && !L.failures.empty()) f = &L.failures.back();
  if (!f) {
    const bool started = L.ready_line || std::any_of(L.devices.begin(), L.devices.end(), [](const LlamaDevice& d) { return d.compute.has_value(); });
    if (started && (!s.outcome || s.outcome == Outcome::Ok)) s.outcome = Outcome::Ok;
    return;
  }
  if (f->stage.empty()) f->stage = stage_from_progress(*f, progress_before(L, f->line));
  // One GPU in the log: a failure that names no device is on it, and --fit's free figure is its.
  LlamaDevice* only = nullptr;
  int gpus = 0;
  for (auto& d : L.devices)
    if (d.name.rfind("CPU", 0) != 0 && d.name.find("Host") == std::string::npos && (d.model || d.kv || d.total || d.free)) {
      ++gpus;
      only = &d;
    }
  if (gpus == 1) {
    if (f->device.empty()) f->device = only->name;
    if (!only->free && L.fit_free) only->free = L.fit_free;
  }
  s.failure_stage = f->stage;
  s.failure_line = f->line;
  s.failure_basis.reset();
  s.failure_device = -1;
  if (!f->device.empty() && std::isdigit(static_cast<unsigned char>(f->device.back()))) {
    size_t d = f->device.find_last_not_of("0123456789") + 1;
    s.failure_device = std::stoi(f->device.substr(d, 2));
  }
  s.outcome = outcome_of_stage(f->stage);
}

}  // namespace headroom::logscan_detail
