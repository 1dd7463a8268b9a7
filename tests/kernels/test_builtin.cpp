// The builtin allreduce(data, signal, op, mode) of step 11 in both modes (spec 3.1, 3.2, 3.4):
// golden correctness over ranks, sizes, ops and dtypes, the exact per-rank counts of the
// lowering, signal validation, --repeat on one self-clearing signal, and the step-11 command
// lines.
//
// With N elements of b bytes per rank, P ranks, and per call:
//   builtin_mesh: C = ceil(N·b / 16 KiB) chunks;
//     notifies = (P-1)(C+1) + (P-1)   (ready + C chunk barriers, then the epilogue's P-1)
//     waits    = (P-1)(C+1)
//     remote_read_bytes = (P-1)·N·b in (P-1)·C loads, each followed by one reduce
//   builtin_ring: K = max(1, ceil(longest segment · b / 16 KiB)) subchunks per segment;
//     notifies = 4K(P-1)^2 + 2(P-1)^2 (two full-mesh barriers per subchunk per round over
//                                      2(P-1) rounds, then the epilogue's -2K on 2(P-1) rows)
//     waits    = 4K(P-1)^2
//     remote_read_bytes summed over ranks = 2(P-1)·N·b (every round moves every segment once)
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "sim/run.h"
#include "tests/kernel_case.h"

namespace ars {
namespace {

constexpr std::uint64_t kChunk = 16384;

using Case = test::KernelCase;
using test::case_name;
using test::request_for;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

// The longest ring segment: FP32 boundaries floor(i·N/P), FP16 interior ones rounded up to 16.
std::uint64_t longest_segment(std::uint64_t n, DType dtype, int ranks) {
  std::uint64_t longest = 0;
  std::uint64_t previous = 0;
  for (int i = 1; i <= ranks; ++i) {
    std::uint64_t bound = static_cast<std::uint64_t>(i) * n / static_cast<std::uint64_t>(ranks);
    if (dtype == DType::FP16 && i < ranks) bound = std::min(n, ceil_div(bound, 16) * 16);
    longest = std::max(longest, bound - previous);
    previous = bound;
  }
  return longest;
}

// Checks every rank's counts against the formulas at the top, for `calls` calls.
void expect_counts(const Case& c, const RunResult& result, std::uint64_t calls) {
  const std::uint64_t p1 = static_cast<std::uint64_t>(c.ranks - 1);
  const std::uint64_t b = dtype_bytes(c.dtype);
  ASSERT_EQ(result.ranks.size(), static_cast<std::size_t>(c.ranks));
  if (c.kernel == "builtin_mesh") {
    const std::uint64_t chunks = ceil_div(c.elements * b, kChunk);
    for (const RankStats& s : result.ranks) {
      EXPECT_EQ(s.notifies, calls * (p1 * (chunks + 1) + p1)) << "rank " << s.rank;
      EXPECT_EQ(s.waits, calls * p1 * (chunks + 1)) << "rank " << s.rank;
      EXPECT_EQ(s.remote_read_bytes, calls * p1 * c.elements * b) << "rank " << s.rank;
      EXPECT_EQ(s.reduces, calls * p1 * chunks) << "rank " << s.rank;
      EXPECT_EQ(s.remote_write_bytes, 0u);
    }
    return;
  }
  const std::uint64_t k = std::max<std::uint64_t>(
      1, ceil_div(longest_segment(c.elements, c.dtype, c.ranks) * b, kChunk));
  std::uint64_t total_remote = 0;
  for (const RankStats& s : result.ranks) {
    EXPECT_EQ(s.notifies, calls * (4 * k * p1 * p1 + 2 * p1 * p1)) << "rank " << s.rank;
    EXPECT_EQ(s.waits, calls * 4 * k * p1 * p1) << "rank " << s.rank;
    EXPECT_EQ(s.remote_write_bytes, 0u);
    total_remote += s.remote_read_bytes;
  }
  EXPECT_EQ(total_remote, calls * 2 * p1 * c.elements * b);
}

void expect_correct(const RunResult& result) {
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.checked);
  EXPECT_EQ(result.mismatch_count, 0u);
  EXPECT_TRUE(result.signal_clear) << result.signal_residue;
  EXPECT_TRUE(result.correct);
}

// Every op and dtype over every P and size: 480 cases, about 10 ms each.
std::vector<Case> matrix() {
  std::vector<Case> cases;
  for (const char* kernel : {"builtin_mesh", "builtin_ring"}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod}) {
      for (DType dtype : {DType::FP32, DType::FP16}) {
        for (int p : {2, 3, 4, 5, 8}) {
          for (std::uint64_t n : {1u, 7u, 64u, 4096u, 4097u, 65539u})
            cases.push_back({kernel, op, dtype, p, n});
        }
      }
    }
  }
  return cases;
}

class BuiltinMatrix : public ::testing::TestWithParam<Case> {};

TEST_P(BuiltinMatrix, MatchesGoldenWithExactCountsAndClearSignal) {
  const Case& c = GetParam();
  const RunResult result = run_allreduce(request_for(c));
  expect_correct(result);
  expect_counts(c, result, 1);
}

INSTANTIATE_TEST_SUITE_P(All, BuiltinMatrix, ::testing::ValuesIn(matrix()),
                         [](const auto& info) { return case_name(info.param); });

// --repeat 3: three calls on one signal, each correct, and the signal all zero at the end.
class BuiltinRepeat : public ::testing::TestWithParam<Case> {};

TEST_P(BuiltinRepeat, ThreeCallsOnOneSignalStayCorrectAndClear) {
  const Case& c = GetParam();
  RunRequest request = request_for(c);
  request.problem.repeat = 3;
  const RunResult result = run_allreduce(request);
  expect_correct(result);
  expect_counts(c, result, 3);
}

std::vector<Case> repeat_cases() {
  std::vector<Case> cases;
  for (const char* kernel : {"builtin_mesh", "builtin_ring"}) {
    for (int p : {2, 4, 8}) cases.push_back({kernel, ReduceOp::Sum, DType::FP32, p, 4097});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Repeat3, BuiltinRepeat, ::testing::ValuesIn(repeat_cases()),
                         [](const auto& info) { return case_name(info.param); });

// Runs a request that must be refused and returns the message.
std::string refusal(RunRequest request) {
  try {
    run_allreduce(request);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "the request was accepted";
  return "";
}

TEST(BuiltinSignal, MeshRejectsARingShapedSignal) {
  RunRequest request = request_for({"builtin_mesh", ReduceOp::Sum, DType::FP32, 4, 64});
  request.problem.signal_shape = std::pair{6, 4};
  const std::string message = refusal(request);
  EXPECT_NE(message.find("needs a signal with 1 column [4,1], got [6,4]"), std::string::npos)
      << message;
  EXPECT_NE(message.find("a ring-shaped signal cannot be shared"), std::string::npos) << message;
  EXPECT_NE(message.find("separate [P,1] window"), std::string::npos) << message;
}

TEST(BuiltinSignal, MeshDoesNotCheckRowsButExtraRowsStayUnused) {
  RunRequest request = request_for({"builtin_mesh", ReduceOp::Sum, DType::FP32, 4, 64});
  request.problem.signal_shape = std::pair{6, 1};
  expect_correct(run_allreduce(request));
}

TEST(BuiltinSignal, MeshWithTooFewRowsNamesTheCellOutsideTheSignal) {
  RunRequest request = request_for({"builtin_mesh", ReduceOp::Sum, DType::FP32, 4, 64});
  request.problem.signal_shape = std::pair{2, 1};
  const std::string message = refusal(request);
  // Rank 2 announces itself on row 2 of its peers' [2,1] signals.
  EXPECT_NE(message.find("signal cell [2,0] is outside the signal 'signal' of shape [2,1]"),
            std::string::npos)
      << message;
}

TEST(BuiltinSignal, RingRejectsWrongRowCountNamingBothNumbers) {
  RunRequest request = request_for({"builtin_ring", ReduceOp::Sum, DType::FP32, 4, 64});
  request.problem.signal_shape = std::pair{5, 4};
  const std::string message = refusal(request);
  EXPECT_NE(message.find("needs a signal of shape [2(P-1),P] = [6,4] at P = 4, got [5,4]"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("(rows 5, expected 2(C-1) = 6 for its 4 columns)"), std::string::npos)
      << message;
}

// Spec 3.4 checks the rows against 2(P - 1) for P = the signal's columns: with three columns
// at P = 4 both the columns and the rows are off, and each is named with what it should be.
TEST(BuiltinSignal, RingNamesTheColumnsAndTheRowsTheyCallFor) {
  RunRequest request = request_for({"builtin_ring", ReduceOp::Sum, DType::FP32, 4, 64});
  request.problem.signal_shape = std::pair{6, 3};
  const std::string message = refusal(request);
  EXPECT_NE(message.find("got [6,3] (columns 3, expected P = 4; rows 6, expected 2(C-1) = 4 for "
                         "its 3 columns)"),
            std::string::npos)
      << message;
}

TEST(BuiltinSignal, RingRejectsAMeshSignal) {
  RunRequest request = request_for({"builtin_ring", ReduceOp::Sum, DType::FP32, 4, 64});
  request.problem.signal_shape = std::pair{4, 1};
  const std::string message = refusal(request);
  EXPECT_NE(message.find("= [6,4] at P = 4, got [4,1]"), std::string::npos) << message;
}

TEST(BuiltinSignal, RingAcceptsItsNaturalShapeGivenExplicitly) {
  RunRequest request = request_for({"builtin_ring", ReduceOp::Sum, DType::FP32, 3, 64});
  request.problem.signal_shape = std::pair{4, 3};
  expect_correct(run_allreduce(request));
}

TEST(BuiltinSignal, RingNeedsTwoRanks) {
  const std::string message =
      refusal(request_for({"builtin_ring", ReduceOp::Sum, DType::FP32, 1, 64}));
  EXPECT_NE(message.find("mode ring needs at least 2 ranks, got 1"), std::string::npos) << message;
}

TEST(BuiltinSignal, KernelAndModeMustAgree) {
  RunRequest request = request_for({"builtin_ring", ReduceOp::Sum, DType::FP32, 4, 64});
  request.problem.mode = "mesh";
  const std::string message = refusal(request);
  EXPECT_NE(message.find("kernel builtin_ring is the builtin in mode ring, but the mode is 'mesh'"),
            std::string::npos)
      << message;
}

// Tutorial pitfall: a barrier that reuses a cell already counted up by two earlier barriers
// but waits for Eq 1, as if the row were fresh, can never release (the counter is past the
// expected value). The simulator reports the deadlock with the cell, instead of hanging.
void reused_row_body(Rank& r) {
  const Signal signal = r.signal("signal");
  barrier(r, signal, 0, 1);
  barrier(r, signal, 0, 2);
  r.wait(signal, (r.rank() + 1) % r.ranks(), 0, 1, WaitCmp::Eq);
}

Layout reused_row_layout(const Problem& p) {
  return {{{"data", p.elements}}, {{"signal", p.ranks, 1}}};
}

TEST(BuiltinPitfall, ReusedBarrierCellWithEqIsAReportedDeadlock) {
  const KernelSpec reused{"reused_row", "a barrier cell used twice", false, reused_row_layout,
                          reused_row_body};
  RunRequest request = request_for({"reused_row", ReduceOp::Sum, DType::FP32, 4, 64});
  request.kernel_spec = &reused;
  const RunResult result = run_allreduce(request);
  EXPECT_FALSE(result.completed);
  EXPECT_NE(result.failure.find("deadlock"), std::string::npos) << result.failure;
  EXPECT_NE(result.failure.find("rank 0 (device 0) waits on signal[1,0] Eq 1, cell holds 2"),
            std::string::npos)
      << result.failure;
}

struct Command {
  int exit_code;
  std::string output;
};

Command run_cli(const std::string& arguments) {
  const char* binary = std::getenv("ARS_BINARY");
  if (binary == nullptr) return {-1, "ARS_BINARY is not set"};
  Command command{-1, ""};
  FILE* pipe = popen((std::string(binary) + " " + arguments + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return command;
  char buffer[4096];
  for (std::size_t got; (got = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    command.output.append(buffer, got);
  const int status = pclose(pipe);
  command.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return command;
}

bool ends_with_ok(const std::string& output) {
  return output.size() >= 3 && output.compare(output.size() - 3, 3, "OK\n") == 0;
}

TEST(BuiltinCli, Step11MeshOnFourDevicesIsTheDefault) {
  const Command c = run_cli("-p a2a3sim -d 0,1,2,3");
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("kernel builtin_mesh (mode mesh)"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("signal: all zero at the end"), std::string::npos) << c.output;
  EXPECT_TRUE(ends_with_ok(c.output)) << c.output;
}

TEST(BuiltinCli, Step11RingOnFourDevices) {
  const Command c = run_cli("-p a2a3sim -d 0,1,2,3 --mode ring");
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("kernel builtin_ring (mode ring)"), std::string::npos) << c.output;
  EXPECT_TRUE(ends_with_ok(c.output)) << c.output;
}

TEST(BuiltinCli, Step11MeshOnTwoDevices) {
  const Command c = run_cli("-p a2a3sim -d 0,1");
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_TRUE(ends_with_ok(c.output)) << c.output;
}

TEST(BuiltinCli, SharedRingSignalForMeshIsRefusedWithExitCode2) {
  const Command c = run_cli("--kernel builtin --mode mesh --signal-shape 6,4 -d 0,1,2,3");
  EXPECT_EQ(c.exit_code, 2) << c.output;
  EXPECT_EQ(c.output,
            "allreduce-sim: error: builtin allreduce mode mesh needs a signal with 1 column [4,1], "
            "got [6,4]: a ring-shaped signal cannot be shared, allocate a separate [P,1] window\n");
}

TEST(BuiltinCli, RepeatReportsAClearSignalInJson) {
  const std::string json = testing::TempDir() + "builtin_repeat.json";
  const Command c = run_cli("--mode ring --repeat 3 -d 0,1,2,3 --json " + json);
  EXPECT_EQ(c.exit_code, 0) << c.output;
  FILE* file = fopen(json.c_str(), "r");
  ASSERT_NE(file, nullptr);
  std::string text;
  char buffer[4096];
  for (std::size_t got; (got = fread(buffer, 1, sizeof buffer, file)) > 0;)
    text.append(buffer, got);
  fclose(file);
  std::remove(json.c_str());
  EXPECT_NE(text.find("\"signal_clear\": true"), std::string::npos) << text;
  // 3 calls x (4·1·9 + 2·9) notifies per rank at P = 4, K = 1.
  EXPECT_NE(text.find("\"notifies\": 162"), std::string::npos) << text;
}

std::string read_text(const std::string& path) {
  std::string text;
  FILE* file = fopen(path.c_str(), "r");
  if (file == nullptr) return text;
  char buffer[4096];
  for (std::size_t got; (got = fread(buffer, 1, sizeof buffer, file)) > 0;)
    text.append(buffer, got);
  fclose(file);
  return text;
}

// The schedule names every operation's rank, peer, window, offset, bytes and signal cell, and
// two runs write the same bytes, so that schedules diff cleanly.
TEST(BuiltinCli, ScheduleIsExplicitAndIdenticalAcrossRuns) {
  const std::string first = testing::TempDir() + "builtin_first.schedule";
  const std::string second = testing::TempDir() + "builtin_second.schedule";
  for (const std::string& path : {first, second}) {
    const Command c = run_cli("--mode ring --size 64 -d 0,1,2,3 --dump-schedule " + path);
    EXPECT_EQ(c.exit_code, 0) << c.output;
  }
  const std::string text = read_text(first);
  EXPECT_EQ(text, read_text(second));
  std::remove(first.c_str());
  std::remove(second.c_str());
  // Rank 0's first RS round (row 0) pulls segment 2 (elements 32..47) from rank 3.
  for (const char* line :
       {"rank=0 op=round index=1 phase=RS\n",
        "rank=0 op=notify peer=1 cell=signal[0,0] AtomicAdd value=1\n",
        "rank=0 op=wait cell=signal[0,3] Ge expected=1\n",
        "rank=0 op=remote_load peer=3 window=data offset=32 bytes=64\n",
        "rank=0 op=reduce sum bytes=64\n", "rank=0 op=wait cell=signal[0,3] Ge expected=2\n",
        "rank=0 op=notify peer=0 cell=signal[5,3] AtomicAdd value=-2\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace ars
