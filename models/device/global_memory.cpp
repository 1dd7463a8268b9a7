#include "models/device/global_memory.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/elementwise.h"

namespace ars {

using sc_core::sc_time;

namespace {

// Large enough that a tensor's pages are few, small enough that a 4 KiB window costs little.
constexpr std::uint64_t kPageBytes = 64 * 1024;

}  // namespace

GlobalMemory::GlobalMemory(sc_core::sc_module_name name, const PlatformConfig& config)
    : sc_module(name),
      from_noc("from_noc"),
      clock_(config.clock_GHz),
      read_latency_(clock_.cycles(config.gm_read_latency_cycles)),
      write_latency_(clock_.cycles(config.gm_write_latency_cycles)),
      atomic_hold_(sc_core::sc_time(config.gm_atomic_ns, sc_core::SC_NS)),
      port_("port", GBps_to_bytes_per_ps(config.gm_bandwidth_GBps)),
      atomics_("atomics", 0.0) {
  from_noc.register_b_transport(this, &GlobalMemory::b_transport);
  from_noc.register_transport_dbg(this, &GlobalMemory::transport_dbg);
}

std::uint64_t GlobalMemory::allocate(std::uint64_t bytes, std::uint64_t alignment, bool backed) {
  const std::uint64_t address = (top_ + alignment - 1) / alignment * alignment;
  top_ = address + bytes;
  if (backed) backed_top_ = top_;
  return address;
}

bool GlobalMemory::in_range(std::uint64_t address, std::uint64_t length) const {
  return address <= backed_top_ && length <= backed_top_ - address;
}

std::uint8_t* GlobalMemory::page(std::uint64_t address) {
  const std::uint64_t index = address / kPageBytes;
  if (index >= pages_.size()) pages_.resize(index + 1);
  auto& page = pages_[index];
  if (!page) page = std::make_unique<std::uint8_t[]>(kPageBytes);  // value-initialised: zeros
  return page.get();
}

template <typename Visit>
void GlobalMemory::for_each_piece(std::uint64_t address, std::uint64_t length, bool allocate_pages,
                                  Visit visit) {
  while (length > 0) {
    const std::uint64_t within = address % kPageBytes;
    const std::uint64_t piece = std::min(length, kPageBytes - within);
    const std::uint64_t index = address / kPageBytes;
    std::uint8_t* base = allocate_pages          ? page(address)
                         : index < pages_.size() ? pages_[index].get()
                                                 : nullptr;
    visit(base == nullptr ? nullptr : base + within, piece);
    address += piece;
    length -= piece;
  }
}

std::int32_t GlobalMemory::read_cell(std::uint64_t address) const {
  const Cell* cell = cells_.find(address);
  return cell == nullptr ? 0 : cell->value;
}

std::int32_t GlobalMemory::poll_cell(std::uint64_t address) {
  land(current_time(*this));
  if (sink_ != nullptr) polled_cells_.insert(address);
  return read_cell(address);
}

sc_time GlobalMemory::look_after(const Watcher& watcher, const sc_time& landing) {
  // A core running ahead may watch for looks from a later time on.
  if (landing <= watcher.begin) return watcher.begin;
  // With a zero period the core looks at every change.
  const std::uint64_t period = watcher.period.value();
  if (period == 0) return landing;
  const std::uint64_t look = ((landing - watcher.begin).value() + period - 1) / period;
  return watcher.begin + ps_exact(look * period);
}

void GlobalMemory::watch(const Watcher& watcher) {
  watchers_.push_back(watcher);
  sc_time next;
  if (next_posted(next)) watcher.look->notify(look_after(watcher, next) - current_time(*this));
}

void GlobalMemory::unwatch(const sc_core::sc_event* look) {
  watchers_.erase(std::remove_if(watchers_.begin(), watchers_.end(),
                                 [&](const Watcher& w) { return w.look == look; }),
                  watchers_.end());
}

std::optional<std::uint64_t> GlobalMemory::first_nonzero_cell(std::uint64_t begin,
                                                              std::uint64_t end) const {
  std::optional<std::uint64_t> first;
  cells_.for_each([&](std::uint64_t address, const Cell& cell) {
    if (cell.value != 0 && address >= begin && address < end && (!first || address < *first))
      first = address;
  });
  return first;
}

bool GlobalMemory::read_bytes(std::uint64_t address, std::uint8_t* data,
                              std::uint64_t bytes) const {
  if (!in_range(address, bytes)) return false;
  // Reading never allocates: a page nobody wrote reads as zeros.
  const_cast<GlobalMemory*>(this)->for_each_piece(
      address, bytes, false, [&](const std::uint8_t* piece, std::uint64_t length) {
        if (piece == nullptr) {
          std::memset(data, 0, length);
        } else {
          std::memcpy(data, piece, length);
        }
        data += length;
      });
  return true;
}

bool GlobalMemory::write_bytes(std::uint64_t address, const std::uint8_t* data,
                               std::uint64_t bytes) {
  if (!in_range(address, bytes)) return false;
  for_each_piece(address, bytes, true, [&](std::uint8_t* piece, std::uint64_t length) {
    std::memcpy(piece, data, length);
    data += length;
  });
  return true;
}

void GlobalMemory::b_transport(tlm::tlm_generic_payload& trans, sc_time& delay) {
  const std::uint64_t address = trans.get_address() & kLocalMask;
  const std::uint64_t length = trans.get_data_length();
  AtomicWrite* atomic = trans.get_extension<AtomicWrite>();
  if (atomic != nullptr && atomic->kind != AtomicWrite::Kind::DataAdd) {
    // Signal cells live apart from the bytes: any allocated address may hold one.
    if (address > top_ || length > top_ - address) {
      trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    std::int32_t value;
    std::memcpy(&value, trans.get_data_ptr(), sizeof value);
    // Signal atomics are applied one at a time: each holds the memory for gm.atomic_ns.
    sc_time start = current_time(*this) + delay;
    if (atomic_hold_ > sc_core::SC_ZERO_TIME)
      start = atomics_.reserve_span(start, atomic_hold_, 0, atomic->flow, &atomic->claim).start;
    const sc_time arrival = start + write_latency_;
    const sc_time now = current_time(*this);
    land(now);
    post({arrival, posted_sequence_++, address, value, atomic->kind,
          NotifyId(atomic->source_rank, atomic->source_block, atomic->source_notify)});
    for (const Watcher& watcher : watchers_)
      watcher.look->notify(look_after(watcher, arrival) - now);
    delay = arrival - now;  // the response means: applied
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  auto* timing = trans.get_extension<BurstTiming>();
  if (timing != nullptr && timing->train != nullptr) {
    serve_train(trans, address, length, atomic, *timing);
    return;
  }
  move_bytes(trans, address, 0, length, atomic, timing, delay);
}

void GlobalMemory::serve_train(tlm::tlm_generic_payload& trans, std::uint64_t address,
                               std::uint64_t length, const AtomicWrite* atomic,
                               BurstTiming& timing) {
  BurstTrain& train = *timing.train;
  for (std::uint64_t offset = 0; offset < length; offset += train.burst_bytes()) {
    sc_time delay = train.leaves(offset);
    move_bytes(trans, address + offset, offset, std::min(train.burst_bytes(), length - offset),
               atomic, &timing, delay);
    if (!train.passed()) return;
  }
}

void GlobalMemory::move_bytes(tlm::tlm_generic_payload& trans, std::uint64_t address,
                              std::uint64_t offset, std::uint64_t length, const AtomicWrite* atomic,
                              BurstTiming* timing, sc_time& delay) {
  std::uint8_t* data = trans.get_data_ptr();
  if (data != nullptr) {
    if (!in_range(address, length)) {
      trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    data += offset;
  }
  const sc_time now = current_time(*this);
  const auto slot = port_.reserve(now + delay, length, timing != nullptr ? timing->flow : 0,
                                  timing != nullptr ? &timing->claim : nullptr);
  const bool is_read = trans.is_read();
  if (data != nullptr) {
    if (is_read) {
      read_bytes(address, data, length);
    } else if (atomic != nullptr) {
      // Element-wise: a burst is a whole number of elements, and pages hold whole elements.
      const std::size_t element = dtype_bytes(atomic->dtype);
      const std::uint8_t* source = data;
      for_each_piece(address, length, true, [&](std::uint8_t* piece, std::uint64_t bytes) {
        reduce_elements(ReduceOp::Sum, atomic->dtype, piece, source, bytes / element);
        source += bytes;
      });
    } else {
      write_bytes(address, data, length);
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

void GlobalMemory::throw_too_many_cells() {
  throw std::length_error("more than " + std::to_string(kWriterLimit) +
                          " signal cells written in one memory: too many to record");
}

const GlobalMemory::CellWrite* GlobalMemory::last_write(std::uint64_t address) const {
  if (!keep_writers_) return nullptr;
  const Cell* cell = cells_.find(address);
  return cell == nullptr ? nullptr : &writers_[cell->writer];
}

unsigned int GlobalMemory::transport_dbg(tlm::tlm_generic_payload& trans) {
  const std::uint64_t address = trans.get_address() & kLocalMask;
  const std::uint64_t length = trans.get_data_length();
  const bool done = trans.is_read() ? read_bytes(address, trans.get_data_ptr(), length)
                                    : write_bytes(address, trans.get_data_ptr(), length);
  return done ? static_cast<unsigned int>(length) : 0;
}

bool GlobalMemory::PostedRun::extends(const PostedWrite& next) const {
  const std::uint64_t behind = count - 1;
  const sc_time last_arrival = head.arrival + ps_exact(arrival_step.value() * behind);
  const std::uint64_t last_address =
      head.address + static_cast<std::uint64_t>(address_step) * behind;
  if (next.value != head.value || next.kind != head.kind || next.source.rank != head.source.rank ||
      next.source.block != head.source.block || next.source.index != head.source.index + count ||
      next.arrival < last_arrival) {
    return false;
  }
  return !stepped || (next.arrival - last_arrival == arrival_step &&
                      next.address - last_address == static_cast<std::uint64_t>(address_step));
}

void GlobalMemory::PostedRun::append(const PostedWrite& next) {
  if (!stepped) {
    arrival_step = next.arrival - head.arrival;
    address_step = static_cast<std::int64_t>(next.address - head.address);
    stepped = true;
  }
  ++count;
}

void GlobalMemory::PostedRun::advance() {
  head.arrival += arrival_step;
  ++head.sequence;
  head.address += static_cast<std::uint64_t>(address_step);
  ++head.source.index;
  order = head.source.order();
  --count;
}

void GlobalMemory::post(const PostedWrite& write) {
  // Only the update issued right after the open run's last can extend it: sequences in a run
  // are consecutive, so no other update can fall between two of its own.
  if (open_run_ && write.sequence == open_run_->head.sequence + open_run_->count &&
      open_run_->extends(write)) {
    open_run_->append(write);
    return;
  }
  if (open_run_) {
    posted_.push_back(*open_run_);
    std::push_heap(posted_.begin(), posted_.end());
  }
  open_run_ = PostedRun{write, write.source.order(), 1, sc_core::SC_ZERO_TIME, 0, false};
}

std::uint64_t GlobalMemory::posted_updates() {
  land(current_time(*this));
  std::uint64_t updates = open_run_ ? open_run_->count : 0;
  for (const PostedRun& run : posted_) updates += run.count;
  return updates;
}

std::size_t GlobalMemory::posted_entries() {
  land(current_time(*this));
  return posted_.size() + (open_run_ ? 1 : 0);
}

bool GlobalMemory::open_run_lands_next() const {
  return open_run_ && (posted_.empty() || posted_.front() < *open_run_);
}

bool GlobalMemory::next_posted(sc_time& arrival) const {
  if (posted_.empty() && !open_run_) return false;
  arrival = open_run_lands_next() ? open_run_->head.arrival : posted_.front().head.arrival;
  return true;
}

void GlobalMemory::sink_top() {
  // One pass down from the top, where a pop and a push would make two.
  const std::size_t size = posted_.size();
  PostedRun moving = posted_.front();
  std::size_t hole = 0;
  for (std::size_t child = 1; child < size; child = 2 * hole + 1) {
    if (child + 1 < size && posted_[child] < posted_[child + 1]) ++child;  // the earlier child
    if (!(moving < posted_[child])) break;
    posted_[hole] = posted_[child];
    hole = child;
  }
  posted_[hole] = moving;
}

sc_time GlobalMemory::land(const sc_time& until) {
  sc_time last = sc_core::SC_ZERO_TIME;
  sc_time next;
  while (next_posted(next) && next <= until) {
    last = next;
    // The run on top lands its head; the rest of it goes back where its next update belongs.
    PostedWrite write;
    if (open_run_lands_next()) {
      write = open_run_->head;
      open_run_->advance();
      if (open_run_->count == 0) open_run_.reset();
    } else {
      PostedRun& top = posted_.front();
      write = top.head;
      top.advance();
      if (top.count == 0) {
        std::pop_heap(posted_.begin(), posted_.end());
        posted_.pop_back();
      } else {
        sink_top();
      }
    }
    const auto [cell, first_write] = cells_.try_emplace(write.address);
    if (first_write) {
      cell.op = static_cast<std::uint32_t>(write.kind);
      if (keep_writers_) {
        if (writers_.size() >= kWriterLimit) throw_too_many_cells();
        cell.writer = static_cast<std::uint32_t>(writers_.size());
        writers_.push_back({});
      }
    }
    if (cell.op != static_cast<std::uint32_t>(write.kind) && !mixed_write_)
      mixed_write_ = MixedWrite{write.address, write.arrival};
    // Signals wrap like the hardware's INT32 atomics do.
    cell.value = write.kind == AtomicWrite::Kind::SignalSet
                     ? write.value
                     : static_cast<std::int32_t>(static_cast<std::uint32_t>(cell.value) +
                                                 static_cast<std::uint32_t>(write.value));
    if (keep_writers_) writers_[cell.writer] = {write.arrival.value(), write.source};
    if (sink_ != nullptr)
      cell_changes_.push_back({write.address, write.arrival.value(), cell.value});
  }
  return last;
}

void GlobalMemory::trace_cells(TraceSink* sink, const std::string& scope, const std::string& signal,
                               std::uint64_t address, int rows, int cols) {
  sink_ = sink;
  traced_signals_.push_back({scope, signal, address, rows, cols});
}

void GlobalMemory::flush_trace() {
  if (sink_ == nullptr) return;
  std::set<std::uint64_t> touched = polled_cells_;
  for (const CellChange& change : cell_changes_) touched.insert(change.address);
  std::map<std::uint64_t, int> vars;
  for (const TracedSignal& s : traced_signals_) {
    const std::uint64_t end = s.address + 4 * static_cast<std::uint64_t>(s.rows) * s.cols;
    for (auto cell = touched.lower_bound(s.address); cell != touched.end() && *cell < end; ++cell) {
      const std::uint64_t index = (*cell - s.address) / 4;
      const std::string name =
          s.name + "_r" + std::to_string(index / s.cols) + "_c" + std::to_string(index % s.cols);
      const int var = sink_->declare(s.scope, name, 32, TraceSink::Kind::Value);
      sink_->record(var, 0, 0);
      vars[*cell] = var;
    }
  }
  for (const CellChange& change : cell_changes_) {
    const auto var = vars.find(change.address);
    if (var != vars.end()) sink_->record(var->second, change.time_ps, change.value);
  }
  cell_changes_.clear();
  polled_cells_.clear();
}

}  // namespace ars
