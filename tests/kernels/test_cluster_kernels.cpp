// The collective libraries' algorithms at scale: recursive halving-doubling (rhd) and the
// hierarchical allreduce, against the golden for every op and dtype, with the exact per-rank
// remote bytes and notify/wait counts, and their schedules worked by hand.
//
// Per rank, n = elements per rank, P ranks, p' = 2^floor(log2 P), L = log2 p':
//   rhd, rank r < p': reduce-scatter pulls |S_1| + ... + |S_L|, where S_0 = [0, n) and S_k+1 is
//     the half of S_k the rank keeps (the lower floor(|S|/2) when the step's distance bit of r is
//     clear, the upper rest otherwise); the all-gather pulls what it gave away, n - |S_L|; a
//     rank r < P - p' also pulls the whole n folded into it. For n divisible by p' that is
//     2(p'-1)/p'·n (+ n). Notifies = waits = 2L, + 1 with a fold.
//   rhd, rank r >= p' (an extra): pulls n (the result), 1 notify, 1 wait.
//   hierarchical on one server of D = P ranks, local index i, chunk c = [floor(cn/D),
//     floor((c+1)n/D)): the reduce-scatter pulls chunk i from D-1 peers, the all-gather the D-1
//     other chunks: (D-1)|chunk i| + n - |chunk i|. Notifies = waits = 2(D-1) (two barriers).
//   hierarchical on S servers of D ranks, rank at server s with local index i, c = |chunk i|:
//     the server phases as above, (D-1)c + n - c, plus the inter phase on c elements among S:
//     ring 2c - |part (s-1) mod S| - |part s| (the RS rounds pull every part but s-1, the AG
//     rounds every part but s; part j = [floor(jc/S), floor((j+1)c/S))), rhd as rhd above with
//     rank s of S on c elements. Notifies = waits = 2(D-1) + the inter phase's (ring 2(S-1)).
// Nothing is written remotely.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cluster/hierarchical.h"
#include "kernels/cluster/rhd.h"
#include "kernels/rank_group.h"
#include "kernels/registry.h"
#include "sim/config/config.h"
#include "sim/run.h"
#include "tests/kernel_case.h"

namespace ars {
namespace {

using Case = test::KernelCase;
using test::request_for;

// Elements rank `rank` pulls in rhd (the header's formula, walked step by step).
std::uint64_t rhd_pulled(int rank, int ranks, std::uint64_t n) {
  int core = 1;
  while (core * 2 <= ranks) core *= 2;
  if (rank >= core) return n;
  std::uint64_t lo = 0, hi = n, pulled = 0;
  for (int distance = core / 2; distance >= 1; distance /= 2) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if ((rank & distance) != 0) {
      lo = mid;
    } else {
      hi = mid;
    }
    pulled += hi - lo;
  }
  return pulled + (n - (hi - lo)) + (rank + core < ranks ? n : 0);
}

std::uint64_t rhd_syncs(int rank, int ranks) {
  int core = 1, steps = 0;
  while (core * 2 <= ranks) core *= 2, ++steps;
  if (rank >= core) return 1;
  return 2 * steps + (rank + core < ranks ? 1 : 0);
}

std::uint64_t hierarchical_pulled(int rank, int ranks, std::uint64_t n) {
  const auto d = static_cast<std::uint64_t>(ranks);
  const auto i = static_cast<std::uint64_t>(rank);
  const std::uint64_t own = (i + 1) * n / d - i * n / d;
  return (d - 1) * own + n - own;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* kernel : {"rhd", "hierarchical"}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod}) {
      for (DType dtype : {DType::FP32, DType::FP16}) {
        for (int p : {2, 3, 5, 6, 8}) {
          // Size 1 leaves most ranks empty ranges; 7 and 4097 divide by none of the P;
          // 65539 is four 16 KiB FP32 tiles and three elements.
          for (std::uint64_t n : {1, 7, 4097, 65539}) out.push_back({kernel, op, dtype, p, n});
        }
      }
    }
  }
  return out;
}

class ClusterKernel : public testing::TestWithParam<Case> {};

TEST_P(ClusterKernel, ReducesExactlyWithTheCountedTraffic) {
  const Case& c = GetParam();
  const std::uint64_t element = dtype_bytes(c.dtype);
  test::expect_golden_and_traffic(run_allreduce(request_for(c)), c.ranks, [&](int rank) {
    if (c.kernel == "rhd") {
      const std::uint64_t syncs = rhd_syncs(rank, c.ranks);
      return test::RankTraffic{rhd_pulled(rank, c.ranks, c.elements) * element, syncs, syncs};
    }
    const auto syncs = 2 * static_cast<std::uint64_t>(c.ranks - 1);
    return test::RankTraffic{hierarchical_pulled(rank, c.ranks, c.elements) * element, syncs,
                             syncs};
  });
}

INSTANTIATE_TEST_SUITE_P(Matrix, ClusterKernel, testing::ValuesIn(cases()),
                         [](const auto& info) { return test::case_name(info.param); });

// --- on clusters and a SuperPod ---

struct Machine {
  const char* name;
  const char* platform;
  int servers;  // or SuperPod nodes
  int per_server;
};

// Two and four servers (power-of-two server counts), three (not), and a SuperPod of 2 nodes.
const Machine kMachines[] = {{"cluster2x4", "a2a3-cluster", 2, 4},
                             {"cluster4x8", "a2a3-cluster", 4, 8},
                             {"cluster3x4", "a2a3-cluster", 3, 4},
                             {"superpod2x8", "a3-superpod", 2, 8}};

struct ClusterCase {
  Machine machine;
  std::string kernel;
  std::string inter;  // hierarchical's --inter; empty: not given
  ReduceOp op;
  DType dtype;
  std::uint64_t elements;
};

void PrintTo(const ClusterCase& c, std::ostream* out) {
  *out << c.machine.name << "_" << c.kernel << c.inter;
}

RunRequest cluster_request(const ClusterCase& c) {
  RunRequest request;
  request.platform = load_platform(resolve_platform_path(c.machine.platform),
                                   boost::program_options::variables_map());
  if (std::string(c.machine.platform) == "a2a3-cluster") {
    request.platform.cluster_servers = c.machine.servers;
    request.platform.cluster_npus_per_server = c.machine.per_server;
  } else {
    request.platform.superpod_nodes = c.machine.servers;
    request.platform.superpod_npus_per_node = c.machine.per_server;
  }
  request.platform.devices = static_cast<int>(request.platform.structural_devices());
  for (int d = 0; d < request.platform.devices; ++d) request.devices.push_back(d);
  request.kernel = c.kernel;
  request.problem.inter = c.inter;
  request.problem.op = c.op;
  request.problem.dtype = c.dtype;
  request.problem.elements = c.elements;
  return request;
}

// Elements the ring among `size` ranks pulls at position `position` on `elements`.
std::uint64_t ring_pulled(int position, int size, std::uint64_t elements) {
  const auto part = [&](int j) {
    const auto s = static_cast<std::uint64_t>(size);
    const auto k = static_cast<std::uint64_t>((j + size) % size);
    return (k + 1) * elements / s - k * elements / s;
  };
  return 2 * elements - part(position - 1) - part(position);
}

std::vector<ClusterCase> cluster_cases() {
  std::vector<ClusterCase> out;
  for (const Machine& m : kMachines) {
    for (const auto& [kernel, inter] : std::vector<std::pair<std::string, std::string>>{
             {"rhd", ""}, {"hierarchical", ""}, {"hierarchical", "rhd"}}) {
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod}) {
        for (DType dtype : {DType::FP32, DType::FP16}) {
          for (std::uint64_t n : {1, 4097}) out.push_back({m, kernel, inter, op, dtype, n});
        }
      }
    }
  }
  return out;
}

class OnACluster : public testing::TestWithParam<ClusterCase> {};

TEST_P(OnACluster, ReducesExactlyWithTheCountedTraffic) {
  const ClusterCase& c = GetParam();
  const int servers = c.machine.servers;
  const int per_server = c.machine.per_server;
  const int ranks = servers * per_server;
  const std::uint64_t element = dtype_bytes(c.dtype);
  const std::uint64_t n = c.elements;
  test::expect_golden_and_traffic(run_allreduce(cluster_request(c)), ranks, [&](int rank) {
    if (c.kernel == "rhd") {
      const std::uint64_t syncs = rhd_syncs(rank, ranks);
      return test::RankTraffic{rhd_pulled(rank, ranks, n) * element, syncs, syncs};
    }
    // Devices are numbered server by server: rank = server x D + local index.
    const int server = rank / per_server;
    const int local = rank % per_server;
    const auto d = static_cast<std::uint64_t>(per_server);
    const auto i = static_cast<std::uint64_t>(local);
    const std::uint64_t chunk = (i + 1) * n / d - i * n / d;
    std::uint64_t pulled = (d - 1) * chunk + n - chunk;
    std::uint64_t syncs = 2 * (d - 1);
    if (c.inter == "rhd") {
      pulled += rhd_pulled(server, servers, chunk);
      syncs += rhd_syncs(server, servers);
    } else {
      pulled += servers > 1 ? ring_pulled(server, servers, chunk) : 0;
      syncs += 2 * static_cast<std::uint64_t>(servers - 1);
    }
    return test::RankTraffic{pulled * element, syncs, syncs};
  });
}

INSTANTIATE_TEST_SUITE_P(Machines, OnACluster, testing::ValuesIn(cluster_cases()),
                         [](const auto& info) {
                           const ClusterCase& c = info.param;
                           return std::string(c.machine.name) + "_" + c.kernel +
                                  (c.inter.empty() ? "" : "_inter_" + c.inter) + "_" +
                                  to_string(c.op) + "_" + to_string(c.dtype) + "_N" +
                                  std::to_string(c.elements);
                         });

// Every kernel on 4 servers x 8 NPUs (32 ranks; host_ring's contract stops at 16) against the
// golden: a rank is the device listed in -d, whatever the topology.
class EveryKernelOnFourServers : public testing::TestWithParam<std::string> {};

TEST_P(EveryKernelOnFourServers, MatchesTheGolden) {
  ClusterCase c{kMachines[1], GetParam(), "", ReduceOp::Sum, DType::FP32, 32 * 129};
  RunRequest request = cluster_request(c);
  request.problem.mode = c.kernel == "builtin_ring" ? "ring" : "mesh";
  if (c.kernel == "host_ring") {
    EXPECT_THROW(run_allreduce(request), InputError);
    return;
  }
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.correct) << result.mismatch_count << " mismatches";
}

std::vector<std::string> registered_kernels() {
  std::vector<std::string> names;
  for (const KernelSpec& k : kernel_registry()) names.push_back(k.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryKernelOnFourServers,
                         testing::ValuesIn(registered_kernels()),
                         [](const auto& info) { return info.param; });

// Rank 5 of 8 on 64 elements, by hand: distance 4 (bit set) keeps the upper half [32, 64)
// from partner 1, distance 2 (clear) the lower [32, 48) from 7, distance 1 (set) the upper
// [40, 48) from 4; the all-gather pulls back in reverse what was given: [32, 40) from 4,
// [48, 64) from 7, [0, 32) from 1.
TEST(RhdPlan, HalvesByTheDistanceBitAndGathersInReverse) {
  const RhdPlan plan = rhd_plan(5, 8, 64);
  EXPECT_FALSE(plan.extra);
  EXPECT_EQ(plan.fold_partner, -1);
  ASSERT_EQ(plan.reduce_scatter.size(), 3u);
  ASSERT_EQ(plan.all_gather.size(), 3u);
  const std::vector<std::vector<std::uint64_t>> rs = {{1, 32, 64}, {7, 32, 48}, {4, 40, 48}};
  const std::vector<std::vector<std::uint64_t>> ag = {{4, 32, 40}, {7, 48, 64}, {1, 0, 32}};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(static_cast<std::uint64_t>(plan.reduce_scatter[k].partner), rs[k][0]);
    EXPECT_EQ(plan.reduce_scatter[k].begin, rs[k][1]);
    EXPECT_EQ(plan.reduce_scatter[k].end, rs[k][2]);
    EXPECT_EQ(static_cast<std::uint64_t>(plan.all_gather[k].partner), ag[k][0]);
    EXPECT_EQ(plan.all_gather[k].begin, ag[k][1]);
    EXPECT_EQ(plan.all_gather[k].end, ag[k][2]);
  }
}

// Six ranks: p' = 4, ranks 4 and 5 fold into 0 and 1; 2 floor(log2 6) + 2 = 6 signal rows.
TEST(RhdPlan, ExtrasFoldIntoTheFirstRanks) {
  EXPECT_EQ(rhd_signal_rows(6), 6);
  EXPECT_EQ(rhd_signal_rows(8), 8);
  EXPECT_EQ(rhd_signal_rows(1), 2);
  const RhdPlan extra = rhd_plan(5, 6, 100);
  EXPECT_TRUE(extra.extra);
  EXPECT_EQ(extra.fold_partner, 1);
  EXPECT_TRUE(extra.reduce_scatter.empty());
  EXPECT_EQ(rhd_plan(1, 6, 100).fold_partner, 5);
  EXPECT_EQ(rhd_plan(2, 6, 100).fold_partner, -1);
  EXPECT_EQ(rhd_plan(2, 6, 100).reduce_scatter.size(), 2u);
}

// Six ranks, 4097 FP32 by hand. Rank 0: fold 4097, keeps [0, 2048) then [0, 1024):
// 3072 reduced, 4097 - 1024 = 3073 gathered: 10242 elements. Rank 3: keeps [2048, 4097) then
// [3072, 4097): 2049 + 1025 = 3074, gathers 4097 - 1025 = 3072: 6146. Rank 5: 4097.
// The rounds of each role: a fold-taker folds, halves, doubles and hands back; an extra only
// folds and takes the result back.
TEST(Rhd, SixRanksByHand) {
  const RunResult result = run_allreduce(request_for({"rhd", ReduceOp::Sum, DType::FP32, 6, 4097}));
  ASSERT_TRUE(result.correct);
  EXPECT_EQ(result.ranks[0].remote_read_bytes, 10242u * 4);
  EXPECT_EQ(result.ranks[3].remote_read_bytes, 6146u * 4);
  EXPECT_EQ(result.ranks[5].remote_read_bytes, 4097u * 4);
  auto phases = [&](int rank) {
    std::vector<std::string> out;
    for (const RoundRecord& round : result.ranks[static_cast<std::size_t>(rank)].rounds)
      out.push_back(round.phase);
    return out;
  };
  EXPECT_EQ(phases(0), (std::vector<std::string>{"stage-in", "fold", "RS", "RS", "AG", "AG",
                                                 "hand-back", "stage-out"}));
  EXPECT_EQ(phases(3), (std::vector<std::string>{"stage-in", "RS", "RS", "AG", "AG", "stage-out"}));
  EXPECT_EQ(phases(5), (std::vector<std::string>{"stage-in", "fold", "hand-back", "stage-out"}));
}

TEST(ServerGroups, GroupsRanksByServerInRankOrder) {
  Problem p;
  p.ranks = 4;
  p.servers = ServerMap({1, 0, 1, 0});
  EXPECT_EQ(server_groups(p), (std::vector<std::vector<int>>{{1, 3}, {0, 2}}));
  p.servers = ServerMap();
  EXPECT_EQ(server_groups(p), (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
}

TEST(ServerGroups, PlacesARankAsTheGroupsDo) {
  Problem p;
  p.ranks = 6;
  p.servers = ServerMap({2, 0, 2, 0, 5, 5});  // groups {1, 3}, {0, 2}, {4, 5}
  const ServerPlace place = server_place(p, 2);
  EXPECT_EQ(place.server, 1);
  EXPECT_EQ(place.local, 1);
  EXPECT_EQ(place.peers, (std::vector<int>{0, 2}));
  EXPECT_EQ(place.same_index, (std::vector<int>{3, 2, 5}));
  const ServerPlace first = server_place(p, 1);
  EXPECT_EQ(first.server, 0);
  EXPECT_EQ(first.local, 0);
  EXPECT_EQ(first.peers, (std::vector<int>{1, 3}));
  EXPECT_EQ(first.same_index, (std::vector<int>{1, 0, 4}));
}

TEST(ServerMap, GroupsOnceByServerNumberSkippingUnusedNumbers) {
  const ServerMap map({7, 3, 7, 3, 3, 0});
  EXPECT_EQ(map.ranks(), 6u);
  ASSERT_EQ(map.servers(), 3);
  EXPECT_EQ(map.server_number(0), 0);
  EXPECT_EQ(map.server_number(1), 3);
  EXPECT_EQ(map.server_number(2), 7);
  EXPECT_EQ(std::vector<int>(map.begin(1), map.end(1)), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(map.size(0), 1u);
  EXPECT_EQ(map.size(2), 2u);
  EXPECT_EQ(map.server_of(4), 3);
  EXPECT_EQ(map.server_index(4), 1);
  EXPECT_EQ(map.local_index(4), 2);
  EXPECT_EQ(map.server_index(2), 2);
  EXPECT_EQ(map.local_index(2), 1);
  EXPECT_TRUE(ServerMap().empty());
}

TEST(RankGroup, AllRanksNeedNoListAndAListKeepsItsOrder) {
  const RankGroup all = RankGroup::all(4096);
  EXPECT_EQ(all.size(), 4096u);
  EXPECT_EQ(all[0], 0);
  EXPECT_EQ(all[4095], 4095);
  const RankGroup some(std::vector<int>{7, 3, 5});
  EXPECT_EQ(some.size(), 3u);
  EXPECT_EQ(some[0], 7);
  EXPECT_EQ(some[2], 5);
}

TEST(ServerGroups, RefusesUnequalServers) {
  Problem p;
  p.ranks = 3;
  p.servers = ServerMap({0, 0, 1});
  try {
    server_groups(p);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "hierarchical: servers hold unequal rank counts (server 0 has 2, server 1 has 1); "
              "list the same number of devices from every server in -d");
  }
}

// --inter belongs to the hierarchical kernel; the others name themselves in the refusal.
TEST(Inter, RefusedByOtherKernelsAndCheckedByHierarchical) {
  for (const char* kernel : {"ring", "rhd", "mesh", "builtin_mesh"}) {
    RunRequest request = request_for({kernel, ReduceOp::Sum, DType::FP32, 4, 64});
    request.problem.inter = "rhd";
    try {
      run_allreduce(request);
      FAIL() << kernel << ": expected an InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--inter: ") + kernel +
                                           " has no inter-server phase; only hierarchical "
                                           "takes --inter");
    }
  }
}

}  // namespace
}  // namespace ars
