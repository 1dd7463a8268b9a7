// Many vector cores per rank: blocks sharing a device's link and memory port (times worked out
// by hand at 1 GHz, a cycle is 1 ns), the host mesh builtin's tile dealing, signal lanes, exact
// counts and golden results, the InCore builtins' refusal, and codegen profiles changing
// exactly the instructions they name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "kernels/api.h"
#include "kernels/ladder/host_mesh.h"
#include "models/platform/platform.h"
#include "sim/outputs/critical_path.h"
#include "sim/run.h"
#include "tests/run_process.h"

namespace ars {
namespace {

constexpr std::uint64_t kElements = 4096;  // FP32: 16384 B, 32 bursts of 512 B

std::uint64_t now_ps() {
  return sc_core::sc_time_stamp().value();
}

// Full mesh of two devices; the link (16 B/ns) and, when `slow_memory`, the memory port
// (16 B/ns) are the bottlenecks; DMA queues stream at 64 B/ns remote, 32 B/ns local.
PlatformConfig two_block_config(bool slow_memory) {
  PlatformConfig c;
  c.clock_GHz = 1.0;
  c.devices = 2;
  c.vector_cores = 2;
  c.gm_read_latency_cycles = 1000;
  c.gm_write_latency_cycles = 300;
  c.gm_bandwidth_GBps = slow_memory ? 16 : 1600;
  c.dma_setup_cycles = 100;
  c.dma_mte2_bytes_per_cycle = 32;
  c.dma_remote_bytes_per_cycle = 64;
  c.link_bandwidth_GBps = 16;
  c.link_latency_ns = 1000;
  return c;
}

// Two ranks of two blocks each on the 16 KiB tile.
Problem two_block_problem() {
  Problem problem;
  problem.ranks = 2;
  problem.elements = kElements;
  problem.core_num = 2;
  return problem;
}

// Blocks of rank 0 listed in `active` each move the 16 KiB tile (a pull from rank 1, or a
// local load); returns how long each block's transfer took.
std::vector<std::uint64_t> block_transfers(const std::vector<int>& active, bool remote) {
  const Problem problem = two_block_problem();
  const Layout layout{{{"data", kElements}}, {{"signal", 2, 2}}};
  std::vector<std::uint64_t> elapsed(2, 0);
  const PlatformConfig config = two_block_config(!remote);
  Platform platform("platform", config, {0, 1}, problem, layout,
                    [&](Rank& r) {
                      if (r.rank() != 0) return;
                      if (std::find(active.begin(), active.end(), r.block()) == active.end())
                        return;
                      const Tile tile = r.alloc(kElements, DType::FP32);
                      const std::uint64_t begin = now_ps();
                      if (remote) {
                        r.remote_load(tile, r.window("data"), 1, 0, kElements);
                      } else {
                        r.load(tile, r.input(), 0, kElements);
                      }
                      elapsed[static_cast<std::size_t>(r.block())] = now_ps() - begin;
                    },
                    {});
  EXPECT_TRUE(platform.run(sc_core::sc_time(1, sc_core::SC_MS)).completed);
  return elapsed;
}

// A pull alone: the link streams 32 bursts of 32 ns from the setup on (100 + 1024 ns); the
// request's flight, the peer's GM read and the data's flight add 3000 ns: 4124 ns.
TEST(Blocks, OneBlockPullingAloneHasTheLinkToItself) {
  EXPECT_EQ(block_transfers({1}, true)[1], 4124000u);
}

// Two blocks pull over the same link direction at once: it carries 64 bursts, so the later
// block ends at 100 + 2048 + 3000 = 5148 ns and the earlier up to one burst (32 ns) before.
TEST(Blocks, TwoBlocksPullingOverOneLinkShareIt) {
  const std::vector<std::uint64_t> t = block_transfers({0, 1}, true);
  EXPECT_EQ(std::max(t[0], t[1]), 5148000u);
  EXPECT_GE(std::min(t[0], t[1]), 5148000u - 32000u);
}

// A local load alone on a 16 B/ns memory port: the queue issues at 32 B/ns, the port takes
// 1024 ns for the 16 KiB; setup 100 + 1024 + GM read latency 1000 = 2124 ns.
TEST(Blocks, OneBlockLoadingAloneHasTheMemoryPortToItself) {
  EXPECT_EQ(block_transfers({0}, false)[0], 2124000u);
}

// Two blocks load through the device's one port: 2048 ns of port time, so the later ends at
// 100 + 2048 + 1000 = 3148 ns, the earlier up to one burst (512 B / 16 B/ns = 32 ns) before.
TEST(Blocks, TwoBlocksLoadingThroughOneMemoryPortShareIt) {
  const std::vector<std::uint64_t> t = block_transfers({0, 1}, false);
  EXPECT_EQ(std::max(t[0], t[1]), 3148000u);
  EXPECT_GE(std::min(t[0], t[1]), 3148000u - 32000u);
}

// Both blocks of rank 0 notify rank 1 at time 0 (each on its own lane), acknowledged, with no
// issue costs. Each atomic flies 1000 ns; rank 1's memory applies one at a time, each holding
// it gm.atomic_ns = 200 ns, then the write latency (300 ns); the reply flies 1000 ns. The first
// returns at 1000 + 300 + 1000 = 2300 ns, the second starts 200 ns later: 2500 ns. Without
// the hold both return at 2300 ns.
std::vector<std::uint64_t> two_blocks_notify(double atomic_ns) {
  PlatformConfig config = two_block_config(false);
  config.notify_acknowledged = 1;
  config.gm_atomic_ns = atomic_ns;
  const Problem problem = two_block_problem();
  const Layout layout{{{"data", kElements}}, {{"signal", 2, 2}}};
  std::vector<std::uint64_t> elapsed(2, 0);
  Platform platform("platform", config, {0, 1}, problem, layout,
                    [&](Rank& r) {
                      if (r.rank() != 0) return;
                      const std::uint64_t begin = now_ps();
                      r.notify(r.signal("signal"), 1, 0, r.block(), 1, NotifyOp::AtomicAdd);
                      elapsed[static_cast<std::size_t>(r.block())] = now_ps() - begin;
                    },
                    {});
  EXPECT_TRUE(platform.run(sc_core::sc_time(1, sc_core::SC_MS)).completed);
  std::sort(elapsed.begin(), elapsed.end());
  return elapsed;
}

TEST(Blocks, SignalAtomicsQueueAtTheTargetsMemory) {
  EXPECT_EQ(two_blocks_notify(200), (std::vector<std::uint64_t>{2300000, 2500000}));
}

TEST(Blocks, SignalAtomicsWithoutAHoldLandTogether) {
  EXPECT_EQ(two_blocks_notify(0), (std::vector<std::uint64_t>{2300000, 2300000}));
}

using Tiles = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

TEST(HostMesh, TilesAreDealtRoundRobinToTheBlocks) {
  // 1300 elements: five full 256-element tiles and one of 20.
  EXPECT_EQ(host_mesh_block_tiles(1300, 1, 4), (Tiles{{256, 256}, {1280, 20}}));
  EXPECT_EQ(host_mesh_block_tiles(1300, 3, 4), (Tiles{{768, 256}}));
  EXPECT_EQ(host_mesh_block_tiles(1300, 0, 1).size(), 6u);
  EXPECT_EQ(host_mesh_block_tiles(100, 0, 8), (Tiles{{0, 100}}));
  EXPECT_TRUE(host_mesh_block_tiles(100, 1, 8).empty());
}

RunRequest host_mesh_request(int ranks, int core_num, std::uint64_t elements) {
  RunRequest request;
  for (int d = 0; d < ranks; ++d) request.devices.push_back(d);
  request.platform.vector_cores = 8;
  request.kernel = "host_mesh";
  request.problem.elements = elements;
  request.problem.core_num = core_num;
  return request;
}

// The same run with every rank's executed operations recorded.
RunResult run_recording_schedule(int ranks, int core_num, std::uint64_t elements) {
  RunRequest request = host_mesh_request(ranks, core_num, elements);
  request.record_schedule = true;
  return run_allreduce(request);
}

TEST(HostMesh, EachBlockSignalsOnItsOwnLane) {
  // P = 3, two blocks, 600 elements: tiles 0 and 2 go to block 0, tile 1 to block 1. Block 1 of
  // rank 1 owns column 1: it adds to cell [1,1] of each peer and waits on its own [0,1], [2,1].
  const RunResult result = run_recording_schedule(3, 2, 600);
  ASSERT_TRUE(result.correct);
  std::vector<std::string> lines;
  for (const ScheduleLog& log : result.schedule) {
    for (const ScheduleLog::Entry entry : log) {
      const std::string line(entry.line);
      if (line.rfind("rank=1 block=1 op=notify", 0) == 0 ||
          line.rfind("rank=1 block=1 op=wait", 0) == 0)
        lines.push_back(line.substr(std::string("rank=1 block=1 op=").size()));
    }
  }
  const std::vector<std::string> expected = {
      // tile 1: its barrier at generation 1
      "notify peer=0 cell=signal[1,1] AtomicAdd value=1",
      "notify peer=2 cell=signal[1,1] AtomicAdd value=1",
      "wait cell=signal[0,1] Ge expected=1",
      "wait cell=signal[2,1] Ge expected=1",
      // the final barrier at tiles + 1 = 2
      "notify peer=0 cell=signal[1,1] AtomicAdd value=1",
      "notify peer=2 cell=signal[1,1] AtomicAdd value=1",
      "wait cell=signal[0,1] Ge expected=2",
      "wait cell=signal[2,1] Ge expected=2",
      // the epilogue takes -(tiles + 1) back from the lane's peer cells
      "notify peer=1 cell=signal[0,1] AtomicAdd value=-2",
      "notify peer=1 cell=signal[2,1] AtomicAdd value=-2",
  };
  EXPECT_EQ(lines, expected);
}

// The pipelined tiles: with three tiles on one block, rank 0 stages tiles 0 and 1, passes
// barrier 1, then issues tile 0's pull and tile 2's load and goes straight on to barrier 2
// (both issued in the same picosecond as that barrier's notify); tile 0 is reduced only after
// barrier 2's wait, and tile 2 is stored into the window after tile 0's result.
TEST(HostMesh, EachTilesPullsFlyDuringTheNextTilesBarrier) {
  const RunResult result = run_recording_schedule(2, 1, 768);
  ASSERT_TRUE(result.correct);
  std::vector<std::string> ops;
  std::vector<std::uint64_t> at;
  for (const ScheduleLog::Entry entry : result.schedule.at(0)) {
    const std::string line(entry.line);
    ASSERT_EQ(line.rfind("rank=0 op=", 0), 0u) << line;
    if (line.find("op=round") != std::string::npos) continue;
    ops.push_back(line.substr(std::string("rank=0 op=").size()));
    at.push_back(entry.at_ps);
  }
  const std::vector<std::string> expected = {
      "load peer=0 window=x offset=0 bytes=1024",
      "store peer=0 window=data offset=0 bytes=1024",
      "load peer=0 window=x offset=256 bytes=1024",
      "store peer=0 window=data offset=256 bytes=1024",
      "notify peer=1 cell=signal[0,0] AtomicAdd value=1",
      "wait cell=signal[1,0] Ge expected=1",
      "remote_load peer=1 window=data offset=0 bytes=1024",  // 6: tile 0's pull
      "remote_load peer=0 window=x offset=512 bytes=1024",   // 7: tile 2's load
      "notify peer=1 cell=signal[0,0] AtomicAdd value=1",    // 8: barrier 2
      "wait cell=signal[1,0] Ge expected=2",
      "reduce sum bytes=1024",  // 10: tile 0
      "store peer=0 window=y offset=0 bytes=1024",
      "store peer=0 window=data offset=512 bytes=1024",
      "remote_load peer=1 window=data offset=256 bytes=1024",
      "notify peer=1 cell=signal[0,0] AtomicAdd value=1",
      "wait cell=signal[1,0] Ge expected=3",
      "reduce sum bytes=1024",
      "store peer=0 window=y offset=256 bytes=1024",
      "remote_load peer=1 window=data offset=512 bytes=1024",
      "reduce sum bytes=1024",
      "store peer=0 window=y offset=512 bytes=1024",
      "notify peer=1 cell=signal[0,0] AtomicAdd value=1",
      "wait cell=signal[1,0] Ge expected=4",
      "notify peer=0 cell=signal[1,0] AtomicAdd value=-4",
  };
  ASSERT_EQ(ops, expected);
  EXPECT_EQ(at[6], at[8]);
  EXPECT_EQ(at[7], at[8]);
  EXPECT_GT(at[10], at[9]);
}

// With blocks the critical path walks each rank's blocks: every nanosecond of the device time
// is on some block's record (none unattributed), the path ends on the block that finished
// last, and a wait hands the path to the block that notified it: on the host mesh's lanes,
// block b of the peer. Rank 1 launches 20 us late, so rank 0's blocks wait for it.
TEST(HostMesh, CriticalPathWalksTheBlocksAndAttributesEveryNanosecond) {
  RunRequest request = host_mesh_request(2, 4, 4096);
  request.platform.launch_offset_cycles = 20000;
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.correct);
  const CriticalPath path = critical_path(result);
  ASSERT_FALSE(path.steps.empty());
  const auto last = std::max_element(
      result.blocks.begin(), result.blocks.end(),
      [](const RankStats& a, const RankStats& b) { return a.finish_ps < b.finish_ps; });
  EXPECT_EQ(path.end_rank, last->rank);
  EXPECT_EQ(path.end_block, last->block);
  std::uint64_t covered = 0;
  int hand_offs = 0;
  for (std::size_t i = 0; i < path.steps.size(); ++i) {
    const PathStep& step = path.steps[i];
    EXPECT_NE(step.kind, PathStep::Kind::Unattributed) << i;
    if (i > 0) {
      EXPECT_EQ(step.start_ps, path.steps[i - 1].end_ps) << i;
    }
    covered += step.end_ps - step.start_ps;
    if (step.kind == PathStep::Kind::PeerWait) {
      ++hand_offs;
      EXPECT_EQ(step.peer_block, step.block) << i;
      EXPECT_NE(step.peer, step.rank) << i;
    }
  }
  EXPECT_EQ(covered, path.device_time_ps);
  EXPECT_GT(hand_offs, 0);
}

struct CountCase {
  int ranks;
  int core_num;
  std::uint64_t elements;
};

void PrintTo(const CountCase& c, std::ostream* out) {
  *out << "P=" << c.ranks << " core_num=" << c.core_num << " N=" << c.elements;
}

class HostMeshCounts : public ::testing::TestWithParam<CountCase> {};

// Per block with T tiles: notifies (P-1)(T+1) + (P-1), waits (P-1)(T+1), remote bytes (P-1) x
// its tiles' bytes; per rank the sums over its blocks. The result matches the golden and the
// signal ends all zero.
TEST_P(HostMeshCounts, EveryRankAndBlockSignalsExactlyAsItsTilesSay) {
  const CountCase c = GetParam();
  const RunResult result = run_allreduce(host_mesh_request(c.ranks, c.core_num, c.elements));
  ASSERT_TRUE(result.completed);
  EXPECT_TRUE(result.correct);
  EXPECT_TRUE(result.signal_clear);
  const std::uint64_t peers = static_cast<std::uint64_t>(c.ranks - 1);
  std::uint64_t rank_notifies = 0;
  std::uint64_t rank_waits = 0;
  for (int b = 0; b < c.core_num; ++b) {
    const Tiles tiles = host_mesh_block_tiles(c.elements, b, c.core_num);
    std::uint64_t bytes = 0;
    for (const auto& tile : tiles) bytes += 4 * tile.second;
    const std::uint64_t notifies = peers * (tiles.size() + 1) + peers;
    const std::uint64_t waits = peers * (tiles.size() + 1);
    rank_notifies += notifies;
    rank_waits += waits;
    if (c.core_num == 1) continue;
    ASSERT_EQ(result.blocks.size(), static_cast<std::size_t>(c.ranks * c.core_num));
    for (int r = 0; r < c.ranks; ++r) {
      const RankStats& s = result.blocks[static_cast<std::size_t>(r * c.core_num + b)];
      EXPECT_EQ(s.rank, r);
      EXPECT_EQ(s.block, b);
      EXPECT_EQ(s.notifies, notifies) << "rank " << r << " block " << b;
      EXPECT_EQ(s.waits, waits) << "rank " << r << " block " << b;
      EXPECT_EQ(s.remote_read_bytes, peers * bytes) << "rank " << r << " block " << b;
    }
  }
  for (const RankStats& s : result.ranks) {
    EXPECT_EQ(s.notifies, rank_notifies) << "rank " << s.rank;
    EXPECT_EQ(s.waits, rank_waits) << "rank " << s.rank;
    EXPECT_EQ(s.remote_read_bytes, peers * 4 * c.elements) << "rank " << s.rank;
  }
}

std::vector<CountCase> count_cases() {
  std::vector<CountCase> cases;
  for (int ranks : {2, 3, 4, 8}) {
    for (int core_num : {1, 2, 8}) {
      // One element, one tile and a bit, and 16 full tiles plus a short one.
      for (std::uint64_t elements : {1u, 257u, 4196u}) cases.push_back({ranks, core_num, elements});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(PxCoreNum, HostMeshCounts, ::testing::ValuesIn(count_cases()),
                         [](const ::testing::TestParamInfo<CountCase>& info) {
                           return "P" + std::to_string(info.param.ranks) + "_cores" +
                                  std::to_string(info.param.core_num) + "_N" +
                                  std::to_string(info.param.elements);
                         });

TEST(HostMesh, OneMiBOnFourDevicesWithEightCoresPrintsOk) {
  const test::ProcessResult p =
      test::run_binary({"-p", "a2a3-910b2", "-d", "0,1,2,3", "--kernel", "host_mesh", "--core-num",
                        "8", "--size", "1MiB"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("\nOK\n"), std::string::npos);
  EXPECT_NE(p.out.find("8 blocks per rank"), std::string::npos);
}

// The cluster presets' ranks are the same 910B2 dies, 48 vector cores each: the host mesh runs
// many blocks per rank across RoCE servers and across SuperPod nodes, golden-checked.
TEST(HostMesh, RunsManyBlocksPerRankOnTheClusterPresets) {
  const std::vector<std::vector<std::string>> platforms = {
      {"-p", "a2a3-cluster", "--cluster.servers", "2"},
      {"-p", "a3-superpod", "--superpod.nodes", "2"}};
  for (std::vector<std::string> args : platforms) {
    args.insert(args.end(),
                {"-d", "all", "--kernel", "host_mesh", "--core-num", "8", "--size", "256KiB"});
    const test::ProcessResult p = test::run_binary(args);
    EXPECT_EQ(p.exit_code, 0) << args[1] << ": " << p.err;
    EXPECT_NE(p.out.find("P = 16"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("8 blocks per rank"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("\nOK\n"), std::string::npos) << p.out;
  }
  const test::ProcessResult beyond =
      test::run_binary({"-p", "a3-superpod", "--superpod.nodes", "2", "-d", "all", "--kernel",
                        "host_mesh", "--core-num", "49"});
  EXPECT_EQ(beyond.exit_code, 2);
  EXPECT_NE(beyond.err.find("--core-num 49: must be 1..48 (vector.cores of a3-superpod)"),
            std::string::npos)
      << beyond.err;
}

TEST(HostMesh, RecordsJsonAndWaveformShowEveryBlockApart) {
  test::ScratchDir dir;
  const test::ProcessResult p =
      test::run_binary({"-p", "a2a3-910b2", "-d", "0,1", "--kernel", "host_mesh", "--core-num", "2",
                        "--size", "2KiB", "--json", dir / "run.json", "--vcd", dir / "run.vcd"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  // Per-block table and round rows labelled rank.block.
  EXPECT_NE(p.out.find("rank  block  remote_read_B"), std::string::npos);
  EXPECT_NE(p.out.find("\n 1.1      0  exchange"), std::string::npos) << p.out;
  const std::string json = test::read_file(dir / "run.json");
  EXPECT_NE(json.find("\"core_num\": 2"), std::string::npos);
  EXPECT_NE(json.find("\"blocks\": ["), std::string::npos);
  EXPECT_NE(json.find("\"block\": 1"), std::string::npos);
  // Each block's own buffer holds three accumulator tiles and one per peer, 1 KiB each; a rank
  // reports its largest block's, not the sum of buffers apart.
  const nlohmann::json run = nlohmann::json::parse(json);
  for (const char* owners : {"ranks", "blocks"}) {
    for (const auto& owner : run.at(owners))
      EXPECT_EQ(owner.at("ub_peak_bytes").get<std::uint64_t>(), 4u * 1024u) << owner.dump();
  }
  const std::string vcd = test::read_file(dir / "run.vcd");
  for (const char* scope : {"core0", "core1", "dma0", "dma1", "ub0", "ub1"}) {
    EXPECT_NE(vcd.find(std::string("$scope module ") + scope + " "), std::string::npos) << scope;
  }
}

struct Refusal {
  std::vector<std::string> args;
  std::string message;
};

TEST(HostMesh, RefusesWhatTheHostPathDoesNotTake) {
  const std::vector<Refusal> refusals = {
      {{"--kernel", "host_mesh", "--op", "max"},
       "host_mesh: op max is not supported (the host mesh reduces with Sum only)"},
      {{"--kernel", "host_mesh", "--dtype", "fp16"},
       "host_mesh: dtype fp16 is not supported (the host mesh takes FP32 only)"},
      {{"--kernel", "host_mesh", "--core-num", "49", "-p", "a2a3-910b2"},
       "--core-num 49: must be 1..48 (vector.cores of a2a3-910b2)"},
      {{"--kernel", "builtin", "--core-num", "2", "-p", "a2a3-910b2"},
       "--core-num 2: pld.tensor.allreduce is an InCore composite that runs on one vector core "
       "(core_num must be 1)"},
      {{"--kernel", "ring", "--core-num", "2", "-p", "a2a3-910b2"},
       "--core-num 2: kernel ring runs one block per rank; only host_mesh takes core_num"},
      {{"--kernel", "host_mesh", "--codegen", "after", "-p", "a2a3-910b2"},
       "--codegen after: host_mesh is the runtime's own kernel, not compiled code: no codegen "
       "profile applies"},
  };
  for (const Refusal& r : refusals) {
    const test::ProcessResult p = test::run_binary(r.args);
    EXPECT_EQ(p.exit_code, 2) << r.message;
    EXPECT_NE(p.err.find(r.message), std::string::npos) << p.err;
  }
}

// The same on a2a3-910b2, two ranks, 4 KiB.
std::string device_time_910b2(std::vector<std::string> args) {
  args.insert(args.end(), {"-p", "a2a3-910b2", "-d", "0,1", "--size", "4KiB"});
  return test::device_time(args);
}

// The HOST builtins run the runtime's own TNOTIFY and TWAIT: no pipe barrier before a notify
// and no whole-cache invalidate after a wait, so making both cost a millisecond leaves their
// time as it was (the flush and the dsb are still charged), while the compiled builtin mesh,
// with a barrier per notify, slows by at least one millisecond per notify.
TEST(HostKernels, RunTheRuntimesOwnSynchronisation) {
  const std::vector<std::string> costly = {"--sync.pipe_barrier_cycles", "1800000",
                                           "--sync.cache_invalidate_cycles", "1800000"};
  for (const char* kernel : {"host_mesh", "host_ring"}) {
    std::vector<std::string> slow = {"--kernel", kernel};
    slow.insert(slow.end(), costly.begin(), costly.end());
    EXPECT_EQ(device_time_910b2({"--kernel", kernel}), device_time_910b2(slow)) << kernel;
    EXPECT_NE(device_time_910b2({"--kernel", kernel, "--sync.cache_flush_cycles", "1800000"}),
              device_time_910b2({"--kernel", kernel}))
        << kernel;
  }
  std::vector<std::string> slow = {"--kernel", "builtin"};
  slow.insert(slow.end(), costly.begin(), costly.end());
  EXPECT_NE(device_time_910b2({"--kernel", "builtin"}), device_time_910b2(slow));
}

// The step-04 barrier at P = 3 on a2a3 (no other sync costs): each rank notifies its two peers
// back to back. The pipe barrier before the first costs 1 us (1800 cycles at 1.8 GHz); the
// second follows TNOTIFY's own closing pipe barrier and finds the pipes idle, so the run takes
// exactly 1 us longer (5902.222 -> 6902.222 ns), not 2.
TEST(Codegen, APipeBarrierRightAfterANotifyCostsNothing) {
  const std::vector<std::string> run = {"-p", "a2a3", "-d", "0-2", "--kernel", "barrier"};
  std::vector<std::string> barrier = run;
  barrier.insert(barrier.end(), {"--sync.pipe_barrier_cycles", "1800"});
  EXPECT_EQ(test::device_time(run), "device time: 5902.222 ns");
  EXPECT_EQ(test::device_time(barrier), "device time: 6902.222 ns");
}

// The builtin mesh at P = 4 with three 16 KiB chunks under the two codegen profiles: `after`
// drops the pipe barrier before every notify and keeps one invalidate per wait-all loop (the
// ready barrier and one per chunk: 4) instead of one per wait; every other line is the same.
TEST(Codegen, ProfilesChangeExactlyTheInstructionsTheyName) {
  test::ScratchDir dir;
  std::vector<std::vector<std::string>> kept(2);
  std::vector<std::vector<std::string>> lines(2);
  const std::vector<std::string> profiles = {"before", "after"};
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string dump = dir / (profiles[i] + ".schedule");
    const test::ProcessResult p = test::run_binary(
        {"-p", "a2a3-910b2", "--size", "48KiB", "--codegen", profiles[i], "--dump-schedule", dump});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    std::istringstream text(test::read_file(dump));
    for (std::string line; std::getline(text, line);) {
      lines[i].push_back(line);
      if (line.find(" op=pipe_barrier") == std::string::npos &&
          line.find(" op=invalidate") == std::string::npos)
        kept[i].push_back(line);
    }
  }
  EXPECT_EQ(kept[0], kept[1]);
  auto count = [](const std::vector<std::string>& in, const std::string& word, int rank) {
    const std::string prefix = "rank=" + std::to_string(rank) + " op=" + word;
    return std::count_if(in.begin(), in.end(),
                         [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
  };
  for (int rank = 0; rank < 4; ++rank) {
    // Per rank: notifies (P-1)(C+1) + (P-1) = 15, waits (P-1)(C+1) = 12, wait loops C+1 = 4.
    EXPECT_EQ(count(lines[0], "notify", rank), 15);
    EXPECT_EQ(count(lines[0], "pipe_barrier", rank), 15);
    EXPECT_EQ(count(lines[1], "pipe_barrier", rank), 0);
    EXPECT_EQ(count(lines[0], "invalidate", rank), 12);
    EXPECT_EQ(count(lines[1], "invalidate", rank), 4);
    EXPECT_EQ(count(lines[0], "flush", rank), 15);
    EXPECT_EQ(count(lines[1], "dsb", rank), 15);
  }
}

}  // namespace
}  // namespace ars
