// The memory guard: a run's host memory is estimated from its request before anything is
// allocated, so a size the machine cannot hold is refused with a clear message instead of
// ending in std::bad_alloc or the kernel's out-of-memory killer.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/api.h"
#include "sim/run.h"

namespace ars {

// The bytes a run is expected to hold at its peak, by what holds them.
struct MemoryEstimate {
  std::uint64_t global_memory = 0;  // backed tensors, windows and signals of every rank
  std::uint64_t staging = 0;        // host copies of one tensor (inputs, golden check)
  std::uint64_t unified_buffers = 0;
  std::uint64_t traces = 0;  // schedule lines and VCD changes
  std::uint64_t fixed = 0;   // modules and SystemC thread stacks of every device

  std::uint64_t total() const { return global_memory + staging + unified_buffers + traces + fixed; }
};

MemoryEstimate estimate_memory(const RunRequest& request, const Layout& layout);

// 80 % of the machine's physical memory.
std::uint64_t default_memory_limit();

// "0.5GiB", "512MiB", "4096" (bytes); InputError otherwise.
std::uint64_t parse_memory_limit(const std::string& text);

// Throws InputError naming the estimate, the limit and the way out when the run exceeds it.
void check_memory(const RunRequest& request, const Layout& layout);

// "1.50 GiB": bytes in the largest binary unit that keeps the number at least one.
std::string format_bytes(std::uint64_t bytes);

}  // namespace ars
