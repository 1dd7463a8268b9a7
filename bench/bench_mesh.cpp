// How fast the simulator runs, against the rate SystemC itself allows.
//
// (a) SystemCWaitOneNs: one thread doing wait(1, SC_NS), the cheapest timed step SystemC has.
// (b) MeshP8x4MiB: the P=8 mesh of 4 MiB FP32 per rank on a2a3, with payload and golden check,
//     as `allreduce-sim -p a2a3 -d 0,...,7 --size 4MiB` runs it.
//
// SystemC elaborates once per process, so every iteration of (b) runs in a forked child
// (run_batch), and the iteration time is the child's own measurement of its simulation
// (sc_start to the end, UseManualTime): neither fork, elaboration, input fill nor the golden
// check is counted there. The child's whole life, measured from here, is reported apart as
// process_wall_s. (a) elaborates in this process, so it must run after (b): benchmarks run in
// registration order, and (b) refuses to run once (a) has elaborated.
//
// Counters: sim_ops_per_s (TLM transactions and kernel operations of (b) per wall second),
// waits_per_s (of (a)), and on (a), when (b) ran first, ops_to_wait_ratio = their quotient.
#include <benchmark/benchmark.h>

#include <chrono>

#include <systemc>

#include "sim/config/config.h"
#include "sim/studies/batch.h"

namespace ars {
namespace {

bool elaborated = false;         // (a) has built its module in this process
double mesh_ops_per_second = 0;  // (b)'s rate, for the ratio; 0 until (b) has run

void MeshP8x4MiB(benchmark::State& state) {
  if (elaborated) {
    state.SkipWithError("this process has elaborated SystemC: run MeshP8x4MiB first");
    return;
  }
  RunRequest request;
  request.platform =
      load_platform(resolve_platform_path("a2a3"), boost::program_options::variables_map());
  request.devices = {0, 1, 2, 3, 4, 5, 6, 7};
  request.kernel = "mesh";
  request.problem.elements = 4 * 1024 * 1024 / 4;
  request.problem.dtype = DType::FP32;

  double operations = 0;
  double simulation_seconds = 0;
  double process_seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const BatchResult run = run_batch({request}, 1).at(0);
    process_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!run.error.empty() || !run.result.correct) {
      state.SkipWithError(run.error.empty() ? "the mesh result is wrong" : run.error.c_str());
      return;
    }
    state.SetIterationTime(run.result.wall_seconds);
    operations += static_cast<double>(run.result.simulated_operations);
    simulation_seconds += run.result.wall_seconds;
  }
  const double iterations = static_cast<double>(state.iterations());
  mesh_ops_per_second = operations / simulation_seconds;
  state.counters["sim_ops_per_s"] = mesh_ops_per_second;
  state.counters["sim_ops"] = operations / iterations;
  state.counters["sim_wall_s"] = simulation_seconds / iterations;
  state.counters["process_wall_s"] = process_seconds / iterations;
}
BENCHMARK(MeshP8x4MiB)->UseManualTime()->Iterations(5)->Unit(benchmark::kMillisecond);

// A plain struct rather than SC_MODULE/SC_CTOR: clang-format cannot lay those macros out.
struct Ticker : sc_core::sc_module {
  explicit Ticker(sc_core::sc_module_name name) : sc_module(name) { SC_THREAD(tick); }
  SC_HAS_PROCESS(Ticker);
  void tick() {
    for (;;) wait(1, sc_core::SC_NS);
  }
};

void SystemCWaitOneNs(benchmark::State& state) {
  constexpr int kWaitsPerIteration = 100000;
  static Ticker* ticker = nullptr;
  if (ticker == nullptr) {
    elaborated = true;
    ticker = new Ticker("ticker");             // lives as long as the simulation: to process exit
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate outside the timed loop
  }
  // Wall time, as the mesh's rate is: the ratio compares like with like.
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) sc_core::sc_start(kWaitsPerIteration, sc_core::SC_NS);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double waits = static_cast<double>(state.iterations()) * kWaitsPerIteration;
  state.SetItemsProcessed(static_cast<std::int64_t>(waits));
  state.counters["waits_per_s"] = waits / seconds;
  if (mesh_ops_per_second > 0) {
    state.counters["ops_to_wait_ratio"] = mesh_ops_per_second / (waits / seconds);
  }
}
BENCHMARK(SystemCWaitOneNs)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ars
