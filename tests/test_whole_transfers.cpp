// Timing a DMA transfer as one step (the default where no waveform observes the bursts) gives
// the same bytes as issuing every burst in its own time (--detailed-bursts): for every
// registered kernel on every topology, with real data, the JSON (per-rank and per-round
// records, device time, result) and the printed tables are identical. Where transfers meet on
// a shared resource the run is redone burst by burst, so the two agree there as well.
#include <cstdio>
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

class WholeTransfers : public ::testing::TestWithParam<Topology> {};

TEST_P(WholeTransfers, EveryKernelGivesTheBurstByBurstBytes) {
  const Topology& topology = GetParam();
  for (const KernelSpec& kernel : kernel_registry()) {
    // One tile and several tiles per slice (a 16 KiB tile holds 4096 FP32 elements).
    for (const char* size : {"1024", "24576"}) {
      SCOPED_TRACE(std::string(kernel.name) + " on " + topology.platform + " -d " +
                   topology.devices + " --size " + size);
      expect_same_both_ways(
          {"-p", topology.platform, "-d", topology.devices, "-k", kernel.name, "--size", size});
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
// by burst, and says so: not claiming whole transfers, and naming the two transfers (of two
// ranks), the memory port (a third device's, the one both pull from) where they met, and that
// they started there at the same instant (a tie).
TEST(WholeTransfers, MeetingTransfersFallBackToBursts) {
  const std::vector<std::string> args = {"-p",   "a2a3",   "-d",   "0,1,2,3",      "-k",
                                         "mesh", "--size", "4096", "--dma.queues", "4"};
  const Outputs whole = run(args, false);
  EXPECT_EQ(whole.run.exit_code, 0) << whole.run.err;
  EXPECT_EQ(whole.run.out.find("transfers timed whole"), std::string::npos) << whole.run.out;
  EXPECT_NE(whole.run.out.find("\nOK\n"), std::string::npos) << whole.run.out;
  const std::size_t clause = whole.run.out.find("; redone burst by burst: ");
  ASSERT_NE(clause, std::string::npos) << whole.run.out;
  int puller = -1, other = -1, memory = -1, end = 0;
  unsigned transfer = 0, other_transfer = 0;
  double at_ns = 0;
  ASSERT_EQ(std::sscanf(whole.run.out.c_str() + clause,
                        "; redone burst by burst: dev%d's transfer %u and dev%d's transfer %u met "
                        "on dev%d.memory_port at %lf ns, both starting there at that instant)%n",
                        &puller, &transfer, &other, &other_transfer, &memory, &at_ns, &end),
            6)
      << whole.run.out;
  EXPECT_GT(end, 0);
  EXPECT_GT(at_ns, 0.0);
  EXPECT_NE(puller, other);
  EXPECT_NE(memory, puller);
  EXPECT_NE(memory, other);
  // Asked for burst by burst, the run has nothing to redo.
  const Outputs detailed = run(args, true);
  EXPECT_EQ(detailed.run.out.find("redone"), std::string::npos) << detailed.run.out;
}

// Eight blocks of a rank pull through their device's one memory port: one block's transfer
// asks there while another's bursts, reserved from an earlier instant, are still to come. The
// report names that span, and the time they met lies inside it.
TEST(WholeTransfers, AMeetingInsideAnotherTransfersBurstsNamesTheirSpan) {
  const std::vector<std::string> args = {"-p",     "a2a3-910b2", "-d",           "0-3",
                                         "-k",     "host_mesh",  "--core-num",   "8",
                                         "--size", "1MiB",       "--timing-only"};
  const Outputs whole = run(args, false);
  EXPECT_EQ(whole.run.exit_code, 0) << whole.run.err;
  const std::size_t clause = whole.run.out.find("; redone burst by burst: ");
  ASSERT_NE(clause, std::string::npos) << whole.run.out;
  int asker = -1, other = -1, memory = -1, named = -1, end = 0;
  unsigned transfer = 0, other_transfer = 0;
  double at_ns = 0, from_ns = 0, until_ns = 0;
  ASSERT_EQ(std::sscanf(whole.run.out.c_str() + clause,
                        "; redone burst by burst: dev%d's transfer %u and dev%d's transfer %u met "
                        "on dev%d.memory_port at %lf ns, inside dev%d's bursts there (%lf to %lf "
                        "ns))%n",
                        &asker, &transfer, &other, &other_transfer, &memory, &at_ns, &named,
                        &from_ns, &until_ns, &end),
            9)
      << whole.run.out;
  EXPECT_GT(end, 0);
  EXPECT_EQ(named, other);
  EXPECT_LT(from_ns, at_ns);
  EXPECT_LE(at_ns, until_ns);
}

// On a cluster the ring's cross-server flows (NPU 7 of one server to NPU 0 of the next) cross
// the spines to leaf 0 together: the run names a spine's link down to leaf 0 and a tie.
TEST(WholeTransfers, TheClusterRingsCrossServerFlowsStartTogetherOnASpine) {
  const std::vector<std::string> args = {
      "-p",     "a2a3-cluster", "--cluster.servers", "2", "-d", "all", "-k", "ring",
      "--size", "1MiB",         "--timing-only"};
  const Outputs whole = run(args, false);
  EXPECT_EQ(whole.run.exit_code, 0) << whole.run.err;
  const std::size_t clause = whole.run.out.find("; redone burst by burst: ");
  ASSERT_NE(clause, std::string::npos) << whole.run.out;
  int asker = -1, other = -1, spine = -1, end = 0;
  unsigned transfer = 0, other_transfer = 0;
  double at_ns = 0;
  ASSERT_EQ(
      std::sscanf(whole.run.out.c_str() + clause,
                  "; redone burst by burst: dev%d's transfer %u and dev%d's transfer %u met "
                  "on spine%d.down_to_leaf0 at %lf ns, both starting there at that instant)%n",
                  &asker, &transfer, &other, &other_transfer, &spine, &at_ns, &end),
      6)
      << whole.run.out;
  EXPECT_GT(end, 0);
  // NPU 0 of each server pulls from NPU 7 of the other (devices 0 and 8 of 16).
  EXPECT_EQ(asker % 8, 0);
  EXPECT_EQ(other % 8, 0);
  EXPECT_NE(asker, other);
}

}  // namespace
}  // namespace ars
