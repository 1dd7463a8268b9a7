#include "kernels/tiling.h"

#include <algorithm>

namespace ars {

Tiling::Tiling(std::uint64_t elements_, DType dtype, int tiles_in_flight, std::uint64_t ub_bytes)
    : elements(elements_) {
  const std::uint64_t element = dtype_bytes(dtype);
  std::uint64_t bytes =
      std::min(kChunkBytes, ub_bytes / static_cast<std::uint64_t>(std::max(1, tiles_in_flight)));
  bytes = bytes / 32 * 32;
  // A small vector shrinks the tile to its size rounded up to 32 bytes.
  bytes = std::min(bytes, (elements * element + 31) / 32 * 32);
  tile_elements = std::max<std::uint64_t>(1, bytes / element);
}

void copy_through_ub(Rank& r, const Tile& tile, const Tensor& from, const Tensor& to,
                     const Tiling& tiling, std::uint64_t base) {
  for (const auto& [offset, count] : tiling.chunks()) {
    r.load(tile, from, base + offset, count);
    r.store(tile, to, base + offset, count);
  }
}

}  // namespace ars
