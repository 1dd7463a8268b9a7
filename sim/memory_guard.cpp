#include "sim/memory_guard.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "models/memory_map.h"

namespace ars {

namespace {

// Per device, simulated or not: the module objects and the SystemC thread stacks.
constexpr std::uint64_t kDeviceOverheadBytes = 1 << 20;
// A schedule line or a VCD value change, with its container overhead.
constexpr std::uint64_t kTraceRecordBytes = 128;
// A written signal cell in its device's table; a signal costs only the cells written, which
// for the kernels here are a few per row and per column.
constexpr std::uint64_t kCellBytes = 48;

struct Unit {
  const char* name;
  double bytes;
};
constexpr Unit kUnits[] = {{"TiB", 1024.0 * 1024 * 1024 * 1024},
                           {"GiB", 1024.0 * 1024 * 1024},
                           {"MiB", 1024.0 * 1024},
                           {"KiB", 1024.0},
                           {"B", 1.0}};

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? a : (a + b - 1) / b;
}

}  // namespace

MemoryEstimate estimate_memory(const RunRequest& request, const Layout& layout) {
  const Problem& p = request.problem;
  const PlatformConfig& config = request.platform;
  const std::uint64_t ranks = request.devices.size();
  const std::uint64_t element = dtype_bytes(p.dtype);
  const std::uint64_t tensor = p.elements * element;

  std::uint64_t signals = 0;
  for (const SignalSpec& s : layout.signals) {
    const std::uint64_t cells = static_cast<std::uint64_t>(s.rows) * s.cols;
    signals += kCellBytes * std::min<std::uint64_t>(cells, 2ull * (s.rows + s.cols));
  }
  std::uint64_t payload = 0;
  if (!request.timing_only) {
    payload = 2 * tensor;  // x and y
    for (const WindowSpec& w : layout.windows) {
      payload += std::max<std::uint64_t>(kWindowMinimumBytes, w.elements * element);
    }
  }
  MemoryEstimate estimate;
  estimate.global_memory = ranks * (signals + payload);
  estimate.staging = request.timing_only ? 0 : tensor;
  estimate.unified_buffers = request.timing_only ? 0
                                                 : ranks * static_cast<std::uint64_t>(p.core_num) *
                                                       config.ub_physical_bytes;
  if (request.record_schedule || !request.vcd_path.empty()) {
    // A kernel walks its slice tile by tile, touching every peer per tile. The schedule keeps
    // every rank's records, the VCD those of the devices it shows (--vcd-devices).
    const std::uint64_t tiles = ceil_div(tensor * ranks, config.ub_usable_bytes) + 1;
    const std::uint64_t per_rank = 4 * ranks * tiles + 16;
    const std::uint64_t vcd_ranks = request.vcd_path.empty()      ? 0
                                    : request.vcd_devices.empty() ? ranks
                                                                  : request.vcd_devices.size();
    const std::uint64_t traced = (request.record_schedule ? ranks : 0) + vcd_ranks;
    estimate.traces = traced * per_rank * kTraceRecordBytes;
  }
  estimate.fixed = static_cast<std::uint64_t>(config.devices) * kDeviceOverheadBytes;
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
std::string remedies(const RunRequest& request) {
  std::vector<std::string> ways;
  if (!request.timing_only) ways.push_back("--timing-only");
  if (!request.vcd_path.empty() && request.vcd_devices.empty())
    ways.push_back("--vcd-devices to show fewer devices");
  ways.push_back("a smaller --size");
  std::string text;
  for (const std::string& way : ways) text += way + ", ";
  return text + "or a larger --memory-limit";
}

void check_memory(const RunRequest& request, const Layout& layout) {
  const MemoryEstimate estimate = estimate_memory(request, layout);
  const std::uint64_t limit =
      request.memory_limit_bytes != 0 ? request.memory_limit_bytes : default_memory_limit();
  if (estimate.total() <= limit) return;
  throw InputError(
      "--size: " + std::to_string(request.problem.elements) + " elements per rank on " +
      std::to_string(request.devices.size()) + " ranks needs about " +
      format_bytes(estimate.total()) + " of host memory (global memory " +
      format_bytes(estimate.global_memory) + ", traces " + format_bytes(estimate.traces) +
      "), more than the memory limit of " + format_bytes(limit) + "; use " + remedies(request));
}

}  // namespace ars
