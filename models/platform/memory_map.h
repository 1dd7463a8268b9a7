// Where the kernel's tensors, windows and signals live. Every device allocates them in the
// same order, so a symmetric window has the same local address on every device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/api.h"

namespace ars {

// Windows (and signals) are padded to 4 KiB, as the tutorial's runtime allocates them.
constexpr std::uint64_t kWindowMinimumBytes = 4096;

struct TensorInfo {
  std::string name;
  std::uint64_t address;  // local, the same on every device
  std::uint64_t elements;
  DType dtype;
};

struct SignalInfo {
  std::string name;
  std::uint64_t address;
  int rows;
  int cols;
};

struct MemoryMap {
  std::vector<TensorInfo> tensors;  // [0] = input x, [1] = output y, then the windows
  std::vector<SignalInfo> signals;
};

}  // namespace ars
