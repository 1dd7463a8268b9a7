// The benchmarks' entry: libsystemc supplies main() and calls sc_main, so benchmark_main is
// not linked.
#include <benchmark/benchmark.h>

#include <systemc>

int sc_main(int argc, char* argv[]) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
