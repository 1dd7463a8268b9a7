// Step 10: the hand-written ring allreduce. Stage-in, then notify the right neighbour on
// [0, me]. 2(P-1) rounds follow, each on its own signal row s: wait until the left neighbour
// has announced round s on [s, left], pull one N/P chunk from its window, store it into the own
// window (the first P-1 rounds reduce it into the own chunk first), then announce round s+1 to
// the right neighbour on [s+1, me]; the last round announces nothing. Stage-out copies the
// window to y. Per rank: 2(P-1)/P·N bytes read remotely, 2(P-1) notifies, 2(P-1) waits.
#include <string>

#include "kernels/ladder/ring.h"

#include "kernels/api.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace ars {

RingRound ring_round(int rank, int ranks, int round) {
  const bool reduces = round < ranks - 1;
  const int step = (reduces ? round : round - (ranks - 1)) + 1;
  // Adding P before the modulo keeps the index non-negative: C++'s % of a negative is negative.
  const int chunk = reduces ? (rank - step - 1 + ranks) % ranks : (rank - step + ranks) % ranks;
  return {reduces, chunk};
}

void pull_into_window(Rank& r, const Tensor& window, int peer, std::uint64_t begin,
                      const Tiling& tiling, bool reduces, const Tile& acc, const Tile& incoming) {
  for (const auto& [offset, count] : tiling.chunks()) {
    r.remote_load(incoming, window, peer, begin + offset, count);
    if (reduces) {
      r.load(acc, window, begin + offset, count);
      r.reduce(acc, incoming, count);
      r.store(acc, window, begin + offset, count);
    } else {
      r.store(incoming, window, begin + offset, count);
    }
  }
}

void ring_exchange(Rank& r, const Tensor& window, int left, const RingRound& round,
                   std::uint64_t chunk_elements, const Tiling& tiling, const Tile& acc,
                   const Tile& incoming) {
  pull_into_window(r, window, left, static_cast<std::uint64_t>(round.chunk) * chunk_elements,
                   tiling, round.reduces, acc, incoming);
}

Tiling pull_tiling(std::uint64_t elements, const Tile& tile, std::uint64_t ub_bytes) {
  Tiling tiling(elements, tile.dtype, 2, ub_bytes);
  tiling.tile_elements = std::min(tiling.tile_elements, tile.elements);
  return tiling;
}

void ring_allreduce(Rank& r, const Tensor& window, const Signal& signal, int first_row,
                    const RankGroup& group, int position, std::uint64_t base,
                    std::uint64_t elements, const Tile& acc, const Tile& incoming) {
  const int size = static_cast<int>(group.size());
  const int me = group[static_cast<std::size_t>(position)];
  const int left = group[static_cast<std::size_t>((position - 1 + size) % size)];
  const int right = group[static_cast<std::size_t>((position + 1) % size)];
  const int rounds = 2 * (size - 1);
  if (rounds == 0) return;
  r.notify(signal, right, first_row, me, 1, NotifyOp::AtomicAdd);
  for (int s = 0; s < rounds; ++s) {
    const RingRound round = ring_round(position, size, s);
    r.begin_round(round.reduces ? "RS" : "AG");
    r.wait(signal, first_row + s, left, 1, WaitCmp::Ge);
    const std::uint64_t from = split_point(elements, size, round.chunk);
    const std::uint64_t to = split_point(elements, size, round.chunk + 1);
    pull_into_window(r, window, left, base + from, pull_tiling(to - from, acc, r.ub_bytes()),
                     round.reduces, acc, incoming);
    if (s + 1 < rounds) r.notify(signal, right, first_row + s + 1, me, 1, NotifyOp::AtomicAdd);
  }
}

// FP16 segments start on 16-element (32 B) boundaries, as the vector unit's tiles need.
constexpr std::uint64_t kFp16SegmentAlignment = 16;

std::vector<std::uint64_t> ring_segment_bounds(std::uint64_t elements, DType dtype, int ranks) {
  std::vector<std::uint64_t> bounds{0};
  for (int i = 1; i < ranks; ++i) {
    std::uint64_t b = static_cast<std::uint64_t>(i) * elements / static_cast<std::uint64_t>(ranks);
    if (dtype == DType::FP16) {
      b = std::min(elements,
                   (b + kFp16SegmentAlignment - 1) / kFp16SegmentAlignment * kFp16SegmentAlignment);
    }
    bounds.push_back(b);
  }
  bounds.push_back(elements);
  return bounds;
}

namespace kernels {
namespace {

Layout layout(const Problem& p) {
  refuse_call_options(p, "ring", false);
  if (p.ranks < 2) {
    throw InputError("ring: needs at least 2 ranks (P = " + std::to_string(p.ranks) + ")");
  }
  require_size_divisible_by_ranks(p, "ring");
  return {{{"data", p.elements}}, {{"signal", 2 * (p.ranks - 1), p.ranks}}};
}

void body(Rank& r) {
  const int ranks = r.ranks();
  const int me = r.rank();
  const DType dtype = r.problem().dtype;
  const Tensor x = r.input();
  const Tensor y = r.output();
  const Tensor data = r.window("data");
  const Signal signal = r.signal("signal");
  const std::uint64_t chunk = r.problem().elements / static_cast<std::uint64_t>(ranks);
  const Tiling tiling(chunk, dtype, 2, r.ub_bytes());
  const Tile acc = r.alloc(tiling.tile_elements, dtype);
  const Tile incoming = r.alloc(tiling.tile_elements, dtype);

  r.begin_round("stage-in");
  for (int q = 0; q < ranks; ++q) {
    copy_through_ub(r, acc, x, data, tiling, q * chunk);
  }
  ring_allreduce(r, data, signal, 0, RankGroup::all(ranks), me, 0, r.problem().elements, acc,
                 incoming);

  r.begin_round("stage-out");
  for (int q = 0; q < ranks; ++q) {
    copy_through_ub(r, acc, data, y, tiling, q * chunk);
  }
  r.release(incoming);
  r.release(acc);
}

}  // namespace

extern const KernelSpec kRing{
    "ring", "step 10: 2(P-1) neighbour rounds of N/P (reduce-scatter, all-gather; size % P == 0)",
    true, layout, body};

}  // namespace kernels
}  // namespace ars
