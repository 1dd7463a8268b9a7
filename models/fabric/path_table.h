// The paths an interconnect has used, by pair of devices, in a flat table (see
// models/tables/open_addressing.h) whose entries are kept in blocks of 64 KiB. Each entry is one
// cache line and holds a path of up to four links whole (every topology's paths but a ring's),
// where a node-based map read a bucket, a node and the links' array, each likely out of the caches
// at a mesh's every transfer and notify.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "models/tables/block_array.h"
#include "models/tables/open_addressing.h"

namespace ars {

class BandwidthResource;

struct alignas(64) Path {
  struct Links {
    BandwidthResource* const* first;
    BandwidthResource* const* last;
    BandwidthResource* const* begin() const { return first; }
    BandwidthResource* const* end() const { return last; }
  };
  // The links data crosses, in that order (none when the pair is one device).
  Links links() const {
    BandwidthResource* const* first = count <= kNearLinks ? near : far;
    return {first, first + count};
  }

  static constexpr std::uint32_t kNearLinks = 4;
  std::uint64_t key = 0;  // set by the table: its key + 1; 0 in an empty entry
  sc_core::sc_time latency;
  sc_core::sc_time back_latency;  // the way back's: a read's request, an atomic's answer
  std::uint32_t count = 0;        // links
  bool marked = false;            // one of the links is marked (see Interconnect::mark_link)
  union {
    BandwidthResource* near[kNearLinks] = {};
    BandwidthResource** far;  // more links than kNearLinks: an array the table owns
  };
};
static_assert(sizeof(Path) == 64, "a path is one cache line");

class PathTable {
 public:
  // The path stored under `key`, or nullptr.
  const Path* find(std::uint64_t key) const {
    if (entries_.size() == 0) return nullptr;
    const Path& found = entries_[probe(key + 1)];
    return found.key == 0 ? nullptr : &found;
  }
  // Stores a path under `key` (not stored yet) crossing `links`, for the caller to fill in its
  // latencies and mark. The table may grow first, moving every path: `moved` then says that
  // pointers to paths found before are stale.
  Path& add(std::uint64_t key, const std::vector<BandwidthResource*>& links, bool& moved) {
    moved = open_addressing::must_grow(entries_.size(), size_);
    if (moved) grow();
    Path& entry = entries_[probe(key + 1)];
    entry = Path();
    entry.key = key + 1;
    entry.count = static_cast<std::uint32_t>(links.size());
    BandwidthResource** stored = entry.near;
    if (links.size() > Path::kNearLinks) {
      far_.push_back(std::make_unique<BandwidthResource*[]>(links.size()));
      stored = entry.far = far_.back().get();
    }
    for (std::size_t i = 0; i < links.size(); ++i) stored[i] = links[i];
    ++size_;
    return entry;
  }
  std::size_t size() const { return size_; }
  // Forgets every path, keeping the table's room.
  void clear() {
    for (std::size_t i = 0; i < entries_.size(); ++i) entries_[i] = Path();
    far_.clear();
    size_ = 0;
  }

 private:
  // The entries, in blocks of 64 KiB. A table in one array would be freed whole each time it
  // grows, and glibc then raises its threshold for giving blocks a mapping of their own to that
  // size, so that the heap keeps the large blocks the rest of the run frees: 10 MB more at the
  // peak of the builtin ring on 128 NPUs.
  using Entries = BlockArray<Path, 64 * 1024>;

  // The entry holding `stored`, or the empty entry where it would go.
  std::size_t probe(std::uint64_t stored) const {
    std::size_t i = open_addressing::home(stored, entries_.size());
    while (entries_[i].key != 0 && entries_[i].key != stored)
      i = open_addressing::next(i, entries_.size());
    return i;
  }
  void grow() {
    Entries old;
    std::swap(old, entries_);
    const std::size_t slots = open_addressing::grown(old.size());
    for (std::size_t i = 0; i < slots; ++i) entries_.push_back(Path());
    for (std::size_t i = 0; i < old.size(); ++i) {
      if (old[i].key != 0) entries_[probe(old[i].key)] = old[i];
    }
  }

  Entries entries_;
  std::vector<std::unique_ptr<BandwidthResource*[]>> far_;
  std::size_t size_ = 0;
};

}  // namespace ars
