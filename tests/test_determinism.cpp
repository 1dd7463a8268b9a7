// The same command gives byte-identical JSON, VCD, GTKWave save file and schedule dumps, for every
// registered kernel (the registry is read when the test runs, so kernels added later are covered).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "sim/run.h"
#include "tests/kernel_case.h"
#include "tests/run_process.h"

namespace ars {
namespace {

using test::ScratchDir;

struct Outputs {
  int exit_code;
  std::string json;
  std::string vcd;
  std::string schedule;
  std::string gtkw;
};

Outputs run_once(const std::string& kernel) {
  ScratchDir dir;
  const test::ProcessResult run =
      test::run_binary({"-k", kernel, "-d", "0,1,2,3", "--size", "4096", "--json", dir / "run.json",
                        "--vcd", dir / "run.vcd", "--dump-schedule", dir / "schedule.txt"});
  EXPECT_EQ(run.signal, 0) << kernel;
  return {run.exit_code, test::read_file(dir / "run.json"), test::read_file(dir / "run.vcd"),
          test::read_file(dir / "schedule.txt"), test::read_file(dir / "run.gtkw")};
}

TEST(Determinism, EveryKernelWritesIdenticalBytesTwice) {
  ASSERT_FALSE(kernel_registry().empty());
  for (const KernelSpec& kernel : kernel_registry()) {
    SCOPED_TRACE(kernel.name);
    const Outputs first = run_once(kernel.name);
    const Outputs second = run_once(kernel.name);
    EXPECT_EQ(first.exit_code, 0);
    EXPECT_EQ(second.exit_code, 0);
    EXPECT_FALSE(first.json.empty());
    EXPECT_FALSE(first.vcd.empty());
    EXPECT_FALSE(first.schedule.empty());
    EXPECT_FALSE(first.gtkw.empty());
    EXPECT_TRUE(first.json == second.json) << "JSON differs";
    EXPECT_TRUE(first.vcd == second.vcd) << "VCD differs";
    EXPECT_TRUE(first.schedule == second.schedule) << "schedule differs";
    EXPECT_TRUE(first.gtkw == second.gtkw) << "GTKWave save file differs";
  }
}

// A run whose outputs show no per-round or per-transfer record (-q) keeps none of them, and
// answers exactly as the run that keeps them for its JSON: the same summary and schedule.
TEST(Determinism, RecordsKeptOnlyWhenAskedGiveTheSameAnswers) {
  ASSERT_FALSE(kernel_registry().empty());
  const std::vector<std::vector<std::string>> runs = {
      {"-d", "0,1,2,3", "--size", "4096"},
      // 126 rounds per rank: the DMA engines drop landed records once they hold 128.
      {"-p", "ring8", "--platform.devices", "64", "-d", "all", "--size", "64KiB"},
  };
  for (const KernelSpec& kernel : kernel_registry()) {
    for (const std::vector<std::string>& run : runs) {
      if (run.size() > 4 && std::string(kernel.name) != "ring") continue;
      SCOPED_TRACE(std::string(kernel.name) + " " + run[1]);
      ScratchDir dir;
      std::vector<std::string> args = {"-k", kernel.name, "-q", "--dump-schedule",
                                       dir / "dropped.txt"};
      args.insert(args.end(), run.begin(), run.end());
      const test::ProcessResult dropped = test::run_binary(args);
      args[4] = dir / "kept.txt";
      args.insert(args.end(), {"--json", dir / "run.json"});
      const test::ProcessResult kept = test::run_binary(args);
      EXPECT_EQ(dropped.exit_code, 0) << dropped.err;
      EXPECT_EQ(kept.exit_code, 0) << kept.err;
      EXPECT_NE(dropped.out.find("device time: "), std::string::npos);
      EXPECT_EQ(dropped.out, kept.out);
      EXPECT_FALSE(test::read_file(dir / "dropped.txt").empty());
      EXPECT_TRUE(test::read_file(dir / "dropped.txt") == test::read_file(dir / "kept.txt"));
    }
  }
}

// Without kept records a rank's result holds its counts only.
TEST(Determinism, RecordsNotKeptLeaveOnlyCounts) {
  RunRequest request = test::request_for({"ring", ReduceOp::Sum, DType::FP32, 4, 4096});
  request.keep_records = false;
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.correct);
  for (const RankStats& s : result.ranks) {
    // The ring at P = 4: 2(P-1) = 6 rounds, each waiting on one notify.
    EXPECT_EQ(s.notifies, 6u);
    EXPECT_EQ(s.waits, 6u);
    EXPECT_GT(s.transfers, 0u);
    EXPECT_TRUE(s.rounds.empty());
    EXPECT_TRUE(s.spans.empty());
    EXPECT_TRUE(s.transfer_records.empty());
    EXPECT_TRUE(s.notify_records.empty());
    EXPECT_TRUE(s.wait_records.empty());
  }
}

}  // namespace
}  // namespace ars
