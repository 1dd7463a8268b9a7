// Step 08: the hand-written mesh allreduce. Stage-in, one barrier, then every rank pulls each
// peer's whole slice and reduces it into its own, and stages the result out to y.
// Per rank: (P-1)·N bytes read remotely, P-1 notifies, P-1 waits.
//
// A slice larger than a tile is walked tile by tile. For each tile the pulls of all peers are
// issued at once and reduced in peer order: with one DMA queue they run in turn, with more
// queues they overlap, so the platform's queue count decides which cost card applies.
#include <vector>

#include "kernels/api.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace ars::kernels {
namespace {

Layout layout(const Problem& p) {
  refuse_call_options(p, "mesh", false);
  return {{{"data", p.elements}}, {{"signal", p.ranks, 1}}};
}

void body(Rank& r) {
  const int ranks = r.ranks();
  const int me = r.rank();
  const DType dtype = r.problem().dtype;
  const Tensor x = r.input();
  const Tensor y = r.output();
  const Tensor data = r.window("data");
  const Tiling tiling(r.problem().elements, dtype, ranks, r.ub_bytes());
  const Tile acc = r.alloc(tiling.tile_elements, dtype);
  std::vector<Tile> incoming;
  for (int k = 1; k < ranks; ++k) incoming.push_back(r.alloc(tiling.tile_elements, dtype));

  r.begin_round("stage-in");
  copy_through_ub(r, acc, x, data, tiling);
  r.begin_round("barrier");
  barrier(r, r.signal("signal"));
  r.begin_round("exchange");
  for (const auto& [offset, count] : tiling.chunks()) {
    r.load(acc, data, offset, count);
    std::vector<Transfer> pulls;
    for (int k = 1; k < ranks; ++k) {
      pulls.push_back(r.remote_load_async(incoming[k - 1], data, (me + k) % ranks, offset, count));
    }
    for (int k = 1; k < ranks; ++k) {
      r.sync(pulls[k - 1]);
      r.reduce(acc, incoming[k - 1], count);
    }
    r.store(acc, y, offset, count);
  }
  for (const Tile& t : incoming) r.release(t);
  r.release(acc);
}

}  // namespace

extern const KernelSpec kMesh{"mesh", "step 08: barrier, then pull every peer's slice and reduce",
                              true, layout, body};

}  // namespace ars::kernels
