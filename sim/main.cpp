// allreduce-sim: see sim/cli.h, or run with --help.
#include <cstdlib>
#include <iostream>

#include <systemc>

#include "sim/cli.h"

int sc_main(int argc, char* argv[]) {
  return ars::cli_main(argc, argv, std::cout, std::cerr);
}

// SystemC prints its banner when the kernel starts up, before sc_main; silence it unless the
// user asked for it.
namespace {
const int kQuietBanner = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); }();
}  // namespace
