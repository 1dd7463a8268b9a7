// One point of a kernel correctness matrix, and the run request that simulates it on devices
// 0..P-1 of the default platform.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
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

// What one rank's counters must read after a run; no kernel here writes remotely.
struct RankTraffic {
  std::uint64_t remote_read_bytes;
  std::uint64_t notifies;
  std::uint64_t waits;
};

// The run finished, matched the golden, and rank r's counters are expected(r).
inline void expect_golden_and_traffic(const RunResult& result, int ranks,
                                      const std::function<RankTraffic(int rank)>& expected) {
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_TRUE(result.checked);
  EXPECT_TRUE(result.correct) << result.mismatch_count << " mismatches, first at rank "
                              << result.mismatches.front().rank << " index "
                              << result.mismatches.front().index << ": got "
                              << result.mismatches.front().got << ", expected "
                              << result.mismatches.front().expected;
  ASSERT_EQ(result.ranks.size(), static_cast<std::size_t>(ranks));
  for (const RankStats& s : result.ranks) {
    SCOPED_TRACE("rank " + std::to_string(s.rank));
    const RankTraffic want = expected(s.rank);
    EXPECT_EQ(s.remote_read_bytes, want.remote_read_bytes);
    EXPECT_EQ(s.remote_write_bytes, 0u);
    EXPECT_EQ(s.notifies, want.notifies);
    EXPECT_EQ(s.waits, want.waits);
  }
}

}  // namespace ars::test
