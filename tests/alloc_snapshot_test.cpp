// Snapshot pickles written by Python's own pickle module (tests/data/alloc/make_snapshot.py, in
// the layout torch.cuda.memory._dump_snapshot writes) for protocols 2-5, read back and replayed;
// hostile pickles rejected with InputError; `headroom replay` end to end.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <unistd.h>
#include <random>
#include <sys/wait.h>

#include "headroom/alloc_replay.h"
#include "headroom/alloc_snapshot.h"
#include "headroom/error.h"
#include "headroom/pickle_reader.h"

using namespace headroom::alloc;
using headroom::InputError;

namespace {

constexpr int64_t MiB = 1 << 20;
constexpr int64_t kBase = 0x7F3A00000000;

bool have_python() {
  static const bool ok = std::system("python3 -c 'import pickle' >/dev/null 2>&1") == 0;
  return ok;
}

// Each (kind, protocol) is written once per test run (python3 start-up is slow on a busy machine).
std::string make_pickle(const std::string& kind, int protocol) {
  static std::map<std::string, std::string> made;
  const std::string out = ::testing::TempDir() + "/headroom_snap_" + std::to_string(getpid()) + "_" + kind + "_p" + std::to_string(protocol) + ".pickle";
  if (made.count(out)) return out;
  made[out] = out;
  const std::string cmd = std::string("python3 ") + HEADROOM_TEST_DATA + "/alloc/make_snapshot.py " + out + " " + std::to_string(protocol) + " " + kind;
  if (std::system(cmd.c_str()) != 0) ADD_FAILURE() << "python3 failed: " << cmd;
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

struct CliResult {
  int rc;
  std::string out, err;
};
CliResult run_cli(const std::string& args) {
  const std::string err_path = ::testing::TempDir() + "/headroom_replay_stderr.txt";
  const std::string cmd = std::string(HEADROOM_BINARY) + " " + args + " 2>" + err_path;
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, slurp(err_path)};
}

std::string expect_input_error(std::string_view bytes) {
  try {
    read_snapshot(bytes, "hostile.pickle");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

#define NEED_PYTHON() \
  if (!have_python()) GTEST_SKIP() << "python3 not available"

}  // namespace

TEST(AllocSnapshot, ReadsProtocols2To5) {
  NEED_PYTHON();
  for (int protocol : {2, 3, 4, 5}) {
    const std::string path = make_pickle("frag", protocol);
    const Snapshot s = read_snapshot(slurp(path), path);
    SCOPED_TRACE(protocol);
    EXPECT_EQ(s.protocol, protocol);
    ASSERT_EQ(s.segments.size(), 1u);
    const auto& seg = s.segments[0];
    EXPECT_EQ(seg.address, kBase);
    EXPECT_EQ(seg.total_size, 50 * MiB);
    EXPECT_EQ(seg.segment_type, "large");
    EXPECT_TRUE(seg.pool.is_default());
    ASSERT_EQ(seg.blocks.size(), 2u);
    EXPECT_EQ(seg.blocks[0].state, "active_allocated");
    EXPECT_EQ(seg.blocks[0].size, 12 * MiB);
    EXPECT_EQ(seg.blocks[1].state, "inactive");
    EXPECT_EQ(seg.blocks[1].address, kBase + 12 * MiB);
    ASSERT_EQ(s.device_traces.size(), 1u);
    const auto& tr = s.device_traces[0];
    ASSERT_EQ(tr.size(), 11u);
    EXPECT_EQ(tr[0].action, TraceAction::SegmentAlloc);
    EXPECT_EQ(tr[0].addr, kBase);
    EXPECT_EQ(tr[0].size, 50 * MiB);
    EXPECT_EQ(tr[1].time_us, 1700000000000002);
    EXPECT_EQ(tr[4].action, TraceAction::FreeRequested);
    EXPECT_EQ(tr[5].action, TraceAction::FreeCompleted);
    EXPECT_EQ(tr[9].action, TraceAction::SegmentFree);
    EXPECT_EQ(tr[10].action, TraceAction::Oom);
    EXPECT_EQ(tr[10].device_free, 50 * MiB);
    EXPECT_EQ(tr[10].size, 60 * MiB);
    // Three distinct stacks, shared through the pickle memo.
    EXPECT_EQ(s.stacks.size(), 3u);
    ASSERT_GE(tr[6].stack, 0);
    const auto& fr = s.stacks[static_cast<size_t>(tr[6].stack)];
    ASSERT_EQ(fr.size(), 3u);
    EXPECT_EQ(fr[1].name, "scratch");
    EXPECT_EQ(fr[1].line, 52);
    EXPECT_EQ(fr[1].filename, "/srv/app/model.py");
    // allocator_settings: max_split_size is SIZE_MAX (a 9-byte LONG1) -> unlimited.
    EXPECT_TRUE(s.has_settings);
    EXPECT_EQ(s.settings.max_split_size, kNoLimit);
    EXPECT_FALSE(s.settings.expandable_segments);
  }
}

TEST(AllocSnapshot, ReplayFindsTheFragmentationOomAndExpandableAvoidsIt) {
  NEED_PYTHON();
  const std::string path = make_pickle("frag", 4);
  const Snapshot s = read_snapshot(slurp(path), path);
  ReplayOptions opt;
  opt.compare = parse_alloc_conf("expandable_segments:True");
  const ReplayReport rep = replay_snapshot(s, opt);
  // Budget from the trace's OOM: 50 MiB still reserved + 50 MiB free on the device.
  EXPECT_EQ(rep.budget, 100 * MiB);
  EXPECT_EQ(rep.trace.initial_blocks, 0);
  // Recorded: start 50 - (50 + 48 - 48) = 0 reserved, peak 98 MiB after the second segment.
  EXPECT_EQ(rep.recorded.initial_reserved, 0);
  EXPECT_EQ(rep.recorded.peak_reserved, 98 * MiB);
  EXPECT_EQ(rep.recorded.peak_reserved_event, 2);
  EXPECT_EQ(rep.recorded.peak_requested, 98 * MiB);
  ASSERT_TRUE(rep.recorded.oom.has_value());
  EXPECT_EQ(rep.recorded.oom->event, 10);
  ASSERT_FALSE(rep.recorded.top_sites.empty());
  EXPECT_EQ(rep.recorded.top_sites[0].frame, "load_weights (/srv/app/model.py:40)");
  EXPECT_EQ(rep.recorded.top_sites[0].bytes, 98 * MiB);
  EXPECT_EQ(rep.recorded.top_sites[0].count, 2);
  // The model reproduces the recorded OOM at the same event with PyTorch's numbers.
  ASSERT_TRUE(rep.primary.oom.has_value());
  EXPECT_EQ(rep.primary.oom->event, 10);
  EXPECT_EQ(rep.primary.peak_reserved, 98 * MiB);
  EXPECT_EQ(rep.primary.oom->message,
            "CUDA out of memory. Tried to allocate 60.00 MiB. GPU 0 has a total capacity of 100.00 MiB of which 50.00 MiB is free. "
            "Including non-PyTorch memory, this process has 50.00 MiB memory in use. Of the allocated memory 12.00 MiB is "
            "allocated by PyTorch, and 38.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
            "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
            "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
  ASSERT_TRUE(rep.compare.has_value());
  EXPECT_FALSE(rep.compare->oom.has_value());
  EXPECT_EQ(rep.compare->peak_reserved, 100 * MiB);
  EXPECT_EQ(rep.compare->final_allocated, 72 * MiB);
}

TEST(AllocSnapshot, ManyFramesAndNoOom) {
  NEED_PYTHON();
  for (int protocol : {4, 5}) {
    const std::string path = make_pickle("many", protocol);
    const std::string bytes = slurp(path);
    ASSERT_GT(bytes.size(), 3u * 65536u);  // several FRAMEs
    const Snapshot s = read_snapshot(bytes, path);
    EXPECT_EQ(s.device_traces[0].size(), 15001u);
    EXPECT_EQ(s.settings.max_split_size, 128 * MiB);
    const ReplayReport rep = replay_snapshot(s, ReplayOptions{});
    EXPECT_EQ(rep.trace.ops.size(), 10000u);  // free_requested + free_completed at once = one free
    EXPECT_EQ(rep.primary.peak_allocated, 3584);  // 512 x 7
    EXPECT_EQ(rep.primary.peak_reserved, 2 * MiB);
    EXPECT_FALSE(rep.primary.oom.has_value());
    EXPECT_EQ(rep.budget, 0);  // no OOM in the trace, no device size: unlimited
  }
}

TEST(AllocSnapshot, GraphPoolMembershipComesFromSegments) {
  NEED_PYTHON();
  const std::string path = make_pickle("graph", 4);
  const Snapshot s = read_snapshot(slurp(path), path);
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.segments[0].pool, (PoolId{0, 1}));
  const ReplayReport rep = replay_snapshot(s, ReplayOptions{});
  ASSERT_EQ(rep.trace.pools.size(), 1u);
  EXPECT_EQ(rep.trace.pools[0], (PoolId{0, 1}));
  EXPECT_EQ(rep.primary.private_pool_reserved, 12 * MiB);  // 12 MiB segment; 4 MiB output split from it
  EXPECT_EQ(rep.primary.final_allocated, 4 * MiB);
}

TEST(AllocSnapshot, OrderedDictIsAllowListed) {
  NEED_PYTHON();
  const std::string path = make_pickle("ordered", 4);
  const Snapshot s = read_snapshot(slurp(path), path);
  EXPECT_TRUE(s.has_settings);
  EXPECT_EQ(s.settings.max_split_size, kNoLimit);
}

TEST(AllocSnapshot, HostilePicklesAreInputErrors) {
  NEED_PYTHON();
  EXPECT_NE(expect_input_error(slurp(make_pickle("deep", 4))).find("nesting deeper than 64 levels"), std::string::npos);
  EXPECT_NE(expect_input_error(slurp(make_pickle("global", 2))).find("refusing to load global 'posix.system'"), std::string::npos);
  EXPECT_NE(expect_input_error(slurp(make_pickle("global", 4))).find("refusing to load global 'posix.system'"), std::string::npos);
  EXPECT_NE(expect_input_error(slurp(make_pickle("reduce", 4))).find("refusing to load global 'collections.Counter'"), std::string::npos);
  EXPECT_NE(expect_input_error(slurp(make_pickle("set", 4))).find("unsupported pickle opcode 0x8f (EMPTY_SET)"), std::string::npos);
  EXPECT_NE(expect_input_error(slurp(make_pickle("proto0", 0))).find("not a pickle of protocol 2 or newer"), std::string::npos);
  // Every truncation of a valid snapshot is rejected cleanly.
  const std::string good = slurp(make_pickle("frag", 5));
  for (size_t n = 0; n < good.size(); ++n) EXPECT_THROW(read_snapshot(std::string_view(good).substr(0, n), "cut"), InputError) << n;
  // Random corruption: parses or InputError, nothing else.
  std::mt19937 rng(7);
  for (int k = 0; k < 3000; ++k) {
    std::string b = good;
    for (int e = 0; e < 4; ++e) b[rng() % b.size()] = static_cast<char>(rng());
    try {
      read_snapshot(b, "corrupt");
    } catch (const InputError&) {
    }
  }
}

TEST(AllocSnapshot, HandCraftedHostileBytes) {
  using namespace std::string_literals;
  EXPECT_NE(expect_input_error("\x80\x04X\xff\xff\xff\x7f" "abc"s).find("runs past the end"), std::string::npos);
  EXPECT_NE(expect_input_error("\x80\x02j\x00\x00\x00\x01."s).find("memo key 16777216 was never stored"), std::string::npos);
  EXPECT_NE(expect_input_error("\x80\x02."s).find("stack underflow"), std::string::npos);
  EXPECT_NE(expect_input_error("\x80\x02(."s).find("stack underflow"), std::string::npos);
  EXPECT_NE(expect_input_error("\x80\x02]K\x01s."s).find("stack underflow"), std::string::npos);
  EXPECT_NE(expect_input_error("\x80\x09}."s).find("unsupported pickle protocol 9"), std::string::npos);
  EXPECT_NE(expect_input_error("\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\x7f}."s).find("runs past the end"), std::string::npos);
  EXPECT_NE(expect_input_error("\x80\x02}q\x00."s).find("segments: missing"), std::string::npos);
  // 1000 MARKs closed by LIST opcodes: nesting, handled without recursion.
  std::string deep = "\x80\x02"s;
  for (int i = 0; i < 1000; ++i) deep += "(";
  deep += "]";
  for (int i = 0; i < 1000; ++i) deep += "l";
  deep += ".";
  EXPECT_NE(expect_input_error(deep).find("nesting deeper"), std::string::npos);
  // A list that contains itself (memo): bounded by the depth cap, no infinite loop.
  std::string self = "\x80\x02]q\x00"s;
  for (int i = 0; i < 70; ++i) self += "h\x00" "a"s;  // BINGET 0, APPEND
  EXPECT_NE(expect_input_error(self + "."s).find("nesting deeper than 64 levels"), std::string::npos);
}

TEST(AllocReplayCli, JsonAndTextOutput) {
  NEED_PYTHON();
  const std::string path = make_pickle("frag", 4);
  CliResult r = run_cli("replay " + path + " --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["events"], 11);
  EXPECT_EQ(j["peak_allocated_bytes"], 98 * MiB);
  EXPECT_EQ(j["peak_reserved_bytes"], 98 * MiB);
  ASSERT_TRUE(j["oom"].is_object());
  EXPECT_EQ(j["oom"]["event"], 10);
  EXPECT_EQ(j["oom"]["request_bytes"], 60 * MiB);
  ASSERT_TRUE(j.contains("compare"));  // default: the same settings plus expandable_segments:True
  EXPECT_EQ(j["compare"]["alloc_conf"], "expandable_segments:True");
  EXPECT_EQ(j["compare"]["would_oom"], false);

  r = run_cli("replay " + path);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("verdict: with expandable_segments:True the OOM would not have happened"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 60.00 MiB."), std::string::npos);

  r = run_cli("replay " + path + " --compare-conf none --alloc-conf expandable_segments:True --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["oom"].is_null());
  EXPECT_FALSE(j.contains("compare"));
}

TEST(AllocReplayCli, BadInputExitsTwoWithOneLine) {
  NEED_PYTHON();
  for (const std::string& args : std::vector<std::string>{"replay " + make_pickle("global", 4), "replay " + make_pickle("deep", 4),
                                  "replay /nonexistent/snap.pickle", "replay " + make_pickle("frag", 4) + " --alloc-conf max_split_size_mb:1",
                                  "replay " + make_pickle("frag", 4) + " --device 3", "replay"}) {
    CliResult r = run_cli(args);
    EXPECT_EQ(r.rc, 2) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("headroom: ", 0), 0u) << r.err;
  }
}
