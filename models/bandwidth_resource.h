// A resource that moves bytes at a fixed rate, one reservation after another: a link
// direction, a memory port, a DMA queue. Keeping a "free at" time lets contention cost no
// extra events: a reservation starts when both the request and the resource are ready.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "models/trace_sink.h"

namespace ars {

// Who reserves, when a run times every DMA transfer as one step (DmaEngine): the transfer
// and the time its burst would have asked. Such a transfer reserves all its bursts at once,
// which gives the burst-by-burst answer only while no other transfer asks for the same
// resource within its bursts' span; a request that does is flagged as a conflict.
struct Claim {
  std::uint64_t owner = 0;  // the transfer; 0: a burst reserved in its own time (no check)
  sc_core::sc_time at;      // when the burst asks
  bool conflict = false;
};

class BandwidthResource {
 public:
  BandwidthResource(std::string name, double bytes_per_ps);

  struct Interval {
    sc_core::sc_time start;
    sc_core::sc_time end;
  };
  // Occupies the resource for `bytes`, starting no earlier than `earliest` (absolute time).
  Interval reserve(const sc_core::sc_time& earliest, std::uint64_t bytes, Claim* claim = nullptr);
  // Occupies it for a given span (several resources reserved together for one burst).
  Interval reserve_span(const sc_core::sc_time& earliest, const sc_core::sc_time& span,
                        std::uint64_t bytes, Claim* claim = nullptr);
  sc_core::sc_time duration(std::uint64_t bytes) const;
  const sc_core::sc_time& free_at() const { return free_at_; }
  double bytes_per_ps() const { return bytes_per_ps_; }
  const std::string& name() const { return name_; }
  std::uint64_t bytes_moved() const { return bytes_moved_; }

  // Waveforms: a busy flag (merged over back-to-back reservations) and bytes in flight.
  void attach_trace(TraceSink* sink, const std::string& scope);
  // Emits the last open busy period; call once the simulation has ended.
  void flush_trace();

 private:
  std::string name_;
  double bytes_per_ps_;
  sc_core::sc_time free_at_;
  std::uint64_t bytes_moved_ = 0;
  TraceSink* sink_ = nullptr;
  int busy_var_ = -1;
  int in_flight_var_ = -1;
  std::uint64_t claim_owner_ = 0;
  sc_core::sc_time claimed_until_;
  sc_core::sc_time period_start_;
  bool period_open_ = false;
};

}  // namespace ars
