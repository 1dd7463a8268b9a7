// Recursive halving-doubling among a group of ranks, shared by the rhd kernel, the
// hierarchical allreduce (between servers) and the cost cards.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/api.h"
#include "kernels/rank_group.h"

namespace ars {

// One exchange: pull [begin, end) of the sub-range from the partner at group position
// `partner` (reduce-scatter steps reduce it into the own copy, all-gather steps store it).
struct RhdStep {
  int partner;
  std::uint64_t begin;
  std::uint64_t end;
};

// What one group position does. With G ranks and p' = 2^floor(log2 G), positions p'..G-1 are
// extras: each folds its whole vector into position - p' and gets the result back at the end;
// the p' others run log2 p' reduce-scatter steps (partner at distance p'/2, p'/4, ..., 1,
// keeping the lower half when the distance's bit is clear) and the all-gather steps in reverse.
struct RhdPlan {
  bool extra = false;
  int fold_partner = -1;  // the extra folded into this position, or an extra's partner; -1: none
  std::vector<RhdStep> reduce_scatter;
  std::vector<RhdStep> all_gather;
};

RhdPlan rhd_plan(int position, int group_size, std::uint64_t elements);

// floor(log2 G) for G >= 1.
int rhd_steps(int group_size);

// Signal rows a group of G needs: fold, log2 p' reduce-scatter steps, as many all-gather
// steps, hand-back: 2 floor(log2 G) + 2.
int rhd_signal_rows(int group_size);

// Recursive halving-doubling among `group` (this rank at `position`) on elements
// [base, base + elements) of `window`, in place. Every exchange is announced to the partner
// (row first_row + step, column the sender's rank) and waited for before pulling: the
// partner's range then holds what this step needs, and a range is rewritten only after the
// partner that reads it has moved on (the all-gather of a range follows the partner's last
// read of it). Rounds "fold", "RS", "AG", "hand-back".
void rhd_allreduce(Rank& r, const Tensor& window, const Signal& signal, int first_row,
                   const RankGroup& group, int position, std::uint64_t base, std::uint64_t elements,
                   const Tile& acc, const Tile& incoming);

}  // namespace ars
