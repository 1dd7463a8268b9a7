// What one rank did and when, as the reports show it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ars {

struct RoundRecord {
  int round = 0;
  std::string phase;
  std::uint64_t start_ps = 0;
  std::uint64_t barrier_ps = 0;   // in notify and wait (fixed costs and waiting for peers)
  std::uint64_t transfer_ps = 0;  // in DMA transfers
  std::uint64_t reduce_ps = 0;    // on the vector unit
  std::uint64_t bytes = 0;        // DMA payload moved, local and remote
  std::uint64_t remote_bytes = 0;
};

struct RankStats {
  int rank = 0;
  int device = 0;
  std::uint64_t remote_read_bytes = 0;
  std::uint64_t remote_write_bytes = 0;
  std::uint64_t local_bytes = 0;
  std::uint64_t notifies = 0;
  std::uint64_t waits = 0;
  std::uint64_t polls = 0;
  std::uint64_t transfers = 0;
  std::uint64_t reduces = 0;
  std::uint64_t start_ps = 0;
  std::uint64_t finish_ps = 0;
  bool finished = false;
  std::vector<RoundRecord> rounds;
};

// Where a rank is stuck when the simulation can go no further.
struct BlockedWait {
  bool blocked = false;
  std::string signal;
  int row = 0;
  int col = 0;
  std::int32_t expected = 0;
  std::string cmp;
  std::uint64_t since_ps = 0;
};

}  // namespace ars
