// The pitfalls the tutorial lists (spec section 2), each reproduced by a small broken kernel
// run through RunRequest::kernel_spec, and how the simulator reports it: a wrong result that
// names the differing elements, a deadlock that names the blocked cell, or a one-line error.
// Every test runs one simulation (ctest gives each its own process).
//
// "SIZE not divisible by P for the hand two-phase/ring" is covered where those kernels are
// tested (test_hand_kernels.cpp: HandKernel.ReducesExactlyOrRejectsTheProblem for the message
// of both kernels, HandKernelCli.SizeNotDivisibleIsOneLineAndExitCodeTwo for the one line on
// stderr and exit code 2), so it has no test here.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/api.h"
#include "kernels/ladder/ring.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"
#include "sim/outputs/report.h"
#include "sim/run.h"

namespace ars {
namespace {

// Divisible by 2, 3 and 4, as the ring's N/P chunks need; one tile, so the kernels below need
// no tile loop.
constexpr std::uint64_t kElements = 96;

RunRequest request_for(const KernelSpec& kernel, int ranks, const PlatformConfig& platform) {
  RunRequest request;
  request.platform = platform;
  for (int d = 0; d < ranks; ++d) request.devices.push_back(d);
  request.kernel = kernel.name;
  request.kernel_spec = &kernel;
  request.problem.elements = kElements;
  return request;
}

std::string report_of(const RunResult& result) {
  std::ostringstream out;
  print_report(out, result);
  return out.str();
}

double sum_of_inputs(const Problem& problem, const std::vector<int>& ranks, std::uint64_t index) {
  double sum = 0;
  for (int q : ranks) sum += input_value(problem, q, index);
  return sum;
}

// --- the mesh family (step 08), each with one flaw ---

Layout mesh_layout(const Problem& p) {
  return {{{"data", p.elements}}, {{"signal", p.ranks, 1}}};
}

struct MeshFlaws {
  bool barrier = true;     // the barrier between stage-in and exchange
  int first_peer = 1;      // 0 pulls the own window once more on top of the loaded own slice
  bool write_back = true;  // the reduced vector reaches y
};

// Stage-in, barrier, load the own slice, pull and add every peer's, then the result goes to y.
// Without write-back it is reduced in the UB and dropped, and stage-out copies the window,
// which still holds the rank's own input.
void mesh_with(Rank& r, const MeshFlaws& flaws) {
  const DType dtype = r.problem().dtype;
  const std::uint64_t n = r.problem().elements;
  const Tensor data = r.window("data");
  const Tile acc = r.alloc(n, dtype);
  std::vector<Tile> incoming;
  for (int k = flaws.first_peer; k < r.ranks(); ++k) incoming.push_back(r.alloc(n, dtype));
  r.load(acc, r.input(), 0, n);
  r.store(acc, data, 0, n);
  if (flaws.barrier) barrier(r, r.signal("signal"));
  r.load(acc, data, 0, n);
  // As kernels/ladder/mesh.cpp: the pulls are issued together, so every peer is read at about the
  // same time.
  std::vector<Transfer> pulls;
  for (std::size_t k = 0; k < incoming.size(); ++k) {
    const int peer = (r.rank() + flaws.first_peer + static_cast<int>(k)) % r.ranks();
    pulls.push_back(r.remote_load_async(incoming[k], data, peer, 0, n));
  }
  for (std::size_t k = 0; k < incoming.size(); ++k) {
    r.sync(pulls[k]);
    r.reduce(acc, incoming[k], n);
  }
  if (!flaws.write_back) r.load(acc, data, 0, n);
  r.store(acc, r.output(), 0, n);
  for (const Tile& t : incoming) r.release(t);
  r.release(acc);
}

// --- pitfall: a missing barrier mixes stale data (may pass at P = 2, fails at P = 4) ---
//
// In this model every rank does the same work at the same rates, so with ranks launched
// together a missing barrier is never seen: each rank's stage-in store has landed before any
// peer reads. What exposes it is launch skew: rank r starts r·d late. A rank reads a peer's
// window g after writing its own (the store's GM write latency, 300 cycles, then the load of
// the own slice, 1400 cycles of GM read latency, then the pull), so it reads peer q's stale,
// zero-filled window when q lags it by more than g. With d = 1400 cycles (< g ~ 1700):
// at P = 2 the only lag is d, and the result is right; at P = 4 the lags reach 2d and 3d, so
// rank 0 misses ranks 2 and 3, and rank 1 misses rank 3, while ranks 2 and 3 are right.
void mesh_without_barrier(Rank& r) {
  mesh_with(r, {false, 1, true});
}
const KernelSpec kMeshWithoutBarrier{"mesh_without_barrier", "mesh minus its barrier", true,
                                     mesh_layout, mesh_without_barrier};

PlatformConfig skewed_by_one_gm_read() {
  PlatformConfig platform;
  platform.launch_offset_cycles = platform.gm_read_latency_cycles;
  return platform;
}

TEST(MissingBarrier, PassesAtTwoRanksUnderLaunchSkew) {
  const RunResult result =
      run_allreduce(request_for(kMeshWithoutBarrier, 2, skewed_by_one_gm_read()));
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.correct) << report_of(result);
  // The ranks did start apart: the lag d stayed under g, it was not lockstep.
  EXPECT_GT(result.ranks[1].start_ps, result.ranks[0].start_ps);
}

TEST(MissingBarrier, MixesStaleDataAtFourRanks) {
  const RunResult result =
      run_allreduce(request_for(kMeshWithoutBarrier, 4, skewed_by_one_gm_read()));
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_TRUE(result.checked);
  EXPECT_FALSE(result.correct);
  // Rank 0 sees ranks 2 and 3 as zeros, rank 1 sees rank 3 as zeros: an element is wrong
  // where the missing inputs do not add up to zero.
  const Problem& p = result.request.problem;
  std::uint64_t expected_mismatches = 0;
  for (std::uint64_t i = 0; i < kElements; ++i) {
    expected_mismatches += sum_of_inputs(p, {2, 3}, i) != 0 ? 1 : 0;
    expected_mismatches += input_value(p, 3, i) != 0 ? 1 : 0;
  }
  EXPECT_EQ(result.mismatch_count, expected_mismatches);
  ASSERT_FALSE(result.mismatches.empty());
  for (const Mismatch& m : result.mismatches) {
    ASSERT_EQ(m.rank, 0);  // rank 0's elements come first
    EXPECT_EQ(m.got, sum_of_inputs(p, {0, 1}, m.index)) << "y[" << m.index << "]";
  }
}

// --- pitfall: counting the own slice twice ---
// The exchange starts from the own slice and then "pulls" every rank including itself, so
// each element is the golden plus the rank's own input.
void mesh_counting_own_twice(Rank& r) {
  mesh_with(r, {true, 0, true});
}
const KernelSpec kMeshCountingOwnTwice{"mesh_counting_own_twice", "mesh adding its own slice twice",
                                       true, mesh_layout, mesh_counting_own_twice};

TEST(OwnSliceTwice, ReportsTheDifferingElementOffByTheOwnInput) {
  const RunResult result = run_allreduce(request_for(kMeshCountingOwnTwice, 4, PlatformConfig{}));
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_FALSE(result.correct);
  const Problem& p = result.request.problem;
  std::uint64_t expected_mismatches = 0;
  for (int r = 0; r < 4; ++r) {
    for (std::uint64_t i = 0; i < kElements; ++i)
      expected_mismatches += input_value(p, r, i) != 0 ? 1 : 0;
  }
  EXPECT_EQ(result.mismatch_count, expected_mismatches);
  ASSERT_FALSE(result.mismatches.empty());
  const Mismatch& first = result.mismatches.front();
  EXPECT_EQ(first.got - first.expected, input_value(p, first.rank, first.index));
  std::ostringstream line;
  line << "\n  rank " << first.rank << " y[" << first.index << "] = " << first.got << ", expected "
       << first.expected << "\n";
  const std::string report = report_of(result);
  EXPECT_NE(report.find(line.str()), std::string::npos) << report;
  EXPECT_NE(report.find("wrong result: " + std::to_string(expected_mismatches) +
                        " elements differ from the golden"),
            std::string::npos)
      << report;
}

// --- pitfall: a result never written back leaves each rank with its own unreduced slice ---
void mesh_never_written_back(Rank& r) {
  mesh_with(r, {true, 1, false});
}
const KernelSpec kMeshNeverWrittenBack{"mesh_never_written_back",
                                       "mesh that drops its reduced tile", true, mesh_layout,
                                       mesh_never_written_back};

TEST(NeverWrittenBack, ReportedValuesAreTheRanksOwnInputs) {
  const RunResult result = run_allreduce(request_for(kMeshNeverWrittenBack, 4, PlatformConfig{}));
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_FALSE(result.correct);
  EXPECT_GT(result.mismatch_count, 0u);
  ASSERT_FALSE(result.mismatches.empty());
  const Problem& p = result.request.problem;
  for (const Mismatch& m : result.mismatches) {
    EXPECT_EQ(m.got, input_value(p, m.rank, m.index))
        << "rank " << m.rank << " y[" << m.index << "]";
  }
  // The work was done: every peer's slice was pulled, only its sum never reached y.
  for (const RankStats& s : result.ranks) EXPECT_EQ(s.remote_read_bytes, 3 * kElements * 4);
}

// --- the two-phase family (step 09) on one signal row for both barriers ---

Layout one_row_two_phase_layout(const Problem& p) {
  return {{{"data", p.elements}, {"result", p.elements / static_cast<std::uint64_t>(p.ranks)}},
          {{"signal", 1, p.ranks}}};
}

// Reduce-scatter into `result`, then all-gather from every rank's `result`, with `sync`
// between stage-in and the reduce-scatter and again between the two phases (barriers A and B).
template <void (*Sync)(Rank&)>
void two_phase_with(Rank& r) {
  const DType dtype = r.problem().dtype;
  const std::uint64_t n = r.problem().elements;
  const std::uint64_t chunk = n / static_cast<std::uint64_t>(r.ranks());
  const std::uint64_t own = static_cast<std::uint64_t>(r.rank()) * chunk;
  const Tensor data = r.window("data");
  const Tensor result = r.window("result");
  const Tile acc = r.alloc(n, dtype);
  const Tile incoming = r.alloc(chunk, dtype);
  r.begin_round("stage-in");
  r.load(acc, r.input(), 0, n);
  r.store(acc, data, 0, n);
  r.begin_round("barrier A");
  Sync(r);
  r.begin_round("reduce-scatter");
  r.load(acc, data, own, chunk);
  for (int k = 1; k < r.ranks(); ++k) {
    r.remote_load(incoming, data, (r.rank() + k) % r.ranks(), own, chunk);
    r.reduce(acc, incoming, chunk);
  }
  r.store(acc, result, 0, chunk);
  r.begin_round("barrier B");
  Sync(r);
  r.begin_round("all-gather");
  for (int q = 0; q < r.ranks(); ++q) {
    r.remote_load(incoming, result, q, 0, chunk);
    r.store(incoming, r.output(), static_cast<std::uint64_t>(q) * chunk, chunk);
  }
  r.release(incoming);
  r.release(acc);
}

// Both barriers on row 0 with the step-04 form (AtomicAdd 1, wait Ge 1): barrier B finds
// every cell at 1 already and passes at once.
void row_zero_ge(Rank& r) {
  row_barrier(r, r.signal("signal"), 0);
}

// The same with Eq: once a peer's barrier-B notify has landed on top of its barrier-A one,
// the cell holds 2 and a wait for Eq 1 never returns.
void row_zero_eq(Rank& r) {
  const Signal signal = r.signal("signal");
  for (int peer = 0; peer < r.ranks(); ++peer) {
    if (peer != r.rank()) r.notify(signal, peer, 0, r.rank(), 1, NotifyOp::AtomicAdd);
  }
  for (int src = 0; src < r.ranks(); ++src) {
    if (src != r.rank()) r.wait(signal, 0, src, 1, WaitCmp::Eq);
  }
}

const KernelSpec kReusedRowGe{"two_phase_reused_row_ge", "two-phase, both barriers on row 0 (Ge)",
                              true, one_row_two_phase_layout, two_phase_with<row_zero_ge>};
const KernelSpec kReusedRowEq{"two_phase_reused_row_eq", "two-phase, both barriers on row 0 (Eq)",
                              true, one_row_two_phase_layout, two_phase_with<row_zero_eq>};

// The last rank to reach barrier A finds every cell set and leaves after its P-1 looks; the
// others still wait one notify flight (link latency + GM write, about 1.7 us on a2a3) for its
// notify. With cheap polls (50 ns, an L2-resident cell) and ranks launched 3 us apart, so that
// rank 3 arrives last, rank 3 leaves barrier A about 1.6 us ahead. A barrier B of its own
// would absorb that lead; on the reused row it does not.
constexpr double kPollNs = 50;

PlatformConfig fast_polls_and_skew() {
  PlatformConfig platform;
  platform.poll_period_cycles = kPollNs * platform.clock_GHz;
  platform.launch_offset_cycles = 3'000 * platform.clock_GHz;
  return platform;
}

// Rank 3 runs through the reduce-scatter, passes barrier B at once and reads rank 0's
// `result` before rank 0 has written it: its first chunk of y is the zero-filled window.
TEST(ReusedSignalRow, GeSecondBarrierPassesAtOnceAndMixesStaleData) {
  const RunResult result = run_allreduce(request_for(kReusedRowGe, 4, fast_polls_and_skew()));
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_TRUE(result.checked);
  EXPECT_FALSE(result.correct);
  for (const RankStats& s : result.ranks) {
    SCOPED_TRACE("rank " + std::to_string(s.rank));
    ASSERT_EQ(s.rounds.size(), 5u);
    ASSERT_EQ(s.rounds[3].phase, "barrier B");
    // Passed at once: each of the P-1 waits was answered by its first look.
    EXPECT_NEAR(static_cast<double>(s.rounds[3].barrier_ps) / 1000.0, 3 * kPollNs, 1e-3);
  }
  EXPECT_LT(result.ranks[3].rounds[2].start_ps, result.ranks[0].rounds[2].start_ps);
  const Problem& p = result.request.problem;
  const std::uint64_t chunk = kElements / 4;
  std::uint64_t expected_mismatches = 0;
  for (std::uint64_t i = 0; i < chunk; ++i)
    expected_mismatches += sum_of_inputs(p, {0, 1, 2, 3}, i) != 0 ? 1 : 0;
  EXPECT_EQ(result.mismatch_count, expected_mismatches);
  for (const Mismatch& m : result.mismatches) {
    EXPECT_EQ(m.rank, 3);
    EXPECT_LT(m.index, chunk);
    EXPECT_EQ(m.got, 0.0) << "y[" << m.index << "]";
  }
}

// The platform alone is not the cause: the hand two-phase, with one row per barrier, is right
// on it.
TEST(ReusedSignalRow, OneRowPerBarrierIsRightOnTheSamePlatform) {
  RunRequest request = request_for(kReusedRowGe, 4, fast_polls_and_skew());
  request.kernel = "two_phase";
  request.kernel_spec = nullptr;
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.correct) << report_of(result);
}

// With Eq the same lead deadlocks: rank 3's barrier-B notifies land on the others' cells
// [0,3] before they look at them in their own barrier B, so the cells hold 2 and Eq 1 never
// holds. Rank 3 itself saw 1 everywhere and finished.
TEST(ReusedSignalRow, EqDeadlocksNamingTheCellThatWentPastOne) {
  const RunResult result = run_allreduce(request_for(kReusedRowEq, 4, fast_polls_and_skew()));
  EXPECT_FALSE(result.completed);
  EXPECT_FALSE(result.checked);
  EXPECT_EQ(result.failure.rfind("deadlock at ", 0), 0u) << result.failure;
  for (int rank : {0, 1, 2}) {
    const std::string line = "\n  rank " + std::to_string(rank) + " (device " +
                             std::to_string(rank) + ") waits on signal[0,3] Eq 1, cell holds 2";
    EXPECT_NE(result.failure.find(line), std::string::npos) << line << "\n" << result.failure;
  }
  EXPECT_EQ(result.failure.find("rank 3"), std::string::npos) << result.failure;
  EXPECT_TRUE(result.ranks[3].finished);
  EXPECT_NE(report_of(result).find("\nFAILED\n"), std::string::npos);
}

// --- the ring family (step 10) with its neighbours computed wrongly ---

Layout ring_layout(const Problem& p) {
  return {{{"data", p.elements}}, {{"signal", 2 * (p.ranks - 1), p.ranks}}};
}

// kernels/ladder/ring.cpp's schedule with the neighbours given: wait for `left` on [s, left], pull
// the round's chunk from it, announce the next round to `right` on [s+1, me].
void ring_with(Rank& r, int left, int right) {
  const DType dtype = r.problem().dtype;
  const std::uint64_t n = r.problem().elements;
  const std::uint64_t chunk = n / static_cast<std::uint64_t>(r.ranks());
  const Tensor data = r.window("data");
  const Signal signal = r.signal("signal");
  const Tiling tiling(chunk, dtype, 2, r.ub_bytes());
  const Tile acc = r.alloc(n, dtype);
  const Tile incoming = r.alloc(tiling.tile_elements, dtype);
  r.load(acc, r.input(), 0, n);
  r.store(acc, data, 0, n);
  r.notify(signal, right, 0, r.rank(), 1, NotifyOp::AtomicAdd);
  const int rounds = 2 * (r.ranks() - 1);
  for (int s = 0; s < rounds; ++s) {
    r.wait(signal, s, left, 1, WaitCmp::Ge);
    ring_exchange(r, data, left, ring_round(r.rank(), r.ranks(), s), chunk, tiling, acc, incoming);
    if (s + 1 < rounds) r.notify(signal, right, s + 1, r.rank(), 1, NotifyOp::AtomicAdd);
  }
  r.load(acc, data, 0, n);
  r.store(acc, r.output(), 0, n);
  r.release(incoming);
  r.release(acc);
}

// --- pitfall: negative modulo for the left neighbour ---
// (r - 1) % P is -1 for r = 0 in C++: rank 0's first wait names column -1.
void ring_negative_modulo(Rank& r) {
  ring_with(r, (r.rank() - 1) % r.ranks(), (r.rank() + 1) % r.ranks());
}
const KernelSpec kRingNegativeModulo{"ring_negative_modulo", "ring with left = (r-1) % P", true,
                                     ring_layout, ring_negative_modulo};

TEST(NegativeModulo, LeftNeighbourOfRankZeroIsAClearErrorNotACrash) {
  try {
    run_allreduce(request_for(kRingNegativeModulo, 4, PlatformConfig{}));
    FAIL() << "expected the kernel's bad cell to be reported";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "rank 0: signal cell [0,-1] is outside the signal 'signal' of shape [6,4]");
  }
}

// --- pitfall: P = 2 hides ring-rotation bugs ---
// The whole ring turned the other way (pull from and wait for the right neighbour, notify the
// left) while the chunk schedule still assumes data flowing right. At P = 2 left and right are
// the same rank, so it is right; at P = 3 the rounds pull chunks their owner has not reduced.
void ring_pulling_from_the_right(Rank& r) {
  const int p = r.ranks();
  ring_with(r, (r.rank() + 1) % p, (r.rank() - 1 + p) % p);
}
const KernelSpec kRingPullingRight{"ring_pulling_from_the_right", "ring rotated the wrong way",
                                   true, ring_layout, ring_pulling_from_the_right};

TEST(RingRotation, WrongDirectionPassesAtTwoRanks) {
  const RunResult result = run_allreduce(request_for(kRingPullingRight, 2, PlatformConfig{}));
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.correct) << report_of(result);
}

TEST(RingRotation, WrongDirectionIsAWrongResultAtThreeRanks) {
  const RunResult result = run_allreduce(request_for(kRingPullingRight, 3, PlatformConfig{}));
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_TRUE(result.checked);
  EXPECT_FALSE(result.correct);
  EXPECT_GT(result.mismatch_count, 0u);
  EXPECT_NE(report_of(result).find("\nFAILED\n"), std::string::npos);
}

}  // namespace
}  // namespace ars
