// One AI vector core running one rank's kernel. It executes the kernel vocabulary (Rank) on
// the device's hardware: DMA transfers through its engine, reduces on its vector unit, signal
// notifies as posted atomic writes through the interconnect, and waits as polling of its own
// cell that costs a poll period per look but is woken by events, not a simulated busy loop.
// It knows nothing about which kernel it runs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "kernels/api.h"
#include "models/device/dma_engine.h"
#include "models/device/global_memory.h"
#include "models/device/instant_events.h"
#include "models/device/unified_buffer.h"
#include "models/fabric/bandwidth_resource.h"
#include "models/platform/clock.h"
#include "models/platform/fault.h"
#include "models/platform/memory_map.h"
#include "models/platform/platform_config.h"
#include "models/records/rank_stats.h"
#include "models/records/run_progress.h"
#include "models/records/schedule_log.h"
#include "models/records/trace_sink.h"

namespace ars {

struct AtomicWrite;

using KernelBody = std::function<void(Rank&)>;

// Where a rank is stuck when the simulation can go no further. Marked at every wait that
// blocks, so it holds what names the cell, not words: the deadlock report makes those.
struct BlockedWait {
  bool blocked = false;
  WaitCmp cmp = WaitCmp::Eq;
  int signal = 0;  // the signal's index in the memory map
  int row = 0;
  int col = 0;
  std::int32_t expected = 0;
  std::uint64_t since_ps = 0;      // the wait began
  std::uint64_t last_look_ps = 0;  // it last looked and blocked again
};

class VectorCore : public sc_core::sc_module, public Rank {
 public:
  tlm_utils::simple_initiator_socket<VectorCore> to_noc;  // scalar accesses: signal cells
  tlm_utils::simple_initiator_socket<VectorCore> to_ub;   // the vector unit's operands (DMI)

  struct Binding {
    int rank;
    const std::vector<int>* rank_devices;  // device of every rank, shared by all ranks
    const Problem* problem;
    const MemoryMap* memory;
    KernelBody body;
    int block = 0;  // the SPMD block this core runs (one of problem->core_num)
  };
  VectorCore(sc_core::sc_module_name name, const PlatformConfig& config, Binding binding,
             UnifiedBuffer& ub, DmaEngine& dma, GlobalMemory& gm, InstantEvents& instants);
  SC_HAS_PROCESS(VectorCore);

  const RankStats& stats() const { return stats_; }
  const BlockedWait& blocked() const { return blocked_; }
  const std::string& failure() const { return failure_; }
  // Hands the records over once the simulation has ended, leaving the core's empty.
  RankStats release_stats();
  ScheduleLog release_schedule() { return std::move(schedule_); }
  void record_schedule(bool on) { record_schedule_ = on; }
  // What the core keeps beyond its counts and the round in progress (which gathers the
  // round's costs).
  struct KeptRecords {
    bool records = true;  // every round's record and the dependency records (spans, links)
    bool rounds = true;   // with `records`: every round's record; off, only every round's phase
    bool sync_records = false;  // with `records`: every notify's and wait's full record too
  };
  void keep_records(const KeptRecords& kept) { kept_ = kept; }
  // Publishes how far this rank has come (nullptr: nowhere).
  void report_progress(RunProgress* progress) { progress_ = progress; }
  // Keeps the faults aimed at this rank; the others are ignored.
  void inject_faults(const Faults& faults);
  bool stalled() const { return find_fault(Fault::Kind::Stall, 0) != nullptr; }
  void attach_trace(TraceSink* sink, const std::string& scope);

  // Rank
  int rank() const override { return binding_.rank; }
  int ranks() const override { return static_cast<int>(binding_.rank_devices->size()); }
  int block() const override { return binding_.block; }
  int blocks() const override { return binding_.problem->core_num; }
  const Problem& problem() const override { return *binding_.problem; }
  Tensor input() const override;
  Tensor output() const override;
  Tensor window(const std::string& name) const override;
  Signal signal(const std::string& name) const override;
  std::uint64_t ub_bytes() const override { return ub_.usable_bytes(); }
  Tile alloc(std::uint64_t elements, DType dtype) override;
  void release(const Tile& tile) override;
  void load(const Tile& dst, const Tensor& src, std::uint64_t offset, std::uint64_t count) override;
  void store(const Tile& src, const Tensor& dst, std::uint64_t offset,
             std::uint64_t count) override;
  Transfer remote_load_async(const Tile& dst, const Tensor& window, int peer, std::uint64_t offset,
                             std::uint64_t count) override;
  Transfer remote_store_async(const Tile& src, const Tensor& window, int peer, std::uint64_t offset,
                              std::uint64_t count, StoreOp op) override;
  void sync(const Transfer& transfer) override;
  void reduce(const Tile& acc, const Tile& other, std::uint64_t count) override;
  void notify(const Signal& signal, int peer, int row, int col, std::int32_t value,
              NotifyOp op) override;
  void wait(const Signal& signal, int row, int col, std::int32_t expected, WaitCmp cmp) override;
  void begin_round(const char* phase) override;

 private:
  void run();
  void end_of_elaboration() override;
  Transfer start_transfer(const char* op, DmaEngine::Direction direction, const Tile& tile,
                          const Tensor& tensor, int peer, std::uint64_t offset, std::uint64_t count,
                          bool atomic_add);
  // Posted stores (dma.posted_stores): the waits that keep them invisible to the kernel.
  void await_tile_read(const Tile& tile);  // before the tile is rewritten or released
  void await_gm(std::uint64_t begin, std::uint64_t end);  // before those bytes are accessed
  void drain_posted();  // the pipe barrier before a notify, and the kernel's end
  // The invalidate a wait-all loop owes, charged when the core next does something else.
  void settle_invalidate();
  // Records one synchronisation instruction of `span` in the current round.
  void count_sync(SyncInstruction instruction, const sc_core::sc_time& span);
  void await_posted(std::size_t index);
  const TensorInfo& tensor_info(const Tensor& tensor) const;
  const SignalInfo& signal_info(const Signal& signal, int row, int col) const;
  int peer_device(int peer) const;
  RoundRecord& round();
  int round_index() const;  // -1 before the kernel's first round
  // Records the core's time from `start_ps` to now as a span of its dependency record.
  void mark(CoreSpan::Kind kind, std::uint64_t start_ps, std::uint32_t ref);
  void spend(const sc_core::sc_time& span, std::uint64_t RoundRecord::*bucket);
  // The core's time: the simulated time, or later while it runs ahead. Running ahead (when
  // the run times its transfers whole and nothing traces the core), the core passes time
  // spent on its own (its vector unit, the costs before a notify leaves, a wait's answer, the
  // transfers between its UB and its own memory: of its input and output when payloads move,
  // of its windows too without them) without waiting for it, and catches up with the
  // simulated time before anything another core may see or change: a wait's look at its cell
  // (unsatisfied as of the simulated time, it sleeps for that look instead), a notify's
  // atomic, a transfer to or from a peer. It saves the thread a resume for each of those
  // steps; what it reserves early on its memory's port is checked against what peers ask there
  // later (see BandwidthResource).
  const sc_core::sc_time& now();
  void pass(const sc_core::sc_time& until);  // the core's time moves on to `until`
  void catch_up();                           // the simulated time reaches the core's
  void await(std::uint64_t ticket, DmaEngine::Milestone milestone);
  void log(const std::string& line);
  const Fault* find_fault(Fault::Kind kind, std::uint64_t index) const;

  Clock clock_;
  const PlatformConfig& config_;
  Binding binding_;
  UnifiedBuffer& ub_;
  DmaEngine& dma_;
  GlobalMemory& gm_;
  InstantEvents& instants_;
  std::uint8_t* ub_data_ = nullptr;
  sc_core::sc_time pipe_barrier_cost_;
  sc_core::sc_time drain_cost_;
  sc_core::sc_time flush_cost_;
  sc_core::sc_time atomic_cost_;
  sc_core::sc_time dsb_cost_;
  bool invalidate_owed_ = false;
  // When the last notify ended: TNOTIFY closes with its own pipe barrier, so a pipe barrier
  // the codegen emits before a notify that follows at once (a notify loop) finds the pipes idle.
  std::uint64_t notify_end_ps_ = UINT64_MAX;
  sc_core::sc_time poll_period_;
  sc_core::sc_time invalidate_cost_;
  sc_core::sc_time reduce_startup_;
  sc_core::sc_time launch_offset_;
  sc_core::sc_time launch_setup_;
  // Looked at by every operation: kept beside the costs, in the lines a resumed rank reads
  // first (its state is cold in the caches each time its thread resumes).
  bool record_schedule_ = false;
  bool run_ahead_ = false;
  sc_core::sc_time local_time_;
  sc_core::sc_event look_;  // a blocked wait's next look (GlobalMemory::Watcher)
  // How far a core runs ahead at most: its own memory's port keeps only its last few runs of
  // requests (BandwidthResource), so a core far ahead would make a peer's read there a conflict.
  // In transfers issued ahead (half the runs a resource keeps), and in time: 8 us passes a ring
  // round's pull, which lands some microseconds after it leaves (at 2 us a core caught up at
  // most pulls' landing, one resume more a rank-round, with the same answers).
  static constexpr std::uint64_t kRunAheadPs = 8'000'000;  // 8 us
  static constexpr int kTransfersAhead = BandwidthResource::kRunsKept / 2;
  int transfers_ahead_ = 0;
  KeptRecords kept_;
  RunProgress* progress_ = nullptr;
  TraceSink* sink_ = nullptr;
  Faults faults_;
  AtomicWrite* notify_atomic_;  // owned by notify_trans_

  struct PostedStore {
    std::uint64_t ticket;
    std::uint64_t ub_begin, ub_end;  // the tile's bytes MTE3 reads
    std::uint64_t gm_begin, gm_end;  // global addresses it writes
  };
  std::vector<PostedStore> posted_;

  RankStats stats_;
  int rounds_begun_ = 0;
  // The notifies' transaction, made once: a payload allocates its extension table when made.
  tlm::tlm_generic_payload notify_trans_;
  BlockedWait blocked_;
  std::string failure_;
  ScheduleLog schedule_;
  int phase_var_ = -1;
  int round_var_ = -1;
};

}  // namespace ars
