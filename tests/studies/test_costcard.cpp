// Cost cards (sim/studies/cards.h) and the costcard subcommand: cards hold exactly for bytes and
// rounds, match the simulated time within 1 % on the ideal platform, and the sweep's outputs
// (CSV, crossover, exit codes) say what they should; the plot scripts draw what they print.
#include <gtest/gtest.h>
#include <cctype>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <boost/program_options.hpp>

#include "kernels/registry.h"
#include "sim/config/config.h"
#include "sim/run.h"
#include "sim/studies/cards.h"
#include "sim/studies/costcard.h"

namespace ars {
namespace {

PlatformConfig a2a3() {
  return load_platform(resolve_platform_path("a2a3"), boost::program_options::variables_map{});
}

bool registered(const std::string& kernel) {
  for (const KernelSpec& k : kernel_registry()) {
    if (kernel == k.name) return true;
  }
  return false;
}

RunRequest request_for(const std::string& kernel, int ranks, std::uint64_t bytes,
                       const PlatformConfig& platform) {
  RunRequest request;
  request.platform = platform;
  for (int d = 0; d < ranks; ++d) request.devices.push_back(d);
  request.kernel = kernel;
  request.problem.ranks = ranks;
  request.problem.elements = bytes / 4;
  request.problem.mode = kernel.find("ring") != std::string::npos ? "ring" : "mesh";
  return request;
}

// Runs the binary; returns its exit code and fills `output` with stdout.
int run_binary(const std::string& args, std::string& output) {
  const char* binary = std::getenv("ARS_BINARY");
  if (binary == nullptr) return -1;
  const std::string command = std::string(binary) + " " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buffer;
  output.clear();
  for (std::size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) {
    output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + name;
}

// A PNG's pHYs chunk: pixels per metre (150 dpi = 150 / 0.0254 = 5905.5, written as 5906); 0
// when the file or the chunk is missing.
std::uint32_t png_pixels_per_metre(const std::string& path) {
  std::ifstream png(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(png)), std::istreambuf_iterator<char>());
  const std::size_t at = bytes.find("pHYs");
  if (at == std::string::npos || at + 8 > bytes.size()) return 0;
  std::uint32_t per_metre = 0;
  for (int i = 0; i < 4; ++i) {
    per_metre = per_metre << 8 | static_cast<unsigned char>(bytes[at + 4 + i]);
  }
  return per_metre;
}

std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> header;
  std::getline(in, line);
  std::stringstream h(line);
  for (std::string cell; std::getline(h, cell, ',');) header.push_back(cell);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::stringstream l(line);
    std::map<std::string, std::string> row;
    std::size_t i = 0;
    for (std::string cell; std::getline(l, cell, ',') && i < header.size(); ++i) {
      row[header[i]] = cell;
    }
    rows.push_back(row);
  }
  return rows;
}

// --- time card under --ideal: one simulation per test case ---

using IdealPoint = std::tuple<std::string, std::string, int, std::uint64_t>;

class IdealCard : public ::testing::TestWithParam<IdealPoint> {};

// Runs the kernel on the platform and checks its device time against its card's (1 %).
void expect_run_equals_card(const std::string& kernel, int ranks, std::uint64_t bytes,
                            const PlatformConfig& platform) {
  const RunRequest request = request_for(kernel, ranks, bytes, platform);
  const Card card = cost_card(kernel, request.problem, platform);
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.correct);
  EXPECT_NEAR(result.device_time_ns, card.time_ns, 0.01 * card.time_ns)
      << kernel << " P=" << ranks << " " << bytes << " B";
}

TEST_P(IdealCard, SimulatedTimeEqualsCardWithinOnePercent) {
  const auto& [profile, kernel, ranks, bytes] = GetParam();
  if (!registered(kernel)) GTEST_SKIP() << kernel << " is not built into this binary";
  expect_run_equals_card(kernel, ranks, bytes,
                         ideal_platform(load_platform(resolve_platform_path(profile),
                                                      boost::program_options::variables_map{})));
}

std::string ideal_point_name(const ::testing::TestParamInfo<IdealPoint>& info) {
  std::string profile = std::get<0>(info.param);
  for (char& c : profile) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return profile + "_" + std::get<1>(info.param) + "_P" + std::to_string(std::get<2>(info.param)) +
         "_" + std::to_string(std::get<3>(info.param)) + "B";
}

INSTANTIATE_TEST_SUITE_P(Kernels, IdealCard,
                         ::testing::Combine(::testing::Values("a2a3"),
                                            ::testing::ValuesIn(card_kernels()),
                                            ::testing::Values(2, 4, 8),
                                            ::testing::Values(std::uint64_t{1024},
                                                              std::uint64_t{48 * 1024},
                                                              std::uint64_t{512 * 1024})),
                         ideal_point_name);

// rhd folds the ranks beyond a power of two in and out, the hierarchical kernel's chunks are
// uneven: sizes that no P divides, at P that are not powers of two.
INSTANTIATE_TEST_SUITE_P(NonPowerOfTwo, IdealCard,
                         ::testing::Combine(::testing::Values("a2a3"),
                                            ::testing::Values("rhd", "hierarchical"),
                                            ::testing::Values(3, 5, 6, 7),
                                            ::testing::Values(std::uint64_t{1028},
                                                              std::uint64_t{16388},
                                                              std::uint64_t{524292})),
                         ideal_point_name);

// The algorithms run at scale on the 16-server cluster: the scale-out hop (NIC, leaf, spine)
// is in their cards through the fabric's route of every pair.
INSTANTIATE_TEST_SUITE_P(Cluster, IdealCard,
                         ::testing::Combine(::testing::Values("a2a3-cluster"),
                                            ::testing::Values("ring", "rhd", "hierarchical"),
                                            ::testing::Values(16, 64, 128),
                                            ::testing::Values(std::uint64_t{256 * 1024})),
                         ideal_point_name);

// The calibrated profile charges notify, flush, pipe-barrier and invalidate costs, launch skew
// and posted stores: --ideal must take away exactly what the cards leave out, nothing more.
INSTANTIATE_TEST_SUITE_P(Calibrated, IdealCard,
                         ::testing::Combine(::testing::Values("a2a3-910b2"),
                                            ::testing::ValuesIn(card_kernels()),
                                            ::testing::Values(2, 4, 8),
                                            ::testing::Values(std::uint64_t{48 * 1024})),
                         ideal_point_name);

// The calibrated profile's synchronisation is in the cards: the compiled kernels' pipe barrier
// before the first notify of a loop only (TNOTIFY closes with its own), the host builtins'
// runtime TNOTIFY and TWAIT (a drain, no pipe barrier, no invalidate). With only the launch
// order and the signal atomics' queues taken away, the host mesh (48 KiB: 48 tiles, pulls
// overlapping barriers) and a one-chunk builtin mesh equal their cards.
class SyncCard : public ::testing::TestWithParam<IdealPoint> {};

TEST_P(SyncCard, SimulatedTimeEqualsCardWithinOnePercent) {
  const auto& [profile, kernel, ranks, bytes] = GetParam();
  PlatformConfig platform =
      load_platform(resolve_platform_path(profile), boost::program_options::variables_map{});
  platform.launch_offset_cycles = 0;
  platform.launch_setup_cycles = 0;
  platform.gm_atomic_ns = 0;
  platform.link_atomic_ns = 0;
  expect_run_equals_card(kernel, ranks, bytes, platform);
}

INSTANTIATE_TEST_SUITE_P(HostMesh, SyncCard,
                         ::testing::Combine(::testing::Values("a2a3-910b2"),
                                            ::testing::Values("host_mesh"),
                                            ::testing::Values(2, 3, 4),
                                            ::testing::Values(std::uint64_t{48 * 1024})),
                         ideal_point_name);

INSTANTIATE_TEST_SUITE_P(BuiltinMeshOneChunk, SyncCard,
                         ::testing::Combine(::testing::Values("a2a3-910b2"),
                                            ::testing::Values("builtin_mesh"),
                                            ::testing::Values(2, 3, 4),
                                            ::testing::Values(std::uint64_t{16 * 1024})),
                         ideal_point_name);

// A DMA queue faster than its link (32 B/cycle = 57.6 GB/s against 28 GB/s) leaves every pull's
// bursts queued for the link; with P = 4 each device's memory is read by three peers at once.
// The model once reserved the memory port only when a burst's link was free, so with short
// latencies (L2-resident windows, a near link) the other readers and the device's own loads
// queued behind one reader's link backlog: the mesh came out 18 % over its card. Fixed
// synchronisation costs are charged too, so the barrier's terms are checked with it.
TEST(CoreCounts, SmallestCoreCountWithinFivePercentOfTheFastest) {
  // Times for 1, 2, 4, 8, 16 cores: the fastest is 50 (16 cores); 52 (8 cores) is within 5 %
  // of it (52.5), 60 (4 cores) is not.
  EXPECT_EQ(smallest_near_best({100, 60, 52, 55, 50}, 0.05), 2u);
  EXPECT_EQ(smallest_near_best({40, 60, 52}, 0.05), 0u);
}

TEST(IdealCardFastQueue, MeshWhosePullsOutrunTheirLinksMatchesItsCard) {
  PlatformConfig platform = ideal_platform(a2a3());
  platform.dma_remote_bytes_per_cycle = 32;
  platform.dma_mte2_bytes_per_cycle = 110;
  platform.dma_mte3_bytes_per_cycle = 86;
  platform.gm_read_latency_cycles = 400;
  platform.link_latency_ns = 117.6;
  platform.notify_cycles = 90;
  platform.pipe_barrier_cycles = 180;
  platform.cache_flush_cycles = 360;
  platform.poll_period_cycles = 400;
  platform.cache_invalidate_cycles = 180;
  const RunRequest request = request_for("mesh", 4, 1 << 20, platform);
  const Card card = cost_card("mesh", request.problem, platform);
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  EXPECT_TRUE(result.correct);
  EXPECT_NEAR(result.device_time_ns, card.time_ns, 0.01 * card.time_ns);
}

// --- byte and round cards on the default platform ---

using CountPoint = std::tuple<std::string, int>;

class CountCard : public ::testing::TestWithParam<CountPoint> {};

TEST_P(CountCard, BytesRoundsNotifiesWaitsMatchEveryRank) {
  const auto& [kernel, ranks] = GetParam();
  if (!registered(kernel)) GTEST_SKIP() << kernel << " is not built into this binary";
  const PlatformConfig platform = a2a3();
  const RunRequest request = request_for(kernel, ranks, 96 * 1024, platform);
  const Card card = cost_card(kernel, request.problem, platform);
  const RunResult result = run_allreduce(request);
  ASSERT_TRUE(result.completed) << result.failure;
  ASSERT_EQ(result.ranks.size(), card.ranks.size());
  for (std::size_t r = 0; r < card.ranks.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(result.ranks[r].remote_read_bytes, card.ranks[r].remote_read_bytes);
    EXPECT_EQ(result.ranks[r].remote_write_bytes, card.ranks[r].remote_write_bytes);
    EXPECT_EQ(result.ranks[r].rounds.size(), card.ranks[r].rounds.size());
    EXPECT_EQ(result.ranks[r].notifies, card.ranks[r].notifies);
    EXPECT_EQ(result.ranks[r].waits, card.ranks[r].waits);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, CountCard,
                         ::testing::Combine(::testing::ValuesIn(card_kernels()),
                                            ::testing::Values(2, 4, 8)),
                         [](const ::testing::TestParamInfo<CountPoint>& info) {
                           return std::get<0>(info.param) + "_P" +
                                  std::to_string(std::get<1>(info.param));
                         });

// The cards themselves against the tutorial's counts (spec sections 2 and 3), by hand.
TEST(CardCounts, MatchTheTutorialsFormulas) {
  const PlatformConfig platform = a2a3();
  const std::uint64_t n = 96 * 1024;  // 6 chunks of 16 KiB; divisible by 2, 4, 8
  for (int p : {2, 4, 8}) {
    Problem problem;
    problem.ranks = p;
    problem.elements = n / 4;
    const std::uint64_t pm1 = p - 1;
    const Card mesh = cost_card("mesh", problem, platform);
    const Card two_phase = cost_card("two_phase", problem, platform);
    const Card ring = cost_card("ring", problem, platform);
    const Card host_ring = cost_card("host_ring", problem, platform);
    const Card builtin_mesh = cost_card("builtin_mesh", problem, platform);
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(mesh.ranks[r].remote_read_bytes, pm1 * n);
      EXPECT_EQ(mesh.ranks[r].notifies, pm1);
      EXPECT_EQ(two_phase.ranks[r].remote_read_bytes, 2 * pm1 * n / p);
      EXPECT_EQ(two_phase.ranks[r].waits, 2 * pm1);
      EXPECT_EQ(ring.ranks[r].remote_read_bytes, 2 * pm1 * n / p);
      EXPECT_EQ(ring.ranks[r].notifies, 2 * pm1);
      EXPECT_EQ(ring.ranks[r].rounds.size(), static_cast<std::size_t>(2 * p));
      EXPECT_EQ(host_ring.ranks[r].waits, (2 * pm1 + 1) * pm1);
      const std::uint64_t chunks = n / 16384;
      EXPECT_EQ(builtin_mesh.ranks[r].notifies, pm1 * (chunks + 1) + pm1);
      EXPECT_EQ(builtin_mesh.ranks[r].waits, pm1 * (chunks + 1));
      EXPECT_EQ(builtin_mesh.ranks[r].remote_read_bytes, pm1 * n);
    }
  }
}

// alpha_barrier by hand on a2a3: notifies are free, a notify lands after 1500 ns of link and
// 300 cycles of GM write (166.667 ns); polls every 800 ns: the first wait answers at the 3rd
// look + one period (4 x 800 ns), each further one after one period.
TEST(CardTerms, BarrierAndRatesFromTheConfig) {
  Problem problem;
  problem.ranks = 4;
  problem.elements = 1024;
  const Card card = cost_card("mesh", problem, a2a3());
  EXPECT_NEAR(card.terms.alpha_barrier_ns, 4 * 800.0 + 2 * 800.0, 1e-6);
  // A pull's request crosses the link, the GM reads, the data crosses back.
  EXPECT_NEAR(card.terms.alpha_ns, 2 * 1500.0 + 1400.0 / 1.8, 1e-6);
  EXPECT_NEAR(card.terms.beta_ns_per_byte, 1.0 / 28.0, 1e-9);  // the link, 28 GB/s
  EXPECT_NEAR(card.terms.gamma_ns_per_byte, 1.0 / (128 * 1.8), 1e-9);
  EXPECT_NEAR(card.terms.gamma_startup_ns, 6 / 1.8, 1e-9);  // an add's start-up
}

// Prod's reduces start up by the multiply's 7 cycles, on the card as in the run.
TEST(CardTerms, ProdStartsUpByTheMultiply) {
  Problem problem;
  problem.ranks = 4;
  problem.elements = 16384;
  problem.op = ReduceOp::Prod;
  const Card product = cost_card("ring", problem, a2a3());
  EXPECT_NEAR(product.terms.gamma_startup_ns, 7 / 1.8, 1e-9);
  problem.op = ReduceOp::Sum;
  const Card sum = cost_card("ring", problem, a2a3());
  // Three reduce-scatter rounds each reduce one chunk on every rank's path.
  EXPECT_NEAR(product.time_ns - sum.time_ns, 3 / 1.8, 1e-6);
}

TEST(CardErrors, UnknownKernelAndTooManyRanks) {
  Problem problem;
  problem.ranks = 4;
  EXPECT_THROW(cost_card("nope", problem, a2a3()), InputError);
  problem.ranks = 9;
  EXPECT_THROW(cost_card("mesh", problem, a2a3()), InputError);
}

TEST(Crossover, FinderTakesTheSizeFromWhichTheRingStaysAhead) {
  EXPECT_EQ(find_crossover({1, 2, 3, 4}, {2, 1, 4, 3}), std::optional<std::size_t>(3));
  EXPECT_EQ(find_crossover({1, 2, 3}, {2, 3, 4}), std::nullopt);
  EXPECT_EQ(find_crossover({5, 5}, {1, 1}), std::optional<std::size_t>(0));
}

TEST(Fastest, PicksTheQuickestKernelThatRanAtEachSize) {
  const double none = std::nan("");
  const auto fastest = find_fastest({{3, none, 1, none}, {2, 5, none, none}, {4, 4, 1, none}});
  ASSERT_EQ(fastest.size(), 4u);
  EXPECT_EQ(fastest[0], std::optional<std::size_t>(1));
  EXPECT_EQ(fastest[1], std::optional<std::size_t>(2));
  EXPECT_EQ(fastest[2], std::optional<std::size_t>(0));  // a tie goes to the first listed
  EXPECT_EQ(fastest[3], std::nullopt);
}

// A win of 1 % or less is a tie: the ring must be ahead by more from the crossover on.
TEST(Crossover, AWinWithinTheTieMarginIsNoCrossover) {
  EXPECT_EQ(kCrossoverTiePercent, 1.0);
  EXPECT_EQ(find_crossover({100, 100}, {99.97, 99.5}), std::nullopt);  // 0.03 % and 0.5 %
  EXPECT_EQ(find_crossover({100, 100}, {99.5, 98.9}), std::optional<std::size_t>(1));  // 1.1 %
  EXPECT_EQ(find_crossover({100, 100}, {99.97, 99.97}, 0.0), std::optional<std::size_t>(0));
}

TEST(Busbw, IsAlgbwTimesTwoPMinusOneOverP) {
  EXPECT_DOUBLE_EQ(allreduce_busbw(10.0, 2), 10.0);
  EXPECT_DOUBLE_EQ(allreduce_busbw(10.0, 4), 15.0);
  EXPECT_DOUBLE_EQ(allreduce_busbw(8.0, 8), 14.0);
}

// --- the subcommand ---

TEST(CostcardCommand, CsvColumnsBusbwAndDeterminism) {
  const std::string csv1 = temp_path("costcard_1.csv");
  const std::string csv2 = temp_path("costcard_2.csv");
  std::string out;
  const std::string args = "costcard --kernels mesh --ranks 2,4 -b 1KiB -e 4KiB -f 2 --csv ";
  ASSERT_EQ(run_binary(args + csv1, out), 0) << out;
  ASSERT_EQ(run_binary(args + csv2, out), 0) << out;
  std::ifstream a(csv1), b(csv2);
  std::stringstream sa, sb;
  sa << a.rdbuf();
  sb << b.rdbuf();
  EXPECT_EQ(sa.str(), sb.str());
  const auto rows = read_csv(csv1);
  ASSERT_EQ(rows.size(), 6u);  // 2 P x 3 sizes
  for (const char* column :
       {"kernel", "P", "dtype", "op", "bytes_per_rank", "time_ns", "card_time_ns", "deviation_pct",
        "remote_read_bytes", "card_remote_read_bytes", "rounds", "card_rounds", "algbw_GBps",
        "busbw_GBps"}) {
    EXPECT_EQ(rows[0].count(column), 1u) << column;
  }
  for (const auto& row : rows) {
    const int p = std::stoi(row.at("P"));
    const double bytes = std::stod(row.at("bytes_per_rank"));
    const double algbw = std::stod(row.at("algbw_GBps"));
    EXPECT_NEAR(algbw, bytes / std::stod(row.at("time_ns")), 1e-4 * algbw);
    // Both columns are printed to 6 significant digits: each carries half a unit of the last.
    EXPECT_NEAR(std::stod(row.at("busbw_GBps")), algbw * 2 * (p - 1) / p, 1e-5 * algbw * 2);
    EXPECT_EQ(row.at("remote_read_bytes"), row.at("card_remote_read_bytes"));
    EXPECT_EQ(std::stod(row.at("remote_read_bytes")), (p - 1) * bytes);
    EXPECT_EQ(row.at("rounds"), "3");
  }
}

// A synthetic platform where only the poll period T and the DMA queue's rate (beta, 1 ns/B)
// cost anything, and a notify lands 1 ns after it is sent. Then
//   mesh ~ P T (barrier: first wait 2T, P-2 more of T) + (P-1) n beta (one queue, in turn)
//   ring ~ 2(P-1) x 2T (each round's wait) + 2(P-1) n/P beta
// so the ring wins above n* = (4(P-1) - P) T / ((P-1)(1 - 2/P) beta), never at P = 2.
// A deviation's parts add up to it: on the calibrated profile the P = 4 mesh at 16 KiB is off
// its card by the launch skew (rank 3 starts 765698.3 ns after rank 0), the launch set-up
// (40631 cycles at 1.8 GHz, 22572.8 ns) and 180 ns of barrier wait.
TEST(CostcardCommand, DeviationIsAttributedWhole) {
  std::string out;
  ASSERT_EQ(run_binary("costcard -p a2a3-910b2 --kernels mesh --ranks 4 -b 16KiB -e 16KiB", out), 0)
      << out;
  std::istringstream lines(out);
  std::string line;
  double time_ns = 0, card_ns = 0, attributed_ns = 0;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string kernel, ranks, bytes;
    if (line.rfind("mesh ", 0) == 0) words >> kernel >> ranks >> bytes >> time_ns >> card_ns;
    if (line.find(" vs card: ") == std::string::npos) continue;
    for (std::size_t at = line.find(" +"); at != std::string::npos; at = line.find(" +", at + 1))
      attributed_ns += std::stod(line.substr(at + 1));
    for (std::size_t at = line.find(" -"); at != std::string::npos; at = line.find(" -", at + 1))
      if (std::isdigit(static_cast<unsigned char>(line[at + 2])))
        attributed_ns += std::stod(line.substr(at + 1));
    EXPECT_NE(line.find("launch skew +765698.3 ns, launch set-up +22572.8 ns"), std::string::npos)
        << line;
  }
  ASSERT_GT(card_ns, 0) << out;
  EXPECT_NEAR(attributed_ns, time_ns - card_ns, 0.5) << out;
}

TEST(CostcardCommand, CrossoverOnASyntheticPlatform) {
  const double poll_ns = 1000;
  const double beta = 1.0;  // ns per byte: 1 byte per cycle at 1 GHz
  const std::string keys =
      " --platform.clock_GHz 1 --sync.poll_period_cycles 1000 --dma.remote_bytes_per_cycle 1"
      " --link.bandwidth_GBps 1000 --link.latency_ns 1 --gm.read_latency_cycles 0"
      " --gm.write_latency_cycles 0 --gm.bandwidth_GBps 1000000 --dma.mte2_bytes_per_cycle 1e6"
      " --dma.mte3_bytes_per_cycle 1e6 --vector.bytes_per_cycle 1e6 --vector.startup_cycles 0";
  std::string out;
  ASSERT_EQ(run_binary("costcard --kernels mesh,ring --ranks 2,4,8 -b 1KiB -e 64KiB" + keys, out),
            0)
      << out;
  for (int p : {2, 4, 8}) {
    const std::string head = "ring vs mesh, P = " + std::to_string(p) + ": ";
    const std::size_t at = out.find(head);
    ASSERT_NE(at, std::string::npos) << out;
    const std::string line = out.substr(at + head.size(), out.find('\n', at) - at - head.size());
    if (p == 2) {
      EXPECT_EQ(line.rfind("the ring never wins", 0), 0u) << line;
      continue;
    }
    const double n_star = (4.0 * (p - 1) - p) * poll_ns / ((p - 1) * (1 - 2.0 / p) * beta);
    std::uint64_t expected = 1024;
    while (static_cast<double>(expected) <= n_star) expected *= 2;
    EXPECT_EQ(line.rfind("from " + std::to_string(expected / 1024) + "KiB", 0), 0u)
        << "n* = " << n_star << ": " << line;
  }
}

// Two servers of 8: hierarchical pays two server barriers and one exchange of N/8 over the
// NICs, where rhd pays four steps (three over HCCS, one over the NIC) of halving and doubling
// and the ring 30 neighbour rounds: hierarchical wins at both sizes, in the runs and the cards.
TEST(CostcardCommand, ReportsTheFastestOfTheAlgorithmsAtScale) {
  std::string out;
  ASSERT_EQ(run_binary("costcard -p a2a3-cluster --kernels ring,rhd,hierarchical --inter rhd "
                       "--ranks 16 -b 64KiB -e 128KiB --ideal",
                       out),
            0)
      << out;
  EXPECT_NE(out.find("hierarchical/rhd    16      64KiB"), std::string::npos) << out;
  EXPECT_NE(out.find("  P = 16: hierarchical/rhd at 64KiB..128KiB (cards: hierarchical/rhd)\n"),
            std::string::npos)
      << out;
}

// A core-count sweep: the "Core counts" table keeps the points table's kernel column, so P and
// bytes stand under each other in both. At 64 KiB and P = 2 four blocks are fastest (each
// block pulls a quarter of the tiles; on the ideal platform nothing they share binds), and
// neither one nor two comes within 5 % of them.
TEST(CostcardCommand, CoreCountsTableIsAsWideAsThePointsTable) {
  std::string out;
  ASSERT_EQ(run_binary("costcard -p a2a3-910b2 --kernels host_mesh --ranks 2 -b 64KiB -e 64KiB "
                       "--core-num 1,2,4 --ideal",
                       out),
            0)
      << out;
  EXPECT_NE(out.find("\nkernel               P      bytes     time_ns"), std::string::npos) << out;
  EXPECT_NE(out.find("\nhost_mesh/4          2      64KiB"), std::string::npos) << out;
  EXPECT_NE(out.find("\nkernel               P      bytes   fastest    time_ns   within_5%"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\nhost_mesh            2      64KiB         4 "), std::string::npos) << out;
  const std::size_t row = out.find("\nhost_mesh            2      64KiB         4 ");
  ASSERT_NE(row, std::string::npos);
  std::istringstream fields(out.substr(row, out.find('\n', row + 1) - row));
  std::string kernel, bytes;
  int ranks = 0, fastest = 0, enough = 0;
  double fastest_ns = 0, enough_ns = 0;
  fields >> kernel >> ranks >> bytes >> fastest >> fastest_ns >> enough >> enough_ns;
  EXPECT_EQ(enough, 4);
  EXPECT_EQ(enough_ns, fastest_ns);
}

// `--kernels builtin` sweeps the builtin in both modes; the crossover line gives the margins
// and the result on the ideal platform beside the cards'.
TEST(CostcardCommand, BuiltinMeansBothModesAndTheCrossoverShowsItsMargins) {
  std::string out;
  ASSERT_EQ(run_binary("costcard --kernels builtin --ranks 2 -b 256 -e 2K", out), 0) << out;
  EXPECT_NE(out.find("\nbuiltin_mesh         2       1KiB"), std::string::npos) << out;
  EXPECT_NE(out.find("\nbuiltin_ring         2       2KiB"), std::string::npos) << out;
  const std::string head =
      "builtin_ring vs builtin_mesh, P = 2: the ring never wins up to 2KiB [2KiB: ring ";
  const std::size_t at = out.find(head);
  ASSERT_NE(at, std::string::npos) << out;
  const std::string line = out.substr(at, out.find('\n', at) - at);
  EXPECT_NE(line.find(" % slower, "), std::string::npos) << line;
  EXPECT_NE(line.find("]; --ideal: never; cards: never; rule of thumb does not hold"),
            std::string::npos)
      << line;
}

// The plot script, as the README runs it: one file per platform, P, dtype and op, so two
// platforms' sweeps do not overwrite each other, at 150 dpi.
TEST(CostcardCommand, PlotsOfTwoPlatformsKeepTheirOwnNames) {
  if (std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") != 0) {
    GTEST_SKIP() << "python3-matplotlib is not installed";
  }
  const std::string dir = temp_path("plots");
  std::string out;
  for (const char* platform : {"a2a3", "ring8"}) {
    const std::string csv = temp_path(std::string("sweep_") + platform + ".csv");
    ASSERT_EQ(run_binary(std::string("costcard --kernels mesh --ranks 2 -b 1K -e 2K -p ") +
                             platform + " --csv " + csv,
                         out),
              0);
    ASSERT_EQ(std::system((ARS_SOURCE_DIR "/scripts/plot_costcard.py sweep " + csv + " " + dir +
                           " >/dev/null")
                              .c_str()),
              0);
  }
  for (const char* name : {"/costcard_a2a3_P2_fp32_sum.png", "/costcard_ring8_P2_fp32_sum.png"}) {
    EXPECT_EQ(png_pixels_per_metre(dir + name), 5906u) << name;
  }
}

// bench_scale's results drawn by scripts/plot_scale.py: the hand ring's quiet family alone (the
// full report's point and a point that failed are left out), each point's wall time shared
// over its P(2P-2) rank-rounds and its memory over its ranks, printed as drawn.
TEST(ScalePlot, PrintsWhatItDrawsOfTheQuietRingAlone) {
  if (std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") != 0) {
    GTEST_SKIP() << "python3-matplotlib is not installed";
  }
  const std::string bench = temp_path("bench_scale.json");
  std::ofstream(bench) << R"({"benchmarks": [
    {"name": "RingTimingOnly/ring8_quiet/8/iterations:1/manual_time",
     "process_wall_s": 0.112, "peak_rss_MiB": 10},
    {"name": "RingTimingOnly/ring8/1024/iterations:1/manual_time",
     "process_wall_s": 8, "peak_rss_MiB": 400},
    {"name": "RingTimingOnly/ring8_quiet/1024/iterations:1/manual_time",
     "process_wall_s": 5.234688, "peak_rss_MiB": 100},
    {"name": "RingTimingOnly/ring8_quiet/4096/iterations:1/manual_time",
     "error_occurred": true}]})";
  const std::string png = temp_path("scale.png");
  const std::string printed = temp_path("scale.txt");
  ASSERT_EQ(std::system((ARS_SOURCE_DIR "/scripts/plot_scale.py " + png + " " + bench +
                         " --target 4096=60 > " + printed)
                            .c_str()),
            0);
  std::ifstream in(printed);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // 0.112 s / (8 x 14) = 1 ms; 5.234688 s / (1024 x 2046) = 2.4985 us; 10 MiB / 8 = 1280 KiB.
  EXPECT_EQ(text,
            "P\twall_s\trank_rounds\tus_per_rank_round\tpeak_MiB\tKiB_per_rank\n"
            "8\t0.112\t112\t1000.000\t10\t1280.0\n"
            "1024\t5.23469\t2095104\t2.499\t100\t100.0\n");
  EXPECT_EQ(png_pixels_per_metre(png), 5906u);
}

// --timing-only moves no payload: every time, count and card of the sweep is the same as with
// real data, and only the check is gone (the wrong column says N/A in the CSV and in
// nccl-tests' table). Its points are its own: a points file of the checked sweep, resumed with
// --timing-only, gives up none of them.
TEST(CostcardCommand, TimingOnlyKeepsEveryTimeAndDropsTheCheck) {
  const std::string checked_csv = temp_path("costcard_checked.csv");
  const std::string timing_csv = temp_path("costcard_timing_only.csv");
  const std::string points = temp_path("costcard_checked.points");
  std::remove(points.c_str());
  const std::string args = "costcard --kernels mesh,ring --ranks 2,4 -b 1KiB -e 4KiB ";
  std::string out;
  ASSERT_EQ(run_binary(args + "--csv " + checked_csv + " --points " + points, out), 0) << out;
  ASSERT_EQ(
      run_binary(args + "--timing-only --resume --points " + points + " --csv " + timing_csv, out),
      0)
      << out;
  // nccl-tests' tables: every one of the 12 rows ends in N/A (none was checked or reused).
  std::size_t unchecked = 0;
  for (std::size_t at = out.find(" N/A\n"); at != std::string::npos;
       at = out.find(" N/A\n", at + 1))
    ++unchecked;
  EXPECT_EQ(unchecked, 12u) << out;
  auto checked = read_csv(checked_csv);
  auto timing = read_csv(timing_csv);
  ASSERT_EQ(checked.size(), 12u);  // 2 kernels x 2 P x 3 sizes
  ASSERT_EQ(timing.size(), checked.size());
  for (std::size_t i = 0; i < checked.size(); ++i) {
    EXPECT_EQ(checked[i].at("wrong"), "0");
    EXPECT_EQ(timing[i].at("wrong"), "N/A");
    checked[i].erase("wrong");
    timing[i].erase("wrong");
    EXPECT_EQ(timing[i], checked[i]) << "row " << i;
  }
}

TEST(CostcardCommand, BadInputIsAOneLineErrorWithCode2) {
  std::string out;
  EXPECT_EQ(run_binary("costcard --ranks 1", out), 2);
  EXPECT_EQ(run_binary("costcard -f 1", out), 2);
  EXPECT_EQ(run_binary("costcard --kernels barrier", out), 2);
  EXPECT_EQ(run_binary("costcard -b 4KiB -e 1KiB", out), 2);
  EXPECT_EQ(run_binary("costcard --link.bandwidth_GBps 0", out), 2);
  EXPECT_EQ(run_binary("costcard --kernels ring --inter rhd", out), 2);
  EXPECT_EQ(run_binary("costcard --kernels hierarchical --inter tree", out), 2);
}

}  // namespace
}  // namespace ars
