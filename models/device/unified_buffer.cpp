#include "models/device/unified_buffer.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/api.h"

namespace ars {

UnifiedBuffer::UnifiedBuffer(sc_core::sc_module_name name, const PlatformConfig& config,
                             bool backed)
    : sc_module(name),
      from_core("from_core"),
      usable_(config.ub_usable_bytes),
      alignment_(config.ub_alignment_bytes),
      storage_(backed ? config.ub_physical_bytes : 0) {
  from_core.register_b_transport(this, &UnifiedBuffer::b_transport);
  from_core.register_get_direct_mem_ptr(this, &UnifiedBuffer::get_direct_mem_ptr);
}

std::uint32_t UnifiedBuffer::allocate(std::uint64_t bytes) {
  const std::uint64_t size =
      std::max<std::uint64_t>(alignment_, (bytes + alignment_ - 1) / alignment_ * alignment_);
  // First fit, from the first gap: below prefix_end_ the regions leave none.
  std::uint64_t candidate = prefix_end_;
  for (auto region = regions_.lower_bound(static_cast<std::uint32_t>(candidate));
       region != regions_.end(); ++region) {
    if (candidate + size <= region->first) break;
    candidate = region->first + region->second;
  }
  if (candidate + size > usable_) {
    throw InputError("UB overflow: asked for " + std::to_string(bytes) + " bytes with " +
                     std::to_string(in_use_) + " of " + std::to_string(usable_) +
                     " usable bytes in use (limit " + std::to_string(usable_) +
                     ", ub.usable_bytes)");
  }
  regions_.emplace(static_cast<std::uint32_t>(candidate), size);
  if (candidate == prefix_end_) {
    prefix_end_ += size;
    for (auto next = regions_.find(static_cast<std::uint32_t>(prefix_end_)); next != regions_.end();
         next = regions_.find(static_cast<std::uint32_t>(prefix_end_)))
      prefix_end_ += next->second;
  }
  in_use_ += size;
  peak_ = std::max(peak_, in_use_);
  if (sink_ != nullptr) {
    sink_->record(in_use_var_, sc_core::sc_time_stamp().value(), static_cast<std::int64_t>(size));
  }
  return static_cast<std::uint32_t>(candidate);
}

void UnifiedBuffer::release(std::uint32_t offset) {
  auto region = regions_.find(offset);
  if (region == regions_.end()) return;
  in_use_ -= region->second;
  prefix_end_ = std::min<std::uint64_t>(prefix_end_, offset);
  if (sink_ != nullptr) {
    sink_->record(in_use_var_, sc_core::sc_time_stamp().value(),
                  -static_cast<std::int64_t>(region->second));
  }
  regions_.erase(region);
}

void UnifiedBuffer::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time&) {
  const std::uint64_t address = trans.get_address();
  const std::uint64_t length = trans.get_data_length();
  if (address + length > storage_.size()) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (trans.is_read()) {
    std::memcpy(trans.get_data_ptr(), storage_.data() + address, length);
  } else {
    std::memcpy(storage_.data() + address, trans.get_data_ptr(), length);
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool UnifiedBuffer::get_direct_mem_ptr(int, tlm::tlm_generic_payload&, tlm::tlm_dmi& dmi) {
  dmi.allow_read_write();
  dmi.set_dmi_ptr(storage_.empty() ? nullptr : storage_.data());
  dmi.set_start_address(0);
  dmi.set_end_address(storage_.empty() ? 0 : storage_.size() - 1);
  dmi.set_read_latency(sc_core::SC_ZERO_TIME);
  dmi.set_write_latency(sc_core::SC_ZERO_TIME);
  return !storage_.empty();
}

void UnifiedBuffer::attach_trace(TraceSink* sink, const std::string& scope) {
  sink_ = sink;
  in_use_var_ = sink->declare(scope, "bytes_in_use", 32, TraceSink::Kind::Counter);
  sink->record(in_use_var_, 0, 0);
}

}  // namespace ars
