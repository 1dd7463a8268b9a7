// allreduce-sim: see sim/cli.h, or run with --help.
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <systemc>

#include "sim/calibrate.h"
#include "sim/cli.h"
#include "sim/costcard.h"

namespace {

using Subcommand = int (*)(int, const char* const*, std::ostream&, std::ostream&);

// `allreduce-sim NAME ...` runs NAME's entry with argv[0] = NAME; anything else is a run.
struct SubcommandEntry {
  const char* name;
  Subcommand main;
};
constexpr SubcommandEntry kSubcommands[] = {
    {"costcard", ars::costcard_main},
    {"calibrate", ars::calibrate_main},
    {"validate", ars::validate_main},
};

}  // namespace

int sc_main(int argc, char* argv[]) {
  if (argc > 1) {
    for (const SubcommandEntry& sub : kSubcommands) {
      if (std::strcmp(argv[1], sub.name) == 0) {
        return sub.main(argc - 1, argv + 1, std::cout, std::cerr);
      }
    }
  }
  return ars::cli_main(argc, argv, std::cout, std::cerr);
}

// SystemC prints its banner when the kernel starts up, before sc_main; silence it unless the
// user asked for it.
namespace {
const int kQuietBanner = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); }();
}  // namespace
