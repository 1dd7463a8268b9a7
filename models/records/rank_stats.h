// What one rank did and when, as the reports show it.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/tables/block_array.h"

namespace ars {

// The synchronisation instructions a codegen profile may emit around signals, each charged
// with its own cost key (see Codegen in models/platform/platform_config.h).
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
// A round's synchronisation instructions, by SyncInstruction: inside its barrier_ps (the store
// fence: inside its transfer_ps).
using RoundSync = std::array<SyncCost, kSyncInstructions>;

// A round's phase name, kept as its index in the process's table of phase names: a run has a
// handful of phases and may have millions of rounds.
class PhaseName {
 public:
  PhaseName() = default;  // ""
  // Converts from and to a string implicitly, so a phase reads and compares as its name.
  PhaseName(const char* name);
  PhaseName(const std::string& name) : PhaseName(name.c_str()) {}
  const std::string& str() const;
  operator const std::string&() const { return str(); }
  std::size_t size() const { return str().size(); }
  const char* c_str() const { return str().c_str(); }
  bool operator==(const PhaseName& other) const { return id_ == other.id_; }

 private:
  std::uint32_t id_ = 0;
};
bool operator==(const PhaseName& phase, const char* name);
std::ostream& operator<<(std::ostream& out, const PhaseName& phase);

// Each round's phase, kept only where it changes: a rank's consecutive rounds mostly share
// their phase (a ring's P - 1 rounds of reduce-scatter, then P - 1 of all-gather).
class RoundPhases {
 public:
  void push_back(PhaseName phase) {
    if (runs_.empty() || !(runs_.back().phase == phase))
      runs_.push_back({static_cast<std::uint32_t>(rounds_), phase});
    ++rounds_;
  }
  std::size_t size() const { return rounds_; }
  const PhaseName& operator[](std::size_t round) const;

 private:
  struct Run {
    std::uint32_t first;  // the run's first round
    PhaseName phase;
  };
  std::vector<Run> runs_;
  std::size_t rounds_ = 0;
};

struct RoundRecord {
  int round = 0;
  PhaseName phase;
  std::uint64_t start_ps = 0;
  std::uint64_t barrier_ps = 0;   // in notify and wait (fixed costs and waiting for peers)
  std::uint64_t transfer_ps = 0;  // in DMA transfers
  std::uint64_t reduce_ps = 0;    // on the vector unit
  std::uint64_t bytes = 0;        // DMA payload moved, local and remote
  std::uint64_t remote_bytes = 0;
};

// What set a transfer's duration: the rate its DMA queue streams at, or a resource on its path
// (a link direction, a memory port) at its own rate or busy with another transfer's bytes.
struct TransferLimit {
  enum class Kind : std::uint8_t { QueueRate, ResourceRate, QueuedBehindFlow };
  Kind kind = Kind::QueueRate;
  int resource = -1;  // a resource id (RunResult::resources) unless QueueRate
};

// The run's dependency record: compact, string-free, kept for every run (the critical path,
// the limiting resources and the trace are derived from it afterwards). Narrow fields: a run
// may keep millions.
struct TransferRecord {
  enum class Op : std::uint8_t { Load, Store, RemoteLoad, RemoteStore };
  std::uint64_t submit_ps = 0;  // handed to the DMA engine
  std::uint64_t start_ps = 0;   // taken by a queue
  std::uint64_t left_ps = 0;    // its last burst left the queue
  std::uint64_t finish_ps = 0;  // its last byte landed
  // finish = start + set-up + streaming at the queue's rate + held + latency, where `held` is
  // how long the limiting resource kept the last burst beyond the queue's rate. The set-up is
  // the same for every transfer (RunResult::dma_setup_ps).
  std::uint64_t held_ps = 0;
  std::uint64_t latency_ps = 0;
  std::uint32_t bytes = 0;  // a tile's: it fits in the unified buffer
  int peer = 0;             // the rank whose memory it reads or writes
  int round = -1;
  std::int16_t queue = -1;  // the DMA queue that ran it (dma.queues is at most 1024)
  Op op = Op::Load;
  bool misaligned = false;  // streamed at dma.misaligned_rate_factor of the rate
  TransferLimit limit;      // QueueRate when nothing held the last burst
};

// Where a walk through a log last found an entry's round (see RoundChanges), so that the next
// entry's, or the one before, is found without a search.
struct RoundCursor {
  std::size_t change = 0;
  std::size_t jump = 0;
};

// Walks a packed log in index order, reading every entry back by value.
template <typename Log, typename Entry>
class LogIterator {
 public:
  LogIterator(const Log& log, std::size_t index) : log_(&log), index_(index) {}
  Entry operator*() { return log_->read(index_, cursor_); }
  LogIterator& operator++() {
    ++index_;
    return *this;
  }
  bool operator!=(const LogIterator& other) const { return index_ != other.index_; }

 private:
  const Log* log_;
  std::size_t index_;
  RoundCursor cursor_;
};

// What the packed logs share: their entries by index, read back by value, and in order.
template <typename Log, typename Entry, typename Packed>
class PackedLog {
 public:
  std::size_t size() const { return packed_.size(); }
  bool empty() const { return packed_.empty(); }
  Entry back() const { return static_cast<const Log&>(*this)[size() - 1]; }
  // An entry read in a walk: a log that keeps rounds (TransferLog, SpanLog) reads on from the
  // cursor.
  Entry read(std::size_t index, RoundCursor&) const {
    return static_cast<const Log&>(*this)[index];
  }
  LogIterator<Log, Entry> begin() const { return {static_cast<const Log&>(*this), 0}; }
  LogIterator<Log, Entry> end() const { return {static_cast<const Log&>(*this), size()}; }

 protected:
  static constexpr std::uint32_t kApart = UINT32_MAX;  // a time kept apart, not as an offset
  BlockArray<Packed> packed_;
};

// Times of a log's entries kept as 32-bit offsets from the first time of each block of 64
// entries, so an entry stores 4 bytes of a time instead of 8.
class TimeBases {
 public:
  // Entry `index`'s time as an offset, false when it does not fit; call once per entry, in
  // order of index.
  bool offset(std::size_t index, std::uint64_t time, std::uint32_t& offset);
  std::uint64_t time(std::size_t index, std::uint32_t offset) const {
    return bases_[index / kBlock] + offset;
  }

 private:
  static constexpr std::size_t kBlock = 64;
  std::uint64_t last_base_ = 0;  // bases_.back(), read by every entry without the vector's line
  std::vector<std::uint64_t> bases_;
};

// The round of each of a log's entries, kept only where it changes: a rank's entries come in
// the order of its rounds, so a round costs the index of its first entry (4 bytes), not a field
// per entry; the round itself is kept only where it is not the one after the round before.
class RoundChanges {
 public:
  static constexpr std::size_t kIndexLimit = std::size_t{1} << 32;  // entries below this fit
  // Entry `index`'s round; call once per entry, in order of index. Throws std::length_error
  // for an index of kIndexLimit or more.
  void add(std::size_t index, int round) {
    if (firsts_.empty() || last_round_ != round) {
      if (index >= kIndexLimit) throw_too_many();
      if (firsts_.empty() || round != last_round_ + 1)
        jumps_.push_back({static_cast<std::uint32_t>(firsts_.size()), round});
      firsts_.push_back(static_cast<std::uint32_t>(index));
      last_round_ = round;
    }
  }
  // Entry `index`'s round, read on from the cursor, which it moves: in a walk each entry's
  // round is the cursor's or the one beside it; any other entry is found by a search.
  int round(std::size_t index, RoundCursor& cursor) const;

 private:
  [[noreturn]] static void throw_too_many();
  struct Jump {
    std::uint32_t change;  // the index in firsts_ of a change to a round not following the last
    int round;
  };
  std::vector<std::uint32_t> firsts_;  // each change's first entry
  std::vector<Jump> jumps_;            // by change
  int last_round_ = 0;
};

// One packed transfer record (see TransferLog).
struct TransferLogEntry {
  std::uint32_t submit_ps;  // an offset in submits_; for a record kept whole, its index in whole_
  std::uint32_t shape;      // the index in shapes_, kQueued and kHeld set when queued_ and
                            // held_ have its delays; kWhole for a record kept whole
};

// A rank's transfer records by ticket, packed to 8 bytes each (a run may keep millions): the
// submit time as a 32-bit offset (see TimeBases), the round only where it changes
// (RoundChanges), and what a rank's transfers mostly share (size, peer, op, queue, latency,
// limit, how long the queue streamed it) as an index in the log's table of such shapes. The
// landing is not kept: a transfer lands its latency after its last burst left and was held
// (finish = left + held + latency). The two delays most transfers do not have (waiting for the
// queue, held beyond its rate) are kept beside the entries, each apart and only for those that
// have it (8 bytes: the ticket and the delay); a record whose offsets do not fit, or whose
// landing does not follow from the rest, is kept whole. Every record reads back exactly.
class TransferLog : public PackedLog<TransferLog, TransferRecord, TransferLogEntry> {
 public:
  void push_back(const TransferRecord& record);
  TransferRecord operator[](std::size_t ticket) const {
    RoundCursor cursor;
    return read(ticket, cursor);
  }
  TransferRecord read(std::size_t ticket, RoundCursor& cursor) const;

 private:
  // What the transfers of a rank mostly have in common, compared as a tuple.
  struct Shape {
    std::uint32_t bytes;
    std::uint32_t latency_ps;
    std::uint32_t streamed_ps;  // left - start: the set-up and the queue's rate for these bytes
    std::int32_t peer;
    std::int32_t resource;
    std::int16_t queue;
    std::uint8_t flags;  // op, misaligned, limit kind
    bool operator<(const Shape& other) const;
    bool operator==(const Shape& other) const;
  };
  struct Delay {
    std::uint32_t index;  // the ticket (RoundChanges bounds it)
    std::uint32_t ps;
  };
  static constexpr std::uint32_t kWhole = UINT32_MAX;
  static constexpr std::uint32_t kQueued = 1u << 31;
  static constexpr std::uint32_t kHeld = 1u << 30;
  // Shapes number fewer than this, so that no entry's shape reads as kWhole.
  static constexpr std::uint32_t kShapeLimit = kHeld - 1;
  TimeBases submits_;
  RoundChanges rounds_;
  std::vector<Shape> shapes_;
  std::map<Shape, std::uint32_t> shape_index_;
  // The shapes used last, looked at before the map: a rank's transfers cycle through a few,
  // and at thousands of ranks the maps' nodes are far out of the cache.
  std::uint32_t recent_[4] = {kWhole, kWhole, kWhole, kWhole};
  std::uint32_t next_recent_ = 0;
  BlockArray<Delay> queued_;  // start - submit, by ticket, for those taken late by the queue
  BlockArray<Delay> held_;    // by ticket, for those held beyond the queue's rate
  std::vector<TransferRecord> whole_;
};

// What the critical path needs of a notify; kept for every notify (with records).
struct NotifyLink {
  std::uint64_t issued_ps = 0;  // the write left the core
  int round = -1;
};

// One packed notify link (see NotifyLog).
struct NotifyLogEntry {
  std::uint32_t issued_ps;  // an offset in issued_; kApart: the time is in apart_
  std::int32_t round;
};

// A rank's notify links by notify index, packed to 8 bytes each (a run may keep millions): the
// time as a 32-bit offset (see TimeBases); a link whose offset does not fit is kept apart with
// its whole time. Reads back exactly.
class NotifyLog : public PackedLog<NotifyLog, NotifyLink, NotifyLogEntry> {
 public:
  void push_back(const NotifyLink& link);
  NotifyLink operator[](std::size_t index) const;

 private:
  struct Apart {
    std::size_t index;
    std::uint64_t issued_ps;
  };
  TimeBases issued_;
  std::vector<Apart> apart_;  // by index
};

// The rest of a notify's record, which only the timeline trace shows (kept only for it).
struct NotifyRecord {
  int peer = 0;
  int signal = 0;
  int row = 0;
  int col = 0;
  std::int32_t value = 0;
  bool dropped = false;
  std::uint64_t start_ps = 0;  // the pipe barrier began
  std::uint64_t end_ps = 0;    // the core went on (after the acknowledgement when it waits)
};

// A notify named by its sender: the rank (-1: none), the rank's SPMD block and the notify's
// index among that block's notifies, in 8 bytes (a run may keep millions). A platform has at
// most 4096 x 64 devices and 1024 vector cores (the configuration's bounds), so ranks fit
// below kRankLimit and blocks below kBlockLimit.
struct NotifyId {
  static constexpr int kRankLimit = 1 << 20;
  static constexpr int kBlockLimit = 1 << 10;
  NotifyId() : rank(-1), block(0), index(0) {}
  NotifyId(int sender_rank, int sender_block, std::uint32_t notify)
      : rank(sender_rank), block(sender_block), index(notify) {}
  std::int32_t rank : 21;
  std::int32_t block : 11;
  std::uint32_t index;
  // Sender rank, then block, then index, as one number (no sender first).
  std::uint64_t order() const {
    return (static_cast<std::uint64_t>(rank + 1) << 43) |
           (static_cast<std::uint64_t>(block) << 32) | index;
  }
};

// What the critical path needs of a wait; kept for every wait (with records).
struct WaitLink {
  std::uint64_t seen_ps = 0;  // the look that found the cell satisfied
  bool blocked = false;       // the cell was not yet satisfied when the wait began
  NotifyId released_by;       // the notify that landed last before the look, if any
};

// One packed wait link (see WaitLog).
struct WaitLogEntry {
  std::uint32_t seen_ps;  // an offset in seen_; kApart: the link is kept apart
  std::int32_t released_by_rank : 21;
  std::int32_t released_by_block : 11;
  std::uint32_t released_by_notify : 31;
  std::uint32_t blocked : 1;
};

// A rank's wait links by wait index, packed to 12 bytes each (a run may keep millions): the
// time as a 32-bit offset (see TimeBases), the releasing notify's rank and block in one word,
// its index and whether the wait was blocked in another; a link whose offset or notify index
// does not fit is kept apart whole. Reads back exactly.
class WaitLog : public PackedLog<WaitLog, WaitLink, WaitLogEntry> {
 public:
  void push_back(const WaitLink& link);
  WaitLink operator[](std::size_t index) const;

 private:
  struct Apart {
    std::size_t index;
    WaitLink link;
  };
  TimeBases seen_;
  std::vector<Apart> apart_;  // by index
};

// The rest of a wait's record, which only the timeline trace shows (kept only for it).
struct WaitRecord {
  int signal = 0;
  int row = 0;
  int col = 0;
  std::int32_t expected = 0;
  std::int32_t seen = 0;  // the cell's value when the wait was satisfied
  std::uint64_t start_ps = 0;
  std::uint64_t end_ps = 0;     // after the look's answer and the cache invalidate
  std::uint64_t landed_ps = 0;  // when the releasing notify landed
};

// A stretch of a rank's core time; the spans of a rank tile [start_ps, finish_ps] exactly.
struct CoreSpan {
  enum class Kind : std::uint8_t { Setup, Transfer, Reduce, Notify, Wait };
  Kind kind = Kind::Setup;
  int round = -1;
  std::uint32_t ref = 0;  // Transfer: its index; Notify, Wait: the index of its record
  std::uint64_t start_ps = 0;
  std::uint64_t end_ps = 0;
};

// One packed span (see SpanLog).
struct SpanLogEntry {
  std::uint32_t end_ps;        // an offset in ends_; kApart: the times are in apart_
  std::uint32_t ref_and_kind;  // the reference times 8, plus the kind
};

// A rank's spans in the order they ended, packed to 8 bytes each (a run may keep millions): the
// end as a 32-bit offset (see TimeBases), the start being the previous span's end (a rank's
// spans follow each other; one that does not, the first, or one whose end does not fit is
// kept apart with both its times), the kind and reference in one word, and the round only
// where it changes (RoundChanges). Reads back exactly.
class SpanLog : public PackedLog<SpanLog, CoreSpan, SpanLogEntry> {
 public:
  static constexpr std::uint32_t kRefLimit = 1u << 29;  // references below this fit
  // Throws std::length_error for a reference of kRefLimit or more.
  void push_back(const CoreSpan& span);
  CoreSpan operator[](std::size_t index) const {
    RoundCursor cursor;
    return read(index, cursor);
  }
  CoreSpan read(std::size_t index, RoundCursor& cursor) const;

 private:
  struct Apart {
    std::size_t index;
    std::uint64_t start_ps;
    std::uint64_t end_ps;
  };
  const Apart& apart(std::size_t index) const;
  std::uint64_t end_ps(std::size_t index) const;
  TimeBases ends_;
  std::vector<Apart> apart_;  // by index
  std::uint64_t last_end_ps_ = 0;
  RoundChanges rounds_;
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
  // The most of its unified buffer its tiles held at once (aligned as allocated); for a rank
  // of several blocks, the largest block's, as each has a buffer of its own.
  std::uint64_t ub_peak_bytes = 0;
  std::uint64_t start_ps = 0;
  std::uint64_t finish_ps = 0;
  bool finished = false;
  // Its operations but the bursts of its transfers: notifies, waits, polls, reduces, transfers.
  std::uint64_t steps_but_bursts() const { return notifies + waits + polls + reduces + transfers; }
  // The bursts of `burst_bytes` its transfers' bytes make.
  std::uint64_t bursts(std::uint64_t burst_bytes) const {
    return (remote_read_bytes + remote_write_bytes + local_bytes + burst_bytes - 1) / burst_bytes;
  }
  std::vector<RoundRecord> rounds;
  // Instead of `rounds`, when the outputs show no round of this rank but its phases (the full
  // report's table shows the first ranks, its critical path every rank's phase names).
  RoundPhases round_phases;
  // Each round's synchronisation instructions, by round; kept only with a codegen profile
  // (the outputs show them only then).
  std::vector<RoundSync> sync;
  SpanLog spans;
  TransferLog transfer_records;  // by DMA ticket
  NotifyLog notify_links;        // by notify index
  WaitLog wait_links;            // by wait index
  // Index for index with the links, kept only for the timeline trace.
  std::vector<NotifyRecord> notify_records;
  std::vector<WaitRecord> wait_records;
  std::vector<WaitRecord> skipped_waits;  // waits a fault skipped: at an instant, nothing seen

  // The rounds begun, and the phase of one, from whichever of the two the rank keeps.
  std::size_t round_count() const { return rounds.empty() ? round_phases.size() : rounds.size(); }
  const std::string& phase(std::size_t round) const {
    return rounds.empty() ? round_phases[round].str() : rounds[round].phase.str();
  }
};

}  // namespace ars
