// Figures measured on a real NVIDIA H200 (torch 2.11.0+cu130, driver 580.159.04, 2026-11-30) by
// tools/gpu_probe/probe.py; the raw output is tests/data/alloc/h200/results.jsonl and the two
// snapshot pickles beside it were written there by torch.cuda.memory._dump_snapshot. These tests
// hold headroom's allocator model and log reader to what PyTorch really did.
#include <gtest/gtest.h>

#include <string>

#include "headroom/alloc.h"
#include "headroom/alloc_replay.h"
#include "headroom/alloc_snapshot.h"
#include "headroom/logscan.h"

using namespace headroom;
using namespace headroom::alloc;

namespace {
constexpr int64_t MiB = 1 << 20;
const std::string kDir = std::string(HEADROOM_TEST_DATA) + "/alloc/h200/";
}  // namespace

// results.jsonl, section "alloc": memory_stats() after the serving-like pattern of probe.py
// section_alloc: reserved_bytes.all.peak = 11758 MiB (default) and 11630 MiB (expandable).
TEST(H200Measured, ReplayOfRealSnapshotReproducesPeakReserved) {
  Snapshot snap = load_snapshot_file(kDir + "snapshot_default.pickle");
  ReplayOptions opt;
  opt.compare = parse_alloc_conf("expandable_segments:True", "test");
  ReplayReport rep = replay_snapshot(snap, opt);
  // torch 2.11 writes max_split_size = -1 for "unlimited"; read as a limit it split every block.
  EXPECT_EQ(rep.primary.peak_reserved, 11758 * MiB);
  EXPECT_EQ(rep.recorded.peak_reserved, 11758 * MiB);
  ASSERT_TRUE(rep.compare.has_value());
  EXPECT_EQ(rep.compare->peak_reserved, 11630 * MiB);  // the expandable run on the GPU

  Snapshot exp = load_snapshot_file(kDir + "snapshot_expandable.pickle");
  opt.compare.reset();
  ReplayReport rep2 = replay_snapshot(exp, opt);
  EXPECT_TRUE(rep2.primary.conf_text.find("expandable_segments") != std::string::npos);
  EXPECT_EQ(rep2.primary.peak_reserved, 11630 * MiB);
  // allocated_bytes.all.peak: 11492.0 MiB and 11491.00048828125 MiB in the two GPU runs.
  EXPECT_EQ(rep.primary.peak_allocated, 11492 * MiB);
  EXPECT_EQ(rep2.primary.peak_allocated, 12049187328);
}

// results.jsonl, section "rounding": reserved growth of one fresh tensor of each size.
TEST(H200Measured, SegmentSizesMatchPyTorch) {
  const AllocConf conf = parse_alloc_conf("", "test");
  struct Row { int64_t request, reserved_growth, allocated; };
  const Row rows[] = {
      {1, 2097152, 512},           {512, 2097152, 512},          {513, 2097152, 1024},
      {1048575, 2097152, 1048576}, {1048576, 2097152, 1048576},  {1048577, 20971520, 1049088},
      {2097153, 20971520, 2097664}, {10485760, 10485760, 10485760}, {10485761, 12582912, 10486272},
      {12582913, 14680064, 12583424}, {20971521, 23068672, 20972032}, {104857601, 106954752, 104858112},
      {1073741825, 1075838976, 1073742336},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.request);
    EXPECT_EQ(round_size(r.request, conf), r.allocated);
    EXPECT_EQ(allocation_size(round_size(r.request, conf), conf), r.reserved_growth);
    CachingAllocator a(conf, DeviceSpec{});
    ASSERT_NE(a.malloc(r.request), kNoBlock);
    EXPECT_EQ(a.stats().reserved, r.reserved_growth);
  }
}

// results.jsonl, section "oom": torch 2.11's message, with "0 bytes" and a MiB free figure.
TEST(H200Measured, ReadsTorch211OomMessage) {
  const std::string text =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.80 GiB "
      "of which 1023.12 MiB is free. Including non-PyTorch memory, this process has 138.79 GiB memory in use. Of the "
      "allocated memory 138.20 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If "
      "reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
      "fragmentation.  See documentation for Memory Management  "
      "(https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)\n";
  LogScan s = scan_log_text(text, "h200.log");
  ASSERT_EQ(s.ooms.size(), 1u);
  const LogOom& o = s.ooms[0];
  EXPECT_EQ(o.request, 2048 * MiB);
  EXPECT_NEAR(static_cast<double>(o.total), 139.80 * 1024 * MiB, 0.006 * 1024 * MiB);
  EXPECT_NEAR(static_cast<double>(o.free), 1023.12 * MiB, 0.006 * MiB);
  EXPECT_NEAR(static_cast<double>(o.process_in_use), 138.79 * 1024 * MiB, 0.006 * 1024 * MiB);
  EXPECT_NEAR(static_cast<double>(o.allocated), 138.20 * 1024 * MiB, 0.006 * 1024 * MiB);
  EXPECT_EQ(o.reserved_unallocated, 0);
}
