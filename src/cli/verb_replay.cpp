// `headroom replay SNAPSHOT.pickle`: replays a PyTorch memory snapshot's allocation trace through
// the caching-allocator model under the recorded (or given) PYTORCH_CUDA_ALLOC_CONF and under a
// second configuration, side by side: peaks, fragmentation over time, the OOM with PyTorch's
// message, and the allocation sites that held the memory.
#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/verbs.h"
#include "headroom/alloc_replay.h"
#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/units.h"

namespace headroom {

namespace {

using namespace alloc;
using json = nlohmann::ordered_json;

constexpr std::string_view kUsage =
    "usage: headroom replay SNAPSHOT.pickle [--alloc-conf STR] [--compare-conf STR|none] [--device N]\n"
    "                       [--gpu NAME | --gpu-memory BYTES] [--non-pytorch-memory BYTES] [--top N] [--json]\n\n"
    "Replays a torch.cuda.memory._dump_snapshot() file through a model of PyTorch's caching allocator.\n"
    "  --alloc-conf    PYTORCH_CUDA_ALLOC_CONF for the replay (default: the snapshot's allocator_settings)\n"
    "  --compare-conf  a second configuration replayed side by side (default: the first one plus\n"
    "                  expandable_segments:True; 'none' turns the comparison off)\n"
    "  --device        which device's trace (default 0)\n"
    "  --gpu, --gpu-memory  device capacity, for the OOM message and when the trace has no OOM\n"
    "  --non-pytorch-memory memory used outside the allocator (context, NCCL), with --gpu/--gpu-memory\n";

json oom_json(const std::optional<ReplayOom>& o) {
  if (!o) return nullptr;
  return json{{"event", o->event}, {"request_bytes", o->request_bytes}, {"alloc_size_bytes", o->alloc_size},
              {"device_free_bytes", o->device_free}, {"message", o->message}};
}

json run_json(const ReplayRun& r) {
  json tl = json::array();
  for (const auto& s : r.timeline)
    tl.push_back({{"event", s.event}, {"allocated_bytes", s.allocated}, {"reserved_bytes", s.reserved}, {"largest_free_bytes", s.largest_free}});
  return json{{"alloc_conf", r.conf_text},
              {"ops_replayed", r.ops_replayed},
              {"completed", r.completed},
              {"peak_allocated_bytes", r.peak_allocated},
              {"peak_reserved_bytes", r.peak_reserved},
              {"peak_reserved_event", r.peak_reserved_event},
              {"max_unallocated_bytes", r.max_unallocated},
              {"max_unallocated_event", r.max_unallocated_event},
              {"final_allocated_bytes", r.final_allocated},
              {"final_reserved_bytes", r.final_reserved},
              {"private_pool_reserved_bytes", r.private_pool_reserved},
              {"num_alloc_retries", r.stats.num_alloc_retries},
              {"num_device_alloc", r.stats.num_device_alloc},
              {"oom", oom_json(r.oom)},
              {"timeline", tl}};
}

std::string conf_label(const std::string& text) { return text.empty() ? "(defaults)" : text; }

void print_chart(std::ostream& out, const ReplayRun& r, int64_t budget) {
  if (r.timeline.empty()) return;
  int64_t top = budget > 0 ? budget : 0;
  for (const auto& s : r.timeline) top = std::max(top, s.reserved);
  if (top <= 0) return;
  constexpr int kWidth = 50;
  out << fmt::format("\nmemory over the trace under {}: '#' allocated, '.' reserved but unallocated{}\n", conf_label(r.conf_text),
                     budget > 0 ? ", '|' budget" : "");
  out << fmt::format("  {:>8}  {:>10} {:>10} {:>10}\n", "event", "allocated", "reserved", "max free");
  const size_t step = std::max<size_t>(1, r.timeline.size() / 24);
  for (size_t k = 0; k < r.timeline.size(); k += step) {
    const auto& s = r.timeline[k];
    const int a = static_cast<int>(static_cast<double>(s.allocated) * kWidth / static_cast<double>(top));
    const int rv = static_cast<int>(static_cast<double>(s.reserved) * kWidth / static_cast<double>(top));
    // '#' allocated, '.' reserved on top, ' ' up to the budget, '|' at the budget's column.
    const int filled = std::max(a, rv);
    const int b = budget > 0 ? static_cast<int>(static_cast<double>(budget) * kWidth / static_cast<double>(top)) : -1;
    std::string bar;
    for (int i = 0; i <= std::max(filled, b); ++i) {
      if (i == b) bar += '|';
      if (i < a) bar += '#';
      else if (i < filled) bar += '.';
      else if (i < b) bar += ' ';
    }
    out << fmt::format("  {:>8}  {:>10} {:>10} {:>10}  {}\n", s.event, format_size(s.allocated), format_size(s.reserved),
                       format_size(s.largest_free), bar);
  }
}

std::string oom_cell(const ReplayRun& r) {
  if (!r.oom) return "none";
  return fmt::format("event {} ({})", r.oom->event, format_size(r.oom->alloc_size));
}

void print_text(std::ostream& out, const std::string& path, const Snapshot& snap, const ReplayReport& rep) {
  const auto& tr = rep.trace;
  out << fmt::format("headroom replay: {} (pickle protocol {}), device {}\n", path, snap.protocol, rep.device);
  out << fmt::format("  trace: {} events -> {} allocator calls; {} blocks ({}) alive before recording began\n", tr.trace_events,
                     tr.ops.size(), tr.initial_blocks, format_size(tr.initial_bytes));
  out << fmt::format("  budget: {} ({})\n", rep.budget > 0 ? format_size(rep.budget) : std::string("unlimited"), rep.budget_source);

  const auto& rec = rep.recorded;
  out << "\nrecorded (what the trace shows)\n";
  out << fmt::format("  reserved: {} at the start, peak {} (event {}), {} at the snapshot\n", format_size(rec.initial_reserved),
                     format_size(rec.peak_reserved), rec.peak_reserved_event, format_size(rec.final_reserved));
  out << fmt::format("  requested by tensors: peak {} (event {})\n", format_size(rec.peak_requested), rec.peak_requested_event);
  if (rec.oom) out << fmt::format("  OOM at event {}: {}\n", rec.oom->event, rec.oom->message);

  const ReplayRun& a = rep.primary;
  const ReplayRun* b = rep.compare ? &*rep.compare : nullptr;
  out << "\nreplayed through the allocator model\n";
  auto row = [&](std::string_view what, const std::string& x, const std::string& y) {
    out << fmt::format("  {:<28} {:<34} {}\n", what, x, b ? y : "");
  };
  row("configuration", conf_label(a.conf_text), b ? conf_label(b->conf_text) : "");
  row("peak allocated", format_size(a.peak_allocated), b ? format_size(b->peak_allocated) : "");
  row("peak reserved", format_size(a.peak_reserved), b ? format_size(b->peak_reserved) : "");
  row("max reserved - allocated", fmt::format("{} (event {})", format_size(a.max_unallocated), a.max_unallocated_event),
      b ? fmt::format("{} (event {})", format_size(b->max_unallocated), b->max_unallocated_event) : "");
  row("reserved at the end", format_size(a.final_reserved), b ? format_size(b->final_reserved) : "");
  row("graph pools at the end", format_size(a.private_pool_reserved), b ? format_size(b->private_pool_reserved) : "");
  row("cache-flush retries", std::to_string(a.stats.num_alloc_retries), b ? std::to_string(b->stats.num_alloc_retries) : "");
  row("OOM", oom_cell(a), b ? oom_cell(*b) : "");

  if (a.oom) out << fmt::format("\nPyTorch's message under {}:\n  torch.OutOfMemoryError: {}\n", conf_label(a.conf_text), a.oom->message);
  if (b && b->oom) out << fmt::format("\nPyTorch's message under {}:\n  torch.OutOfMemoryError: {}\n", conf_label(b->conf_text), b->oom->message);
  if (b) {
    out << "\nverdict: ";
    if (a.oom && !b->oom)
      out << fmt::format("with {} the OOM would not have happened (peak reserved {} within {})\n", conf_label(b->conf_text),
                         format_size(b->peak_reserved), rep.budget > 0 ? format_size(rep.budget) : "an unlimited budget");
    else if (a.oom && b->oom)
      out << fmt::format("the OOM happens under both configurations: the memory is really in use, not fragmentation\n");
    else if (!a.oom && b->oom)
      out << fmt::format("{} would OOM at event {} where {} does not\n", conf_label(b->conf_text), b->oom->event, conf_label(a.conf_text));
    else
      out << fmt::format("no OOM under either configuration; peak reserved {} vs {}\n", format_size(a.peak_reserved), format_size(b->peak_reserved));
  }
  print_chart(out, a, rep.budget);
  if (!rec.top_sites.empty()) {
    out << "\ntop allocation sites at the recorded peak (bytes requested, live blocks)\n";
    for (size_t k = 0; k < rec.top_sites.size(); ++k)
      out << fmt::format("  {:>2}. {:>12} {:>6}  {}\n", k + 1, format_size(rec.top_sites[k].bytes), rec.top_sites[k].count, rec.top_sites[k].frame);
  }
  for (const auto& n : rep.notes) out << "note: " << n << "\n";
}

}  // namespace

int verb_replay(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << kUsage;
    return kExitOk;
  }
  args.reject_unknown({"--alloc-conf", "--compare-conf", "--device", "--json", "--gpu", "--gpu-memory", "--non-pytorch-memory", "--top"}, "replay");
  if (args.positionals().size() != 1) fail_input("command line", "replay", "expects exactly one SNAPSHOT.pickle (see 'headroom replay --help')");
  const std::string path = args.positionals()[0];

  ReplayOptions opt;
  opt.device = static_cast<int>(args.get_int("--device", 0, 4096).value_or(0));
  opt.top_sites = static_cast<size_t>(args.get_int("--top", 0, 1000).value_or(10));
  if (auto g = args.get("--gpu")) opt.total_memory = require_gpu(*g).capacity_bytes;
  if (auto m = args.get("--gpu-memory")) opt.total_memory = parse_bytes(*m, "command line", "--gpu-memory");
  if (auto m = args.get("--non-pytorch-memory")) {
    if (opt.total_memory <= 0) fail_input("command line", "--non-pytorch-memory", "needs --gpu or --gpu-memory");
    opt.non_pytorch = parse_bytes(*m, "command line", "--non-pytorch-memory");
    if (*opt.non_pytorch < 0 || *opt.non_pytorch >= opt.total_memory) fail_input("command line", "--non-pytorch-memory", "must be below the device memory");
  }
  std::optional<AllocConf> primary;
  if (auto c = args.get("--alloc-conf")) primary = parse_alloc_conf(*c, "--alloc-conf");

  const Snapshot snap = load_snapshot_file(path);
  const AllocConf base = primary ? *primary : snap.settings;
  opt.conf = base;
  if (auto c = args.get("--compare-conf")) {
    if (*c != "none") opt.compare = parse_alloc_conf(*c, "--compare-conf");
  } else if (!base.expandable_segments) {
    std::string text = base.text.empty() ? "expandable_segments:True" : base.text + ",expandable_segments:True";
    opt.compare = parse_alloc_conf(text, "--compare-conf");
  }

  const ReplayReport rep = replay_snapshot(snap, opt);
  if (args.has("--json")) {
    json sites = json::array();
    for (const auto& s : rep.recorded.top_sites) sites.push_back({{"frame", s.frame}, {"bytes", s.bytes}, {"count", s.count}});
    json j = run_json(rep.primary);
    json doc{{"snapshot", path},
             {"device", rep.device},
             {"pickle_protocol", snap.protocol},
             {"events", rep.trace.trace_events},
             {"peak_allocated_bytes", rep.primary.peak_allocated},
             {"peak_reserved_bytes", rep.primary.peak_reserved},
             {"oom", oom_json(rep.primary.oom)},
             {"budget_bytes", rep.budget},
             {"budget_source", rep.budget_source},
             {"initial_blocks", rep.trace.initial_blocks},
             {"initial_bytes", rep.trace.initial_bytes},
             {"replay", j},
             {"recorded",
              {{"events", rep.recorded.events},
               {"initial_reserved_bytes", rep.recorded.initial_reserved},
               {"peak_reserved_bytes", rep.recorded.peak_reserved},
               {"peak_reserved_event", rep.recorded.peak_reserved_event},
               {"final_reserved_bytes", rep.recorded.final_reserved},
               {"peak_requested_bytes", rep.recorded.peak_requested},
               {"peak_requested_event", rep.recorded.peak_requested_event},
               {"oom", oom_json(rep.recorded.oom)}}},
             {"top_sites", sites}};
    if (rep.compare) {
      json c = run_json(*rep.compare);
      c["would_oom"] = rep.compare->oom.has_value();
      doc["compare"] = c;
    }
    doc["notes"] = rep.notes;
    out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  print_text(out, path, snap, rep);
  return kExitOk;
}

}  // namespace headroom
