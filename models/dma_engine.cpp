#include "models/dma_engine.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/transaction.h"

namespace ars {

using sc_core::sc_time;

DmaEngine::DmaEngine(sc_core::sc_module_name name, const PlatformConfig& config, int device)
    : sc_module(name),
      to_noc("to_noc"),
      to_ub("to_ub"),
      clock_(config.clock_GHz),
      device_(device),
      setup_(clock_.cycles(config.dma_setup_cycles)),
      local_read_rate_(clock_.rate(config.dma_mte2_bytes_per_cycle)),
      local_write_rate_(clock_.rate(config.dma_mte3_bytes_per_cycle)),
      remote_rate_(clock_.rate(config.dma_remote_bytes_per_cycle)),
      burst_bytes_(config.dma_burst_bytes),
      full_rate_alignment_(config.dma_full_rate_alignment),
      misaligned_factor_(config.dma_misaligned_rate_factor),
      busy_vars_(config.dma_queues, -1) {
  for (int q = 0; q < config.dma_queues; ++q) {
    sc_core::sc_spawn([this, q] { queue_thread(q); }, ("queue" + std::to_string(q)).c_str());
  }
}

void DmaEngine::end_of_elaboration() {
  tlm::tlm_generic_payload probe;
  tlm::tlm_dmi dmi;
  probe.set_address(0);
  if (to_ub->get_direct_mem_ptr(probe, dmi)) ub_ = dmi.get_dmi_ptr();
}

std::uint64_t DmaEngine::submit(const Request& request) {
  const std::uint64_t ticket = issued_.size();
  issued_.push_back(0);
  TransferRecord record;
  record.bytes = request.bytes;
  record.submit_ps = sc_core::sc_time_stamp().value();
  record.misaligned = (request.gm_address & kLocalMask) % full_rate_alignment_ != 0;
  records_.push_back(record);
  pending_.push_back({ticket, request});
  work_.notify(sc_core::SC_ZERO_TIME);
  return ticket;
}

double DmaEngine::rate_bytes_per_ps(const Request& request) const {
  const bool remote = address_device(request.gm_address) != device_;
  double rate = remote
                    ? remote_rate_
                    : (request.direction == Direction::ToUb ? local_read_rate_ : local_write_rate_);
  if ((request.gm_address & kLocalMask) % full_rate_alignment_ != 0) rate *= misaligned_factor_;
  return rate;
}

void DmaEngine::queue_thread(int queue) {
  for (;;) {
    while (pending_.empty()) sc_core::wait(work_);
    const Pending job = pending_.front();
    pending_.pop_front();
    if (sink_ != nullptr) sink_->record(busy_vars_[queue], sc_core::sc_time_stamp().value(), 1);
    // Records are looked up by ticket after every wait: submits may grow the vector meanwhile.
    records_[job.ticket].queue = queue;
    records_[job.ticket].start_ps = sc_core::sc_time_stamp().value();
    execute(job.request, job.ticket);
    records_[job.ticket].left_ps = sc_core::sc_time_stamp().value();
    issued_[job.ticket] = 1;
    if (sink_ != nullptr) sink_->record(busy_vars_[queue], sc_core::sc_time_stamp().value(), -1);
    scheduled_.notify(sc_core::SC_ZERO_TIME);
  }
}

void DmaEngine::wait_done(std::uint64_t ticket) {
  while (issued_.at(ticket) == 0) sc_core::wait(scheduled_);
  const sc_time finish = sc_time::from_value(records_[ticket].finish_ps);
  if (finish > sc_core::sc_time_stamp()) sc_core::wait(finish - sc_core::sc_time_stamp());
}

void DmaEngine::wait_left(std::uint64_t ticket) {
  while (issued_.at(ticket) == 0) sc_core::wait(scheduled_);
}

bool DmaEngine::done(std::uint64_t ticket) const {
  return issued_.at(ticket) != 0 && records_[ticket].finish_ps <= sc_core::sc_time_stamp().value();
}

void DmaEngine::execute(const Request& request, std::uint64_t ticket) {
  const double rate = rate_bytes_per_ps(request);
  const sc_time start = sc_core::sc_time_stamp() + setup_;
  sc_time finish = start;
  // The burst that lands last names what bound the transfer: its queue's rate when it landed
  // as soon as it was issued, else the resource that held it longest.
  TransferLimit limit;
  sc_time held = sc_core::SC_ZERO_TIME;
  sc_time latency = sc_core::SC_ZERO_TIME;

  // The payload owns its extensions and frees them when it goes out of scope.
  tlm::tlm_generic_payload trans;
  auto* timing = new BurstTiming;
  timing->flow = (static_cast<std::uint64_t>(device_) << 32) + ticket + 1;
  trans.set_extension(timing);
  if (request.atomic_add) {
    auto* atomic = new AtomicWrite;
    atomic->kind = AtomicWrite::Kind::DataAdd;
    atomic->dtype = request.dtype;
    trans.set_extension(atomic);
  }
  trans.set_command(request.direction == Direction::ToUb ? tlm::TLM_READ_COMMAND
                                                         : tlm::TLM_WRITE_COMMAND);
  trans.set_streaming_width(static_cast<unsigned int>(burst_bytes_));
  trans.set_byte_enable_ptr(nullptr);

  for (std::uint64_t offset = 0; offset < request.bytes; offset += burst_bytes_) {
    const std::uint64_t length = std::min(burst_bytes_, request.bytes - offset);
    // Bursts leave at the queue's rate, timed from the start so rounding never accumulates.
    const sc_time issue = start + ps(std::floor(offset / rate));
    const sc_time issued_by = start + ps(std::floor((offset + length) / rate));
    if (issue > sc_core::sc_time_stamp()) sc_core::wait(issue - sc_core::sc_time_stamp());
    trans.set_address(request.gm_address + offset);
    trans.set_data_ptr(ub_ == nullptr ? nullptr : ub_ + request.ub_offset + offset);
    trans.set_data_length(static_cast<unsigned int>(length));
    trans.set_streaming_width(static_cast<unsigned int>(length));
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    timing->reset(sc_core::SC_ZERO_TIME);
    sc_time delay = sc_core::SC_ZERO_TIME;
    to_noc->b_transport(trans, delay);
    if (!trans.is_response_ok()) {
      SC_REPORT_ERROR(
          name(), ("DMA burst failed at address 0x" + std::to_string(trans.get_address())).c_str());
      records_[ticket].finish_ps = finish.value();
      return;
    }
    const sc_time passed = sc_core::sc_time_stamp() + timing->tail;
    const sc_time landed = std::max(issued_by, passed) + timing->latency;
    if (landed >= finish) {
      finish = landed;
      limit = passed > issued_by ? timing->limit : TransferLimit{};
      held = passed > issued_by ? passed - issued_by : sc_core::SC_ZERO_TIME;
      latency = timing->latency;
    }
  }
  TransferRecord& record = records_[ticket];
  record.finish_ps = finish.value();
  record.setup_ps = setup_.value();
  record.held_ps = held.value();
  record.latency_ps = latency.value();
  record.limit = limit;
  // The queue is free once its last burst has left at the queue's rate.
  const sc_time issued_all = start + ps(std::floor(request.bytes / rate));
  if (issued_all > sc_core::sc_time_stamp()) sc_core::wait(issued_all - sc_core::sc_time_stamp());
}

void DmaEngine::attach_trace(TraceSink* sink, const std::string& scope) {
  sink_ = sink;
  for (std::size_t q = 0; q < busy_vars_.size(); ++q) {
    busy_vars_[q] =
        sink->declare(scope, "queue" + std::to_string(q) + "_busy", 1, TraceSink::Kind::Flag);
  }
}

}  // namespace ars
