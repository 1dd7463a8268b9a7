// Measured allreduce times against the simulator: `calibrate` fits chosen platform keys to a
// CSV of measurements, `validate` reports how far a profile is from them.
//
// The CSV has a header line naming the columns kernel, P, payload_bytes and device_us (any
// order, other columns ignored), and optionally core_num (blocks per rank, default 1) and
// codegen (a codegen profile each point runs under, default none); lines starting with '#' and
// blank lines are skipped; fields are plain, unquoted. Without a kernel column every point is
// builtin_mesh (the shipped 910B2 data), and both commands say so. payload_bytes is per rank and
// FP32; device_us is the slowest rank's on-device time, which the simulator's device time (latest
// finish minus earliest start) stands for.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace ars {

struct MeasuredPoint {
  std::string kernel;
  int ranks = 0;
  std::uint64_t payload_bytes = 0;
  double device_us = 0;
  int core_num = 1;     // column core_num, when present: SPMD blocks per rank
  std::string codegen;  // column codegen, when present: a profile in configs/codegen/ or a path
};

struct MeasuredData {
  std::vector<MeasuredPoint> points;
  bool kernel_column = true;  // false: every point was taken as builtin_mesh
  bool core_num_column = false;
  bool codegen_column = false;
};

// Reads and checks a measurement CSV; throws InputError naming the file, line and field.
MeasuredData read_measurements(const std::string& path);

struct PointError {
  double simulated_us;
  double error_percent;  // 100 (simulated - measured) / measured
};

struct ErrorSummary {
  std::vector<PointError> points;
  double mean_abs_percent = 0;     // MAPE
  double geomean_abs_percent = 0;  // exp(mean(ln |error %|)); 0 when a point is exact
  double max_abs_percent = 0;
};

ErrorSummary summarise_errors(const std::vector<MeasuredPoint>& measured,
                              const std::vector<double>& simulated_us);

// The errors of one kernel at one rank count, so that a good average cannot hide a bad family.
struct FamilyError {
  std::string kernel;
  int ranks = 0;
  int core_num = 1;
  std::string codegen;
  int points = 0;
  double mean_abs_percent = 0;
  double max_abs_percent = 0;
};

// One entry per (kernel, P, core_num, codegen) in the data, ordered by kernel, then P, then
// core_num and codegen.
std::vector<FamilyError> summarise_families(const std::vector<MeasuredPoint>& measured,
                                            const ErrorSummary& summary);

// A codegen A/B: at one kernel, P, core_num and size, the relative change from the `before`
// profile to the `after` one, measured (the median over legs of each leg's change; the legs
// are the points' order within each profile) and simulated. `leg_spread_percent` is the largest
// minus the smallest leg's change: the measurement's own noise, to read the difference against.
struct CodegenChange {
  std::string kernel;
  int ranks = 0;
  int core_num = 1;
  std::uint64_t payload_bytes = 0;
  int legs = 0;
  double measured_percent = 0;
  double leg_spread_percent = 0;
  double simulated_percent = 0;
};

// Every (kernel, P, core_num, size) that has points under both `before` and `after`.
std::vector<CodegenChange> codegen_changes(const std::vector<MeasuredPoint>& measured,
                                           const ErrorSummary& summary);

// The subcommands; argv[0] is the subcommand's name. Exit codes as the main command.
int calibrate_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);
int validate_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace ars
