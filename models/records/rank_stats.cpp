#include "models/records/rank_stats.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iterator>
#include <ostream>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <boost/iterator/counting_iterator.hpp>

namespace ars {

namespace {

// Every phase name the process has seen, by index; index 0 is "". A deque keeps the names
// where they are as it grows, so references to them stay valid. Only the simulation's thread
// makes and reads phases.
struct PhaseTable {
  std::deque<std::string> names{""};
  std::unordered_map<std::string, std::uint32_t> ids{{"", 0}};
  std::uint32_t last = 0;  // consecutive rounds mostly share their phase
};

PhaseTable& phase_table() {
  static PhaseTable table;
  return table;
}

}  // namespace

PhaseName::PhaseName(const char* name) {
  PhaseTable& table = phase_table();
  if (std::strcmp(table.names[table.last].c_str(), name) != 0) {
    const auto [entry, fresh] =
        table.ids.try_emplace(name, static_cast<std::uint32_t>(table.names.size()));
    if (fresh) table.names.emplace_back(name);
    table.last = entry->second;
  }
  id_ = table.last;
}

const std::string& PhaseName::str() const {
  return phase_table().names[id_];
}

bool operator==(const PhaseName& phase, const char* name) {
  return phase.str() == name;
}

std::ostream& operator<<(std::ostream& out, const PhaseName& phase) {
  return out << phase.str();
}

const PhaseName& RoundPhases::operator[](std::size_t round) const {
  return std::prev(std::upper_bound(runs_.begin(), runs_.end(), round,
                                    [](std::size_t r, const Run& run) { return r < run.first; }))
      ->phase;
}

namespace {

// TransferLog::Shape::flags: the op in bits 0-1, misaligned in bit 2, the limit's kind in
// bits 3-4.
constexpr std::uint8_t kMisaligned = 1u << 2;
constexpr int kLimitShift = 3;

bool fits(std::uint64_t value) {
  return value <= UINT32_MAX;
}

// The entry for log entry `index` among `entries`, which are kept in order of their index and
// hold one for it.
template <typename Entries>
const auto& entry_for(const Entries& entries, std::size_t index) {
  using Position = boost::counting_iterator<std::size_t>;
  const Position found =
      std::partition_point(Position(0), Position(entries.size()),
                           [&](std::size_t at) { return entries[at].index < index; });
  return entries[*found];
}

}  // namespace

bool TimeBases::offset(std::size_t index, std::uint64_t time, std::uint32_t& offset) {
  if (index % kBlock == 0) {
    bases_.push_back(time);
    last_base_ = time;
  }
  const std::uint64_t base = last_base_;
  if (time < base || !fits(time - base)) return false;
  offset = static_cast<std::uint32_t>(time - base);
  return true;
}

void RoundChanges::throw_too_many() {
  throw std::length_error("more than " + std::to_string(kIndexLimit) +
                          " records of one kind on one rank: too many to record");
}

int RoundChanges::round(std::size_t index, RoundCursor& cursor) const {
  // The change the entry falls in (the last starting at or before it), and the jump that
  // change follows: in a walk, forwards or backwards, the cursor's or the one beside it, else
  // found by a search.
  const auto in_change = [&](std::size_t change) {
    return change < firsts_.size() && firsts_[change] <= index &&
           (change + 1 == firsts_.size() || firsts_[change + 1] > index);
  };
  std::size_t change = cursor.change;
  if (!in_change(change)) {
    if (in_change(change + 1)) {
      ++change;
    } else if (change > 0 && in_change(change - 1)) {
      --change;
    } else {
      change = static_cast<std::size_t>(std::upper_bound(firsts_.begin(), firsts_.end(), index) -
                                        firsts_.begin() - 1);
    }
  }
  const auto after_jump = [&](std::size_t jump) {
    return jump < jumps_.size() && jumps_[jump].change <= change &&
           (jump + 1 == jumps_.size() || jumps_[jump + 1].change > change);
  };
  std::size_t jump = cursor.jump;
  if (!after_jump(jump)) {
    jump = static_cast<std::size_t>(
        std::upper_bound(jumps_.begin(), jumps_.end(), change,
                         [](std::size_t c, const Jump& j) { return c < j.change; }) -
        jumps_.begin() - 1);
  }
  cursor = {change, jump};
  return jumps_[jump].round + static_cast<int>(change - jumps_[jump].change);
}

bool TransferLog::Shape::operator<(const Shape& other) const {
  return std::tie(bytes, latency_ps, streamed_ps, peer, resource, queue, flags) <
         std::tie(other.bytes, other.latency_ps, other.streamed_ps, other.peer, other.resource,
                  other.queue, other.flags);
}

bool TransferLog::Shape::operator==(const Shape& other) const {
  return bytes == other.bytes && latency_ps == other.latency_ps &&
         streamed_ps == other.streamed_ps && peer == other.peer && resource == other.resource &&
         queue == other.queue && flags == other.flags;
}

void TransferLog::push_back(const TransferRecord& r) {
  rounds_.add(size(), r.round);
  std::uint32_t submit = 0;
  const bool ordered =
      r.start_ps >= r.submit_ps && r.left_ps >= r.start_ps && r.finish_ps >= r.left_ps;
  if (!submits_.offset(size(), r.submit_ps, submit) || !ordered ||
      !fits(r.start_ps - r.submit_ps) || !fits(r.left_ps - r.start_ps) || !fits(r.held_ps) ||
      !fits(r.latency_ps) || r.finish_ps - r.left_ps != r.held_ps + r.latency_ps ||
      shapes_.size() == kShapeLimit) {
    packed_.push_back({static_cast<std::uint32_t>(whole_.size()), kWhole});
    whole_.push_back(r);
    return;
  }
  const Shape shape{
      r.bytes,
      static_cast<std::uint32_t>(r.latency_ps),
      static_cast<std::uint32_t>(r.left_ps - r.start_ps),
      r.peer,
      r.limit.resource,
      r.queue,
      static_cast<std::uint8_t>(static_cast<unsigned>(r.op) | (r.misaligned ? kMisaligned : 0) |
                                static_cast<unsigned>(r.limit.kind) << kLimitShift)};
  std::uint32_t index = kWhole;
  for (const std::uint32_t recent : recent_) {
    if (recent != kWhole && shapes_[recent] == shape) index = recent;
  }
  if (index == kWhole) {
    const auto [entry, fresh] =
        shape_index_.try_emplace(shape, static_cast<std::uint32_t>(shapes_.size()));
    if (fresh) shapes_.push_back(shape);
    index = entry->second;
    recent_[next_recent_] = index;
    next_recent_ = (next_recent_ + 1) % std::size(recent_);
  }
  const auto queued = static_cast<std::uint32_t>(r.start_ps - r.submit_ps);
  const auto held = static_cast<std::uint32_t>(r.held_ps);
  const auto ticket = static_cast<std::uint32_t>(size());
  if (queued != 0) {
    queued_.push_back({ticket, queued});
    index |= kQueued;
  }
  if (held != 0) {
    held_.push_back({ticket, held});
    index |= kHeld;
  }
  packed_.push_back({submit, index});
}

void NotifyLog::push_back(const NotifyLink& link) {
  std::uint32_t issued = 0;
  if (!issued_.offset(size(), link.issued_ps, issued) || issued == kApart) {
    apart_.push_back({size(), link.issued_ps});
    issued = kApart;
  }
  packed_.push_back({issued, link.round});
}

NotifyLink NotifyLog::operator[](std::size_t index) const {
  const NotifyLogEntry& p = packed_[index];
  return {
      p.issued_ps == kApart ? entry_for(apart_, index).issued_ps : issued_.time(index, p.issued_ps),
      p.round};
}

void WaitLog::push_back(const WaitLink& link) {
  constexpr std::uint32_t kNotifyLimit = 1u << 31;  // WaitLogEntry::released_by_notify's range
  std::uint32_t seen = 0;
  // The offset is taken for every entry: the time bases are laid down in order of index.
  if (!seen_.offset(size(), link.seen_ps, seen) || seen == kApart ||
      link.released_by.index >= kNotifyLimit) {
    apart_.push_back({size(), link});
    seen = kApart;
  }
  WaitLogEntry entry;
  entry.seen_ps = seen;
  entry.released_by_rank = link.released_by.rank;
  entry.released_by_block = link.released_by.block;
  entry.released_by_notify = seen == kApart ? 0 : link.released_by.index;
  entry.blocked = link.blocked;
  packed_.push_back(entry);
}

WaitLink WaitLog::operator[](std::size_t index) const {
  const WaitLogEntry& p = packed_[index];
  if (p.seen_ps == kApart) return entry_for(apart_, index).link;
  WaitLink link;
  link.seen_ps = seen_.time(index, p.seen_ps);
  link.blocked = p.blocked != 0;
  link.released_by = NotifyId(p.released_by_rank, p.released_by_block, p.released_by_notify);
  return link;
}

void SpanLog::push_back(const CoreSpan& span) {
  if (span.ref >= kRefLimit) {
    throw std::length_error("more than " + std::to_string(kRefLimit) +
                            " operations of one kind on one rank: too many to record");
  }
  rounds_.add(size(), span.round);
  std::uint32_t end = 0;
  const std::uint32_t ref_and_kind = span.ref << 3 | static_cast<std::uint32_t>(span.kind);
  const bool follows = !empty() && span.start_ps == last_end_ps_;
  // The offset is taken for every entry: the time bases are laid down in order of index.
  if (!ends_.offset(size(), span.end_ps, end) || end == kApart || !follows) {
    apart_.push_back({size(), span.start_ps, span.end_ps});
    end = kApart;
  }
  packed_.push_back({end, ref_and_kind});
  last_end_ps_ = span.end_ps;
}

const SpanLog::Apart& SpanLog::apart(std::size_t index) const {
  return entry_for(apart_, index);
}

std::uint64_t SpanLog::end_ps(std::size_t index) const {
  const std::uint32_t end = packed_[index].end_ps;
  return end == kApart ? apart(index).end_ps : ends_.time(index, end);
}

CoreSpan SpanLog::read(std::size_t index, RoundCursor& cursor) const {
  const SpanLogEntry& p = packed_[index];
  CoreSpan span;
  span.kind = static_cast<CoreSpan::Kind>(p.ref_and_kind & 7u);
  span.ref = p.ref_and_kind >> 3;
  if (p.end_ps == kApart) {
    const Apart& whole = apart(index);
    span.start_ps = whole.start_ps;
    span.end_ps = whole.end_ps;
  } else {
    span.start_ps = end_ps(index - 1);
    span.end_ps = ends_.time(index, p.end_ps);
  }
  span.round = rounds_.round(index, cursor);
  return span;
}

TransferRecord TransferLog::read(std::size_t ticket, RoundCursor& cursor) const {
  const TransferLogEntry& p = packed_[ticket];
  if (p.shape == kWhole) return whole_[p.submit_ps];
  const Shape& shape = shapes_[p.shape & ~(kQueued | kHeld)];
  TransferRecord r;
  r.submit_ps = submits_.time(ticket, p.submit_ps);
  r.start_ps = r.submit_ps;
  if ((p.shape & kQueued) != 0) r.start_ps += entry_for(queued_, ticket).ps;
  if ((p.shape & kHeld) != 0) r.held_ps = entry_for(held_, ticket).ps;
  r.left_ps = r.start_ps + shape.streamed_ps;
  r.latency_ps = shape.latency_ps;
  r.finish_ps = r.left_ps + r.held_ps + r.latency_ps;
  r.bytes = shape.bytes;
  r.peer = shape.peer;
  r.round = rounds_.round(ticket, cursor);
  r.queue = shape.queue;
  r.op = static_cast<TransferRecord::Op>(shape.flags & 3u);
  r.misaligned = (shape.flags & kMisaligned) != 0;
  r.limit.kind = static_cast<TransferLimit::Kind>((shape.flags >> kLimitShift) & 3u);
  r.limit.resource = shape.resource;
  return r;
}

}  // namespace ars
