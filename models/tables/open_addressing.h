// The policy of the project's flat tables (AddressMap, PathTable): open addressing with linear
// probing from a fixed hash scaled to the table's size, so any size works, not only powers of
// two; a table grows by half when more than 4/5 of its slots would be taken, so its load stays
// between 0.53 and 0.8, keeping probes short without doubling its memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/tables/fixed_hash.h"

namespace ars::open_addressing {

constexpr std::size_t kFirstSlots = 16;

// A table of `slots` slots holding `size` keys must grow before it takes one more.
inline bool must_grow(std::size_t slots, std::size_t size) {
  return slots * 4 <= (size + 1) * 5;
}

// The slot count a table of `slots` grows to.
inline std::size_t grown(std::size_t slots) {
  return slots == 0 ? kFirstSlots : slots + slots / 2;
}

// Where the probe for `key` starts in a table of `slots` slots (not zero).
inline std::size_t home(std::uint64_t key, std::size_t slots) {
  return static_cast<std::size_t>((std::uint64_t{fixed_hash(key)} * std::uint64_t{slots}) >> 32);
}

// The slot after `i`, wrapping round.
inline std::size_t next(std::size_t i, std::size_t slots) {
  return i + 1 == slots ? 0 : i + 1;
}

}  // namespace ars::open_addressing
