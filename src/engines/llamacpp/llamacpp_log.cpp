// llama.cpp's memory log lines by build era: load_tensors' model buffers, the KV cache lines,
// the compute buffers (src/llama-model.cpp, src/llama-kv-cache.cpp, src/llama-context.cpp), and
// the backend's allocation failures (ggml-cuda.cu, ggml-alloc.c).
#include <fmt/format.h>

#include "engines/llamacpp/llamacpp_log.h"
#include "engines/llamacpp/llamacpp_rule_table.h"
#include "headroom/units.h"

namespace headroom::llamacpp {

namespace {
// The function names that prefix each line, by first build of the era (log-eras research notes).
struct Era {
  int since;
  std::string_view name, tensors, kv, context;
};
constexpr Era kEras[] = {
    {0, "llm_load_tensors era (b2200-b3899)", "llm_load_tensors", "llama_kv_cache_init", "llama_new_context_with_model"},
    {3900, "load_tensors era (b3900-b4999)", "load_tensors", "llama_kv_cache_init", "llama_init_from_model"},
    {5000, "llama_kv_cache_unified era (b5000-b8099)", "load_tensors", "llama_kv_cache_unified", "llama_context"},
    {8100, "llama_kv_cache / sched_reserve era (b8100+)", "load_tensors", "llama_kv_cache", "sched_reserve"},
};
const Era& era(int build) {
  const Era* e = &kEras[0];
  for (const auto& row : kEras)
    if (build == 0 || build >= row.since) e = &row;
  return *e;
}
double mib(int64_t b) { return static_cast<double>(b) / static_cast<double>(MiB); }
}  // namespace

std::string backend_name(const GpuSpec& gpu, int build) {
  // Polaris (gfx803) has no current ROCm: llama.cpp runs it through Vulkan. Intel Arc: the SYCL
  // backend, "SYCL0" (llama.cpp docs/backend/SYCL.md).
  if (gpu.vendor == "amd") return gpu.arch == "gcn4" ? "Vulkan" : "ROCm";
  if (gpu.vendor == "apple") return has(Rule::MetalMtlNames, build) ? "MTL" : "Metal";
  if (gpu.vendor == "intel") return "SYCL";
  return "CUDA";
}

std::string era_name(int build) { return std::string(era(build).name) + (build == 0 ? ", newest rules" : ""); }

std::string failure_line(const Failure& f, const DeviceNaming& names) {
  const std::string dev = names(static_cast<size_t>(f.rank));
  const std::string alloc = fmt::format("ggml_backend_cuda_buffer_type_alloc_buffer: allocating {:.2f} MiB on device {}: cudaMalloc failed: "
                                        "out of memory ({:.2f} MiB free)", mib(f.request_bytes), names.id(static_cast<size_t>(f.rank)), mib(f.free_bytes));
  if (f.stage == StageId::Weights) return alloc + fmt::format("; alloc_tensor_range: failed to allocate {} buffer of size {}", dev, f.request_bytes);
  if (f.stage == StageId::KvPool) return alloc + "; failed to allocate buffer for kv cache";
  if (f.stage == StageId::Mmproj) return alloc + "; clip_model_loader: failed to load the projector (--mmproj)";
  if (f.stage == StageId::DraftModel) return alloc + "; failed to load draft model";
  if (f.stage == StageId::DraftContexts) return alloc + "; failed to create draft context";
  if (f.stage == StageId::ComputeBuffer)
    return fmt::format("ggml_gallocr_reserve_n: failed to allocate {} buffer of size {} ({:.2f} MiB free); failed to allocate compute buffers",
                       dev, f.request_bytes, mib(f.free_bytes));
  return fmt::format("{}: {} MiB requested, {:.2f} MiB free", dev, mib(f.request_bytes), mib(f.free_bytes));
}

std::vector<std::string> log_lines(const LlamaModel& m, const ServerSettings& s, const KvCache* kv, const Placement& p,
                                   const DeviceNaming& names) {
  const Era& e = era(s.build);
  const bool old = e.since < 3900;
  std::vector<std::string> out;
  out.push_back(fmt::format("{}: offloaded {}/{} layers to GPU", e.tensors, p.layers_offloaded, m.n_layer + 1));
  const std::string host = s.no_mmap ? "CPU" : (old ? "CPU" : "CPU_Mapped");
  // Metal wraps the mapped file instead of copying it (buffer_from_host_ptr): "Metal_Mapped" /
  // "MTL0_Mapped" model buffers under mmap (the suffix from ~b4040, PR #10189; here with CPU_Mapped's era).
  const std::string device_suffix = names.metal() && !s.no_mmap && !old ? "_Mapped" : "";
  auto model_line = [&](const std::string& dev, int64_t b) {
    if (b <= 0) return;
    if (old) out.push_back(fmt::format("{}: {:>10} buffer size = {:8.2f} MiB", e.tensors, dev, mib(b)));
    else out.push_back(fmt::format("{}: {:>12} model buffer size = {:8.2f} MiB", e.tensors, dev, mib(b)));
  };
  model_line(host, p.host.model);
  for (size_t g = 0; g < p.gpu.size(); ++g) model_line(names(g) + device_suffix, p.gpu[g].model);
  if (kv) {
    out.push_back(fmt::format("{}: n_ctx = {}, n_batch = {}, n_ubatch = {}, flash_attn = {}", e.context, kv->n_ctx, s.kv.n_batch,
                              s.kv.n_ubatch, s.kv.flash_attn ? "enabled" : "disabled"));
    out.push_back(fmt::format("{}: {:>10} output buffer size = {:8.2f} MiB", e.context, names.host(), mib(p.host.output)));
    // Each cache allocates and logs its own buffers: with sliding-window layers (llama_kv_cache_iswa)
    // the full-attention cache's lines come first, then the SWA cache's.
    const bool iswa = e.since >= 5000 && kv->swa.layers > 0;
    auto buffer_lines = [&](bool swa_part) {
      const auto part = [&](const DeviceBuffers& b) { return !iswa ? b.kv : swa_part ? b.kv_swa : b.kv - b.kv_swa; };
      if (part(p.host) > 0) out.push_back(fmt::format("{}: {:>10} KV buffer size = {:8.2f} MiB", e.kv, "CPU", mib(part(p.host))));
      for (size_t g = 0; g < p.gpu.size(); ++g)
        if (part(p.gpu[g]) > 0) out.push_back(fmt::format("{}: {:>10} KV buffer size = {:8.2f} MiB", e.kv, names(g), mib(part(p.gpu[g]))));
    };
    if (iswa) out.push_back(fmt::format("{}_iswa: creating non-SWA KV cache, size = {} cells", e.kv, kv->base.cells));
    buffer_lines(false);
    if (e.since >= 5000) {
      std::string line = kv_cache_log_line(*kv, kv->base, s.kv);
      out.push_back(std::string(e.kv) + line.substr(line.find(':')));
      if (iswa) {
        out.push_back(fmt::format("{}_iswa: creating     SWA KV cache, size = {} cells", e.kv, kv->swa.cells));
        buffer_lines(true);
        line = kv_cache_log_line(*kv, kv->swa, s.kv);
        out.push_back(std::string(e.kv) + line.substr(line.find(':')));
      }
      for (size_t g = 0; g < p.gpu.size(); ++g)
        if (p.gpu[g].indexer > 0)
          out.push_back(fmt::format("{}: {:>10} KV buffer size = {:8.2f} MiB (DSA indexer)", e.kv, names(g), mib(p.gpu[g].indexer)));
    } else {
      out.push_back(fmt::format("{}: KV self size  = {:7.2f} MiB, K ({}): {:7.2f} MiB, V ({}): {:7.2f} MiB", e.context, mib(kv->bytes()),
                                gguf::type_traits(s.kv.type_k).name, mib(kv->base.k_bytes + kv->swa.k_bytes),
                                gguf::type_traits(s.kv.type_v).name, mib(kv->base.v_bytes + kv->swa.v_bytes)));
    }
  }
  for (size_t g = 0; g < p.gpu.size(); ++g)
    if (p.gpu[g].compute > 0)
      out.push_back(fmt::format("{}: {:>10} compute buffer size = {:8.2f} MiB (estimate)", e.context, names(g), mib(p.gpu[g].compute)));
  out.push_back(fmt::format("{}: {:>10} compute buffer size = {:8.2f} MiB (estimate)", e.context, names.host(), mib(p.host.compute)));
  return out;
}

}  // namespace headroom::llamacpp
