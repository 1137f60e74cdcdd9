// Turns the pickled snapshot dict into alloc::Snapshot, checking every field's type.
// Keys as written by pytorch/pytorch torch/csrc/cuda/Module.cpp (THCPModule_memorySnapshot):
// segments[{device,address,total_size,allocated_size,active_size,requested_size,stream,
// segment_type,segment_pool_id,is_expandable,frames,blocks[{address,size,requested_size,state,
// frames}]}], device_traces[[{action,addr|device_free,size,stream,time_us,frames}]],
// allocator_settings{PYTORCH_CUDA_ALLOC_CONF,max_split_size,garbage_collection_threshold,
// expandable_segments,roundup_power2_divisions}.
#include <fstream>
#include <fmt/format.h>
#include <unordered_map>

#include "headroom/alloc_snapshot.h"
#include "headroom/error.h"
#include "headroom/pickle_reader.h"

namespace headroom::alloc {

std::string_view action_name(TraceAction a) {
  switch (a) {
    case TraceAction::Alloc: return "alloc";
    case TraceAction::FreeRequested: return "free_requested";
    case TraceAction::FreeCompleted: return "free_completed";
    case TraceAction::SegmentAlloc: return "segment_alloc";
    case TraceAction::SegmentFree: return "segment_free";
    case TraceAction::SegmentMap: return "segment_map";
    case TraceAction::SegmentUnmap: return "segment_unmap";
    case TraceAction::Snapshot: return "snapshot";
    case TraceAction::Oom: return "oom";
    case TraceAction::Other: return "other";
  }
  return "other";
}

namespace {

// Sizes beyond any device (16 TiB) are rejected: they can only come from a corrupt file.
constexpr int64_t kMaxBytes = int64_t{1} << 44;

using pickle::Kind;
using pickle::Node;

class Converter {
 public:
  Converter(const pickle::Document& d, std::string_view source) : doc_(d), source_(source), budget_(d.node_count() + 4096) {}

  // Every segment, block and trace entry of a real snapshot is its own dict in the pickle; the
  // memo lets one dict stand in many places, so records are counted against the values the
  // pickle holds and a file that would multiply them (a "pickle bomb") is refused (issue 31).
  void record(const std::string& field) {
    if (++records_ > budget_)
      fail(field, fmt::format("the pickle reuses its values to make more than {} records from {} values: a pickle bomb, "
                              "not a memory snapshot", budget_, doc_.node_count()));
  }

  [[noreturn]] void fail(const std::string& field, std::string_view why) const { fail_input(source_, field, why); }

  const Node& child(const Node& n, size_t k) const { return doc_.node(n.items[k]); }

  int64_t as_int(const Node* n, const std::string& field, bool required = true, int64_t fallback = 0) const {
    if (!n || n->kind == Kind::None) {
      if (required) fail(field, "missing");
      return fallback;
    }
    if (n->kind != Kind::Int && n->kind != Kind::Bool) fail(field, "expected an integer");
    return n->i;
  }
  int64_t as_size(const Node* n, const std::string& field, bool required = true) const {
    const int64_t v = as_int(n, field, required);
    if (v < 0 || v > kMaxBytes) fail(field, fmt::format("size {} is out of range (0 .. 16 TiB)", v));
    return v;
  }
  std::string as_str(const Node* n, const std::string& field, bool required = true) const {
    if (!n || n->kind == Kind::None) {
      if (required) fail(field, "missing");
      return {};
    }
    if (n->kind != Kind::Str) fail(field, "expected a string");
    return n->s;
  }
  const Node& as_list(const Node* n, const std::string& field) const {
    if (!n) fail(field, "missing");
    if (n->kind != Kind::List && n->kind != Kind::Tuple) fail(field, "expected a list");
    return *n;
  }
  const Node& as_dict(const Node& n, const std::string& field) const {
    if (n.kind != Kind::Dict) fail(field, "expected a dict");
    return n;
  }

  // Frames lists are shared through the pickle memo; intern them by node id.
  int32_t stack(const Node& owner, const std::string& field) {
    uint32_t id = 0;
    const Node* fr = nullptr;
    for (size_t k = 0; k + 1 < owner.items.size(); k += 2) {
      const Node& kn = child(owner, k);
      if (kn.kind == Kind::Str && kn.s == "frames") {
        id = owner.items[k + 1];
        fr = &doc_.node(id);
      }
    }
    if (!fr || fr->kind == Kind::None) return -1;
    if (fr->kind != Kind::List && fr->kind != Kind::Tuple) fail(field + ".frames", "expected a list");
    if (fr->items.empty()) return -1;
    auto it = interned_.find(id);
    if (it != interned_.end()) return it->second;
    std::vector<Frame> frames;
    frames.reserve(fr->items.size());
    for (size_t k = 0; k < fr->items.size(); ++k) {
      const std::string f = fmt::format("{}.frames[{}]", field, k);
      const Node& d = as_dict(child(*fr, k), f);
      Frame x;
      x.filename = as_str(doc_.get(d, "filename"), f + ".filename", false);
      x.line = as_int(doc_.get(d, "line"), f + ".line", false);
      x.name = as_str(doc_.get(d, "name"), f + ".name", false);
      frames.push_back(std::move(x));
    }
    out_.stacks.push_back(std::move(frames));
    const auto idx = static_cast<int32_t>(out_.stacks.size() - 1);
    interned_.emplace(id, idx);
    return idx;
  }

  std::optional<PoolId> pool_id(const Node* n, const std::string& field) const {
    if (!n || n->kind == Kind::None) return std::nullopt;
    if ((n->kind != Kind::Tuple && n->kind != Kind::List) || n->items.size() != 2) fail(field, "expected a pair of integers");
    return PoolId{as_int(&child(*n, 0), field + "[0]"), as_int(&child(*n, 1), field + "[1]")};
  }

  void segments(const Node& list) {
    for (size_t s = 0; s < list.items.size(); ++s) {
      const std::string f = fmt::format("segments[{}]", s);
      const Node& d = as_dict(child(list, s), f);
      record(f);
      SnapshotSegment seg;
      seg.device = as_int(doc_.get(d, "device"), f + ".device", false);
      seg.address = as_int(doc_.get(d, "address"), f + ".address");
      seg.total_size = as_size(doc_.get(d, "total_size"), f + ".total_size");
      seg.allocated_size = as_size(doc_.get(d, "allocated_size"), f + ".allocated_size", false);
      seg.active_size = as_size(doc_.get(d, "active_size"), f + ".active_size", false);
      seg.requested_size = as_size(doc_.get(d, "requested_size"), f + ".requested_size", false);
      seg.stream = as_int(doc_.get(d, "stream"), f + ".stream", false);
      seg.segment_type = as_str(doc_.get(d, "segment_type"), f + ".segment_type", false);
      if (auto p = pool_id(doc_.get(d, "segment_pool_id"), f + ".segment_pool_id")) seg.pool = *p;
      seg.is_expandable = as_int(doc_.get(d, "is_expandable"), f + ".is_expandable", false) != 0;
      if (const Node* bl = doc_.get(d, "blocks")) {
        const Node& blocks = as_list(bl, f + ".blocks");
        for (size_t b = 0; b < blocks.items.size(); ++b) {
          const std::string fb = fmt::format("{}.blocks[{}]", f, b);
          const Node& bd = as_dict(child(blocks, b), fb);
          record(fb);
          SnapshotBlock blk;
          blk.size = as_size(doc_.get(bd, "size"), fb + ".size");
          blk.address = as_int(doc_.get(bd, "address"), fb + ".address", false, -1);
          blk.requested_size = as_size(doc_.get(bd, "requested_size"), fb + ".requested_size", false);
          blk.state = as_str(doc_.get(bd, "state"), fb + ".state");
          if (blk.state == "active_awaiting_free") blk.state = "active_pending_free";
          if (blk.state != "active_allocated" && blk.state != "active_pending_free" && blk.state != "inactive")
            fail(fb + ".state", fmt::format("unknown block state '{}'", blk.state));
          blk.stack = stack(bd, fb);
          seg.blocks.push_back(std::move(blk));
        }
        // Older snapshots omit block addresses: they tile the segment in order.
        int64_t a = seg.address;
        for (auto& blk : seg.blocks) {
          if (blk.address < 0) blk.address = a;
          a = blk.address + blk.size;
        }
      }
      out_.segments.push_back(std::move(seg));
    }
  }

  static TraceAction parse_action(std::string_view a) {
    if (a == "alloc") return TraceAction::Alloc;
    if (a == "free_requested") return TraceAction::FreeRequested;
    if (a == "free_completed") return TraceAction::FreeCompleted;
    if (a == "segment_alloc") return TraceAction::SegmentAlloc;
    if (a == "segment_free") return TraceAction::SegmentFree;
    if (a == "segment_map") return TraceAction::SegmentMap;
    if (a == "segment_unmap") return TraceAction::SegmentUnmap;
    if (a == "snapshot") return TraceAction::Snapshot;
    if (a == "oom") return TraceAction::Oom;
    return TraceAction::Other;  // e.g. "annotate" (2026 main): carries no memory change
  }

  void traces(const Node& list) {
    for (size_t dv = 0; dv < list.items.size(); ++dv) {
      const std::string fd = fmt::format("device_traces[{}]", dv);
      const Node& entries = as_list(&child(list, dv), fd);
      std::vector<TraceEntry> out;
      out.reserve(entries.items.size());
      for (size_t e = 0; e < entries.items.size(); ++e) {
        const std::string f = fmt::format("{}[{}]", fd, e);
        const Node& d = as_dict(child(entries, e), f);
        record(f);
        TraceEntry t;
        t.action = parse_action(as_str(doc_.get(d, "action"), f + ".action"));
        if (t.action == TraceAction::Other) continue;
        if (t.action == TraceAction::Oom) {
          t.device_free = as_size(doc_.get(d, "device_free"), f + ".device_free", false);
          t.addr = as_int(doc_.get(d, "addr"), f + ".addr", false);
        } else {
          t.addr = as_int(doc_.get(d, "addr"), f + ".addr");
        }
        t.size = as_size(doc_.get(d, "size"), f + ".size");
        t.stream = as_int(doc_.get(d, "stream"), f + ".stream", false);
        t.time_us = as_int(doc_.get(d, "time_us"), f + ".time_us", false);
        t.pool = pool_id(doc_.get(d, "pool_id"), f + ".pool_id");
        t.stack = stack(d, f);
        out.push_back(t);
      }
      out_.device_traces.push_back(std::move(out));
    }
  }

  void settings(const Node& d) {
    out_.has_settings = true;
    AllocConf c;
    const Node* raw = doc_.get(d, "PYTORCH_CUDA_ALLOC_CONF");
    if (raw && raw->kind == Kind::Str && !raw->s.empty()) c = parse_alloc_conf(raw->s, std::string(source_) + " allocator_settings");
    if (const Node* n = doc_.get(d, "max_split_size"); n && n->kind == Kind::Int)
      c.max_split_size = (n->big || n->i < 0 || n->i >= kNoLimit) ? kNoLimit : n->i;  // torch 2.11 writes -1 for unlimited
    if (const Node* n = doc_.get(d, "garbage_collection_threshold"); n && (n->kind == Kind::Float || n->kind == Kind::Int))
      c.garbage_collection_threshold = n->kind == Kind::Float ? n->f : static_cast<double>(n->i);
    if (const Node* n = doc_.get(d, "expandable_segments"); n && (n->kind == Kind::Bool || n->kind == Kind::Int))
      c.expandable_segments = n->i != 0;
    if (const Node* n = doc_.get(d, "roundup_power2_divisions"); n && n->kind == Kind::Dict) {
      // {"1": d, "2": d, ..., "32768": d}: interval start in MB -> divisions.
      for (size_t k = 0; k + 1 < n->items.size(); k += 2) {
        const Node& key = child(*n, k);
        const Node& val = child(*n, k + 1);
        if (key.kind != Kind::Str || val.kind != Kind::Int) continue;
        int64_t mb = 0;
        for (char ch : key.s) mb = (ch >= '0' && ch <= '9' && mb < (int64_t{1} << 40)) ? mb * 10 + (ch - '0') : mb;
        int idx = 0;
        while ((int64_t{1} << (idx + 1)) <= mb && idx < kRoundUpPowerOfTwoIntervals - 1) ++idx;
        if (mb >= 1) c.roundup_power2_divisions[static_cast<size_t>(idx)] = val.i;
      }
    }
    out_.settings = std::move(c);
  }

  Snapshot run() {
    out_.protocol = doc_.protocol();
    const Node& root = doc_.root();
    if (root.kind == Kind::List) {  // torch.cuda.memory_snapshot(): the segments list only
      segments(root);
      return std::move(out_);
    }
    if (root.kind != Kind::Dict) fail("snapshot", "expected a dict with 'segments' and 'device_traces' (or a list of segments)");
    if (const Node* s = doc_.get(root, "segments")) segments(as_list(s, "segments"));
    else fail("segments", "missing (is this a torch.cuda.memory._dump_snapshot file?)");
    if (const Node* t = doc_.get(root, "device_traces")) traces(as_list(t, "device_traces"));
    if (const Node* a = doc_.get(root, "allocator_settings"); a && a->kind == Kind::Dict) settings(*a);
    return std::move(out_);
  }

 private:
  const pickle::Document& doc_;
  std::string_view source_;
  Snapshot out_;
  std::unordered_map<uint32_t, int32_t> interned_;
  const size_t budget_;
  size_t records_ = 0;
};

}  // namespace

Snapshot read_snapshot(std::string_view bytes, std::string_view source) {
  pickle::Document doc = pickle::parse(bytes, source);
  return Converter(doc, source).run();
}

Snapshot load_snapshot_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) fail_input(path, "file", "cannot open");
  const std::streamoff n = f.tellg();
  if (n < 0) fail_input(path, "file", "cannot read");
  if (static_cast<uint64_t>(n) > pickle::Limits{}.max_input) fail_input(path, "file", "larger than the 16 GiB limit");
  std::string bytes(static_cast<size_t>(n), '\0');
  f.seekg(0);
  f.read(bytes.data(), n);
  if (!f) fail_input(path, "file", "read failed");
  return read_snapshot(bytes, path);
}

}  // namespace headroom::alloc
