// Snapshot trace -> allocator calls -> simulated runs, plus what the recorded trace itself shows
// (reserved over time rebuilt from segment events, the trace's OOM, the top allocation sites).
#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <unordered_map>

#include "headroom/alloc_replay.h"
#include "headroom/error.h"

namespace headroom::alloc {

namespace {

bool is_internal_frame(const Frame& f) {
  const std::string& n = f.filename;
  if (n.empty() || n == "??") return true;
  auto ends = [&](std::string_view s) { return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0; };
  if (ends(".cpp") || ends(".h") || ends(".cu") || ends(".cuh") || ends(".cc")) return true;
  return n.find("/torch/") != std::string::npos || n.rfind("torch/", 0) == 0;
}

// The allocation site: the innermost frame outside PyTorch and C++ (frames are innermost first).
std::string site_of(const Snapshot& s, int32_t stack) {
  if (stack < 0 || static_cast<size_t>(stack) >= s.stacks.size() || s.stacks[static_cast<size_t>(stack)].empty())
    return "<no stack recorded>";
  const auto& frames = s.stacks[static_cast<size_t>(stack)];
  const Frame* pick = &frames.front();
  for (const auto& f : frames)
    if (!is_internal_frame(f)) { pick = &f; break; }
  return fmt::format("{} ({}:{})", pick->name, pick->filename, pick->line);
}

struct PoolRange {
  int64_t begin, end;
  PoolId pool;
};

}  // namespace

PreparedTrace prepare_trace(const Snapshot& snap, int device) {
  PreparedTrace out;
  static const std::vector<TraceEntry> kEmpty;
  const auto& tr = (device >= 0 && static_cast<size_t>(device) < snap.device_traces.size()) ? snap.device_traces[static_cast<size_t>(device)] : kEmpty;
  out.trace_events = static_cast<int64_t>(tr.size());

  // Private-pool membership of addresses, from the final segments (entries may carry pool_id).
  std::vector<PoolRange> ranges;
  for (const auto& seg : snap.segments)
    if (seg.device == device && !seg.pool.is_default()) ranges.push_back({seg.address, seg.address + seg.total_size, seg.pool});
  std::sort(ranges.begin(), ranges.end(), [](const PoolRange& a, const PoolRange& b) { return a.begin < b.begin; });
  auto pool_index = [&](PoolId id) -> int32_t {
    if (id.is_default()) return -1;
    for (size_t k = 0; k < out.pools.size(); ++k)
      if (out.pools[k] == id) return static_cast<int32_t>(k);
    out.pools.push_back(id);
    return static_cast<int32_t>(out.pools.size() - 1);
  };
  auto pool_of = [&](const TraceEntry& e) -> int32_t {
    if (e.pool) return pool_index(*e.pool);
    auto it = std::upper_bound(ranges.begin(), ranges.end(), e.addr, [](int64_t a, const PoolRange& r) { return a < r.begin; });
    if (it != ranges.begin() && e.addr < std::prev(it)->end) return pool_index(std::prev(it)->pool);
    return -1;
  };

  const bool has_completed = std::any_of(tr.begin(), tr.end(), [](const TraceEntry& e) { return e.action == TraceAction::FreeCompleted; });

  std::vector<int32_t> free_slots;
  auto new_slot = [&]() {
    if (!free_slots.empty()) {
      int32_t s = free_slots.back();
      free_slots.pop_back();
      return s;
    }
    return out.slots++;
  };
  struct Live {
    int32_t slot;
    bool pending;      // free_requested seen, waiting for free_completed
    size_t req_op;     // index of that FreeRequested op
  };
  std::unordered_map<int64_t, Live> live;
  struct Initial {
    int64_t addr, size, stream;
    int32_t pool, stack, slot;
  };
  std::vector<Initial> initial;
  std::vector<SimOp> ops;
  ops.reserve(tr.size());

  for (size_t i = 0; i < tr.size(); ++i) {
    const TraceEntry& e = tr[i];
    const auto ev = static_cast<int64_t>(i);
    switch (e.action) {
      case TraceAction::Alloc: {
        if (auto it = live.find(e.addr); it != live.end()) {
          // The trace lost this block's free (skip_actions or ring-buffer edge): free it here.
          SimOp f{it->second.pending ? SimOp::FreeCompleted : SimOp::Free, it->second.slot, -1, -1, 0, e.stream, ev};
          ops.push_back(f);
          free_slots.push_back(it->second.slot);
          live.erase(it);
        }
        SimOp a{SimOp::Alloc, new_slot(), pool_of(e), e.stack, e.size, e.stream, ev};
        live.emplace(e.addr, Live{a.slot, false, 0});
        ops.push_back(a);
        break;
      }
      case TraceAction::FreeRequested: {
        auto it = live.find(e.addr);
        if (it == live.end()) {  // allocated before recording began
          Initial in{e.addr, e.size, e.stream, pool_of(e), e.stack, new_slot()};
          initial.push_back(in);
          it = live.emplace(e.addr, Live{in.slot, false, 0}).first;
        }
        if (it->second.pending) break;
        if (!has_completed) {
          ops.push_back(SimOp{SimOp::Free, it->second.slot, -1, -1, 0, e.stream, ev});
          free_slots.push_back(it->second.slot);
          live.erase(it);
        } else {
          it->second.pending = true;
          it->second.req_op = ops.size();
          ops.push_back(SimOp{SimOp::FreeRequested, it->second.slot, -1, -1, 0, e.stream, ev});
        }
        break;
      }
      case TraceAction::FreeCompleted: {
        auto it = live.find(e.addr);
        if (it == live.end()) break;  // requested before the trace window and already counted
        if (!it->second.pending) {
          ops.push_back(SimOp{SimOp::Free, it->second.slot, -1, -1, 0, e.stream, ev});
        } else if (it->second.req_op + 1 == ops.size()) {
          ops.back().kind = SimOp::Free;  // completed at once: an ordinary free
        } else {
          ops.push_back(SimOp{SimOp::FreeCompleted, it->second.slot, -1, -1, 0, e.stream, ev});
        }
        free_slots.push_back(it->second.slot);
        live.erase(it);
        break;
      }
      case TraceAction::Oom: {
        // The request that failed: replay it (it never got an address, so it is never freed).
        SimOp a{SimOp::Alloc, new_slot(), e.pool ? pool_index(*e.pool) : -1, e.stack, e.size, e.stream, ev, true};
        ops.push_back(a);
        break;
      }
      default:
        break;
    }
  }
  // Blocks still active in the final segments that the trace never allocated lived throughout.
  for (const auto& seg : snap.segments) {
    if (seg.device != device) continue;
    for (const auto& b : seg.blocks) {
      if (b.state == "inactive" || live.count(b.address)) continue;
      bool freed_in_trace = false;
      for (const auto& in : initial)
        if (in.addr == b.address) freed_in_trace = true;
      if (freed_in_trace) continue;
      const int64_t sz = b.requested_size > 0 ? b.requested_size : b.size;
      initial.push_back({b.address, sz, seg.stream, seg.pool.is_default() ? -1 : pool_index(seg.pool), b.stack, out.slots++});
    }
  }
  std::sort(initial.begin(), initial.end(), [](const Initial& a, const Initial& b) { return a.addr < b.addr; });
  out.ops.reserve(initial.size() + ops.size());
  for (const auto& in : initial) {
    out.ops.push_back(SimOp{SimOp::Alloc, in.slot, in.pool, in.stack, in.size, in.stream, -1});
    out.initial_blocks += 1;
    out.initial_bytes += in.size;
  }
  out.ops.insert(out.ops.end(), ops.begin(), ops.end());
  return out;
}

ReplayRun run_prepared(const PreparedTrace& trace, const AllocConf& conf, const DeviceSpec& dev, size_t timeline_points) {
  ReplayRun run;
  run.conf_text = conf.text;
  CachingAllocator sim(conf, dev);
  std::vector<BlockId> ids(static_cast<size_t>(trace.slots), kNoBlock);
  const size_t n = trace.ops.size();
  const size_t every = timeline_points ? std::max<size_t>(1, n / timeline_points) : 0;
  const AllocStats& st = sim.stats();
  auto sample = [&](int64_t event) {
    run.timeline.push_back(FragSample{event, st.allocated, st.reserved, sim.largest_free_block()});
  };
  for (size_t k = 0; k < n; ++k) {
    const SimOp& op = trace.ops[k];
    BlockId& id = ids[static_cast<size_t>(op.slot)];
    switch (op.kind) {
      case SimOp::Alloc: {
        id = op.pool < 0 ? sim.malloc(op.size, op.stream) : sim.malloc_in_pool(op.size, op.stream, trace.pools[static_cast<size_t>(op.pool)]);
        if (id == kNoBlock) {
          const OomInfo& o = sim.last_oom();
          run.oom = ReplayOom{op.event, o.request_bytes, o.alloc_size, o.device_free, o.message};
          run.completed = false;
        } else if (st.reserved > run.peak_reserved) {
          run.peak_reserved = st.reserved;
          run.peak_reserved_event = op.event;
        }
        break;
      }
      case SimOp::Free: if (id != kNoBlock) sim.free(id), id = kNoBlock; break;
      case SimOp::FreeRequested: if (id != kNoBlock) sim.free_requested(id); break;
      case SimOp::FreeCompleted: if (id != kNoBlock) sim.free_completed(id), id = kNoBlock; break;
    }
    if (!run.completed) {
      run.ops_replayed = static_cast<int64_t>(k) + 1;
      break;
    }
    if (const int64_t u = st.reserved - st.allocated; u > run.max_unallocated) {
      run.max_unallocated = u;
      run.max_unallocated_event = op.event;
    }
    if (every && (k % every == 0 || k + 1 == n)) sample(op.event);
  }
  if (run.completed) run.ops_replayed = static_cast<int64_t>(n);
  if (every && !run.completed) sample(run.oom->event);
  run.peak_allocated = st.peak_allocated;
  run.peak_reserved = std::max(run.peak_reserved, st.peak_reserved);
  run.final_allocated = st.allocated;
  run.final_reserved = st.reserved;
  run.private_pool_reserved = sim.private_pool_reserved_bytes();
  run.stats = st;
  return run;
}

namespace {

RecordedTrace recorded_view(const Snapshot& snap, int device, const PreparedTrace& prep, size_t top_n) {
  RecordedTrace r;
  static const std::vector<TraceEntry> kEmpty;
  const auto& tr = (device >= 0 && static_cast<size_t>(device) < snap.device_traces.size()) ? snap.device_traces[static_cast<size_t>(device)] : kEmpty;
  r.events = static_cast<int64_t>(tr.size());

  // Reserved: final segments minus the trace's net segment changes gives the starting point.
  int64_t final_reserved = 0;
  bool any_segment = false;
  for (const auto& s : snap.segments)
    if (s.device == device) final_reserved += s.total_size, any_segment = true;
  int64_t net = 0;
  for (const auto& e : tr) {
    if (e.action == TraceAction::SegmentAlloc || e.action == TraceAction::SegmentMap) net += e.size;
    if (e.action == TraceAction::SegmentFree || e.action == TraceAction::SegmentUnmap) net -= e.size;
  }
  r.reserved_known = any_segment || !tr.empty();
  r.final_reserved = final_reserved;
  r.initial_reserved = std::max<int64_t>(0, final_reserved - net);
  int64_t reserved = r.initial_reserved;
  r.peak_reserved = reserved;
  for (size_t i = 0; i < tr.size(); ++i) {
    const auto& e = tr[i];
    if (e.action == TraceAction::SegmentAlloc || e.action == TraceAction::SegmentMap) reserved += e.size;
    if (e.action == TraceAction::SegmentFree || e.action == TraceAction::SegmentUnmap) reserved -= e.size;
    if (reserved > r.peak_reserved) r.peak_reserved = reserved, r.peak_reserved_event = static_cast<int64_t>(i);
    if (e.action == TraceAction::Oom && !r.oom) {
      r.oom = ReplayOom{static_cast<int64_t>(i), e.size, allocation_size(e.size, snap.settings), e.device_free, ""};
      // What PyTorch could reach at that moment: reserved after its cache release + device free.
      r.oom->message = fmt::format("request of {} (rounded), {} free on the device, {} reserved", format_size(e.size),
                                   format_size(e.device_free), format_size(reserved));
    }
  }

  // Requested bytes over the prepared ops; the live set at its peak grouped by site.
  std::vector<int64_t> slot_size(static_cast<size_t>(prep.slots), 0);
  std::vector<int32_t> slot_stack(static_cast<size_t>(prep.slots), -1);
  std::vector<uint8_t> slot_live(static_cast<size_t>(prep.slots), 0);
  int64_t cur = 0;
  size_t peak_k = 0;
  bool any = false;
  for (size_t k = 0; k < prep.ops.size(); ++k) {
    const SimOp& op = prep.ops[k];
    auto s = static_cast<size_t>(op.slot);
    if (op.oom_request) continue;
    if (op.kind == SimOp::Alloc) {
      slot_size[s] = op.size;
      cur += op.size;
    } else if (op.kind == SimOp::Free || op.kind == SimOp::FreeRequested) {
      cur -= slot_size[s];
    }
    if (!any || cur > r.peak_requested) r.peak_requested = cur, r.peak_requested_event = op.event, peak_k = k, any = true;
  }
  std::fill(slot_size.begin(), slot_size.end(), 0);
  for (size_t k = 0; any && k <= peak_k; ++k) {
    const SimOp& op = prep.ops[k];
    auto s = static_cast<size_t>(op.slot);
    if (op.oom_request) continue;
    if (op.kind == SimOp::Alloc) slot_size[s] = op.size, slot_stack[s] = op.stack, slot_live[s] = 1;
    else if (op.kind == SimOp::Free || op.kind == SimOp::FreeRequested) slot_live[s] = 0;
  }
  std::map<std::string, Site> by_site;
  for (size_t s = 0; s < slot_live.size(); ++s) {
    if (!slot_live[s]) continue;
    std::string key = site_of(snap, slot_stack[s]);
    Site& site = by_site[key];
    site.frame = key;
    site.bytes += slot_size[s];
    site.count += 1;
  }
  for (auto& [k, v] : by_site) r.top_sites.push_back(v);
  std::sort(r.top_sites.begin(), r.top_sites.end(), [](const Site& a, const Site& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.frame < b.frame; });
  if (r.top_sites.size() > top_n) r.top_sites.resize(top_n);
  return r;
}

}  // namespace

ReplayReport replay_snapshot(const Snapshot& snap, const ReplayOptions& opt) {
  ReplayReport rep;
  rep.device = opt.device;
  if (opt.device < 0) fail_input("--device", "value", "must be >= 0");
  if (!snap.device_traces.empty() && static_cast<size_t>(opt.device) >= snap.device_traces.size())
    fail_input("--device", std::to_string(opt.device), fmt::format("the snapshot has traces for devices 0..{}", snap.device_traces.size() - 1));
  rep.trace = prepare_trace(snap, opt.device);
  rep.recorded = recorded_view(snap, opt.device, rep.trace, opt.top_sites);
  if (rep.recorded.events == 0)
    rep.notes.push_back("the snapshot has no allocation trace for this device (recorded with _record_memory_history(enabled=\"all\")?): "
                        "only the blocks alive at the snapshot are replayed");
  if (rep.trace.initial_blocks > 0)
    rep.notes.push_back(fmt::format("{} blocks ({}) were alive before recording began; they are placed first, in address order "
                                    "(their real order is unknown), and cached free memory at that time is not known",
                                    rep.trace.initial_blocks, format_size(rep.trace.initial_bytes)));

  // The budget the allocator had: from the trace's own OOM, else the device size given.
  DeviceSpec dev;
  dev.index = opt.device;
  if (rep.recorded.oom) {
    int64_t reserved_at_oom = rep.recorded.initial_reserved;
    const auto& tr = snap.device_traces[static_cast<size_t>(opt.device)];
    for (int64_t i = 0; i < rep.recorded.oom->event; ++i) {
      const auto& e = tr[static_cast<size_t>(i)];
      if (e.action == TraceAction::SegmentAlloc || e.action == TraceAction::SegmentMap) reserved_at_oom += e.size;
      if (e.action == TraceAction::SegmentFree || e.action == TraceAction::SegmentUnmap) reserved_at_oom -= e.size;
    }
    rep.budget = reserved_at_oom + rep.recorded.oom->device_free;
    rep.budget_source = fmt::format("the trace's OOM: {} reserved + {} free on the device", format_size(reserved_at_oom),
                                    format_size(rep.recorded.oom->device_free));
    if (opt.total_memory > 0) {
      dev.total = opt.total_memory;
      dev.non_pytorch = std::max<int64_t>(0, opt.total_memory - rep.budget);
    } else {
      dev.total = rep.budget;
      rep.notes.push_back("device capacity not given (--gpu / --gpu-memory): 'total capacity' in the messages is the memory "
                          "PyTorch could reach at the recorded OOM");
    }
  } else if (opt.total_memory > 0) {
    dev.total = opt.total_memory;
    dev.non_pytorch = opt.non_pytorch.value_or(0);
    rep.budget = dev.total - dev.non_pytorch;
    rep.budget_source = opt.non_pytorch ? "--gpu-memory minus --non-pytorch-memory"
                                        : "--gpu-memory / --gpu with no non-PyTorch memory (an assumption: pass --non-pytorch-memory)";
  } else {
    rep.budget = 0;
    rep.budget_source = "unlimited (no OOM in the trace and no --gpu / --gpu-memory): peaks only";
  }
  rep.device_spec = dev;

  const AllocConf primary = opt.conf ? *opt.conf : snap.settings;
  rep.primary = run_prepared(rep.trace, primary, dev, opt.timeline_points);
  if (opt.compare) rep.compare = run_prepared(rep.trace, *opt.compare, dev, opt.timeline_points);
  if (primary.garbage_collection_threshold > 0 && !(primary.per_process_memory_fraction < 1.0))
    rep.notes.push_back("garbage_collection_threshold only acts with a per-process memory fraction (as in PyTorch): no effect here");
  if (primary.backend == "cudaMallocAsync" || (opt.compare && opt.compare->backend == "cudaMallocAsync"))
    rep.notes.push_back("backend:cudaMallocAsync is not modelled: the native allocator's rules were replayed");
  return rep;
}

}  // namespace headroom::alloc
