// Allocator-model speed: replayed allocator events (malloc or free) per second on one core.
// Target (issue 8): >= 10 M events/s. The workload is synthetic and deterministic: a serving-like
// mix of live tensors (60% small 512 B..1 MiB, 30% 1..10 MiB, 10% 10..256 MiB), random frees,
// plus a steady decode loop where the same sizes come back every step (the common case).
#include <benchmark/benchmark.h>

#include <random>

#include "headroom/alloc_replay.h"

using namespace headroom::alloc;

namespace {

PreparedTrace churn_trace(size_t ops, size_t target_live, uint64_t seed) {
  PreparedTrace t;
  std::mt19937_64 rng(seed);
  std::vector<int32_t> live, free_slots;
  auto size = [&]() -> int64_t {
    const uint64_t r = rng() % 10;
    if (r < 6) return 512 * static_cast<int64_t>(1 + rng() % 2048);             // 512 B .. 1 MiB
    if (r < 9) return (int64_t{1} << 20) + static_cast<int64_t>(rng() % (9u << 20));  // 1 .. 10 MiB
    return (int64_t{10} << 20) + static_cast<int64_t>(rng() % (246u << 20));         // 10 .. 256 MiB
  };
  while (t.ops.size() < ops) {
    const bool do_alloc = live.size() < target_live / 2 || (live.size() < target_live * 2 && rng() % 2 == 0);
    if (do_alloc) {
      int32_t slot;
      if (!free_slots.empty()) slot = free_slots.back(), free_slots.pop_back();
      else slot = t.slots++;
      SimOp op;
      op.kind = SimOp::Alloc;
      op.slot = slot;
      op.size = size();
      op.event = static_cast<int64_t>(t.ops.size());
      t.ops.push_back(op);
      live.push_back(slot);
    } else {
      const size_t k = rng() % live.size();
      SimOp op;
      op.kind = SimOp::Free;
      op.slot = live[k];
      op.event = static_cast<int64_t>(t.ops.size());
      t.ops.push_back(op);
      free_slots.push_back(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
  }
  return t;
}

// A decode step: 40 temporaries of fixed sizes allocated and freed in LIFO order, repeated.
PreparedTrace decode_trace(size_t steps) {
  PreparedTrace t;
  const int64_t sizes[] = {4096, 65536, 1 << 20, 3 << 20, 12 << 20, 512, 8 << 20, 24 << 20};
  t.slots = 40;
  for (size_t s = 0; s < steps; ++s) {
    for (int32_t k = 0; k < 40; ++k) {
      SimOp op;
      op.kind = SimOp::Alloc;
      op.slot = k;
      op.size = sizes[k % 8] + 512 * (k / 8);
      t.ops.push_back(op);
    }
    for (int32_t k = 40; k-- > 0;) {
      SimOp op;
      op.kind = SimOp::Free;
      op.slot = k;
      t.ops.push_back(op);
    }
  }
  return t;
}

void run(benchmark::State& state, const PreparedTrace& trace, const char* conf_text) {
  const AllocConf conf = parse_alloc_conf(conf_text);
  int64_t peak = 0;
  for (auto _ : state) {
    ReplayRun r = run_prepared(trace, conf, DeviceSpec{}, 0);
    peak = r.peak_reserved;
    benchmark::DoNotOptimize(r.stats.num_mallocs);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(trace.ops.size()));
  state.counters["peak_reserved_GiB"] = static_cast<double>(peak) / static_cast<double>(int64_t{1} << 30);
}

void BM_ReplayChurn(benchmark::State& state) {
  static const PreparedTrace t = churn_trace(1 << 20, 400, 1);
  run(state, t, "");
}
void BM_ReplayChurnExpandable(benchmark::State& state) {
  static const PreparedTrace t = churn_trace(1 << 20, 400, 1);
  run(state, t, "expandable_segments:True");
}
void BM_ReplayChurnMaxSplit(benchmark::State& state) {
  static const PreparedTrace t = churn_trace(1 << 20, 400, 1);
  run(state, t, "max_split_size_mb:128,roundup_power2_divisions:[64:8,256:4,>:1]");
}
void BM_ReplayDecodeSteps(benchmark::State& state) {
  static const PreparedTrace t = decode_trace(10000);
  run(state, t, "");
}

}  // namespace

BENCHMARK(BM_ReplayChurn)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReplayChurnExpandable)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReplayChurnMaxSplit)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReplayDecodeSteps)->Unit(benchmark::kMillisecond);
