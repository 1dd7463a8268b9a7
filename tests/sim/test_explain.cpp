// Explaining a run: the critical path through the ranks and its parts, what bounds each
// transfer, the notes on overridden keys, and the Perfetto timeline (--trace).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/registry.h"
#include "sim/outputs/critical_path.h"
#include "sim/run.h"
#include "tests/run_process.h"

namespace ars {
namespace {

using test::ProcessResult;
using test::ScratchDir;

// 1 GHz, so that a cycle is a nanosecond; every cost below is set explicitly.
PlatformConfig one_ghz_platform() {
  PlatformConfig config;
  config.clock_GHz = 1;
  config.link_latency_ns = 1500;
  config.gm_read_latency_cycles = 100;
  config.gm_write_latency_cycles = 300;
  config.vector_startup_cycles = 6;
  config.vector_bytes_per_cycle = 128;
  return config;
}

RunRequest two_ranks(const KernelSpec& kernel, const PlatformConfig& platform) {
  RunRequest request;
  request.platform = platform;
  request.devices = {0, 1};
  request.kernel = kernel.name;
  request.kernel_spec = &kernel;
  request.problem.elements = 1024;
  request.timing_only = true;
  return request;
}

// The path's steps, each checked for kind, rank, round, part (transfers) and times.
void expect_steps(const CriticalPath& path, const std::vector<PathStep>& expected) {
  ASSERT_EQ(path.steps.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const PathStep& got = path.steps[i];
    EXPECT_EQ(got.kind, expected[i].kind) << "step " << i;
    EXPECT_EQ(got.rank, expected[i].rank) << "step " << i;
    EXPECT_EQ(got.round, expected[i].round) << "step " << i;
    if (got.kind == PathStep::Kind::Transfer) {
      EXPECT_EQ(got.part, expected[i].part) << "step " << i;
    }
    EXPECT_EQ(got.start_ps, expected[i].start_ps) << "step " << i;
    EXPECT_EQ(got.end_ps, expected[i].end_ps) << "step " << i;
  }
}

// A stretch of rank 1's round-0 transfer, as the two-pull tests below expect it.
PathStep transfer(PathStep::Part part, std::uint64_t start, std::uint64_t end) {
  return PathStep{PathStep::Kind::Transfer, 1, 0, start, end, -1, -1, -1, part};
}

// --- a rank that launches late ---

Layout handshake_layout(const Problem& p) {
  return {{}, {{"signal", p.ranks, 1}}};
}

// Each rank tells the other it is here, waits for the other, then reduces one tile.
void handshake_body(Rank& r) {
  const int peer = 1 - r.rank();
  const Signal signal = r.signal("signal");
  const Tile acc = r.alloc(1024, DType::FP32);
  const Tile other = r.alloc(1024, DType::FP32);
  r.begin_round("handshake");
  r.notify(signal, peer, r.rank(), 0, 1, NotifyOp::Set);
  r.wait(signal, peer, 0, 1, WaitCmp::Eq);
  r.begin_round("reduce");
  r.reduce(acc, other, 1024);
}

const KernelSpec kHandshake{"handshake", "notify, wait, reduce", false, handshake_layout,
                            handshake_body};

// In ns (1 GHz): set-up 100, notify 10 + 20 + 30 = 60, invalidate 5, poll period 1000, a
// notify flies 1500 (link) + 300 (GM write) = 1800, a reduce of 4 KiB costs 6 + 4096/128 = 38.
//   rank 0: starts at 0, set-up to 100, notify to 160 (lands on rank 1 at 1960), waits from 160.
//   rank 1: starts at 10000 (launch.offset_cycles x 1), set-up to 10100, notify to 10160 (lands
//           on rank 0 at 11960); its cell is set already, so look 0 answers at 11160, + 5, then
//           the reduce: finish 11203.
//   rank 0: the look that sees 11960's write is k = ceil((11960 - 160) / 1000) = 12, at 12160;
//           it answers at 13160, + 5 = 13165, reduce to 13203 = the device time.
// Path: launch offset 10000 + set-up 100 + notify 60 (rank 1) + waiting for rank 1 from its
// notify's issue to the look that saw it, 12160 - 10160 = 2000 + wait 13165 - 12160 = 1005 +
// reduce 38 (rank 0) = 13203.
TEST(CriticalPath, LateRankOnePathGoesThroughItsNotify) {
  PlatformConfig platform = one_ghz_platform();
  platform.launch_offset_cycles = 10000;
  platform.launch_setup_cycles = 100;
  platform.pipe_barrier_cycles = 10;
  platform.cache_flush_cycles = 20;
  platform.notify_cycles = 30;
  platform.cache_invalidate_cycles = 5;
  platform.poll_period_cycles = 1000;
  const RunResult result = run_allreduce(two_ranks(kHandshake, platform));
  ASSERT_TRUE(result.completed);
  EXPECT_EQ(result.device_time_ps, 13203000u);

  const CriticalPath path = critical_path(result);
  EXPECT_EQ(path.end_rank, 0);
  using K = PathStep::Kind;
  expect_steps(path, {{K::LaunchOffset, 1, -1, 0, 10000000},
                      {K::Setup, 1, -1, 10000000, 10100000},
                      {K::Notify, 1, 0, 10100000, 10160000},
                      {K::PeerWait, 0, 0, 10160000, 12160000},
                      {K::Wait, 0, 0, 12160000, 13165000},
                      {K::Reduce, 0, 1, 13165000, 13203000}});
  EXPECT_EQ(path.steps[3].peer, 1);
  EXPECT_EQ(path.steps[3].peer_round, 0);  // rank 1's "handshake"
}

// --- contention on one link ---

Layout window_layout(const Problem& p) {
  return {{{"data", p.elements}}, {{"signal", p.ranks, 1}}};
}

// Rank 1 pulls both halves of rank 0's window at once (two DMA queues, one link), then tells
// rank 0, which waits for it.
void contended_body(Rank& r) {
  const Signal signal = r.signal("signal");
  r.begin_round("pull");
  if (r.rank() == 1) {
    const Tensor data = r.window("data");
    const Tile first = r.alloc(512, DType::FP32);
    const Tile second = r.alloc(512, DType::FP32);
    const Transfer a = r.remote_load_async(first, data, 0, 0, 512);
    const Transfer b = r.remote_load_async(second, data, 0, 512, 512);
    r.sync(a);
    r.sync(b);
    r.notify(signal, 0, 1, 0, 1, NotifyOp::Set);
  } else {
    r.wait(signal, 1, 0, 1, WaitCmp::Eq);
  }
}

const KernelSpec kContended{"contended", "two pulls on one link", false, window_layout,
                            contended_body};

// In ns: each pull is 512 FP32 = 2 KiB, four 512 B bursts. The queues stream 16 B/ns (a burst
// every 32 ns), the link 8 B/ns (64 ns a burst). Both pulls start at 0 and their bursts
// alternate on dev0.link_to_1, queue 0's pull A first: A's burst k holds the link over
// [128k, 128k + 64], B's over [128k + 64, 128k + 128], so A's last leaves it at 448, B's at 512.
// Each lands a path latency later: the request's flight 1500, the data's 1500, the GM read
// 100: 3100. A is done at 3548, B at 3612. A streams at its queue's rate until 4 x 32 = 128;
// the link then holds it until 448 (320) because B's bursts share it: "queued behind another
// flow". Rank 1 syncs A, then B, then notifies (free) at 3612. B's landing is what rank 1
// waited for last, so the path follows B back to its start: streaming 128, held by the link
// until 512 (384), latency 3100; A ran beside it, off the path. The notify lands at
// 3612 + 1500 + 300 = 5412, when rank 0 (poll period 0) sees it: waiting for rank 1 1800.
TEST(CriticalPath, ContendedLinkHoldsThePathAndIsNamed) {
  PlatformConfig platform = one_ghz_platform();
  platform.dma_queues = 2;
  platform.dma_remote_bytes_per_cycle = 16;
  platform.link_bandwidth_GBps = 8;
  platform.poll_period_cycles = 0;
  const RunResult result = run_allreduce(two_ranks(kContended, platform));
  ASSERT_TRUE(result.completed);
  EXPECT_EQ(result.device_time_ps, 5412000u);

  const CriticalPath path = critical_path(result);
  using K = PathStep::Kind;
  using Part = PathStep::Part;
  expect_steps(path, {transfer(Part::Streaming, 0, 128000),
                      transfer(Part::Held, 128000, 512000),
                      transfer(Part::Latency, 512000, 3612000),
                      {K::PeerWait, 0, 0, 3612000, 5412000}});
  const auto& pulls = result.ranks[1].transfer_records;
  ASSERT_EQ(pulls.size(), 2u);
  for (const TransferRecord& pull : pulls) {
    EXPECT_EQ(describe_limit(result, pull),
              "queued behind another flow on dev0.link_to_1 (link.bandwidth_GBps)");
  }
  EXPECT_EQ(pulls[0].held_ps, 320000u);
  EXPECT_EQ(pulls[1].held_ps, 384000u);
}

// The same two pulls on one DMA queue and a link fast enough to hold nothing: A streams over
// [0, 128] and lands at 128 + 3100 = 3228; B waits for the queue until 128, streams until 256
// and lands at 3356. The latencies overlap, so the path pays one: A's streaming, which B waited
// for, B's streaming and B's latency, not A's latency with B's last 128 ns of latency after it.
TEST(CriticalPath, PullsQueuedBackToBackPayOneLatency) {
  PlatformConfig platform = one_ghz_platform();
  platform.dma_queues = 1;
  platform.dma_remote_bytes_per_cycle = 16;
  platform.link_bandwidth_GBps = 64;
  platform.poll_period_cycles = 0;
  const RunResult result = run_allreduce(two_ranks(kContended, platform));
  ASSERT_TRUE(result.completed);
  EXPECT_EQ(result.device_time_ps, 5156000u);

  using K = PathStep::Kind;
  using Part = PathStep::Part;
  const CriticalPath path = critical_path(result);
  expect_steps(path, {transfer(Part::Streaming, 0, 128000),
                      transfer(Part::Streaming, 128000, 256000),
                      transfer(Part::Latency, 256000, 3356000),
                      {K::PeerWait, 0, 0, 3356000, 5156000}});
  EXPECT_EQ(path.steps[0].ref, 0);  // A's streaming, which B waited for
  EXPECT_EQ(path.steps[1].ref, 1);
  EXPECT_EQ(path.steps[2].ref, 1);
}

// --- every kernel, through the binary ---

nlohmann::json run_json(const std::vector<std::string>& args, const ScratchDir& dir,
                        std::string* out = nullptr) {
  std::vector<std::string> all = args;
  all.insert(all.end(), {"--json", dir / "run.json"});
  const ProcessResult run = test::run_binary(all);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  if (out != nullptr) *out = run.out;
  return nlohmann::json::parse(test::read_file(dir / "run.json"));
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const KernelSpec& k : kernel_registry()) names.push_back(k.name);
  return names;
}

class EveryKernel : public ::testing::TestWithParam<std::string> {};

// On the calibrated profile (launch offsets, set-up, sync costs, acknowledged notifies) the
// parts of the path add up to the device time to the picosecond, and the steps tile it.
TEST_P(EveryKernel, PathPartsSumToTheDeviceTime) {
  const std::string kernel = GetParam();
  ScratchDir dir;
  std::vector<std::string> args = {"-p",       "a2a3-910b2", "-d",     "0,1,2,3",
                                   "--kernel", kernel,       "--size", "64KiB"};
  if (kernel == "builtin_ring") args.insert(args.end(), {"--mode", "ring"});
  const nlohmann::json j = run_json(args, dir);
  const auto& cp = j.at("critical_path");
  const std::uint64_t device_ps = cp.at("device_time_ps");
  EXPECT_EQ(device_ps,
            static_cast<std::uint64_t>(j.at("device_time_ns").get<double>() * 1000 + 0.5));
  std::uint64_t sum = 0;
  for (const auto& part : cp.at("parts")) sum += part.at("ps").get<std::uint64_t>();
  EXPECT_EQ(sum, device_ps);
  EXPECT_EQ(cp.at("parts").back().at("part"), "unattributed");
  EXPECT_EQ(cp.at("parts").back().at("ps"), 0);
  // So does the path by the phase of its steps' rounds, each phase named once.
  std::uint64_t by_phase = 0;
  std::set<std::string> phases;
  for (const auto& phase : cp.at("phases")) {
    by_phase += phase.at("ps").get<std::uint64_t>();
    EXPECT_TRUE(phases.insert(phase.at("phase")).second) << phase;
  }
  EXPECT_EQ(by_phase, device_ps);
  std::uint64_t at = cp.at("steps").front().at("start_ps");
  for (const auto& step : cp.at("steps")) {
    EXPECT_EQ(step.at("start_ps").get<std::uint64_t>(), at);
    at = step.at("end_ps");
  }
  EXPECT_EQ(at - cp.at("steps").front().at("start_ps").get<std::uint64_t>(), device_ps);
  const double p = 4;
  EXPECT_DOUBLE_EQ(j.at("algbw_GBps").get<double>(),
                   65536.0 * 1000.0 / static_cast<double>(device_ps));
  EXPECT_DOUBLE_EQ(j.at("busbw_GBps").get<double>(),
                   j.at("algbw_GBps").get<double>() * 2 * (p - 1) / p);
}

// With --repeat the device time spans every call and the bandwidths are per call, as
// nccl-tests reports them: three calls of 64 KiB in the device time of all three.
TEST(Bandwidth, RepeatedCallsCountEveryCall) {
  ScratchDir dir;
  std::string out;
  const nlohmann::json j = run_json(
      {"-p", "a2a3", "-d", "0,1,2,3", "--kernel", "builtin", "--size", "64KiB", "--repeat", "3"},
      dir, &out);
  EXPECT_EQ(j.at("repeat"), 3);
  const double device_ps = j.at("device_time_ns").get<double>() * 1000;
  EXPECT_NEAR(j.at("algbw_GBps").get<double>(), 3 * 65536.0 * 1000.0 / device_ps, 1e-9);
  EXPECT_NE(out.find("per rank, op sum, 3 calls\n"), std::string::npos) << out;
  EXPECT_NE(out.find("(bytes per rank / (device time / 3 calls); "), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryKernel, ::testing::ValuesIn(kernel_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// --- keys the user overrode ---

const std::vector<std::string> kMesh8 = {"-p",       "a2a3", "-d",     "0,1,2,3,4,5,6,7",
                                         "--kernel", "mesh", "--size", "256KiB"};

std::vector<std::string> with(std::vector<std::string> args, const std::string& key,
                              const std::string& value) {
  args.insert(args.end(), {key, value});
  return args;
}

// The default run's path by phase, from its round table: rank 0's stage-in transfer 951.111,
// the ready barrier 4800, the exchange's barrier 4800, transfer 12311.874 and reduce 13.332
// (17125.206), the stage-out 951.111; 23827.428 in all.
TEST(PathPhases, DefaultRunSplitsAsItsRoundTable) {
  const ProcessResult run = test::run_binary({});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("  by the phase of its rounds:\n"
                         "    stage-in                    951.111 ns    3.99 %\n"
                         "    ready                      4800.000 ns   20.14 %\n"
                         "    exchange                  17125.206 ns   71.87 %\n"
                         "    stage-out                   951.111 ns    3.99 %\n"),
            std::string::npos)
      << run.out;
}

TEST(KeyNotes, LinkBandwidthIsNotLimitingTheMesh) {
  ScratchDir dir;
  std::string base_out;
  std::string out;
  const nlohmann::json base = run_json(kMesh8, dir, &base_out);
  const nlohmann::json doubled = run_json(with(kMesh8, "--link.bandwidth_GBps", "56"), dir, &out);
  EXPECT_EQ(base_out.find("overridden keys"), std::string::npos);
  EXPECT_NE(out.find("link.bandwidth_GBps is not limiting: every remote transfer on the critical "
                     "path is bound by dma.remote_bytes_per_cycle on the DMA queue"),
            std::string::npos)
      << out;
  ASSERT_EQ(doubled.at("key_notes").size(), 1u);
  // The link (28 GB/s) is a hair slower than the queue (15.56 B/cycle x 1.8 GHz = 28.008 GB/s):
  // what doubling it saves is exactly the time the links held the path's pulls.
  const double saved =
      base.at("device_time_ns").get<double>() - doubled.at("device_time_ns").get<double>();
  EXPECT_GT(saved, 0);
  EXPECT_LT(saved / base.at("device_time_ns").get<double>(), 1e-4);
}

// Every platform key given on the command line gets one note: each of a2a3-cluster's keys,
// given its own value, and keys of another topology, which it says it does not use.
TEST(KeyNotes, EveryKeyGivenGetsOneNote) {
  ScratchDir dir;
  const ProcessResult config = test::run_binary({"-p", "a2a3-cluster", "--print-config"});
  ASSERT_EQ(config.exit_code, 0) << config.err;
  std::vector<std::string> args = {"-p",     "a2a3-cluster", "--cluster.servers", "2",
                                   "-d",     "all",          "--kernel",          "ring",
                                   "--size", "64KiB"};
  std::istringstream lines(config.out);
  std::string line, section;
  std::set<std::string> keys = {"superpod.nodes", "superpod.tier1_latency_ns"};
  args.insert(args.end(), {"--superpod.nodes", "2", "--superpod.tier1_latency_ns", "100"});
  while (std::getline(lines, line)) {
    if (line.rfind("[", 0) == 0) section = line.substr(1, line.find(']') - 1);
    const std::size_t equals = line.find(" = ");
    if (line.empty() || line[0] == '#' || equals == std::string::npos) continue;
    const std::string key = section + "." + line.substr(0, equals);
    if (key == "cluster.servers") continue;  // given above
    std::istringstream value(line.substr(equals + 3));
    std::string word;
    value >> word;
    keys.insert(key);
    args.insert(args.end(), {"--" + key, word});
  }
  keys.insert("cluster.servers");
  ASSERT_GT(keys.size(), 40u) << config.out;
  const nlohmann::json j = run_json(args, dir);
  std::map<std::string, int> notes;
  for (const auto& note : j.at("key_notes")) {
    const std::string text = note;
    ++notes[text.substr(0, text.find(' '))];
  }
  for (const std::string& key : keys) EXPECT_EQ(notes[key], 1) << key;
  EXPECT_EQ(notes.size(), keys.size());
  const auto note_of = [&j](const std::string& key) {
    for (const auto& note : j.at("key_notes"))
      if (note.get<std::string>().rfind(key + " ", 0) == 0) return note.get<std::string>();
    return std::string();
  };
  EXPECT_EQ(note_of("superpod.nodes"),
            "superpod.nodes is not used by cluster: no path of this topology crosses what it sets");
  EXPECT_EQ(note_of("vector.mul_startup_cycles"),
            "vector.mul_startup_cycles is not used by op sum: only prod's reduces multiply");
}

TEST(KeyNotes, QueueRateIsLimitingTheMesh) {
  ScratchDir dir;
  std::string out;
  const nlohmann::json base = run_json(kMesh8, dir);
  const nlohmann::json slower =
      run_json(with(kMesh8, "--dma.remote_bytes_per_cycle", "4"), dir, &out);
  EXPECT_GT(slower.at("device_time_ns").get<double>(), base.at("device_time_ns").get<double>());
  EXPECT_NE(out.find("dma.remote_bytes_per_cycle is limiting: the critical path streams at or is "
                     "held by it for "),
            std::string::npos)
      << out;
  const auto& limits = slower.at("transfer_limits");
  const auto exchange = std::find_if(limits.begin(), limits.end(),
                                     [](const auto& r) { return r.at("phase") == "exchange"; });
  ASSERT_NE(exchange, limits.end());
  // 7 pulls per tile and rank, all bound by the queue; none by a link.
  EXPECT_EQ(
      exchange->at("bound_by").at("dma.remote_bytes_per_cycle (DMA queue rate)").get<int>() % 56,
      0);
  for (const auto& [limit, count] : exchange->at("bound_by").items()) {
    EXPECT_EQ(limit.find("link"), std::string::npos) << limit << " x" << count;
  }
}

// The report's table of what bounds the transfers: a ring's reduce-scatter rounds are alike, as
// are its all-gather rounds, so each shares a row; the JSON keeps every round.
// Ranks that number their rounds alike may be in different phases at once: rhd at P = 3
// folds rank 2 into rank 0 in round 1 while rank 1 starts its reduce-scatter, and hands the
// result back in round 2. Each (round, phase) gets its row, and each is some rank's.
TEST(RoundLimits, RanksInDifferentPhasesOfOneRoundGetARowEach) {
  ScratchDir dir;
  const nlohmann::json j =
      run_json({"-p", "a2a3", "-d", "0,1,2", "--kernel", "rhd", "--size", "64KiB"}, dir);
  std::set<std::pair<int, std::string>> of_ranks;
  for (const auto& round : j.at("rounds"))
    of_ranks.emplace(round.at("round").get<int>(), round.at("phase").get<std::string>());
  std::set<std::string> first_round;
  std::set<std::pair<int, std::string>> rows;
  for (const auto& limits : j.at("transfer_limits")) {
    const std::pair<int, std::string> row{limits.at("round").get<int>(),
                                          limits.at("phase").get<std::string>()};
    EXPECT_TRUE(rows.insert(row).second) << limits;
    EXPECT_TRUE(of_ranks.count(row)) << limits;
    if (row.first == 1) first_round.insert(row.second);
  }
  EXPECT_EQ(first_round, (std::set<std::string>{"RS", "fold"}));
}

TEST(RoundLimits, AlikeConsecutiveRoundsShareARow) {
  ScratchDir dir;
  std::string out;
  const nlohmann::json j =
      run_json({"-p", "a2a3", "-d", "0,1,2,3", "--kernel", "ring", "--size", "64KiB"}, dir, &out);
  const std::size_t table = out.find("what bounds the transfers");
  ASSERT_NE(table, std::string::npos) << out;
  std::vector<std::string> rows;
  for (std::size_t at = out.find('\n', table) + 1; at < out.size() && out[at] != '\n';) {
    const std::size_t end = out.find('\n', at);
    rows.push_back(out.substr(at, end - at));
    at = end + 1;
  }
  // Per round: stage-in loads and stores 4 chunks a rank; an RS round pulls, loads and stores
  // one chunk a rank, an AG round pulls and stores it; stage-out as stage-in.
  const std::string queue = " (DMA queue rate) x";
  const std::vector<std::string> expected = {
      "round  phase         transfers  bound by",
      "    0  stage-in             32  dma.mte2_bytes_per_cycle" + queue +
          "16, dma.mte3_bytes_per_cycle" + queue + "16",
      "  1-3  RS                   12  dma.mte2_bytes_per_cycle" + queue +
          "4, dma.mte3_bytes_per_cycle" + queue + "4, dma.remote_bytes_per_cycle" + queue + "4",
      "  4-6  AG                    8  dma.mte3_bytes_per_cycle" + queue +
          "4, dma.remote_bytes_per_cycle" + queue + "4",
      "    7  stage-out            32  dma.mte2_bytes_per_cycle" + queue +
          "16, dma.mte3_bytes_per_cycle" + queue + "16"};
  EXPECT_EQ(rows, expected) << out;
  const auto& limits = j.at("transfer_limits");
  ASSERT_EQ(limits.size(), 8u);
  for (int round = 0; round < 8; ++round) EXPECT_EQ(limits[round].at("round"), round);
  EXPECT_EQ(limits[2].at("transfers"), 12);
  EXPECT_EQ(limits[5].at("phase"), "AG");
}

// Picoseconds from the report's "123.456 ns".
std::uint64_t report_ps(const std::string& ns) {
  const std::size_t dot = ns.find('.');
  return std::stoull(ns.substr(0, dot)) * 1000 + std::stoull(ns.substr(dot + 1));
}

// Waiting for peers on the path of a 16-rank ring across two servers: the report shows the 8
// longest (rank, round) waits, in rank order, and sums the rest into one line; the JSON keeps all.
TEST(PeerWaits, TheLongestAreShownAndTheRestSummed) {
  ScratchDir dir;
  std::string out;
  const nlohmann::json j = run_json({"-p", "a2a3-cluster", "--cluster.servers", "2", "-d", "all",
                                     "--kernel", "ring", "--size", "64KiB", "--timing-only"},
                                    dir, &out);
  using Wait = std::tuple<int, int, std::uint64_t>;  // peer, its round, ps
  std::vector<Wait> all;
  for (const auto& w : j.at("critical_path").at("waiting_for"))
    all.emplace_back(w.at("peer"), w.at("round"), w.at("ps"));
  ASSERT_GT(all.size(), 8u);
  std::vector<Wait> longest = all;
  std::stable_sort(longest.begin(), longest.end(),
                   [](const Wait& a, const Wait& b) { return std::get<2>(a) > std::get<2>(b); });
  longest.resize(8);
  std::sort(longest.begin(), longest.end());
  std::uint64_t rest_ps = 0;
  std::set<int> rest_ranks;
  for (const Wait& w : all) {
    if (std::find(longest.begin(), longest.end(), w) != longest.end()) continue;
    rest_ps += std::get<2>(w);
    rest_ranks.insert(std::get<0>(w));
  }
  std::vector<Wait> shown;
  std::string rest_line;
  std::size_t at = out.find("  waiting for a peer");
  ASSERT_NE(at, std::string::npos) << out;
  for (at = out.find('\n', at) + 1; out.compare(at, 4, "    ") == 0;) {
    const std::size_t end = out.find('\n', at);
    const std::string row = out.substr(at, end - at);
    std::istringstream in(row);
    std::string ns, unit, word;
    in >> ns >> unit >> word;
    if (row.find(" more rounds of ") != std::string::npos) {
      EXPECT_EQ(report_ps(ns), rest_ps) << row;
      rest_line = row;
    } else {
      int peer = 0, round = 0;
      std::string rank_word, its, round_word;
      in >> rank_word >> peer >> its >> round_word >> round;
      shown.emplace_back(peer, round, report_ps(ns));
    }
    at = end + 1;
  }
  EXPECT_EQ(shown, longest) << out;
  EXPECT_NE(rest_line.find("for " + std::to_string(all.size() - 8) + " more rounds of " +
                           std::to_string(rest_ranks.size()) + " ranks"),
            std::string::npos)
      << rest_line;
}

// The step-by-step list's lines (from the heading to the blank line after it): an item's
// line starts with "  <start> - <end>  ", its transfers follow indented by six.
struct ListedItem {
  std::uint64_t start_ps;
  std::uint64_t end_ps;
  std::string text;  // the line after the span, then the transfers' lines
};

std::vector<ListedItem> listed_steps(const std::string& out) {
  std::vector<ListedItem> items;
  std::size_t at = out.find("critical path, step by step");
  EXPECT_NE(at, std::string::npos) << out;
  for (at = out.find('\n', at) + 1; at < out.size() && out[at] != '\n';) {
    const std::size_t end = out.find('\n', at);
    const std::string line = out.substr(at, end - at);
    if (line.compare(0, 6, "      ") == 0) {
      items.back().text += "\n" + line.substr(6);
    } else {
      std::istringstream in(line);
      std::string start, dash, finish;
      in >> start >> dash >> finish;
      items.push_back({report_ps(start), report_ps(finish),
                       line.substr(line.find(finish) + finish.size() + 2)});
    }
    at = end + 1;
  }
  return items;
}

// Every number that follows "rank ", "block ", "round " or "dev" as '#': what "alike but for
// ranks, rounds and devices" leaves to compare.
std::string masked_numbers(const std::string& text) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[at]))) {
      out += text[at++];
      continue;
    }
    std::size_t end = at;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    bool numbered = false;
    for (const std::string word : {"rank ", "block ", "round ", "dev"}) {
      numbered = numbered || (out.size() >= word.size() &&
                              out.compare(out.size() - word.size(), word.size(), word) == 0);
    }
    out += numbered ? std::string("#") : text.substr(at, end - at);
    at = end;
  }
  return out;
}

// "252 more times the 2 steps above, alike but for ranks, rounds and devices, 7993.237 ns
// each, through rank 0's notify to rank 1 round 255 (RS)", read back; false for another line.
struct RepeatLine {
  std::size_t times = 0;
  std::size_t period = 0;
  std::uint64_t each_ps = 0;
  std::string through;
};
bool read_repeat(const std::string& text, RepeatLine& line) {
  const std::string middle = " above, alike but for ranks, rounds and devices, ";
  const std::size_t more = text.find(" more times the ");
  const std::size_t above = text.find(middle);
  const std::size_t each = text.find(" ns each, through ");
  if (more == std::string::npos || above == std::string::npos || each == std::string::npos)
    return false;
  std::istringstream head(text.substr(0, above));
  std::string more_word, times_word, the_word;
  head >> line.times >> more_word >> times_word >> the_word >> line.period;
  line.each_ps = report_ps(text.substr(above + middle.size(), each - above - middle.size()));
  line.through = text.substr(each + std::string(" ns each, through ").size());
  return true;
}

// Past --ranks-shown ranks, --explain puts steps that repeat alike on one line. Expanded
// against the full list (--ranks-shown all), every such line stands for exactly the steps it
// says: as many, as long, alike to the steps above it, ending where it says; every other line
// is the full list's own.
TEST(PathSteps, RepeatsShareALineThatStandsForEachStep) {
  const std::vector<std::string> ring = {"-p",     "ring8", "--platform.devices", "16",
                                         "-d",     "all",   "--kernel",           "ring",
                                         "--size", "64KiB", "--timing-only",      "--explain"};
  const ProcessResult folded = test::run_binary(ring);
  std::vector<std::string> all_args = ring;
  all_args.insert(all_args.end(), {"--ranks-shown", "all"});
  const ProcessResult whole = test::run_binary(all_args);
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const std::vector<ListedItem> shown = listed_steps(folded.out);
  const std::vector<ListedItem> full = listed_steps(whole.out);
  // On the path: stage-in, then 2(P-1) = 30 rounds, each reached by a hand-off from the rank
  // before, then stage-out: 62 items in full.
  ASSERT_EQ(full.size(), 62u) << whole.out;
  std::size_t next = 0;  // in `full`
  int repeats = 0;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    RepeatLine repeat;
    if (!read_repeat(shown[i].text, repeat)) {
      ASSERT_LT(next, full.size());
      EXPECT_EQ(shown[i].start_ps, full[next].start_ps) << shown[i].text;
      EXPECT_EQ(shown[i].end_ps, full[next].end_ps) << shown[i].text;
      EXPECT_EQ(shown[i].text, full[next].text);
      ++next;
      continue;
    }
    ++repeats;
    const std::size_t times = repeat.times;
    const std::size_t period = repeat.period;
    ASSERT_GE(i, period);
    ASSERT_LE(next + times * period, full.size());
    EXPECT_GE(times, 2u);
    EXPECT_EQ(shown[i].start_ps, full[next].start_ps);
    EXPECT_EQ(shown[i].end_ps, full[next + times * period - 1].end_ps);
    for (std::size_t t = 0; t < times; ++t) {
      const std::size_t from = next + t * period;
      EXPECT_EQ(full[from + period - 1].end_ps - full[from].start_ps, repeat.each_ps)
          << "repeat " << t;
      for (std::size_t k = 0; k < period; ++k) {
        const ListedItem& model = shown[i - period + k];
        EXPECT_EQ(full[from + k].end_ps - full[from + k].start_ps, model.end_ps - model.start_ps);
        EXPECT_EQ(masked_numbers(full[from + k].text), masked_numbers(model.text));
        // Not the same step again: its rank or round differs.
        EXPECT_NE(full[from + k].text, model.text);
      }
    }
    // "through" names the last step covered, a hand-off: "waiting for a peer: rank 0's notify
    // (its round 254, RS) in flight until rank 1 saw it (round 255, RS)" is "rank 0's notify to
    // rank 1 round 255 (RS)".
    const std::string last = full[next + times * period - 1].text;
    const std::string prefix = "waiting for a peer: ";
    ASSERT_EQ(last.compare(0, prefix.size(), prefix), 0) << last;
    const std::string notifier = last.substr(prefix.size(), last.find("'s notify") - prefix.size());
    const std::size_t until =
        last.find(" in flight until ") + std::string(" in flight until ").size();
    const std::string waiter = last.substr(until, last.find(" saw it (") - until);
    const std::size_t seen = last.find(" saw it (") + std::string(" saw it (").size();
    const std::string round = last.substr(seen, last.find(", ", seen) - seen);
    const std::string phase =
        last.substr(last.find(", ", seen) + 2, last.size() - 1 - (last.find(", ", seen) + 2));
    EXPECT_EQ(repeat.through,
              notifier + "'s notify to " + waiter + " " + round + " (" + phase + ")");
    next += times * period;
  }
  EXPECT_EQ(next, full.size());
  // The reduce-scatter's and the all-gather's hand-offs: one repeat each.
  EXPECT_EQ(repeats, 2) << folded.out;
  EXPECT_LT(shown.size(), 20u) << folded.out;
}

// With no more ranks than --ranks-shown, the list is every step, as it always was.
TEST(PathSteps, FewRanksListEveryStep) {
  const std::vector<std::string> ring = {"-p",   "ring8",  "-d",    "all",           "--kernel",
                                         "ring", "--size", "64KiB", "--timing-only", "--explain"};
  const ProcessResult eight = test::run_binary(ring);
  std::vector<std::string> all_args = ring;
  all_args.insert(all_args.end(), {"--ranks-shown", "all"});
  const ProcessResult all = test::run_binary(all_args);
  ASSERT_EQ(eight.exit_code, 0) << eight.err;
  EXPECT_EQ(listed_steps(eight.out).size(), 2u + 2 * 14) << eight.out;  // as at P = 16
  EXPECT_EQ(eight.out.substr(eight.out.find("critical path, step by step")),
            all.out.substr(all.out.find("critical path, step by step")));
  EXPECT_EQ(eight.out.find("more times the"), std::string::npos);
}

// --- the timeline ---

// Checks the trace's structure the way Perfetto reads it; returns the devices (pids) shown.
std::set<int> check_trace(const nlohmann::json& trace, const std::uint64_t device_time_ps,
                          bool flows = true) {
  std::set<int> pids;
  EXPECT_EQ(trace.at("otherData").at("device_time_ps"), device_time_ps);
  // In integer ns: the trace's microseconds have three decimals.
  const auto ns = [](const nlohmann::json& us) { return std::llround(us.get<double>() * 1000); };
  std::map<std::tuple<int, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> slices;
  std::map<std::tuple<int, std::string>, double> counter_last;
  std::map<int, int> flow_out;
  std::map<int, int> flow_in;
  std::map<std::tuple<int, int>, std::string> thread_names;
  const std::set<std::string> core_names = {"set-up", "reduce", "wait for DMA", "notify", "wait"};
  for (const auto& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    const int pid = e.at("pid");
    if (pid != 100000) pids.insert(pid);
    if (ph == "M") {
      if (e.at("name") == "thread_name") thread_names[{pid, e.at("tid")}] = e.at("args").at("name");
      continue;
    }
    if (ph == "C") {
      const std::tuple<int, std::string> key{pid, e.at("name")};
      const double ts = e.at("ts");
      if (counter_last.count(key)) {
        EXPECT_GE(ts, counter_last[key]) << e;
      }
      counter_last[key] = ts;
      EXPECT_EQ(e.at("args").size(), 1u) << e;
      continue;
    }
    EXPECT_EQ(ph, "X") << e;
    const int tid = e.at("tid");
    const std::int64_t ts = ns(e.at("ts"));
    const std::int64_t dur = ns(e.at("dur"));
    EXPECT_GE(dur, 0) << e;
    const std::string name = e.at("name");
    const std::string cat = e.at("cat");
    if (cat == "transfer") {
      for (const char* arg : {"peer", "bytes", "bound_by", "round", "landed_us"})
        EXPECT_TRUE(e.at("args").contains(arg)) << e;
    }
    if (name == "wait") {
      for (const char* arg : {"cell", "expected", "seen"}) EXPECT_TRUE(e.at("args").contains(arg));
    }
    if (name == "notify") {
      for (const char* arg : {"peer", "cell", "value"}) EXPECT_TRUE(e.at("args").contains(arg));
    }
    if (tid == 1 && pid != 100000 && cat != "round") {
      EXPECT_TRUE(core_names.count(name)) << e;
    }
    if (e.contains("flow_out")) flow_out[e.at("bind_id")]++;
    if (e.contains("flow_in")) flow_in[e.at("bind_id")]++;
    slices[{pid, tid}].push_back({ts, ts + dur});
  }
  // Ordered per track, and nested: a slice that starts inside another ends inside it.
  for (const auto& [track, list] : slices) {
    EXPECT_TRUE(thread_names.count(track)) << "unnamed track " << std::get<0>(track);
    std::vector<std::int64_t> open;  // ends of the enclosing slices
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto [start, end] = list[i];
      if (i > 0) {
        EXPECT_GE(start, list[i - 1].first);
      }
      while (!open.empty() && open.back() <= start) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(end, open.back()) << "slice at " << start << " ns overlaps";
      }
      open.push_back(end);
    }
  }
  EXPECT_EQ(flow_out.empty(), !flows);
  EXPECT_EQ(flow_out.size(), flow_in.size());
  for (const auto& [id, count] : flow_out) {
    EXPECT_EQ(count, 1) << id;
    EXPECT_EQ(flow_in[id], 1) << id;
  }
  return pids;
}

TEST(Trace, ValidatesAndIsByteIdentical) {
  ScratchDir dir;
  const std::vector<std::string> args = {"-p",       "a2a3-910b2", "-d",     "0,1,2,3",
                                         "--kernel", "builtin",    "--size", "64KiB"};
  std::vector<std::string> first = args;
  first.insert(first.end(), {"--trace", dir / "a.json"});
  const nlohmann::json j = run_json(first, dir);
  std::vector<std::string> second = args;
  second.insert(second.end(), {"--trace", dir / "b.json"});
  run_json(second, dir);
  const std::string a = test::read_file(dir / "a.json");
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, test::read_file(dir / "b.json"));
  EXPECT_EQ(a.find("e+"), std::string::npos) << "no scientific notation";
  const std::set<int> pids =
      check_trace(nlohmann::json::parse(a), j.at("critical_path").at("device_time_ps"));
  EXPECT_EQ(pids, (std::set<int>{0, 1, 2, 3}));
}

TEST(Trace, DevicesLimitWhatIsShown) {
  ScratchDir dir;
  const nlohmann::json j = run_json({"-d", "0,1,2,3", "--kernel", "mesh", "--size", "16KiB",
                                     "--trace", dir / "t.json", "--trace-devices", "1,2"},
                                    dir);
  const nlohmann::json trace = nlohmann::json::parse(test::read_file(dir / "t.json"));
  EXPECT_EQ(check_trace(trace, j.at("critical_path").at("device_time_ps"), false),
            (std::set<int>{1, 2}));
}

// Both sinks at once see every change: each file is what it is when written alone.
TEST(Trace, WithVcdWritesTheSameBytesAsAlone) {
  ScratchDir dir;
  const std::vector<std::string> run = {"-d", "0-3", "--kernel", "ring", "--size", "16KiB"};
  const auto with_outputs = [&](std::vector<std::string> outputs) {
    std::vector<std::string> args = run;
    args.insert(args.end(), outputs.begin(), outputs.end());
    EXPECT_EQ(test::run_binary(args).exit_code, 0);
  };
  with_outputs({"--vcd", dir / "both.vcd", "--trace", dir / "both.json"});
  with_outputs({"--vcd", dir / "alone.vcd"});
  with_outputs({"--trace", dir / "alone.json"});
  EXPECT_EQ(test::read_file(dir / "both.vcd"), test::read_file(dir / "alone.vcd"));
  EXPECT_EQ(test::read_file(dir / "both.json"), test::read_file(dir / "alone.json"));
  EXPECT_FALSE(test::read_file(dir / "alone.json").empty());
}

// With blocks each block's core and DMA queue have a thread of their own, with every notify,
// wait and transfer of the block, and the arrows join the blocks' notifies and waits.
TEST(Trace, BlocksHaveTheirCoresAndQueues) {
  ScratchDir dir;
  const nlohmann::json j =
      run_json({"-p", "a2a3-910b2", "-d", "0,1", "--kernel", "host_mesh", "--core-num", "2",
                "--size", "16KiB", "--trace", dir / "t.json"},
               dir);
  const nlohmann::json trace = nlohmann::json::parse(test::read_file(dir / "t.json"));
  EXPECT_EQ(check_trace(trace, j.at("critical_path").at("device_time_ps")), (std::set<int>{0, 1}));
  std::map<std::pair<int, int>, std::string> threads;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      threads[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
  }
  std::map<std::pair<int, std::string>, int> slices;  // (device, thread name): notifies, pulls
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X" || e.at("pid") == 100000) continue;
    const std::string thread = threads.at({e.at("pid"), e.at("tid")});
    const std::string name = e.at("name");
    if (name == "notify" || name.rfind("pull", 0) == 0) ++slices[{e.at("pid"), thread}];
  }
  for (const auto& rank : j.at("ranks")) {
    const int device = rank.at("device");
    const auto on = [&](const char* thread) { return slices[std::pair{device, thread}]; };
    EXPECT_EQ(on("core (block 0)") + on("core (block 1)"), rank.at("notifies").get<int>());
    EXPECT_GT(on("core (block 1)"), 0);
    EXPECT_GT(on("DMA queue 0 (block 1)"), 0);
  }
}

// A wait a fault skips has its instant on the core's track, naming its cell: rank 1's first
// wait of the barrier is on signal[0,0], the row rank 0's notify writes.
TEST(Trace, ASkippedWaitHasItsInstant) {
  ScratchDir dir;
  const nlohmann::json j = run_json(
      {"-d", "0-3", "--kernel", "barrier", "--fault", "skip-wait:1:0", "--trace", dir / "t.json"},
      dir);
  const nlohmann::json trace = nlohmann::json::parse(test::read_file(dir / "t.json"));
  std::vector<nlohmann::json> skipped;
  int waits_of_rank_1 = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    if (e.at("name") == "wait skipped (fault)") skipped.push_back(e);
    if (e.at("name") == "wait" && e.at("pid") == 1) ++waits_of_rank_1;
  }
  ASSERT_EQ(skipped.size(), 1u) << trace.dump();
  EXPECT_EQ(skipped[0].at("pid"), 1);
  EXPECT_EQ(skipped[0].at("dur"), 0);
  EXPECT_EQ(skipped[0].at("args").at("cell"), "signal[0,0]");
  EXPECT_EQ(skipped[0].at("args").at("expected"), 1);
  EXPECT_EQ(waits_of_rank_1, 2);  // the other two of its three
  EXPECT_EQ(j.at("ranks").at(1).at("waits"), 3);
}

// Across servers a cluster's data crosses NICs and leaf switches: their links get a process.
TEST(Trace, ClusterSwitchLinksHaveTheirProcess) {
  ScratchDir dir;
  const nlohmann::json j = run_json({"-p", "a2a3-cluster", "-d", "0,1,8,9", "--kernel", "ring",
                                     "--size", "64KiB", "--trace", dir / "t.json"},
                                    dir);
  const std::string text = test::read_file(dir / "t.json");
  EXPECT_EQ(check_trace(nlohmann::json::parse(text), j.at("critical_path").at("device_time_ps")),
            (std::set<int>{0, 1, 8, 9, 100001}));
  EXPECT_NE(text.find("\"name\":\"leaf0.down_to_dev8\""), std::string::npos);
  EXPECT_NE(text.find("\"name\":\"nic_up bytes in flight\""), std::string::npos);
}

}  // namespace
}  // namespace ars
