// The same command gives byte-identical JSON, VCD, GTKWave save file and schedule dumps, for every
// registered kernel (the registry is read when the test runs, so kernels added later are covered).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "tests/run_process.h"

namespace ars {
namespace {

using test::ScratchDir;

struct Outputs {
  int exit_code;
  std::string json;
  std::string vcd;
  std::string schedule;
  std::string gtkw;
};

Outputs run_once(const std::string& kernel) {
  ScratchDir dir;
  const test::ProcessResult run =
      test::run_binary({"-k", kernel, "-d", "0,1,2,3", "--size", "4096", "--json", dir / "run.json",
                        "--vcd", dir / "run.vcd", "--dump-schedule", dir / "schedule.txt"});
  EXPECT_EQ(run.signal, 0) << kernel;
  return {run.exit_code, test::read_file(dir / "run.json"), test::read_file(dir / "run.vcd"),
          test::read_file(dir / "schedule.txt"), test::read_file(dir / "run.gtkw")};
}

TEST(Determinism, EveryKernelWritesIdenticalBytesTwice) {
  ASSERT_FALSE(kernel_registry().empty());
  for (const KernelSpec& kernel : kernel_registry()) {
    SCOPED_TRACE(kernel.name);
    const Outputs first = run_once(kernel.name);
    const Outputs second = run_once(kernel.name);
    EXPECT_EQ(first.exit_code, 0);
    EXPECT_EQ(second.exit_code, 0);
    EXPECT_FALSE(first.json.empty());
    EXPECT_FALSE(first.vcd.empty());
    EXPECT_FALSE(first.schedule.empty());
    EXPECT_FALSE(first.gtkw.empty());
    EXPECT_TRUE(first.json == second.json) << "JSON differs";
    EXPECT_TRUE(first.vcd == second.vcd) << "VCD differs";
    EXPECT_TRUE(first.schedule == second.schedule) << "schedule differs";
    EXPECT_TRUE(first.gtkw == second.gtkw) << "GTKWave save file differs";
  }
}

}  // namespace
}  // namespace ars
