// The free-block index of one BlockPool: the same order as PyTorch's std::set<Block*,
// BlockComparatorSize> (stream, then size, then address) but stored as size-class bins
// (16 per power of two) of small sorted vectors plus a bitmap of non-empty bins, so a best-fit
// lookup touches one or two cache lines instead of walking a red-black tree.
#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace headroom::alloc::detail {

struct FreeEntry {
  int64_t size, addr;
  int32_t id;
};

class FreeIndex {
 public:
  static constexpr int kClasses = 54 * 16;  // 2^9 .. 2^62
  static constexpr int kWords = (kClasses + 63) / 64;

  struct Stream {
    int64_t stream = 0;
    std::vector<std::vector<FreeEntry>> bins = std::vector<std::vector<FreeEntry>>(kClasses);
    std::array<uint64_t, kWords> bits{};
    size_t count = 0;
  };
  // A position: stream slot, bin, index in the bin. Invalid when bin < 0.
  struct Pos {
    int s = -1, bin = -1;
    size_t idx = 0;
    bool valid() const { return bin >= 0; }
  };

  static int size_class(int64_t size) {
    const auto u = static_cast<uint64_t>(size);
    const int l = static_cast<int>(std::bit_width(u)) - 1;
    if (l < 9) return 0;
    return std::min((l - 9) * 16 + static_cast<int>((u >> (l - 4)) & 15), kClasses - 1);
  }

  void insert(int64_t stream, int64_t size, int64_t addr, int32_t id) {
    Stream& st = streams_[static_cast<size_t>(slot(stream, true))];
    const int c = size_class(size);
    auto& bin = st.bins[static_cast<size_t>(c)];
    auto it = std::lower_bound(bin.begin(), bin.end(), FreeEntry{size, addr, id}, less);
    bin.insert(it, FreeEntry{size, addr, id});
    st.bits[static_cast<size_t>(c >> 6)] |= uint64_t{1} << (c & 63);
    ++st.count;
    ++total_;
  }
  void erase(int64_t stream, int64_t size, int64_t addr) {
    const int s = slot(stream, false);
    if (s < 0) return;
    Stream& st = streams_[static_cast<size_t>(s)];
    const int c = size_class(size);
    auto& bin = st.bins[static_cast<size_t>(c)];
    auto it = std::lower_bound(bin.begin(), bin.end(), FreeEntry{size, addr, 0}, less);
    if (it == bin.end() || it->size != size || it->addr != addr) return;
    bin.erase(it);
    if (bin.empty()) st.bits[static_cast<size_t>(c >> 6)] &= ~(uint64_t{1} << (c & 63));
    --st.count;
    --total_;
  }
  // First entry of `stream` with entry.size >= size (lowest address among equals).
  Pos lower_bound(int64_t stream, int64_t size) const {
    const int s = slot(stream, false);
    if (s < 0) return {};
    const Stream& st = streams_[static_cast<size_t>(s)];
    const int c = size_class(size);
    const auto& bin = st.bins[static_cast<size_t>(c)];
    auto it = std::lower_bound(bin.begin(), bin.end(), size, [](const FreeEntry& e, int64_t v) { return e.size < v; });
    if (it != bin.end()) return Pos{s, c, static_cast<size_t>(it - bin.begin())};
    const int n = next_bin(st, c + 1);
    return n < 0 ? Pos{} : Pos{s, n, 0};
  }
  Pos next(Pos p) const {
    const Stream& st = streams_[static_cast<size_t>(p.s)];
    if (p.idx + 1 < st.bins[static_cast<size_t>(p.bin)].size()) return Pos{p.s, p.bin, p.idx + 1};
    const int n = next_bin(st, p.bin + 1);
    return n < 0 ? Pos{} : Pos{p.s, n, 0};
  }
  Pos prev(Pos p) const {
    if (p.idx > 0) return Pos{p.s, p.bin, p.idx - 1};
    const Stream& st = streams_[static_cast<size_t>(p.s)];
    const int n = prev_bin(st, p.bin - 1);
    return n < 0 ? Pos{} : Pos{p.s, n, st.bins[static_cast<size_t>(n)].size() - 1};
  }
  // The largest entry of `stream`.
  Pos last(int64_t stream) const {
    const int s = slot(stream, false);
    if (s < 0) return {};
    const Stream& st = streams_[static_cast<size_t>(s)];
    const int n = prev_bin(st, kClasses - 1);
    return n < 0 ? Pos{} : Pos{s, n, st.bins[static_cast<size_t>(n)].size() - 1};
  }
  const FreeEntry& at(Pos p) const { return streams_[static_cast<size_t>(p.s)].bins[static_cast<size_t>(p.bin)][p.idx]; }

  template <class F>
  void for_each(F&& f) const {
    for (const Stream& st : streams_) {
      if (!st.count) continue;
      for (int w = 0; w < kWords; ++w)
        for (uint64_t b = st.bits[static_cast<size_t>(w)]; b; b &= b - 1)
          for (const FreeEntry& e : st.bins[static_cast<size_t>(w * 64 + std::countr_zero(b))]) f(e);
    }
  }
  size_t size() const { return total_; }

 private:
  static bool less(const FreeEntry& a, const FreeEntry& b) { return a.size != b.size ? a.size < b.size : a.addr < b.addr; }

  int slot(int64_t stream, bool create) {
    for (size_t k = 0; k < streams_.size(); ++k)
      if (streams_[k].stream == stream) return static_cast<int>(k);
    if (!create) return -1;
    streams_.emplace_back();
    streams_.back().stream = stream;
    return static_cast<int>(streams_.size() - 1);
  }
  int slot(int64_t stream, bool) const {
    for (size_t k = 0; k < streams_.size(); ++k)
      if (streams_[k].stream == stream) return static_cast<int>(k);
    return -1;
  }
  static int next_bin(const Stream& st, int from) {
    if (from >= kClasses) return -1;
    int w = from >> 6;
    uint64_t b = st.bits[static_cast<size_t>(w)] & (~uint64_t{0} << (from & 63));
    while (true) {
      if (b) return w * 64 + std::countr_zero(b);
      if (++w >= kWords) return -1;
      b = st.bits[static_cast<size_t>(w)];
    }
  }
  static int prev_bin(const Stream& st, int from) {
    if (from < 0) return -1;
    int w = from >> 6;
    const int sh = 63 - (from & 63);
    uint64_t b = st.bits[static_cast<size_t>(w)] & (~uint64_t{0} >> sh);
    while (true) {
      if (b) return w * 64 + 63 - std::countl_zero(b);
      if (--w < 0) return -1;
      b = st.bits[static_cast<size_t>(w)];
    }
  }

  std::vector<Stream> streams_;
  size_t total_ = 0;
};

}  // namespace headroom::alloc::detail
