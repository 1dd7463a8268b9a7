// A command line parsed as the binary parses it, with the kernel, problem and layout it selects:
// for tests that ask the run's own estimates and counts without running it.
#pragma once

#include <string>
#include <vector>

#include "sim/cli.h"
#include "sim/run.h"

namespace ars::test {

struct ParsedRun {
  RunRequest request;
  const KernelSpec* kernel = nullptr;
  Problem problem;
  Layout layout;
};

// `args` are the arguments after the program's name.
inline ParsedRun parse_run(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"allreduce-sim"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  ParsedRun run;
  run.request = parse_run_request(static_cast<int>(argv.size()), argv.data()).request;
  run.kernel = &run_kernel(run.request);
  run.problem = run_problem(run.request);
  run.layout = run.kernel->layout(run.problem);
  return run;
}

}  // namespace ars::test
