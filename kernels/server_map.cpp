#include "kernels/server_map.h"

#include <algorithm>

namespace ars {

ServerMap::ServerMap(const std::vector<int>& rank_server) {
  const std::size_t ranks = rank_server.size();
  int top = 0;
  for (const int server : rank_server) top = std::max(top, server);
  // A counting sort: ranks per server number, then where each server's ranks start.
  std::vector<std::size_t> next(static_cast<std::size_t>(top) + 1, 0);
  for (const int server : rank_server) ++next[static_cast<std::size_t>(server)];
  std::vector<int> index_of_number(next.size(), -1);
  std::size_t placed = 0;
  for (std::size_t number = 0; number < next.size(); ++number) {
    if (next[number] == 0) continue;
    index_of_number[number] = static_cast<int>(numbers_.size());
    numbers_.push_back(static_cast<int>(number));
    starts_.push_back(placed);
    placed += next[number];
    next[number] = starts_.back();
  }
  starts_.push_back(placed);
  order_.resize(ranks);
  index_of_.resize(ranks);
  local_.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto number = static_cast<std::size_t>(rank_server[r]);
    const int index = index_of_number[number];
    const std::size_t at = next[number]++;
    order_[at] = static_cast<int>(r);
    index_of_[r] = index;
    local_[r] = static_cast<int>(at - starts_[static_cast<std::size_t>(index)]);
  }
}

}  // namespace ars
