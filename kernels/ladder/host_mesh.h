// The host mesh builtin's work split: 256-element tiles dealt round-robin to the SPMD blocks of
// a rank, the same on every rank, so block b of every rank handles the same tiles.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace ars {

constexpr std::uint64_t kHostMeshTileElements = 256;

// (offset, count) of every tile block `block` of `blocks` owns, in order: tiles block,
// block + blocks, block + 2 blocks, ... of a vector of `elements`.
std::vector<std::pair<std::uint64_t, std::uint64_t>> host_mesh_block_tiles(std::uint64_t elements,
                                                                           int block, int blocks);

}  // namespace ars
