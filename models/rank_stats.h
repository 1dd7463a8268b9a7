// What one rank did and when, as the reports show it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ars {

// The synchronisation instructions a codegen profile may emit around signals, each charged
// with its own cost key (see Codegen in models/platform_config.h).
enum class SyncInstruction {
  PipeBarrier,  // pipe_barrier(PIPE_ALL) before a notify: sync.pipe_barrier_cycles
  Drain,        // the narrower MTE3 drain before a notify: sync.drain_cycles
  Flush,        // the notify's cache-line flush: sync.cache_flush_cycles
  Atomic,       // the notify's atomic issue: sync.notify_cycles
  Dsb,          // the dsb after it: sync.dsb_cycles, plus the reply when acknowledged
  Invalidate,   // whole-cache invalidate after a wait (loop): sync.cache_invalidate_cycles
  StoreFence,   // after a window store: flush + pipe barrier + dsb, and the store landing
};
constexpr int kSyncInstructions = 7;
const char* to_string(SyncInstruction instruction);

struct SyncCost {
  std::uint64_t count = 0;
  std::uint64_t ps = 0;
};

struct RoundRecord {
  int round = 0;
  std::string phase;
  std::uint64_t start_ps = 0;
  std::uint64_t barrier_ps = 0;   // in notify and wait (fixed costs and waiting for peers)
  std::uint64_t transfer_ps = 0;  // in DMA transfers
  std::uint64_t reduce_ps = 0;    // on the vector unit
  std::uint64_t bytes = 0;        // DMA payload moved, local and remote
  std::uint64_t remote_bytes = 0;
  SyncCost sync[kSyncInstructions];  // inside barrier_ps (the store fence: inside transfer_ps)
};

struct RankStats {
  int rank = 0;
  int block = 0;  // SPMD block of the rank (one per vector core it runs on)
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
