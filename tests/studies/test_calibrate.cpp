// calibrate and validate: CSV reading, the error arithmetic, bad input through the binary, and
// a fit that must recover the parameters a synthetic data set was simulated with.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/api.h"
#include "sim/studies/calibrate.h"

namespace ars {
namespace {

const std::string kData = ARS_TEST_DATA;

struct Command {
  int status;
  std::string output;  // stdout and stderr together
};

Command run_binary(const std::string& args) {
  const char* binary = std::getenv("ARS_BINARY");
  if (binary == nullptr) ADD_FAILURE() << "ARS_BINARY is not set";
  const std::string command = std::string(binary == nullptr ? "false" : binary) + " " + args;
  Command result{-1, ""};
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    result.output.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "ars_calibrate_" + name;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream split(line);
    for (std::string field; std::getline(split, field, ',');) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

// The value of `key` ("section.name") in an INI written by to_ini.
double ini_value(const std::string& path, const std::string& key) {
  const std::string section = "[" + key.substr(0, key.find('.')) + "]";
  const std::string name = key.substr(key.find('.') + 1);
  std::ifstream in(path);
  std::string current;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.front() == '[') current = line;
    if (current == section && line.rfind(name + " = ", 0) == 0) {
      return std::stod(line.substr(name.size() + 3));
    }
  }
  ADD_FAILURE() << key << " not in " << path;
  return NAN;
}

TEST(Calibrate, ErrorArithmeticMatchesHandComputation) {
  const MeasuredData data = read_measurements(kData + "/validate-hand.csv");
  ASSERT_EQ(data.points.size(), 2u);
  // Errors +10 % and -25 %: MAPE 17.5 %, geometric mean sqrt(10 * 25) = 15.8114 %.
  const ErrorSummary summary = summarise_errors(data.points, {110.0, 150.0});
  EXPECT_DOUBLE_EQ(summary.points[0].error_percent, 10.0);
  EXPECT_DOUBLE_EQ(summary.points[1].error_percent, -25.0);
  EXPECT_DOUBLE_EQ(summary.mean_abs_percent, 17.5);
  EXPECT_NEAR(summary.geomean_abs_percent, 15.811388, 1e-6);
  EXPECT_DOUBLE_EQ(summary.max_abs_percent, 25.0);
}

TEST(Calibrate, FamiliesSplitTheErrorsByKernelAndRankCount) {
  MeasuredData data = read_measurements(kData + "/validate-hand.csv");
  data.points.push_back({"ring", 2, 1024, 50.0, 1, ""});
  // mesh P=2 +10 %, mesh P=4 -25 %, ring P=2 +40 %: three families, ordered by kernel, then P.
  const ErrorSummary summary = summarise_errors(data.points, {110.0, 150.0, 70.0});
  const std::vector<FamilyError> families = summarise_families(data.points, summary);
  ASSERT_EQ(families.size(), 3u);
  EXPECT_EQ(families[0].kernel, "mesh");
  EXPECT_EQ(families[0].ranks, 2);
  EXPECT_DOUBLE_EQ(families[0].mean_abs_percent, 10.0);
  EXPECT_EQ(families[1].ranks, 4);
  EXPECT_DOUBLE_EQ(families[1].max_abs_percent, 25.0);
  EXPECT_EQ(families[2].kernel, "ring");
  EXPECT_EQ(families[2].points, 1);
  EXPECT_DOUBLE_EQ(families[2].mean_abs_percent, 40.0);
}

TEST(Calibrate, CodegenChangeIsTheMedianOfTheLegsAgainstTheSimulatedChange) {
  // Legs in file order: before 100, 200; after 90, 150: changes -10 % and -25 %, median -17.5 %,
  // spread 15 points.
  // Simulated before 100 us, after 95 us: -5 %. A size with one profile only is left out.
  std::vector<MeasuredPoint> points = {
      {"builtin_mesh", 2, 1024, 100, 1, "before"}, {"builtin_mesh", 2, 1024, 200, 1, "before"},
      {"builtin_mesh", 2, 1024, 90, 1, "after"},   {"builtin_mesh", 2, 1024, 150, 1, "after"},
      {"builtin_mesh", 2, 4096, 300, 1, "before"},
  };
  const ErrorSummary summary = summarise_errors(points, {100, 100, 95, 95, 300});
  const std::vector<CodegenChange> changes = codegen_changes(points, summary);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].payload_bytes, 1024u);
  EXPECT_EQ(changes[0].legs, 2);
  EXPECT_DOUBLE_EQ(changes[0].measured_percent, -17.5);
  EXPECT_DOUBLE_EQ(changes[0].leg_spread_percent, 15.0);
  EXPECT_NEAR(changes[0].simulated_percent, -5.0, 1e-9);
}

TEST(Calibrate, ExactPointMakesGeometricMeanZero) {
  const MeasuredData data = read_measurements(kData + "/validate-hand.csv");
  const ErrorSummary summary = summarise_errors(data.points, {100.0, 260.0});
  EXPECT_DOUBLE_EQ(summary.mean_abs_percent, 15.0);
  EXPECT_DOUBLE_EQ(summary.geomean_abs_percent, 0.0);
}

TEST(Calibrate, ReadsColumnsAndDefaultsTheKernel) {
  const MeasuredData hand = read_measurements(kData + "/validate-hand.csv");
  EXPECT_TRUE(hand.kernel_column);
  EXPECT_EQ(hand.points[1].kernel, "mesh");
  EXPECT_EQ(hand.points[1].ranks, 4);
  EXPECT_EQ(hand.points[1].payload_bytes, 4096u);
  EXPECT_DOUBLE_EQ(hand.points[1].device_us, 200.0);

  const MeasuredData shipped = read_measurements(kData + "/no-kernel-column.csv");
  EXPECT_FALSE(shipped.kernel_column);
  ASSERT_EQ(shipped.points.size(), 1u);
  EXPECT_EQ(shipped.points[0].kernel, "builtin_mesh");
  EXPECT_EQ(shipped.points[0].payload_bytes, 16384u);
}

TEST(Calibrate, BadCsvIsAClearErrorWithExitTwo) {
  const std::map<std::string, std::string> expected = {
      {"no-device-column.csv", "no 'device_us' column"},
      {"non-numeric.csv", "device_us 'fast' is not a number"},
      {"unknown-kernel.csv", "unknown kernel 'tree'"},
      {"absurd-time.csv", "device_us 1e-300 is not a time from 0.001 us (1 ns) to 3.6e9 us"},
      {"empty.csv", "has no header line"},
      {"missing-file.csv", "no such file"},
  };
  for (const auto& [file, message] : expected) {
    for (const char* command : {"validate -p a2a3", "calibrate -p a2a3"}) {
      const Command result = run_binary(std::string(command) + " --data " + kData + "/" + file);
      EXPECT_EQ(result.status, 2) << command << " " << file << ": " << result.output;
      EXPECT_NE(result.output.find(message), std::string::npos) << result.output;
      EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
    }
  }
}

TEST(Calibrate, FitKeyMustBeAContinuousPlatformKey) {
  const std::map<std::string, std::string> expected = {
      {"dma.queues", "'dma.queues' is not a continuous number"},
      {"no.such_key", "'no.such_key' is not a platform key; the sections are platform, ub"},
      {"link.latency", "'link.latency' is not a platform key (did you mean 'link.latency_ns'?)"}};
  for (const auto& [key, message] : expected) {
    const Command result =
        run_binary("calibrate -p a2a3 --data " + kData + "/validate-hand.csv --fit " + key);
    EXPECT_EQ(result.status, 2) << result.output;
    EXPECT_NE(result.output.find(message), std::string::npos) << result.output;
  }
}

TEST(Calibrate, ValidateWritesConsistentCsv) {
  const std::string csv = temp_path("validate.csv");
  const Command result =
      run_binary("validate -p a2a3 --data " + kData + "/validate-hand.csv --csv " + csv);
  ASSERT_EQ(result.status, 0) << result.output;
  const auto rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"kernel", "P", "payload_bytes", "measured_us",
                                               "simulated_us", "error_percent"}));
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const double measured = std::stod(rows[i][3]);
    const double simulated = std::stod(rows[i][4]);
    EXPECT_GT(simulated, 0);
    EXPECT_NEAR(std::stod(rows[i][5]), 100 * (simulated - measured) / measured, 1e-2);
  }
  // Same inputs, same bytes.
  const std::string again = temp_path("validate-again.csv");
  ASSERT_EQ(
      run_binary("validate -p a2a3 --data " + kData + "/validate-hand.csv --csv " + again).status,
      0);
  EXPECT_EQ(read_csv(csv), read_csv(again));
}

// Simulates a small data set with known parameters, then fits from other starting values.
TEST(Calibrate, FitRecoversKnownParameters) {
  const double true_offset = 60000;
  const double true_rate = 4;
  // Continuous polling keeps the device time a smooth function of both parameters.
  const std::string common = "-p a2a3 --sync.poll_period_cycles 0 --print-config";
  const std::string truth = temp_path("truth.ini");
  const std::string start = temp_path("start.ini");
  write_file(truth, run_binary(common + " --launch.offset_cycles " + std::to_string(true_offset) +
                               " --dma.remote_bytes_per_cycle " + std::to_string(true_rate))
                        .output);
  write_file(start, run_binary(common + " --launch.offset_cycles 90000"
                                        " --dma.remote_bytes_per_cycle 2.5")
                        .output);

  const std::string points = temp_path("points.csv");
  write_file(points,
             "kernel,P,payload_bytes,device_us\n"
             "mesh,2,1024,1\nmesh,2,262144,1\nmesh,4,1024,1\nmesh,4,262144,1\n");
  const std::string simulated = temp_path("simulated.csv");
  ASSERT_EQ(run_binary("validate -p " + truth + " --data " + points + " --csv " + simulated).status,
            0);
  std::string synthetic = "kernel,P,payload_bytes,device_us\n";
  const auto rows = read_csv(simulated);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    synthetic += rows[i][0] + "," + rows[i][1] + "," + rows[i][2] + "," + rows[i][4] + "\n";
  }
  const std::string data = temp_path("synthetic.csv");
  write_file(data, synthetic);

  const std::string fitted = temp_path("fitted.ini");
  const Command result = run_binary("calibrate -p " + start + " --data " + data +
                                    " --fit launch.offset_cycles,dma.remote_bytes_per_cycle"
                                    " --write " +
                                    fitted);
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("held fixed"), std::string::npos);
  // Cycles are also shown in us, the README's unit: the fitted cycles / 1.8 GHz / 1000.
  const std::size_t line = result.output.find("  launch.offset_cycles = ");
  ASSERT_NE(line, std::string::npos) << result.output;
  std::istringstream fit(result.output.substr(line));
  std::string key, equals, base, base_value, equals_us, unit;
  double cycles = 0, us = 0;
  fit >> key >> equals >> cycles >> base >> base_value >> equals_us >> us >> unit;
  EXPECT_EQ(unit, "us") << result.output;
  EXPECT_NEAR(us, cycles / 1.8 / 1000.0, 1e-5 * us);
  EXPECT_NEAR(ini_value(fitted, "launch.offset_cycles"), true_offset, 0.02 * true_offset);
  EXPECT_NEAR(ini_value(fitted, "dma.remote_bytes_per_cycle"), true_rate, 0.02 * true_rate);
  // The written profile is a loadable platform.
  EXPECT_EQ(run_binary("validate -p " + fitted + " --data " + data).status, 0);
}

}  // namespace
}  // namespace ars
