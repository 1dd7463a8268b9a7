// Timing a DMA transfer as one step (the default where no waveform observes the bursts) gives
// the same bytes as issuing every burst in its own time (--detailed-bursts): for every
// registered kernel on every topology, with real data, the JSON (per-rank and per-round
// records, device time, result) and the printed tables are identical. Where transfers meet on
// a shared resource, or signal atomics on a hold they take one at a time, the run is redone
// burst by burst, so the two agree there as well.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "tests/run_process.h"

namespace ars {
namespace {

using test::ScratchDir;

struct Topology {
  const char* platform;
  const char* devices;
};

// Every topology, with devices spread so that paths have several hops where they can.
const Topology kTopologies[] = {
    {"a2a3", "0,1,2,3"},
    {"a2a3-910b2", "0,2,5,7"},
    {"ring8", "0,1,2,3"},
    {"ring8", "0,3,4,6"},
    {"switch16", "0,5,10,15"},
    {"a2a3-cluster", "0,1,8,9"},
    {"a2a3-cluster", "0,17,40,127"},
    {"a3-superpod", "0,9,16,200"},
};

// The report without its wall-time line, which differs from run to run.
std::string tables(const std::string& out) {
  std::string kept;
  std::size_t begin = 0;
  while (begin < out.size()) {
    std::size_t end = out.find('\n', begin);
    end = end == std::string::npos ? out.size() : end + 1;
    if (out.compare(begin, 11, "simulation:") != 0) kept += out.substr(begin, end - begin);
    begin = end;
  }
  return kept;
}

struct Outputs {
  test::ProcessResult run;
  std::string json;
};

Outputs run(std::vector<std::string> args, bool detailed) {
  ScratchDir dir;
  args.insert(args.end(), {"--json", dir / "run.json"});
  if (detailed) args.push_back("--detailed-bursts");
  Outputs outputs{test::run_binary(args), ""};
  outputs.json = test::read_file(dir / "run.json");
  return outputs;
}

// The report's clause that says where transfers timed whole met, as "; redone burst by burst:
// ..." whether every transfer was redone burst by burst or only those through the resources
// the clause lists; "" (a failure recorded) when there is none.
std::string meeting_clause(const std::string& out) {
  const std::size_t redone = out.find("; redone");
  const std::size_t how = out.find(" burst by burst: ", redone);
  EXPECT_NE(how, std::string::npos) << out;
  if (redone == std::string::npos || how == std::string::npos) return "";
  return "; redone burst by burst: " + out.substr(how + 17);
}

// Runs `args` timed whole, which must finish and redo transfers burst by burst: the clause that
// says where they met (see meeting_clause).
std::string fallback_clause(const std::vector<std::string>& args) {
  const Outputs whole = run(args, false);
  EXPECT_EQ(whole.run.exit_code, 0) << whole.run.err;
  return meeting_clause(whole.run.out);
}

// Runs `args` timed whole, which must finish with some transfers redone burst by burst and the
// others timed whole: the report from "transfers timed whole; redone with " on ("" and a
// failure recorded when it is not there).
std::string partly_redone(const std::vector<std::string>& args) {
  const Outputs whole = run(args, false);
  EXPECT_EQ(whole.run.exit_code, 0) << whole.run.err;
  const std::size_t at = whole.run.out.find("transfers timed whole; redone with ");
  EXPECT_NE(at, std::string::npos) << whole.run.out;
  return at == std::string::npos ? "" : whole.run.out.substr(at);
}

// The hierarchical kernel with rhd between `servers` servers, 1 MiB per rank, timing only.
std::vector<std::string> hierarchical_rhd(const char* servers) {
  return {"-p",     "a2a3-cluster", "--cluster.servers", servers,   "-d",
          "all",    "-k",           "hierarchical",      "--inter", "rhd",
          "--size", "1MiB",         "--timing-only"};
}

void expect_same_both_ways(const std::vector<std::string>& args) {
  const Outputs whole = run(args, false);
  const Outputs detailed = run(args, true);
  EXPECT_EQ(whole.run.exit_code, 0) << whole.run.err;
  EXPECT_EQ(detailed.run.exit_code, 0) << detailed.run.err;
  EXPECT_NE(detailed.run.out.find("simulation:"), std::string::npos);
  EXPECT_EQ(detailed.run.out.find("transfers timed whole"), std::string::npos);
  EXPECT_FALSE(whole.json.empty());
  EXPECT_TRUE(whole.json == detailed.json) << "JSON differs";
  EXPECT_EQ(tables(whole.run.out), tables(detailed.run.out));
}

// The hand ring, 1 MiB per rank, timing only, on every NPU of a cluster of `servers`.
std::vector<std::string> cluster_ring(const char* servers) {
  return {"-p",     "a2a3-cluster", "--cluster.servers", servers, "-d", "all", "-k", "ring",
          "--size", "1MiB",         "--timing-only"};
}

class WholeTransfers : public ::testing::TestWithParam<Topology> {};

TEST_P(WholeTransfers, EveryKernelGivesTheBurstByBurstBytes) {
  const Topology& topology = GetParam();
  for (const KernelSpec& kernel : kernel_registry()) {
    // One tile and several tiles per slice (a 16 KiB tile holds 4096 FP32 elements).
    for (const char* size : {"1024", "24576"}) {
      SCOPED_TRACE(std::string(kernel.name) + " on " + topology.platform + " -d " +
                   topology.devices + " --size " + size);
      std::vector<std::string> args = {"-p", topology.platform, "-d",     topology.devices,
                                       "-k", kernel.name,       "--size", size};
      expect_same_both_ways(args);
      // Without payloads a core also runs ahead on its windows' transfers.
      std::vector<std::string> timing_only = args;
      timing_only.push_back("--timing-only");
      expect_same_both_ways(timing_only);
      // Two blocks of a rank share their device's memory port and links.
      if (std::string(kernel.name) == "host_mesh") {
        args.insert(args.end(), {"--core-num", "2", "--vector.cores", "2"});
        expect_same_both_ways(args);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Topologies, WholeTransfers, ::testing::ValuesIn(kTopologies),
                         [](const ::testing::TestParamInfo<Topology>& info) {
                           std::string name =
                               std::string(info.param.platform) + "_" + std::to_string(info.index);
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

// Signal atomics that hold each link direction (link.atomic_ns) or the target memory
// (gm.atomic_ns) are applied one at a time, in the order they ask: two cores' notifies asking at
// the same instant have no order of their own, and a notify asking inside a transfer's reserved
// bursts would queue behind all of them. Every kernel still gives the burst-by-burst bytes.
struct AtomicHold {
  const char* platform;
  const char* devices;
  const char* key;
};

const AtomicHold kAtomicHolds[] = {
    {"a2a3", "0,1,2,3", "--link.atomic_ns"},       {"ring8", "0-7", "--gm.atomic_ns"},
    {"ring8", "0-7", "--link.atomic_ns"},          {"switch16", "0,5,10,15", "--gm.atomic_ns"},
    {"switch16", "0,5,10,15", "--link.atomic_ns"}, {"switch16", "0-4", "--gm.atomic_ns"},
};

class WholeTransfersWithAtomicHolds : public ::testing::TestWithParam<AtomicHold> {};

TEST_P(WholeTransfersWithAtomicHolds, EveryKernelGivesTheBurstByBurstBytes) {
  const AtomicHold& hold = GetParam();
  for (const KernelSpec& kernel : kernel_registry()) {
    for (const char* size : {"1280", "24320"}) {  // divisible by P = 4, 5 and 8
      SCOPED_TRACE(std::string(kernel.name) + " on " + hold.platform + " -d " + hold.devices + " " +
                   hold.key + " 20 --size " + size);
      expect_same_both_ways({"-p", hold.platform, "-d", hold.devices, "-k", kernel.name, "--size",
                             size, hold.key, "20"});
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Holds, WholeTransfersWithAtomicHolds, ::testing::ValuesIn(kAtomicHolds),
                         [](const ::testing::TestParamInfo<AtomicHold>& info) {
                           std::string name = std::string(info.param.platform) + "_" +
                                              (info.param.key + 2) + "_" +
                                              std::to_string(info.index);
                           for (char& c : name) {
                             if (c == '-' || c == '.') c = '_';
                           }
                           return name;
                         });

// Random runs, drawn from fixed seeds over what changes how requests meet: kernels, ops,
// dtypes, topologies and device sets, queue counts, set-up, posted stores, burst sizes, atomic
// holds, acknowledged notifies, launch offsets, codegen, repeats, core counts and faults.
// Whatever the outcome (a result, a deadlock, bad input), both paths print the same bytes.
class Draw {
 public:
  explicit Draw(unsigned seed) : bits_(seed) {}
  // std::mt19937's numbers are the same everywhere; the distributions' are not.
  unsigned below(unsigned n) { return static_cast<unsigned>(bits_() % n); }
  bool chance(unsigned percent) { return below(100) < percent; }
  template <typename T, std::size_t N>
  const T& pick(const T (&items)[N]) {
    return items[below(N)];
  }

 private:
  std::mt19937 bits_;
};

std::vector<std::string> random_run(Draw& draw) {
  struct Machine {
    const char* platform;
    unsigned devices;
  };
  const Machine machines[] = {{"a2a3", 8},      {"a2a3-910b2", 8},    {"ring8", 8},
                              {"switch16", 16}, {"a2a3-cluster", 16}, {"a3-superpod", 16}};
  const Machine& machine = draw.pick(machines);
  std::vector<std::string> args = {"-p", machine.platform};
  if (std::string(machine.platform) == "a2a3-cluster") {
    args.insert(args.end(), {"--cluster.servers", "2"});
    if (draw.chance(30)) args.insert(args.end(), {"--cluster.wiring", "leaf"});
  }
  if (std::string(machine.platform) == "a3-superpod")
    args.insert(args.end(), {"--superpod.nodes", "2"});
  const unsigned ranks_choices[] = {2, 3, 4, 5, 8};
  const unsigned ranks = draw.pick(ranks_choices);
  std::vector<int> devices(machine.devices);
  for (unsigned d = 0; d < machine.devices; ++d) devices[d] = static_cast<int>(d);
  for (unsigned d = machine.devices - 1; d > 0; --d)
    std::swap(devices[d], devices[draw.below(d + 1)]);
  devices.resize(ranks);
  std::sort(devices.begin(), devices.end());
  std::string list;
  for (const int d : devices) list += (list.empty() ? "" : ",") + std::to_string(d);
  args.insert(args.end(), {"-d", list});
  const std::vector<KernelSpec>& kernels = kernel_registry();
  const std::string kernel = kernels[draw.below(static_cast<unsigned>(kernels.size()))].name;
  args.insert(args.end(), {"-k", kernel});
  const bool host = kernel == "host_ring" || kernel == "host_mesh";
  const char* ops[] = {"sum", "max", "min", "prod"};
  const char* dtypes[] = {"fp32", "fp16"};
  args.insert(args.end(), {"--op", host ? "sum" : draw.pick(ops)});
  args.insert(args.end(), {"--dtype", host ? "fp32" : draw.pick(dtypes)});
  const unsigned elements =
      draw.chance(50) ? ranks * 16 * (1 + draw.below(64)) : 1 + draw.below(40000);
  args.insert(args.end(), {"--size", std::to_string(elements)});
  if (kernel == "host_mesh" && draw.chance(60)) {
    const char* cores[] = {"2", "3", "8"};
    args.insert(args.end(), {"--core-num", draw.pick(cores), "--vector.cores", "8"});
  }
  struct Option {
    const char* key;
    const char* values[3];
  };
  const Option options[] = {
      {"--dma.queues", {"2", "4", "2"}},
      {"--dma.setup_cycles", {"10", "100", "10"}},
      {"--dma.posted_stores", {"1", "1", "1"}},
      {"--dma.burst_bytes", {"256", "300", "1024"}},
      {"--gm.atomic_ns", {"20", "200", "20"}},
      {"--link.atomic_ns", {"20", "200", "20"}},
      {"--sync.notify_acknowledged", {"1", "1", "1"}},
      {"--launch.offset_cycles", {"100", "5000", "100"}},
      {"--codegen", {"before", "after", "before"}},
      {"--repeat", {"2", "2", "2"}},
      {"--sync.poll_period_cycles", {"0", "7", "100"}},
  };
  for (const Option& option : options) {
    if (draw.chance(20)) args.insert(args.end(), {option.key, draw.pick(option.values)});
  }
  if (draw.chance(15)) {
    const char* faults[] = {"drop-notify:", "skip-wait:", "notify-value:", "stall:"};
    std::string fault = draw.pick(faults) + std::to_string(draw.below(ranks));
    if (fault.rfind("stall:", 0) != 0) fault += ":" + std::to_string(draw.below(6));
    if (fault.rfind("notify-value:", 0) == 0) fault += ":2";
    args.insert(args.end(), {"--fault", fault});
  }
  if (draw.chance(15)) args.push_back("--timing-only");
  return args;
}

class RandomRuns : public ::testing::TestWithParam<unsigned> {};

TEST_P(RandomRuns, GiveTheBurstByBurstBytes) {
  Draw draw(GetParam());
  int finished = 0;
  for (int i = 0; i < 20; ++i) {
    const std::vector<std::string> args = random_run(draw);
    std::string command = "allreduce-sim";
    for (const std::string& arg : args) command += " " + arg;
    SCOPED_TRACE(command);
    const Outputs whole = run(args, false);
    const Outputs detailed = run(args, true);
    EXPECT_EQ(whole.run.exit_code, detailed.run.exit_code);
    EXPECT_TRUE(whole.json == detailed.json) << "JSON differs";
    EXPECT_EQ(tables(whole.run.out), tables(detailed.run.out));
    EXPECT_EQ(whole.run.err, detailed.run.err);
    if (whole.run.exit_code == 0) ++finished;
  }
  EXPECT_GE(finished, 5);  // most draws are runs, not bad input
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomRuns, ::testing::Range(1u, 9u));

// The symmetric ring on a ring of its own size never shares a resource between two transfers
// at once, so there the transfers really are timed whole, and the bytes still agree.
TEST(WholeTransfers, TheSymmetricRingIsTimedWholeWithTheSameBytes) {
  const std::vector<std::string> args = {"-p", "ring8", "-d",     "0,1,2,3,4,5,6,7",
                                         "-k", "ring",  "--size", "65536"};
  const Outputs whole = run(args, false);
  EXPECT_NE(whole.run.out.find("transfers timed whole"), std::string::npos) << whole.run.out;
  expect_same_both_ways(args);
}

// Pulls of several peers at once from one memory meet on its port: the run is redone burst
// by burst (the meetings spread to every memory port, and more than one in 16 of the transfers
// made meet, too many to run only those burst by burst), and says so: not claiming whole
// transfers, and naming the two transfers (of two ranks), the memory port (a third device's,
// the one both pull from) where they met first, and that they started there at the same
// instant (a tie).
TEST(WholeTransfers, MeetingTransfersFallBackToBursts) {
  const std::vector<std::string> args = {"-p",   "a2a3",   "-d",   "0,1,2,3",      "-k",
                                         "mesh", "--size", "8192", "--dma.queues", "4"};
  const Outputs whole = run(args, false);
  EXPECT_EQ(whole.run.exit_code, 0) << whole.run.err;
  EXPECT_EQ(whole.run.out.find("transfers timed whole"), std::string::npos) << whole.run.out;
  EXPECT_NE(whole.run.out.find("\nOK\n"), std::string::npos) << whole.run.out;
  const std::size_t clause = whole.run.out.find("; redone burst by burst: ");
  ASSERT_NE(clause, std::string::npos) << whole.run.out;
  int puller = -1, other = -1, memory = -1, end = 0;
  unsigned transfer = 0, other_transfer = 0;
  double at_ns = 0, tried_s = -1;
  ASSERT_EQ(
      std::sscanf(whole.run.out.c_str() + clause,
                  "; redone burst by burst: dev%d's transfer %u and dev%d's transfer %u met "
                  "on dev%d.memory_port at %lf ns, both starting there at that instant; the "
                  "try before took %lf s)%n",
                  &puller, &transfer, &other, &other_transfer, &memory, &at_ns, &tried_s, &end),
      7)
      << whole.run.out;
  EXPECT_GT(end, 0);
  EXPECT_GE(tried_s, 0.0);  // the one try, which met
  EXPECT_GT(at_ns, 0.0);
  EXPECT_NE(puller, other);
  EXPECT_NE(memory, puller);
  EXPECT_NE(memory, other);
  // Asked for burst by burst, the run has nothing to redo.
  const Outputs detailed = run(args, true);
  EXPECT_EQ(detailed.run.out.find("redone"), std::string::npos) << detailed.run.out;
  expect_same_both_ways(args);
}

// rhd between a number of servers that is not a power of two first folds the extra servers'
// ranks into the first servers' and hands the results back at the end. Ranks that take a fold
// start late, and their reads meet their partners' own transfers on the partners' memory
// ports: on 3 and 5 servers a quarter of the bytes the run moves, on 9 a few ports carrying
// little, but every transfer of an NPU crosses its port, and burst by burst the run would
// make about 20 steps for each it makes timed whole. First met: NPU 0 of server 0, late from the
// fold, reading its first partner of the halving, NPU 0 of server p'/2 (p' the largest power of two
// not above the servers), on that one's memory port, inside that one's own transfer. Only the
// transfers that met run burst by burst: a try that goes on to the end noting every meeting finds
// most (those that met go on as if whole, which they then are not), a second the rest, and every
// other transfer is timed whole with the bytes of the run made burst by burst.
class RhdFold : public ::testing::TestWithParam<const char*> {};

TEST_P(RhdFold, OnlyTheTransfersThatMetGoBurstByBurst) {
  const std::vector<std::string> args = hierarchical_rhd(GetParam());
  const std::string redone = partly_redone(args);
  ASSERT_FALSE(redone.empty());
  int puller = -1, other = -1, memory = -1, end = 0;
  unsigned marked = 0;
  ASSERT_EQ(std::sscanf(redone.c_str(),
                        "transfers timed whole; redone with %u transfers that met burst by burst: "
                        "dev%d's transfer %*u and dev%d's transfer %*u met on dev%d.memory_port%n",
                        &marked, &puller, &other, &memory, &end),
            4)
      << redone;
  EXPECT_GT(end, 0);
  const int servers = std::atoi(GetParam());
  int core = 1;
  while (2 * core <= servers) core *= 2;
  EXPECT_EQ(puller, 0);
  EXPECT_EQ(other, 8 * core / 2);  // eight NPUs a server
  EXPECT_EQ(memory, other);
  // At least the first try's: eight reads and the eight partners' own transfers they met.
  EXPECT_GE(marked, 16u);
  // The first try and a survey (on 5 servers a second survey finds the last few).
  int tries = 0;
  const std::size_t told = redone.find("; the ");
  ASSERT_NE(told, std::string::npos) << redone;
  ASSERT_EQ(std::sscanf(redone.c_str() + told, "; the %d tries before took %*f s)", &tries), 1)
      << redone.substr(told);
  EXPECT_EQ(tries, servers == 5 ? 3 : 2);
  expect_same_both_ways(args);
}

INSTANTIATE_TEST_SUITE_P(Servers, RhdFold, ::testing::Values("3", "5", "9"));

// A rank's own transfer asks at its memory port while its neighbour's pull from that memory,
// reserved from an earlier instant, still has bursts to come. The report names that span, and
// the time they met lies inside it.
TEST(WholeTransfers, AMeetingInsideAnotherTransfersBurstsNamesTheirSpan) {
  const std::vector<std::string> args = {"-p", "a2a3-910b2", "-d",     "0-1",
                                         "-k", "ring",       "--size", "64KiB"};
  const std::string clause = fallback_clause(args);
  ASSERT_FALSE(clause.empty());
  int asker = -1, other = -1, memory = -1, named = -1, end = 0;
  unsigned transfer = 0, other_transfer = 0;
  double at_ns = 0, from_ns = 0, until_ns = 0;
  ASSERT_EQ(std::sscanf(clause.c_str(),
                        "; redone burst by burst: dev%d's transfer %u and dev%d's transfer %u met "
                        "on dev%d.memory_port at %lf ns, inside dev%d's bursts there (%lf to %lf "
                        "ns); the try before took %*f s)%n",
                        &asker, &transfer, &other, &other_transfer, &memory, &at_ns, &named,
                        &from_ns, &until_ns, &end),
            9)
      << clause;
  EXPECT_GT(end, 0);
  EXPECT_NE(asker, other);
  EXPECT_EQ(named, other);
  EXPECT_EQ(memory, asker);  // the neighbour's pull reads the asker's own memory
  EXPECT_LT(from_ns, at_ns);
  EXPECT_LE(at_ns, until_ns);
  expect_same_both_ways(args);
}

// The blocks of one rank number their transfers alike: the first transfer of each of two
// blocks starts at 0 on their device's memory port, and the two are told apart there (a tie,
// named with the block), not taken for one transfer timed whole.
TEST(WholeTransfers, TheBlocksOfOneRankAreToldApart) {
  const std::vector<std::string> args = {"-p",        "a2a3",   "-d",   "0-1",        "-k",
                                         "host_mesh", "--size", "1024", "--core-num", "2"};
  const std::string clause = fallback_clause(args);
  ASSERT_FALSE(clause.empty());
  int device = -1, block = -1, other = -1, memory = -1, end = 0;
  unsigned transfer = 9, other_transfer = 9;
  double at_ns = -1;
  ASSERT_EQ(std::sscanf(clause.c_str(),
                        "; redone burst by burst: dev%d block %d's transfer %u and dev%d's "
                        "transfer %u met on dev%d.memory_port at %lf ns, both starting there at "
                        "that instant; the try before took %*f s)%n",
                        &device, &block, &transfer, &other, &other_transfer, &memory, &at_ns, &end),
            7)
      << clause;
  EXPECT_GT(end, 0);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(block, 1);
  EXPECT_EQ(other, 0);
  EXPECT_EQ(memory, 0);
  EXPECT_EQ(transfer, 0u);
  EXPECT_EQ(other_transfer, 0u);
  EXPECT_EQ(at_ns, 0.0);
  expect_same_both_ways(args);
}

// Five ranks of a switch notify each other at once: two notifies reach one memory's atomics at
// the same instant, which the run names (two ranks, a third's memory) before redoing it.
TEST(WholeTransfers, NotifiesMeetingOnAMemorysAtomicsFallBackToBursts) {
  const std::vector<std::string> args = {
      "-p", "switch16", "-d", "0-4", "-k", "barrier", "--size", "64", "--gm.atomic_ns", "20"};
  const std::string clause = fallback_clause(args);
  ASSERT_FALSE(clause.empty());
  int asker = -1, other = -1, memory = -1, end = 0;
  double at_ns = 0;
  ASSERT_EQ(std::sscanf(clause.c_str(),
                        "; redone burst by burst: dev%d's notify and dev%d's notify met on "
                        "dev%d.signal_atomics at %lf ns, both starting there at that instant; the "
                        "try before took %*f s)%n",
                        &asker, &other, &memory, &at_ns, &end),
            4)
      << clause;
  EXPECT_GT(end, 0);
  EXPECT_NE(asker, other);
  EXPECT_NE(memory, asker);
  EXPECT_NE(memory, other);
  EXPECT_GT(at_ns, 0.0);
  expect_same_both_ways(args);
}

// With staggered launches a notify's atomic asks for a link while a transfer's bursts, reserved
// from an earlier instant, are still to cross it.
TEST(WholeTransfers, ANotifyInsideATransfersBurstsFallsBackToBursts) {
  const std::vector<std::string> args = {"-p",
                                         "ring8",
                                         "-d",
                                         "0-3",
                                         "-k",
                                         "builtin_mesh",
                                         "--size",
                                         "256KiB",
                                         "--link.atomic_ns",
                                         "20",
                                         "--launch.offset_cycles",
                                         "3333",
                                         "--timing-only"};
  const std::string clause = fallback_clause(args);
  ASSERT_FALSE(clause.empty());
  int notifier = -1, owner = -1, from = -1, to = -1, named = -1, end = 0;
  unsigned transfer = 0;
  double at_ns = 0, from_ns = 0, until_ns = 0;
  ASSERT_EQ(std::sscanf(clause.c_str(),
                        "; redone burst by burst: dev%d's notify and dev%d's transfer %u met on "
                        "dev%d.link_to_%d at %lf ns, inside dev%d's bursts there (%lf to %lf "
                        "ns); the try before took %*f s)%n",
                        &notifier, &owner, &transfer, &from, &to, &at_ns, &named, &from_ns,
                        &until_ns, &end),
            9)
      << clause;
  EXPECT_GT(end, 0);
  EXPECT_NE(notifier, owner);
  EXPECT_EQ(named, owner);
  EXPECT_EQ((from + 1) % 8, to);  // a ring's link, to the next device
  EXPECT_LT(from_ns, at_ns);
  EXPECT_LE(at_ns, until_ns);
  expect_same_both_ways(args);
}

// On 16 servers the ring's cross-server flows meet on four spines' links down to leaf 0, all at
// one instant. The next try runs only the transfers through those links burst by burst, and
// every other transfer whole, with the bytes of the run made wholly burst by burst.
TEST(WholeTransfers, AClusterRingRunsOnlyItsSpineTransfersBurstByBurst) {
  const std::vector<std::string> args = cluster_ring("16");
  const std::string redone = partly_redone(args);
  const std::string marked =
      "transfers timed whole; redone with the transfers through 4 resources (";
  ASSERT_EQ(redone.compare(0, marked.size(), marked), 0) << redone;
  // Three named, all a spine's link down to leaf 0, and one more.
  std::size_t at = marked.size();
  for (int named = 0; named < 3; ++named) {
    int spine = -1, end = 0;
    ASSERT_EQ(std::sscanf(redone.c_str() + at, "spine%d.down_to_leaf0%n", &spine, &end), 1)
        << redone.substr(at);
    EXPECT_GE(spine, 0);
    EXPECT_LT(spine, 8);
    at += static_cast<std::size_t>(end) + (named < 2 ? 2 : 0);
  }
  EXPECT_EQ(redone.compare(at, 30, " and 1 more) burst by burst: d"), 0) << redone.substr(at);
  expect_same_both_ways(args);
}

// On 4 servers the tries spread: the spine first, then, with its transfers burst by burst, the
// memory ports of the NPUs around it, most of the bytes the run moves: a survey of the run
// finds too many transfers meeting there to run only those burst by burst. Every transfer goes
// burst by burst; the report names the first meeting of all (the spine's tie) and the three
// tries, and the bytes are the run's made wholly burst by burst.
TEST(WholeTransfers, MeetingsThatSpreadEndBurstByBurst) {
  const std::vector<std::string> args = cluster_ring("4");
  const Outputs whole = run(args, false);
  EXPECT_EQ(whole.run.exit_code, 0) << whole.run.err;
  EXPECT_EQ(whole.run.out.find("transfers timed whole"), std::string::npos) << whole.run.out;
  const std::size_t clause = whole.run.out.find("; redone burst by burst: ");
  ASSERT_NE(clause, std::string::npos) << whole.run.out;
  int spine = -1, end = 0;
  ASSERT_EQ(std::sscanf(whole.run.out.c_str() + clause,
                        "; redone burst by burst: dev%*d's transfer %*u and dev%*d's transfer %*u "
                        "met on spine%d.down_to_leaf0 at %*f ns, both starting there at that "
                        "instant; the 3 tries before took %*f s)%n",
                        &spine, &end),
            1)
      << whole.run.out.substr(clause);
  EXPECT_GT(end, 0);
  expect_same_both_ways(args);
}

// Flat rhd between 33 servers: the first try meets at NPU 0's memory port, and the two surveys
// after it find no fewer transfers meeting the second time than the first (248, then 256):
// marking them does not settle the run, so the tries end there and every transfer goes burst
// by burst, with no fourth try that would meet again.
TEST(WholeTransfers, SurveysThatFindNoFewerMeetingsEndTheTries) {
  const std::vector<std::string> args = {
      "-p",     "a2a3-cluster", "--cluster.servers", "33", "-d", "all", "-k", "rhd",
      "--size", "1MiB",         "--timing-only"};
  const Outputs whole = run(args, false);
  EXPECT_EQ(whole.run.exit_code, 0) << whole.run.err;
  EXPECT_EQ(whole.run.out.find("transfers timed whole"), std::string::npos) << whole.run.out;
  const std::string clause = meeting_clause(whole.run.out);
  int end = 0;
  ASSERT_EQ(std::sscanf(clause.c_str(),
                        "; redone burst by burst: dev256's transfer 128 and dev0's transfer 648 "
                        "met on dev0.memory_port at %*f ns, inside dev0's bursts there (%*f to "
                        "%*f ns); the 3 tries before took %*f s)%n",
                        &end),
            0)
      << clause;
  EXPECT_GT(end, 0) << clause;
}

// On a cluster the ring's cross-server flows (NPU 7 of one server to NPU 0 of the next) cross
// the spines to leaf 0 together: the run names a spine's link down to leaf 0 and a tie. Five
// tries come before its run burst by burst: one marks that link, the next meets on a memory port
// and marks the transfers that met, two survey, and the last meets again.
TEST(WholeTransfers, TheClusterRingsCrossServerFlowsStartTogetherOnASpine) {
  const std::vector<std::string> args = cluster_ring("2");
  const std::string clause = fallback_clause(args);
  ASSERT_FALSE(clause.empty());
  int asker = -1, other = -1, spine = -1, end = 0;
  unsigned transfer = 0, other_transfer = 0;
  double at_ns = 0;
  ASSERT_EQ(std::sscanf(clause.c_str(),
                        "; redone burst by burst: dev%d's transfer %u and dev%d's transfer %u met "
                        "on spine%d.down_to_leaf0 at %lf ns, both starting there at that instant; "
                        "the 5 tries before took %*f s)%n",
                        &asker, &transfer, &other, &other_transfer, &spine, &at_ns, &end),
            6)
      << clause;
  EXPECT_GT(end, 0);
  // NPU 0 of each server pulls from NPU 7 of the other (devices 0 and 8 of 16).
  EXPECT_EQ(asker % 8, 0);
  EXPECT_EQ(other % 8, 0);
  EXPECT_NE(asker, other);
}

}  // namespace
}  // namespace ars
