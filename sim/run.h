// One simulated allreduce: build the platform, give every rank real input, run the kernel,
// check the result against the golden and collect what every rank did.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/api.h"
#include "models/platform/fault.h"
#include "models/platform/platform_config.h"
#include "models/records/rank_stats.h"
#include "models/records/schedule_log.h"

namespace ars {

struct KernelSpec;

struct RunRequest {
  PlatformConfig platform;
  std::string platform_origin;  // the config file the platform came from, as the report names it
  std::vector<int> devices;     // device of each rank; P = devices.size()
  Problem problem;
  std::string kernel = "mesh";
  const KernelSpec* kernel_spec = nullptr;  // runs this instead of the registry's `kernel`
  std::string vcd_path;                     // empty: no waveform
  bool record_schedule = false;
  // Keep every rank's per-round records and the dependency records the critical path, the
  // explanation and the timeline are drawn from (the JSON and the full report need them);
  // off, a run keeps only counts, so its memory does not grow with its length.
  bool keep_records = true;
  // With kept records: every round's record only for the first this many ranks (all their
  // blocks), the others' phases only; -1: for all.
  int round_records_ranks = -1;
  bool timing_only = false;  // no payload bytes, no golden check
  // Issue every 512 B burst of a DMA transfer in its own time even where nothing observes
  // them; by default a transfer is timed as one step with the same results.
  bool detailed_bursts = false;
  bool quiet = false;  // --quiet: the report is the summary only, no progress line
  double max_sim_time_ns = 1e10;
  // A run lasting over 2 s wall draws a progress line on stderr, rewritten in place: for a
  // terminal only (the command line sets it when stderr is one).
  bool progress = false;
  std::uint64_t memory_limit_bytes = 0;  // refuse a larger run; 0: 80 % of physical memory
  Faults faults;                         // injected on purpose, to provoke failures
  // Platform keys set on the command line: the report says whether each is limiting.
  std::vector<std::string> overridden_keys;
  std::string trace_path;          // empty: no timeline trace
  std::vector<int> trace_devices;  // the devices the trace shows; empty: all that take part
  std::vector<int> vcd_devices;    // the devices the VCD shows; empty: all that take part
};

// A bandwidth resource of the platform, as reports name it (its id is its index).
struct ResourceInfo {
  std::string place;  // "dev0.link_to_3", "dev1.memory_port"
  std::string key;    // the configuration key that sets its rate
};

struct Mismatch {
  int rank;
  std::uint64_t index;
  double got;
  double expected;
};

struct RunResult {
  RunRequest request;
  bool completed = false;
  bool checked = false;  // a golden comparison was made
  bool correct = false;
  std::string failure;  // deadlock, timeout or error report when not completed
  // Bad input found only once the simulation has run (a fault its rank never reached, an
  // output that could not be written): the command ends with it and exit code 2. Returned, not
  // thrown: an exception unwinding the frames SystemC's coroutines ran beside trips
  // AddressSanitizer (see .ci/run).
  std::string refused;
  std::vector<Mismatch> mismatches;  // the first few
  std::uint64_t mismatch_count = 0;
  // Every signal cell of every rank is zero after the run; the builtins promise it (their
  // epilogue clears the signal for the next call), so for them a residue is a failure.
  bool signal_clear = false;
  bool signal_must_clear = false;  // the kernel promises a clear signal (KernelSpec::clears_signal)
  std::string signal_residue;      // the first non-zero cell, when there is one
  std::vector<RankStats> ranks;    // with core_num > 1: blocks summed, the last block's rounds
  std::vector<RankStats> blocks;   // with core_num > 1: every block of every rank, rank by rank
  std::vector<ScheduleLog> schedule;       // every core's executed operations, rank by rank
  double device_time_ns = 0;               // latest finish minus earliest start
  std::uint64_t device_time_ps = 0;        // the same, exact
  std::vector<ResourceInfo> resources;     // by id, as TransferLimit::resource refers to them
  std::uint64_t dma_setup_ps = 0;          // every transfer's set-up (TransferRecord)
  std::uint64_t simulated_operations = 0;  // TLM transactions and kernel operations
  double wall_seconds = 0;
  bool whole_transfers = false;  // DMA transfers were timed as one step each
  // Why the run went burst by burst after trying transfers whole: where two met first.
  std::string bursts_because;
  // With whole_transfers: the resources whose transfers still ran burst by burst, as the
  // tries before met there (empty: none did).
  std::vector<std::string> bursts_through;
  // With whole_transfers: how many transfers ran burst by burst as they met in a try before.
  std::size_t bursts_of = 0;
  // The tries made before this run, which met (0: none), and the wall time they took: a run
  // whose tries cost more than they save says so (--detailed-bursts skips them).
  int tries_before = 0;
  double tries_wall_seconds = 0;
  double rtol = 0;
  double atol = 0;

  // Every core's records: with core_num > 1 every block of every rank, rank by rank (block b of
  // rank r at r * blocks_per_rank() + b), else the ranks.
  const std::vector<RankStats>& units() const { return blocks.empty() ? ranks : blocks; }
  int blocks_per_rank() const {
    return blocks.empty() ? 1 : static_cast<int>(blocks.size() / ranks.size());
  }
};

// Throws InputError for a problem the platform or kernel cannot take. Call once per process.
RunResult run_allreduce(const RunRequest& request);

// The kernel the request runs, and its problem as every rank sees it: P and each rank's
// server from the devices. Throws InputError for a core count the platform or kernel refuses.
const KernelSpec& run_kernel(const RunRequest& request);
Problem run_problem(const RunRequest& request);

// One rank's record over its blocks: counts summed, from its first block's start to its last
// block's finish, and the rounds of the block that finished last (the one that sets its time).
RankStats sum_blocks(const std::vector<RankStats>& blocks, int rank);

// Deterministic input of rank `rank`, element `index`: values that make FP16 sums exact.
double input_value(const Problem& problem, int rank, std::uint64_t index);

}  // namespace ars
