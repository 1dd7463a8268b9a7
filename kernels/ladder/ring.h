// The ring schedule shared by the hand ring (step 10) and the host builtin ring: which chunk
// each of the 2(P-1) rounds moves, and the move itself.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/api.h"
#include "kernels/rank_group.h"
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

// Pulls elements [begin, begin + tiling.elements) of `peer`'s `window` tile by tile and stores
// them at the same place of the own window, reduced with the own copy first when `reduces`:
// one step of the ring, of recursive halving-doubling and of the hierarchical allreduce.
void pull_into_window(Rank& r, const Tensor& window, int peer, std::uint64_t begin,
                      const Tiling& tiling, bool reduces, const Tile& acc, const Tile& incoming);

// Pulls the round's chunk from `left`'s `window` tile by tile and stores it into the own
// window, reduced with the own copy first in an RS round.
void ring_exchange(Rank& r, const Tensor& window, int left, const RingRound& round,
                   std::uint64_t chunk_elements, const Tiling& tiling, const Tile& acc,
                   const Tile& incoming);

// The tiling of a pull of `elements` through the `acc`/`incoming` pair: two tiles in flight,
// never larger than the tiles the caller allocated.
Tiling pull_tiling(std::uint64_t elements, const Tile& tile, std::uint64_t ub_bytes);

// The hand ring among the ranks of `group` (this rank at position `position`) on elements
// [base, base + elements) of `window`: chunk c is part c of `group.size()` (split_point), and
// round s waits on signal row first_row + s, column the left neighbour's rank. It opens with
// the notify of round 0 to the right neighbour; the last round notifies nobody. A group of
// one does nothing. Used by the ring kernel (every rank, the whole vector) and between the
// servers of the hierarchical allreduce.
void ring_allreduce(Rank& r, const Tensor& window, const Signal& signal, int first_row,
                    const RankGroup& group, int position, std::uint64_t base,
                    std::uint64_t elements, const Tile& acc, const Tile& incoming);

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
