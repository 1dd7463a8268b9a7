#include "models/device/vector_core.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>

#include "kernels/elementwise.h"
#include "models/fabric/transaction.h"

namespace ars {

using sc_core::sc_time;
using sc_core::sc_time_stamp;

namespace {

// The messages of the hot operations are built out of line: a rank's stack is cold in the
// caches each time its thread resumes, so every line its frames span costs a miss, and stream
// and string temporaries would widen the frames of transfers, notifies and waits.
[[gnu::cold, gnu::noinline, noreturn]] void throw_misfit(const char* op, std::uint64_t count,
                                                         std::uint64_t offset,
                                                         const TensorInfo& info,
                                                         std::uint64_t tile_elements) {
  std::ostringstream message;
  message << op << " of " << count << " elements at offset " << offset << " does not fit "
          << info.name << " (" << info.elements << " elements) or the tile (" << tile_elements
          << " elements)";
  throw InputError(message.str());
}

[[gnu::cold, gnu::noinline]] std::string transfer_line(const char* op, int peer,
                                                       const std::string& window,
                                                       std::uint64_t offset, std::uint64_t bytes,
                                                       bool atomic_add) {
  std::ostringstream line;
  line << op << " peer=" << peer << " window=" << window << " offset=" << offset
       << " bytes=" << bytes;
  if (atomic_add) line << " atomic_add";
  return line.str();
}

[[gnu::cold, gnu::noinline]] std::string notify_line(int peer, const std::string& signal, int row,
                                                     int col, NotifyOp op, std::int32_t value,
                                                     bool dropped) {
  return "notify peer=" + std::to_string(peer) + " cell=" + signal + "[" + std::to_string(row) +
         "," + std::to_string(col) + "] " + to_string(op) + " value=" + std::to_string(value) +
         (dropped ? " dropped" : "");
}

[[gnu::cold, gnu::noinline]] std::string wait_line(const std::string& signal, int row, int col,
                                                   WaitCmp cmp, std::int32_t expected,
                                                   bool skipped) {
  return "wait cell=" + signal + "[" + std::to_string(row) + "," + std::to_string(col) + "] " +
         to_string(cmp) + " expected=" + std::to_string(expected) + (skipped ? " skipped" : "");
}

}  // namespace

const char* to_string(SyncInstruction instruction) {
  switch (instruction) {
    case SyncInstruction::PipeBarrier:
      return "pipe_barrier";
    case SyncInstruction::Drain:
      return "drain";
    case SyncInstruction::Flush:
      return "flush";
    case SyncInstruction::Atomic:
      return "atomic";
    case SyncInstruction::Dsb:
      return "dsb";
    case SyncInstruction::Invalidate:
      return "invalidate";
    case SyncInstruction::StoreFence:
      return "store_fence";
  }
  return "?";
}

VectorCore::VectorCore(sc_core::sc_module_name name, const PlatformConfig& config, Binding binding,
                       UnifiedBuffer& ub, DmaEngine& dma, GlobalMemory& gm, InstantEvents& instants)
    : sc_module(name),
      to_noc("to_noc"),
      to_ub("to_ub"),
      clock_(config.clock_GHz),
      config_(config),
      binding_(std::move(binding)),
      ub_(ub),
      dma_(dma),
      gm_(gm),
      instants_(instants),
      pipe_barrier_cost_(clock_.cycles(config.pipe_barrier_cycles)),
      drain_cost_(clock_.cycles(config.drain_cycles)),
      flush_cost_(clock_.cycles(config.cache_flush_cycles)),
      atomic_cost_(clock_.cycles(config.notify_cycles)),
      dsb_cost_(clock_.cycles(config.dsb_cycles)),
      poll_period_(clock_.cycles(config.poll_period_cycles)),
      invalidate_cost_(clock_.cycles(config.cache_invalidate_cycles)),
      reduce_startup_(
          clock_.cycles(config.reduce_startup_cycles(binding_.problem->op == ReduceOp::Prod))),
      launch_offset_(clock_.cycles(config.launch_offset_cycles * binding_.rank)),
      launch_setup_(clock_.cycles(config.launch_setup_cycles)),
      notify_atomic_(new AtomicWrite) {
  notify_trans_.set_extension(notify_atomic_);
  notify_trans_.set_command(tlm::TLM_WRITE_COMMAND);
  notify_trans_.set_data_length(sizeof(std::int32_t));
  notify_trans_.set_streaming_width(sizeof(std::int32_t));
  // The configuration's bounds keep both inside what a notify's packed name holds.
  if (binding_.rank >= NotifyId::kRankLimit || binding_.block >= NotifyId::kBlockLimit)
    throw std::length_error("rank " + std::to_string(binding_.rank) + " block " +
                            std::to_string(binding_.block) + ": beyond what records can name");
  stats_.rank = binding_.rank;
  stats_.block = binding_.block;
  stats_.device = binding_.rank_devices->at(binding_.rank);
  notify_atomic_->flow = notify_flow(stats_.device, binding_.block);
  SC_THREAD(run);
}

void VectorCore::end_of_elaboration() {
  tlm::tlm_generic_payload probe;
  tlm::tlm_dmi dmi;
  probe.set_address(0);
  if (to_ub->get_direct_mem_ptr(probe, dmi)) ub_data_ = dmi.get_dmi_ptr();
}

void VectorCore::inject_faults(const Faults& faults) {
  for (const Fault& fault : faults) {
    if (fault.rank == rank()) faults_.push_back(fault);
  }
}

const Fault* VectorCore::find_fault(Fault::Kind kind, std::uint64_t index) const {
  for (const Fault& fault : faults_) {
    if (fault.kind == kind && (kind == Fault::Kind::Stall || fault.index == index)) return &fault;
  }
  return nullptr;
}

void VectorCore::run() {
  if (stalled()) return;  // a dead core: its peers' waits on it never end
  run_ahead_ = dma_.transfers_timed_whole() && sink_ == nullptr;
  if (launch_offset_ > sc_core::SC_ZERO_TIME) sc_core::wait(launch_offset_);
  stats_.start_ps = now().value();
  // Set-up the device does for every launch before the kernel body runs (no round: the
  // kernel has not started); it counts in the rank's time as it does on hardware.
  if (launch_setup_ > sc_core::SC_ZERO_TIME) {
    sc_core::wait(launch_setup_);
    mark(CoreSpan::Kind::Setup, stats_.start_ps, 0);
  }
  try {
    binding_.body(*this);
    settle_invalidate();
    drain_posted();
  } catch (const std::exception& error) {
    failure_ = "rank " + std::to_string(rank()) + ": " + error.what();
    // Several ranks may fail in the same instant; only the first stops the simulation.
    if (sc_core::sc_get_curr_simcontext()->sim_status() != sc_core::SC_SIM_USER_STOP)
      sc_core::sc_stop();
    return;
  }
  stats_.finish_ps = now().value();
  catch_up();
  stats_.finished = true;
  if (progress_ != nullptr) {
    progress_->reached(stats_.finish_ps);
    progress_->finished_ranks.fetch_add(1, std::memory_order_relaxed);
  }
  if (sink_ != nullptr) sink_->record_text(phase_var_, stats_.finish_ps, "done");
  // The thread stays, asleep for good, rather than end: SystemC unlinks an ended thread from
  // its list of every thread by walking it, which for all ranks costs O(P^2) at the end.
  sc_core::wait(look_);
}

RankStats VectorCore::release_stats() {
  stats_.ub_peak_bytes = ub_.peak_bytes_in_use();
  if (!kept_.records || !kept_.rounds) {
    stats_.rounds.clear();
    stats_.sync.clear();
  }
  return std::move(stats_);
}

RoundRecord& VectorCore::round() {
  if (stats_.rounds.empty()) begin_round("kernel");
  return stats_.rounds.back();
}

void VectorCore::begin_round(const char* phase) {
  RoundRecord next;
  next.round = rounds_begun_++;
  next.phase = phase;
  next.start_ps = now().value();
  if (progress_ != nullptr) {
    progress_->reached(next.start_ps);
    progress_->operated();
  }
  if (!kept_.records || !kept_.rounds) {
    stats_.rounds.clear();
    stats_.sync.clear();
  }
  if (kept_.records && !kept_.rounds) stats_.round_phases.push_back(next.phase);
  stats_.rounds.push_back(next);
  if (!config_.codegen.name.empty()) stats_.sync.emplace_back();
  if (record_schedule_) log("round index=" + std::to_string(next.round) + " phase=" + phase);
  if (sink_ != nullptr) {
    sink_->record_text(phase_var_, next.start_ps, phase);
    sink_->record(round_var_, next.start_ps, next.round);
  }
}

void VectorCore::spend(const sc_time& span, std::uint64_t RoundRecord::*bucket) {
  round().*bucket += span.value();
  if (span > sc_core::SC_ZERO_TIME) pass(now() + span);
}

const sc_time& VectorCore::now() {
  const sc_time& simulated = current_time(*this);
  if (local_time_ < simulated) local_time_ = simulated;
  return local_time_;
}

void VectorCore::pass(const sc_time& until) {
  if (!run_ahead_) {
    if (until > current_time(*this)) instants_.wait_until(until, current_time(*this));
    return;
  }
  if (until > local_time_) local_time_ = until;
  if ((local_time_ - current_time(*this)).value() > kRunAheadPs) catch_up();
}

void VectorCore::catch_up() {
  if (local_time_ > current_time(*this)) instants_.wait_until(local_time_, current_time(*this));
}

void VectorCore::await(std::uint64_t ticket, DmaEngine::Milestone milestone) {
  sc_time at;
  if (run_ahead_ && dma_.time_of(ticket, milestone, at)) {
    pass(at);
    return;
  }
  catch_up();
  if (milestone == DmaEngine::Milestone::Landed) {
    dma_.wait_done(ticket);
  } else {
    dma_.wait_left(ticket);
  }
}

int VectorCore::round_index() const {
  return rounds_begun_ - 1;
}

void VectorCore::mark(CoreSpan::Kind kind, std::uint64_t start_ps, std::uint32_t ref) {
  const std::uint64_t end_ps = now().value();
  if (kept_.records && end_ps > start_ps)
    stats_.spans.push_back({kind, round_index(), ref, start_ps, end_ps});
}

void VectorCore::log(const std::string& line) {
  if (!record_schedule_) return;
  const std::string block_part = blocks() > 1 ? " block=" + std::to_string(block()) : "";
  schedule_.add(now().value(), {"rank=", std::to_string(rank()), block_part, " op=", line});
}

void VectorCore::count_sync(SyncInstruction instruction, const sc_time& span) {
  // Only a codegen profile's outputs show the instructions: without one nothing is kept.
  if (config_.codegen.name.empty()) return;
  round();
  SyncCost& cost = stats_.sync.back()[static_cast<std::size_t>(instruction)];
  ++cost.count;
  cost.ps += span.value();
  // The dump lists the instructions the codegen emits (the atomic is the notify).
  if (instruction != SyncInstruction::Atomic) log(to_string(instruction));
}

void VectorCore::settle_invalidate() {
  if (!invalidate_owed_) return;
  invalidate_owed_ = false;
  count_sync(SyncInstruction::Invalidate, invalidate_cost_);
  spend(invalidate_cost_, &RoundRecord::barrier_ps);
}

Tensor VectorCore::input() const {
  const TensorInfo& t = binding_.memory->tensors.at(0);
  return {0, t.elements, t.dtype};
}

Tensor VectorCore::output() const {
  const TensorInfo& t = binding_.memory->tensors.at(1);
  return {1, t.elements, t.dtype};
}

Tensor VectorCore::window(const std::string& name) const {
  const auto& tensors = binding_.memory->tensors;
  for (std::size_t i = 2; i < tensors.size(); ++i) {
    if (tensors[i].name == name)
      return {static_cast<int>(i), tensors[i].elements, tensors[i].dtype};
  }
  throw InputError("the kernel asked for a window '" + name + "' that its layout does not declare");
}

Signal VectorCore::signal(const std::string& name) const {
  const auto& signals = binding_.memory->signals;
  for (std::size_t i = 0; i < signals.size(); ++i) {
    if (signals[i].name == name) return {static_cast<int>(i), signals[i].rows, signals[i].cols};
  }
  throw InputError("the kernel asked for a signal '" + name + "' that its layout does not declare");
}

const TensorInfo& VectorCore::tensor_info(const Tensor& tensor) const {
  return binding_.memory->tensors.at(static_cast<std::size_t>(tensor.id));
}

const SignalInfo& VectorCore::signal_info(const Signal& signal, int row, int col) const {
  const SignalInfo& info = binding_.memory->signals.at(static_cast<std::size_t>(signal.id));
  if (row < 0 || row >= info.rows || col < 0 || col >= info.cols) {
    throw InputError("signal cell [" + std::to_string(row) + "," + std::to_string(col) +
                     "] is outside the signal '" + info.name + "' of shape [" +
                     std::to_string(info.rows) + "," + std::to_string(info.cols) + "]");
  }
  return info;
}

int VectorCore::peer_device(int peer) const {
  if (peer < 0 || peer >= ranks()) {
    throw InputError("peer " + std::to_string(peer) +
                     " is not a rank (P = " + std::to_string(ranks()) + ")");
  }
  return (*binding_.rank_devices)[static_cast<std::size_t>(peer)];
}

Tile VectorCore::alloc(std::uint64_t elements, DType dtype) {
  return {ub_.allocate(elements * dtype_bytes(dtype)), elements, dtype};
}

void VectorCore::release(const Tile& tile) {
  await_tile_read(tile);
  ub_.release(tile.offset);
}

void VectorCore::await_posted(std::size_t index) {
  const sc_time begin = now();
  await(posted_[index].ticket, DmaEngine::Milestone::Landed);
  round().transfer_ps += (now() - begin).value();
  mark(CoreSpan::Kind::Transfer, begin.value(), static_cast<std::uint32_t>(posted_[index].ticket));
  posted_.erase(posted_.begin() + static_cast<std::ptrdiff_t>(index));
}

void VectorCore::await_tile_read(const Tile& tile) {
  const std::uint64_t begin = tile.offset;
  const std::uint64_t end = begin + tile.elements * dtype_bytes(tile.dtype);
  const sc_time start = now();
  for (const PostedStore& store : posted_) {
    if (store.ub_begin < end && begin < store.ub_end) {
      const std::uint64_t waited_from = now().value();
      await(store.ticket, DmaEngine::Milestone::Left);
      mark(CoreSpan::Kind::Transfer, waited_from, static_cast<std::uint32_t>(store.ticket));
    }
  }
  round().transfer_ps += (now() - start).value();
}

void VectorCore::await_gm(std::uint64_t begin, std::uint64_t end) {
  for (std::size_t i = posted_.size(); i-- > 0;) {
    if (posted_[i].gm_begin < end && begin < posted_[i].gm_end) await_posted(i);
  }
}

void VectorCore::drain_posted() {
  while (!posted_.empty()) await_posted(posted_.size() - 1);
}

Transfer VectorCore::start_transfer(const char* op, DmaEngine::Direction direction,
                                    const Tile& tile, const Tensor& tensor, int peer,
                                    std::uint64_t offset, std::uint64_t count, bool atomic_add) {
  settle_invalidate();
  const TensorInfo& info = tensor_info(tensor);
  if (offset > info.elements || count > info.elements - offset || count > tile.elements)
    throw_misfit(op, count, offset, info, tile.elements);
  const std::size_t element_bytes = dtype_bytes(info.dtype);
  const std::uint64_t bytes = count * element_bytes;
  const int device = peer_device(peer);
  DmaEngine::Request request{
      direction,   global_address(device, info.address + offset * element_bytes),
      tile.offset, bytes,
      atomic_add,  info.dtype};
  const std::uint64_t gm_end = request.gm_address + bytes;
  if (direction == DmaEngine::Direction::ToUb) await_tile_read(tile);
  await_gm(request.gm_address, gm_end);
  const bool remote = peer != rank();
  if (remote) {
    (direction == DmaEngine::Direction::ToUb ? stats_.remote_read_bytes
                                             : stats_.remote_write_bytes) += bytes;
    round().remote_bytes += bytes;
  } else {
    stats_.local_bytes += bytes;
  }
  round().bytes += bytes;
  ++stats_.transfers;
  if (progress_ != nullptr) progress_->operated();
  if (record_schedule_) log(transfer_line(op, peer, info.name, offset, bytes, atomic_add));
  // Running ahead, the core submits only its own memory's transfers that start at its time;
  // the others ask for links and peers' memories, which are served in the order of time. With
  // payloads, only those of its input and output: peers read and write windows, and bytes
  // moved ahead of their time would show them what they could not see yet.
  const bool private_bytes = ub_data_ == nullptr || tensor.id < 2;
  if (run_ahead_) {
    if (now() == current_time(*this)) transfers_ahead_ = 0;
    if (remote || !private_bytes || transfers_ahead_ == kTransfersAhead ||
        !dma_.starts_at(request, now())) {
      catch_up();
      transfers_ahead_ = 0;
    }
    if (now() > current_time(*this)) ++transfers_ahead_;
  }
  const std::uint64_t ticket = dma_.submit(request, now());
  if (TransferRecord* record = dma_.record(ticket)) {
    record->op = direction == DmaEngine::Direction::ToUb
                     ? (remote ? TransferRecord::Op::RemoteLoad : TransferRecord::Op::Load)
                     : (remote ? TransferRecord::Op::RemoteStore : TransferRecord::Op::Store);
    record->peer = peer;
    record->round = round_index();
  }
  return {ticket};
}

void VectorCore::load(const Tile& dst, const Tensor& src, std::uint64_t offset,
                      std::uint64_t count) {
  sync(start_transfer("load", DmaEngine::Direction::ToUb, dst, src, rank(), offset, count, false));
}

void VectorCore::store(const Tile& src, const Tensor& dst, std::uint64_t offset,
                       std::uint64_t count) {
  const Transfer transfer =
      start_transfer("store", DmaEngine::Direction::FromUb, src, dst, rank(), offset, count, false);
  if (config_.codegen.store_fence != 0 && dst.id >= 2) {
    // The fence after a window store: the store lands, then a cache-line flush, a pipe
    // barrier and a dsb, so that no peer can read the window before the bytes are there.
    const sc_time begin = now();
    await(transfer.id, DmaEngine::Milestone::Landed);
    const sc_time landed = now() - begin;
    round().barrier_ps += landed.value();
    const sc_time fence = clock_.cycles(config_.cache_flush_cycles + config_.pipe_barrier_cycles +
                                        config_.dsb_cycles);
    count_sync(SyncInstruction::StoreFence, landed + fence);
    spend(fence, &RoundRecord::barrier_ps);
    return;
  }
  if (config_.dma_posted_stores == 0) {
    sync(transfer);
    return;
  }
  // Stores that have landed need no more waiting; forgetting them keeps the checks short.
  posted_.erase(std::remove_if(posted_.begin(), posted_.end(),
                               [&](const PostedStore& p) { return dma_.done(p.ticket, now()); }),
                posted_.end());
  const std::size_t element_bytes = dtype_bytes(src.dtype);
  const std::uint64_t gm_begin =
      global_address((*binding_.rank_devices)[static_cast<std::size_t>(rank())],
                     tensor_info(dst).address + offset * element_bytes);
  posted_.push_back({transfer.id, src.offset, src.offset + count * element_bytes, gm_begin,
                     gm_begin + count * element_bytes});
}

Transfer VectorCore::remote_load_async(const Tile& dst, const Tensor& window, int peer,
                                       std::uint64_t offset, std::uint64_t count) {
  return start_transfer("remote_load", DmaEngine::Direction::ToUb, dst, window, peer, offset, count,
                        false);
}

Transfer VectorCore::remote_store_async(const Tile& src, const Tensor& window, int peer,
                                        std::uint64_t offset, std::uint64_t count, StoreOp op) {
  return start_transfer("remote_store", DmaEngine::Direction::FromUb, src, window, peer, offset,
                        count, op == StoreOp::AtomicAdd);
}

void VectorCore::sync(const Transfer& transfer) {
  settle_invalidate();
  const sc_time begin = now();
  await(transfer.id, DmaEngine::Milestone::Landed);
  if (progress_ != nullptr) progress_->reached(now().value());
  round().transfer_ps += (now() - begin).value();
  mark(CoreSpan::Kind::Transfer, begin.value(), static_cast<std::uint32_t>(transfer.id));
}

void VectorCore::reduce(const Tile& acc, const Tile& other, std::uint64_t count) {
  if (count > acc.elements || count > other.elements || acc.dtype != other.dtype) {
    throw InputError("reduce of " + std::to_string(count) + " elements does not fit its tiles");
  }
  const std::uint64_t bytes = count * dtype_bytes(acc.dtype);
  settle_invalidate();
  await_tile_read(acc);
  ++stats_.reduces;
  if (progress_ != nullptr) progress_->operated();
  if (record_schedule_)
    log("reduce " + std::string(to_string(problem().op)) + " bytes=" + std::to_string(bytes));
  const std::uint64_t begin = now().value();
  spend(
      reduce_startup_ + clock_.cycles(static_cast<double>(bytes) / config_.vector_bytes_per_cycle),
      &RoundRecord::reduce_ps);
  mark(CoreSpan::Kind::Reduce, begin, static_cast<std::uint32_t>(stats_.reduces - 1));
  if (ub_data_ != nullptr) {
    reduce_elements(problem().op, acc.dtype, ub_data_ + acc.offset, ub_data_ + other.offset, count);
  }
}

void VectorCore::notify(const Signal& signal, int peer, int row, int col, std::int32_t value,
                        NotifyOp op) {
  settle_invalidate();
  const SignalInfo& info = signal_info(signal, row, col);
  const int device = peer_device(peer);
  const std::uint64_t index = stats_.notifies++;
  if (progress_ != nullptr) progress_->operated();
  const Fault* dropped = find_fault(Fault::Kind::DropNotify, index);
  if (const Fault* changed = find_fault(Fault::Kind::NotifyValue, index)) value = changed->value;
  if (record_schedule_) log(notify_line(peer, info.name, row, col, op, value, dropped != nullptr));
  // What the codegen emits before the write leaves the core: a pipe barrier (or a narrower
  // drain) that lets no store the peer may read stay behind, the cache-line flush and the
  // atomic's issue. One wait for their sum keeps the timing of the default lowering exact.
  const Codegen& codegen = config_.codegen;
  const bool pipes_idle = now().value() == notify_end_ps_;
  struct EndMark {
    VectorCore& core;
    std::uint64_t& at;
    ~EndMark() { at = core.now().value(); }
  } end_mark{*this, notify_end_ps_};
  if (codegen.notify_barrier != Codegen::NotifyBarrier::None) drain_posted();
  NotifyRecord record;
  record.peer = peer;
  record.signal = signal.id;
  record.row = row;
  record.col = col;
  record.value = value;
  record.dropped = dropped != nullptr;
  record.start_ps = now().value();
  double cycles = config_.notify_cycles;
  if (codegen.notify_barrier == Codegen::NotifyBarrier::PipeAll) {
    if (!pipes_idle) cycles += config_.pipe_barrier_cycles;
    count_sync(SyncInstruction::PipeBarrier,
               pipes_idle ? sc_core::SC_ZERO_TIME : pipe_barrier_cost_);
  } else if (codegen.notify_barrier == Codegen::NotifyBarrier::Drain) {
    cycles += config_.drain_cycles;
    count_sync(SyncInstruction::Drain, drain_cost_);
  }
  if (codegen.notify_flush != 0) {
    cycles += config_.cache_flush_cycles;
    count_sync(SyncInstruction::Flush, flush_cost_);
  }
  count_sync(SyncInstruction::Atomic, atomic_cost_);
  spend(clock_.cycles(cycles), &RoundRecord::barrier_ps);
  const auto ref = static_cast<std::uint32_t>(index);
  mark(CoreSpan::Kind::Notify, record.start_ps, ref);
  const std::uint64_t issued_ps = now().value();
  record.end_ps = issued_ps;
  if (kept_.records) stats_.notify_links.push_back({issued_ps, round_index()});
  if (kept_.sync_records) stats_.notify_records.push_back(record);
  if (dropped != nullptr) return;
  catch_up();  // the atomic asks for links and the peer's memory in the order of time
  tlm::tlm_generic_payload& trans = notify_trans_;
  notify_atomic_->kind =
      op == NotifyOp::AtomicAdd ? AtomicWrite::Kind::SignalAdd : AtomicWrite::Kind::SignalSet;
  notify_atomic_->source_rank = rank();
  notify_atomic_->source_block = block();
  notify_atomic_->source_notify = ref;
  notify_atomic_->claim = Claim();
  notify_atomic_->claim.checked = dma_.transfers_timed_whole();
  notify_atomic_->claim.kind = ClaimKind::Notify;
  notify_atomic_->claim.at = now();
  trans.set_address(
      global_address(device, info.address + 4 * static_cast<std::uint64_t>(row * info.cols + col)));
  trans.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_time delay = sc_core::SC_ZERO_TIME;
  to_noc->b_transport(trans, delay);  // lands at the peer after the path latency
  if (!trans.is_response_ok()) throw InputError("notify to an address outside the peer's memory");
  if (notify_atomic_->claim.conflict)
    dma_.note_conflict(notify_atomic_->flow, notify_atomic_->claim);
  // `delay` is when the acknowledgement is back: a core that fences after the atomic (a data
  // synchronisation barrier) waits for it; otherwise the notify is posted.
  if (codegen.notify_dsb == 0) return;
  const sc_time dsb =
      dsb_cost_ + (config_.notify_acknowledged != 0 ? delay : sc_core::SC_ZERO_TIME);
  count_sync(SyncInstruction::Dsb, dsb);
  if (dsb == sc_core::SC_ZERO_TIME) return;
  spend(dsb, &RoundRecord::barrier_ps);
  mark(CoreSpan::Kind::Notify, issued_ps, ref);
  if (kept_.sync_records) stats_.notify_records.back().end_ps = now().value();
}

void VectorCore::wait(const Signal& signal, int row, int col, std::int32_t expected, WaitCmp cmp) {
  const SignalInfo& info = signal_info(signal, row, col);
  const std::uint64_t address =
      info.address + 4 * static_cast<std::uint64_t>(row * info.cols + col);
  const std::uint64_t index = stats_.waits++;
  if (progress_ != nullptr) progress_->operated();
  const bool skipped = find_fault(Fault::Kind::SkipWait, index) != nullptr;
  if (record_schedule_) log(wait_line(info.name, row, col, cmp, expected, skipped));
  if (skipped) {
    if (kept_.sync_records) {
      WaitRecord record;
      record.signal = signal.id;
      record.row = row;
      record.col = col;
      record.expected = expected;
      record.start_ps = record.end_ps = now().value();
      stats_.skipped_waits.push_back(record);
    }
    return;
  }
  const sc_time begin = now();
  auto satisfied = [&] {
    const std::int32_t value = gm_.poll_cell(address);
    return cmp == WaitCmp::Eq ? value == expected : value >= expected;
  };
  // Poll k looks at the cell at begin + k * period and answers one period later. Between
  // looks the core sleeps until some cell changes, then wakes at the next look. A core running
  // ahead that finds the cell unsatisfied as of the simulated time sleeps so too, woken at
  // begin by an update landing by then; found satisfied, it catches up for the first look.
  if (begin > current_time(*this) && satisfied()) catch_up();
  std::uint64_t look = 0;
  while (!satisfied()) {
    blocked_ = {true, cmp, signal.id, row, col, expected, begin.value(), now().value()};
    gm_.watch({&look_, begin, poll_period_});
    sc_core::wait(look_);
    // Posts landing later may have notified the look again meanwhile: not this wait's.
    gm_.unwatch(&look_);
    look_.cancel();
    const std::uint64_t period = poll_period_.value();
    look = period == 0 ? 0 : (now() - begin).value() / period;
  }
  blocked_.blocked = false;
  stats_.polls += look + 1;
  WaitRecord record;
  record.signal = signal.id;
  record.row = row;
  record.col = col;
  record.expected = expected;
  record.start_ps = begin.value();
  WaitLink link;
  link.seen_ps = now().value();
  if (kept_.sync_records) record.seen = gm_.read_cell(address);
  if (const GlobalMemory::CellWrite* write = kept_.records ? gm_.last_write(address) : nullptr) {
    link.blocked = write->landed_ps > record.start_ps;
    link.released_by = write->notify;
    record.landed_ps = write->landed_ps;
  }
  // With a zero poll period the look answers at once, when the cell changed.
  const sc_time answered = std::max(now(), begin + ps_exact((look + 1) * poll_period_.value()));
  round().barrier_ps += (now() - begin).value();
  switch (config_.codegen.wait_invalidate) {
    case Codegen::WaitInvalidate::EveryWait:
      count_sync(SyncInstruction::Invalidate, invalidate_cost_);
      spend(answered - now() + invalidate_cost_, &RoundRecord::barrier_ps);
      break;
    case Codegen::WaitInvalidate::WaitAll:
      invalidate_owed_ = true;
      spend(answered - now(), &RoundRecord::barrier_ps);
      break;
    case Codegen::WaitInvalidate::None:
      spend(answered - now(), &RoundRecord::barrier_ps);
      break;
  }
  record.end_ps = now().value();
  mark(CoreSpan::Kind::Wait, record.start_ps, static_cast<std::uint32_t>(stats_.wait_links.size()));
  if (kept_.records) stats_.wait_links.push_back(link);
  if (kept_.sync_records) stats_.wait_records.push_back(record);
}

void VectorCore::attach_trace(TraceSink* sink, const std::string& scope) {
  sink_ = sink;
  phase_var_ = sink->declare(scope, "phase", 64, TraceSink::Kind::Text);
  round_var_ = sink->declare(scope, "round", 16, TraceSink::Kind::Value);
  sink->record_text(phase_var_, 0, "launch");
  sink->record(round_var_, 0, 0);
}

}  // namespace ars
