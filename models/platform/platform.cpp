#include "models/platform/platform.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <unordered_set>

#include "models/fabric/transaction.h"

namespace ars {

namespace {

constexpr std::uint64_t kGmAlignment = 512;  // full-rate DMA alignment

// The tickets, sorted, of the flows among `flows` (sorted) that are transfers of `device`'s
// block `block`: a block's flows lie together, in ticket order.
std::vector<std::uint64_t> block_tickets(const std::vector<std::uint64_t>& flows, int device,
                                         int block) {
  const std::uint64_t first = transfer_flow(device, block, 0) - 1;
  const std::uint64_t end = first + (std::uint64_t{1} << kFlowBlockShift);
  std::vector<std::uint64_t> tickets;
  for (auto f = std::lower_bound(flows.begin(), flows.end(), first); f != flows.end() && *f < end;
       ++f)
    tickets.push_back((*f & 0xffffffffu) - 1);
  return tickets;
}

}  // namespace

Platform::Platform(sc_core::sc_module_name name, const PlatformConfig& config,
                   std::vector<int> rank_devices, const Problem& problem, const Layout& layout,
                   KernelBody body, Options options)
    : sc_module(name),
      rank_devices_(std::move(rank_devices)),
      problem_(problem),
      noc_("noc", config, options.path_cache),
      trace_(options.trace),
      burst_bytes_(config.dma_burst_bytes),
      survey_burst_steps_(options.survey_burst_steps) {
  // Every device lays its memory out the same way, so windows are symmetric.
  for (const SignalSpec& s : layout.signals) memory_.signals.push_back({s.name, 0, s.rows, s.cols});
  memory_.tensors.push_back({"x", 0, problem.elements, problem.dtype});
  memory_.tensors.push_back({"y", 0, problem.elements, problem.dtype});
  for (const WindowSpec& w : layout.windows) {
    memory_.tensors.push_back({w.name, 0, w.elements, problem.dtype});
  }

  std::vector<int> device_rank(static_cast<std::size_t>(config.devices), -1);
  for (std::size_t r = 0; r < rank_devices_.size(); ++r)
    device_rank.at(static_cast<std::size_t>(rank_devices_[r])) = static_cast<int>(r);
  for (int d = 0; d < config.devices; ++d) {
    std::optional<VectorCore::Binding> binding;
    if (device_rank[d] >= 0) {
      binding = VectorCore::Binding{device_rank[d], &rank_devices_, &problem_, &memory_, body};
    }
    devices_.push_back(std::make_unique<Device>(("dev" + std::to_string(d)).c_str(), config, d,
                                                std::move(binding), options.timing_only,
                                                instants_));
    Device& device = *devices_.back();
    device.gm.port().describe(d, "dev" + std::to_string(d) + ".memory_port", "gm.bandwidth_GBps");
    device.gm.atomics().describe(-1, "dev" + std::to_string(d) + ".signal_atomics", "gm.atomic_ns");
    noc_.to_memory.bind(device.gm.from_noc);
    device.gm.keep_writers(options.keep_records);
    if (!device.core) continue;
    for (int b = 0; b < device.blocks(); ++b) {
      noc_.connect_initiator(device.block_dma(b).to_noc, d);
      noc_.connect_initiator(device.block_core(b).to_noc, d);
      device.block_core(b).record_schedule(options.record_schedule);
      device.block_core(b).keep_records(
          {options.keep_records,
           options.round_records_ranks < 0 || device_rank[d] < options.round_records_ranks,
           options.keep_records && options.keep_sync_records});
      device.block_dma(b).keep_records(options.keep_records);
      device.block_dma(b).time_transfers_whole(options.whole_transfers);
      device.block_dma(b).survey_conflicts(options.survey_meetings);
      if (options.survey_meetings) {
        device.block_dma(b).on_conflict([this] { surveyed_meeting(); });
      } else {
        device.block_dma(b).on_conflict([this] { noc_.stop_soon(); });
      }
      if (options.whole_transfers && !options.burst_resources.empty()) {
        device.block_dma(b).run_burst_by_burst(
            [this](int from, int to, bool read) { return noc_.burst_by_burst(from, to, read); });
      }
      if (options.whole_transfers)
        device.block_dma(b).run_burst_by_burst(block_tickets(options.burst_transfers, d, b));
      device.block_dma(b).before_queue_threads(options.before_queue_threads);
      device.block_core(b).report_progress(options.progress);
      device.block_core(b).inject_faults(options.faults);
    }
    // Signals first: their cells are kept apart from the bytes, always, even when payloads
    // are not.
    for (SignalInfo& s : memory_.signals) {
      s.address =
          device.gm.allocate(std::max<std::uint64_t>(kWindowMinimumBytes, 4ull * s.rows * s.cols),
                             kGmAlignment, false);
    }
    for (std::size_t t = 0; t < memory_.tensors.size(); ++t) {
      TensorInfo& info = memory_.tensors[t];
      std::uint64_t bytes = info.elements * dtype_bytes(info.dtype);
      if (t >= 2) bytes = std::max(bytes, kWindowMinimumBytes);
      info.address = device.gm.allocate(bytes, kGmAlignment, !options.timing_only);
    }
  }

  if (trace_ != nullptr) {
    noc_.attach_trace(trace_, rank_devices_);
    for (int r = 0; r < ranks(); ++r) {
      Device& device = *devices_[rank_devices_[r]];
      if (!trace_->shows(device.index())) continue;
      const std::string scope = "dev" + std::to_string(device.index());
      for (int b = 0; b < device.blocks(); ++b) {
        // One block keeps the plain scopes; with more, each block's scopes carry its index.
        const std::string suffix = blocks() == 1 ? "" : std::to_string(b);
        device.block_dma(b).attach_trace(trace_, scope + ".dma" + suffix);
        device.block_ub(b).attach_trace(trace_, scope + ".ub" + suffix);
        device.block_core(b).attach_trace(trace_, scope + ".core" + suffix);
      }
      for (const SignalInfo& s : memory_.signals) {
        device.gm.trace_cells(trace_, scope + ".signal", s.name, s.address, s.rows, s.cols);
      }
    }
  }
  for (const std::string& place : options.burst_resources) {
    const auto port = std::find_if(devices_.begin(), devices_.end(), [&](const auto& device) {
      return device->gm.port().place() == place;
    });
    if (port != devices_.end()) {
      noc_.mark_memory((*port)->index());
    } else {
      noc_.mark_link(place);
    }
  }
}

bool Platform::too_many_met() const {
  std::uint64_t made = 0;
  std::uint64_t met = 0;
  for (const int d : rank_devices_) {
    for (int b = 0; b < devices_[d]->blocks(); ++b) {
      made += devices_[d]->block_dma(b).transfers();
      met += devices_[d]->block_dma(b).conflict_transfers().size();
    }
  }
  return met * kMetShare > made;
}

double Platform::burst_steps_per_whole_step() const {
  std::uint64_t whole = 0;
  std::uint64_t bursts = 0;
  for (const int d : rank_devices_) {
    for (int b = 0; b < devices_[d]->blocks(); ++b) {
      const RankStats& s = devices_[d]->block_core(b).stats();
      whole += s.steps_but_bursts();
      bursts += s.steps_but_bursts() - s.transfers + s.bursts(burst_bytes_);
    }
  }
  return whole == 0 ? 0.0 : static_cast<double>(bursts) / static_cast<double>(whole);
}

void Platform::surveyed_meeting() {
  // Counting over every engine costs a pass over the devices: done once in a while, and at
  // meetings ever further apart in time (the first, then the first past twice its time, ...),
  // as a run whose meetings are rare may change its mix of steps between them.
  constexpr std::uint64_t kSurveyCheck = 256;
  if (survey_given_up_) return;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const bool counted = ++surveyed_meetings_ % kSurveyCheck == 0;
  if (!counted && now < next_survey_check_) return;
  if (now >= next_survey_check_)
    next_survey_check_ = now + now + sc_core::sc_time(1, sc_core::SC_PS);
  if (too_many_met()) {
    too_many_seen_ = true;
  } else if (burst_steps_per_whole_step() >= survey_burst_steps_) {
    return;
  }
  survey_given_up_ = true;
  noc_.stop_soon();
}

std::vector<const BandwidthResource*> Platform::resources() const {
  std::vector<const BandwidthResource*> all;
  for (const auto& device : devices_) all.push_back(&device->gm.port());
  for (const auto& link : noc_.links()) all.push_back(link.get());
  return all;
}

void Platform::write_tensor(int rank, int tensor, const std::vector<std::uint8_t>& bytes) {
  const TensorInfo& info = memory_.tensors.at(tensor);
  devices_[rank_devices_.at(rank)]->gm.write_bytes(info.address, bytes.data(), bytes.size());
}

std::vector<std::uint8_t> Platform::read_tensor(int rank, int tensor) {
  const TensorInfo& info = memory_.tensors.at(tensor);
  std::vector<std::uint8_t> bytes(info.elements * dtype_bytes(info.dtype));
  devices_[rank_devices_.at(rank)]->gm.read_bytes(info.address, bytes.data(), bytes.size());
  return bytes;
}

std::string Platform::first_nonzero_cell(int rank) {
  const GlobalMemory& gm = devices_[rank_devices_.at(rank)]->gm;
  for (const SignalInfo& s : memory_.signals) {
    const std::uint64_t cells = static_cast<std::uint64_t>(s.rows) * s.cols;
    const auto address = gm.first_nonzero_cell(s.address, s.address + 4 * cells);
    if (!address) continue;
    const std::uint64_t cell = (*address - s.address) / 4;
    return s.name + "[" + std::to_string(cell / s.cols) + "," + std::to_string(cell % s.cols) +
           "] = " + std::to_string(gm.read_cell(*address));
  }
  return "";
}

std::int32_t Platform::read_cell(int rank, int signal, int row, int col) {
  const SignalInfo& s = memory_.signals.at(signal);
  return devices_[rank_devices_[rank]]->gm.read_cell(
      s.address + 4 * static_cast<std::uint64_t>(row * s.cols + col));
}

std::string Platform::describe_mixed_write(int rank, std::uint64_t address,
                                           const sc_core::sc_time& when) const {
  std::ostringstream out;
  out << "rank " << rank << "'s signal cell ";
  for (const SignalInfo& s : memory_.signals) {
    const std::uint64_t cells = static_cast<std::uint64_t>(s.rows) * s.cols;
    if (address < s.address || address >= s.address + 4 * cells) continue;
    const std::uint64_t cell = (address - s.address) / 4;
    out << s.name << "[" << cell / s.cols << "," << cell % s.cols << "]";
  }
  out << std::fixed << std::setprecision(3) << " was written with both AtomicAdd and Set (at "
      << to_ns(when) << " ns): a cell must never be written with both ops";
  return out.str();
}

std::string Platform::describe_blocked_ranks() {
  std::ostringstream ranks_out;
  ranks_out << std::fixed << std::setprecision(3);
  // When a core last blocked (a core running ahead blocks at its own time, which the
  // simulated time need not reach once no event is left), or the last posted signal update
  // landed (the simulation would have gone on until then), whichever is later.
  std::uint64_t deadlock_ps = std::max(sc_core::sc_time_stamp(), last_landing_).value();
  for (int r = 0; r < ranks(); ++r) {
    for (int block = 0; block < blocks(); ++block) {
      const VectorCore& c = core(r, block);
      if (c.stats().finished) continue;
      const BlockedWait& b = c.blocked();
      ranks_out << "\n  rank " << r;
      if (blocks() > 1) ranks_out << " block " << block;
      ranks_out << " (device " << rank_devices_[r] << ")";
      if (c.stalled()) {
        ranks_out << " never started its kernel (stalled by a fault)";
        continue;
      }
      if (!b.blocked) {
        ranks_out << " is stuck outside a wait";
        continue;
      }
      deadlock_ps = std::max(deadlock_ps, b.last_look_ps);
      ranks_out << " waits on " << memory_.signals.at(static_cast<std::size_t>(b.signal)).name
                << "[" << b.row << "," << b.col << "] " << to_string(b.cmp) << " " << b.expected
                << ", cell holds " << read_cell(r, b.signal, b.row, b.col) << ", since "
                << static_cast<double>(b.since_ps) / 1000.0 << " ns";
    }
  }
  std::ostringstream out;
  out << std::fixed << std::setprecision(3) << "deadlock at "
      << static_cast<double>(deadlock_ps) / 1000.0 << " ns:" << ranks_out.str();
  return out.str();
}

Platform::~Platform() {
  // Last made, first gone: SystemC's port and export registries look for the one being
  // removed from their newest entry, so each is found at once. (Its module registry looks
  // from the oldest; in this order that one searches far, which costs less than the ports did.)
  while (!devices_.empty()) devices_.pop_back();
}

Platform::Outcome Platform::run(const sc_core::sc_time& limit) {
  Outcome outcome;
  // Stop where activity ends, so a deadlock is reported at the time it happened.
  sc_core::sc_start(limit, sc_core::SC_EXIT_ON_STARVATION);
  // Signal updates still posted land as they would have, had the simulation gone on to its
  // limit (a run stopped early, at its stop); those beyond it are still in flight.
  const sc_core::sc_time land_until =
      sc_core::sc_get_status() == sc_core::SC_STOPPED ? sc_core::sc_time_stamp() : limit;
  bool in_flight = false;
  for (auto& device : devices_) {
    last_landing_ = std::max(last_landing_, device->gm.land(land_until));
    in_flight = in_flight || device->gm.posted_entries() > 0;
  }
  sc_core::sc_time first;
  std::unordered_set<std::string> met_places;
  for (const int d : rank_devices_) {
    for (int b = 0; b < devices_[d]->blocks(); ++b) {
      const DmaEngine& dma = devices_[d]->block_dma(b);
      if (!dma.conflicted()) continue;
      // The first in time (of one instant, the first device's) is the one to name.
      if (!outcome.whole_transfers_conflicted || dma.conflict_at() < first) {
        outcome.conflict = dma.conflict();
        first = dma.conflict_at();
      }
      outcome.whole_transfers_conflicted = true;
      outcome.notifies_met = outcome.notifies_met || dma.notifies_met();
      outcome.conflict_transfers.insert(outcome.conflict_transfers.end(),
                                        dma.conflict_transfers().begin(),
                                        dma.conflict_transfers().end());
      for (const std::string& place : dma.conflict_places()) {
        if (met_places.insert(place).second) outcome.conflict_places.push_back(place);
      }
    }
  }
  if (outcome.whole_transfers_conflicted) {
    std::uint64_t bytes = 0;
    std::uint64_t met_bytes = 0;
    for (const BandwidthResource* resource : resources()) {
      bytes += resource->bytes_moved();
      if (met_places.count(resource->place()) != 0) met_bytes += resource->bytes_moved();
    }
    for (const auto& device : devices_) {
      if (met_places.count(device->gm.port().place()) != 0) outcome.memory_port_met = true;
    }
    outcome.met_bytes_share = bytes == 0 ? 0.0 : static_cast<double>(met_bytes) / bytes;
    outcome.too_many_met = too_many_seen_ || too_many_met();
    std::sort(outcome.conflict_transfers.begin(), outcome.conflict_transfers.end());
    outcome.conflict_transfers.erase(
        std::unique(outcome.conflict_transfers.begin(), outcome.conflict_transfers.end()),
        outcome.conflict_transfers.end());
    outcome.resources = devices_.size() + noc_.links().size();
    return outcome;
  }
  for (int r = 0; r < ranks() && outcome.failure.empty(); ++r) {
    for (int b = 0; b < blocks() && outcome.failure.empty(); ++b)
      outcome.failure = core(r, b).failure();
  }
  for (int r = 0; r < ranks() && outcome.failure.empty(); ++r) {
    const auto& mixed = devices_[rank_devices_[r]]->gm.mixed_write();
    if (mixed) outcome.failure = describe_mixed_write(r, mixed->address, mixed->when);
  }
  if (trace_ != nullptr) {
    noc_.flush_trace();
    for (const int d : rank_devices_) devices_[d]->gm.flush_trace();
  }
  if (!outcome.failure.empty()) return outcome;
  outcome.completed = true;
  for (int r = 0; r < ranks(); ++r) {
    for (int b = 0; b < blocks(); ++b) outcome.completed &= core(r, b).stats().finished;
  }
  if (outcome.completed) return outcome;
  if (sc_core::sc_pending_activity() || in_flight) {
    std::ostringstream limit_ns;
    limit_ns << to_ns(limit);
    outcome.timeout =
        "simulated-time limit of " + limit_ns.str() + " ns reached before every rank finished";
  } else {
    outcome.deadlock = describe_blocked_ranks();
  }
  return outcome;
}

}  // namespace ars
