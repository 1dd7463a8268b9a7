// How the hierarchical allreduce groups ranks, for the kernel and its cost card.
#pragma once

#include <vector>

#include "kernels/api.h"

namespace ars {

// The ranks of every server (Problem::servers; all in one server when it is empty), servers
// in ascending server number, each listing its ranks in rank order. Throws InputError when the
// servers hold unequal numbers of ranks.
std::vector<std::vector<int>> server_groups(const Problem& problem);

// Where a rank sits in server_groups(): its server's index there and its own index in that
// server, its server's ranks, and the rank at its index in every server: O(ranks per server +
// servers), for a kernel. Throws as server_groups() does.
struct ServerPlace {
  int server = 0;
  int local = 0;
  std::vector<int> peers;
  std::vector<int> same_index;
};
ServerPlace server_place(const Problem& problem, int rank);

// The algorithm between servers: "ring" (also when --inter was not given) or "rhd".
bool inter_is_rhd(const Problem& problem);

}  // namespace ars
