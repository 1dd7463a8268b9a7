// The host mesh builtin (`builtin.tensor.allreduce`, HOST orchestrator, mode mesh): the pull
// design run as core_num SPMD blocks per rank. 256-element tiles are dealt round-robin to the
// blocks; block b owns column b of the [P, core_num] signal (its lane). Per tile the block
// stages its own input tile into the window, runs a full-mesh barrier on its lane (notify every
// peer, wait for every peer: each notify behind a pipe barrier), pulls the tile from every peer
// and reduces it, and stores the result into y. A final barrier on the lane keeps the window
// alive until no peer reads it, and a self-clearing epilogue takes -(tiles + 1) back from
// every peer cell of the lane. The host path takes Sum and FP32 only (spec 3.3).
// Per block with T tiles: notifies (P-1)(T+1) + (P-1), waits (P-1)(T+1), remote bytes
// (P-1) x its tiles' bytes; per rank the sums over its blocks.
#include "kernels/host_mesh.h"

#include <array>
#include <string>
#include <vector>

#include "kernels/api.h"
#include "kernels/registry.h"

namespace ars {

std::vector<std::pair<std::uint64_t, std::uint64_t>> host_mesh_block_tiles(std::uint64_t elements,
                                                                           int block, int blocks) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> tiles;
  const auto stride = static_cast<std::uint64_t>(blocks) * kHostMeshTileElements;
  for (std::uint64_t offset = static_cast<std::uint64_t>(block) * kHostMeshTileElements;
       offset < elements; offset += stride) {
    tiles.emplace_back(offset, std::min(kHostMeshTileElements, elements - offset));
  }
  return tiles;
}

namespace kernels {
namespace {

Layout layout(const Problem& p) {
  refuse_call_options(p, "host_mesh", false);
  refuse_outside_host_path(p, "host_mesh");
  return {{{"data", p.elements}}, {{"signal", p.ranks, p.core_num}}};
}

// Stages tile `k` of the block (x -> UB -> window) into `acc`.
void stage(Rank& r, const Tile& acc, const std::pair<std::uint64_t, std::uint64_t>& tile) {
  r.load(acc, r.input(), tile.first, tile.second);
  r.store(acc, r.window("data"), tile.first, tile.second);
}

void body(Rank& r) {
  const int ranks = r.ranks();
  const int me = r.rank();
  const int lane = r.block();
  const Tensor y = r.output();
  const Tensor data = r.window("data");
  const Signal signal = r.signal("signal");
  const auto tiles = host_mesh_block_tiles(r.problem().elements, lane, r.blocks());
  const auto tile_count = static_cast<std::int32_t>(tiles.size());
  // Two accumulators: tile k + 1 is staged while tile k's pulls are still in flight.
  const std::array<Tile, 2> acc{r.alloc(kHostMeshTileElements, DType::FP32),
                                r.alloc(kHostMeshTileElements, DType::FP32)};
  std::vector<Tile> incoming;
  for (int i = 1; i < ranks; ++i) incoming.push_back(r.alloc(kHostMeshTileElements, DType::FP32));

  r.begin_round("exchange");
  if (tile_count > 0) {
    stage(r, acc[0], tiles[0]);
    barrier(r, signal, lane, 1);
  }
  // The pulls are DMA transfers: the core issues them and goes on with the next tile's staging
  // and barrier (scalar and MTE3 work) while they fly, and reduces tile k when they land.
  for (std::int32_t k = 0; k < tile_count; ++k) {
    const auto [offset, count] = tiles[static_cast<std::size_t>(k)];
    const Tile& mine = acc[static_cast<std::size_t>(k % 2)];
    const bool next = k + 1 < tile_count;
    if (next)
      stage(r, acc[static_cast<std::size_t>((k + 1) % 2)], tiles[static_cast<std::size_t>(k + 1)]);
    std::vector<Transfer> pulls;
    for (int i = 1; i < ranks; ++i) {
      pulls.push_back(r.remote_load_async(incoming[static_cast<std::size_t>(i - 1)], data,
                                          (me + i) % ranks, offset, count));
    }
    if (next) barrier(r, signal, lane, k + 2);
    for (int i = 1; i < ranks; ++i) {
      r.sync(pulls[static_cast<std::size_t>(i - 1)]);
      r.reduce(mine, incoming[static_cast<std::size_t>(i - 1)], count);
    }
    r.store(mine, y, offset, count);
  }
  r.begin_round("final barrier");
  barrier(r, signal, lane, tile_count + 1);
  // Every peer's block added tiles + 1 to this lane's cells; taking it back clears the signal.
  r.begin_round("epilogue");
  for (int src = 0; src < ranks; ++src) {
    if (src != me) r.notify(signal, me, src, lane, -(tile_count + 1), NotifyOp::AtomicAdd);
  }
  for (const Tile& t : incoming) r.release(t);
  r.release(acc[1]);
  r.release(acc[0]);
}

}  // namespace

extern const KernelSpec kHostMesh{
    "host_mesh",
    "host builtin mesh: core_num blocks per rank, 256-element tiles dealt round-robin, a "
    "barrier per tile on the block's signal lane, FP32 Sum",
    true,
    layout,
    body,
    true,
    true};

}  // namespace kernels
}  // namespace ars
