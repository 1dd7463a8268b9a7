// How a kernel cuts a per-rank vector into UB tiles.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/api.h"

namespace ars {

// 16 KiB: nine such tiles fit in the 184 KiB usable UB of an a2a3 vector core.
constexpr std::uint64_t kChunkBytes = 16384;

struct Tiling {
  // Tiles of at most 16 KiB, smaller when `tiles_in_flight` of them would not fit the
  // `ub_bytes` a kernel may allocate, and never larger than the vector itself.
  Tiling(std::uint64_t elements, DType dtype, int tiles_in_flight, std::uint64_t ub_bytes);
  std::uint64_t elements;
  std::uint64_t tile_elements;
  // (offset, count) of every tile, in order.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks() const;
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
