// How the simulator scales with the rank count, run as the command a user types (the
// allreduce-sim binary next to this one, stdout into a file), 1 MiB per rank, --timing-only:
//   RingTimingOnly:    the hand ring on ring8 grown to P devices
//     allreduce-sim -p ring8 --platform.devices P -d all -k ring --size 1MiB --timing-only
//   and the same at 64 KiB per rank, where from P = 256 on a round's chunk is under the 512 B
//   full-rate alignment: chunks at different alignments stream at different rates, so the
//   ranks' times drift apart by a few ns instead of marching in step (ring8_64KiB_quiet), and at
//   64 MiB per rank on 64 devices, where every transfer is a train of many bursts
//   (ring8_64MiB_quiet)
//   ClusterTimingOnly: the hand ring and the hierarchical kernel on a2a3-cluster, P/8 servers,
//   the hierarchical kernel with rhd between servers at 1024, 2000, 8192 and 16,384 NPUs, and
//   flat rhd at 1024, 8192 and 16,384 NPUs
//     allreduce-sim -p a2a3-cluster --cluster.servers P/8 -d all -k KERNEL --size 1MiB ...
//       [--inter rhd]
//
// Counters: process_wall_s (the whole process: elaboration, simulation, report),
// sim_wall_s and sim_ops_per_s (the simulation alone, from the report's last lines) and
// peak_rss_MiB (the process's peak resident memory, from wait4). The `quiet` families add -q,
// as the targets' commands do: the summary shows no record, so the run keeps none, and
// only process_wall_s and peak_rss_MiB are reported (-q prints no rate). Targets, not asserted:
// the ring at P = 1024 (ring8 and the cluster) within 10 s and 1.5 GB, at P = 4096 within 60 s
// and 6 GB, ops/s at P = 1024 within 2x of P = 8; hierarchical at 1024 NPUs within 10 s.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;
namespace ars {
namespace {

struct ProcessRun {
  bool ok = false;
  double wall_seconds = 0;
  double peak_rss_mib = 0;
  std::string out;
};

ProcessRun run_command(std::vector<std::string> args) {
  const std::filesystem::path binary =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / "allreduce-sim";
  const std::string out_path =
      (std::filesystem::temp_directory_path() / ("bench_scale." + std::to_string(::getpid())))
          .string();
  args.insert(args.begin(), binary.string());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ProcessRun run;
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return run;
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  run.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  std::ifstream in(out_path);
  std::ostringstream text;
  text << in.rdbuf();
  run.out = text.str();
  std::filesystem::remove(out_path);
  run.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return run;
}

// Runs `args` once per iteration and reports the counters above.
void measure(benchmark::State& state, std::vector<std::string> args, bool quiet) {
  if (quiet) args.push_back("-q");
  double process_seconds = 0, simulation_seconds = 0, operations = 0, peak = 0;
  for (auto _ : state) {
    const ProcessRun run = run_command(args);
    // "simulation: N operations in S s wall (...)"
    const std::size_t at = run.out.find(quiet ? "device time: " : "simulation: ");
    double ops = 0, seconds = 0;
    if (!run.ok || at == std::string::npos ||
        (!quiet && std::sscanf(run.out.c_str() + at, "simulation: %lf operations in %lf", &ops,
                               &seconds) != 2)) {
      state.SkipWithError("the allreduce did not run to the end");
      return;
    }
    state.SetIterationTime(run.wall_seconds);
    process_seconds += run.wall_seconds;
    simulation_seconds += seconds;
    operations += ops;
    peak = std::max(peak, run.peak_rss_mib);
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["process_wall_s"] = process_seconds / iterations;
  state.counters["peak_rss_MiB"] = peak;
  if (quiet) return;
  state.counters["sim_wall_s"] = simulation_seconds / iterations;
  state.counters["sim_ops_per_s"] = operations / simulation_seconds;
}

void RingTimingOnly(benchmark::State& state, const std::string& size, bool quiet) {
  measure(state,
          {"-p", "ring8", "--platform.devices", std::to_string(state.range(0)), "-d", "all", "-k",
           "ring", "--size", size, "--timing-only"},
          quiet);
}

// `inter`: the hierarchical kernel's allreduce between servers ("": its default, the ring).
void ClusterTimingOnly(benchmark::State& state, const std::string& kernel, const std::string& inter,
                       bool quiet) {
  constexpr int kNpusPerServer = 8;  // a2a3-cluster's cluster.npus_per_server
  const int servers = static_cast<int>(state.range(0)) / kNpusPerServer;
  std::vector<std::string> args = {"-p",
                                   "a2a3-cluster",
                                   "--cluster.servers",
                                   std::to_string(servers),
                                   "-d",
                                   "all",
                                   "-k",
                                   kernel,
                                   "--size",
                                   "1MiB",
                                   "--timing-only"};
  if (!inter.empty()) args.insert(args.end(), {"--inter", inter});
  measure(state, args, quiet);
}

// One process per point.
void RankCounts(benchmark::internal::Benchmark* points) {
  points->Arg(8)->Arg(256)->Arg(1024)->Arg(4096)->UseManualTime()->Iterations(1)->Unit(
      benchmark::kSecond);
}
// The quiet ring at 8 and at every power of two from 64 on: the wall time of a rank-round stays
// flat while the ranks' state fits the host's caches, and climbs once it does not
// (scripts/plot_scale.py).
void QuietRankCounts(benchmark::internal::Benchmark* points) {
  for (const int p : {8, 64, 256, 512, 1024, 2048, 4096}) points->Arg(p);
  points->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
}
void DriftingRankCounts(benchmark::internal::Benchmark* points) {
  points->Arg(256)->Arg(1024)->Arg(2048)->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
}
// Large transfers: what a transfer's bursts cost when each goes as a train (see BurstTrain).
void LargeMessageRankCounts(benchmark::internal::Benchmark* points) {
  points->Arg(64)->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
}
void NpuCounts(benchmark::internal::Benchmark* points) {
  points->Arg(128)->Arg(1024)->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
}
// 2000 NPUs: 250 servers, not a power of two, where rhd's fold meets and the tries decide. Up
// to a topology's 16,384 devices, where only the cores' threads fit Linux's default cap on
// memory mappings: flat rhd never waits for a DMA queue, and hierarchical rhd's queues, timed
// whole, are methods.
void LargeNpuCounts(benchmark::internal::Benchmark* points) {
  points->Arg(1024)->Arg(2000)->Arg(8192)->Arg(16384)->UseManualTime()->Iterations(1)->Unit(
      benchmark::kSecond);
}
void FlatRhdNpuCounts(benchmark::internal::Benchmark* points) {
  points->Arg(1024)->Arg(8192)->Arg(16384)->UseManualTime()->Iterations(1)->Unit(
      benchmark::kSecond);
}
BENCHMARK_CAPTURE(RingTimingOnly, ring8, std::string("1MiB"), false)->Apply(RankCounts);
BENCHMARK_CAPTURE(RingTimingOnly, ring8_quiet, std::string("1MiB"), true)->Apply(QuietRankCounts);
BENCHMARK_CAPTURE(RingTimingOnly, ring8_64KiB_quiet, std::string("64KiB"), true)
    ->Apply(DriftingRankCounts);
BENCHMARK_CAPTURE(RingTimingOnly, ring8_64MiB_quiet, std::string("64MiB"), true)
    ->Apply(LargeMessageRankCounts);
BENCHMARK_CAPTURE(ClusterTimingOnly, ring_quiet, std::string("ring"), std::string(), true)
    ->Apply(NpuCounts);
BENCHMARK_CAPTURE(ClusterTimingOnly, hierarchical_quiet, std::string("hierarchical"), std::string(),
                  true)
    ->Apply(NpuCounts);
BENCHMARK_CAPTURE(ClusterTimingOnly, hierarchical_rhd_quiet, std::string("hierarchical"),
                  std::string("rhd"), true)
    ->Apply(LargeNpuCounts);
BENCHMARK_CAPTURE(ClusterTimingOnly, rhd_quiet, std::string("rhd"), std::string(), true)
    ->Apply(FlatRhdNpuCounts);

}  // namespace
}  // namespace ars
