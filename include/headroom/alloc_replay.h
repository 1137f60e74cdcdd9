// Replays a memory snapshot's allocation trace through the caching-allocator model under one or
// two PYTORCH_CUDA_ALLOC_CONF settings: peaks, fragmentation over time, the OOM point with
// PyTorch's message, and the allocation sites holding the most memory at the recorded peak.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "headroom/alloc.h"
#include "headroom/alloc_snapshot.h"

namespace headroom::alloc {

// One allocator call derived from the trace, on dense slot numbers (no address lookups).
struct SimOp {
  enum Kind : uint8_t { Alloc, Free, FreeRequested, FreeCompleted };
  Kind kind = Alloc;
  int32_t slot = 0;     // which live allocation
  int32_t pool = -1;    // index into PreparedTrace::pools; -1 = default pools
  int32_t stack = -1;   // Snapshot::stacks index of the allocation site
  int64_t size = 0;     // requested bytes (Alloc)
  int64_t stream = 0;
  int64_t event = -1;   // index in the device trace; -1 for blocks live before the trace began
  bool oom_request = false;  // the request of a recorded "oom" entry (replayed: would it fit now?)
};

struct PreparedTrace {
  std::vector<SimOp> ops;
  std::vector<PoolId> pools;
  int32_t slots = 0;
  int64_t initial_blocks = 0, initial_bytes = 0;  // live before recording began (replayed first)
  int64_t trace_events = 0;                       // entries in the device trace
};

// Turns device `device`'s trace into allocator calls. Blocks alive before the trace started
// (freed in the trace without an alloc, or still active in `segments`) are allocated first in
// address order: their original order is unknown (stated in the report).
PreparedTrace prepare_trace(const Snapshot& snap, int device);

struct FragSample {
  int64_t event = 0;  // trace index (or -1 for the initial state)
  int64_t allocated = 0, reserved = 0, largest_free = 0;
};

struct ReplayOom {
  int64_t event = -1;
  int64_t request_bytes = 0, alloc_size = 0, device_free = 0;
  std::string message;
};

struct ReplayRun {
  std::string conf_text;
  int64_t ops_replayed = 0;
  bool completed = true;                // false when it stopped at an OOM
  int64_t peak_allocated = 0, peak_reserved = 0, peak_reserved_event = -1;
  int64_t final_allocated = 0, final_reserved = 0;
  int64_t max_unallocated = 0, max_unallocated_event = -1;  // max(reserved - allocated)
  int64_t private_pool_reserved = 0;                        // at the end
  std::vector<FragSample> timeline;
  std::optional<ReplayOom> oom;
  AllocStats stats;
};

// Plays `trace` on a fresh allocator. timeline_points = 0 skips the samples (benchmark mode).
ReplayRun run_prepared(const PreparedTrace& trace, const AllocConf& conf, const DeviceSpec& dev, size_t timeline_points);

struct Site {
  std::string frame;  // "name (file:line)" or "<no stack recorded>"
  int64_t bytes = 0;  // requested bytes live at the recorded peak
  int64_t count = 0;
};

// What the recorded trace itself shows.
struct RecordedTrace {
  int64_t events = 0;
  int64_t peak_requested = 0, peak_requested_event = -1;
  int64_t initial_reserved = 0, peak_reserved = 0, peak_reserved_event = -1, final_reserved = 0;
  bool reserved_known = false;  // segments present, so reserved is reconstructed exactly
  std::optional<ReplayOom> oom; // the trace's own "oom" entry (message not recorded)
  std::vector<Site> top_sites;
};

struct ReplayOptions {
  int device = 0;
  std::optional<AllocConf> conf;     // default: the snapshot's allocator_settings
  std::optional<AllocConf> compare;  // the side-by-side configuration
  int64_t total_memory = 0;          // device total (0 = unknown)
  std::optional<int64_t> non_pytorch;
  size_t timeline_points = 48;
  size_t top_sites = 10;
};

struct ReplayReport {
  int device = 0;
  int64_t budget = 0;           // bytes the allocator may reserve in the replay (0 = unlimited)
  std::string budget_source;    // how it was derived
  DeviceSpec device_spec;
  PreparedTrace trace;
  RecordedTrace recorded;
  ReplayRun primary;
  std::optional<ReplayRun> compare;
  std::vector<std::string> notes;
};

ReplayReport replay_snapshot(const Snapshot& snap, const ReplayOptions& opt);

}  // namespace headroom::alloc
