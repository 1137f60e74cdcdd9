// Caching-allocator model: outcomes worked out by hand from PyTorch's rules
// (c10/cuda/CUDACachingAllocator.cpp; research notes allocator-runtime.md §1.17 table).
#include <gtest/gtest.h>

#include "headroom/alloc.h"
#include "headroom/alloc_margin.h"
#include "headroom/error.h"

using namespace headroom::alloc;
using headroom::InputError;

namespace {
constexpr int64_t MiB = 1 << 20;
AllocConf conf(const char* s = "") { return parse_alloc_conf(s); }
DeviceSpec device(int64_t total, int64_t non_pytorch = 0) { return DeviceSpec{0, total, non_pytorch}; }
}  // namespace

TEST(AllocRounding, RoundSizeAndSegmentSize) {
  const AllocConf c = conf();
  EXPECT_EQ(round_size(1, c), 512);
  EXPECT_EQ(round_size(512, c), 512);
  EXPECT_EQ(round_size(513, c), 1024);
  EXPECT_EQ(round_size(1048577, c), 1048576 + 512);
  EXPECT_EQ(allocation_size(512, c), 2 * MiB);             // small pool segment
  EXPECT_EQ(allocation_size(1 * MiB, c), 2 * MiB);         // exactly 1 MiB is still small
  EXPECT_EQ(allocation_size(1 * MiB + 512, c), 20 * MiB);  // 1..10 MiB: 20 MiB segment
  EXPECT_EQ(allocation_size(10 * MiB, c), 10 * MiB);
  EXPECT_EQ(allocation_size(11 * MiB, c), 12 * MiB);       // rounded up to 2 MiB
}

TEST(AllocRounding, PowerOfTwoDivisions) {
  // [64:8,256:4,1024:4,>:1]: index(64 MB)=6 <- 8 (and 0..5), index 8 <- 4, index 10 <- 4, 10.. <- 1.
  // Index 7 (128-256 MB) and 9 stay 0: PyTorch only fills below the first key and after '>'.
  const AllocConf c = conf("roundup_power2_divisions:[64:8,256:4,1024:4,>:1]");
  EXPECT_EQ(c.roundup_power2_divisions[0], 8);
  EXPECT_EQ(c.roundup_power2_divisions[6], 8);
  EXPECT_EQ(c.roundup_power2_divisions[7], 0);
  EXPECT_EQ(c.roundup_power2_divisions[8], 4);
  EXPECT_EQ(c.roundup_power2_divisions[9], 0);
  EXPECT_EQ(c.roundup_power2_divisions[15], 1);
  // 300 MiB: floor 256 MiB, 4 divisions -> steps of 64 MiB -> 320 MiB.
  EXPECT_EQ(round_size(300 * MiB, c), 320 * MiB);
  // 130 MiB: interval 7 has 0 divisions -> plain 512-byte rounding.
  EXPECT_EQ(round_size(130 * MiB + 1, c), 130 * MiB + 512);
  // 3 MiB + 1 with 8 divisions: floor 2 MiB, step 256 KiB -> 3 MiB + 256 KiB.
  EXPECT_EQ(round_size(3 * MiB + 1, c), 3 * MiB + 256 * 1024);
  // Legacy single value applies to all intervals; powers of two stay as they are.
  const AllocConf all4 = conf("roundup_power2_divisions:4");
  EXPECT_EQ(round_size(5 * MiB, all4), 5 * MiB);  // 4 MiB floor, 1 MiB steps: 5 MiB exact
  EXPECT_EQ(round_size(64 * MiB, all4), 64 * MiB);
}

TEST(AllocRounding, FormatSizeAsPyTorch) {
  EXPECT_EQ(format_size(0), "0 bytes");
  EXPECT_EQ(format_size(1024), "1024 bytes");
  EXPECT_EQ(format_size(1025), "1.00 KiB");
  EXPECT_EQ(format_size(1048576), "1024.00 KiB");
  EXPECT_EQ(format_size(694 * MiB), "694.00 MiB");
  EXPECT_EQ(format_size(1024 * MiB), "1024.00 MiB");
  EXPECT_EQ(format_size(int64_t{6914897428}), "6.44 GiB");  // seed crash "6.44 GiB"
}

// allocator-runtime.md §1.17: request -> segment reserved and allocated_bytes.
TEST(AllocSim, WorkedExamplesTable) {
  struct Row { int64_t req, reserved, allocated; };
  const Row rows[] = {
      {1, 2 * MiB, 512},
      {1048576, 2 * MiB, 1 * MiB},
      {1048577, 20 * MiB, 1 * MiB + 512},
      {9 * MiB + MiB / 2, 20 * MiB, 9 * MiB + MiB / 2},
      {10 * MiB, 10 * MiB, 10 * MiB},
      {11 * MiB, 12 * MiB, 12 * MiB},  // 1 MiB tail is not > 1 MiB: not split, whole block handed out
      {100 * MiB + 1, 102 * MiB, 100 * MiB + 512},
  };
  for (const Row& r : rows) {
    CachingAllocator a(conf(), DeviceSpec{});
    ASSERT_NE(a.malloc(r.req), kNoBlock);
    EXPECT_EQ(a.stats().reserved, r.reserved) << r.req;
    EXPECT_EQ(a.stats().allocated, r.allocated) << r.req;
  }
}

TEST(AllocSim, BestFitSplitAndRemainderRule) {
  CachingAllocator a(conf(), DeviceSpec{});
  BlockId x = a.malloc(5 * MiB);  // 20 MiB segment: [x 5][free 15]
  BlockId y = a.malloc(6 * MiB);  // from the 15 MiB remainder: [x 5][y 6][free 9]
  EXPECT_EQ(a.stats().reserved, 20 * MiB);
  EXPECT_EQ(a.block_address(y), a.block_address(x) + 5 * MiB);
  a.free(x);                      // [free 5][y 6][free 9]
  EXPECT_EQ(a.largest_free_block(), 9 * MiB);
  BlockId z = a.malloc(4 * MiB);  // best fit = the 5 MiB block; 1 MiB left is not > 1 MiB -> no split
  EXPECT_EQ(a.block_address(z), a.block_address(y) - 5 * MiB);
  EXPECT_EQ(a.block_size(z), 5 * MiB);
  EXPECT_EQ(a.stats().allocated, 11 * MiB);
  EXPECT_EQ(a.stats().reserved, 20 * MiB);
  a.free(y);
  a.free(z);  // everything merges back into one 20 MiB block
  auto segs = a.segments();
  ASSERT_EQ(segs.size(), 1u);
  ASSERT_EQ(segs[0].blocks.size(), 1u);
  EXPECT_EQ(segs[0].blocks[0].first, 20 * MiB);
  a.empty_cache();
  EXPECT_EQ(a.stats().reserved, 0);
}

TEST(AllocSim, BlocksAreReusedOnlyOnTheirStream) {
  CachingAllocator a(conf(), DeviceSpec{});
  a.free(a.malloc(5 * MiB, 0));
  a.malloc(5 * MiB, 7);  // the cached 20 MiB segment belongs to stream 0
  EXPECT_EQ(a.stats().reserved, 40 * MiB);
  a.malloc(5 * MiB, 0);  // reuses stream 0's segment
  EXPECT_EQ(a.stats().reserved, 40 * MiB);
}

TEST(AllocSim, OomRetryFreesCachedSegments) {
  CachingAllocator a(conf(), device(100 * MiB));
  a.free(a.malloc(60 * MiB));      // 60 MiB cached
  BlockId b = a.malloc(70 * MiB);  // miss; cudaMalloc(70) > 40 free; release cache; retry succeeds
  ASSERT_NE(b, kNoBlock);
  EXPECT_EQ(a.stats().reserved, 70 * MiB);
  EXPECT_EQ(a.stats().num_alloc_retries, 1);
}

// A fragmentation OOM: the 38 MiB remainder split off a cached 50 MiB segment is pinned by a 12 MiB
// tensor and cannot be released; expandable segments map pages instead and fit.
TEST(AllocSim, FragmentationOomThatExpandableSegmentsAvoid) {
  auto run = [](const AllocConf& c, OomInfo* oom) {
    CachingAllocator a(c, device(100 * MiB));
    BlockId x = a.malloc(50 * MiB);
    BlockId y = a.malloc(48 * MiB);
    a.free(x);
    a.malloc(12 * MiB);  // best fit: x's 50 MiB segment, split (38 MiB remainder > 1 MiB)
    a.free(y);           // 48 MiB unsplit, releasable
    BlockId big = a.malloc(60 * MiB);
    if (oom) *oom = a.last_oom();
    return std::make_pair(big, a.stats());
  };
  OomInfo oom;
  auto [big, st] = run(conf(), &oom);
  EXPECT_EQ(big, kNoBlock);
  // After release_cached_blocks only x's segment is left: 50 reserved, 12 allocated, 50 free.
  EXPECT_EQ(st.reserved, 50 * MiB);
  EXPECT_EQ(st.allocated, 12 * MiB);
  EXPECT_EQ(st.num_alloc_retries, 1);
  EXPECT_EQ(st.num_ooms, 1);
  EXPECT_EQ(oom.alloc_size, 60 * MiB);
  EXPECT_EQ(oom.device_free, 50 * MiB);
  EXPECT_EQ(oom.message,
            "CUDA out of memory. Tried to allocate 60.00 MiB. GPU 0 has a total capacity of 100.00 MiB of which 50.00 MiB is free. "
            "Including non-PyTorch memory, this process has 50.00 MiB memory in use. Of the allocated memory 12.00 MiB is "
            "allocated by PyTorch, and 38.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
            "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
            "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");

  // Expandable (20 MiB pages): x maps 3 pages (60), y maps 2 more (100). After the frees the
  // 12 MiB tensor sits at the start and 88 MiB is contiguous free space: the 60 MiB fits.
  auto [big2, st2] = run(conf("expandable_segments:True"), nullptr);
  EXPECT_NE(big2, kNoBlock);
  EXPECT_EQ(st2.reserved, 100 * MiB);
  EXPECT_EQ(st2.allocated, 72 * MiB);
  EXPECT_EQ(st2.num_ooms, 0);
}

TEST(AllocSim, ExpandableSegmentsMapAndUnmapPages) {
  CachingAllocator a(conf("expandable_segments:True"), device(1024 * MiB));
  BlockId x = a.malloc(5 * MiB);  // one 20 MiB page of the large pool's segment
  EXPECT_EQ(a.stats().reserved, 20 * MiB);
  BlockId s = a.malloc(1);        // one 2 MiB page of the small pool's segment
  EXPECT_EQ(a.stats().reserved, 22 * MiB);
  BlockId y = a.malloc(30 * MiB);  // 15 MiB free tail + 15 more -> one more page
  EXPECT_EQ(a.stats().reserved, 42 * MiB);
  EXPECT_EQ(a.block_address(y), a.block_address(x) + 5 * MiB);
  a.free(x);
  a.empty_cache();  // x's 5 MiB does not cover a whole page: nothing unmapped
  EXPECT_EQ(a.stats().reserved, 42 * MiB);
  a.free(y);
  a.free(s);
  a.empty_cache();
  EXPECT_EQ(a.stats().reserved, 0);
}

TEST(AllocSim, MaxSplitSizeKeepsOversizeBlocksWhole) {
  // vLLM PR #41268 pattern: a 270 MiB weight lands in a cached 530 MiB temporary.
  CachingAllocator plain(conf(), DeviceSpec{});
  plain.free(plain.malloc(530 * MiB));
  plain.malloc(270 * MiB);
  EXPECT_EQ(plain.stats().reserved, 530 * MiB);
  EXPECT_EQ(plain.stats().inactive_split_bytes, 260 * MiB);  // pinned remainder

  CachingAllocator capped(conf("max_split_size_mb:20"), DeviceSpec{});
  capped.free(capped.malloc(530 * MiB));
  capped.malloc(270 * MiB);  // 530 >= 270 + 20: not reused -> its own 270 MiB segment
  EXPECT_EQ(capped.stats().reserved, 800 * MiB);
  EXPECT_EQ(capped.stats().inactive_split_bytes, 0);

  // With a 600 MiB device, release_available_cached_blocks frees the oversize 530 MiB block
  // (no full cache flush: not counted as a retry).
  CachingAllocator tight(conf("max_split_size_mb:20"), device(600 * MiB));
  tight.free(tight.malloc(530 * MiB));
  ASSERT_NE(tight.malloc(270 * MiB), kNoBlock);
  EXPECT_EQ(tight.stats().reserved, 270 * MiB);
  EXPECT_EQ(tight.stats().num_alloc_retries, 0);
}

TEST(AllocSim, GarbageCollectionNeedsAFraction) {
  // 200 MiB device, fraction 0.5 -> 100 MiB allowed, GC threshold 0.5 -> 50 MiB.
  auto run = [](const char* c) {
    CachingAllocator a(conf(c), device(200 * MiB));
    BlockId x = a.malloc(30 * MiB), y = a.malloc(30 * MiB);
    a.free(x);
    a.free(y);
    // 40 MiB misses both cached blocks; GC: reserved 60 > 50, both ages = 1 = average -> both freed.
    EXPECT_NE(a.malloc(40 * MiB), kNoBlock);
    return a.stats().reserved;
  };
  EXPECT_EQ(run("per_process_memory_fraction:0.5,garbage_collection_threshold:0.5"), 40 * MiB);
  EXPECT_EQ(run("per_process_memory_fraction:0.5"), 100 * MiB);
  EXPECT_EQ(run("garbage_collection_threshold:0.5"), 100 * MiB);  // no fraction: GC inactive
}

TEST(AllocSim, MemoryFractionCapsReservedAndShowsAllowed) {
  CachingAllocator a(conf("per_process_memory_fraction:0.5"), device(200 * MiB));
  EXPECT_EQ(a.malloc(120 * MiB), kNoBlock);
  const OomInfo& o = a.last_oom();
  ASSERT_TRUE(o.allowed.has_value());
  EXPECT_EQ(*o.allowed, 100 * MiB);
  EXPECT_NE(o.message.find("of which 200.00 MiB is free. Including non-PyTorch memory, this process has 0 bytes memory in use. "
                           "100.00 MiB allowed; Of the allocated memory 0 bytes"),
            std::string::npos)
      << o.message;
}

TEST(AllocSim, CrossStreamFreeIsReclaimedByTheOomRetry) {
  CachingAllocator a(conf(), device(30 * MiB));
  BlockId x = a.malloc(20 * MiB);
  a.free_requested(x);  // recorded on another stream: not reusable yet
  EXPECT_EQ(a.stats().allocated, 0);
  BlockId y = a.malloc(20 * MiB);  // miss, cudaMalloc fails (10 free), sync events + release, retry
  ASSERT_NE(y, kNoBlock);
  EXPECT_EQ(a.stats().reserved, 20 * MiB);
  EXPECT_EQ(a.stats().num_alloc_retries, 1);
  a.free_completed(x);  // the trace's late free_completed: already reclaimed, a no-op
  EXPECT_EQ(a.stats().allocated, 20 * MiB);
  a.free(y);
  EXPECT_EQ(a.stats().allocated, 0);
  EXPECT_EQ(a.largest_free_block(), 20 * MiB);
}

TEST(AllocSim, GraphPrivatePoolHoldsMemoryUntilReleased) {
  const PoolId pool{0, 1};
  CachingAllocator a(conf(), device(40 * MiB));
  a.begin_allocate_to_pool(pool, 5);
  BlockId t = a.malloc(12 * MiB, 5);  // capture stream -> private pool: 12 MiB segment
  a.malloc(1 * MiB, 9);               // other stream -> default small pool (2 MiB)
  a.free(t);                          // back to the private pool, not to the default pools
  a.end_allocate_to_pool(pool);
  EXPECT_EQ(a.private_pool_free_bytes(), 12 * MiB);
  EXPECT_EQ(a.stats().reserved, 14 * MiB);
  // 30 MiB: cudaMalloc fails (26 free), empty_cache cannot touch a live graph pool -> OOM.
  EXPECT_EQ(a.malloc(30 * MiB), kNoBlock);
  EXPECT_NE(a.last_oom().message.find("Of the allocated memory 13.00 MiB is allocated by PyTorch, with 12.00 MiB allocated in "
                                      "private pools (e.g., CUDA Graphs), and 1024.00 KiB is reserved by PyTorch but unallocated."),
            std::string::npos)
      << a.last_oom().message;
  // (the 1 MiB free half of the small segment is the unallocated part.) Once the graph is
  // released its pool is freeable and the OOM retry returns it.
  a.release_pool(pool);
  EXPECT_NE(a.malloc(30 * MiB), kNoBlock);
  EXPECT_EQ(a.stats().reserved, 32 * MiB);
}

TEST(AllocSim, GraphCaptureOfDescendingBatchesSharesOnePool) {
  // bs 4: per layer 12 MiB transient (segment 12 MiB), freed; output 4 MiB split from it.
  // bs 2: 6 MiB transients fit in the 8 MiB remainder; output 2 MiB split from it.
  // Pool: 12 MiB reserved, 6 MiB of outputs alive, 6 MiB free inside the pool.
  GraphCapturePattern p;
  p.batch_sizes = {2, 4};
  p.layers = 2;
  p.transient_bytes_per_token = {3 * MiB};
  p.output_bytes_per_token = {1 * MiB};
  MarginResult r = graph_pool_footprint(conf(), p);
  EXPECT_EQ(r.private_pool_reserved, 12 * MiB);
  EXPECT_EQ(r.final_allocated, 6 * MiB);
  EXPECT_EQ(r.final_reserved, 12 * MiB);
  EXPECT_EQ(r.peak_allocated, 12 * MiB);
  EXPECT_FALSE(r.oom);
}

TEST(AllocSim, ActivationMarginOfAPrefill) {
  // 1000 tokens x {8 KiB, 20 KiB}: 7.8125 MiB (-> 20 MiB segment, split) then 19.53 MiB
  // (rounded 19.53 MiB, its own 20 MiB segment; remainder 0.47 MiB not split). Layer 2 reuses both.
  // Peak reserved 40 MiB with 7.8125 + 20 MiB allocated -> 12.1875 MiB slack.
  const int64_t m = activation_fragmentation_margin(conf(), 1000, {8 * 1024, 20 * 1024}, 2);
  EXPECT_EQ(m, 40 * MiB - (8192000 + 20 * MiB));
}

TEST(AllocConfParse, AcceptsPyTorchSyntax) {
  AllocConf c = conf(" max_split_size_mb : 128 , garbage_collection_threshold:0.6,expandable_segments:True");
  EXPECT_EQ(c.max_split_size, 128 * MiB);
  EXPECT_DOUBLE_EQ(c.garbage_collection_threshold, 0.6);
  EXPECT_TRUE(c.expandable_segments);
  EXPECT_EQ(conf("").max_split_size, kNoLimit);
  EXPECT_EQ(conf("backend:cudaMallocAsync").backend, "cudaMallocAsync");
  EXPECT_EQ(conf("max_non_split_rounding_mb:40").max_non_split_rounding, 40 * MiB);
  EXPECT_DOUBLE_EQ(conf("per_process_memory_fraction:0.9").per_process_memory_fraction, 0.9);
}

TEST(AllocConfParse, RejectsWhatPyTorchRejects) {
  for (const char* bad : {"max_split_size_mb:10", "expandable_segments:true", "foo:1", "max_split_size_mb",
                          "garbage_collection_threshold:1.5", "garbage_collection_threshold:0", "roundup_power2_divisions:3",
                          "roundup_power2_divisions:[64:3]", "roundup_power2_divisions:[64:8", "roundup_power2_divisions:[100:8]",
                          "max_split_size_mb:abc", "expandable_segments:True;max_split_size_mb:20", "backend:magic",
                          "pinned_num_register_threads:3", "per_process_memory_fraction:1.5",
                          "expandable_segments:True max_split_size_mb:20"}) {
    EXPECT_THROW(parse_alloc_conf(bad), InputError) << bad;
  }
  try {
    parse_alloc_conf("foo:1", "--alloc-conf");
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--alloc-conf: PYTORCH_CUDA_ALLOC_CONF: Unrecognized key 'foo' in CUDA allocator config.");
  }
}
