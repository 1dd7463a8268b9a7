// Recursive halving-doubling (the collective libraries' H-D): a reduce-scatter by recursive
// halving, then an all-gather by recursive doubling, on P ranks. When P is not a power of two
// (p' = 2^floor(log2 P)), ranks p'..P-1 first fold their whole vector into ranks 0..P-p'-1
// and get the result back last: (2 floor(log2 P) + 2) alpha + (2(p'-1)/p' + 2) N beta.
// Per rank of the p': 2(p'-1)/p'·N bytes read remotely (halves of halves: N/2 + N/4 + ...
// twice), plus N for the rank that takes a fold; 2 log2 p' notifies and waits, plus one of
// each with a fold. An extra reads N (the result) and sends one notify, waits once.
#include "kernels/cluster/rhd.h"

#include <string>

#include "kernels/ladder/ring.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace ars {

int rhd_steps(int group_size) {
  int steps = 0;
  while ((2 << steps) <= group_size) ++steps;
  return steps;
}

int rhd_signal_rows(int group_size) {
  return 2 * rhd_steps(group_size) + 2;
}

RhdPlan rhd_plan(int position, int group_size, std::uint64_t elements) {
  const int steps = rhd_steps(group_size);
  const int core = 1 << steps;
  RhdPlan plan;
  if (position >= core) {
    plan.extra = true;
    plan.fold_partner = position - core;
    return plan;
  }
  if (position + core < group_size) plan.fold_partner = position + core;
  std::uint64_t lo = 0;
  std::uint64_t hi = elements;
  std::vector<RhdStep> given;
  for (int k = 0; k < steps; ++k) {
    const int distance = core >> (k + 1);
    const int partner = position ^ distance;
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if ((position & distance) == 0) {
      plan.reduce_scatter.push_back({partner, lo, mid});
      given.push_back({partner, mid, hi});
      hi = mid;
    } else {
      plan.reduce_scatter.push_back({partner, mid, hi});
      given.push_back({partner, lo, mid});
      lo = mid;
    }
  }
  plan.all_gather.assign(given.rbegin(), given.rend());
  return plan;
}

void rhd_allreduce(Rank& r, const Tensor& window, const Signal& signal, int first_row,
                   const RankGroup& group, int position, std::uint64_t base, std::uint64_t elements,
                   const Tile& acc, const Tile& incoming) {
  const int size = static_cast<int>(group.size());
  const int steps = rhd_steps(size);
  const int fold_row = first_row;
  const int hand_back_row = first_row + 2 * steps + 1;
  const int me = group[static_cast<std::size_t>(position)];
  const RhdPlan plan = rhd_plan(position, size, elements);
  const int fold = plan.fold_partner < 0 ? -1 : group[static_cast<std::size_t>(plan.fold_partner)];
  auto pull = [&](int peer, std::uint64_t begin, std::uint64_t end, bool reduces) {
    pull_into_window(r, window, peer, base + begin, pull_tiling(end - begin, acc, r.ub_bytes()),
                     reduces, acc, incoming);
  };
  if (plan.extra) {
    r.begin_round("fold");
    r.notify(signal, fold, fold_row, me, 1, NotifyOp::AtomicAdd);
    r.begin_round("hand-back");
    r.wait(signal, hand_back_row, fold, 1, WaitCmp::Ge);
    pull(fold, 0, elements, false);
    return;
  }
  if (fold >= 0) {
    r.begin_round("fold");
    r.wait(signal, fold_row, fold, 1, WaitCmp::Ge);
    pull(fold, 0, elements, true);
  }
  // Both halves of the plan, each step announced to its partner and waited for.
  int row = first_row + 1;
  for (const auto* phase : {&plan.reduce_scatter, &plan.all_gather}) {
    const bool reduces = phase == &plan.reduce_scatter;
    for (const RhdStep& step : *phase) {
      const int partner = group[static_cast<std::size_t>(step.partner)];
      r.begin_round(reduces ? "RS" : "AG");
      r.notify(signal, partner, row, me, 1, NotifyOp::AtomicAdd);
      r.wait(signal, row, partner, 1, WaitCmp::Ge);
      pull(partner, step.begin, step.end, reduces);
      ++row;
    }
  }
  if (fold >= 0) {
    r.begin_round("hand-back");
    r.notify(signal, fold, hand_back_row, me, 1, NotifyOp::AtomicAdd);
  }
}

namespace kernels {
namespace {

Layout layout(const Problem& p) {
  refuse_call_options(p, "rhd", false);
  return {{{"data", p.elements}}, {{"signal", rhd_signal_rows(p.ranks), p.ranks}}};
}

void body(Rank& r) {
  const DType dtype = r.problem().dtype;
  const Tensor data = r.window("data");
  const Tiling tiling(r.problem().elements, dtype, 2, r.ub_bytes());
  const Tile acc = r.alloc(tiling.tile_elements, dtype);
  const Tile incoming = r.alloc(tiling.tile_elements, dtype);

  r.begin_round("stage-in");
  copy_through_ub(r, acc, r.input(), data, tiling);
  rhd_allreduce(r, data, r.signal("signal"), 0, RankGroup::all(r.ranks()), r.rank(), 0,
                r.problem().elements, acc, incoming);
  r.begin_round("stage-out");
  copy_through_ub(r, acc, data, r.output(), tiling);
  r.release(incoming);
  r.release(acc);
}

}  // namespace

extern const KernelSpec kRhd{
    "rhd",
    "recursive halving-doubling: log2 P halving then doubling steps with one partner each "
    "(ranks beyond 2^floor(log2 P) fold in first)",
    true, layout, body};

}  // namespace kernels
}  // namespace ars
