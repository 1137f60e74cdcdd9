// Allocator slack for the forecasts: plays a synthetic allocation pattern through the
// caching-allocator model and reports reserved - allocated, instead of a constant margin.
// Patterns: CUDA-graph capture of descending batch sizes into one shared private pool (what
// SGLang's cuda_graph_runner.py and vLLM's capture_model do) and a prefill's per-layer
// activations. The per-token tensor sizes are the caller's (engine model) estimates.
#pragma once
#include <cstdint>
#include <vector>

#include "headroom/alloc.h"

namespace headroom::alloc {

struct SynthOp {
  enum Kind : uint8_t { Alloc, Free, BeginCapture, EndCapture };
  Kind kind = Alloc;
  int32_t id = 0;     // Alloc/Free: the tensor; Begin/EndCapture: ignored (one shared pool)
  int64_t bytes = 0;  // Alloc only
};

struct MarginResult {
  int64_t peak_reserved = 0;
  int64_t allocated_at_peak = 0;   // allocated when reserved first reached its peak
  int64_t margin = 0;              // peak_reserved - allocated_at_peak
  int64_t peak_allocated = 0;
  int64_t final_reserved = 0, final_allocated = 0;
  int64_t private_pool_reserved = 0;  // held by the graph pool at the end
  bool oom = false;                   // only with a finite device
};

// Plays `ops` on a fresh allocator (device unlimited unless `device.total` > 0).
MarginResult replay_pattern(const AllocConf& conf, const std::vector<SynthOp>& ops, const DeviceSpec& device = {});

struct GraphCapturePattern {
  std::vector<int64_t> batch_sizes;                // captured largest first (sorted here)
  int64_t layers = 1;
  std::vector<int64_t> transient_bytes_per_token;  // per layer: allocated in order, freed in reverse
  std::vector<int64_t> output_bytes_per_token;     // allocated once per graph, alive after capture
};

// Memory the shared graph pool holds after capturing every batch size, and its slack.
// result.private_pool_reserved = pool size; result.final_allocated = live graph outputs;
// result.margin = reserved - allocated at the capture peak.
MarginResult graph_pool_footprint(const AllocConf& conf, const GraphCapturePattern& pattern);

// reserved - allocated at the peak of one forward pass over `tokens` tokens whose layers each
// allocate `transient_bytes_per_token` tensors (x tokens) in order and free them in reverse.
int64_t activation_fragmentation_margin(const AllocConf& conf, int64_t tokens,
                                        const std::vector<int64_t>& transient_bytes_per_token, int64_t layers);

}  // namespace headroom::alloc
