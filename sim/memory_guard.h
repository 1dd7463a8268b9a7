// The memory guard: a run's host memory is estimated from its request before anything is
// allocated, so a size the machine cannot hold is refused with a clear message instead of
// ending in std::bad_alloc or the kernel's out-of-memory killer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/api.h"
#include "kernels/registry.h"
#include "sim/run.h"

namespace ars {

// The bytes a run is expected to hold at its peak, by what holds them.
struct MemoryEstimate {
  std::uint64_t global_memory = 0;  // backed tensors and windows of every rank
  std::uint64_t signal_cells = 0;   // the signal cells the run writes, in every rank's memory
  std::uint64_t staging = 0;        // host copies of one tensor (inputs, golden check)
  std::uint64_t unified_buffers = 0;
  std::uint64_t records = 0;  // the report's records of every operation (not kept with -q)
  std::uint64_t traces = 0;   // schedule lines and VCD changes
  // The timeline trace (--trace): its changes and events, and every rank's sync records.
  std::uint64_t timeline = 0;
  // The operations were counted only until the total passed the limit: `signal_cells`,
  // `records`, `traces`, `timeline` and `routes` are less than theirs.
  bool counted_in_part = false;
  std::uint64_t fixed = 0;  // modules and SystemC thread stacks of every device and rank's block
  // The paths between the device pairs the run's transfers and notifies cross, and on a full
  // mesh the link of each pair (a quadratic number for kernels that reach every peer).
  std::uint64_t routes = 0;

  std::uint64_t total() const {
    return global_memory + signal_cells + staging + unified_buffers + records + traces + timeline +
           fixed + routes;
  }
};

// What one rank's kernel body asks for (all its blocks together).
struct OperationCount {
  std::uint64_t transfers = 0;
  std::uint64_t bursts = 0;  // dma.burst_bytes pieces of the transfers
  std::uint64_t reduces = 0;
  std::uint64_t notifies = 0;
  std::uint64_t waits = 0;
  std::uint64_t rounds = 0;

  std::uint64_t operations() const { return transfers + reduces + notifies + waits + rounds; }
  // The rank's lines in the schedule dump: one per operation, and with a codegen profile at
  // most three synchronisation instructions per notify (barrier or drain, flush, dsb), an
  // invalidate per wait and a fence per store.
  std::uint64_t schedule_lines(bool codegen) const {
    return operations() + (codegen ? 3 * notifies + waits + transfers : 0);
  }
};

// Every rank's count, from the kernel's body run without the hardware: the problem is the
// run's (P, servers and core_num set), the layout the kernel's for it.
std::vector<OperationCount> count_operations(const RunRequest& request, const KernelSpec& kernel,
                                             const Problem& problem, const Layout& layout);
// One rank's count (all its blocks).
OperationCount count_rank_operations(const RunRequest& request, const KernelSpec& kernel,
                                     const Problem& problem, const Layout& layout, int rank);

// The signal cells, the records and the traces (the timeline's included) are estimated from the
// operations counted, rank by rank, until the total passes `limit`; a run whose every signal
// cell fits and that keeps neither records nor traces is not counted.
MemoryEstimate estimate_memory(const RunRequest& request, const KernelSpec& kernel,
                               const Problem& problem, const Layout& layout, std::uint64_t limit);

// 80 % of the machine's physical memory.
std::uint64_t default_memory_limit();

// Throws InputError naming the estimate, the limit and the way out when the run exceeds it.
void check_memory(const RunRequest& request, const KernelSpec& kernel, const Problem& problem,
                  const Layout& layout);

// Every SystemC thread of a run has its stack in a memory mapping of its own behind a guard
// page: two of the process's mappings, which Linux caps at vm.max_map_count (65530 by default,
// so about 32,000 threads). Past the cap SystemC's stack set-up fails and the run ends in
// std::bad_alloc. Each rank block's core has its thread from the start; a DMA engine makes its
// queues' threads the first time a transfer waits for a queue (DmaEngine), unless every
// transfer is timed whole with no set-up, when its queues are methods and take no stack.
struct MapBudget {
  std::uint64_t in_use = 0;  // the process's mappings now
  std::uint64_t limit = 0;   // the most it may have
};
// The process's budget as Linux tells it; none where it does not.
std::optional<MapBudget> process_map_budget();
// Throws InputError naming the threads, the mappings, the cap and the ways out when the run's
// cores' threads would take the process past `budget`: such a run is refused before anything
// is made.
void check_thread_stacks(const RunRequest& request, const Problem& problem,
                         const MapBudget& budget);
// The check the run's DMA engines call before making their queues' threads
// (Platform::Options::before_queue_threads): throws InputError, naming the cap and the ways
// out, once those threads would take the process past `budget` beside the cores' threads.
std::function<void()> queue_thread_guard(const RunRequest& request, const Problem& problem,
                                         const MapBudget& budget);

// "1.50 GiB": bytes in the largest binary unit that keeps the number at least one.
std::string format_bytes(std::uint64_t bytes);

}  // namespace ars
