// PYTORCH_CUDA_ALLOC_CONF parsing, size rounding and PyTorch's format_size().
// Mirrors pytorch/pytorch c10/core/AllocatorConfig.cpp (commit 065861fb: lexArgs, parseArgs,
// parseRoundUpPower2Divisions) and c10/cuda/CUDAAllocatorConfig.cpp (commit 01f9ef32: the
// CUDA-only keys), and round_size / get_allocation_size / format_size of
// c10/cuda/CUDACachingAllocator.cpp (v2.5, commit 001074d2).
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "headroom/alloc.h"
#include "headroom/error.h"

namespace headroom::alloc {

namespace {

constexpr int64_t kMB = 1024 * 1024;
constexpr std::string_view kField = "PYTORCH_CUDA_ALLOC_CONF";

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

class Parser {
 public:
  Parser(std::string_view text, std::string_view source) : source_(source) {
    // AllocatorConfig::lexArgs: ',' ':' '[' ']' are tokens of their own, spaces are dropped.
    std::string buf;
    for (char c : text) {
      if (c == ',' || c == ':' || c == '[' || c == ']') {
        if (!buf.empty()) tokens_.push_back(std::move(buf)), buf.clear();
        tokens_.emplace_back(1, c);
      } else if (c != ' ') {
        buf.push_back(c);
      }
    }
    if (!buf.empty()) tokens_.push_back(std::move(buf));
  }

  [[noreturn]] void fail(std::string_view why) const { fail_input(source_, kField, why); }

  size_t size() const { return tokens_.size(); }
  const std::string& at(size_t i) const {
    if (i >= tokens_.size()) fail("unexpected end of the setting string");
    return tokens_[i];
  }
  void expect(size_t i, char c) const {
    if (i >= tokens_.size() || tokens_[i] != std::string(1, c))
      fail(fmt::format("expected '{}' {}", c, i < tokens_.size() ? fmt::format("but found '{}'", tokens_[i]) : "at the end"));
  }
  int64_t to_int(size_t i, std::string_view key) const {
    const std::string& t = at(i);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || v < 0)
      fail(fmt::format("{}: '{}' is not a non-negative integer", key, t));
    return v;
  }
  double to_double(size_t i, std::string_view key) const {
    const std::string& t = at(i);
    double v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v))
      fail(fmt::format("{}: '{}' is not a number", key, t));
    return v;
  }
  bool to_bool(size_t i, std::string_view key) const {
    const std::string& t = at(i);
    if (t == "True") return true;
    if (t == "False") return false;
    fail(fmt::format("Expected a single True/False argument for {}, got '{}'", key, t));
  }

  std::vector<std::string> tokens_;
  std::string_view source_;
};

// parseMaxSplitSize / parseMaxNonSplitRoundingSize: megabytes, at least kLargeBuffer / 1 MiB.
int64_t parse_mb_at_least_20(const Parser& p, size_t i, std::string_view key) {
  int64_t mb = p.to_int(i, key);
  if (mb < kLargeBuffer / kMB) p.fail(fmt::format("CachingAllocator option {} too small, must be >= {}", key, kLargeBuffer / kMB));
  return mb > kNoLimit / kMB ? kNoLimit : mb * kMB;
}

// parseRoundUpPower2Divisions: "N" (all intervals) or "[64:8,256:4,>:1]".
size_t parse_roundup(const Parser& p, size_t i, AllocConf& c) {
  auto& div = c.roundup_power2_divisions;
  if (p.at(i) != "[") {
    int64_t v = p.to_int(i, "roundup_power2_divisions");
    if (!is_pow2(v)) p.fail("For roundups, the divisons has to be power of 2");
    div.fill(v);
    return i;
  }
  bool first = true;
  size_t last_index = 0;
  while (++i < p.size() && p.at(i) != "]") {
    const std::string key = p.at(i);
    p.expect(++i, ':');
    int64_t v = p.to_int(++i, "roundup_power2_divisions");
    if (v != 0 && !is_pow2(v)) p.fail("For roundups, the divisons has to be power of 2 or 0 to disable roundup");
    if (key == ">") {
      for (size_t k = last_index; k < div.size(); ++k) div[k] = v;
    } else {
      int64_t mb = 0;
      auto [q, ec] = std::from_chars(key.data(), key.data() + key.size(), mb);
      if (ec != std::errc() || q != key.data() + key.size() || !is_pow2(mb))
        p.fail(fmt::format("For roundups, the intervals have to be power of 2 (got '{}')", key));
      size_t index = static_cast<size_t>(std::bit_width(static_cast<uint64_t>(mb)) - 1);
      index = std::min(index, div.size() - 1);
      if (first) {
        for (size_t k = 0; k < index; ++k) div[k] = v;
        first = false;
      }
      div[index] = v;
      last_index = index;
    }
    if (i + 1 >= p.size()) p.fail("roundup_power2_divisions: missing ']'");
    if (p.at(i + 1) != "]") p.expect(++i, ',');
  }
  if (i >= p.size()) p.fail("roundup_power2_divisions: missing ']'");
  return i;
}

}  // namespace

AllocConf parse_alloc_conf(std::string_view text, std::string_view source) {
  AllocConf c;
  c.text = std::string(text);
  Parser p(text, source);
  for (size_t i = 0; i < p.size(); ++i) {
    const std::string key = p.at(i);
    auto value_index = [&]() { p.expect(++i, ':'); return ++i; };
    if (key == "max_split_size_mb") {
      c.max_split_size = parse_mb_at_least_20(p, value_index(), key);
    } else if (key == "max_non_split_rounding_mb") {
      c.max_non_split_rounding = parse_mb_at_least_20(p, value_index(), key);
    } else if (key == "large_segment_size_mb") {
      int64_t mb = p.to_int(value_index(), key);
      if (mb < 1 || mb > 1024 * 1024) p.fail("large_segment_size_mb must be between 1 and 1048576");
      c.large_segment_size = mb * kMB;
    } else if (key == "garbage_collection_threshold") {
      double v = p.to_double(value_index(), key);
      if (!(v > 0.0 && v < 1.0)) p.fail("garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
      c.garbage_collection_threshold = v;
    } else if (key == "roundup_power2_divisions") {
      i = parse_roundup(p, value_index(), c);
    } else if (key == "backend") {
      const std::string& v = p.at(value_index());
      if (v != "native" && v != "cudaMallocAsync") p.fail(fmt::format("Unknown allocator backend '{}', options are native and cudaMallocAsync", v));
      c.backend = v;
    } else if (key == "expandable_segments") {
      c.expandable_segments = p.to_bool(value_index(), key);
    } else if (key == "release_lock_on_cudamalloc" || key == "release_lock_on_hipmalloc") {
      c.release_lock_on_cudamalloc = p.to_bool(value_index(), key);
    } else if (key == "pinned_use_cuda_host_register" || key == "pinned_use_hip_host_register" ||
               key == "pinned_use_background_threads") {
      p.to_bool(value_index(), key);  // host (pinned) allocator: no device memory effect
    } else if (key == "pinned_num_register_threads") {
      int64_t v = p.to_int(value_index(), key);
      if (!is_pow2(v)) p.fail(fmt::format("Number of register threads has to be power of 2, got {}", v));
      if (v > 128) p.fail(fmt::format("Number of register threads should be less than or equal to 128, got {}", v));
    } else if (key == "pinned_reserve_segment_size_mb") {
      if (p.to_int(value_index(), key) <= 0) p.fail("Pinned reserve segment size has to be greater than 0");
    } else if (key == "graph_capture_record_stream_reuse") {
      c.graph_capture_record_stream_reuse = p.to_bool(value_index(), key);
    } else if (key == "per_process_memory_fraction") {
      double v = p.to_double(value_index(), key);
      if (!(v >= 0.0 && v <= 1.0)) p.fail(fmt::format("per_process_memory_fraction is invalid ({}), set it in [0.0, 1.0]", v));
      c.per_process_memory_fraction = v;
    } else {
      p.fail(fmt::format("Unrecognized key '{}' in CUDA allocator config.", key));
    }
    if (i + 1 < p.size()) p.expect(++i, ',');
  }
  return c;
}

// AllocatorConfig::roundup_power2_divisions(size) + round_size() + roundup_power2_next_division().
int64_t round_size(int64_t size, const AllocConf& conf) {
  if (size < kMinBlockSize) return kMinBlockSize;
  const auto usize = static_cast<uint64_t>(size);
  int index = static_cast<int>(std::bit_width(usize)) - 1 - 20;  // intervals start at 1 MiB
  index = std::clamp(index, 0, kRoundUpPowerOfTwoIntervals - 1);
  const int64_t divisions = conf.roundup_power2_divisions[static_cast<size_t>(index)];
  if (divisions > 1 && size > kMinBlockSize * divisions) {
    if (std::has_single_bit(usize)) return size;
    const uint64_t floor2 = std::bit_floor(usize);
    const uint64_t step = floor2 >> (std::bit_width(static_cast<uint64_t>(divisions)) - 1);
    if (step == 0) return static_cast<int64_t>(floor2 << 1);
    const uint64_t down = usize & ~(step - 1);
    return static_cast<int64_t>(down == usize ? usize : down + step);
  }
  return kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
}

int64_t allocation_size(int64_t rounded, const AllocConf& conf) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return conf.large_segment_size;
  return kRoundLarge * ((rounded + kRoundLarge - 1) / kRoundLarge);
}

std::string format_size(int64_t bytes) {
  // format_size() takes a uint64; negative values only arise from inconsistent inputs.
  const auto size = static_cast<uint64_t>(bytes);
  if (size <= 1024) return fmt::format("{} bytes", size);
  if (size <= 1048576) return fmt::format("{:.2f} KiB", static_cast<double>(size) / 1024.0);
  if (size <= 1073741824) return fmt::format("{:.2f} MiB", static_cast<double>(size) / 1048576.0);
  return fmt::format("{:.2f} GiB", static_cast<double>(size) / 1073741824.0);
}

}  // namespace headroom::alloc
