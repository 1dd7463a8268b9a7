// A fixed integer hash (the 64-bit finaliser of MurmurHash3): the same value on every machine
// and run, for inputs that must be reproducible and for deterministic ECMP.
#pragma once

#include <cstdint>

namespace ars {

inline std::uint32_t fixed_hash(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb33fca6b1a85ULL;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}

}  // namespace ars
