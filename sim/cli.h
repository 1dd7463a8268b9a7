// The allreduce-sim command line: options, the run, its outputs and the exit code
// (0 correct, 1 wrong result or a run that cannot finish, 2 bad input).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "kernels/api.h"
#include "sim/outputs/report.h"
#include "sim/run.h"

namespace ars {

// The command line, parsed and checked: what cli_main will do, before anything runs.
struct CommandLine {
  enum class Action { Run, Help, PrintConfig };
  Action action = Action::Run;
  std::string text;  // Help: the usage; PrintConfig: the platform as INI
  RunRequest request;
  std::string json_path;      // empty: no JSON
  std::string schedule_path;  // empty: no schedule dump
  bool schedule_times = false;
  ReportOptions report;
};

// Throws InputError for a bad option, value, config file or output path; runs nothing.
CommandLine parse_run_request(int argc, const char* const* argv);

// The whole command: a subcommand (costcard, calibrate, validate) or a run.
int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// One size vocabulary for every command: a bare number counts elements ("64"); with a unit it
// counts bytes ("512B", "16K" or "16KiB", "4M" or "4MiB", "1G" or "1GiB", K/M/G also in lower
// case: powers of 1024, as nccl-tests reads them). Returns elements; errors name `option`.
std::uint64_t parse_size(const std::string& text, DType dtype,
                         const std::string& option = "--size");

// The kernel a user named with `option`: a registered kernel, or `builtin` in the mode `mode`.
// `mode_given`: --mode was on the command line, which only the builtin takes. Errors list
// every accepted name and suggest the nearest.
std::string resolve_kernel(const std::string& option, const std::string& name,
                           const std::string& mode, bool mode_given);

// `-d` (or the list `option` names): comma-separated devices and ranges ("0-7,16-23"), or "all"
// of the platform's `platform_devices`; ranks follow the listed order. InputError for an empty
// item, a reversed range, a device listed twice or one outside the topology.
std::vector<int> parse_devices(const std::string& text, int platform_devices,
                               const std::string& option = "-d");

// "fp32"/"fp16" and "sum"/"max"/"min"/"prod" (any case); InputError otherwise.
DType parse_dtype(const std::string& text);
ReduceOp parse_op(const std::string& text);

}  // namespace ars
