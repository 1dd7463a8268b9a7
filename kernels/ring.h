// The ring schedule shared by the hand ring (step 10) and the host builtin ring: which chunk
// each of the 2(P-1) rounds moves, and the move itself.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/api.h"
#include "kernels/tiling.h"

namespace ars {

struct RingRound {
  bool reduces;  // reduce-scatter round (the first P-1); otherwise all-gather
  int chunk;     // index of the N/P chunk this rank receives from its left neighbour
};

// Round `round` (0 .. 2(P-1)-1) of rank `rank`, with step = round+1 within each phase:
// RS receives chunk (rank-step-1+P) mod P, AG receives chunk (rank-step+P) mod P. After the
// last RS round rank r holds the fully reduced chunk r.
RingRound ring_round(int rank, int ranks, int round);

// Pulls the round's chunk from `left`'s `window` tile by tile and stores it into the own
// window, reduced with the own copy first in an RS round.
void ring_exchange(Rank& r, const Tensor& window, int left, const RingRound& round,
                   std::uint64_t chunk_elements, const Tiling& tiling, const Tile& acc,
                   const Tile& incoming);

// The host builtin ring moves data in fixed 256-element tiles, whatever the UB could hold.
constexpr std::uint64_t kHostRingTileElements = 256;

// The tiling of the host ring's transfers: the staging tiling, tiles capped at 256 elements.
inline Tiling host_ring_tiling(Tiling staging) {
  staging.tile_elements = std::min(staging.tile_elements, kHostRingTileElements);
  return staging;
}

// The builtin ring's P segments (spec 3.2): boundaries floor(i N / P), FP16 interior ones
// rounded up to 16 elements; returns the P+1 boundaries, 0 first and N last.
std::vector<std::uint64_t> ring_segment_bounds(std::uint64_t elements, DType dtype, int ranks);

}  // namespace ars
