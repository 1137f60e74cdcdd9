// Synthetic allocation patterns played through the allocator model (see alloc_margin.h).
// Graph capture mirrors sgl-project/sglang python/sglang/srt/model_executor/cuda_graph_runner.py
// (commit 0021673c: one global pool, batch sizes captured in reverse) and vLLM
// gpu_model_runner.py capture_model (reversed(cudagraph_batch_sizes), one graph_pool_handle()).
#include <algorithm>
#include <functional>
#include <unordered_map>

#include "headroom/alloc_margin.h"

namespace headroom::alloc {

namespace {
constexpr PoolId kGraphPool{0, 1};  // graph_pool_handle() of a fresh process
constexpr int64_t kCaptureStream = 1;
}  // namespace

MarginResult replay_pattern(const AllocConf& conf, const std::vector<SynthOp>& ops, const DeviceSpec& device) {
  MarginResult r;
  CachingAllocator sim(conf, device);
  std::unordered_map<int32_t, BlockId> live;
  bool capturing = false;
  const AllocStats& st = sim.stats();
  for (const SynthOp& op : ops) {
    switch (op.kind) {
      case SynthOp::BeginCapture:
        sim.begin_allocate_to_pool(kGraphPool, kCaptureStream);
        capturing = true;
        break;
      case SynthOp::EndCapture:
        sim.end_allocate_to_pool(kGraphPool);
        capturing = false;
        break;
      case SynthOp::Alloc: {
        BlockId id = sim.malloc(op.bytes, capturing ? kCaptureStream : 0);
        if (id == kNoBlock) {
          r.oom = true;
          break;
        }
        live[op.id] = id;
        if (st.reserved > r.peak_reserved) r.peak_reserved = st.reserved, r.allocated_at_peak = st.allocated;
        break;
      }
      case SynthOp::Free:
        if (auto it = live.find(op.id); it != live.end()) sim.free(it->second), live.erase(it);
        break;
    }
    if (r.oom) break;
  }
  r.margin = r.peak_reserved - r.allocated_at_peak;
  r.peak_allocated = st.peak_allocated;
  r.final_reserved = st.reserved;
  r.final_allocated = st.allocated;
  r.private_pool_reserved = sim.private_pool_reserved_bytes();
  return r;
}

MarginResult graph_pool_footprint(const AllocConf& conf, const GraphCapturePattern& p) {
  std::vector<int64_t> bs = p.batch_sizes;
  std::sort(bs.rbegin(), bs.rend());
  std::vector<SynthOp> ops;
  int32_t next_id = 0;
  for (int64_t b : bs) {
    ops.push_back({SynthOp::BeginCapture, 0, 0});
    for (int64_t l = 0; l < p.layers; ++l) {
      const int32_t first = next_id;
      for (int64_t per_token : p.transient_bytes_per_token) ops.push_back({SynthOp::Alloc, next_id++, per_token * b});
      for (int32_t id = next_id; id-- > first;) ops.push_back({SynthOp::Free, id, 0});
    }
    for (int64_t per_token : p.output_bytes_per_token) ops.push_back({SynthOp::Alloc, next_id++, per_token * b});
    ops.push_back({SynthOp::EndCapture, 0, 0});
  }
  return replay_pattern(conf, ops);
}

int64_t activation_fragmentation_margin(const AllocConf& conf, int64_t tokens, const std::vector<int64_t>& transient_bytes_per_token,
                                        int64_t layers) {
  std::vector<SynthOp> ops;
  int32_t next_id = 0;
  for (int64_t l = 0; l < layers; ++l) {
    const int32_t first = next_id;
    for (int64_t per_token : transient_bytes_per_token) ops.push_back({SynthOp::Alloc, next_id++, per_token * tokens});
    for (int32_t id = next_id; id-- > first;) ops.push_back({SynthOp::Free, id, 0});
  }
  return replay_pattern(conf, ops).margin;
}

}  // namespace headroom::alloc
