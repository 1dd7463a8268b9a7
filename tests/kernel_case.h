// One point of a kernel correctness matrix, and the run request that simulates it on devices
// 0..P-1 of the default platform.
#pragma once

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>

#include "sim/run.h"

namespace ars::test {

struct KernelCase {
  std::string kernel;
  ReduceOp op;
  DType dtype;
  int ranks;
  std::uint64_t elements;
};

inline RunRequest request_for(const KernelCase& c) {
  RunRequest request;
  for (int d = 0; d < c.ranks; ++d) request.devices.push_back(d);
  request.platform.devices = std::max(request.platform.devices, c.ranks);
  request.kernel = c.kernel;
  request.problem.mode = c.kernel == "builtin_ring" ? "ring" : "mesh";
  request.problem.op = c.op;
  request.problem.dtype = c.dtype;
  request.problem.elements = c.elements;
  return request;
}

// A name for ctest and GoogleTest's messages: kernel_op_dtype_P<ranks>_N<elements>.
inline std::string case_name(const KernelCase& c) {
  return c.kernel + "_" + to_string(c.op) + "_" + to_string(c.dtype) + "_P" +
         std::to_string(c.ranks) + "_N" + std::to_string(c.elements);
}

inline void PrintTo(const KernelCase& c, std::ostream* out) {
  *out << case_name(c);
}

}  // namespace ars::test
