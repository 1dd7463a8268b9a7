// Step 11: the builtin allreduce(data, signal, op, mode="ring") as the compiler lowers it.
// Step 10's rounds and N/P segments, but every handshake is a full-mesh barrier on the round's
// signal row instead of the hand ring's neighbour notify. Segments are balanced (FP32
// boundaries floor(i·N/P); FP16 interior boundaries rounded up to 16 elements), each split
// into K subchunks of at most 16 KiB, the same K in every round. In round s (row s; RS rows
// 0..P-2, AG rows P-1..2P-3), for every subchunk k: a ready barrier (wait >= 2k+1), a
// remote_load from the left neighbour (reduced into the own copy in RS), a read-complete
// barrier (wait >= 2k+2), the store into the own window. Ranks whose subchunk is empty still
// take part in both barriers. The epilogue adds -2K to every non-self cell of every row.
// Per rank and call: notifies 4K(P-1)^2 + 2(P-1)^2 (the epilogue's on the rank's own cells),
// waits 4K(P-1)^2; over all ranks 2(P-1)·N remote bytes.
//
// --repeat R runs the tutorial's whole kernel R times on the same signal, as builtin_mesh does:
// stage-in, allreduce in place, stage-out.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/api.h"
#include "kernels/ladder/ring.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace ars::kernels {
namespace {

Layout layout(const Problem& p) {
  require_builtin_mode(p, "ring");
  if (p.ranks < 2) {
    throw InputError("builtin allreduce mode ring needs at least 2 ranks, got " +
                     std::to_string(p.ranks));
  }
  const int rounds = 2 * (p.ranks - 1);
  const auto [rows, cols] = p.signal_shape.value_or(std::pair{rounds, p.ranks});
  if (cols != p.ranks || rows != 2 * (cols - 1)) {
    // Both numbers of what is off: the columns against P, the rows against 2(C-1) for its C.
    std::string off;
    if (cols != p.ranks)
      off = "columns " + std::to_string(cols) + ", expected P = " + std::to_string(p.ranks);
    if (rows != 2 * (cols - 1)) {
      off += (off.empty() ? "" : "; ") + std::string("rows ") + std::to_string(rows) +
             ", expected 2(C-1) = " + std::to_string(2 * (cols - 1)) + " for its " +
             std::to_string(cols) + " columns";
    }
    throw InputError("builtin allreduce mode ring needs a signal of shape [2(P-1),P] = " +
                     shape_text(rounds, p.ranks) + " at P = " + std::to_string(p.ranks) + ", got " +
                     shape_text(rows, cols) + " (" + off + ")");
  }
  return {{{"data", p.elements}}, {{"signal", rows, cols}}};
}

// bounds[i] .. bounds[i+1] is segment i; segments may be empty when N is small.

void body(Rank& r) {
  const int ranks = r.ranks();
  const int me = r.rank();
  const int left = (me - 1 + ranks) % ranks;
  const Problem& p = r.problem();
  const Tensor x = r.input();
  const Tensor y = r.output();
  const Tensor data = r.window("data");
  const Signal signal = r.signal("signal");
  const std::vector<std::uint64_t> bounds = ring_segment_bounds(p.elements, p.dtype, ranks);
  std::uint64_t longest = 0;
  for (int i = 0; i < ranks; ++i) longest = std::max(longest, bounds[i + 1] - bounds[i]);
  const Tiling subchunks(longest, p.dtype, 2, r.ub_bytes());
  const std::uint64_t subchunk = subchunks.tile_elements;
  const auto per_segment = static_cast<std::int32_t>((longest + subchunk - 1) / subchunk);
  const Tiling staging(p.elements, p.dtype, 2, r.ub_bytes());
  const Tile acc = r.alloc(std::max(staging.tile_elements, subchunk), p.dtype);
  const Tile incoming = r.alloc(subchunk, p.dtype);
  const int rounds = 2 * (ranks - 1);

  for (int call = 0; call < p.repeat; ++call) {
    r.begin_round("stage-in");
    copy_through_ub(r, acc, x, data, staging);
    for (int round = 0; round < rounds; ++round) {
      const RingRound ring = ring_round(me, ranks, round);
      const bool reduce_scatter = ring.reduces;
      const int segment = ring.chunk;
      r.begin_round(reduce_scatter ? "RS" : "AG");
      for (std::int32_t k = 0; k < per_segment; ++k) {
        const std::uint64_t offset = bounds[segment] + static_cast<std::uint64_t>(k) * subchunk;
        const std::uint64_t end = bounds[segment + 1];
        const std::uint64_t count = offset < end ? std::min(subchunk, end - offset) : 0;
        row_barrier(r, signal, round, 2 * k + 1);
        if (count > 0 && reduce_scatter) {
          r.load(acc, data, offset, count);
          r.remote_load(incoming, data, left, offset, count);
          r.reduce(acc, incoming, count);
        } else if (count > 0) {
          r.remote_load(incoming, data, left, offset, count);
        }
        row_barrier(r, signal, round, 2 * k + 2);
        if (count > 0) r.store(reduce_scatter ? acc : incoming, data, offset, count);
      }
    }
    // Every peer added 2K to each of this rank's non-self cells; a peer's next call adds only
    // after it has passed this call's last barrier, so the clearing cannot lose its updates.
    r.begin_round("epilogue");
    for (int row = 0; row < rounds; ++row) {
      for (int src = 0; src < ranks; ++src) {
        if (src != me) r.notify(signal, me, row, src, -2 * per_segment, NotifyOp::AtomicAdd);
      }
    }
    r.begin_round("stage-out");
    copy_through_ub(r, acc, data, y, staging);
  }
  r.release(incoming);
  r.release(acc);
}

}  // namespace

extern const KernelSpec kBuiltinRing{
    "builtin_ring",
    "step 11: builtin allreduce mode ring (full-mesh barriers per subchunk, [2(P-1),P] signal)",
    true,
    layout,
    body,
    true};

}  // namespace ars::kernels
