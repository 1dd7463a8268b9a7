// The DMA engines of a device: MTE2 (own GM or a peer's window -> UB) and MTE3 (UB -> own GM
// or a peer's window). Each of the configured queues takes one transfer at a time and streams
// it as bursts: setup, then one burst per burst-time at the path's rate, each burst a TLM
// transaction through the interconnect. The transfer completes when its last burst has
// passed every resource on the path plus the path's latency. A queue is pipelined: it takes
// its next transfer once the last burst has left, without waiting for the data to land.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "kernels/api.h"
#include "models/clock.h"
#include "models/platform_config.h"
#include "models/rank_stats.h"
#include "models/trace_sink.h"

namespace ars {

class DmaEngine : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<DmaEngine> to_noc;  // global memory, own or a peer's
  tlm_utils::simple_initiator_socket<DmaEngine> to_ub;   // the core's unified buffer (DMI)

  DmaEngine(sc_core::sc_module_name name, const PlatformConfig& config, int device);

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
  std::uint64_t submit(const Request& request);
  // Every transfer's record, by ticket: the engine fills in when and how it ran, the
  // submitter what it was for.
  TransferRecord& record(std::uint64_t ticket) { return records_[ticket]; }
  const std::vector<TransferRecord>& records() const { return records_; }
  // Blocks the calling thread until the transfer has completed.
  void wait_done(std::uint64_t ticket);
  // Blocks until the transfer's last burst has left its queue: its UB bytes have been read.
  void wait_left(std::uint64_t ticket);
  // The transfer has completed by now.
  bool done(std::uint64_t ticket) const;

  // The rate (bytes per ps) a queue streams this transfer at: the path's DMA rate, scaled
  // down for a GM address off the full-rate alignment.
  double rate_bytes_per_ps(const Request& request) const;

  void attach_trace(TraceSink* sink, const std::string& scope);

 private:
  void end_of_elaboration() override;
  void queue_thread(int queue);
  // Issues the transfer's bursts; fills in when its data has landed and what bound it.
  void execute(const Request& request, std::uint64_t ticket);

  Clock clock_;
  int device_;
  sc_core::sc_time setup_;
  double local_read_rate_;
  double local_write_rate_;
  double remote_rate_;
  std::uint64_t burst_bytes_;
  std::uint64_t full_rate_alignment_;
  double misaligned_factor_;
  std::uint8_t* ub_ = nullptr;

  struct Pending {
    std::uint64_t ticket;
    Request request;
  };
  std::deque<Pending> pending_;
  sc_core::sc_event work_;
  sc_core::sc_event scheduled_;          // a transfer's completion time became known
  std::vector<TransferRecord> records_;  // per ticket; finish_ps valid once issued
  std::vector<char> issued_;
  TraceSink* sink_ = nullptr;
  std::vector<int> busy_vars_;
};

}  // namespace ars
