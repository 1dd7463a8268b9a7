// The foundation kernels (barrier, mesh) against the golden on the a2a3 platform, across rank
// counts, sizes, dtypes and ops; one simulation per test case. A deliberately wrong kernel
// shows that the golden check can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <tuple>

#include "kernels/registry.h"
#include "sim/config/config.h"
#include "sim/run.h"

namespace ars {

// Parameter values in test logs read as words, not bytes.
void PrintTo(DType dtype, std::ostream* out) {
  *out << to_string(dtype);
}
void PrintTo(ReduceOp op, std::ostream* out) {
  *out << to_string(op);
}

namespace {

RunRequest a2a3_request(int ranks, std::uint64_t elements, DType dtype, ReduceOp op) {
  RunRequest request;
  request.platform =
      load_platform(resolve_platform_path("a2a3"), boost::program_options::variables_map());
  for (int d = 0; d < ranks; ++d) request.devices.push_back(d);
  request.problem.elements = elements;
  request.problem.dtype = dtype;
  request.problem.op = op;
  return request;
}

// (kernel, P, elements per rank, dtype, op)
using Case = std::tuple<std::string, int, std::uint64_t, DType, ReduceOp>;

class FoundationKernel : public ::testing::TestWithParam<Case> {};

TEST_P(FoundationKernel, MatchesTheGoldenWithTheCardsTraffic) {
  const auto& [kernel, ranks, elements, dtype, op] = GetParam();
  RunRequest request = a2a3_request(ranks, elements, dtype, op);
  request.kernel = kernel;
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_TRUE(result.checked);
  EXPECT_TRUE(result.correct) << result.mismatch_count << " mismatches, first at rank "
                              << result.mismatches.at(0).rank << " index "
                              << result.mismatches.at(0).index;
  EXPECT_EQ(result.mismatch_count, 0u);

  // Both kernels synchronise with one barrier: P-1 notifies and P-1 waits per rank. The
  // barrier moves no data between ranks; the mesh pulls every peer's whole slice once.
  const std::uint64_t bytes = elements * dtype_bytes(dtype);
  const std::uint64_t remote = kernel == "mesh" ? (ranks - 1) * bytes : 0;
  ASSERT_EQ(result.ranks.size(), static_cast<std::size_t>(ranks));
  for (const RankStats& s : result.ranks) {
    EXPECT_EQ(s.remote_read_bytes, remote) << "rank " << s.rank;
    EXPECT_EQ(s.remote_write_bytes, 0u) << "rank " << s.rank;
    EXPECT_EQ(s.notifies, static_cast<std::uint64_t>(ranks - 1)) << "rank " << s.rank;
    EXPECT_EQ(s.waits, static_cast<std::uint64_t>(ranks - 1)) << "rank " << s.rank;
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto& [kernel, ranks, elements, dtype, op] = info.param;
  return kernel + "_P" + std::to_string(ranks) + "_n" + std::to_string(elements) + "_" +
         to_string(dtype) + "_" + to_string(op);
}

const auto kKernels = ::testing::Values("barrier", "mesh");
const auto kRanks = ::testing::Values(2, 3, 4, 8);
const auto kDtypes = ::testing::Values(DType::FP32, DType::FP16);
const auto kOps = ::testing::Values(ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod);

INSTANTIATE_TEST_SUITE_P(Sizes, FoundationKernel,
                         ::testing::Combine(kKernels, kRanks,
                                            ::testing::Values<std::uint64_t>(1, 64, 4096, 100001),
                                            kDtypes, kOps),
                         case_name);

// A mesh that forgets the last peer: with P >= 2 every output misses one contribution.
void skip_last_peer(Rank& r) {
  const Problem& p = r.problem();
  const Tile acc = r.alloc(p.elements, p.dtype);
  const Tile incoming = r.alloc(p.elements, p.dtype);
  r.load(acc, r.input(), 0, p.elements);
  r.store(acc, r.window("data"), 0, p.elements);
  barrier(r, r.signal("signal"));
  for (int k = 1; k < r.ranks() - 1; ++k) {
    r.remote_load(incoming, r.window("data"), (r.rank() + k) % r.ranks(), 0, p.elements);
    r.reduce(acc, incoming, p.elements);
  }
  r.store(acc, r.output(), 0, p.elements);
}

// A reduce costs its start-up and 128 bytes a cycle at 1.8 GHz: the ring's P - 1 = 3
// reduce-scatter rounds at P = 4 each reduce one 16 KiB chunk, 6 + 128 cycles (74444 ps; 74.4 ns)
// for an add, max or min and 7 + 128 cycles (75000 ps) for prod's multiply.
class ReduceStartUp : public ::testing::TestWithParam<ReduceOp> {};

TEST_P(ReduceStartUp, ProdMultipliesACycleLaterThanTheOtherOps) {
  const ReduceOp op = GetParam();
  RunRequest request = a2a3_request(4, 16384, DType::FP32, op);
  request.kernel = "ring";
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.correct);
  const std::uint64_t one_reduce_ps = op == ReduceOp::Prod ? 75000 : 74444;
  for (const RankStats& rank : result.ranks) {
    std::uint64_t reduce_ps = 0;
    for (const RoundRecord& round : rank.rounds) reduce_ps += round.reduce_ps;
    EXPECT_EQ(rank.reduces, 3u);
    EXPECT_EQ(reduce_ps, 3 * one_reduce_ps);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, ReduceStartUp,
                         ::testing::Values(ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min,
                                           ReduceOp::Prod),
                         [](const ::testing::TestParamInfo<ReduceOp>& info) {
                           return std::string(to_string(info.param));
                         });

TEST(Golden, AKernelThatSkipsAPeerIsReportedWrong) {
  const KernelSpec& mesh = find_kernel("mesh");
  const KernelSpec wrong{"skip-last-peer", "mesh without the last peer", true, mesh.layout,
                         skip_last_peer};
  RunRequest request = a2a3_request(4, 64, DType::FP32, ReduceOp::Sum);
  request.kernel = wrong.name;
  request.kernel_spec = &wrong;
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_TRUE(result.checked);
  EXPECT_FALSE(result.correct);
  // Inputs are multiples of 1/64 in [-2, 2) drawn from a hash: a missing one leaves almost
  // every one of the 4 x 64 outputs off (a zero contribution is the only way to escape).
  EXPECT_GT(result.mismatch_count, 200u);
  ASSERT_FALSE(result.mismatches.empty());
  const Mismatch& m = result.mismatches.front();
  EXPECT_EQ(m.rank, 0);
  // Rank 0 added ranks 1 and 2 but never rank 3: what it got falls short by exactly rank 3's
  // value at that index.
  EXPECT_DOUBLE_EQ(m.expected - m.got, input_value(request.problem, 3, m.index));
}

// FP16 sums are exact in any order of adding when every partial sum is a multiple of 1/64
// under 32 in magnitude: the inputs keep the sum of magnitudes there up to 2048 ranks.
TEST(Golden, Fp16InputsKeepEverySumExactInAnyOrder) {
  for (const int ranks : {2, 16, 17, 256, 2048}) {
    Problem problem;
    problem.dtype = DType::FP16;
    problem.ranks = ranks;
    double widest = 0;
    for (std::uint64_t i = 0; i < 4096; ++i) {
      double magnitudes = 0;
      for (int r = 0; r < ranks; ++r) {
        const double x = input_value(problem, r, i);
        EXPECT_EQ(x * 64, std::floor(x * 64)) << ranks << " ranks, rank " << r << " index " << i;
        magnitudes += std::fabs(x);
        widest = std::max(widest, std::fabs(x));
      }
      ASSERT_LE(magnitudes, 32.0) << ranks << " ranks, index " << i;
    }
    // Up to 16 ranks the inputs span [-2, 2), as FP32's do at every P; then [-m, m) / 64.
    EXPECT_EQ(widest, ranks <= 16 ? 2.0 : (2048 / ranks) / 64.0) << ranks;
  }
}

RunRequest ring8_request(int ranks, DType dtype, ReduceOp op, const std::string& kernel) {
  boost::program_options::variables_map keys;
  keys.emplace("platform.devices", boost::program_options::variable_value(ranks, false));
  RunRequest request;
  request.platform = load_platform(resolve_platform_path("ring8"), keys);
  for (int d = 0; d < ranks; ++d) request.devices.push_back(d);
  request.problem.elements = 256;
  request.problem.dtype = dtype;
  request.problem.op = op;
  request.kernel = kernel;
  request.detailed_bursts = true;
  return request;
}

// Each rank of the mesh adds its peers in an order of its own; at 256 ranks FP16 sums of inputs
// in [-2, 2) rounded differently on some (0.797 and 0.813 for 0.766) and failed the golden. The
// inputs now keep every FP16 sum exact in any order, and the check asks for it exactly.
TEST(Golden, Fp16MeshSumOver256RanksMatchesTheGolden) {
  const RunResult result = run_allreduce(ring8_request(256, DType::FP16, ReduceOp::Sum, "mesh"));
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_TRUE(result.checked);
  EXPECT_EQ(result.mismatch_count, 0u);
  EXPECT_EQ(result.rtol, 0.0);
  EXPECT_EQ(result.atol, 0.0);
}

// A product of 256 FP16 values rounds 255 times: its tolerance grows by a unit roundoff each;
// its absolute slack is FP16's smallest normal number.
TEST(Golden, Fp16ProductOver256RanksIsCheckedWithItsRoundings) {
  const RunResult result = run_allreduce(ring8_request(256, DType::FP16, ReduceOp::Prod, "mesh"));
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_TRUE(result.checked);
  EXPECT_EQ(result.mismatch_count, 0u);
  EXPECT_DOUBLE_EQ(result.rtol, 255 * 0x1p-11);
  EXPECT_DOUBLE_EQ(result.atol, 0x1p-14);
}

// Rank 0 launches first and skips every wait: it pulls its 127 peers' windows before they hold
// their inputs, and each of its 64 products comes out 0. Every one is wrong, also those whose
// true product is so small that 0 fell within the former slack of 1e-2 + (1e-2 + 127 u) x
// product (four of them), which let them through.
TEST(Golden, Fp16ProductsNearZeroAreCheckedToo) {
  RunRequest request = ring8_request(128, DType::FP16, ReduceOp::Prod, "mesh");
  request.problem.elements = 64;
  request.platform.launch_offset_cycles = 20000;
  for (int wait = 0; wait < 127; ++wait)
    request.faults.push_back(Fault::parse("skip-wait:0:" + std::to_string(wait)));
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_TRUE(result.checked);
  EXPECT_EQ(result.mismatch_count, 64u);
  for (const auto& wrong : result.mismatches) {
    EXPECT_EQ(wrong.rank, 0);
    EXPECT_EQ(wrong.got, 0.0);
  }
  int near_zero = 0;
  for (std::uint64_t i = 0; i < 64; ++i) {
    double product = 1;
    for (int r = 0; r < 128; ++r) product *= input_value(request.problem, r, i);
    near_zero += product <= 1e-2 + (1e-2 + 127 * 0x1p-11) * product;
  }
  EXPECT_EQ(near_zero, 4);
}

}  // namespace
}  // namespace ars

namespace ars {
namespace {

// The mesh tiles for the unified buffer the platform has: with 64 KiB usable at P = 8 its
// eight tiles (one accumulator, seven pulls) shrink to 8 KiB each and still fit.
TEST(Tiling, MeshFollowsTheConfiguredUnifiedBuffer) {
  RunRequest request = a2a3_request(8, 1 << 18, DType::FP32, ReduceOp::Sum);
  request.platform.ub_usable_bytes = 65536;
  request.kernel = "mesh";
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.correct);
  // 1 MiB per rank in 8 KiB tiles: 128 local loads of the own slice plus 7 x 128 pulls, per
  // rank, besides the stage-in copy (128 loads, 128 stores) and the 128 stores to y.
  for (const RankStats& s : result.ranks) EXPECT_EQ(s.transfers, 128u * (2 + 1 + 7 + 1)) << s.rank;
}

}  // namespace
}  // namespace ars
