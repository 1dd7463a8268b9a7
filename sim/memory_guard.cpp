#include "sim/memory_guard.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <unordered_map>

#include "models/fabric/fabric.h"
#include "models/platform/memory_map.h"

namespace ars {

namespace {

// Per device, simulated or not: its memory's and links' module objects; and per block of a
// rank: its core, DMA engine and unified buffer, their SystemC threads and the stack pages they
// touch. Measured with GNU time's peak RSS, quiet and timing only, about 1.5 times: a device that
// takes no part 7.3 KiB (two ranks on ring8 of 64 to 4096 devices, on the cluster of 8 to 128
// servers); a rank of one block 57 KiB in all (the ring at 64 KiB on ring8 and the cluster, P =
// 256 to 1024, less its signal cells at 24 B); each further block 45-49 KiB (host_mesh at P = 64
// on ring8 with core_num 1, 8 and 48).
constexpr std::uint64_t kDeviceOverheadBytes = 12 << 10;
constexpr std::uint64_t kBlockOverheadBytes = 72 << 10;
// Held at the run's peak, measured with GNU time's peak RSS over every kernel (P = 4 to 256,
// 256 KiB to 4 MiB per rank), with room to spare: a schedule line 69-76 B (its text, 57-61 B,
// kept end to end in its core's buffer, and its time; the dump is written as it is formatted);
// a VCD's changes 30-65 B per DMA burst (the bytes in flight and busy periods of the resources
// it crosses) and about 90 B per operation (the core's phase and round, the queue's and
// buffer's use, the signal cells).
constexpr std::uint64_t kScheduleLineBytes = 96;
constexpr std::uint64_t kVcdBytesPerBurst = 96;
constexpr std::uint64_t kVcdBytesPerOperation = 128;
// A waveform also keeps the links of a cluster's leaves and spines and of the devices that take
// no part, which carry other ranks' bursts (ShownLinks): 2-4 changes of 32 B a burst and link,
// held twice while they grow and once more to be sorted. Measured against the quiet run and the
// shown devices' own charge: about 180 B for the 16-server cluster's two_phase (4 devices shown,
// 278 MiB at its peak, charged 394 MiB), about 100 B for its ring (8 shown, 49 and 87 MiB); the
// 1024-NPU cluster ring with 8 devices shown peaks at 368 MiB and is charged 750-790 MiB.
constexpr std::uint64_t kVcdBytesPerLinkBurst = 256;
// A written signal cell in its device's table, measured at 24 B (the builtin ring at P = 256 on
// ring8, 33.4 M cells in 809 MB), and with records its last writer (16 B). A memory's written
// cells are at most its signals' cells and at most the notifies it receives: the hand ring
// writes a few per row and column, the builtin ring every cell of its [2(P-1), P] signal.
constexpr std::uint64_t kCellBytes = 32;
constexpr std::uint64_t kCellWriterBytes = 16;
// A device pair's path in the interconnect's table, made when a transfer or notify first
// crosses it, and on a full mesh the pair's link: measured with GNU time's peak RSS, the
// barrier against the ring at P = 512 (261,632 pairs more), about 195 B a pair on switch16 and
// 925 B on a full mesh (950 B at P = 1024), signal cells aside.
constexpr std::uint64_t kPathBytes = 256;
constexpr std::uint64_t kMeshLinkBytes = 1024;
// With records kept (the full report, --json, --explain), per operation counted: its spans,
// transfer record, notify or wait link and round change, measured at 23-24 B on the ring at
// P = 256 and 1024 (GNU time's peak RSS, the full report against -q).
constexpr std::uint64_t kRecordBytesPerOperation = 32;
// A timeline trace (--trace) keeps every rank's notify and wait records (its flows and critical
// path read them); for each device it shows, a slice per operation of its core and queues; for
// each link it shows, the bytes in flight and busy periods of every burst crossing it, and for
// each shown device's signal cells the notifies landing there. Measured with GNU time's peak
// RSS, the ring at 1 MiB with a trace of 4, 16 and every or 64 devices against the quiet run:
// per device shown 1.18 MB on ring8 at P = 64 (1014 operations, 4284 link bursts), 3.56 MB at
// P = 256 (4086, 5100) on ring8 and the cluster of 32 servers, 2.0 MB on 16 servers (2038,
// 4572), so about 750 B an operation and 100 B a burst on a device's link; every rank's records
// and sync records 39-45 B an operation (a quarter of the ring's are notifies and waits, and
// 32 B an operation are the records'); the cluster's leaf and spine links, where flows
// interleave and every change is a counter event, 385-485 B a burst (16, 32 and 128 servers).
// The 1024-NPU cluster ring's trace of 16 devices peaks at 1.79 GiB and is charged 2.42 GiB.
constexpr std::uint64_t kTraceBytesPerSync = 96;
constexpr std::uint64_t kTraceBytesPerOperation = 768;
constexpr std::uint64_t kTraceBytesPerLinkBurst = 512;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? a : (a + b - 1) / b;
}

// What a rank's operations cost the records and traces asked for, in bytes per line,
// operation and burst.
struct TraceRates {
  std::uint64_t schedule_line = 0;
  bool codegen = false;
  std::uint64_t vcd_operation = 0;
  std::uint64_t vcd_burst = 0;
  std::uint64_t timeline_sync = 0;
  std::uint64_t timeline_operation = 0;

  std::uint64_t bytes(const OperationCount& c) const {
    return c.schedule_lines(codegen) * schedule_line + c.operations() * vcd_operation +
           c.bursts * vcd_burst;
  }
  // The timeline's, but for the links and cells it shows (ShownLinks).
  std::uint64_t timeline(const OperationCount& c) const {
    return (c.notifies + c.waits) * timeline_sync + c.operations() * timeline_operation;
  }
  // Whether bytes() or timeline() can grow with an operation.
  bool any() const {
    return schedule_line != 0 || vcd_operation != 0 || vcd_burst != 0 || timeline_sync != 0 ||
           timeline_operation != 0;
  }
};

// What a timeline trace or a waveform keeps of the links and signal cells it shows. A shown
// link carries the bursts of every rank whose route crosses it, shown or not: a cluster's leaf
// and spine links are shown whatever the devices, and carry every server's flows; a ring's link
// carries the flows passing through. So every rank's remote bursts (and notifies) are charged
// `rate` once per shown link on their route, which bounds every change those links record.
class ShownLinks {
 public:
  // The links of `shown` devices are shown, and with `idle_shown` those of devices that take no
  // part (a waveform keeps them, a timeline does not).
  ShownLinks(const PlatformConfig& config, std::vector<int> devices, std::vector<int> shown,
             bool idle_shown, std::uint64_t rate)
      : fabric_(config),
        devices_(std::move(devices)),
        shown_(std::move(shown)),
        idle_shown_(idle_shown),
        rate_(rate) {
    std::sort(shown_.begin(), shown_.end());
    taking_part_ = devices_;
    std::sort(taking_part_.begin(), taking_part_.end());
  }

  // `count` bursts whose data flows from rank `from` to rank `to`.
  void cross(int from, int to, std::uint64_t count) {
    const int a = devices_.at(static_cast<std::size_t>(from));
    const int b = devices_.at(static_cast<std::size_t>(to));
    const std::uint64_t key = static_cast<std::uint64_t>(a) << 32 | static_cast<std::uint32_t>(b);
    auto found = crossed_.find(key);
    if (found == crossed_.end()) {
      std::uint64_t links = 0;
      for (Fabric::LinkId id : fabric_.route(a, b).links) {
        const int device = fabric_.scope_device(id);
        if (device < 0 || shows(device) || (idle_shown_ && !takes_part(device))) ++links;
      }
      found = crossed_.emplace(key, links).first;
    }
    bytes += count * found->second * rate_;
  }
  // A notify landing in rank `to`'s signal cells.
  void land(int to) {
    if (shows(devices_.at(static_cast<std::size_t>(to)))) bytes += rate_;
  }
  // Routes are kept for one rank's peers only: a mesh's would be every pair's.
  void next_rank() { crossed_.clear(); }

  std::uint64_t bytes = 0;

 private:
  bool shows(int device) const { return std::binary_search(shown_.begin(), shown_.end(), device); }
  bool takes_part(int device) const {
    return std::binary_search(taking_part_.begin(), taking_part_.end(), device);
  }

  Fabric fabric_;
  std::vector<int> devices_;  // by rank
  std::vector<int> shown_;
  std::vector<int> taking_part_;
  bool idle_shown_;
  std::uint64_t rate_;
  std::unordered_map<std::uint64_t, std::uint64_t> crossed_;  // device pair: shown links crossed
};

// The counted costs' share of the memory limit: counting stops once the ranks counted cost
// more. Signal cells are charged where they land: once per notify a memory receives until
// every cell of that signal there is charged.
struct TraceBudget {
  std::uint64_t left = 0;
  std::uint64_t traces = 0;          // of the ranks counted before this one
  std::uint64_t timeline = 0;        // of the ranks counted before this one, but `links`
  std::uint64_t operations = 0;      // of the ranks counted before this one
  std::uint64_t record_rate = 0;     // bytes per operation, when records are kept
  TraceRates rates;                  // of this rank
  std::vector<std::uint64_t> cells;  // per rank and signal: cells charged there
  std::uint64_t cell_rate = 0;       // bytes per cell
  std::uint64_t cell_bytes = 0;
  std::uint64_t pair_rate = 0;  // bytes per device pair crossed (kPathBytes, kMeshLinkBytes)
  std::uint64_t route_bytes = 0;
  // Per peer, the last rank (plus one) whose walk charged the path to and from it: a walk
  // charges each of its pairs once.
  std::vector<int> charged_to;
  std::vector<int> charged_from;
  ShownLinks* links = nullptr;      // with a timeline trace
  ShownLinks* vcd_links = nullptr;  // with a waveform

  std::uint64_t records(const OperationCount& c) const {
    return (operations + c.operations()) * record_rate;
  }
  std::uint64_t timeline_bytes(const OperationCount& c) const {
    return timeline + rates.timeline(c) + (links != nullptr ? links->bytes : 0);
  }
  std::uint64_t trace_bytes(const OperationCount& c) const {
    return traces + rates.bytes(c) + (vcd_links != nullptr ? vcd_links->bytes : 0);
  }
  std::uint64_t spent(const OperationCount& c) const {
    return trace_bytes(c) + records(c) + cell_bytes + timeline_bytes(c) + route_bytes;
  }
  // Whether any operation may add to what is spent; otherwise only a notify does (its cells).
  bool charges_every_operation() const {
    return record_rate != 0 || rates.any() || links != nullptr || vcd_links != nullptr;
  }
};
struct OverBudget {};

// A rank that counts what its kernel body asks for: no time passes, no byte moves. A kernel's
// schedule does not depend on data or timing (a wait returns once satisfied, and what follows
// is the same), so the counts are the real run's.
class CountingRank final : public Rank {
 public:
  CountingRank(const Problem& problem, const Layout& layout, std::uint64_t ub_bytes,
               std::uint64_t burst_bytes, int rank, int block, OperationCount& count,
               TraceBudget* budget = nullptr)
      : problem_(problem),
        layout_(layout),
        ub_bytes_(ub_bytes),
        burst_bytes_(burst_bytes),
        rank_(rank),
        block_(block),
        count_(count),
        budget_(budget),
        check_every_operation_(budget != nullptr && budget->charges_every_operation()) {}

  int rank() const override { return rank_; }
  int ranks() const override { return problem_.ranks; }
  int block() const override { return block_; }
  int blocks() const override { return problem_.core_num; }
  const Problem& problem() const override { return problem_; }
  Tensor input() const override { return {0, problem_.elements, problem_.dtype}; }
  Tensor output() const override { return {1, problem_.elements, problem_.dtype}; }
  Tensor window(const std::string& name) const override {
    for (std::size_t i = 0; i < layout_.windows.size(); ++i) {
      if (layout_.windows[i].name == name)
        return {static_cast<int>(i) + 2, layout_.windows[i].elements, problem_.dtype};
    }
    return {};
  }
  Signal signal(const std::string& name) const override {
    for (std::size_t i = 0; i < layout_.signals.size(); ++i) {
      if (layout_.signals[i].name == name)
        return {static_cast<int>(i), layout_.signals[i].rows, layout_.signals[i].cols};
    }
    return {};
  }
  std::uint64_t ub_bytes() const override { return ub_bytes_; }
  Tile alloc(std::uint64_t elements, DType dtype) override { return {0, elements, dtype}; }
  void release(const Tile&) override {}
  void load(const Tile&, const Tensor& src, std::uint64_t, std::uint64_t count) override {
    transfer(src, count);
    counted();
  }
  void store(const Tile&, const Tensor& dst, std::uint64_t, std::uint64_t count) override {
    transfer(dst, count);
    counted();
  }
  Transfer remote_load_async(const Tile&, const Tensor& window, int peer, std::uint64_t,
                             std::uint64_t count) override {
    cross(peer, rank_, transfer(window, count));  // a read's data flows back from the peer
    counted();
    return {};
  }
  Transfer remote_store_async(const Tile&, const Tensor& window, int peer, std::uint64_t,
                              std::uint64_t count, StoreOp) override {
    cross(rank_, peer, transfer(window, count));
    counted();
    return {};
  }
  void sync(const Transfer&) override {}
  void reduce(const Tile&, const Tile&, std::uint64_t) override {
    ++count_.reduces;
    counted();
  }
  void notify(const Signal& signal, int peer, int, int, std::int32_t, NotifyOp) override {
    ++count_.notifies;
    if (budget_ != nullptr && peer >= 0 && peer < problem_.ranks) {
      const std::size_t signals = layout_.signals.size();
      const SignalSpec& spec = layout_.signals.at(static_cast<std::size_t>(signal.id));
      std::uint64_t& charged = budget_->cells.at(static_cast<std::size_t>(peer) * signals +
                                                 static_cast<std::size_t>(signal.id));
      if (charged < static_cast<std::uint64_t>(spec.rows) * spec.cols) {
        ++charged;
        budget_->cell_bytes += budget_->cell_rate;
      }
      for (ShownLinks* links : {budget_->links, budget_->vcd_links}) {
        if (links == nullptr) continue;
        links->cross(rank_, peer, 1);
        links->land(peer);
      }
      charge_route(rank_, peer);
    }
    check_spent();
  }
  void wait(const Signal&, int, int, std::int32_t, WaitCmp) override {
    ++count_.waits;
    counted();
  }
  void begin_round(const char*) override {
    ++count_.rounds;
    counted();
  }

 private:
  // The transfer's bursts.
  std::uint64_t transfer(const Tensor& tensor, std::uint64_t count) {
    const std::uint64_t bursts = ceil_div(count * dtype_bytes(tensor.dtype), burst_bytes_);
    count_.bursts += bursts;
    ++count_.transfers;
    return bursts;
  }
  void cross(int from, int to, std::uint64_t bursts) {
    if (budget_ == nullptr || from < 0 || from >= problem_.ranks || to < 0 || to >= problem_.ranks)
      return;
    for (ShownLinks* links : {budget_->links, budget_->vcd_links}) {
      if (links != nullptr) links->cross(from, to, bursts);
    }
    if (charge_route(from, to)) check_spent();
  }
  // Charges the path from `from` to `to` (one of them this rank) the first time this walk
  // crosses it; returns whether it did.
  bool charge_route(int from, int to) {
    if (from == to) return false;
    int& charged = from == rank_ ? budget_->charged_to.at(static_cast<std::size_t>(to))
                                 : budget_->charged_from.at(static_cast<std::size_t>(from));
    if (charged == rank_ + 1) return false;
    charged = rank_ + 1;
    budget_->route_bytes += budget_->pair_rate;
    return true;
  }
  // A body of 10^14 elements must not be walked to the end to find that its traces do not fit.
  // Where only a notify adds to what is spent (no records, no traces), only a notify checks.
  void counted() const {
    if (check_every_operation_) check_spent();
  }
  void check_spent() const {
    if (budget_ != nullptr && budget_->spent(count_) > budget_->left) throw OverBudget{};
  }

  const Problem& problem_;
  const Layout& layout_;
  std::uint64_t ub_bytes_;
  std::uint64_t burst_bytes_;
  int rank_;
  int block_;
  OperationCount& count_;
  TraceBudget* budget_;
  bool check_every_operation_;
};

struct Unit {
  const char* name;
  double bytes;
};
constexpr Unit kUnits[] = {{"TiB", 1024.0 * 1024 * 1024 * 1024},
                           {"GiB", 1024.0 * 1024 * 1024},
                           {"MiB", 1024.0 * 1024},
                           {"KiB", 1024.0},
                           {"B", 1.0}};

// One rank's blocks, counted; throws OverBudget once `budget` (if any) is spent.
void count_rank(const RunRequest& request, const KernelSpec& kernel, const Problem& problem,
                const Layout& layout, int rank, TraceBudget* budget, OperationCount& count) {
  for (int block = 0; block < problem.core_num; ++block) {
    CountingRank counting(problem, layout, request.platform.ub_usable_bytes,
                          request.platform.dma_burst_bytes, rank, block, count, budget);
    kernel.body(counting);
  }
}

}  // namespace

OperationCount count_rank_operations(const RunRequest& request, const KernelSpec& kernel,
                                     const Problem& problem, const Layout& layout, int rank) {
  OperationCount count;
  count_rank(request, kernel, problem, layout, rank, nullptr, count);
  return count;
}

std::vector<OperationCount> count_operations(const RunRequest& request, const KernelSpec& kernel,
                                             const Problem& problem, const Layout& layout) {
  std::vector<OperationCount> counts;
  for (int rank = 0; rank < problem.ranks; ++rank)
    counts.push_back(count_rank_operations(request, kernel, problem, layout, rank));
  return counts;
}

MemoryEstimate estimate_memory(const RunRequest& request, const KernelSpec& kernel,
                               const Problem& problem, const Layout& layout, std::uint64_t limit) {
  const PlatformConfig& config = request.platform;
  const std::uint64_t ranks = request.devices.size();
  const std::uint64_t element = dtype_bytes(problem.dtype);
  const std::uint64_t tensor = problem.elements * element;

  const std::uint64_t cell_rate = kCellBytes + (request.keep_records ? kCellWriterBytes : 0);
  std::uint64_t every_cell = 0;  // of one rank's signals
  for (const SignalSpec& s : layout.signals)
    every_cell += cell_rate * static_cast<std::uint64_t>(s.rows) * s.cols;
  std::uint64_t payload = 0;
  if (!request.timing_only) {
    payload = 2 * tensor;  // x and y
    for (const WindowSpec& w : layout.windows) {
      payload += std::max<std::uint64_t>(kWindowMinimumBytes, w.elements * element);
    }
  }
  MemoryEstimate estimate;
  estimate.global_memory = ranks * payload;
  estimate.staging = request.timing_only ? 0 : tensor;
  estimate.unified_buffers =
      request.timing_only
          ? 0
          : ranks * static_cast<std::uint64_t>(problem.core_num) * config.ub_physical_bytes;
  estimate.fixed = static_cast<std::uint64_t>(config.devices) * kDeviceOverheadBytes +
                   ranks * static_cast<std::uint64_t>(problem.core_num) * kBlockOverheadBytes;
  const bool timeline = !request.trace_path.empty();
  const bool traced = request.record_schedule || !request.vcd_path.empty() || timeline;
  if (estimate.total() >= limit) {  // refused whatever the operations: nothing to count
    estimate.counted_in_part = traced || request.keep_records || every_cell > 0;
    return estimate;
  }
  // Every pair of ranks crossed, at most.
  const std::uint64_t pair_rate =
      kPathBytes + (config.topology == Topology::FullMesh ? kMeshLinkBytes : 0);
  const std::uint64_t every_route = ranks * (ranks - 1) * pair_rate;
  if (!traced && !request.keep_records &&
      estimate.total() + ranks * every_cell + every_route <= limit) {
    estimate.signal_cells = ranks * every_cell;
    estimate.routes = every_route;
    return estimate;
  }
  // What the kernel's bodies ask for, counted rank by rank: the cells their notifies write,
  // the records of every operation, the schedule's lines of every rank, the VCD's changes of the
  // devices it shows (--vcd-devices) and the timeline's (--trace-devices, and the links).
  const std::vector<int>& shown =
      request.vcd_devices.empty() ? request.devices : request.vcd_devices;
  const std::vector<int>& in_trace =
      request.trace_devices.empty() ? request.devices : request.trace_devices;
  std::optional<ShownLinks> links;
  if (timeline) links.emplace(config, request.devices, in_trace, false, kTraceBytesPerLinkBurst);
  std::optional<ShownLinks> vcd_links;
  if (!request.vcd_path.empty())
    vcd_links.emplace(config, request.devices, shown, true, kVcdBytesPerLinkBurst);
  TraceBudget budget;
  budget.links = links ? &*links : nullptr;
  budget.vcd_links = vcd_links ? &*vcd_links : nullptr;
  budget.left = limit > estimate.total() ? limit - estimate.total() : 0;
  budget.record_rate = request.keep_records ? kRecordBytesPerOperation : 0;
  budget.cells.assign(ranks * layout.signals.size(), 0);
  budget.cell_rate = cell_rate;
  budget.pair_rate = pair_rate;
  budget.charged_to.assign(ranks, 0);
  budget.charged_from.assign(ranks, 0);
  const auto settle = [&](const OperationCount& count) {
    estimate.signal_cells = budget.cell_bytes;
    estimate.records = budget.records(count);
    estimate.traces = budget.trace_bytes(count);
    estimate.timeline = budget.timeline_bytes(count);
    estimate.routes = budget.route_bytes;
  };
  for (int rank = 0; rank < problem.ranks; ++rank) {
    const int device = request.devices[static_cast<std::size_t>(rank)];
    const bool in_vcd =
        !request.vcd_path.empty() && std::find(shown.begin(), shown.end(), device) != shown.end();
    const bool shown_in_trace =
        timeline && std::find(in_trace.begin(), in_trace.end(), device) != in_trace.end();
    budget.rates = {request.record_schedule ? kScheduleLineBytes : 0,
                    !config.codegen.name.empty(),
                    in_vcd ? kVcdBytesPerOperation : 0,
                    in_vcd ? kVcdBytesPerBurst : 0,
                    timeline ? kTraceBytesPerSync : 0,
                    shown_in_trace ? kTraceBytesPerOperation : 0};
    if (links) links->next_rank();
    if (vcd_links) vcd_links->next_rank();
    OperationCount count;
    try {
      count_rank(request, kernel, problem, layout, rank, &budget, count);
    } catch (const OverBudget&) {
      estimate.counted_in_part = true;
      settle(count);
      return estimate;
    }
    settle(count);
    budget.traces += budget.rates.bytes(count);
    budget.timeline += budget.rates.timeline(count);
    budget.operations += count.operations();
  }
  return estimate;
}

std::uint64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return UINT64_MAX;  // unknown: do not refuse
  return static_cast<std::uint64_t>(pages) / 5 * 4 * static_cast<std::uint64_t>(page_size);
}

std::string format_bytes(std::uint64_t bytes) {
  for (const Unit& u : kUnits) {
    if (static_cast<double>(bytes) >= u.bytes || u.bytes == 1.0) {
      char text[64];
      std::snprintf(text, sizeof text, "%.2f %s", static_cast<double>(bytes) / u.bytes, u.name);
      return text;
    }
  }
  return std::to_string(bytes) + " B";
}

// The option that sized the platform on the command line, empty when none did.
std::string size_option_given(const RunRequest& request) {
  const std::vector<std::string>& given = request.overridden_keys;
  for (const char* key : {"platform.devices", "cluster.servers", "superpod.nodes"}) {
    if (std::find(given.begin(), given.end(), key) != given.end()) return std::string("--") + key;
  }
  return "";
}

// The option that sizes the platform: the one given, else the one its topology reads.
std::string size_option(const RunRequest& request) {
  const std::string given = size_option_given(request);
  if (!given.empty()) return given;
  switch (request.platform.topology) {
    case Topology::Cluster:
      return "--cluster.servers";
    case Topology::Superpod:
      return "--superpod.nodes";
    default:
      return "--platform.devices";
  }
}

// With every device taking part, the option that sized the platform sets the ranks; otherwise
// -d does.
std::string ranks_option(const RunRequest& request) {
  const bool every_device =
      request.devices.size() == static_cast<std::size_t>(request.platform.devices);
  const std::string given = size_option_given(request);
  return every_device && !given.empty() ? given : "-d";
}

// "fewer ranks (--cluster.servers)".
std::string fewer_ranks(const RunRequest& request) {
  return "fewer ranks (" + ranks_option(request) + ")";
}

// What the run's memory grows with most, and so what would shrink it: the platform's devices
// (their models cost all the same, taking part or not), the ranks (device models, signal cells,
// routes), the calls of --repeat (their records), or the size (payloads and their copies).
struct Cause {
  std::string option;  // the option the refusal names first
  std::string remedy;
};

Cause cause_of(const RunRequest& request, const Problem& problem, const MemoryEstimate& estimate) {
  // Devices that take no part cost their models all the same.
  const std::uint64_t with_devices = std::min(
      estimate.fixed, static_cast<std::uint64_t>(request.platform.devices) * kDeviceOverheadBytes);
  const std::uint64_t with_ranks =
      estimate.fixed - with_devices + estimate.signal_cells + estimate.routes;
  const std::uint64_t with_calls = estimate.records + estimate.traces + estimate.timeline;
  const std::uint64_t with_size =
      estimate.global_memory + estimate.unified_buffers + estimate.staging;
  // Counted in part (the count stopped at the limit), a part dominates when it is the largest;
  // counted whole, when it is most of the total.
  const auto dominates = [&](std::uint64_t part) {
    return estimate.counted_in_part
               ? part >= std::max({with_devices, with_ranks, with_calls, with_size})
               : part > estimate.total() / 2;
  };
  if (dominates(with_devices))
    return {size_option(request), "a smaller platform (" + size_option(request) + ")"};
  if (dominates(with_ranks)) return {ranks_option(request), fewer_ranks(request)};
  if (problem.repeat > 1 && dominates(with_calls)) return {"--repeat", "fewer calls (--repeat)"};
  return {"--size", "a smaller --size"};
}

// What would shrink the run, naming only what the request does not already do and what helps:
// --timing-only drops the payloads, not the cells, routes or records.
std::string remedies(const RunRequest& request, const MemoryEstimate& estimate,
                     const Cause& cause) {
  std::vector<std::string> ways;
  if (!request.timing_only && cause.option == "--size") ways.push_back("--timing-only");
  // A trace keeps the records whatever -q says.
  if (estimate.records > 0 && !request.quiet && request.trace_path.empty())
    ways.push_back("-q (no records)");
  if (!request.vcd_path.empty() && request.vcd_devices.empty())
    ways.push_back("--vcd-devices to show fewer devices");
  if (!request.trace_path.empty() && request.trace_devices.empty())
    ways.push_back("--trace-devices to show fewer devices");
  ways.push_back(cause.remedy);
  std::string text;
  for (const std::string& way : ways) text += way + ", ";
  return text + "or a larger --memory-limit";
}

std::optional<MapBudget> process_map_budget() {
  std::ifstream limit_file("/proc/sys/vm/max_map_count");
  std::ifstream maps("/proc/self/maps");
  MapBudget budget;
  if (!(limit_file >> budget.limit) || !maps) return std::nullopt;
  for (std::string line; std::getline(maps, line);) ++budget.in_use;
  return budget;
}

namespace {

// Room for what the run maps besides its stacks: the heap's large blocks, a standing-by copy's
// arenas. The 16,000-NPU hierarchical run adds 4 once its stacks are made.
constexpr std::uint64_t kSpareMappings = 64;

std::uint64_t core_threads(const Problem& problem) {
  return static_cast<std::uint64_t>(problem.ranks) * static_cast<std::uint64_t>(problem.core_num);
}

// "use fewer ranks (--cluster.servers), or raise the limit (...)": a limit with room for every
// DMA queue's thread too.
std::string more_mappings(const RunRequest& request, const Problem& problem,
                          const MapBudget& budget) {
  std::string fewer = fewer_ranks(request);
  if (problem.core_num > 1) fewer += " or blocks (--core-num)";
  const std::uint64_t every_thread =
      core_threads(problem) * (1 + static_cast<std::uint64_t>(request.platform.dma_queues));
  return "use " + fewer + ", or raise the limit (sysctl -w vm.max_map_count=" +
         std::to_string(std::max<std::uint64_t>(
             262144, 2 * (budget.in_use + 2 * every_thread + kSpareMappings))) +
         ")";
}

}  // namespace

void check_thread_stacks(const RunRequest& request, const Problem& problem,
                         const MapBudget& budget) {
  const std::uint64_t threads = core_threads(problem);
  const std::uint64_t needed = 2 * threads;
  if (budget.in_use + needed + kSpareMappings <= budget.limit) return;
  throw InputError(std::to_string(problem.ranks) + " ranks need " + std::to_string(threads) +
                   " SystemC threads (one for each block's core; a DMA queue makes its own once a "
                   "transfer waits for it), each with a stack and a guard page: " +
                   std::to_string(needed) + " memory mappings, with the " +
                   std::to_string(budget.in_use) + " in use more than the " +
                   std::to_string(budget.limit) + " a process may have here (vm.max_map_count); " +
                   more_mappings(request, problem, budget));
}

std::function<void()> queue_thread_guard(const RunRequest& request, const Problem& problem,
                                         const MapBudget& budget) {
  const std::uint64_t taken = budget.in_use + 2 * core_threads(problem) + kSpareMappings;
  // Shared by every engine's copy of the check, which holds only the pointer.
  struct Room {
    std::uint64_t threads;  // queue threads that still fit
    std::uint64_t queues;   // an engine's
    std::string refusal;
  };
  auto room = std::make_shared<Room>();
  room->threads = taken < budget.limit ? (budget.limit - taken) / 2 : 0;
  room->queues = static_cast<std::uint64_t>(request.platform.dma_queues);
  const bool one = room->queues == 1;
  room->refusal = "its DMA engine needs " + std::to_string(room->queues) + " SystemC thread" +
                  (one ? "" : "s") + " for its queue" + (one ? "" : "s") +
                  ", and the memory mappings a process may have here (vm.max_map_count " +
                  std::to_string(budget.limit) + ", " + std::to_string(budget.in_use) +
                  " in use before the run) leave room for the " +
                  std::to_string(core_threads(problem)) + " cores' threads and " +
                  std::to_string(room->threads) +
                  " more only (each thread a stack and a guard page); " +
                  more_mappings(request, problem, budget);
  return [room] {
    if (room->threads < room->queues) throw InputError(room->refusal);
    room->threads -= room->queues;
  };
}

void check_memory(const RunRequest& request, const KernelSpec& kernel, const Problem& problem,
                  const Layout& layout) {
  const std::uint64_t limit =
      request.memory_limit_bytes != 0 ? request.memory_limit_bytes : default_memory_limit();
  const MemoryEstimate estimate = estimate_memory(request, kernel, problem, layout, limit);
  if (estimate.total() <= limit) return;
  const std::string more = estimate.counted_in_part ? "more than " : "";
  std::string parts = "global memory " + format_bytes(estimate.global_memory);
  if (estimate.unified_buffers > 0)
    parts += ", unified buffers " + format_bytes(estimate.unified_buffers);
  if (estimate.staging > 0) parts += ", staging " + format_bytes(estimate.staging);
  if (estimate.signal_cells > 0)
    parts += ", signal cells " + more + format_bytes(estimate.signal_cells);
  if (estimate.routes > 0) parts += ", routes " + more + format_bytes(estimate.routes);
  if (estimate.records > 0) parts += ", records " + more + format_bytes(estimate.records);
  if (estimate.traces > 0 || (!estimate.counted_in_part && request.trace_path.empty()))
    parts += ", traces " + more + format_bytes(estimate.traces);
  if (!request.trace_path.empty())
    parts += ", timeline trace " + more + format_bytes(estimate.timeline);
  parts += ", device models " + format_bytes(estimate.fixed);
  const Cause cause = cause_of(request, problem, estimate);
  throw InputError(cause.option + ": " + std::to_string(problem.elements) +
                   " elements per rank on " + std::to_string(request.devices.size()) +
                   " ranks needs " + (estimate.counted_in_part ? "more than " : "about ") +
                   format_bytes(estimate.total()) + " of host memory (" + parts +
                   "), more than the memory limit of " + format_bytes(limit) + "; use " +
                   remedies(request, estimate, cause));
}

}  // namespace ars
