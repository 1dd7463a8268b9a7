// Step 09: the hand-written two-phase allreduce. Stage-in, barrier A (signal row 0), then a
// reduce-scatter: rank r owns chunk r (N/P of the vector), sums it over every rank and leaves
// it in its `result` window; barrier B (row 1), then an all-gather: every rank's reduced chunk
// is read from its `result` into y. Per rank: 2(P-1)/P·N bytes read remotely, 2(P-1)
// notifies, 2(P-1) waits.
//
// As in the mesh kernel, a chunk larger than a tile is walked tile by tile, and the pulls of
// one tile from all peers are issued at once so that extra DMA queues can overlap them.
#include <string>
#include <vector>

#include "kernels/api.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace ars::kernels {
namespace {

constexpr int kRowBarrierA = 0;
constexpr int kRowBarrierB = 1;

Layout layout(const Problem& p) {
  refuse_call_options(p, "two_phase", false);
  const auto ranks = static_cast<std::uint64_t>(p.ranks);
  require_size_divisible_by_ranks(p, "two_phase");
  return {{{"data", p.elements}, {"result", p.elements / ranks}}, {{"signal", 2, p.ranks}}};
}

void body(Rank& r) {
  const int ranks = r.ranks();
  const int me = r.rank();
  const DType dtype = r.problem().dtype;
  const Tensor x = r.input();
  const Tensor y = r.output();
  const Tensor data = r.window("data");
  const Tensor result = r.window("result");
  const Signal signal = r.signal("signal");
  const std::uint64_t chunk = r.problem().elements / static_cast<std::uint64_t>(ranks);
  // One tile per rank: the own share plus one incoming tile per peer.
  const Tiling tiling(chunk, dtype, ranks, r.ub_bytes());
  std::vector<Tile> tiles;
  for (int k = 0; k < ranks; ++k) tiles.push_back(r.alloc(tiling.tile_elements, dtype));

  r.begin_round("stage-in");
  for (int q = 0; q < ranks; ++q) {
    copy_through_ub(r, tiles[0], x, data, tiling, q * chunk);
  }
  r.begin_round("barrier A");
  row_barrier(r, signal, kRowBarrierA);

  // Reduce-scatter: tiles[0] accumulates the own share (a local read), tiles[k] receives the
  // share of peer me+k.
  r.begin_round("reduce-scatter");
  const std::uint64_t own = static_cast<std::uint64_t>(me) * chunk;
  for (const auto& [offset, count] : tiling.chunks()) {
    r.load(tiles[0], data, own + offset, count);
    std::vector<Transfer> pulls;
    for (int k = 1; k < ranks; ++k) {
      pulls.push_back(r.remote_load_async(tiles[k], data, (me + k) % ranks, own + offset, count));
    }
    for (int k = 1; k < ranks; ++k) {
      r.sync(pulls[k - 1]);
      r.reduce(tiles[0], tiles[k], count);
    }
    r.store(tiles[0], result, offset, count);
  }
  r.begin_round("barrier B");
  row_barrier(r, signal, kRowBarrierB);

  // All-gather: tiles[k] receives the reduced chunk of rank me+k (k = 0 is the own one).
  r.begin_round("all-gather");
  for (const auto& [offset, count] : tiling.chunks()) {
    std::vector<Transfer> pulls;
    for (int k = 0; k < ranks; ++k) {
      pulls.push_back(r.remote_load_async(tiles[k], result, (me + k) % ranks, offset, count));
    }
    for (int k = 0; k < ranks; ++k) {
      r.sync(pulls[k]);
      const std::uint64_t owner = static_cast<std::uint64_t>((me + k) % ranks);
      r.store(tiles[k], y, owner * chunk + offset, count);
    }
  }
  for (const Tile& t : tiles) r.release(t);
}

}  // namespace

extern const KernelSpec kTwoPhase{
    "two_phase", "step 09: reduce-scatter into `result`, barrier, all-gather (size % P == 0)", true,
    layout, body};

}  // namespace ars::kernels
