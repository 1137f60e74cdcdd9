// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, native backend)
// that plays malloc/free sequences without a GPU: 512-byte rounding, small/large pools with
// 2 MiB / 20 MiB segments, best fit per stream, the split and oversize rules, the OOM retry chain,
// garbage collection, expandable segments, CUDA-graph private pools and the memory fraction.
// Configured by a PYTORCH_CUDA_ALLOC_CONF string parsed as PyTorch parses it.
// Rules mirrored from pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (v2.5 commit 001074d2, v2.9
// copy) and c10/core/AllocatorConfig.cpp (commit 065861fb); notes in shared/research/allocator-runtime.md §1.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::alloc {

// Constants of CUDACachingAllocator.cpp (bytes).
inline constexpr int64_t kMinBlockSize = 512;              // every request rounded to a multiple
inline constexpr int64_t kSmallSize = 1048576;             // <= 1 MiB: small pool
inline constexpr int64_t kSmallBuffer = 2097152;           // small-pool segment size
inline constexpr int64_t kMinLargeAlloc = 10485760;        // below 10 MiB: one 20 MiB segment
inline constexpr int64_t kLargeBuffer = 20971520;          // large buffer / default max_non_split_rounding
inline constexpr int64_t kRoundLarge = 2097152;            // large segments rounded to 2 MiB
inline constexpr int64_t kNoLimit = INT64_MAX;             // max_split_size when unset (SIZE_MAX in PyTorch)
inline constexpr int kRoundUpPowerOfTwoIntervals = 16;     // 1 MiB .. 32 GiB+

// The PYTORCH_CUDA_ALLOC_CONF settings the native allocator acts on (defaults = PyTorch's).
struct AllocConf {
  std::string text;                                   // the string as given
  int64_t max_split_size = kNoLimit;                  // max_split_size_mb (>= 20)
  int64_t max_non_split_rounding = kLargeBuffer;      // max_non_split_rounding_mb (>= 20)
  int64_t large_segment_size = kLargeBuffer;          // large_segment_size_mb (2026 main; default 20)
  std::array<int64_t, kRoundUpPowerOfTwoIntervals> roundup_power2_divisions{};  // 0 = off
  double garbage_collection_threshold = 0.0;          // (0, 1); only acts with a memory fraction
  bool expandable_segments = false;
  double per_process_memory_fraction = 1.0;           // [0, 1]; < 1 sets "allowed"
  bool release_lock_on_cudamalloc = false;            // no effect on memory (parsed for fidelity)
  bool graph_capture_record_stream_reuse = false;     // parsed; cross-stream reuse in capture not modelled
  std::string backend = "native";                     // "native" | "cudaMallocAsync"
};

// Parses a PYTORCH_CUDA_ALLOC_CONF string as AllocatorConfig::parseArgs does (lexer splits on
// , : [ ] and drops spaces). Any error -> InputError(source, "PYTORCH_CUDA_ALLOC_CONF", why).
AllocConf parse_alloc_conf(std::string_view text, std::string_view source = "--alloc-conf");

// round_size(): the block size a request of `size` bytes gets.
int64_t round_size(int64_t size, const AllocConf& conf);
// get_allocation_size(): the segment cudaMalloc'd for a rounded size (also "Tried to allocate").
int64_t allocation_size(int64_t rounded, const AllocConf& conf);
// PyTorch's format_size(): "512 bytes", "2.00 KiB", "20.00 MiB", "1.50 GiB".
std::string format_size(int64_t bytes);

using BlockId = int32_t;
inline constexpr BlockId kNoBlock = -1;

// A memory pool id as PyTorch's MempoolId_t: (0,0) is the default pools; graph_pool_handle()
// returns (0, n); a capture without a pool uses (capture_id, 0).
struct PoolId {
  int64_t first = 0, second = 0;
  bool is_default() const { return first == 0 && second == 0; }
  friend bool operator==(const PoolId&, const PoolId&) = default;
};

// Device the allocator runs on. total = 0 means unlimited (no OOM possible).
struct DeviceSpec {
  int index = 0;
  int64_t total = 0;         // cudaMemGetInfo total ("total capacity")
  int64_t non_pytorch = 0;   // memory used outside the allocator (context, NCCL, other processes)
};

// torch.cuda.memory_stats() counterparts (aggregate over pools).
struct AllocStats {
  int64_t allocated = 0, reserved = 0, active = 0, requested = 0;
  int64_t peak_allocated = 0, peak_reserved = 0, peak_active = 0;
  int64_t inactive_split_bytes = 0;
  int64_t segments = 0;           // cudaMalloc'd segments + mapped expandable ranges (device allocs)
  int64_t num_device_alloc = 0, num_device_free = 0, num_alloc_retries = 0, num_ooms = 0;
  int64_t num_mallocs = 0, num_frees = 0;
};

// What the OOM exception would report.
struct OomInfo {
  int64_t request_bytes = 0;    // the caller's size
  int64_t rounded_bytes = 0;    // round_size()
  int64_t alloc_size = 0;       // "Tried to allocate"
  int64_t device_total = 0, device_free = 0;
  int64_t allocated = 0, reserved = 0, private_pool_free = 0;
  std::optional<int64_t> allowed;
  std::string message;          // the text after "torch.OutOfMemoryError: "
};

// Segment view (as in a memory snapshot) for tests and reports.
struct SegmentView {
  int64_t address = 0, total_size = 0, allocated_size = 0;
  int64_t stream = 0;
  bool is_small = false, is_expandable = false;
  PoolId pool;
  std::vector<std::pair<int64_t, bool>> blocks;  // (size, allocated) in address order (mapped only)
};

class CachingAllocator {
 public:
  CachingAllocator(const AllocConf& conf, DeviceSpec device);
  ~CachingAllocator();
  CachingAllocator(CachingAllocator&&) noexcept;
  CachingAllocator& operator=(CachingAllocator&&) noexcept;

  // DeviceCachingAllocator::malloc. Returns kNoBlock on OOM (last_oom() says why).
  BlockId malloc(int64_t size, int64_t stream = 0);
  // Allocates straight into a private pool (what a capture routed to `pool` does); creates the
  // pool (use_count 1) on first use.
  BlockId malloc_in_pool(int64_t size, int64_t stream, PoolId pool);
  // free(): free_requested and free_completed at once.
  void free(BlockId id);
  // Cross-stream free (record_stream): stats drop now, the block returns to its pool at
  // free_completed() or when an OOM retry synchronizes events.
  void free_requested(BlockId id);
  void free_completed(BlockId id);

  // CUDA-graph capture routing: beginAllocateToPool / endAllocateToPool / releasePool.
  void begin_allocate_to_pool(PoolId pool, int64_t stream);
  void end_allocate_to_pool(PoolId pool);
  void release_pool(PoolId pool);
  // torch.cuda.empty_cache().
  void empty_cache();
  // torch.cuda.set_per_process_memory_fraction().
  void set_memory_fraction(double fraction);

  const AllocStats& stats() const;
  const OomInfo& last_oom() const;
  int64_t block_size(BlockId id) const;      // rounded size held by an allocated block
  int64_t block_address(BlockId id) const;   // simulated address
  int64_t largest_free_block() const;        // largest cached free block, any pool/stream
  int64_t private_pool_free_bytes() const;   // free bytes cached in private pools
  int64_t private_pool_reserved_bytes() const;
  int64_t device_free() const;               // total - non_pytorch - reserved (or kNoLimit)
  std::vector<SegmentView> segments() const;
  void reset_peaks();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace headroom::alloc
