// The same command gives byte-identical JSON, VCD, GTKWave save file and schedule dumps, for every
// registered kernel (the registry is read when the test runs, so kernels added later are covered).
#include <algorithm>
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
    EXPECT_TRUE(s.notify_links.empty());
    EXPECT_TRUE(s.wait_links.empty());
    EXPECT_TRUE(s.notify_records.empty());
    EXPECT_TRUE(s.wait_records.empty());
  }
}

// Round records kept for the first owners only: the others keep their phases, and every rank
// its dependency links; the full notify and wait records only with a timeline.
TEST(Determinism, RoundRecordsFoldedToPhasesBeyondTheShownRanks) {
  RunRequest request = test::request_for({"ring", ReduceOp::Sum, DType::FP32, 4, 4096});
  request.round_records_ranks = 2;
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.correct);
  // stage-in, 3 reduce-scatter and 3 all-gather rounds (2(P-1) = 6), stage-out.
  const std::vector<std::string> phases = {"stage-in", "RS", "RS", "RS",
                                           "AG",       "AG", "AG", "stage-out"};
  for (const RankStats& s : result.ranks) {
    SCOPED_TRACE(s.rank);
    EXPECT_EQ(s.rounds.size(), s.rank < 2 ? 8u : 0u);
    EXPECT_EQ(s.round_phases.size(), s.rank < 2 ? 0u : 8u);
    ASSERT_EQ(s.round_count(), 8u);
    for (std::size_t i = 0; i < phases.size(); ++i) EXPECT_EQ(s.phase(i), phases[i]);
    EXPECT_EQ(s.notify_links.size(), 6u);
    EXPECT_EQ(s.wait_links.size(), 6u);
    EXPECT_TRUE(s.notify_records.empty());
    EXPECT_TRUE(s.wait_records.empty());
  }
}

// The full report with round records folded (only the shown ranks' kept) prints what it
// prints with every round kept (as --json keeps them), on ranks and on blocks.
TEST(Determinism, FoldedRoundRecordsPrintTheSameReport) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> runs = {
      {{"-p", "switch16", "-d", "all", "-k", "ring", "--size", "64KiB"}, " of 16 shown;"},
      {{"-p", "a2a3-910b2", "-d", "0-3", "-k", "host_mesh", "--core-num", "4", "--size", "64KiB",
        "--ranks-shown", "2"},
       "(rounds of ranks 0-1 of 4 shown;"},
  };
  // Everything but the wall time.
  const auto report = [](const std::string& out) {
    std::string kept;
    std::size_t from = 0;
    while (from < out.size()) {
      const std::size_t to = std::min(out.find('\n', from), out.size());
      if (out.compare(from, 11, "simulation:") != 0) kept += out.substr(from, to + 1 - from);
      from = to + 1;
    }
    return kept;
  };
  for (const auto& [run, footer] : runs) {
    SCOPED_TRACE(run[1]);
    ScratchDir dir;
    std::vector<std::string> args = run;
    args.push_back("--explain");
    const test::ProcessResult folded = test::run_binary(args);
    args.insert(args.end(), {"--json", dir / "run.json"});
    const test::ProcessResult kept = test::run_binary(args);
    EXPECT_EQ(folded.exit_code, 0) << folded.err;
    EXPECT_EQ(kept.exit_code, 0) << kept.err;
    EXPECT_NE(folded.out.find(footer), std::string::npos) << folded.out;
    EXPECT_NE(folded.out.find("critical path, step by step"), std::string::npos);
    EXPECT_EQ(report(folded.out), report(kept.out));
  }
}

}  // namespace
}  // namespace ars
