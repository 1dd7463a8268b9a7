// How a kernel cuts a per-rank vector into UB tiles.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/api.h"

namespace ars {

// 16 KiB: nine such tiles fit in the 184 KiB usable UB of an a2a3 vector core.
constexpr std::uint64_t kChunkBytes = 16384;

// The tiles of a vector, in order, as (offset, count) pairs made on the fly: kernels walk them
// every round, and a vector of them would cost an allocation each time.
class TileRange {
 public:
  using Tile = std::pair<std::uint64_t, std::uint64_t>;
  TileRange(std::uint64_t elements, std::uint64_t tile_elements)
      : elements_(elements), tile_elements_(tile_elements) {}
  std::size_t size() const {
    return static_cast<std::size_t>((elements_ + tile_elements_ - 1) / tile_elements_);
  }
  bool empty() const { return elements_ == 0; }
  Tile operator[](std::size_t k) const {
    const std::uint64_t offset = k * tile_elements_;
    return {offset, std::min(tile_elements_, elements_ - offset)};
  }
  class Iterator {
   public:
    Iterator(const TileRange& range, std::size_t k) : range_(range), k_(k) {}
    Tile operator*() const { return range_[k_]; }
    Iterator& operator++() {
      ++k_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return k_ != other.k_; }

   private:
    const TileRange& range_;
    std::size_t k_;
  };
  Iterator begin() const { return {*this, 0}; }
  Iterator end() const { return {*this, size()}; }

 private:
  std::uint64_t elements_;
  std::uint64_t tile_elements_;
};

struct Tiling {
  // Tiles of at most 16 KiB, smaller when `tiles_in_flight` of them would not fit the
  // `ub_bytes` a kernel may allocate, and never larger than the vector itself.
  Tiling(std::uint64_t elements, DType dtype, int tiles_in_flight, std::uint64_t ub_bytes);
  std::uint64_t elements;
  std::uint64_t tile_elements;
  // (offset, count) of every tile, in order.
  TileRange chunks() const { return {elements, tile_elements}; }
};

// Start of part `index` of `parts` near-equal parts of `elements`: floor(index·elements/parts),
// so part sizes differ by at most one and part `parts` ends at `elements`.
inline std::uint64_t split_point(std::uint64_t elements, int parts, int index) {
  return static_cast<std::uint64_t>(index) * elements / static_cast<std::uint64_t>(parts);
}

// Copies elements [base, base + tiling.elements) of `from` to `to` through the UB, tile by
// tile: the kernels' stage-in and stage-out.
void copy_through_ub(Rank& r, const Tile& tile, const Tensor& from, const Tensor& to,
                     const Tiling& tiling, std::uint64_t base = 0);

}  // namespace ars
