// The ranks a collective runs among, by position, for the ring and rhd building blocks.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ars {

// All P ranks in rank order, or a list of some (one server's, or those at one index in every
// server). All ranks keep no list: P ranks each holding one would cost O(P^2) memory, more
// than an rhd run's whole protocol at thousands of ranks.
class RankGroup {
 public:
  static RankGroup all(int ranks) {
    RankGroup group({});
    group.size_ = static_cast<std::size_t>(ranks);
    return group;
  }
  // size_ is declared, so initialised, before the list moves into ranks_.
  explicit RankGroup(std::vector<int> ranks) : size_(ranks.size()), ranks_(std::move(ranks)) {}

  std::size_t size() const { return size_; }
  // The rank at `position`.
  int operator[](std::size_t position) const {
    return ranks_.empty() ? static_cast<int>(position) : ranks_[position];
  }

 private:
  std::size_t size_;
  std::vector<int> ranks_;  // empty: all ranks
};

}  // namespace ars
