// Fuzzes the snapshot pickle reader and the replay behind it: any input must either parse and
// replay, or raise InputError; never crash, hang or run out of memory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/alloc_replay.h"
#include "headroom/alloc_snapshot.h"
#include "headroom/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const headroom::alloc::Snapshot snap = headroom::alloc::read_snapshot(bytes, "fuzz.pickle");
    headroom::alloc::ReplayOptions opt;
    opt.compare = headroom::alloc::parse_alloc_conf("expandable_segments:True");
    opt.timeline_points = 8;
    headroom::alloc::replay_snapshot(snap, opt);
  } catch (const headroom::InputError&) {
  }
  return 0;
}
