// The host mesh builtin (`builtin.tensor.allreduce`, HOST orchestrator, mode mesh): the pull
// design run as core_num SPMD blocks per rank. 256-element tiles are dealt round-robin to the
// blocks; block b owns column b of the [P, core_num] signal (its lane). Per tile the block
// stages its own input tile into the window, runs a full-mesh barrier on its lane (notify every
// peer, wait for every peer: each notify behind a pipe barrier), pulls the tile from every peer
// and reduces it, and stores the result into y. The pulls and the staging loads are DMA
// transfers the core only waits for when it needs their bytes, so they are software-pipelined:
// tile k's pulls fly during tile k + 1's barrier, and tiles are staged two ahead. A final
// barrier on the lane keeps the window alive until no peer reads it, and a self-clearing
// epilogue takes -(tiles + 1) back from every peer cell of the lane. The host path takes Sum
// and FP32 only (spec 3.3).
// Per block with T tiles: notifies (P-1)(T+1) + (P-1), waits (P-1)(T+1), remote bytes
// (P-1) x its tiles' bytes; per rank the sums over its blocks.
#include "kernels/ladder/host_mesh.h"

#include <algorithm>
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

void body(Rank& r) {
  const int ranks = r.ranks();
  const int me = r.rank();
  const int lane = r.block();
  const Tensor x = r.input();
  const Tensor y = r.output();
  const Tensor data = r.window("data");
  const Signal signal = r.signal("signal");
  const auto tiles = host_mesh_block_tiles(r.problem().elements, lane, r.blocks());
  const auto tile_count = static_cast<std::int32_t>(tiles.size());
  // Three accumulators in turn: tile k is reduced in one while tile k + 2 is loaded into another
  // and tile k + 1 (staged) waits in the third for its barrier.
  const std::array<Tile, 3> acc{r.alloc(kHostMeshTileElements, DType::FP32),
                                r.alloc(kHostMeshTileElements, DType::FP32),
                                r.alloc(kHostMeshTileElements, DType::FP32)};
  std::vector<Tile> incoming;
  for (int i = 1; i < ranks; ++i) incoming.push_back(r.alloc(kHostMeshTileElements, DType::FP32));
  const auto buffer = [&](std::int32_t k) -> const Tile& {
    return acc[static_cast<std::size_t>(k % 3)];
  };
  const auto tile = [&](std::int32_t k) { return tiles[static_cast<std::size_t>(k)]; };

  r.begin_round("exchange");
  for (std::int32_t k = 0; k < std::min(tile_count, 2); ++k) {
    r.load(buffer(k), x, tile(k).first, tile(k).second);
    r.store(buffer(k), data, tile(k).first, tile(k).second);
  }
  if (tile_count > 0) barrier(r, signal, lane, 1);
  // Tile k's barrier has passed (generation k + 1). Its pulls and the load of tile k + 2 are
  // DMA transfers: they fly while the core runs tile k + 1's barrier (tile k + 1 was staged
  // one tile earlier, so the barrier's pipe barrier finds its store landed). Then tile k is
  // reduced and stored, and tile k + 2 staged.
  for (std::int32_t k = 0; k < tile_count; ++k) {
    const auto [offset, count] = tile(k);
    std::vector<Transfer> pulls;
    for (int i = 1; i < ranks; ++i) {
      pulls.push_back(r.remote_load_async(incoming[static_cast<std::size_t>(i - 1)], data,
                                          (me + i) % ranks, offset, count));
    }
    const bool ahead = k + 2 < tile_count;
    Transfer load_ahead{};
    if (ahead)
      load_ahead = r.remote_load_async(buffer(k + 2), x, me, tile(k + 2).first, tile(k + 2).second);
    if (k + 1 < tile_count) barrier(r, signal, lane, k + 2);
    for (int i = 1; i < ranks; ++i) {
      r.sync(pulls[static_cast<std::size_t>(i - 1)]);
      r.reduce(buffer(k), incoming[static_cast<std::size_t>(i - 1)], count);
    }
    r.store(buffer(k), y, offset, count);
    if (ahead) {
      r.sync(load_ahead);
      r.store(buffer(k + 2), data, tile(k + 2).first, tile(k + 2).second);
    }
  }
  r.begin_round("final barrier");
  barrier(r, signal, lane, tile_count + 1);
  // Every peer's block added tiles + 1 to this lane's cells; taking it back clears the signal.
  r.begin_round("epilogue");
  for (int src = 0; src < ranks; ++src) {
    if (src != me) r.notify(signal, me, src, lane, -(tile_count + 1), NotifyOp::AtomicAdd);
  }
  for (const Tile& t : incoming) r.release(t);
  for (const Tile& t : acc) r.release(t);
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
    true,
    true};

}  // namespace kernels
}  // namespace ars
