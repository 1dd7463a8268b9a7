#include "models/device/dma_engine.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "models/fabric/transaction.h"

namespace ars {

using sc_core::sc_time;

namespace {

// A queue's thread only walks a transfer's bursts through the interconnect and memory: a
// small stack keeps thousands of them close together in memory.
constexpr std::size_t kQueueStackBytes = 64 * 1024;

// A transfer timed whole goes as a train of bursts from this many bursts on. The train spares
// each burst the sockets and extension look-ups (about 170 instructions), but its frames reach
// deeper into the rank's stack, cold at every resume: about 13 more lines written a rank-round
// on the quiet ring at P = 256, whatever the bursts (cachegrind, 256 KiB last level). At two
// bursts a transfer that costs more than the 3 % of instructions it saves; at four it saves 11 %.
constexpr std::uint64_t kTrainFromBursts = 3;

// Landed records are looked for once this many are held, so that a submit costs no extra
// look at a record long out of the cache.
constexpr std::uint64_t kRecordsHeld = 128;

[[gnu::cold, gnu::noinline, noreturn]] void throw_oversized(std::uint64_t bytes) {
  throw std::length_error("a DMA transfer of " + std::to_string(bytes) +
                          " bytes: at most 4 GiB at once");
}

[[gnu::cold, gnu::noinline]] void report_burst_failure(const char* engine, std::uint64_t address) {
  std::ostringstream message;
  message << "DMA burst failed at address 0x" << std::hex << address;
  SC_REPORT_ERROR(engine, message.str().c_str());
}

// Sets up a burst leaving at `issue` to ask then, and returns that time as its delay: zero burst
// by burst, where it asks at its leaving time; offset from now when timed whole.
sc_time ask(const sc_core::sc_object& engine, BurstTiming& timing, const sc_time& issue) {
  const sc_time delay = issue - current_time(engine);
  timing.reset(delay);
  timing.claim.at = issue;
  return delay;
}

}  // namespace

DmaEngine::DmaEngine(sc_core::sc_module_name name, const PlatformConfig& config, int device,
                     int block, InstantEvents& instants)
    : sc_module(name),
      to_noc("to_noc"),
      to_ub("to_ub"),
      clock_(config.clock_GHz),
      device_(device),
      block_(block),
      setup_(clock_.cycles(config.dma_setup_cycles)),
      local_read_rate_(clock_.rate(config.dma_mte2_bytes_per_cycle)),
      local_write_rate_(clock_.rate(config.dma_mte3_bytes_per_cycle)),
      remote_rate_(clock_.rate(config.dma_remote_bytes_per_cycle)),
      burst_bytes_(config.dma_burst_bytes),
      full_rate_alignment_(config.dma_full_rate_alignment),
      misaligned_factor_(config.dma_misaligned_rate_factor),
      instants_(instants),
      queues_(config.dma_queues),
      busy_vars_(config.dma_queues, -1) {
  for (int q = 1; q < config.dma_queues; ++q)
    more_payloads_.push_back(std::make_unique<QueuePayload>());
}

// Made while the simulation runs, the processes start as processes made at elaboration would
// resume: at the notify of work that announced the transfer, not at once (which would take it
// a delta cycle early), and named in the engine, not in the submitting core's process.
void DmaEngine::make_queue_processes() {
  const bool methods = whole_ && !burst_by_burst_ && burst_tickets_.empty() &&
                       setup_ == sc_core::SC_ZERO_TIME && sink_ == nullptr;
  if (!methods && before_queue_threads_) before_queue_threads_();
  queue_processes_made_ = true;
  sc_core::sc_simcontext& context = *sc_core::sc_get_curr_simcontext();
  context.hierarchy_push(this);
  for (int q = 0; q < static_cast<int>(queues_.size()); ++q) {
    sc_core::sc_spawn_options spawn;
    spawn.dont_initialize();
    spawn.set_sensitivity(&work_);
    const std::string name = "queue" + std::to_string(q);
    if (methods) {
      spawn.spawn_method();
      sc_core::sc_spawn([this, q] { queue_method(q); }, name.c_str(), &spawn);
    } else {
      spawn.set_stack_size(kQueueStackBytes);
      sc_core::sc_spawn([this, q] { queue_thread(q); }, name.c_str(), &spawn);
    }
  }
  context.hierarchy_pop();
}

DmaEngine::QueuePayload::QueuePayload() {
  trans.set_extension(&timing);
  trans.set_byte_enable_ptr(nullptr);
}

// The timing is the queue's own: taken off before the payload would free its extensions.
DmaEngine::QueuePayload::~QueuePayload() {
  trans.clear_extension(&timing);
}

void DmaEngine::end_of_elaboration() {
  tlm::tlm_generic_payload probe;
  tlm::tlm_dmi dmi;
  probe.set_address(0);
  if (to_ub->get_direct_mem_ptr(probe, dmi)) ub_ = dmi.get_dmi_ptr();
  if (burst_by_burst_) {
    for (const bool read : {true, false})
      own_whole_[read] = !burst_by_burst_(device_, device_, read);
  }
}

TransferRecord DmaEngine::landed_record(std::uint64_t ticket) const {
  TransferRecord record = records_[ticket];
  record.left_ps = times_[ticket].left_ps;
  record.finish_ps = times_[ticket].finish_ps;
  return record;
}

void DmaEngine::forget_landed() {
  if (times_.size() - times_.first() < kRecordsHeld) return;
  const std::uint64_t now = current_time(*this).value();
  std::uint64_t landed = 0;
  for (std::uint64_t t = times_.first();
       t < times_.size() && times_[t].issued && times_[t].finish_ps <= now; ++t) {
    ++landed;
  }
  if (keep_records_) {
    for (std::uint64_t t = times_.first(); t < times_.first() + landed; ++t)
      landed_.push_back(landed_record(t));
    records_.drop_front(landed);
  }
  times_.drop_front(landed);
}

int DmaEngine::queue_free_at(const Request& request, std::uint64_t ticket,
                             const sc_time& at) const {
  if (setup_ != sc_core::SC_ZERO_TIME || !pending_.empty() || !timed_whole(request, ticket))
    return -1;
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    if (!queues_[q].running && queues_[q].busy_until <= at) return static_cast<int>(q);
  }
  return -1;
}

bool DmaEngine::starts_at(const Request& request, const sc_time& at) const {
  return queue_free_at(request, times_.size(), at) >= 0;
}

std::uint64_t DmaEngine::submit(const Request& request, const sc_time& at) {
  forget_landed();
  const std::uint64_t ticket = times_.size();
  times_.push_back({});
  if (request.bytes > UINT32_MAX) throw_oversized(request.bytes);
  if (keep_records_) {
    TransferRecord record;
    record.bytes = static_cast<std::uint32_t>(request.bytes);
    record.submit_ps = at.value();
    record.misaligned = (request.gm_address & kLocalMask) % full_rate_alignment_ != 0;
    records_.push_back(record);
  }
  // Timed whole, a transfer that an idle queue would start at `at` is reserved here and now,
  // by the calling thread: the queue's thread would do the same, a few events later.
  if (const int q = queue_free_at(request, ticket, at); q >= 0) {
    note_start(ticket, q, at);
    execute(request, ticket, q, at, false);
    queues_[static_cast<std::size_t>(q)].busy_until = ps_exact(times_[ticket].left_ps);
    times_[ticket].issued = true;
    return ticket;
  }
  if (!queue_processes_made_) make_queue_processes();
  pending_.push_back({ticket, request});
  work_.notify(sc_core::SC_ZERO_TIME);
  return ticket;
}

TransferLog DmaEngine::release_records() {
  if (keep_records_) {
    for (std::uint64_t t = times_.first(); t < times_.size(); ++t)
      landed_.push_back(landed_record(t));
  }
  return std::move(landed_);
}

bool DmaEngine::timed_whole(const Request& request, std::uint64_t ticket) const {
  if (!whole_) return false;
  if (!burst_tickets_.empty() &&
      std::binary_search(burst_tickets_.begin(), burst_tickets_.end(), ticket))
    return false;
  if (!burst_by_burst_) return true;
  const int target = address_device(request.gm_address);
  const bool read = request.direction == Direction::ToUb;
  // The engine's own memory takes no path: answered apart, so that the memo keeps the answer
  // for its peer, which a rank's rounds ask for between transfers of its own.
  if (target == device_) return own_whole_[read];
  if (target != whole_memo_.target || read != whole_memo_.read)
    whole_memo_ = {target, read, !burst_by_burst_(device_, target, read)};
  return whole_memo_.whole;
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
    // A queue holding a transfer reserved by submit() takes the next one when that has left.
    while (pending_.empty() || queues_[queue].busy_until > current_time(*this)) {
      if (queues_[queue].busy_until > current_time(*this)) {
        sc_core::wait(queues_[queue].busy_until - current_time(*this), work_);
      } else {
        sc_core::wait(work_);
      }
    }
    const Pending job = pending_.front();
    pending_.pop_front();
    if (sink_ != nullptr) sink_->record(busy_vars_[queue], current_time(*this).value(), 1);
    // Looked up by ticket after every wait: submits may grow the logs meanwhile.
    note_start(job.ticket, queue, current_time(*this));
    queues_[queue].running = true;
    execute(job.request, job.ticket, queue, current_time(*this), true);
    queues_[queue].running = false;
    times_[job.ticket].issued = true;
    if (sink_ != nullptr) sink_->record(busy_vars_[queue], current_time(*this).value(), -1);
    scheduled_.notify(sc_core::SC_ZERO_TIME);
  }
}

// The queue's thread's steps at the same instants, for a run whose transfers are all timed whole
// with no set-up and no trace: it takes the next transfer once the queue is free, reserves it at
// once as submit() does, and marks it issued when its last burst has left. A method needs no
// stack.
void DmaEngine::queue_method(int queue) {
  QueueState& state = queues_[static_cast<std::size_t>(queue)];
  const sc_time now = current_time(*this);
  for (;;) {
    if (state.running) {
      if (state.busy_until > now) {
        next_trigger(instants_.event_at(state.busy_until, now));
        return;
      }
      state.running = false;
      times_[state.ticket].issued = true;
      scheduled_.notify(sc_core::SC_ZERO_TIME);
    }
    if (pending_.empty()) return;  // woken by the next work
    if (state.busy_until > now) {
      next_trigger(state.busy_until - now, work_);
      return;
    }
    const Pending job = pending_.front();
    pending_.pop_front();
    note_start(job.ticket, queue, now);
    state.running = true;
    state.ticket = job.ticket;
    execute(job.request, job.ticket, queue, now, false);
    state.busy_until = ps_exact(times_[job.ticket].left_ps);
  }
}

void DmaEngine::wait_done(std::uint64_t ticket) {
  if (forgotten(ticket)) return;
  while (!times_.at(ticket).issued) sc_core::wait(scheduled_);
  const sc_time finish = ps_exact(times_[ticket].finish_ps);
  if (finish > current_time(*this)) instants_.wait_until(finish, current_time(*this));
}

void DmaEngine::wait_left(std::uint64_t ticket) {
  if (forgotten(ticket)) return;
  while (!times_.at(ticket).issued) sc_core::wait(scheduled_);
  const sc_time left = ps_exact(times_[ticket].left_ps);
  if (left > current_time(*this)) instants_.wait_until(left, current_time(*this));
}

bool DmaEngine::time_of(std::uint64_t ticket, Milestone milestone, sc_time& at) const {
  if (forgotten(ticket)) {
    at = sc_core::SC_ZERO_TIME;
    return true;
  }
  const Times& times = times_.at(ticket);
  if (!times.issued) return false;
  at = ps_exact(milestone == Milestone::Landed ? times.finish_ps : times.left_ps);
  return true;
}

bool DmaEngine::done(std::uint64_t ticket, const sc_time& at) const {
  sc_time landed;
  return time_of(ticket, Milestone::Landed, landed) && landed <= at;
}

sc_time DmaEngine::leave(Progress& progress, std::uint64_t bytes, std::uint64_t offset) const {
  const sc_time issue = progress.issued_by;
  progress.issued_by =
      progress.start + ps(std::floor(std::min(offset + burst_bytes_, bytes) / progress.rate));
  return issue;
}

bool DmaEngine::passed_burst(Progress& progress, std::uint64_t ticket,
                             const tlm::tlm_generic_payload& trans, BurstTiming& timing,
                             std::uint64_t address, const sc_time& asked_at,
                             const sc_time& issued_by) {
  if (!trans.is_response_ok()) {
    report_burst_failure(name(), address);
    times_[ticket].finish_ps = progress.finish.value();
    return false;
  }
  if (timing.claim.conflict) {
    note_conflict(timing.flow, timing.claim);
    if (!survey_) {
      times_[ticket].finish_ps = progress.finish.value();
      return false;
    }
    timing.claim.conflict = false;  // goes on as if it had met nothing
  }
  const sc_time passed = asked_at + timing.tail;
  const sc_time landed = std::max(issued_by, passed) + timing.latency;
  if (landed >= progress.finish) {
    progress.finish = landed;
    progress.limit = passed > issued_by ? timing.limit : TransferLimit{};
    progress.held = passed > issued_by ? passed - issued_by : sc_core::SC_ZERO_TIME;
    progress.latency = timing.latency;
  }
  return true;
}

// A transfer timed whole of kTrainFromBursts bursts or more, as one transaction: its bursts ask
// one after another as the targets serve them. The train keeps a copy of the transfer's
// progress until it is back, a member rather than one more pointer to follow at every burst.
class DmaEngine::Train final : public BurstTrain {
 public:
  Train(DmaEngine& engine, const Progress& progress, const Request& request, std::uint64_t ticket,
        tlm::tlm_generic_payload& trans, BurstTiming& timing)
      : BurstTrain(engine.burst_bytes_),
        engine_(engine),
        progress_(progress),
        request_(request),
        ticket_(ticket),
        trans_(trans),
        timing_(timing) {}
  sc_time leaves(std::uint64_t offset) override {
    offset_ = offset;
    return ask(engine_, timing_, engine_.leave(progress_, request_.bytes, offset));
  }
  bool passed() override {
    ended_ =
        !engine_.passed_burst(progress_, ticket_, trans_, timing_, request_.gm_address + offset_,
                              current_time(engine_), progress_.issued_by);
    return !ended_;
  }
  const Progress& progress() const { return progress_; }
  bool ended() const { return ended_; }

 private:
  DmaEngine& engine_;
  Progress progress_;
  const Request& request_;
  std::uint64_t ticket_;
  tlm::tlm_generic_payload& trans_;
  BurstTiming& timing_;
  std::uint64_t offset_ = 0;
  bool ended_ = false;
};

bool DmaEngine::send_train(Progress& progress, const Request& request, std::uint64_t ticket,
                           tlm::tlm_generic_payload& trans, BurstTiming& timing) {
  trans.set_address(request.gm_address);
  trans.set_data_ptr(ub_ == nullptr ? nullptr : ub_ + request.ub_offset);
  trans.set_data_length(static_cast<unsigned int>(request.bytes));
  trans.set_streaming_width(static_cast<unsigned int>(request.bytes));
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  Train train(*this, progress, request, ticket, trans, timing);
  timing.train = &train;
  sc_time delay = sc_core::SC_ZERO_TIME;
  to_noc->b_transport(trans, delay);
  timing.train = nullptr;
  progress = train.progress();
  return !train.ended();
}

void DmaEngine::execute(const Request& request, std::uint64_t ticket, int queue, const sc_time& at,
                        bool queue_thread) {
  const bool whole = timed_whole(request, ticket);
  // Bursts leave at the queue's rate, timed from the start so rounding never accumulates. The
  // burst that lands last names what bound the transfer: its queue's rate when it landed as
  // soon as it was issued, else the resource that held it longest.
  Progress progress;
  progress.start = at + setup_;
  progress.rate = rate_bytes_per_ps(request);
  progress.issued_by = progress.start;
  progress.finish = progress.start;

  // The queue's payload: no other transfer uses it meanwhile (the queue runs one at a time).
  QueuePayload& payload = queue_payload(queue);
  tlm::tlm_generic_payload& trans = payload.trans;
  BurstTiming* timing = &payload.timing;
  *timing = BurstTiming();
  timing->flow = transfer_flow(device_, block_, ticket);
  // An element-wise add's extension is the transfer's own, freed whichever way it ends.
  if (request.atomic_add) {
    auto* atomic = new AtomicWrite;
    atomic->kind = AtomicWrite::Kind::DataAdd;
    atomic->dtype = request.dtype;
    trans.set_extension(atomic);
  }
  struct OwnAtomic {
    tlm::tlm_generic_payload& trans;
    bool set;
    ~OwnAtomic() {
      if (set) trans.release_extension<AtomicWrite>();
    }
  } own_atomic{trans, request.atomic_add};
  trans.set_command(request.direction == Direction::ToUb ? tlm::TLM_READ_COMMAND
                                                         : tlm::TLM_WRITE_COMMAND);
  timing->claim.checked = whole_;
  timing->claim.kind = whole ? ClaimKind::Whole : ClaimKind::Burst;
  if (whole && queue_thread) {
    // The first burst leaves at the start, as it does burst by burst; the others are
    // reserved now, each with its own leaving time as the annotated delay.
    if (progress.start > current_time(*this))
      instants_.wait_until(progress.start, current_time(*this));
  }

  // Timed whole, a transfer of kTrainFromBursts bursts or more goes down as one transaction
  // (see BurstTrain), every burst asking at once with its leaving time as the annotated delay.
  const bool as_train = whole && request.bytes > (kTrainFromBursts - 1) * burst_bytes_;
  if (as_train && !send_train(progress, request, ticket, trans, *timing)) return;
  // Otherwise one transaction a burst. Burst by burst, the interconnect serves a burst once
  // its instant is over (see Interconnect); the queue reads it after its next wait, before the
  // payload is reused.
  bool asked = false;
  sc_time asked_at;
  sc_time asked_issued_by;
  auto passed_asked = [&] {
    while (timing->waiting) sc_core::wait(*timing->served);
    asked = false;
    return passed_burst(progress, ticket, trans, *timing, trans.get_address(), asked_at,
                        asked_issued_by);
  };
  for (std::uint64_t offset = 0; !as_train && offset < request.bytes; offset += burst_bytes_) {
    const std::uint64_t length = std::min(burst_bytes_, request.bytes - offset);
    const sc_time issue = leave(progress, request.bytes, offset);
    if (!whole && issue > current_time(*this)) instants_.wait_until(issue, current_time(*this));
    if (asked && !passed_asked()) return;
    trans.set_address(request.gm_address + offset);
    trans.set_data_ptr(ub_ == nullptr ? nullptr : ub_ + request.ub_offset + offset);
    trans.set_data_length(static_cast<unsigned int>(length));
    trans.set_streaming_width(static_cast<unsigned int>(length));
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = ask(*this, *timing, issue);
    to_noc->b_transport(trans, delay);
    if (whole) {
      if (!passed_burst(progress, ticket, trans, *timing, trans.get_address(), current_time(*this),
                        progress.issued_by))
        return;
    } else {
      asked = true;
      asked_at = current_time(*this);
      asked_issued_by = progress.issued_by;
    }
  }
  // The queue is free once its last burst has left at the queue's rate; a transfer reserved
  // by submit() only records the time instead of waiting for it.
  const sc_time& issued_all = progress.issued_by;
  if (queue_thread && issued_all > current_time(*this))
    instants_.wait_until(issued_all, current_time(*this));
  if (asked && !passed_asked()) return;
  times_[ticket].finish_ps = progress.finish.value();
  times_[ticket].left_ps = issued_all.value();
  if (keep_records_) {
    TransferRecord& record = records_[ticket];
    record.held_ps = progress.held.value();
    record.latency_ps = progress.latency.value();
    record.limit = progress.limit;
  }
}

void DmaEngine::note_start(std::uint64_t ticket, int queue, const sc_time& at) {
  if (!keep_records_) return;
  records_[ticket].queue = static_cast<std::int16_t>(queue);
  records_[ticket].start_ps = at.value();
}

void DmaEngine::note_conflict(std::uint64_t flow, const Claim& claim) {
  // The first meeting is the one to name; the others of the instant say where else requests
  // meet, though they were made on times the first has already made wrong.
  if (!conflicted_) {
    conflict_ = conflict_message(flow, claim);
    conflict_at_ = current_time(*this);
  }
  conflicted_ = true;
  const std::string& place = claim.conflict_resource->place();
  if (std::find(conflict_places_.begin(), conflict_places_.end(), place) == conflict_places_.end())
    conflict_places_.push_back(place);
  for (const std::uint64_t met : {flow, claim.conflict_flow}) {
    if ((met & kNotifyFlowBit) == 0 &&
        std::find(conflict_transfers_.begin(), conflict_transfers_.end(), met) ==
            conflict_transfers_.end())
      conflict_transfers_.push_back(met);
  }
  if (claim.kind == ClaimKind::Notify && claim.conflict_kind == ClaimKind::Notify)
    notifies_met_ = true;
  if (noted_) noted_();
}

void DmaEngine::attach_trace(TraceSink* sink, const std::string& scope) {
  sink_ = sink;
  for (std::size_t q = 0; q < busy_vars_.size(); ++q) {
    busy_vars_[q] =
        sink->declare(scope, "queue" + std::to_string(q) + "_busy", 1, TraceSink::Kind::Flag);
  }
}

}  // namespace ars
