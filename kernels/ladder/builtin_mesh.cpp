// Step 11: the builtin allreduce(data, signal, op, mode="mesh") as the compiler lowers it.
// Step 08's pattern, chunked: a ready barrier, then for every 16 KiB chunk a local load, a
// pull-and-reduce from each peer in turn, a chunk barrier (no rank overwrites bytes a slow peer
// is still reading) and the store back into the own window; a self-clearing epilogue leaves
// the [P,1] signal all zero so that the next call can reuse it.
// Per rank and call, C = ceil(N / chunk): notifies (P-1)(C+1) + (P-1) (the last P-1 are the
// epilogue's, on the rank's own cells), waits (P-1)(C+1), remote bytes (P-1)·N in (P-1)·C loads.
//
// --repeat R runs the tutorial's whole kernel R times on the same signal: stage x into the
// window, allreduce in place, stage the window out to y. Re-staging keeps every call's result
// equal to the golden; only the signal carries state from one call to the next.
#include <string>

#include "kernels/api.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace ars::kernels {
namespace {

Layout layout(const Problem& p) {
  require_builtin_mode(p, "mesh");
  // Only the column count is checked, as the builtin does; a row a rank would touch outside
  // the signal is reported by the core when it happens.
  const auto [rows, cols] = p.signal_shape.value_or(std::pair{p.ranks, 1});
  if (cols != 1) {
    throw InputError("builtin allreduce mode mesh needs a signal with 1 column " +
                     shape_text(p.ranks, 1) + ", got " + shape_text(rows, cols) +
                     ": a ring-shaped signal cannot be shared, allocate a separate [P,1] window");
  }
  return {{{"data", p.elements}}, {{"signal", rows, cols}}};
}

void body(Rank& r) {
  const int ranks = r.ranks();
  const int me = r.rank();
  const Problem& p = r.problem();
  const Tensor x = r.input();
  const Tensor y = r.output();
  const Tensor data = r.window("data");
  const Signal signal = r.signal("signal");
  const Tiling tiling(p.elements, p.dtype, 2, r.ub_bytes());
  const auto chunks = tiling.chunks();
  const auto chunk_count = static_cast<std::int32_t>(chunks.size());
  const Tile acc = r.alloc(tiling.tile_elements, p.dtype);
  const Tile incoming = r.alloc(tiling.tile_elements, p.dtype);

  for (int call = 0; call < p.repeat; ++call) {
    r.begin_round("stage-in");
    copy_through_ub(r, acc, x, data, tiling);
    r.begin_round("ready");
    barrier(r, signal, 0, 1);
    r.begin_round("exchange");
    for (std::int32_t k = 0; k < chunk_count; ++k) {
      const auto [offset, count] = chunks[static_cast<std::size_t>(k)];
      r.load(acc, data, offset, count);
      for (int i = 1; i < ranks; ++i) {
        r.remote_load(incoming, data, (me + i) % ranks, offset, count);
        r.reduce(acc, incoming, count);
      }
      barrier(r, signal, 0, 2 + k);
      r.store(acc, data, offset, count);
    }
    // Every peer added 1 + C to this rank's cell of it; taking that back here is safe because
    // a peer's next call adds only after this call's last barrier.
    r.begin_round("epilogue");
    for (int src = 0; src < ranks; ++src) {
      if (src != me) r.notify(signal, me, src, 0, -(1 + chunk_count), NotifyOp::AtomicAdd);
    }
    r.begin_round("stage-out");
    copy_through_ub(r, acc, data, y, tiling);
  }
  r.release(incoming);
  r.release(acc);
}

}  // namespace

extern const KernelSpec kBuiltinMesh{
    "builtin_mesh",
    "step 11: builtin allreduce mode mesh (16 KiB chunks, chunk barriers, self-clearing [P,1])",
    true,
    layout,
    body,
    true};

}  // namespace ars::kernels
