// Spec 3.3: the host builtin ring (`builtin.tensor.allreduce_ring`), a narrower path than the
// composite builtin: FP32 Sum only, at most 16 ranks, a size divisible by P, a [2(P-1)+1, P]
// signal. It runs the ring's 2(P-1) rounds and chunk indices, but every round starts with a
// full-mesh barrier on its own signal row instead of the neighbour handshake, and a last
// barrier on the extra row keeps every window alive until no peer reads it any more.
// Per rank: 2(P-1)/P·N bytes read remotely, (2(P-1)+1)(P-1) notifies and as many waits.
#include <string>

#include "kernels/api.h"
#include "kernels/ladder/ring.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace ars::kernels {
namespace {

constexpr int kMaxRanks = 16;

int signal_rows(int ranks) {
  return 2 * (ranks - 1) + 1;
}

Layout layout(const Problem& p) {
  refuse_call_options(p, "host_ring", true);
  refuse_outside_host_path(p, "host_ring");
  if (p.ranks > kMaxRanks) {
    throw InputError("host_ring: P = " + std::to_string(p.ranks) + " ranks exceeds the limit of " +
                     std::to_string(kMaxRanks));
  }
  require_size_divisible_by_ranks(p, "host_ring");
  const int rows = signal_rows(p.ranks);
  if (p.signal_shape && (p.signal_shape->first != rows || p.signal_shape->second != p.ranks)) {
    throw InputError("host_ring: signal shape [" + std::to_string(p.signal_shape->first) + "," +
                     std::to_string(p.signal_shape->second) + "] must be [2(P-1)+1, P] = [" +
                     std::to_string(rows) + "," + std::to_string(p.ranks) + "]");
  }
  return {{{"data", p.elements}}, {{"signal", rows, p.ranks}}};
}

void body(Rank& r) {
  const int ranks = r.ranks();
  const int me = r.rank();
  const int left = (me - 1 + ranks) % ranks;
  const int rounds = 2 * (ranks - 1);
  const Tensor x = r.input();
  const Tensor y = r.output();
  const Tensor data = r.window("data");
  const Signal signal = r.signal("signal");
  const std::uint64_t chunk = r.problem().elements / static_cast<std::uint64_t>(ranks);
  // Staging is the tutorial's, in full UB tiles; only the ring itself moves 256 elements at a time.
  const Tiling staging(chunk, DType::FP32, 2, r.ub_bytes());
  const Tiling tiling = host_ring_tiling(staging);
  const Tile acc = r.alloc(staging.tile_elements, DType::FP32);
  const Tile incoming = r.alloc(tiling.tile_elements, DType::FP32);

  r.begin_round("stage-in");
  for (int q = 0; q < ranks; ++q) {
    copy_through_ub(r, acc, x, data, staging, q * chunk);
  }

  for (int s = 0; s < rounds; ++s) {
    const RingRound round = ring_round(me, ranks, s);
    r.begin_round(round.reduces ? "RS" : "AG");
    row_barrier(r, signal, s);
    ring_exchange(r, data, left, round, chunk, tiling, acc, incoming);
  }
  r.begin_round("final barrier");
  row_barrier(r, signal, rounds);

  r.begin_round("stage-out");
  for (int q = 0; q < ranks; ++q) {
    copy_through_ub(r, acc, data, y, staging, q * chunk);
  }
  r.release(incoming);
  r.release(acc);
}

}  // namespace

extern const KernelSpec kHostRing{
    "host_ring",
    "spec 3.3: host builtin ring, FP32 Sum, full-mesh barrier per round, 256-element tiles",
    true,
    layout,
    body,
    false,
    false,
    true};

}  // namespace ars::kernels
