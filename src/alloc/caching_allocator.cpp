// The caching-allocator simulator: DeviceCachingAllocator of pytorch/pytorch
// c10/cuda/CUDACachingAllocator.cpp (v2.5 commit 001074d2; v2.9 text for the expandable-segment
// and private-pool paths), replayed on simulated addresses. Function names below follow PyTorch's
// (get_free_block, alloc_block, should_split, alloc_found_block, free_block, try_merge_blocks,
// release_available_cached_blocks, release_cached_blocks, garbage_collect_cached_blocks,
// find_expandable_block, map_block, unmap_block) so each step can be checked against the source.
// Not modelled: cudaMalloc's own failures other than out-of-memory, FreeMemoryCallbacks,
// use_on_oom MemPools, custom-allocator MemPools, event timing (a cross-stream free completes
// when the caller says so, or at an OOM retry's synchronisation).
#include <algorithm>
#include <memory_resource>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "alloc/free_index.h"
#include "headroom/alloc.h"

namespace headroom::alloc {

namespace {

// BlockComparatorAddress (unmapped ranges of expandable segments): stream, then address.
struct AddrKey {
  int64_t stream, addr;
  int32_t id;
};
struct AddrLess {
  bool operator()(const AddrKey& a, const AddrKey& b) const {
    if (a.stream != b.stream) return a.stream < b.stream;
    return a.addr < b.addr;
  }
};

struct Block {
  int64_t addr = 0, size = 0, requested = 0, stream = 0;
  int64_t gc_base = 0;        // pool.get_free_blocks_call_count when inserted (gc age clock)
  int32_t prev = -1, next = -1;
  int32_t pool = -1;          // index into pools
  int32_t es = -1;            // expandable segment index, -1 for a cudaMalloc segment
  int32_t pending_pos = -1;   // index in pending list while a cross-stream free is outstanding
  int32_t handle = -1;        // caller's handle while allocated (stale once free)
  bool allocated = false, mapped = true, live = false;
};

struct BlockPool {
  BlockPool(bool small, int32_t owner_, std::pmr::memory_resource* r) : is_small(small), owner(owner_), unmapped(r) {}
  bool is_small;
  int32_t owner;  // private pool index, -1 for the default pools
  detail::FreeIndex blocks;  // free mapped blocks, BlockComparatorSize order
  std::pmr::set<AddrKey, AddrLess> unmapped;
  int64_t get_free_blocks_call_count = 0;
};

struct PrivatePool {
  PoolId id;
  int32_t large = -1, small = -1;
  int64_t use_count = 1;
  int64_t cuda_malloc_count = 0;
  bool dead = false;
};

struct ExpandableSegment {
  int64_t base = 0, page = 0, npages = 0;
  int64_t stream = 0;
  int32_t pool = -1;
  std::vector<uint8_t> mapped;
};

struct Params {
  int64_t size = 0, alloc_size = 0, stream = 0;
  int32_t pool = -1;
  int32_t block = -1;
};

// An "unlimited" device still has a ceiling (64 PiB) so that hostile traces cannot overflow int64.
constexpr int64_t kUnlimited = int64_t{1} << 56;
constexpr int64_t kVaStart = int64_t{0x7f} << 40;

}  // namespace

struct CachingAllocator::Impl {
  AllocConf conf;
  DeviceSpec dev;
  std::optional<int64_t> allowed;
  AllocStats st;
  OomInfo oom;
  std::pmr::unsynchronized_pool_resource res;
  std::vector<Block> blocks;
  std::vector<int32_t> free_slots;
  std::vector<BlockPool> pools;  // reserved up front; indices stay valid
  std::vector<PrivatePool> private_pools;
  std::vector<std::pair<int32_t, int64_t>> captures;  // (private pool, stream) routes underway
  std::vector<ExpandableSegment> segs;
  std::vector<int32_t> pending;
  // Caller handles -> block ids. A pending free reclaimed by an OOM retry leaves its handle
  // pointing at -1 until the caller's free_completed(), so recycled block ids are never confused.
  std::vector<int32_t> handles;
  std::vector<int32_t> free_handles;
  int64_t next_va = kVaStart;

  Impl(const AllocConf& c, DeviceSpec d) : conf(c), dev(d) {
    pools.reserve(64);
    pools.emplace_back(false, -1, &res);  // 0: default large_blocks
    pools.emplace_back(true, -1, &res);   // 1: default small_blocks
    blocks.reserve(1024);
    set_fraction(conf.per_process_memory_fraction);
  }

  void set_fraction(double f) {
    if (f < 1.0 && dev.total > 0) allowed = static_cast<int64_t>(f * static_cast<double>(dev.total));
    else allowed.reset();
  }

  // ---- small helpers -------------------------------------------------------------------------
  int64_t device_free() const {
    if (dev.total <= 0) return kUnlimited - st.reserved;
    return dev.total - dev.non_pytorch - st.reserved;
  }
  bool gc_active() const { return allowed.has_value() && conf.garbage_collection_threshold > 0.0; }
  static AddrKey akey(const Block& b, int32_t id) { return {b.stream, b.addr, id}; }
  bool is_split(const Block& b) const { return b.prev >= 0 || b.next >= 0; }

  int32_t new_block(int64_t addr, int64_t size, int64_t stream, int32_t pool, int32_t es, bool mapped) {
    int32_t id;
    if (!free_slots.empty()) {
      id = free_slots.back();
      free_slots.pop_back();
    } else {
      id = static_cast<int32_t>(blocks.size());
      blocks.emplace_back();
    }
    Block& b = blocks[static_cast<size_t>(id)];
    b = Block{};
    b.addr = addr, b.size = size, b.stream = stream, b.pool = pool, b.es = es, b.mapped = mapped, b.live = true;
    return id;
  }
  void delete_block(int32_t id) {
    blocks[static_cast<size_t>(id)].live = false;
    free_slots.push_back(id);
  }
  Block& B(int32_t id) { return blocks[static_cast<size_t>(id)]; }
  const Block& B(int32_t id) const { return blocks[static_cast<size_t>(id)]; }

  void insert_into_blocks(int32_t id) {
    Block& b = B(id);
    BlockPool& p = pools[static_cast<size_t>(b.pool)];
    b.gc_base = p.get_free_blocks_call_count;
    p.blocks.insert(b.stream, b.size, b.addr, id);
  }
  void erase_from_blocks(int32_t id) {
    const Block& b = B(id);
    pools[static_cast<size_t>(b.pool)].blocks.erase(b.stream, b.size, b.addr);
  }
  int64_t new_va(int64_t size) {
    // Addresses only order equal-sized blocks; wrap-around (unsigned) is harmless.
    const int64_t a = next_va;
    const auto step = static_cast<uint64_t>(((size + kRoundLarge - 1) / kRoundLarge + 1) * kRoundLarge);  // a gap keeps segments apart
    next_va = static_cast<int64_t>(static_cast<uint64_t>(next_va) + step);
    return a;
  }
  void bump_peaks() {
    st.peak_allocated = std::max(st.peak_allocated, st.allocated);
    st.peak_reserved = std::max(st.peak_reserved, st.reserved);
    st.peak_active = std::max(st.peak_active, st.active);
  }

  // ---- pool selection (get_pool) ---------------------------------------------------------------
  int32_t get_pool(int64_t size, int64_t stream, int32_t forced_private) const {
    int32_t pp = forced_private;
    if (pp < 0) {
      for (auto it = captures.rbegin(); it != captures.rend(); ++it)
        if (it->second == stream) { pp = it->first; break; }
    }
    if (pp >= 0) {
      const PrivatePool& p = private_pools[static_cast<size_t>(pp)];
      return size <= kSmallSize ? p.small : p.large;
    }
    return size <= kSmallSize ? 1 : 0;
  }

  // ---- get_free_block ------------------------------------------------------------------------
  bool get_free_block(Params& p) {
    BlockPool& pool = pools[static_cast<size_t>(p.pool)];
    if (gc_active()) ++pool.get_free_blocks_call_count;
    auto it = pool.blocks.lower_bound(p.stream, p.size);
    if (!it.valid()) return false;
    if (B(pool.blocks.at(it).id).es >= 0) {
      if (conf.expandable_segments) {
        // Best fit on the size a block can grow to: its size plus a following unmapped range.
        auto expandable_size = [&](int32_t id) {
          const Block& b = B(id);
          return b.size + (b.next >= 0 && !B(b.next).mapped ? B(b.next).size : 0);
        };
        auto next = pool.blocks.next(it);
        while (B(pool.blocks.at(it).id).es >= 0 && next.valid() &&
               expandable_size(pool.blocks.at(next).id) < expandable_size(pool.blocks.at(it).id)) {
          it = next;
          next = pool.blocks.next(next);
        }
      } else {
        do {
          it = pool.blocks.next(it);
        } while (it.valid() && B(pool.blocks.at(it).id).es >= 0);
        if (!it.valid()) return false;
      }
    }
    const detail::FreeEntry e = pool.blocks.at(it);
    const int64_t found = e.size;
    // Do not return an oversized block for a small request.
    if (p.size < conf.max_split_size && found >= conf.max_split_size) return false;
    // Do not return an oversized block for a large request (more than max_non_split_rounding over).
    if (p.size >= conf.max_split_size && found >= p.size + conf.max_non_split_rounding) return false;
    p.block = e.id;
    pool.blocks.erase(p.stream, e.size, e.addr);
    return true;
  }

  // ---- expandable segments -------------------------------------------------------------------
  int32_t find_expandable_block(int64_t stream, int32_t pool_idx, int64_t size) {
    BlockPool& pool = pools[static_cast<size_t>(pool_idx)];
    auto allocatable = [&](int32_t id) { return id >= 0 && !B(id).allocated && B(id).pending_pos < 0; };
    auto has_space = [&](int32_t id) {
      int64_t bytes = 0;
      while (bytes < size && allocatable(id)) {
        bytes += B(id).size;
        id = B(id).next;
      }
      return bytes >= size;
    };
    for (auto it = pool.unmapped.lower_bound(AddrKey{stream, INT64_MIN, -1}); it != pool.unmapped.end() && it->stream == stream; ++it) {
      int32_t c = it->id;
      if (allocatable(B(c).prev)) c = B(c).prev;
      if (has_space(c)) return c;
    }
    // A new segment reserves virtual addresses for 1.125 x device memory (ExpandableSegment ctor).
    ExpandableSegment es;
    es.page = pool.is_small ? kSmallBuffer : conf.large_segment_size;
    const int64_t va = dev.total > 0 ? dev.total + dev.total / 8 : (int64_t{1} << 44);
    es.npages = (va + es.page - 1) / es.page;
    es.base = new_va(es.npages * es.page);
    es.stream = stream;
    es.pool = pool_idx;
    es.mapped.assign(static_cast<size_t>(es.npages), 0);
    segs.push_back(std::move(es));
    const ExpandableSegment& e = segs.back();
    int32_t id = new_block(e.base, e.npages * e.page, stream, pool_idx, static_cast<int32_t>(segs.size() - 1), false);
    pool.unmapped.insert(akey(B(id), id));
    return id;
  }

  bool map_block(int32_t id, int64_t size) {
    ExpandableSegment& es = segs[static_cast<size_t>(B(id).es)];
    const int64_t off = B(id).addr - es.base;
    const int64_t begin = off / es.page;
    const int64_t end = (off + size + es.page - 1) / es.page;
    const int64_t bytes = (end - begin) * es.page;
    if (bytes == 0) return false;
    if (bytes > device_free()) return false;  // cuMemCreate fails; pages of this call are released
    for (int64_t i = begin; i < end; ++i) es.mapped[static_cast<size_t>(i)] = 1;
    const int32_t pool_idx = B(id).pool;
    BlockPool& pool = pools[static_cast<size_t>(pool_idx)];
    pool.unmapped.erase(akey(B(id), id));
    B(id).mapped = true;
    if (bytes < B(id).size) {
      const Block old = B(id);
      int32_t rem = new_block(old.addr + bytes, old.size - bytes, old.stream, pool_idx, old.es, false);
      B(rem).prev = id;
      B(rem).next = old.next;
      if (old.next >= 0) B(old.next).prev = rem;
      B(id).next = rem;
      B(id).size = bytes;
      pool.unmapped.insert(akey(B(rem), rem));
    }
    try_merge_blocks(id, B(id).prev);
    try_merge_blocks(id, B(id).next);
    insert_into_blocks(id);
    st.reserved += bytes;
    st.num_device_alloc += 1;
    bump_peaks();
    return true;
  }

  int32_t try_allocate_expandable_block(int64_t stream, int32_t pool_idx, int64_t size) {
    int32_t c = find_expandable_block(stream, pool_idx, size);
    if (!B(c).mapped && !map_block(c, std::min(B(c).size, size))) return -1;
    while (B(c).size < size) {
      const int64_t remaining = size - B(c).size;
      const int32_t nc = B(c).next;
      if (!map_block(nc, std::min(remaining, B(nc).size))) return -1;
      c = nc;
    }
    erase_from_blocks(c);
    return c;
  }

  void unmap_block(int32_t id) {
    ExpandableSegment& es = segs[static_cast<size_t>(B(id).es)];
    const int64_t off = B(id).addr - es.base;
    const int64_t begin = (off + es.page - 1) / es.page;        // segmentRight
    const int64_t end = (off + B(id).size) / es.page;           // segmentLeft
    if (begin >= end) return;
    const int64_t ptr = es.base + begin * es.page;
    const int64_t bytes = (end - begin) * es.page;
    const int32_t pool_idx = B(id).pool;
    BlockPool& pool = pools[static_cast<size_t>(pool_idx)];
    erase_from_blocks(id);
    const int64_t before = ptr - B(id).addr;
    if (before > 0) {
      const Block old = B(id);
      int32_t nb = new_block(old.addr, before, old.stream, pool_idx, old.es, true);
      B(nb).prev = old.prev;
      B(nb).next = id;
      if (old.prev >= 0) B(old.prev).next = nb;
      B(id).prev = nb;
      insert_into_blocks(nb);
    }
    const int64_t after = B(id).size - before - bytes;
    if (after > 0) {
      const Block old = B(id);
      int32_t na = new_block(ptr + bytes, after, old.stream, pool_idx, old.es, true);
      B(na).prev = id;
      B(na).next = old.next;
      if (old.next >= 0) B(old.next).prev = na;
      B(id).next = na;
      insert_into_blocks(na);
    }
    B(id).addr = ptr;
    B(id).size = bytes;
    B(id).mapped = false;
    try_merge_blocks(id, B(id).prev);
    try_merge_blocks(id, B(id).next);
    pool.unmapped.insert(akey(B(id), id));
    for (int64_t i = begin; i < end; ++i) es.mapped[static_cast<size_t>(i)] = 0;
    st.reserved -= bytes;
    st.num_device_free += 1;
  }

  // ---- alloc_block: cudaMalloc or map pages ----------------------------------------------------
  bool alloc_block(Params& p, bool is_retry) {
    const int64_t size = p.alloc_size;
    if (is_retry) st.num_alloc_retries += 1;
    if (allowed && st.reserved + size > *allowed) return false;
    const int32_t owner = pools[static_cast<size_t>(p.pool)].owner;
    if (conf.expandable_segments) {
      p.block = try_allocate_expandable_block(p.stream, p.pool, p.size);
      if (p.block >= 0 && owner >= 0) private_pools[static_cast<size_t>(owner)].cuda_malloc_count++;
      return p.block >= 0;
    }
    if (size > device_free()) return false;
    p.block = new_block(new_va(size), size, p.stream, p.pool, -1, true);
    if (owner >= 0) private_pools[static_cast<size_t>(owner)].cuda_malloc_count++;
    st.reserved += size;
    st.segments += 1;
    st.num_device_alloc += 1;
    bump_peaks();
    return true;
  }

  void release_block(int32_t id) {
    Block& b = B(id);
    BlockPool& pool = pools[static_cast<size_t>(b.pool)];
    erase_from_blocks(id);
    if (pool.owner >= 0) private_pools[static_cast<size_t>(pool.owner)].cuda_malloc_count--;
    st.reserved -= b.size;
    st.segments -= 1;
    st.num_device_free += 1;
    delete_block(id);
  }

  // release_blocks(): cudaFree every free unsplit block, unmap free pages of expandable segments.
  void release_blocks(int32_t pool_idx) {
    std::vector<int32_t> to_free, to_unmap;
    pools[static_cast<size_t>(pool_idx)].blocks.for_each([&](const detail::FreeEntry& k) {
      const Block& b = B(k.id);
      if (b.es >= 0) to_unmap.push_back(k.id);
      else if (!is_split(b)) to_free.push_back(k.id);
    });
    for (int32_t id : to_free) release_block(id);
    for (int32_t id : to_unmap) unmap_block(id);
  }

  int32_t new_handle(int32_t id) {
    int32_t h;
    if (!free_handles.empty()) {
      h = free_handles.back();
      free_handles.pop_back();
      handles[static_cast<size_t>(h)] = id;
    } else {
      h = static_cast<int32_t>(handles.size());
      handles.push_back(id);
    }
    B(id).handle = h;
    return h;
  }
  void release_handle(int32_t h) {
    handles[static_cast<size_t>(h)] = -1;
    free_handles.push_back(h);
  }
  int32_t block_of(int32_t h) const {
    if (h < 0 || static_cast<size_t>(h) >= handles.size()) throw std::out_of_range("CachingAllocator: unknown block handle");
    return handles[static_cast<size_t>(h)];
  }

  void synchronize_and_free_events() {
    std::vector<int32_t> ids;
    ids.swap(pending);
    for (int32_t id : ids) {
      B(id).pending_pos = -1;
      handles[static_cast<size_t>(B(id).handle)] = -1;  // the caller's handle stays owned until free_completed()
      free_block(id);
    }
  }

  bool release_cached_blocks() {
    synchronize_and_free_events();
    release_blocks(0);
    release_blocks(1);
    for (auto& pp : private_pools) {
      if (pp.dead || pp.use_count > 0) continue;  // only graph_pools_freeable
      release_blocks(pp.large);
      release_blocks(pp.small);
      if (pp.cuda_malloc_count == 0) pp.dead = true;
    }
    return true;
  }

  // release_available_cached_blocks(): only with max_split_size set; frees oversize blocks.
  bool release_available_cached_blocks(const Params& p) {
    if (conf.max_split_size == kNoLimit) return false;
    BlockPool& pool = pools[static_cast<size_t>(p.pool)];
    const int64_t key_size = std::max(p.size, conf.max_split_size);
    auto it = pool.blocks.lower_bound(p.stream, key_size);
    if (!it.valid() || B(pool.blocks.at(it).id).es >= 0) {
      // No single block is large enough: free oversize blocks from the largest down.
      it = it.valid() ? pool.blocks.prev(it) : pool.blocks.last(p.stream);
      if (!it.valid()) return false;
      int64_t released = 0;
      std::vector<int32_t> victims;
      while (it.valid() && released < key_size && pool.blocks.at(it).size >= conf.max_split_size) {
        const Block& b = B(pool.blocks.at(it).id);
        if (b.es < 0 && !is_split(b)) {
          released += b.size;
          victims.push_back(pool.blocks.at(it).id);
        }
        it = pool.blocks.prev(it);
      }
      for (int32_t id : victims) release_block(id);
      return released >= key_size;
    }
    const int32_t id = pool.blocks.at(it).id;
    if (is_split(B(id))) return false;
    release_block(id);
    return true;
  }

  // garbage_collect_cached_blocks(): free aged unsplit large-pool blocks down to the threshold.
  void garbage_collect_cached_blocks() {
    const auto threshold = static_cast<int64_t>(conf.garbage_collection_threshold * static_cast<double>(*allowed));
    if (st.reserved <= threshold) return;
    const int64_t target = st.reserved - threshold;
    BlockPool& pool = pools[0];
    double total_age = 0;
    int64_t freeable = 0;
    pool.blocks.for_each([&](const detail::FreeEntry& k) {
      const Block& b = B(k.id);
      if (!is_split(b) && b.es < 0) {
        total_age += static_cast<double>(pool.get_free_blocks_call_count - b.gc_base);
        ++freeable;
      }
    });
    if (freeable == 0) return;
    int64_t reclaimed = 0;
    bool freed = true;
    while (reclaimed < target && freed && freeable > 0) {
      const double age_threshold = total_age / static_cast<double>(freeable);
      freed = false;
      std::vector<int32_t> victims;
      pool.blocks.for_each([&](const detail::FreeEntry& k) {
        const Block& b = B(k.id);
        const auto age = static_cast<double>(pool.get_free_blocks_call_count - b.gc_base);
        if (!is_split(b) && b.es < 0 && age >= age_threshold) {
          freed = true;
          reclaimed += b.size;
          total_age -= age;
          --freeable;
          victims.push_back(k.id);
        }
      });
      for (int32_t id : victims) release_block(id);
    }
  }

  // ---- merge / free ----------------------------------------------------------------------------
  int64_t try_merge_blocks(int32_t dst, int32_t src) {
    if (src < 0) return 0;
    Block& s = B(src);
    Block& d = B(dst);
    if (s.allocated || s.pending_pos >= 0 || s.mapped != d.mapped) return 0;
    BlockPool& pool = pools[static_cast<size_t>(s.pool)];
    if (s.mapped) pool.blocks.erase(s.stream, s.size, s.addr);
    else pool.unmapped.erase(akey(s, src));
    if (d.prev == src) {
      d.addr = s.addr;
      d.prev = s.prev;
      if (d.prev >= 0) B(d.prev).next = dst;
    } else {
      d.next = s.next;
      if (d.next >= 0) B(d.next).prev = dst;
    }
    const int64_t subsumed = s.size;
    d.size += subsumed;
    delete_block(src);
    return subsumed;
  }

  void free_block(int32_t id) {
    const int64_t orig = B(id).size;
    int64_t net_split = 0;
    const int32_t cands[2] = {B(id).prev, B(id).next};
    for (int32_t c : cands) {
      const int64_t sub = try_merge_blocks(id, c);
      if (sub > 0) net_split -= sub;
    }
    insert_into_blocks(id);
    if (is_split(B(id))) net_split += B(id).size;
    if (B(id).es < 0) st.inactive_split_bytes += net_split;
    st.active -= orig;
  }

  // ---- malloc --------------------------------------------------------------------------------
  BlockId malloc(int64_t orig, int64_t stream, int32_t forced_private) {
    if (orig < 0) orig = 0;
    if (orig >= kUnlimited) {  // PyTorch: "Tried to allocate more than 1EB memory." (checked before rounding)
      st.num_ooms += 1;
      oom = OomInfo{};
      oom.request_bytes = orig;
      oom.message = "CUDA out of memory. Tried to allocate more than 1EB memory.";
      return kNoBlock;
    }
    const int64_t size = round_size(orig, conf);
    Params p;
    p.size = size;
    p.stream = stream;
    p.pool = get_pool(size, stream, forced_private);
    p.alloc_size = allocation_size(size, conf);
    const bool capture_underway = !captures.empty() || forced_private >= 0;
    bool found = get_free_block(p);
    if (!found) {
      if (gc_active()) garbage_collect_cached_blocks();
      found = alloc_block(p, false) || (release_available_cached_blocks(p) && alloc_block(p, false)) ||
              (!capture_underway && release_cached_blocks() && alloc_block(p, true));
    }
    if (!found) {
      report_oom(orig, p);
      return kNoBlock;
    }
    return new_handle(alloc_found_block(p, orig));
  }

  BlockId alloc_found_block(const Params& p, int64_t orig) {
    int32_t id = p.block;
    const bool pool_small = pools[static_cast<size_t>(p.pool)].is_small;
    const int64_t remaining = B(id).size - p.size;
    const bool split = (pool_small || conf.expandable_segments)
                           ? remaining >= kMinBlockSize
                           : (p.size < conf.max_split_size && remaining > kSmallSize);
    const bool already_split = is_split(B(id));
    if (split) {
      const int32_t rem = id;
      const Block old = B(rem);
      id = new_block(old.addr, p.size, p.stream, old.pool, old.es, true);
      B(id).prev = old.prev;
      if (old.prev >= 0) B(old.prev).next = id;
      B(id).next = rem;
      B(rem).prev = id;
      B(rem).addr += p.size;
      B(rem).size -= p.size;
      insert_into_blocks(rem);
      if (old.es < 0) st.inactive_split_bytes += already_split ? -p.size : B(rem).size;
    } else if (already_split && B(id).es < 0) {
      st.inactive_split_bytes -= B(id).size;
    }
    Block& b = B(id);
    b.allocated = true;
    b.requested = orig;
    st.allocated += b.size;
    st.active += b.size;
    st.requested += orig;
    st.num_mallocs += 1;
    bump_peaks();
    return id;
  }

  void free_requested(int32_t id) {
    Block& b = B(id);
    b.allocated = false;
    st.allocated -= b.size;
    st.requested -= b.requested;
    st.num_frees += 1;
  }

  // ---- OOM report ----------------------------------------------------------------------------
  int64_t private_free() const {
    int64_t total = 0;
    for (const auto& pp : private_pools) {
      if (pp.dead) continue;
      for (int32_t idx : {pp.large, pp.small})
        pools[static_cast<size_t>(idx)].blocks.for_each([&](const detail::FreeEntry& k) { total += k.size; });
    }
    return total;
  }

  void report_oom(int64_t orig, const Params& p) {
    st.num_ooms += 1;
    OomInfo o;
    o.request_bytes = orig;
    o.rounded_bytes = p.size;
    o.alloc_size = p.alloc_size;
    o.device_total = dev.total;
    o.device_free = device_free();
    o.allocated = st.allocated;
    o.reserved = st.reserved;
    o.private_pool_free = private_free();
    o.allowed = allowed;
    std::string proc = fmt::format("Including non-PyTorch memory, this process has {} memory in use. ", format_size(st.reserved + dev.non_pytorch));
    std::string allowed_info = allowed ? format_size(*allowed) + " allowed; " : std::string();
    std::string private_msg = o.private_pool_free > 0
                                  ? fmt::format("with {} allocated in private pools (e.g., CUDA Graphs), ", format_size(o.private_pool_free))
                                  : std::string();
    // Template of PyTorch 2.4+ (PR pytorch#124673), as in the seed crash log.
    o.message = fmt::format(
        "CUDA out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free. {}{}"
        "Of the allocated memory {} is allocated by PyTorch, {}and {} is reserved by PyTorch but unallocated. "
        "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
        "to avoid fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        format_size(o.alloc_size), dev.index, format_size(dev.total), format_size(o.device_free), proc, allowed_info,
        format_size(o.allocated + o.private_pool_free), private_msg, format_size(o.reserved - o.allocated - o.private_pool_free));
    oom = std::move(o);
  }

  // ---- private pools -------------------------------------------------------------------------
  int32_t find_private(PoolId id) const {
    for (size_t i = 0; i < private_pools.size(); ++i)
      if (!private_pools[i].dead && private_pools[i].id == id) return static_cast<int32_t>(i);
    return -1;
  }
  int32_t create_private(PoolId id) {
    PrivatePool pp;
    pp.id = id;
    pp.large = static_cast<int32_t>(pools.size());
    pp.small = pp.large + 1;
    const auto owner = static_cast<int32_t>(private_pools.size());
    if (pools.size() + 2 > pools.capacity()) throw std::length_error("too many private memory pools (limit 31)");
    pools.emplace_back(false, owner, &res);
    pools.emplace_back(true, owner, &res);
    private_pools.push_back(pp);
    return owner;
  }
};

CachingAllocator::CachingAllocator(const AllocConf& conf, DeviceSpec device) : impl_(std::make_unique<Impl>(conf, device)) {}
CachingAllocator::~CachingAllocator() = default;
CachingAllocator::CachingAllocator(CachingAllocator&&) noexcept = default;
CachingAllocator& CachingAllocator::operator=(CachingAllocator&&) noexcept = default;

BlockId CachingAllocator::malloc(int64_t size, int64_t stream) { return impl_->malloc(size, stream, -1); }

BlockId CachingAllocator::malloc_in_pool(int64_t size, int64_t stream, PoolId pool) {
  if (pool.is_default()) return impl_->malloc(size, stream, -1);
  int32_t pp = impl_->find_private(pool);
  if (pp < 0) pp = impl_->create_private(pool);
  return impl_->malloc(size, stream, pp);
}

void CachingAllocator::free(BlockId h) {
  const int32_t id = impl_->block_of(h);
  impl_->release_handle(h);
  if (id < 0) return;
  impl_->free_requested(id);
  impl_->free_block(id);
}

void CachingAllocator::free_requested(BlockId h) {
  const int32_t id = impl_->block_of(h);
  if (id < 0 || impl_->B(id).pending_pos >= 0 || !impl_->B(id).allocated) return;
  impl_->free_requested(id);
  impl_->B(id).pending_pos = static_cast<int32_t>(impl_->pending.size());
  impl_->pending.push_back(id);
}

void CachingAllocator::free_completed(BlockId h) {
  const int32_t id = impl_->block_of(h);
  impl_->release_handle(h);
  if (id < 0) return;  // already returned to the pool by an OOM retry's synchronisation
  auto& b = impl_->B(id);
  if (b.allocated) impl_->free_requested(id);
  if (b.pending_pos >= 0) {
    auto& v = impl_->pending;
    const int32_t last = v.back();
    v[static_cast<size_t>(b.pending_pos)] = last;
    impl_->B(last).pending_pos = b.pending_pos;
    v.pop_back();
    b.pending_pos = -1;
  }
  impl_->free_block(id);
}

void CachingAllocator::begin_allocate_to_pool(PoolId pool, int64_t stream) {
  int32_t pp = impl_->find_private(pool);
  if (pp < 0) {
    pp = impl_->create_private(pool);
  } else {
    auto& p = impl_->private_pools[static_cast<size_t>(pp)];
    if (p.use_count <= 0) throw std::logic_error("beginAllocateToPool: pool's use_count is 0 (INTERNAL ASSERT in PyTorch)");
    p.use_count++;
  }
  impl_->captures.emplace_back(pp, stream);
}

void CachingAllocator::end_allocate_to_pool(PoolId pool) {
  int32_t pp = impl_->find_private(pool);
  auto& c = impl_->captures;
  for (auto it = c.begin(); it != c.end(); ++it)
    if (it->first == pp) { c.erase(it); return; }
}

void CachingAllocator::release_pool(PoolId pool) {
  int32_t pp = impl_->find_private(pool);
  if (pp < 0) return;
  auto& p = impl_->private_pools[static_cast<size_t>(pp)];
  if (p.use_count > 0) p.use_count--;
}

void CachingAllocator::empty_cache() {
  if (impl_->captures.empty()) impl_->release_cached_blocks();
}

void CachingAllocator::set_memory_fraction(double fraction) { impl_->set_fraction(fraction); }

const AllocStats& CachingAllocator::stats() const { return impl_->st; }
const OomInfo& CachingAllocator::last_oom() const { return impl_->oom; }
int64_t CachingAllocator::block_size(BlockId h) const {
  const int32_t id = impl_->block_of(h);
  return id < 0 ? 0 : impl_->B(id).size;
}
int64_t CachingAllocator::block_address(BlockId h) const {
  const int32_t id = impl_->block_of(h);
  return id < 0 ? 0 : impl_->B(id).addr;
}
int64_t CachingAllocator::device_free() const { return impl_->device_free(); }
int64_t CachingAllocator::private_pool_free_bytes() const { return impl_->private_free(); }

int64_t CachingAllocator::private_pool_reserved_bytes() const {
  int64_t total = 0;
  for (const auto& b : impl_->blocks)
    if (b.live && b.mapped && impl_->pools[static_cast<size_t>(b.pool)].owner >= 0) total += b.size;
  return total;
}

int64_t CachingAllocator::largest_free_block() const {
  int64_t best = 0;
  for (const auto& pool : impl_->pools)
    pool.blocks.for_each([&](const detail::FreeEntry& k) { best = std::max(best, k.size); });
  return best;
}

void CachingAllocator::reset_peaks() {
  auto& s = impl_->st;
  s.peak_allocated = s.allocated;
  s.peak_reserved = s.reserved;
  s.peak_active = s.active;
}

std::vector<SegmentView> CachingAllocator::segments() const {
  std::vector<SegmentView> out;
  const auto& I = *impl_;
  for (size_t i = 0; i < I.blocks.size(); ++i) {
    const Block& head = I.blocks[i];
    if (!head.live || head.prev >= 0) continue;
    const BlockPool& pool = I.pools[static_cast<size_t>(head.pool)];
    PoolId pid = pool.owner >= 0 ? I.private_pools[static_cast<size_t>(pool.owner)].id : PoolId{};
    SegmentView cur;
    bool open = false;
    for (int32_t id = static_cast<int32_t>(i); id >= 0; id = I.B(id).next) {
      const Block& b = I.B(id);
      if (!b.mapped) {
        if (open) out.push_back(std::move(cur)), cur = SegmentView{}, open = false;
        continue;
      }
      if (!open) {
        cur.address = b.addr, cur.stream = b.stream, cur.is_small = pool.is_small, cur.is_expandable = b.es >= 0, cur.pool = pid;
        open = true;
      }
      cur.total_size += b.size;
      if (b.allocated) cur.allocated_size += b.size;
      cur.blocks.emplace_back(b.size, b.allocated);
    }
    if (open) out.push_back(std::move(cur));
  }
  std::sort(out.begin(), out.end(), [](const SegmentView& a, const SegmentView& b) { return a.address < b.address; });
  return out;
}

}  // namespace headroom::alloc
