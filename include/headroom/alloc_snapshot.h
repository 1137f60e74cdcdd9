// A PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot): segments with their blocks,
// per-device allocator traces and the allocator settings, read from the pickle without Python.
// Format: pytorch/pytorch torch/csrc/cuda/Module.cpp (THCPModule_memorySnapshot) and
// torch/cuda/memory.py (_snapshot docstring); notes in shared/research/allocator-runtime.md §3.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/alloc.h"

namespace headroom::alloc {

struct Frame {
  std::string filename;
  int64_t line = 0;
  std::string name;
};

enum class TraceAction : uint8_t {
  Alloc, FreeRequested, FreeCompleted, SegmentAlloc, SegmentFree, SegmentMap, SegmentUnmap, Snapshot, Oom, Other
};
std::string_view action_name(TraceAction a);

struct TraceEntry {
  TraceAction action = TraceAction::Other;
  int64_t addr = 0;         // block / segment address (0 for oom)
  int64_t size = 0;         // requested bytes (alloc/free_*), segment bytes, rounded request (oom)
  int64_t stream = 0;
  int64_t time_us = 0;
  int64_t device_free = 0;  // oom only: cudaMemGetInfo free at the failure
  int32_t stack = -1;       // index into Snapshot::stacks, -1 when no frames were recorded
  std::optional<PoolId> pool;
};

struct SnapshotBlock {
  int64_t address = 0, size = 0, requested_size = 0;
  std::string state;  // active_allocated | active_pending_free | inactive
  int32_t stack = -1;
};

struct SnapshotSegment {
  int64_t device = 0, address = 0, total_size = 0, allocated_size = 0, active_size = 0, requested_size = 0;
  int64_t stream = 0;
  std::string segment_type;  // small | large
  PoolId pool;
  bool is_expandable = false;
  std::vector<SnapshotBlock> blocks;
};

struct Snapshot {
  int protocol = 0;
  std::vector<SnapshotSegment> segments;
  std::vector<std::vector<TraceEntry>> device_traces;  // index = device
  std::vector<std::vector<Frame>> stacks;              // shared call stacks
  bool has_settings = false;
  AllocConf settings;  // allocator_settings as recorded (defaults when absent)
};

// Reads a snapshot pickle. Bad or hostile input -> InputError naming `source` and the field.
Snapshot read_snapshot(std::string_view bytes, std::string_view source);
// Reads a file (size-capped) and parses it.
Snapshot load_snapshot_file(const std::string& path);

}  // namespace headroom::alloc
