// The step-11 "IR diff": the schedules kept in traces/ are what the simulator writes today, and
// they show the lesson: the builtin ring moves the hand ring's N/P chunks from the same left
// neighbour, but synchronises with full-mesh barriers where the hand ring only hands off to
// its right neighbour.
#include <gtest/gtest.h>

#include <map>
#include <optional>
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
// The thread stack guard's refusal of a parsed command line under `budget`; empty when it fits.
std::string stack_refusal(const ParsedRun& run, const MapBudget& budget) {
  try {
    check_thread_stacks(run.request, run.problem, budget);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The 4-server cluster's 32 ranks of one block and one DMA queue.
ParsedRun four_server_ring() {
  return parse_run({"-p", "a2a3-cluster", "--cluster.servers", "4", "-d", "all", "-k", "ring",
                    "--size", "64KiB", "--timing-only", "-q"});
}

// 4 ranks of 8 blocks, each block's DMA engine of two queues.
ParsedRun blocks_with_two_queues() {
  return parse_run({"-p", "a2a3-910b2", "-d", "0-3", "-k", "host_mesh", "--core-num", "8",
                    "--dma.queues", "2", "--size", "64KiB", "--timing-only", "-q"});
}

// Every thread's stack and guard page are two mappings; 64 more are kept spare. The 4-server
// cluster's 32 ranks of one block make 32 cores' threads, 64 mappings, before any DMA queue's.
TEST(ThreadStackGuard, RefusesThreadsBeyondTheProcessMappingsAndNamesTheWayOut) {
  const ParsedRun run = four_server_ring();
  EXPECT_EQ(stack_refusal(run, {100, 100 + 64 + 64}), "");
  EXPECT_EQ(stack_refusal(run, {101, 100 + 64 + 64}),
            "32 ranks need 32 SystemC threads (one for each block's core; a DMA queue makes its "
            "own once a transfer waits for it), each with a stack and a guard page: 64 memory "
            "mappings, with the 101 in use more than the 228 a process may have here "
            "(vm.max_map_count); use fewer ranks (--cluster.servers), or raise the limit "
            "(sysctl -w vm.max_map_count=262144)");
}

// Blocks multiply the cores' threads: 4 ranks x 8 blocks = 32. The limit it suggests leaves room
// for every DMA queue's thread too, (1 + 2) x 32 threads: 2 x (200000 + 2 x 96 + 64) mappings.
TEST(ThreadStackGuard, CountsEveryBlockOfTheRanksTakingPart) {
  const ParsedRun run = blocks_with_two_queues();
  EXPECT_EQ(stack_refusal(run, {0, 64 + 64}), "");
  EXPECT_EQ(stack_refusal(run, {0, 64 + 63}),
            "4 ranks need 32 SystemC threads (one for each block's core; a DMA queue makes its "
            "own once a transfer waits for it), each with a stack and a guard page: 64 memory "
            "mappings, with the 0 in use more than the 127 a process may have here "
            "(vm.max_map_count); use fewer ranks (-d) or blocks (--core-num), or raise the limit "
            "(sysctl -w vm.max_map_count=262144)");
  EXPECT_NE(stack_refusal(run, {200000, 200000 + 64 + 63}).find("vm.max_map_count=400512)"),
            std::string::npos);
}

// Beside the cores' threads (64 mappings) and the 64 spare, a budget of 100 + 64 + 64 + 7
// mappings leaves room for three queue threads (two mappings each): three engines of one queue
// make theirs, the fourth is refused (the rank whose transfer waited prefixes its name: see
// DmaEngine.AQueueThreadRefusedEndsTheRunNamingTheRank).
TEST(ThreadStackGuard, LetsDmaQueuesMakeTheirThreadsWhileTheMappingsLast) {
  const ParsedRun run = four_server_ring();
  const std::function<void()> guard =
      queue_thread_guard(run.request, run.problem, {100, 100 + 64 + 64 + 7});
  for (int engine = 0; engine < 3; ++engine) EXPECT_NO_THROW(guard());
  try {
    guard();
    FAIL() << "a fourth queue thread was let through";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "its DMA engine needs 1 SystemC thread for its queue, and the memory mappings "
                 "a process may have here (vm.max_map_count 235, 100 in use before the run) "
                 "leave room for the 32 cores' threads and 3 more only (each thread a stack and "
                 "a guard page); use fewer ranks (--cluster.servers), or raise the limit (sysctl "
                 "-w vm.max_map_count=262144)");
  }
}

// An engine of two queues makes both threads at once: room for three threads is room for one
// such engine.
TEST(ThreadStackGuard, CountsEveryQueueOfAnEngine) {
  const ParsedRun run = blocks_with_two_queues();
  const std::function<void()> guard =
      queue_thread_guard(run.request, run.problem, {0, 64 + 64 + 6});
  EXPECT_NO_THROW(guard());
  EXPECT_THROW(guard(), InputError);
}

// The machine's own budget: what this process maps, under a cap above it.
TEST(ThreadStackGuard, ReadsTheProcessMappingsAndTheirCapFromLinux) {
  const std::optional<MapBudget> budget = process_map_budget();
  ASSERT_TRUE(budget.has_value());
  EXPECT_GT(budget->in_use, 10u);
  EXPECT_GT(budget->limit, budget->in_use);
}

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

// The device models: 12 KiB a device of the platform, taking part or not, and 72 KiB a block of
// every rank. host_mesh on the 910B2's 8 devices, 4 ranks of 8 blocks: 8 x 12 + 4 x 8 x 72 =
// 2400 KiB; the ring on 2 devices of a 64-device ring8: 64 x 12 + 2 x 72 = 912 KiB.
TEST(GuardEstimate, ChargesTheDeviceModelsPerDeviceAndPerBlock) {
  EXPECT_EQ(guard_view({"-p", "a2a3-910b2", "-d", "0-3", "-k", "host_mesh", "--core-num", "8",
                        "--size", "64KiB", "--timing-only", "-q"})
                .estimate.fixed,
            2400u << 10);
  EXPECT_EQ(guard_view({"-p", "ring8", "--platform.devices", "64", "-d", "0,1", "-k", "ring",
                        "--size", "64KiB", "--timing-only", "-q"})
                .estimate.fixed,
            912u << 10);
}

// A timeline trace keeps every rank's notify and wait records (96 B each), its shown devices'
// slices (768 B an operation), and 512 B for each burst or notify crossing a link it shows and
// each notify landing on a shown device's cells. The ring at P = 4 on ring8's devices 0-3,
// 64 KiB a rank: every rank has 54 operations, 12 of them notifies and waits, pulls 6 chunks of
// 16 KiB (32 bursts each, 192) from its left neighbour and notifies its right one 6 times. Rank
// 0's left neighbour, device 3, is three links away the short way round (dev3, dev2 and dev1
// towards dev0), as is rank 3's right neighbour, so devices not shown carry shown links' bursts.
// Devices 0 and 1 shown, the links from dev0 and dev1 are: rank 0's pulls cross dev1's link
// (192), its notifies dev0's and land on dev1 (12); rank 1's pulls dev0's (192), its notifies
// dev1's (6); rank 2's pulls dev1's (192); rank 3's notifies dev1's and land on dev0 (12): 606
// x 512 + 4 x 12 x 96 + 2 x 54 x 768 = 397824 B. Every device shown: rank 0 3 x 192 + 12, ranks
// 1 and 2 192 + 12 each, rank 3 192 + 6 x (3 + 1): 1212 x 512 + 4608 + 4 x 54 x 768 = 791040 B.
const std::vector<std::string> kTracedRing = {
    "-p", "ring8", "-d", "0-3", "-k", "ring", "--size", "64KiB", "--timing-only", "-q", "--trace"};

TEST(GuardEstimate, ChargesTheTimelineTraceOfTheDevicesAndLinksShown) {
  std::vector<std::string> args = kTracedRing;
  args.push_back("run.json");
  const MemoryEstimate every = guard_view(args).estimate;
  EXPECT_EQ(every.timeline, 791040u);
  EXPECT_EQ(every.traces, 0u);
  EXPECT_EQ(every.records, 32u * 216);  // a trace keeps the records, -q or not
  args.insert(args.end(), {"--trace-devices", "0,1"});
  const MemoryEstimate two = guard_view(args).estimate;
  EXPECT_EQ(two.timeline, 397824u);
  // 1152 B of cells (the hand ring's 6 a rank, 48 B with records), two paths a rank (from its
  // left neighbour, to its right one) at 256 B, and 384 KiB of device models.
  EXPECT_EQ(two.routes, 4u * 2 * 256);
  EXPECT_EQ(two.total(), 397824u + 32 * 216 + 1152 + 2048 + (384u << 10));
}

// A trace is refused under a limit just below its estimate, naming the timeline's part and the
// way out, and runs under the estimate itself.
TEST(GuardEstimate, RefusesATimelineTraceOverTheLimit) {
  ScratchDir dir;
  std::vector<std::string> args = kTracedRing;
  args.insert(args.end(), {dir / "run.json", "--trace-devices", "0,1", "--memory-limit"});
  const std::uint64_t estimate = 397824u + 32 * 216 + 1152 + 2048 + (384u << 10);  // 782.38 KiB
  args.push_back(std::to_string(estimate - 1));
  const auto below = run_binary(args);
  EXPECT_EQ(below.exit_code, 2);
  EXPECT_NE(below.err.find("needs more than 782.38 KiB of host memory (global memory 0.00 B, "
                           "signal cells more than 1.12 KiB, routes more than 2.00 KiB, records "
                           "more than 6.75 KiB, timeline trace more than 388.50 KiB, device "
                           "models 384.00 KiB), more than the memory limit of 782.37 KiB; use a "
                           "smaller --size, or a larger --memory-limit\n"),
            std::string::npos)
      << below.err;
  EXPECT_FALSE(std::ifstream(dir / "run.json").good());
  args.back() = std::to_string(estimate);
  const auto at = run_binary(args);
  EXPECT_EQ(at.exit_code, 0) << at.err;
  EXPECT_NE(read_file(dir / "run.json").find("\"traceEvents\""), std::string::npos);
  // Every device shown, the way out names --trace-devices.
  args.erase(args.end() - 4, args.end() - 2);
  const auto every = run_binary(args);
  EXPECT_EQ(every.exit_code, 2);
  EXPECT_NE(every.err.find(", timeline trace more than "), std::string::npos) << every.err;
  EXPECT_NE(every.err.find("; use --trace-devices to show fewer devices, a smaller --size, or a "
                           "larger --memory-limit\n"),
            std::string::npos)
      << every.err;
}

}  // namespace
}  // namespace ars
