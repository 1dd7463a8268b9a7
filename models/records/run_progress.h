// How far a running simulation has come, for a progress line drawn by another thread: the
// ranks publish, the reader only loads. Relaxed atomics: the figures are for people.
#pragma once

#include <atomic>
#include <cstdint>

namespace ars {

struct RunProgress {
  std::atomic<std::uint64_t> simulated_ps{0};  // the latest time a rank has reached
  std::atomic<int> finished_ranks{0};
  // Kernel operations issued (transfers, reduces, notifies, waits, rounds), by the one thread
  // SystemC runs the ranks on: a load and a store, no read-modify-write.
  std::atomic<std::uint64_t> operations{0};

  void operated() {
    operations.store(operations.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  void reached(std::uint64_t ps) {
    if (ps > simulated_ps.load(std::memory_order_relaxed))
      simulated_ps.store(ps, std::memory_order_relaxed);
  }
};

}  // namespace ars
