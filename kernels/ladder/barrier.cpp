// Step 04: the barrier. Each rank stages its input into its window, announces itself to every
// peer and waits for every peer, then copies its window to the output. It moves no data
// between ranks: the golden is y == x.
#include <numeric>
#include <vector>

#include "kernels/api.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace ars {

void barrier(Rank& r, const Signal& signal, int col, std::int32_t generation) {
  const int me = r.rank();
  for (int peer = 0; peer < r.ranks(); ++peer) {
    if (peer != me) r.notify(signal, peer, me, col, 1, NotifyOp::AtomicAdd);
  }
  for (int src = 0; src < r.ranks(); ++src) {
    if (src != me) r.wait(signal, src, col, generation, WaitCmp::Ge);
  }
}

void row_barrier(Rank& r, const Signal& signal, int row, std::int32_t generation) {
  std::vector<int> everyone(static_cast<std::size_t>(r.ranks()));
  std::iota(everyone.begin(), everyone.end(), 0);
  row_barrier(r, signal, row, everyone, generation);
}

void row_barrier(Rank& r, const Signal& signal, int row, const std::vector<int>& group,
                 std::int32_t generation) {
  const int me = r.rank();
  for (const int peer : group) {
    if (peer != me) r.notify(signal, peer, row, me, 1, NotifyOp::AtomicAdd);
  }
  for (const int src : group) {
    if (src != me) r.wait(signal, row, src, generation, WaitCmp::Ge);
  }
}

namespace kernels {

namespace {

Layout layout(const Problem& p) {
  refuse_call_options(p, "barrier", false);
  return {{{"data", p.elements}}, {{"signal", p.ranks, 1}}};
}

void body(Rank& r) {
  const Tensor x = r.input();
  const Tensor y = r.output();
  const Tensor data = r.window("data");
  const Tiling tiling(r.problem().elements, r.problem().dtype, 2, r.ub_bytes());
  const Tile tile = r.alloc(tiling.tile_elements, r.problem().dtype);
  r.begin_round("stage-in");
  copy_through_ub(r, tile, x, data, tiling);
  r.begin_round("barrier");
  barrier(r, r.signal("signal"));
  r.begin_round("stage-out");
  copy_through_ub(r, tile, data, y, tiling);
  r.release(tile);
}

}  // namespace

extern const KernelSpec kBarrier{"barrier", "step 04: stage-in, full barrier, stage-out (y = x)",
                                 false, layout, body};

}  // namespace kernels
}  // namespace ars
