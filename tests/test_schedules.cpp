// The step-11 "IR diff": the schedules kept in traces/ are what the simulator writes today, and
// they show the lesson: the builtin ring moves the hand ring's N/P chunks from the same left
// neighbour, but synchronises with full-mesh barriers where the hand ring only hands off to
// its right neighbour.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli.h"
#include "sim/memory_guard.h"
#include "tests/parsed_run.h"
#include "tests/run_process.h"

namespace ars {
namespace {

using test::parse_run;
using test::ParsedRun;
using test::read_file;
using test::run_binary;
using test::ScratchDir;

std::string dump(const std::vector<std::string>& kernel_args, const ScratchDir& dir) {
  std::vector<std::string> args = kernel_args;
  const std::string path = dir / "run.schedule";
  args.insert(args.end(), {"-d", "0,1,2,3", "--size", "64", "--dump-schedule", path});
  const auto run = run_binary(args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return read_file(path);
}

// Lines of `schedule` with this rank and op, e.g. ("rank=0", "op=notify").
std::vector<std::string> lines_of(const std::string& schedule, const std::string& rank,
                                  const std::string& op) {
  std::vector<std::string> out;
  std::istringstream in(schedule);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(rank + " " + op + " ", 0) == 0) out.push_back(line);
  }
  return out;
}

std::set<std::string> peers_notified(const std::string& schedule) {
  std::set<std::string> peers;
  for (const std::string& line : lines_of(schedule, "rank=0", "op=notify")) {
    const auto at = line.find("peer=");
    const std::string peer = line.substr(at, line.find(' ', at) - at);
    if (line.find("value=1") != std::string::npos) peers.insert(peer);  // not the epilogue
  }
  return peers;
}

TEST(Schedules, KeptStepElevenDumpsAreWhatTheSimulatorWrites) {
  ScratchDir dir;
  EXPECT_EQ(dump({"-k", "ring"}, dir), read_file(ARS_SOURCE_DIR "/traces/ring_hand_p4.schedule"));
  EXPECT_EQ(dump({"-k", "builtin", "--mode", "ring"}, dir),
            read_file(ARS_SOURCE_DIR "/traces/ring_builtin_p4.schedule"));
}

TEST(Schedules, BuiltinRingPullsTheSameChunksButBarriersTheFullMesh) {
  ScratchDir dir;
  const std::string hand = dump({"-k", "ring"}, dir);
  const std::string builtin = dump({"-k", "builtin", "--mode", "ring"}, dir);
  // The same pulls: every rank reads N/P = 16 FP32 from its left neighbour in each of the
  // 2(P-1) = 6 rounds.
  EXPECT_EQ(lines_of(hand, "rank=0", "op=remote_load"),
            lines_of(builtin, "rank=0", "op=remote_load"));
  EXPECT_EQ(lines_of(hand, "rank=0", "op=remote_load").size(), 6u);
  // The hand ring hands off to its right neighbour only: 2(P-1) = 6 notifies per rank. The
  // builtin notifies every peer twice per round (ready, read-complete) plus its epilogue:
  // 4K(P-1)^2 + 2(P-1)^2 = 36 + 18 = 54 with K = 1.
  EXPECT_EQ(lines_of(hand, "rank=0", "op=notify").size(), 6u);
  EXPECT_EQ(lines_of(builtin, "rank=0", "op=notify").size(), 54u);
  EXPECT_EQ(peers_notified(hand), (std::set<std::string>{"peer=1"}));
  EXPECT_EQ(peers_notified(builtin), (std::set<std::string>{"peer=1", "peer=2", "peer=3"}));
}

// --- what the memory guard counts ---

struct CountCase {
  std::string name;
  std::vector<std::string> args;
  bool codegen = false;
};

class GuardCount : public ::testing::TestWithParam<CountCase> {};

// The memory guard counts each rank's operations by running the kernel's body without the
// hardware. The counts are the run's own, rank by rank: its transfers, reduces, notifies,
// waits and rounds (the JSON), and its lines in the schedule dump; with a codegen profile the
// dump's synchronisation lines stay within the bound the guard charges.
TEST_P(GuardCount, IsTheRunsOwnRankByRank) {
  const CountCase& c = GetParam();
  const ParsedRun parsed = parse_run(c.args);
  const std::vector<OperationCount> counts =
      count_operations(parsed.request, *parsed.kernel, parsed.problem, parsed.layout);

  ScratchDir dir;
  std::vector<std::string> args = c.args;
  args.insert(args.end(), {"--timing-only", "-q", "--json", dir / "run.json", "--dump-schedule",
                           dir / "run.schedule"});
  const auto run = run_binary(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "run.json"));
  std::map<int, std::uint64_t> rounds;
  for (const auto& round : j.at("rounds")) ++rounds[round.at("rank").get<int>()];
  std::map<int, std::uint64_t> lines;
  std::istringstream schedule(read_file(dir / "run.schedule"));
  for (std::string line; std::getline(schedule, line);) {
    if (line.rfind("rank=", 0) == 0) ++lines[std::stoi(line.substr(5))];
  }
  ASSERT_EQ(counts.size(), j.at("ranks").size());
  for (std::size_t rank = 0; rank < counts.size(); ++rank) {
    const auto& stats = j.at("ranks")[rank];
    const OperationCount& count = counts[rank];
    const int r = static_cast<int>(rank);
    EXPECT_EQ(count.transfers, stats.at("transfers").get<std::uint64_t>()) << "rank " << r;
    EXPECT_EQ(count.reduces, stats.at("reduces").get<std::uint64_t>()) << "rank " << r;
    EXPECT_EQ(count.notifies, stats.at("notifies").get<std::uint64_t>()) << "rank " << r;
    EXPECT_EQ(count.waits, stats.at("waits").get<std::uint64_t>()) << "rank " << r;
    EXPECT_EQ(count.rounds, rounds[r]) << "rank " << r;
    if (c.codegen) {
      EXPECT_GT(lines[r], count.schedule_lines(false)) << "rank " << r;
      EXPECT_LE(lines[r], count.schedule_lines(true)) << "rank " << r;
    } else {
      EXPECT_EQ(lines[r], count.schedule_lines(false)) << "rank " << r;
    }
  }
}

std::vector<CountCase> count_cases() {
  std::vector<CountCase> cases;
  for (const char* k : {"barrier", "mesh", "two_phase", "ring", "host_ring", "builtin_mesh",
                        "builtin_ring", "host_mesh", "rhd"}) {
    cases.push_back({k, {"-p", "a2a3", "-d", "0,2,3,5,6", "-k", k, "--size", "100KiB"}});
  }
  cases.push_back(
      {"host_mesh_3_blocks",
       {"-p", "a2a3-910b2", "-d", "0-3", "-k", "host_mesh", "--core-num", "3", "--size", "40KiB"}});
  cases.push_back({"hierarchical_cluster",
                   {"-p", "a2a3-cluster", "--cluster.servers", "3", "-d", "all", "-k",
                    "hierarchical", "--size", "96KiB"}});
  cases.push_back({"builtin_ring_repeat_fp16",
                   {"-p", "a2a3", "-d", "0-2", "-k", "builtin", "--mode", "ring", "--repeat", "2",
                    "--dtype", "fp16", "--size", "100KiB"}});
  cases.push_back({"builtin_mesh_codegen_before",
                   {"-p", "a2a3-910b2", "-d", "0-3", "-k", "builtin_mesh", "--codegen", "before",
                    "--size", "64KiB"},
                   true});
  cases.push_back(
      {"ring_codegen_after",
       {"-p", "a2a3-910b2", "-d", "0-3", "-k", "ring", "--codegen", "after", "--size", "64KiB"},
       true});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryKernel, GuardCount, ::testing::ValuesIn(count_cases()),
                         [](const auto& info) { return info.param.name; });

// The guard's estimate for a command line (no limit), and the operations it counts.
struct GuardView {
  MemoryEstimate estimate;
  std::uint64_t operations = 0;
};

GuardView guard_view(const std::vector<std::string>& args) {
  const ParsedRun run = parse_run(args);
  GuardView view;
  view.estimate = estimate_memory(run.request, *run.kernel, run.problem, run.layout, UINT64_MAX);
  for (const OperationCount& count :
       count_operations(run.request, *run.kernel, run.problem, run.layout))
    view.operations += count.operations();
  return view;
}

// A memory's written signal cells are charged 32 B each (48 B with records, which keep each
// cell's last writer), at most one per notify it receives and at most its signals' cells; the
// report's records 32 B per operation counted. At P = 5
// the signal is [2(P-1), P] = [8, 5], 40 cells a rank. The hand ring's rank receives 8
// notifies, each on its own cell of its left neighbour's column: 5 x 8 x 48 = 1920 B. The
// builtin ring's full-mesh barriers reach every cell: 5 x 40 x 48 = 9600 B.
TEST(GuardEstimate, ChargesTheCellsTheNotifiesWriteAndTheRecordsKept) {
  std::vector<std::string> args = {"-p",   "a2a3",   "-d",     "0,2,3,5,6",    "-k",
                                   "ring", "--size", "100KiB", "--timing-only"};
  const GuardView ring = guard_view(args);
  EXPECT_EQ(ring.estimate.signal_cells, 1920u);
  EXPECT_GT(ring.operations, 0u);
  EXPECT_EQ(ring.estimate.records, 32 * ring.operations);
  EXPECT_FALSE(ring.estimate.counted_in_part);
  // Quiet, nothing is counted: every cell fits, and no records are kept.
  args.push_back("-q");
  const GuardView quiet = guard_view(args);
  EXPECT_EQ(quiet.estimate.signal_cells, 5u * 40 * 32);
  EXPECT_EQ(quiet.estimate.records, 0u);
  args.pop_back();
  args[5] = "builtin_ring";
  EXPECT_EQ(guard_view(args).estimate.signal_cells, 5u * 40 * 48);
}

}  // namespace
}  // namespace ars
