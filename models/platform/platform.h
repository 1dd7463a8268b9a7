// A whole machine for one run: the configured devices, the interconnect between them, and a
// vector core on each device that takes part, each running the same kernel body as its rank.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "kernels/api.h"
#include "models/device/device.h"
#include "models/fabric/interconnect.h"
#include "models/platform/fault.h"
#include "models/platform/memory_map.h"
#include "models/platform/platform_config.h"
#include "models/records/run_progress.h"
#include "models/records/trace_sink.h"

namespace ars {

class Platform : public sc_core::sc_module {
 public:
  struct Options {
    bool timing_only = false;      // move no payload bytes (no golden check possible)
    bool record_schedule = false;  // keep every rank's executed operations
    // Keep every rank's per-round and dependency records (RankStats); off, only the counts.
    bool keep_records = true;
    // With kept records: also every notify's and wait's full record (the timeline shows them).
    bool keep_sync_records = false;
    // With kept records: every round's record only for the first this many ranks (each with
    // all its blocks), the others keep only the phases; -1: for all.
    int round_records_ranks = -1;
    TraceSink* trace = nullptr;
    bool whole_transfers = false;  // time each DMA transfer as one step (see DmaEngine)
    // With whole_transfers: the resources (by place, "spine6.down_to_leaf0", "dev3.memory_port")
    // where an earlier try met a conflict; transfers crossing one run burst by burst.
    std::vector<std::string> burst_resources;
    // And the transfers (as flows, transfer_flow) that met in an earlier try.
    std::vector<std::uint64_t> burst_transfers;
    // A conflict does not stop the run: it goes on to its end (on times no longer exact),
    // noting every transfer that meets another; unless too many meet (see Outcome), or its
    // bursts would make fewer than `survey_burst_steps` steps for each it makes
    // (burst_steps_per_whole_step): running those burst by burst would then cost little more.
    bool survey_meetings = false;
    double survey_burst_steps = 0;
    RunProgress* progress = nullptr;  // where the ranks publish how far they have come
    // Called before a DMA engine makes its queues' threads (see DmaEngine); may throw to refuse.
    std::function<void()> before_queue_threads;
    Faults faults;  // injected on purpose (see models/platform/fault.h)
    PathCacheLimit path_cache;
  };
  // `rank_devices[r]` is the device rank r runs on. The models keep a reference to `config`,
  // which must outlive the platform: a temporary would leave them reading a dead object.
  Platform(sc_core::sc_module_name name, const PlatformConfig& config,
           std::vector<int> rank_devices, const Problem& problem, const Layout& layout,
           KernelBody body, Options options);
  Platform(sc_core::sc_module_name name, PlatformConfig&& config, std::vector<int> rank_devices,
           const Problem& problem, const Layout& layout, KernelBody body, Options options) = delete;
  ~Platform() override;

  struct Outcome {
    bool completed = false;  // every rank finished its kernel
    std::string failure;     // a rank stopped on an error (for example a UB overflow)
    std::string deadlock;    // ranks blocked with nothing left to wake them
    std::string timeout;     // the simulated-time limit was reached first
    // Transfers timed whole met on a shared resource: the run stopped, its times are not
    // exact; redo it burst by burst.
    bool whole_transfers_conflicted = false;
    std::string conflict;  // where they met first (DmaEngine::conflict)
    // Every resource where requests met at that instant; whether two notifies met among them
    // (running transfers burst by burst does not part those).
    std::vector<std::string> conflict_places;
    std::vector<std::uint64_t> conflict_transfers;  // the transfers that met, as flows, sorted
    // The share of the bytes the run moved through its resources that crossed those where
    // requests met (a link or a memory port moving little, or one every transfer crosses).
    double met_bytes_share = 0;
    // More than one in kMetShare of the transfers made met: running only those burst by
    // burst would not pay.
    bool too_many_met = false;
    bool notifies_met = false;
    bool memory_port_met = false;  // a memory port is among the places
    std::size_t resources = 0;     // memory ports and links the run had used
  };
  Outcome run(const sc_core::sc_time& limit);

  int ranks() const { return static_cast<int>(rank_devices_.size()); }
  // How many steps the run so far would have made burst by burst (each burst a step where a
  // transfer timed whole is one) for each step it made.
  double burst_steps_per_whole_step() const;
  const MemoryMap& memory() const { return memory_; }
  VectorCore& core(int rank) { return *devices_[rank_devices_[rank]]->core; }
  // SPMD blocks per rank (the problem's core_num) and the core running one of them.
  int blocks() const { return problem_.core_num; }
  VectorCore& core(int rank, int block) { return devices_[rank_devices_[rank]]->block_core(block); }
  Interconnect& interconnect() { return noc_; }
  Device& device(int index) { return *devices_[index]; }
  // Every bandwidth resource, indexed by its id: each device's memory port, then the links in
  // the order they were first used.
  std::vector<const BandwidthResource*> resources() const;

  // Backdoor access for setting inputs and checking results, outside simulated time.
  void write_tensor(int rank, int tensor, const std::vector<std::uint8_t>& bytes);
  std::vector<std::uint8_t> read_tensor(int rank, int tensor);
  std::int32_t read_cell(int rank, int signal, int row, int col);
  // The rank's first non-zero signal cell in signal, row, column order, as
  // "signal[row,col] = value"; empty when every cell is zero.
  std::string first_nonzero_cell(int rank);

 private:
  static constexpr std::uint64_t kMetShare = 16;
  bool too_many_met() const;
  // A surveying run's meeting: once in a while, stops the run soon when too many of the
  // transfers made have met, or its bursts have come to cost fewer than survey_burst_steps
  // steps for each.
  void surveyed_meeting();
  std::string describe_blocked_ranks();
  std::string describe_mixed_write(int rank, std::uint64_t address,
                                   const sc_core::sc_time& when) const;

  std::vector<int> rank_devices_;
  Problem problem_;
  MemoryMap memory_;
  Interconnect noc_;
  InstantEvents instants_;  // before the devices, whose processes wait on its events
  std::vector<std::unique_ptr<Device>> devices_;
  TraceSink* trace_;
  sc_core::sc_time last_landing_;  // of the signal updates landed after the simulation
  std::uint64_t burst_bytes_;
  double survey_burst_steps_;
  std::uint64_t surveyed_meetings_ = 0;
  sc_core::sc_time next_survey_check_;  // past twice the time of the check before
  bool survey_given_up_ = false;
  bool too_many_seen_ = false;  // the survey gave up for too many transfers meeting
};

}  // namespace ars
