// A resource that moves bytes at a fixed rate, one reservation after another: a link
// direction, a memory port, a DMA queue. Keeping a "free at" time lets contention cost no
// extra events: a reservation starts when both the request and the resource are ready.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <systemc>

#include "models/records/rank_stats.h"
#include "models/records/trace_sink.h"

namespace ars {

// When a run times DMA transfers as one step (DmaEngine), such a transfer reserves all its
// bursts at once, each as of the time it would have asked. That gives the burst-by-burst
// answer only while no other flow (a transfer, or a core's notifies holding a link or a
// memory's atomics) asks for the same resource within its asks' span, a tie included; a
// request that does is flagged as a conflict. So are two cores' notifies asking for one hold
// at the same instant (served at once, in the order SystemC runs the cores). A transfer run
// burst by burst in such a run asks in its own time, and its bursts are served in an order of
// the model's (see Interconnect): it meets notifies and other such transfers without conflict.
// A core running ahead of the simulated time (VectorCore) asks for its own memory's port
// before others that ask for earlier times: such a later request is served as of its own
// time, between the runs of asks already kept, when it ends before the next run could start
// (it changes nothing that was reserved); otherwise it too is a conflict.
class BandwidthResource;

enum class ClaimKind : std::uint8_t {
  Whole,   // a burst of a transfer timed whole
  Notify,  // a notify's atomic, served at once
  Burst,   // a burst of a transfer run burst by burst
};

// A flow names who asks, unique in the run (0: nobody): a DMA transfer by its engine's device
// and block and its ticket; a core's notifies share their core's, with the top bit set. Blocks
// of one device number their tickets alike, so the block keeps them apart.
constexpr int kFlowBlockShift = 32;
constexpr int kFlowDeviceShift = 42;  // up to 1024 blocks (vector.cores)
constexpr std::uint64_t kNotifyFlowBit = std::uint64_t{1} << 63;
inline std::uint64_t transfer_flow(int device, int block, std::uint64_t ticket) {
  return (static_cast<std::uint64_t>(device) << kFlowDeviceShift) |
         (static_cast<std::uint64_t>(block) << kFlowBlockShift) | ((ticket + 1) & 0xffffffffu);
}
inline std::uint64_t notify_flow(int device, int block) {
  return kNotifyFlowBit | transfer_flow(device, block, 0xffffffffu);
}

struct Claim {
  bool checked = false;  // the request belongs to a run that times transfers whole
  ClaimKind kind = ClaimKind::Whole;
  sc_core::sc_time at;  // when it asks: a burst's leaving time, a notify's issue
  bool conflict = false;
  // Where: the resource, the flow that had asked there at or after `at`, and the span of that
  // flow's asks there (starting at `at` too when the two began at the same instant: a tie).
  const BandwidthResource* conflict_resource = nullptr;
  std::uint64_t conflict_flow = 0;
  sc_core::sc_time conflict_from;
  sc_core::sc_time conflict_until;
  ClaimKind conflict_kind = ClaimKind::Whole;  // what the other flow's requests were
};

// "dev1's transfer 7 and dev0 block 2's notify met on dev0.memory_port at 12.000 ns, ...": who
// asked (`flow`), whom it met, where and when.
std::string conflict_message(std::uint64_t flow, const Claim& claim);

class BandwidthResource {
 public:
  // How many runs of requests a checked resource keeps (see above); a power of two.
  static constexpr int kRunsKept = 8;

  BandwidthResource(std::string name, double bytes_per_ps);

  struct Interval {
    sc_core::sc_time start;
    sc_core::sc_time end;
    bool behind_other_flow;  // it started late because another flow's bytes held the resource
  };
  // Occupies the resource for `bytes`, starting no earlier than `earliest` (absolute time).
  // `flow` identifies the transfer the bytes belong to (0: none).
  Interval reserve(const sc_core::sc_time& earliest, std::uint64_t bytes, std::uint64_t flow = 0,
                   Claim* claim = nullptr) {
    if (bytes == duration_bytes_ && extends_last_run(flow, claim)) {
      bytes_moved_ += bytes;
      return extend_last_run(earliest, duration_, claim->at);
    }
    return reserve_span(earliest, duration(bytes), bytes, flow, claim);
  }
  // Occupies it for a given span (several resources reserved together for one burst).
  Interval reserve_span(const sc_core::sc_time& earliest, const sc_core::sc_time& span,
                        std::uint64_t bytes, std::uint64_t flow = 0, Claim* claim = nullptr);
  const sc_core::sc_time& free_at() const { return free_at_; }
  double bytes_per_ps() const { return bytes_per_ps_; }
  const std::string& name() const { return name_; }
  std::uint64_t bytes_moved() const { return bytes_moved_; }
  std::uint64_t last_flow() const { return last_flow_; }
  // What reports call it: an id in the run's resource table, a place ("dev0.link_to_3") and
  // the configuration key that sets its rate.
  void describe(int id, std::string place, const char* key);
  int id() const { return id_; }
  const std::string& place() const { return place_; }
  const char* key() const { return key_; }
  // The resource bounding a transfer: at its own rate, or held by another flow when it began.
  TransferLimit limit(bool behind_other_flow) const {
    return {behind_other_flow ? TransferLimit::Kind::QueuedBehindFlow
                              : TransferLimit::Kind::ResourceRate,
            id_};
  }

  // Waveforms: a busy flag (merged over back-to-back reservations) and bytes in flight.
  void attach_trace(TraceSink* sink, const std::string& scope);
  // Emits the last open busy period; call once the simulation has ended.
  void flush_trace();

 private:
  // The common checked ask: the next of the flow that asked here last, at or after its last ask
  // (a transfer's bursts, one after another), which extends that flow's run. Inline, without
  // reserve_claimed's search and checks: bursts of large transfers are most asks.
  bool extends_last_run(std::uint64_t flow, const Claim* claim) {
    if (claim == nullptr || !claim->checked || run_count_ == 0) return false;
    const Run& last = run(run_count_ - 1);
    return last.flow == flow && !(last.from > claim->at);
  }
  Interval extend_last_run(const sc_core::sc_time& earliest, const sc_core::sc_time& span,
                           const sc_core::sc_time& at) {
    Run& last = run(run_count_ - 1);
    const sc_core::sc_time start = std::max(earliest, free_at_);
    const bool behind_other_flow = start > earliest && last_flow_ != last.flow;
    free_at_ = start + span;
    last.until = at;
    last.end = free_at_;
    last_flow_ = last.flow;
    return {start, free_at_, behind_other_flow};
  }
  // The reservation of any other request whose claim is checked (see above).
  Interval reserve_claimed(const sc_core::sc_time& earliest, const sc_core::sc_time& span,
                           std::uint64_t flow, Claim& claim);
  void flag_conflict(Claim& claim, int run);
  // How long `bytes` hold the resource: the last answer is kept, as a transfer's bursts ask
  // with the same size one after another.
  const sc_core::sc_time& duration(std::uint64_t bytes);

  // What every reservation reads and writes comes first, within one or two cache lines: the
  // resources a rank's transfers cross are cold each time it resumes.
  double bytes_per_ps_;
  sc_core::sc_time free_at_;
  std::uint64_t bytes_moved_ = 0;
  std::uint64_t last_flow_ = 0;
  std::uint64_t duration_bytes_ = 0;  // duration()'s last question, and its answer
  sc_core::sc_time duration_;
  // A run that times transfers whole: the last runs of asks here, one flow's consecutive asks
  // each, in the order of their asks (the last is the latest asked). A request for a time
  // before the oldest kept is a conflict: what it might have changed is no longer known.
  struct Run {
    sc_core::sc_time from;      // its first ask
    sc_core::sc_time until;     // its last ask
    sc_core::sc_time earliest;  // when its first request could have started
    sc_core::sc_time end;       // when its last reservation ends
    std::uint64_t flow;
    ClaimKind kind;
  };
  // Kept in a ring: a new run replaces the oldest without moving the others.
  Run& run(int i) { return runs_[(first_run_ + i) & (kRunsKept - 1)]; }
  Run runs_[kRunsKept];
  int first_run_ = 0;
  int run_count_ = 0;
  bool runs_dropped_ = false;  // older runs than those kept were asked here
  TraceSink* sink_ = nullptr;
  std::string name_;
  int id_ = -1;
  std::string place_;
  const char* key_ = "";
  int busy_var_ = -1;
  int in_flight_var_ = -1;
  sc_core::sc_time period_start_;
  bool period_open_ = false;
};

}  // namespace ars
