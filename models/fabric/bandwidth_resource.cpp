#include "models/fabric/bandwidth_resource.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <utility>

#include "models/platform/clock.h"

namespace ars {

using sc_core::sc_time;

namespace {

// "dev3", or "dev3 block 2" for a rank's further blocks.
void write_owner(std::ostream& out, std::uint64_t flow) {
  constexpr std::uint64_t kBlockMask =
      (std::uint64_t{1} << (kFlowDeviceShift - kFlowBlockShift)) - 1;
  out << "dev" << ((flow & ~kNotifyFlowBit) >> kFlowDeviceShift);
  if (const std::uint64_t block = (flow >> kFlowBlockShift) & kBlockMask; block != 0)
    out << " block " << block;
}

void write_asker(std::ostream& out, std::uint64_t flow) {
  write_owner(out, flow);
  if ((flow & kNotifyFlowBit) != 0) {
    out << "'s notify";
  } else {
    out << "'s transfer " << (flow & 0xffffffffu) - 1;
  }
}

}  // namespace

std::string conflict_message(std::uint64_t flow, const Claim& claim) {
  std::ostringstream where;
  write_asker(where, flow);
  where << " and ";
  write_asker(where, claim.conflict_flow);
  where << " met on " << claim.conflict_resource->place() << " at " << std::fixed
        << std::setprecision(3) << to_ns(claim.at) << " ns";
  // Two asking there at the same instant (a tie: burst by burst their bursts interleave there);
  // otherwise one asked inside the span of the other's bursts, already reserved.
  if (claim.at == claim.conflict_from) {
    where << ", both starting there at that instant";
  } else if (claim.at < claim.conflict_from) {
    where << ", asked after ";
    write_owner(where, claim.conflict_flow);
    where << "'s later bursts there (" << to_ns(claim.conflict_from) << " to "
          << to_ns(claim.conflict_until) << " ns), which it would have delayed";
  } else {
    where << ", inside ";
    write_owner(where, claim.conflict_flow);
    where << "'s bursts there (" << to_ns(claim.conflict_from) << " to "
          << to_ns(claim.conflict_until) << " ns)";
  }
  return where.str();
}

BandwidthResource::BandwidthResource(std::string name, double bytes_per_ps)
    : bytes_per_ps_(bytes_per_ps), name_(std::move(name)) {}

const sc_time& BandwidthResource::duration(std::uint64_t bytes) {
  if (bytes != duration_bytes_) {
    duration_bytes_ = bytes;
    duration_ = ps(static_cast<double>(bytes) / bytes_per_ps_);
  }
  return duration_;
}

void BandwidthResource::describe(int id, std::string place, const char* key) {
  id_ = id;
  place_ = std::move(place);
  key_ = key;
}

BandwidthResource::Interval BandwidthResource::reserve_span(const sc_time& earliest,
                                                            const sc_time& span,
                                                            std::uint64_t bytes, std::uint64_t flow,
                                                            Claim* claim) {
  bytes_moved_ += bytes;
  if (extends_last_run(flow, claim)) return extend_last_run(earliest, span, claim->at);
  if (claim != nullptr && claim->checked) return reserve_claimed(earliest, span, flow, *claim);
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
  return {start, end, behind_other_flow};
}

void BandwidthResource::flag_conflict(Claim& claim, int index) {
  const Run& met = run(index);
  claim.conflict = true;
  claim.conflict_resource = this;
  claim.conflict_flow = met.flow;
  claim.conflict_from = met.from;
  claim.conflict_until = met.until;
  claim.conflict_kind = met.kind;
}

BandwidthResource::Interval BandwidthResource::reserve_claimed(const sc_time& earliest,
                                                               const sc_time& span,
                                                               std::uint64_t flow, Claim& claim) {
  const sc_time& at = claim.at;
  // Bursts served in the model's order meet notifies and each other in that order.
  auto ordered = [&](const Run& other) {
    return claim.kind != ClaimKind::Whole && other.kind != ClaimKind::Whole &&
           (claim.kind == ClaimKind::Burst || other.kind == ClaimKind::Burst);
  };
  // The ask falls after every run kept that began at or before it.
  int next = run_count_;
  while (next > 0 && run(next - 1).from > at) --next;
  const int before = next - 1;
  // Another flow still to ask here at or after this time: the order of the two flows' bursts
  // would not be the order of their times (a tie is no order either).
  if (before >= 0 && run(before).flow != flow && at <= run(before).until && !ordered(run(before)))
    flag_conflict(claim, before);
  if (next == run_count_) {
    const sc_time start = std::max(earliest, free_at_);
    const bool behind_other_flow = start > earliest && last_flow_ != flow;
    const sc_time end = start + span;
    // A run of its own: the last run's flow asking again here took extend_last_run.
    if (run_count_ == kRunsKept) {
      ++first_run_;  // the oldest goes
      --run_count_;
      runs_dropped_ = true;
    }
    run(run_count_++) = {at, at, earliest, end, flow, claim.kind};
    last_flow_ = flow;
    free_at_ = end;
    return {start, end, behind_other_flow};
  }
  // Asked for a time before runs already reserved: served as of its time, it must end before
  // the next run could start, or it would have changed that run's reservation.
  if (next == 0 && runs_dropped_) flag_conflict(claim, 0);
  const sc_time free = before >= 0 ? run(before).end : sc_core::SC_ZERO_TIME;
  const sc_time start = std::max(earliest, free);
  const bool behind_other_flow = start > earliest && (before >= 0 ? run(before).flow : 0) != flow;
  const sc_time end = start + span;
  if (end > run(next).earliest) flag_conflict(claim, next);
  if (before >= 0 && run(before).flow == flow) {
    run(before).until = at;
    run(before).end = end;
    return {start, end, behind_other_flow};
  }
  if (run_count_ == kRunsKept) {
    runs_dropped_ = true;
    if (next == 0) return {start, end, behind_other_flow};  // older than every run kept
    ++first_run_;                                           // the oldest goes
    --run_count_;
    --next;
  }
  for (int i = run_count_; i > next; --i) run(i) = run(i - 1);
  ++run_count_;
  run(next) = {at, at, earliest, end, flow, claim.kind};
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
