#include "models/bandwidth_resource.h"

#include <algorithm>
#include <utility>

#include "models/clock.h"

namespace ars {

using sc_core::sc_time;

BandwidthResource::BandwidthResource(std::string name, double bytes_per_ps)
    : bytes_per_ps_(bytes_per_ps), name_(std::move(name)) {}

sc_time BandwidthResource::duration(std::uint64_t bytes) const {
  return ps(static_cast<double>(bytes) / bytes_per_ps_);
}

void BandwidthResource::describe(int id, std::string place, const char* key) {
  id_ = id;
  place_ = std::move(place);
  key_ = key;
}

BandwidthResource::Interval BandwidthResource::reserve(const sc_time& earliest, std::uint64_t bytes,
                                                       std::uint64_t flow, Claim* claim) {
  return reserve_span(earliest, duration(bytes), bytes, flow, claim);
}

BandwidthResource::Interval BandwidthResource::reserve_span(const sc_time& earliest,
                                                            const sc_time& span,
                                                            std::uint64_t bytes, std::uint64_t flow,
                                                            Claim* claim) {
  if (claim != nullptr && claim->checked) {
    // Another transfer still to ask here at or after this time: the order of the two
    // transfers' bursts would not be the order of their times (a tie is no order either).
    if (claim_flow_ != 0 && claim_flow_ != flow && claim->at <= claimed_until_) {
      claim->conflict = true;
      claim->conflict_resource = this;
      claim->conflict_flow = claim_flow_;
      claim->conflict_from = claimed_from_;
      claim->conflict_until = claimed_until_;
    }
    if (claim_flow_ != flow) claimed_from_ = claim->at;
    claim_flow_ = flow;
    claimed_until_ = claim->at;
  }
  const sc_time start = std::max(earliest, free_at_);
  const bool behind_other_flow = start > earliest && last_flow_ != flow;
  last_flow_ = flow;
  const sc_time end = start + span;
  if (sink_ != nullptr) {
    if (!period_open_ || start > free_at_) {
      flush_trace();
      period_start_ = start;
      period_open_ = true;
    }
    sink_->record(in_flight_var_, earliest.value(), static_cast<std::int64_t>(bytes));
    sink_->record(in_flight_var_, end.value(), -static_cast<std::int64_t>(bytes));
  }
  free_at_ = end;
  bytes_moved_ += bytes;
  return {start, end, behind_other_flow};
}

void BandwidthResource::attach_trace(TraceSink* sink, const std::string& scope) {
  sink_ = sink;
  if (sink_ == nullptr) return;
  busy_var_ = sink_->declare(scope, name_ + "_busy", 1, TraceSink::Kind::Flag);
  in_flight_var_ = sink_->declare(scope, name_ + "_bytes_in_flight", 32, TraceSink::Kind::Counter);
}

void BandwidthResource::flush_trace() {
  if (sink_ == nullptr || !period_open_) return;
  sink_->record(busy_var_, period_start_.value(), 1);
  sink_->record(busy_var_, free_at_.value(), -1);
  period_open_ = false;
}

}  // namespace ars
