// The hand-written two-phase and ring allreduces (steps 09, 10) and the host builtin ring
// (spec 3.3): golden correctness over ranks, sizes, ops and dtypes, the exact per-rank counts
// of each kernel's cost card, and the errors of their contracts.
//
// Per rank, with N the bytes of one rank's vector and P the rank count:
//   two_phase: remote_read_bytes = 2(P-1)·N/P (reduce-scatter pulls chunk me from P-1 peers,
//              all-gather pulls P-1 reduced chunks; the own chunk is read locally both times);
//              notifies = waits = 2(P-1) (two row barriers of P-1 each).
//   ring:      remote_read_bytes = 2(P-1)·N/P (one N/P chunk from the left in each round);
//              notifies = 2(P-1) (the stage-in notify on row 0, then one after every round but
//              the last: 1 + 2(P-1) - 1); waits = 2(P-1) (one per round).
//   host_ring: remote_read_bytes = 2(P-1)·N/P (the ring's rounds); notifies = waits =
//              (2(P-1)+1)(P-1) (a full-mesh row barrier per round plus the final one).
// None of them writes remotely.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/ladder/ring.h"
#include "sim/run.h"
#include "tests/kernel_case.h"

namespace ars {
namespace {

using Case = test::KernelCase;
using test::request_for;

// The sizes of the brief plus two multiples of P, so that P = 3 and 5 (where none of the fixed
// sizes divides) still run: 7P leaves chunks that are no whole number of 32-byte rows, 4097P
// chunks one element over a 16 KiB FP32 tile.
std::vector<std::uint64_t> sizes_for(int ranks) {
  const auto p = static_cast<std::uint64_t>(ranks);
  return {1, 7, 64, 4096, 4097, 65539, 7 * p, 4097 * p};
}

// Every kernel x op x dtype x P x size. host_ring's contract admits only FP32 Sum: its other
// pairs check the error instead.
std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* kernel : {"two_phase", "ring", "host_ring"}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod}) {
      for (DType dtype : {DType::FP32, DType::FP16}) {
        for (int p : {2, 3, 4, 5, 8}) {
          for (std::uint64_t n : sizes_for(p)) out.push_back({kernel, op, dtype, p, n});
        }
      }
    }
  }
  return out;
}

// Test names and ctest's parameter column both show the case, not its bytes.

// The message the layout gives for a case outside the kernel's contract; empty inside it.
std::string contract_error(const Case& c) {
  if (c.kernel == "host_ring" && c.op != ReduceOp::Sum) {
    return std::string("host_ring: op ") + to_string(c.op) +
           " is not supported (the host ring reduces with Sum only)";
  }
  if (c.kernel == "host_ring" && c.dtype != DType::FP32) {
    return "host_ring: dtype fp16 is not supported (the host ring takes FP32 only)";
  }
  const auto ranks = static_cast<std::uint64_t>(c.ranks);
  if (c.elements % ranks != 0) {
    const std::uint64_t below = c.elements / ranks * ranks;
    return c.kernel + ": size " + std::to_string(c.elements) +
           " elements is not divisible by the rank count P = " + std::to_string(c.ranks) +
           " (the nearest that are: " + (below == 0 ? "" : std::to_string(below) + " or ") +
           std::to_string(below + ranks) + " elements)";
  }
  return "";
}

class HandKernel : public testing::TestWithParam<Case> {};

TEST_P(HandKernel, ReducesExactlyOrRejectsTheProblem) {
  const Case& c = GetParam();
  const std::string error = contract_error(c);
  if (!error.empty()) {
    try {
      run_allreduce(request_for(c));
      FAIL() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(e.what(), error);
    }
    return;
  }
  const std::uint64_t p = static_cast<std::uint64_t>(c.ranks);
  const std::uint64_t n = c.elements * dtype_bytes(c.dtype);
  const std::uint64_t syncs = c.kernel == "host_ring" ? (2 * (p - 1) + 1) * (p - 1) : 2 * (p - 1);
  test::expect_golden_and_traffic(run_allreduce(request_for(c)), c.ranks, [&](int) {
    return test::RankTraffic{2 * (p - 1) * n / p, syncs, syncs};
  });
}

INSTANTIATE_TEST_SUITE_P(Matrix, HandKernel, testing::ValuesIn(cases()),
                         [](const auto& info) { return test::case_name(info.param); });

// The ring's per-round table: stage-in, P-1 RS rounds, P-1 AG rounds, stage-out, each exchange
// round reading exactly one N/P chunk from the left neighbour.
TEST(Ring, ReportsOneRoundPerExchangeStep) {
  const Case c{"ring", ReduceOp::Sum, DType::FP32, 5, 5 * 4097};
  const RunResult result = run_allreduce(request_for(c));
  ASSERT_TRUE(result.correct);
  std::vector<std::string> phases;
  for (const RoundRecord& round : result.ranks[2].rounds) {
    phases.push_back(round.phase);
    if (round.phase == "RS" || round.phase == "AG") {
      EXPECT_EQ(round.remote_bytes, 4097u * 4);
    }
  }
  const std::vector<std::string> expected = {"stage-in", "RS", "RS", "RS", "RS",
                                             "AG",       "AG", "AG", "AG", "stage-out"};
  EXPECT_EQ(phases, expected);
}

// The spec's chunk indices, worked by hand for P = 4 and rank 0 (left neighbour 3): RS rounds
// receive chunks 2, 1, 0 (step 1..3: (0-step-1+4) mod 4), AG rounds 3, 2, 1 ((0-step+4) mod 4).
TEST(RingSchedule, MatchesTheSpecIndicesForRankZero) {
  const std::vector<int> expected = {2, 1, 0, 3, 2, 1};
  for (int s = 0; s < 6; ++s) {
    const RingRound round = ring_round(0, 4, s);
    EXPECT_EQ(round.reduces, s < 3) << "round " << s;
    EXPECT_EQ(round.chunk, expected[static_cast<std::size_t>(s)]) << "round " << s;
  }
}

// Every round receives the chunk the left neighbour finished one round earlier (its own chunk
// r-1 in the first AG round), the last RS round leaves chunk r fully reduced, and the AG rounds
// plus the own chunk cover the whole vector: for every P up to 16 and every rank.
TEST(RingSchedule, ChainsEveryRoundToTheLeftNeighboursPreviousRound) {
  for (int p = 2; p <= 16; ++p) {
    for (int r = 0; r < p; ++r) {
      const int left = (r - 1 + p) % p;
      SCOPED_TRACE("P = " + std::to_string(p) + ", rank " + std::to_string(r));
      EXPECT_EQ(ring_round(r, p, p - 2).chunk, r);
      EXPECT_EQ(ring_round(r, p, p - 1).chunk, left);
      std::vector<bool> received(static_cast<std::size_t>(p), false);
      received[static_cast<std::size_t>(r)] = true;
      for (int s = 1; s < 2 * (p - 1); ++s) {
        if (s == p - 1) continue;  // the first AG round, checked above
        EXPECT_EQ(ring_round(r, p, s).chunk, ring_round(left, p, s - 1).chunk) << "round " << s;
      }
      for (int s = p - 1; s < 2 * (p - 1); ++s)
        received[static_cast<std::size_t>(ring_round(r, p, s).chunk)] = true;
      EXPECT_EQ(std::count(received.begin(), received.end(), true), p);
    }
  }
}

void expect_input_error(const Case& c, const std::string& message,
                        std::optional<std::pair<int, int>> signal_shape = std::nullopt) {
  RunRequest request = request_for(c);
  request.problem.signal_shape = signal_shape;
  try {
    run_allreduce(request);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.what(), message);
  }
}

TEST(HostRingContract, RejectsAnOpOtherThanSum) {
  expect_input_error({"host_ring", ReduceOp::Max, DType::FP32, 4, 64},
                     "host_ring: op max is not supported (the host ring reduces with Sum only)");
}

TEST(HostRingContract, RejectsFp16) {
  expect_input_error({"host_ring", ReduceOp::Sum, DType::FP16, 4, 64},
                     "host_ring: dtype fp16 is not supported (the host ring takes FP32 only)");
}

TEST(HostRingContract, RejectsMoreThanSixteenRanks) {
  expect_input_error({"host_ring", ReduceOp::Sum, DType::FP32, 17, 17 * 4},
                     "host_ring: P = 17 ranks exceeds the limit of 16");
}

TEST(HostRingContract, RejectsASignalShapeOtherThanTheExtraRowForm) {
  expect_input_error({"host_ring", ReduceOp::Sum, DType::FP32, 4, 64},
                     "host_ring: signal shape [6,4] must be [2(P-1)+1, P] = [7,4]",
                     std::make_pair(6, 4));
}

// Sixteen ranks is inside the contract: the row barriers of 15 peers each still meet.
TEST(HostRingContract, RunsAtSixteenRanks) {
  const Case c{"host_ring", ReduceOp::Sum, DType::FP32, 16, 16 * 300};
  const RunResult result = run_allreduce(request_for(c));
  ASSERT_TRUE(result.correct);
  EXPECT_EQ(result.ranks[15].notifies, 31u * 15u);
  EXPECT_EQ(result.ranks[15].remote_read_bytes, 30u * 300u * 4u);
}

// Sizes that do not divide name the nearest that do, worked by hand: 1 MiB of FP32 on the
// SuperPod's 384 ranks; one element on three ranks, where only the size above exists.
TEST(RingContract, NamesTheNearestSizesThatDivide) {
  expect_input_error({"ring", ReduceOp::Sum, DType::FP32, 384, 262144},
                     "ring: size 262144 elements is not divisible by the rank count P = 384 (the "
                     "nearest that are: 261888 or 262272 elements)");
  expect_input_error({"two_phase", ReduceOp::Sum, DType::FP16, 3, 1},
                     "two_phase: size 1 elements is not divisible by the rank count P = 3 (the "
                     "nearest that are: 3 elements)");
}

TEST(RingContract, RejectsASingleRank) {
  expect_input_error({"ring", ReduceOp::Sum, DType::FP32, 1, 64},
                     "ring: needs at least 2 ranks (P = 1)");
}

// The binary turns a contract violation into one line on stderr and exit code 2.
TEST(HandKernelCli, SizeNotDivisibleIsOneLineAndExitCodeTwo) {
  const char* binary = std::getenv("ARS_BINARY");
  ASSERT_NE(binary, nullptr);
  // stderr into the pipe, stdout discarded.
  const std::string command =
      std::string(binary) + " --kernel two_phase -d 0,1 --size 7 2>&1 >/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string err;
  char buffer[256];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) err += buffer;
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_EQ(err,
            "allreduce-sim: error: two_phase: size 7 elements is not divisible by the rank count "
            "P = 2 (the nearest that are: 6 or 8 elements)\n");
}

}  // namespace
}  // namespace ars
