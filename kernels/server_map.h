// Which server holds each rank's device, grouped once for all ranks.
#pragma once

#include <cstddef>
#include <vector>

namespace ars {

// The server number of every rank's device, and the ranks in server order: servers by
// ascending number, each one's ranks in rank order. Grouped when made, so that a rank asking
// where it sits costs no pass over all ranks: a hierarchical kernel's every rank asks, once in
// the run and once when the run's operations are counted, and regrouping each time cost
// O(P^2) in all (about 4 G instructions at 8192 NPUs). Empty: every rank on one server.
class ServerMap {
 public:
  ServerMap() = default;
  explicit ServerMap(const std::vector<int>& rank_server);

  bool empty() const { return order_.empty(); }
  std::size_t ranks() const { return order_.size(); }
  int server_of(int rank) const { return server_number(server_index(rank)); }

  // Servers holding at least one rank, indexed 0.. in ascending server number.
  int servers() const { return static_cast<int>(numbers_.size()); }
  int server_number(int index) const { return numbers_[static_cast<std::size_t>(index)]; }
  // The ranks of server `index`, in rank order.
  const int* begin(int index) const {
    return order_.data() + starts_[static_cast<std::size_t>(index)];
  }
  const int* end(int index) const {
    return order_.data() + starts_[static_cast<std::size_t>(index) + 1];
  }
  std::size_t size(int index) const {
    return starts_[static_cast<std::size_t>(index) + 1] - starts_[static_cast<std::size_t>(index)];
  }
  // Where `rank` sits: its server's index and its own index among that server's ranks.
  int server_index(int rank) const { return index_of_[static_cast<std::size_t>(rank)]; }
  int local_index(int rank) const { return local_[static_cast<std::size_t>(rank)]; }

 private:
  std::vector<int> numbers_;         // server number of each index
  std::vector<std::size_t> starts_;  // where each server's ranks start in order_, then the end
  std::vector<int> order_;           // every rank, server by server
  std::vector<int> index_of_;        // each rank's server index
  std::vector<int> local_;           // each rank's index among its server's ranks
};

}  // namespace ars
