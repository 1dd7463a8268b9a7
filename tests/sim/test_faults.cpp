// Faults injected with --fault provoke the failures of a broken protocol; the run must end
// promptly with a report naming the blocked ranks, their cells, the expected and the actual
// values and the simulated time, and exit code 1.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/run_process.h"

namespace ars {
namespace {

using test::ProcessResult;
using test::ScratchDir;

struct FaultRun {
  ProcessResult process;
  nlohmann::json json;
};

// The barrier kernel at P = 4: every rank notifies its three peers, then waits for them.
FaultRun run_with(const std::vector<std::string>& extra) {
  ScratchDir dir;
  std::vector<std::string> args = {"-k", "barrier", "--json", dir / "run.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  FaultRun run{test::run_binary(args), {}};
  run.json = nlohmann::json::parse(test::read_file(dir / "run.json"), nullptr, false);
  return run;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

double last_finish_ns(const nlohmann::json& json) {
  double last = 0;
  for (const auto& rank : json["ranks"]) {
    if (rank["finished"].get<bool>()) last = std::max(last, rank["finish_ns"].get<double>());
  }
  return last;
}

void expect_deadlock(const FaultRun& run, const std::string& report_head) {
  EXPECT_FALSE(run.process.hung);
  EXPECT_EQ(run.process.signal, 0);
  EXPECT_EQ(run.process.exit_code, 1) << run.process.out << run.process.err;
  ASSERT_FALSE(run.json.is_discarded()) << run.process.out;
  EXPECT_FALSE(run.json["completed"].get<bool>());
  EXPECT_EQ(run.json["failure"].get<std::string>().rfind(report_head, 0), 0u)
      << run.json["failure"];
  EXPECT_NE(run.process.out.find("\n" + report_head + "\n"), std::string::npos) << run.process.out;
}

// A core running ahead of SystemC's time (transfers timed whole, no trace) blocks at its own
// time, which the simulated time never reaches once no event is left: the deadlock is still
// reported at the time a core last blocked, no earlier than any wait's "since" (its start).
TEST(Faults, ADeadlockIsReportedWhenTheLastCoreBlockedThoughItRanAhead) {
  const ProcessResult run =
      test::run_binary({"-p", "a2a3-910b2", "-d", "0-7", "-k", "hierarchical", "--size", "896",
                        "--dma.burst_bytes", "256", "--fault", "stall:4"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const std::size_t head = run.out.find("deadlock at ");
  ASSERT_NE(head, std::string::npos) << run.out;
  const double at_ns = std::stod(run.out.substr(head + 12));
  double latest_since_ns = 0;
  int waits = 0;
  for (auto since = run.out.find("since ", head); since != std::string::npos;
       since = run.out.find("since ", since + 1)) {
    latest_since_ns = std::max(latest_since_ns, std::stod(run.out.substr(since + 6)));
    ++waits;
  }
  EXPECT_EQ(waits, 7) << run.out;  // every rank but the stalled one
  EXPECT_GE(at_ns, latest_since_ns) << run.out;
  EXPECT_DOUBLE_EQ(at_ns, 1816117.321) << run.out;
}

// A rank's "since" is when its wait began, not when it last looked: in the ring, rank 3's
// dropped notify leaves rank 4 waiting first and the others behind it in turn, and rank 4,
// woken by later updates landing in its memory, still shows the start of its wait.
TEST(Faults, ABlockedWaitIsShownSinceItBegan) {
  ScratchDir dir;
  const ProcessResult run =
      test::run_binary({"-d", "0-7", "-k", "ring", "--size", "4096", "--fault", "drop-notify:3:2",
                        "--dump-schedule-times", "--dump-schedule", dir / "schedule.txt"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const std::string schedule = test::read_file(dir / "schedule.txt");
  const std::string wait_line = " rank=4 op=wait cell=signal[2,3] Ge expected=1\n";
  const std::size_t line = schedule.find(wait_line);
  ASSERT_NE(line, std::string::npos) << schedule;
  const std::size_t begin = schedule.rfind("t_ns=", line) + 5;
  const std::string began_ns = schedule.substr(begin, line - begin);
  EXPECT_NE(run.out.find("\n  rank 4 (device 4) waits on signal[2,3] Ge 1, cell holds 0, since " +
                         began_ns + " ns\n"),
            std::string::npos)
      << began_ns << "\n"
      << run.out;
  const double deadlock_ns = std::stod(run.out.substr(run.out.find("deadlock at ") + 12));
  EXPECT_GT(deadlock_ns, std::stod(began_ns));  // later updates woke it
}

TEST(Faults, DroppedNotifyLeavesItsPeerWaitingOnTheCell) {
  // Rank 0's notifies go to ranks 1, 2, 3 in turn: the second one is rank 2's cell [0,0].
  const FaultRun run = run_with({"--fault", "drop-notify:0:1"});
  // The other ranks are not held up: they finish at the fault-free run's device time, and
  // nothing moves after that.
  expect_deadlock(run, "deadlock at 6702.222 ns:");
  EXPECT_DOUBLE_EQ(last_finish_ns(run.json), 6702.222);
  EXPECT_NE(run.process.out.find("\n  rank 2 (device 2) waits on signal[0,0] Ge 1, cell holds 0"),
            std::string::npos)
      << run.process.out;
  EXPECT_EQ(count(run.process.out, "waits on"), 1u) << run.process.out;
}

TEST(Faults, WrongNotifyValueIsShownAsExpectedVersusActual) {
  const FaultRun run = run_with({"--fault", "notify-value:0:0:0"});
  expect_deadlock(run, "deadlock at 6702.222 ns:");
  EXPECT_NE(run.process.out.find("\n  rank 1 (device 1) waits on signal[0,0] Ge 1, cell holds 0"),
            std::string::npos)
      << run.process.out;
  EXPECT_EQ(count(run.process.out, "waits on"), 1u) << run.process.out;
}

TEST(Faults, StalledRankIsNamedAndEveryPeerWaitsOnItsRow) {
  // Nothing moves once the last live rank blocks on the stalled rank's row.
  const FaultRun run = run_with({"--fault", "stall:1"});
  expect_deadlock(run, "deadlock at 4151.111 ns:");
  const std::string& out = run.process.out;
  EXPECT_NE(out.find("\n  rank 1 (device 1) never started its kernel (stalled by a fault)"),
            std::string::npos)
      << out;
  for (int rank : {0, 2, 3}) {
    const std::string line = "\n  rank " + std::to_string(rank) + " (device " +
                             std::to_string(rank) +
                             ") waits on signal[1,0] Ge 1, cell holds 0, since ";
    EXPECT_NE(out.find(line), std::string::npos) << line << "\n" << out;
  }
}

TEST(Faults, SkippedWaitIsRecordedAndTheBarrierKernelStillCompletes) {
  ScratchDir dir;
  const ProcessResult run = test::run_binary(
      {"-k", "barrier", "--fault", "skip-wait:3:0", "--dump-schedule", dir / "schedule.txt"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string schedule = test::read_file(dir / "schedule.txt");
  EXPECT_EQ(count(schedule, " skipped"), 1u) << schedule;
  EXPECT_NE(schedule.find("rank=3 op=wait cell=signal[0,0] Ge expected=1 skipped\n"),
            std::string::npos)
      << schedule;
}

TEST(Faults, TheReportAndTheJsonNameTheFaultsInjected) {
  const FaultRun run = run_with({"--fault", "skip-wait:1:1", "--fault", "skip-wait:2:0"});
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
  EXPECT_NE(run.process.out.find("\nfaults injected: skip-wait:1:1, skip-wait:2:0\n"),
            std::string::npos)
      << run.process.out;
  ASSERT_FALSE(run.json.is_discarded()) << run.process.out;
  EXPECT_EQ(run.json["faults"], nlohmann::json::array({"skip-wait:1:1", "skip-wait:2:0"}));
  // A run without faults has neither.
  const FaultRun plain = run_with({});
  EXPECT_EQ(plain.process.out.find("faults injected"), std::string::npos) << plain.process.out;
  EXPECT_FALSE(plain.json.contains("faults"));
}

// A rank that never finished may not have reached a fault's index: that is the run's outcome,
// not bad input.
TEST(Faults, AFaultOnARankThatNeverFinishedIsNotRefused) {
  const FaultRun run = run_with({"--fault", "stall:3", "--fault", "drop-notify:3:0"});
  expect_deadlock(run, "deadlock at 4951.111 ns:");
  EXPECT_EQ(run.process.err.find("never applied"), std::string::npos) << run.process.err;
}

TEST(Faults, WrongValueOnTheSelfClearingBuiltinLeavesAResidue) {
  // Rank 1's cell [0,0] receives 7 instead of 1; the builtin's epilogue clears 1 of it.
  const ProcessResult run = test::run_binary({"--fault", "notify-value:0:0:7"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("rank 1 signal[0,0] = 6"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\nFAILED\n"), std::string::npos) << run.out;
}

// Rank 0 notifies the stalled rank 1 and blocks at once (951.111 ns); its update lands in
// rank 1's memory, which nobody watches, a link (1500 ns) and a GM write (300 cycles at
// 1.8 GHz, 166.667 ns) later. The run stands still only then: the deadlock is at 2617.778 ns.
TEST(Faults, ADeadlockIsReportedOnceTheLastSignalUpdateHasLanded) {
  const FaultRun run = run_with({"-d", "0,1", "--fault", "stall:1"});
  expect_deadlock(run, "deadlock at 2617.778 ns:");
  EXPECT_NE(run.process.out.find("\n  rank 0 (device 0) waits on signal[1,0] Ge 1, cell holds 0, "
                                 "since 951.111 ns\n"),
            std::string::npos)
      << run.process.out;
}

// The same update still in flight at the time limit: the run has not finished, it is not a
// deadlock.
TEST(Faults, ASignalUpdateInFlightAtTheTimeLimitIsNoDeadlock) {
  const FaultRun run = run_with({"-d", "0,1", "--fault", "stall:1", "--max-sim-time", "2000"});
  EXPECT_EQ(run.process.exit_code, 1) << run.process.out << run.process.err;
  EXPECT_NE(run.process.out.find("simulated-time limit of 2000 ns reached before every rank "
                                 "finished\nFAILED\n"),
            std::string::npos)
      << run.process.out;
  EXPECT_EQ(run.process.out.find("deadlock"), std::string::npos) << run.process.out;
}

TEST(Faults, MaxSimTimeEndsARunThatHasNotFinished) {
  const ProcessResult run = test::run_binary({"-k", "barrier", "--max-sim-time", "1000"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("simulated-time limit of 1000 ns reached before every rank "
                         "finished\nFAILED\n"),
            std::string::npos)
      << run.out;
}

}  // namespace
}  // namespace ars
