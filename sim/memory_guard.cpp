#include "sim/memory_guard.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "models/memory_map.h"

namespace ars {

namespace {

// Per device, simulated or not: the module objects and the SystemC thread stacks.
constexpr std::uint64_t kDeviceOverheadBytes = 1 << 20;
// Held at the run's peak, measured with GNU time's peak RSS over every kernel (P = 4 to 256,
// 256 KiB to 4 MiB per rank), with room to spare: a schedule line 235-250 B (the rank's line,
// its time, the dump's text); a VCD's changes 30-65 B per DMA burst (the bytes in flight and
// busy periods of the resources it crosses) and about 90 B per operation (the core's phase and
// round, the queue's and buffer's use, the signal cells).
constexpr std::uint64_t kScheduleLineBytes = 320;
constexpr std::uint64_t kVcdBytesPerBurst = 96;
constexpr std::uint64_t kVcdBytesPerOperation = 128;
// A written signal cell in its device's table, measured at 24 B (the builtin ring at P = 256 on
// ring8, 33.4 M cells in 809 MB), and with records its last writer (16 B). A memory's written
// cells are at most its signals' cells and at most the notifies it receives: the hand ring
// writes a few per row and column, the builtin ring every cell of its [2(P-1), P] signal.
constexpr std::uint64_t kCellBytes = 32;
constexpr std::uint64_t kCellWriterBytes = 16;
// With records kept (the full report, --json, --explain), per operation counted: its spans,
// transfer record, notify or wait link and round change, measured at 23-24 B on the ring at
// P = 256 and 1024 (GNU time's peak RSS, the full report against -q).
constexpr std::uint64_t kRecordBytesPerOperation = 32;

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

  std::uint64_t bytes(const OperationCount& c) const {
    return c.schedule_lines(codegen) * schedule_line + c.operations() * vcd_operation +
           c.bursts * vcd_burst;
  }
};

// The counted costs' share of the memory limit: counting stops once the ranks counted cost
// more. Signal cells are charged where they land: once per notify a memory receives until
// every cell of that signal there is charged.
struct TraceBudget {
  std::uint64_t left = 0;
  std::uint64_t traces = 0;          // of the ranks counted before this one
  std::uint64_t operations = 0;      // of the ranks counted before this one
  std::uint64_t record_rate = 0;     // bytes per operation, when records are kept
  TraceRates rates;                  // of this rank
  std::vector<std::uint64_t> cells;  // per rank and signal: cells charged there
  std::uint64_t cell_rate = 0;       // bytes per cell
  std::uint64_t cell_bytes = 0;

  std::uint64_t records(const OperationCount& c) const {
    return (operations + c.operations()) * record_rate;
  }
  std::uint64_t spent(const OperationCount& c) const {
    return traces + rates.bytes(c) + records(c) + cell_bytes;
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
        budget_(budget) {}

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
  }
  void store(const Tile&, const Tensor& dst, std::uint64_t, std::uint64_t count) override {
    transfer(dst, count);
  }
  Transfer remote_load_async(const Tile&, const Tensor& window, int, std::uint64_t,
                             std::uint64_t count) override {
    transfer(window, count);
    return {};
  }
  Transfer remote_store_async(const Tile&, const Tensor& window, int, std::uint64_t,
                              std::uint64_t count, StoreOp) override {
    transfer(window, count);
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
    }
    counted();
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
  void transfer(const Tensor& tensor, std::uint64_t count) {
    count_.bursts += ceil_div(count * dtype_bytes(tensor.dtype), burst_bytes_);
    ++count_.transfers;
    counted();
  }
  // A body of 10^14 elements must not be walked to the end to find that its traces do not fit.
  void counted() const {
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
  estimate.fixed = static_cast<std::uint64_t>(config.devices) * kDeviceOverheadBytes;
  const bool traced = request.record_schedule || !request.vcd_path.empty();
  if (estimate.total() >= limit) {  // refused whatever the operations: nothing to count
    estimate.counted_in_part = traced || request.keep_records || every_cell > 0;
    return estimate;
  }
  if (!traced && !request.keep_records && estimate.total() + ranks * every_cell <= limit) {
    estimate.signal_cells = ranks * every_cell;
    return estimate;
  }
  // What the kernel's bodies ask for, counted rank by rank: the cells their notifies write,
  // the records of every operation, the schedule's lines of every rank and the VCD's changes
  // of the devices it shows (--vcd-devices).
  const std::vector<int>& shown =
      request.vcd_devices.empty() ? request.devices : request.vcd_devices;
  TraceBudget budget;
  budget.left = limit > estimate.total() ? limit - estimate.total() : 0;
  budget.record_rate = request.keep_records ? kRecordBytesPerOperation : 0;
  budget.cells.assign(ranks * layout.signals.size(), 0);
  budget.cell_rate = cell_rate;
  const auto settle = [&](const OperationCount& count) {
    estimate.signal_cells = budget.cell_bytes;
    estimate.records = budget.records(count);
    estimate.traces = budget.traces + budget.rates.bytes(count);
  };
  for (int rank = 0; rank < problem.ranks; ++rank) {
    const bool in_vcd = !request.vcd_path.empty() &&
                        std::find(shown.begin(), shown.end(),
                                  request.devices[static_cast<std::size_t>(rank)]) != shown.end();
    budget.rates = {request.record_schedule ? kScheduleLineBytes : 0, !config.codegen.name.empty(),
                    in_vcd ? kVcdBytesPerOperation : 0, in_vcd ? kVcdBytesPerBurst : 0};
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

std::uint64_t parse_memory_limit(const std::string& text) {
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  for (const Unit& u : kUnits) {
    if (unit == u.name) scale = u.bytes;
  }
  if (unit.empty()) scale = 1;
  const double bytes = number * scale;
  if (used == 0 || scale == 0 || !(bytes >= 1) || bytes > 1e18) {
    throw InputError("--memory-limit: '" + text +
                     "' is not a positive number of bytes (optionally with KiB, MiB, GiB, TiB)");
  }
  return static_cast<std::uint64_t>(bytes);
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

// What would shrink the run, naming only what the request does not already do.
std::string remedies(const RunRequest& request, const MemoryEstimate& estimate) {
  std::vector<std::string> ways;
  if (!request.timing_only) ways.push_back("--timing-only");
  if (estimate.records > 0) ways.push_back("-q (no records)");
  if (!request.vcd_path.empty() && request.vcd_devices.empty())
    ways.push_back("--vcd-devices to show fewer devices");
  ways.push_back(estimate.signal_cells > estimate.total() / 2 ? "fewer ranks" : "a smaller --size");
  std::string text;
  for (const std::string& way : ways) text += way + ", ";
  return text + "or a larger --memory-limit";
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
  if (estimate.records > 0) parts += ", records " + more + format_bytes(estimate.records);
  if (estimate.traces > 0 || !estimate.counted_in_part)
    parts += ", traces " + more + format_bytes(estimate.traces);
  parts += ", device models " + format_bytes(estimate.fixed);
  throw InputError("--size: " + std::to_string(problem.elements) + " elements per rank on " +
                   std::to_string(request.devices.size()) + " ranks needs " +
                   (estimate.counted_in_part ? "more than " : "about ") +
                   format_bytes(estimate.total()) + " of host memory (" + parts +
                   "), more than the memory limit of " + format_bytes(limit) + "; use " +
                   remedies(request, estimate));
}

}  // namespace ars
