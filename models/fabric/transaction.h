// What a generic payload carries besides address and data in this platform.
#pragma once

#include <algorithm>

#include <systemc>
#include <tlm>

#include "kernels/api.h"
#include "models/fabric/bandwidth_resource.h"
#include "models/records/rank_stats.h"

namespace ars {

// Global addresses put the device in the top bits; the interconnect routes on them.
constexpr int kDeviceShift = 40;
constexpr std::uint64_t kLocalMask = (std::uint64_t{1} << kDeviceShift) - 1;
inline std::uint64_t global_address(int device, std::uint64_t local) {
  return (static_cast<std::uint64_t>(device) << kDeviceShift) | local;
}
inline int address_device(std::uint64_t address) {
  return static_cast<int>(address >> kDeviceShift);
}

// A transfer timed whole may go down as one transaction over all its bytes, a train of bursts
// (a TLM-2.0 transaction may be longer than what the path moves at once): each target on the
// way serves the bursts one after another, each exactly as that burst sent alone, asking the
// initiator for each burst's leaving time before it and handing it back after it. What one
// transaction per burst would cost in sockets and extension look-ups is paid once per transfer.
class BurstTrain {
 public:
  explicit BurstTrain(std::uint64_t burst_bytes) : burst_bytes_(burst_bytes) {}
  std::uint64_t burst_bytes() const { return burst_bytes_; }
  // Before the burst at `offset` (its bytes from there to the next burst's or the end): sets
  // up the transaction's BurstTiming for it and returns its annotated delay.
  virtual sc_core::sc_time leaves(std::uint64_t offset) = 0;
  // After it, with the transaction's response status and BurstTiming its answer: false ends
  // the train there (the burst failed, or met a conflict).
  virtual bool passed() = 0;

 protected:
  ~BurstTrain() = default;

 private:
  std::uint64_t burst_bytes_;
};

// Timing of one burst, accumulated hop by hop. `tail` is when the burst's last byte has
// passed every bandwidth resource (offset from now); `latency` the path's pipeline latency,
// paid once per transfer because bursts stream behind each other. `limit` names the hop that
// set `tail`; `flow` tells a resource which transfer the burst belongs to.
struct BurstTiming : tlm::tlm_extension<BurstTiming> {
  sc_core::sc_time tail;
  sc_core::sc_time latency;
  std::uint64_t flow = 0;
  TransferLimit limit;
  Claim claim;  // what the resources on the way check, for a transfer timed whole
  // Burst by burst: the interconnect has the burst and serves it once its instant is over
  // (see Interconnect); until then the fields above are not its answer. `served` is notified
  // when it has been.
  bool waiting = false;
  const sc_core::sc_event* served = nullptr;
  BurstTrain* train = nullptr;  // the transaction carries a whole transfer's bursts

  void reset(const sc_core::sc_time& head) {
    tail = head;
    latency = sc_core::SC_ZERO_TIME;
    limit = {};
  }
  void add_hop(const sc_core::sc_time& hop_tail, const sc_core::sc_time& hop_latency,
               const TransferLimit& hop_limit = {}) {
    if (hop_tail > tail) {
      tail = hop_tail;
      limit = hop_limit;
    }
    latency += hop_latency;
  }
  tlm::tlm_extension_base* clone() const override { return new BurstTiming(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const BurstTiming&>(other);
  }
};

// A write that is not a plain copy: an INT32 signal update (posted: applied when it arrives,
// the writer does not wait) or a DMA write that adds element-wise into the target.
struct AtomicWrite : tlm::tlm_extension<AtomicWrite> {
  enum class Kind { SignalAdd, SignalSet, DataAdd };
  Kind kind = Kind::SignalAdd;
  DType dtype = DType::FP32;  // for DataAdd
  int source_rank = -1;       // signal updates: the notifying rank, its block and the index
  int source_block = 0;       // of the notify among that block's notifies
  std::uint32_t source_notify = 0;
  // Signal updates: the notifying core's flow, and its claim on the atomic holds it takes
  // (links, the target memory's atomics) when the run times its transfers whole: the holds
  // are taken in the order of the asks, which same-instant asks of two cores do not have.
  std::uint64_t flow = 0;
  Claim claim;

  tlm::tlm_extension_base* clone() const override { return new AtomicWrite(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const AtomicWrite&>(other);
  }
};

}  // namespace ars
