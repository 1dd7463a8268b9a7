// A device's global memory (HBM): holds tensors, windows and INT32 signal cells. Accesses
// occupy one memory port of the configured bandwidth and pay a read or write latency; signal
// updates are posted and land when they arrive. Storage costs only what a run touches: bytes
// live in pages allocated (zeroed) on first write, signal cells in a table of the cells ever
// written; whatever was never written reads as zero.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/fabric/bandwidth_resource.h"
#include "models/fabric/transaction.h"
#include "models/platform/clock.h"
#include "models/platform/platform_config.h"
#include "models/records/rank_stats.h"
#include "models/records/trace_sink.h"
#include "models/tables/address_map.h"
#include "models/tables/block_array.h"

namespace ars {

class GlobalMemory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<GlobalMemory> from_noc;

  GlobalMemory(sc_core::sc_module_name name, const PlatformConfig& config);

  // Reserves `bytes` (reading as zero) before the simulation starts; returns the local
  // address. `backed` = false reserves addresses without storage (timing-only runs).
  std::uint64_t allocate(std::uint64_t bytes, std::uint64_t alignment, bool backed = true);
  std::uint64_t allocated_bytes() const { return top_; }

  // A core waiting on a cell here: its `look` event is notified for its first look (`begin`
  // plus a whole number of `period`s, `begin` itself at the earliest) at or after the next
  // posted signal update that lands in this memory, whichever cell it changes. The update's
  // landing time is known when it is posted, so the look is notified then, and again by any
  // later post landing sooner (an event keeps its earliest notification); the core, woken,
  // calls unwatch(). One event, at the look, saves the core a resume at the update itself.
  // A core watches right after a look (poll_cell), which has landed every update due by now.
  struct Watcher {
    sc_core::sc_event* look;
    sc_core::sc_time begin;
    sc_core::sc_time period;
  };
  void watch(const Watcher& watcher);
  void unwatch(const sc_core::sc_event* look);
  std::int32_t read_cell(std::uint64_t address) const;
  // A core's look at a cell while it waits: as read_cell once the updates landed by now are
  // applied, and a traced memory shows the cell.
  std::int32_t poll_cell(std::uint64_t address);
  // Posted updates are applied when someone next looks at the cells, rather than by a process
  // of the memory's own at each landing: a look at a cell, the next post, the end of the
  // simulation (up to its time limit, as had it gone on). Each is applied as at its landing
  // time, in landing order. Applies those landing by `until`; returns the last one's landing
  // time (zero: none).
  sc_core::sc_time land(const sc_core::sc_time& until);
  // The lowest address in [begin, end) of a cell that holds a non-zero value.
  std::optional<std::uint64_t> first_nonzero_cell(std::uint64_t begin, std::uint64_t end) const;
  // The first signal cell written with both AtomicAdd and Set, which the signal protocol
  // forbids (a Set can erase counts in flight): its address and when the second op landed.
  struct MixedWrite {
    std::uint64_t address;
    sc_core::sc_time when;
  };
  const std::optional<MixedWrite>& mixed_write() const { return mixed_write_; }
  // Remembers, per signal cell, the notify that last changed it (the critical path follows
  // it); off, a cell costs only its value. Set before the simulation starts.
  void keep_writers(bool on) { keep_writers_ = on; }
  // The notify that last changed a signal cell, and when it landed (nullptr: none has, or
  // writers are not kept).
  struct CellWrite {
    std::uint64_t landed_ps;
    NotifyId notify;
  };
  const CellWrite* last_write(std::uint64_t address) const;

  // Functional access outside simulated time (inputs, results); false when out of range.
  bool read_bytes(std::uint64_t address, std::uint8_t* data, std::uint64_t bytes) const;
  bool write_bytes(std::uint64_t address, const std::uint8_t* data, std::uint64_t bytes);

  // The signal's cells that the run writes or a core polls become the sink's variables, in
  // row-major order, when flush_trace() runs after the simulation: a [2(P-1), P] signal at
  // thousands of ranks has millions of cells, of which a kernel touches a few thousand.
  void trace_cells(TraceSink* sink, const std::string& scope, const std::string& signal,
                   std::uint64_t address, int rows, int cols);
  void flush_trace();
  // Signal updates in flight, and the entries holding them (runs of updates, see PostedRun).
  std::uint64_t posted_updates();
  std::size_t posted_entries();
  BandwidthResource& port() { return port_; }
  const BandwidthResource& port() const { return port_; }
  BandwidthResource& atomics() { return atomics_; }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // Reads or writes one burst's bytes, [address, address + length), the transaction's data
  // from `offset` on, through the port: a transaction's whole length, or one burst of a train.
  [[gnu::always_inline]] inline void move_bytes(tlm::tlm_generic_payload& trans,
                                                std::uint64_t address, std::uint64_t offset,
                                                std::uint64_t length, const AtomicWrite* atomic,
                                                BurstTiming* timing, sc_core::sc_time& delay);
  // A transaction carrying a whole transfer's bursts (see BurstTrain): serves them one after
  // another. Apart from b_transport(), so that a burst sent alone has a frame as small as before.
  [[gnu::noinline]] void serve_train(tlm::tlm_generic_payload& trans, std::uint64_t address,
                                     std::uint64_t length, const AtomicWrite* atomic,
                                     BurstTiming& timing);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  // The first look of `watcher` at or after `landing`.
  static sc_core::sc_time look_after(const Watcher& watcher, const sc_core::sc_time& landing);
  bool in_range(std::uint64_t address, std::uint64_t length) const;
  // The page holding `address`, allocated and zeroed on first use.
  std::uint8_t* page(std::uint64_t address);
  // Calls visit(pointer, bytes) for each page-sized piece of [address, address + length);
  // pointer is nullptr for a page never written when `allocate_pages` is false.
  template <typename Visit>
  void for_each_piece(std::uint64_t address, std::uint64_t length, bool allocate_pages,
                      Visit visit);

  struct PostedWrite {
    sc_core::sc_time arrival;
    std::uint64_t sequence;  // issue order: which updates a run may hold (see PostedRun)
    std::uint64_t address;
    std::int32_t value;
    AtomicWrite::Kind kind;
    NotifyId source;
  };
  // Posted updates that follow each other in issue order, each `arrival_step` after the one
  // before, `address_step` apart, with the same value and kind, from consecutive notifies of
  // one block: a core posting a loop of notifies faster than the memory applies them (one
  // every gm.atomic_ns) queues thousands such. A run holds them in one entry, so the queue
  // costs what its runs do, not its updates.
  struct PostedRun {
    PostedWrite head;     // the next to land
    std::uint64_t order;  // head.source.order(), kept for the heap's comparisons
    std::uint64_t count;
    sc_core::sc_time arrival_step;
    std::int64_t address_step;
    bool stepped;  // the steps are set: the run has had two updates
    // The earliest arrival lands first; updates arriving at the same instant land in the
    // order of their notifies (sender rank, block, then its count), not in the order SystemC
    // ran their senders, so that a run timed whole lands them as the run burst by burst does.
    // The heap puts the first on top.
    bool operator<(const PostedRun& other) const {
      if (head.arrival != other.head.arrival) return head.arrival > other.head.arrival;
      if (order != other.order) return order > other.order;
      return head.sequence > other.head.sequence;
    }
    // The update issued right after the run's last one, if it continues the run.
    bool extends(const PostedWrite& next) const;
    void append(const PostedWrite& next);
    void advance();  // drops the head
  };
  void post(const PostedWrite& write);
  // The run on top of the heap, its head moved on, goes down to where its new head belongs.
  void sink_top();
  // The next update to land is the open run's head rather than the heap's top.
  bool open_run_lands_next() const;
  // When the next update lands (false: none is in flight).
  bool next_posted(sc_core::sc_time& arrival) const;

  // What every access reads and writes comes first, in as few cache lines as may be: a
  // memory is cold in the caches each time one of its users resumes.
  Clock clock_;
  sc_core::sc_time read_latency_;
  sc_core::sc_time write_latency_;
  sc_core::sc_time atomic_hold_;
  std::uint64_t backed_top_ = 0;  // end of the backed addresses
  std::uint64_t top_ = 0;
  std::uint64_t posted_sequence_ = 0;
  bool keep_writers_ = true;
  TraceSink* sink_ = nullptr;
  // Updates in flight: runs that can no longer grow, in a heap, and the run the latest update
  // joined, which the next may extend (its head stays where the heap would put it).
  std::vector<PostedRun> posted_;
  std::optional<PostedRun> open_run_;
  // Eight bytes: a run may write millions of cells. Value-initialised (zero) when created.
  struct Cell {
    std::int32_t value;
    std::uint32_t op : 2;       // the AtomicWrite::Kind of the first op that wrote it
    std::uint32_t writer : 30;  // its last writer's index in writers_, when writers are kept
  };
  AddressMap<Cell> cells_;                              // by address
  std::vector<std::unique_ptr<std::uint8_t[]>> pages_;  // by address / page size
  BandwidthResource port_;
  BandwidthResource atomics_;  // signal atomics, applied one at a time: each holds it atomic_hold_
  std::vector<Watcher> watchers_;
  static constexpr std::size_t kWriterLimit = std::size_t{1} << 30;  // Cell::writer's range
  [[noreturn]] static void throw_too_many_cells();
  BlockArray<CellWrite> writers_;  // by Cell::writer, when kept
  struct TracedSignal {
    std::string scope;
    std::string name;
    std::uint64_t address;
    int rows;
    int cols;
  };
  struct CellChange {
    std::uint64_t address;
    std::uint64_t time_ps;
    std::int32_t value;
  };
  std::vector<TracedSignal> traced_signals_;
  std::vector<CellChange> cell_changes_;  // in the order they landed
  std::set<std::uint64_t> polled_cells_;
  std::optional<MixedWrite> mixed_write_;
};

}  // namespace ars
