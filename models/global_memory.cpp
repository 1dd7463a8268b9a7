#include "models/global_memory.h"

#include <cstring>

#include "kernels/elementwise.h"

namespace ars {

using sc_core::sc_time;

GlobalMemory::GlobalMemory(sc_core::sc_module_name name, const PlatformConfig& config)
    : sc_module(name),
      from_noc("from_noc"),
      clock_(config.clock_GHz),
      read_latency_(clock_.cycles(config.gm_read_latency_cycles)),
      write_latency_(clock_.cycles(config.gm_write_latency_cycles)),
      port_("port", GBps_to_bytes_per_ps(config.gm_bandwidth_GBps)) {
  from_noc.register_b_transport(this, &GlobalMemory::b_transport);
  from_noc.register_transport_dbg(this, &GlobalMemory::transport_dbg);
  SC_METHOD(apply_due_signal_writes);
  sensitive << due_;
  dont_initialize();
}

std::uint64_t GlobalMemory::allocate(std::uint64_t bytes, std::uint64_t alignment, bool backed) {
  const std::uint64_t address = (top_ + alignment - 1) / alignment * alignment;
  top_ = address + bytes;
  if (backed) storage_.resize(top_, 0);
  return address;
}

bool GlobalMemory::in_range(std::uint64_t address, std::uint64_t length) const {
  return address <= storage_.size() && length <= storage_.size() - address;
}

std::int32_t GlobalMemory::read_cell(std::uint64_t address) const {
  std::int32_t value;
  std::memcpy(&value, storage_.data() + address, sizeof value);
  return value;
}

std::uint8_t* GlobalMemory::backdoor(std::uint64_t address, std::uint64_t bytes) {
  return in_range(address, bytes) ? storage_.data() + address : nullptr;
}

void GlobalMemory::b_transport(tlm::tlm_generic_payload& trans, sc_time& delay) {
  const std::uint64_t address = trans.get_address() & kLocalMask;
  const std::uint64_t length = trans.get_data_length();
  AtomicWrite* atomic = trans.get_extension<AtomicWrite>();
  const bool timing_only = trans.get_data_ptr() == nullptr;
  if (!timing_only && !in_range(address, length)) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (atomic != nullptr && atomic->kind != AtomicWrite::Kind::DataAdd) {
    std::int32_t value;
    std::memcpy(&value, trans.get_data_ptr(), sizeof value);
    const sc_time arrival = sc_core::sc_time_stamp() + delay + write_latency_;
    posted_.emplace(std::make_pair(arrival, posted_sequence_++),
                    PostedWrite{address,
                                value,
                                atomic->kind,
                                {atomic->source_rank, atomic->source_notify, arrival.value()}});
    due_.notify(posted_.begin()->first.first - sc_core::sc_time_stamp());
    delay += write_latency_;  // the response means: applied
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }

  const sc_time now = sc_core::sc_time_stamp();
  auto* timing = trans.get_extension<BurstTiming>();
  const auto slot = port_.reserve(now + delay, length, timing != nullptr ? timing->flow : 0);
  const bool is_read = trans.is_read();
  if (!timing_only) {
    std::uint8_t* data = storage_.data() + address;
    if (is_read) {
      std::memcpy(trans.get_data_ptr(), data, length);
    } else if (atomic != nullptr) {
      reduce_elements(ReduceOp::Sum, atomic->dtype, data, trans.get_data_ptr(),
                      length / dtype_bytes(atomic->dtype));
    } else {
      std::memcpy(data, trans.get_data_ptr(), length);
    }
  }
  const sc_time& latency = is_read ? read_latency_ : write_latency_;
  if (timing != nullptr) {
    timing->add_hop(slot.end - now, latency, port_.limit(slot.behind_other_flow));
    delay = timing->tail + timing->latency;
  } else {
    delay = slot.end - now + latency;
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

const GlobalMemory::CellWrite* GlobalMemory::last_write(std::uint64_t address) const {
  const auto write = last_writes_.find(address);
  return write == last_writes_.end() ? nullptr : &write->second;
}

unsigned int GlobalMemory::transport_dbg(tlm::tlm_generic_payload& trans) {
  const std::uint64_t address = trans.get_address() & kLocalMask;
  const std::uint64_t length = trans.get_data_length();
  if (!in_range(address, length)) return 0;
  if (trans.is_read()) {
    std::memcpy(trans.get_data_ptr(), storage_.data() + address, length);
  } else {
    std::memcpy(storage_.data() + address, trans.get_data_ptr(), length);
  }
  return static_cast<unsigned int>(length);
}

void GlobalMemory::apply_due_signal_writes() {
  const sc_time now = sc_core::sc_time_stamp();
  while (!posted_.empty() && posted_.begin()->first.first <= now) {
    const PostedWrite write = posted_.begin()->second;
    posted_.erase(posted_.begin());
    const auto op = cell_ops_.emplace(write.address, write.kind).first;
    if (op->second != write.kind && !mixed_write_) mixed_write_ = MixedWrite{write.address, now};
    std::int32_t cell = read_cell(write.address);
    // Signals wrap like the hardware's INT32 atomics do.
    cell = write.kind == AtomicWrite::Kind::SignalSet
               ? write.value
               : static_cast<std::int32_t>(static_cast<std::uint32_t>(cell) +
                                           static_cast<std::uint32_t>(write.value));
    std::memcpy(storage_.data() + write.address, &cell, sizeof cell);
    last_writes_[write.address] = write.source;
    if (sink_ != nullptr) {
      auto var = cell_vars_.find(write.address);
      if (var != cell_vars_.end()) sink_->record(var->second, now.value(), cell);
    }
    signal_written_.notify(sc_core::SC_ZERO_TIME);
  }
  if (!posted_.empty()) due_.notify(posted_.begin()->first.first - now);
}

void GlobalMemory::trace_cells(TraceSink* sink, const std::string& scope, const std::string& signal,
                               std::uint64_t address, int rows, int cols) {
  sink_ = sink;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const std::uint64_t cell = address + 4 * static_cast<std::uint64_t>(r * cols + c);
      const std::string name = signal + "_r" + std::to_string(r) + "_c" + std::to_string(c);
      const int var = sink->declare(scope, name, 32, TraceSink::Kind::Value);
      cell_vars_[cell] = var;
      sink->record(var, 0, 0);
    }
  }
}

}  // namespace ars
