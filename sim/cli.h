// The allreduce-sim command line: options, the run, its outputs and the exit code
// (0 correct, 1 wrong result or a run that cannot finish, 2 bad input).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "kernels/api.h"

namespace ars {

int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// "64" is 64 elements; "16KiB", "4MiB", "512B" are bytes per rank.
std::uint64_t parse_size(const std::string& text, DType dtype);

}  // namespace ars
