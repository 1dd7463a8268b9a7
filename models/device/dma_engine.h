// The DMA engines of a device: MTE2 (own GM or a peer's window -> UB) and MTE3 (UB -> own GM
// or a peer's window). Each of the configured queues takes one transfer at a time and streams
// it as bursts: setup, then one burst per burst-time at the path's rate, each burst a TLM
// transaction through the interconnect. The transfer completes when its last burst has
// passed every resource on the path plus the path's latency. A queue is pipelined: it takes
// its next transfer once the last burst has left, without waiting for the data to land.
// When nothing observes the bursts, a transfer can be timed whole: every burst reserves its
// resources at once, each as of the time it would have left, with the same arithmetic, and
// the queue sleeps once; a transfer of three bursts or more then goes down as one transaction,
// a train of bursts (see BurstTrain), which the targets serve burst by burst. That gives the
// burst-by-burst answer as long as no other transfer, nor a notify's atomic, asks for the same
// resources within the span of its bursts, and no two cores' atomics ask for one hold at the same
// instant; a request that does is a conflict, which stops the simulation (the run is then redone
// with those transfers, or every one, burst by burst).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "kernels/api.h"
#include "models/device/instant_events.h"
#include "models/fabric/bandwidth_resource.h"
#include "models/fabric/transaction.h"
#include "models/platform/clock.h"
#include "models/platform/platform_config.h"
#include "models/records/rank_stats.h"
#include "models/records/trace_sink.h"

namespace ars {

// Items by ticket, of which the oldest may have been dropped: ticket t is items_[t - first_].
template <typename T>
class TicketLog {
 public:
  T& operator[](std::uint64_t ticket) { return items_[ticket - first_]; }
  const T& operator[](std::uint64_t ticket) const { return items_[ticket - first_]; }
  const T& at(std::uint64_t ticket) const { return items_.at(ticket - first_); }
  std::uint64_t size() const { return first_ + items_.size(); }  // the next ticket
  std::uint64_t first() const { return first_; }                 // the oldest kept
  void push_back(const T& item) { items_.push_back(item); }
  void drop_front(std::size_t count) {
    items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(count));
    first_ += count;
  }

 private:
  std::vector<T> items_;
  std::uint64_t first_ = 0;
};

class DmaEngine : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<DmaEngine> to_noc;  // global memory, own or a peer's
  tlm_utils::simple_initiator_socket<DmaEngine> to_ub;   // the core's unified buffer (DMI)

  // `block`: which of its device's vector cores drives the engine (0 for a rank's first).
  DmaEngine(sc_core::sc_module_name name, const PlatformConfig& config, int device, int block,
            InstantEvents& instants);

  enum class Direction { ToUb, FromUb };  // MTE2, MTE3
  struct Request {
    Direction direction;
    std::uint64_t gm_address;  // global: device and local address
    std::uint32_t ub_offset;
    std::uint64_t bytes;
    bool atomic_add = false;  // MTE3 only: add element-wise into the target
    DType dtype = DType::FP32;
  };
  // Queues a transfer and returns its ticket; the transfer starts when a queue is free.
  // `at` is the submitting core's time: now, or later for a core running ahead (see
  // VectorCore), which submits only what starts_at() allows.
  std::uint64_t submit(const Request& request, const sc_core::sc_time& at);
  // A transfer submitted at `at` would be timed whole by the submitting thread and start
  // then: no set-up, nothing pending, a queue free by then.
  bool starts_at(const Request& request, const sc_core::sc_time& at) const;
  // A transfer's record, by ticket, when records are kept (nullptr otherwise): the engine
  // fills in when and how it ran, the submitter (right after submit()) what it was for.
  TransferRecord* record(std::uint64_t ticket) {
    return keep_records_ ? &records_[ticket] : nullptr;
  }
  // Keeps every transfer's record for the run's reports (a landed transfer's packed into
  // the log, see TransferLog); off, no record is made, and a transfer's times are dropped once
  // it has landed, so memory stays flat however many transfers a run makes. Set before the
  // simulation starts.
  void keep_records(bool on) { keep_records_ = on; }
  // Hands every transfer's record over once the simulation has ended (records kept).
  TransferLog release_records();
  // Blocks the calling thread until the transfer has completed.
  void wait_done(std::uint64_t ticket);
  // Blocks until the transfer's last burst has left its queue: its UB bytes have been read.
  void wait_left(std::uint64_t ticket);
  // When the transfer completes (Landed), or its last burst leaves its queue (Left), once it
  // has been issued (false before; a forgotten transfer gives zero, long past).
  enum class Milestone { Left, Landed };
  bool time_of(std::uint64_t ticket, Milestone milestone, sc_core::sc_time& at) const;
  // The transfer has completed by `at`.
  bool done(std::uint64_t ticket, const sc_core::sc_time& at) const;

  // Every transfer's set-up before its first burst (dma.setup_cycles).
  std::uint64_t setup_ps() const { return setup_.value(); }

  // The rate (bytes per ps) a queue streams this transfer at: the path's DMA rate, scaled
  // down for a GM address off the full-rate alignment.
  double rate_bytes_per_ps(const Request& request) const;

  void attach_trace(TraceSink* sink, const std::string& scope);

  // A queue's SystemC process is made the first time a transfer waits for a queue (a run that
  // times transfers whole mostly has its core's thread reserve them, and never needs one). It
  // is a method where every transfer is timed whole with no set-up and no trace (each is
  // reserved at its start without a wait), else a thread; before threads, `check` is called and may
  // throw to refuse (each thread takes a stack and two of the process's memory mappings). Set
  // before the simulation starts.
  void before_queue_threads(std::function<void()> check) {
    before_queue_threads_ = std::move(check);
  }

  // Times every transfer as one step (see above); set before the simulation starts.
  void time_transfers_whole(bool on) { whole_ = on; }
  bool transfers_timed_whole() const { return whole_; }
  // Which transfers such a run still issues burst by burst: those for which `test(device,
  // target device, read)` holds (the ones crossing a resource where an earlier try met).
  using BurstByBurst = std::function<bool(int, int, bool)>;
  void run_burst_by_burst(BurstByBurst test) { burst_by_burst_ = std::move(test); }
  // And those of its own transfers, by ticket (sorted), that met another in an earlier try:
  // tickets follow the block's program order, so a ticket names the same transfer in every try.
  void run_burst_by_burst(std::vector<std::uint64_t> tickets) {
    burst_tickets_ = std::move(tickets);
  }
  // Called at a conflict, to stop the run soon (see Interconnect::stop_soon); set before the
  // simulation starts. A run that surveys its conflicts is not stopped by them: a transfer
  // that met goes on as if it had not, on times no longer exact, so that the run names every
  // transfer that meets.
  void on_conflict(std::function<void()> noted) { noted_ = std::move(noted); }
  void survey_conflicts(bool on) { survey_ = on; }
  // A request of this engine's block (a transfer, or a notify of its core) met another on a
  // shared resource: keeps the first such meeting, where each met and which transfers, and
  // tells the function given to on_conflict.
  void note_conflict(std::uint64_t flow, const Claim& claim);
  // The block's requests met another's: the run's times are not exact.
  bool conflicted() const { return conflicted_; }
  // Which resource, when, and the requests that met there ("" when none did).
  const std::string& conflict() const { return conflict_; }
  const sc_core::sc_time& conflict_at() const { return conflict_at_; }
  // The resources where they met (each once), and whether running the transfers through them
  // burst by burst would do: not when two notifies met, which are served at once either way.
  const std::vector<std::string>& conflict_places() const { return conflict_places_; }
  bool notifies_met() const { return notifies_met_; }
  // The transfers that met, as flows (transfer_flow), each once.
  const std::vector<std::uint64_t>& conflict_transfers() const { return conflict_transfers_; }
  // How many transfers the block has submitted.
  std::uint64_t transfers() const { return times_.size(); }

 private:
  void end_of_elaboration() override;
  void make_queue_processes();
  void queue_thread(int queue);
  void queue_method(int queue);
  // Issues the transfer's bursts, starting at `at`; fills in when its data has landed and what
  // bound it. A queue's thread waits until the last burst has left; submit() (a transfer
  // timed whole, starting at the core's time) and a queue's method only record the time.
  void execute(const Request& request, std::uint64_t ticket, int queue, const sc_core::sc_time& at,
               bool queue_thread);
  // What a transfer's bursts have shown so far: when the last one asked for has been issued,
  // when the data has landed, and what bound it.
  struct Progress {
    sc_core::sc_time start;  // its first burst leaves (after the set-up)
    double rate = 0;         // bytes per ps the queue streams it at
    sc_core::sc_time issued_by;
    sc_core::sc_time finish;
    TransferLimit limit;
    sc_core::sc_time held = sc_core::SC_ZERO_TIME;
    sc_core::sc_time latency = sc_core::SC_ZERO_TIME;
  };
  class Train;
  // Sends a transfer timed whole as one transaction, a train of its bursts (see BurstTrain):
  // false when a burst failed or met a conflict, which ends it. Apart from execute(), so that
  // the train's state takes no room in the frames of transfers sent burst by burst.
  [[gnu::noinline]] bool send_train(Progress& progress, const Request& request,
                                    std::uint64_t ticket, tlm::tlm_generic_payload& trans,
                                    BurstTiming& timing);
  // When the burst at `offset` of a transfer of `bytes` leaves: when the one before it has been
  // issued. Sets issued_by to when this one has.
  [[gnu::always_inline]] inline sc_core::sc_time leave(Progress& progress, std::uint64_t bytes,
                                                       std::uint64_t offset) const;
  // Reads what the burst at `address`, asked at `asked_at`, met on its way: false when it
  // failed or met a conflict, which ends the transfer.
  [[gnu::always_inline]] inline bool passed_burst(Progress& progress, std::uint64_t ticket,
                                                  const tlm::tlm_generic_payload& trans,
                                                  BurstTiming& timing, std::uint64_t address,
                                                  const sc_core::sc_time& asked_at,
                                                  const sc_core::sc_time& issued_by);
  // Records that the transfer starts on `queue` at `at` (records kept).
  void note_start(std::uint64_t ticket, int queue, const sc_core::sc_time& at);
  // The queue an idle engine would start the transfer `ticket` on at `at` (-1: none).
  int queue_free_at(const Request& request, std::uint64_t ticket, const sc_core::sc_time& at) const;
  // The transfer `ticket` is timed as one step (the run times transfers whole, and not this
  // one burst by burst).
  bool timed_whole(const Request& request, std::uint64_t ticket) const;
  // Drops the transfers at the front that have landed (their records into landed_ when kept).
  void forget_landed();
  // The ticket's transfer has landed and was dropped.
  bool forgotten(std::uint64_t ticket) const { return ticket < times_.first(); }
  // The record of a transfer that is being dropped, with its times.
  TransferRecord landed_record(std::uint64_t ticket) const;

  // What every transfer reads and writes comes first, packed into as few cache lines as may
  // be: an engine's state is cold each time its rank resumes. Events, messages and the
  // records kept for reports follow.
  Clock clock_;
  int device_;
  int block_;
  sc_core::sc_time setup_;
  double local_read_rate_;
  double local_write_rate_;
  double remote_rate_;
  std::uint64_t burst_bytes_;
  std::uint64_t full_rate_alignment_;
  double misaligned_factor_;
  InstantEvents& instants_;
  std::uint8_t* ub_ = nullptr;
  bool whole_ = false;
  bool conflicted_ = false;
  bool keep_records_ = true;
  // Every transfer's times, by ticket, until it has landed (valid once issued). Apart from
  // the records, which only reports read: a transfer writes 24 bytes of the engine's cold
  // state, not a record's 72.
  struct Times {
    std::uint64_t left_ps = 0;
    std::uint64_t finish_ps = 0;
    bool issued = false;
  };
  TicketLog<Times> times_;
  TicketLog<TransferRecord> records_;  // with records kept, by ticket as times_
  // Per queue: free from this time on (a transfer reserved by submit() or the queue's
  // method), and whether its process is executing a transfer now (the method: which); side by
  // side, as every submit reads both.
  struct QueueState {
    sc_core::sc_time busy_until;
    bool running = false;
    std::uint64_t ticket = 0;
  };
  std::vector<QueueState> queues_;
  // Per queue, made once and reused by its transfers (a payload allocates its extension table
  // when made): the payload and the BurstTiming it carries for good. The first queue's is
  // kept in the engine itself, not behind pointers: an engine is cold each time its rank
  // resumes, and each pointer followed would be one more miss.
  struct QueuePayload {
    QueuePayload();
    ~QueuePayload();
    QueuePayload(const QueuePayload&) = delete;
    QueuePayload& operator=(const QueuePayload&) = delete;
    tlm::tlm_generic_payload trans;
    BurstTiming timing;
  };
  QueuePayload& queue_payload(int queue) {
    return queue == 0 ? first_payload_ : *more_payloads_[static_cast<std::size_t>(queue - 1)];
  }
  QueuePayload first_payload_;
  std::vector<std::unique_ptr<QueuePayload>> more_payloads_;
  struct Pending {
    std::uint64_t ticket;
    Request request;
  };
  std::deque<Pending> pending_;
  TraceSink* sink_ = nullptr;

  sc_core::sc_event work_;
  sc_core::sc_event scheduled_;  // a transfer's completion time became known
  std::string conflict_;
  sc_core::sc_time conflict_at_;
  std::vector<std::string> conflict_places_;
  std::vector<std::uint64_t> conflict_transfers_;
  bool notifies_met_ = false;
  BurstByBurst burst_by_burst_;
  std::vector<std::uint64_t> burst_tickets_;
  // timed_whole()'s last answer for a peer's memory with a burst_by_burst_ test (fixed for the
  // run): a rank's transfers go to few peers, and the test looks up a path.
  struct WholeMemo {
    int target = -1;
    bool read = false;
    bool whole = false;
  };
  mutable WholeMemo whole_memo_;
  // timed_whole()'s answer for the engine's own memory with a burst_by_burst_ test, indexed by
  // whether the transfer reads it: the marks are set before the simulation starts, so it is
  // asked once, at end_of_elaboration().
  bool own_whole_[2] = {true, true};
  std::function<void()> noted_;
  std::function<void()> before_queue_threads_;
  bool queue_processes_made_ = false;
  bool survey_ = false;
  TransferLog landed_;  // with kept records: those dropped from records_
  std::vector<int> busy_vars_;
};

}  // namespace ars
