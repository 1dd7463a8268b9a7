// Whole runs on the cluster and SuperPod platforms: every kernel on a small machine with real
// data against the golden, a flat ring across servers held to the NIC's rate, and the farthest
// pair of an 8192-NPU cluster timed as the same pair of two servers. One simulation per test
// case, or per child process.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>

#include "kernels/registry.h"
#include "models/fabric/fabric.h"
#include "sim/cli.h"
#include "sim/config/config.h"
#include "sim/run.h"
#include "tests/run_process.h"

namespace ars {
namespace {

// a2a3-cluster cut to 2 servers x 4 NPUs, or a3-superpod cut to 2 nodes of 8; every device.
RunRequest small_machine(const std::string& platform) {
  RunRequest request;
  request.platform =
      load_platform(resolve_platform_path(platform), boost::program_options::variables_map());
  if (platform == "a2a3-cluster") {
    request.platform.cluster_servers = 2;
    request.platform.cluster_npus_per_server = 4;
  } else {
    request.platform.superpod_nodes = 2;
  }
  request.platform.devices = static_cast<int>(request.platform.structural_devices());
  validate(request.platform);
  for (int d = 0; d < request.platform.devices; ++d) request.devices.push_back(d);
  return request;
}

using Case = std::tuple<std::string, std::string>;  // (platform, kernel)

class EveryKernel : public ::testing::TestWithParam<Case> {};

TEST_P(EveryKernel, MatchesTheGoldenOnASmallMachine) {
  const auto& [platform, kernel] = GetParam();
  RunRequest request = small_machine(platform);
  request.kernel = kernel;
  request.problem.mode = kernel == "builtin_ring" ? "ring" : "mesh";
  request.problem.elements = 4096;
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_TRUE(result.checked);
  EXPECT_TRUE(result.correct) << result.mismatch_count << " mismatches";
}

std::vector<Case> every_kernel_case() {
  std::vector<Case> cases;
  for (const char* platform : {"a2a3-cluster", "a3-superpod"}) {
    for (const KernelSpec& k : kernel_registry()) cases.emplace_back(platform, k.name);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Fabric, EveryKernel, ::testing::ValuesIn(every_kernel_case()),
                         [](const auto& info) {
                           std::string name =
                               std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

TEST(FlatRing, AcrossTwoServersIsBoundByTheNic) {
  // P = 8 over 2 servers: ranks 3 -> 4 and 7 -> 0 cross the RoCE NICs (25 GB/s each way).
  // Every ring step moves n/P through them, 2(P-1) steps: at least
  // 2 x 7/8 x 1 MiB / 25 GB/s = 1835008 B / 25 B/ns = 73400.32 ns, more than the 65536 ns the
  // HCCS rate (28 GB/s) alone would allow.
  RunRequest request = small_machine("a2a3-cluster");
  request.kernel = "ring";
  request.problem.elements = 262144;  // 1 MiB of FP32 per rank
  request.timing_only = true;
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_GE(result.device_time_ns, 2.0 * 7 / 8 * 1048576 / 25.0);
}

// The first and the last NPU of an 8192-NPU cluster (1024 servers; rail wiring: NPU 0 on
// leaf 0, NPU 7 on leaf 7) are as far apart as NPU 0 of one server and NPU 7 of the next:
// NIC, leaf, spine, leaf, NIC. The spines ECMP picks for the two pairs may differ, but every
// spine is alike and the two ranks' pulls go opposite ways, so the 2-rank ring takes the same
// picoseconds in both clusters.
TEST(LargeCluster, FarthestPairOfEightThousandNpusTimesAsThePairOfTwoServers) {
  const auto ring_between = [](const char* servers, const char* devices) {
    return test::device_time({"-p", "a2a3-cluster", "--cluster.servers", servers, "-d", devices,
                              "--kernel", "ring", "--size", "1MiB", "--timing-only"});
  };
  const std::string far = ring_between("1024", "0,8191");
  EXPECT_EQ(far.rfind("device time: ", 0), 0u) << far;
  EXPECT_EQ(far, ring_between("2", "0,15"));
}

TEST(DeviceList, RangesExpandInTheOrderGivenAndAllTakesEveryDevice) {
  EXPECT_EQ(parse_devices("5,0-2,8-9", 16), (std::vector<int>{5, 0, 1, 2, 8, 9}));
  EXPECT_EQ(parse_devices("3-3", 4), (std::vector<int>{3}));
  EXPECT_EQ(parse_devices("all", 4), (std::vector<int>{0, 1, 2, 3}));
}

TEST(ClusterWaveform, NamesLinksByPlaceAndDeclaresOnlyTheRunsDevices) {
  // Ranks on devices 0..5 of 2 servers x 4 (rail wiring: device d on leaf d % 4). The ring's
  // rank 4 pulls from rank 3: the data crosses dev3.nic_up, leaf3's link to a spine, that
  // spine's link down to leaf0, and leaf0.down_to_dev4. Devices 6 and 7 take no part: no
  // link of theirs is declared.
  test::ScratchDir dir;
  RunRequest request = small_machine("a2a3-cluster");
  request.devices = {0, 1, 2, 3, 4, 5};
  request.kernel = "ring";
  request.problem.elements = 6144;  // divisible by P = 6
  request.vcd_path = dir / "run.vcd";
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  const std::string vcd = test::read_file(dir / "run.vcd");
  for (const char* name :
       {"$scope module leaf3 $end", "up_to_spine", "$scope module spine", "down_to_leaf0_busy",
        "down_to_dev4_busy", "nic_up_busy", "link_to_1_busy"}) {
    EXPECT_NE(vcd.find(name), std::string::npos) << name;
  }
  EXPECT_EQ(vcd.find("$scope module dev6 $end"), std::string::npos);
  EXPECT_EQ(vcd.find("down_to_dev7"), std::string::npos);
}

// The device a link's scope names, as the memory guard reads it to charge a trace's links: the
// number of "devN", -1 for a leaf's, spine's or node's, for every link of every topology.
TEST(Fabric, ScopeDeviceIsTheDeviceTheLinksScopeNames) {
  // (platform, whether it has switches' links: the cluster's leaves and spines, the nodes)
  const std::pair<const char*, bool> platforms[] = {{"a2a3-cluster", true},
                                                    {"a3-superpod", true},
                                                    {"ring8", false},
                                                    {"switch16", false},
                                                    {"a2a3", false}};
  for (const auto& [platform, switched] : platforms) {
    RunRequest request;
    if (switched) {
      request = small_machine(platform);
    } else {
      request.platform =
          load_platform(resolve_platform_path(platform), boost::program_options::variables_map());
      for (int d = 0; d < request.platform.devices; ++d) request.devices.push_back(d);
    }
    const Fabric fabric(request.platform);
    int switch_links = 0;
    for (Fabric::LinkId id : fabric.traced_links(request.devices)) {
      const std::string scope = fabric.link(id).scope;
      const int device = scope.rfind("dev", 0) == 0 ? std::stoi(scope.substr(3)) : -1;
      EXPECT_EQ(fabric.scope_device(id), device) << platform << " " << scope;
      if (device < 0) ++switch_links;
    }
    EXPECT_EQ(switch_links > 0, switched) << platform;
  }
}

}  // namespace
}  // namespace ars
