#include "sim/studies/calibrate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>
#include <typeinfo>

#include <boost/algorithm/string.hpp>
#include <boost/program_options.hpp>

#include "kernels/registry.h"
#include "sim/config/codegen.h"
#include "sim/config/config.h"
#include "sim/outputs/output_file.h"
#include "sim/studies/batch.h"

namespace ars {

namespace po = boost::program_options;

namespace {

constexpr const char* kDefaultKernel = "builtin_mesh";

std::string where(const std::string& path, int line) {
  return path + ":" + std::to_string(line);
}

double parse_number(const std::string& field, const std::string& column, const std::string& at) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(field, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (field.empty() || used != field.size() || !std::isfinite(value)) {
    throw InputError(at + ": " + column + " '" + field + "' is not a number");
  }
  return value;
}

// Runs every point once on `platform`; the simulated device time of each, in us. A point
// that cannot run (bad problem, deadlock, time limit) is an InputError naming it.
std::vector<double> simulate(const MeasuredData& data, const PlatformConfig& platform, int jobs) {
  std::vector<RunRequest> requests;
  for (const MeasuredPoint& point : data.points) {
    RunRequest request;
    request.platform = platform;
    if (!point.codegen.empty()) {
      load_codegen(resolve_codegen_path(point.codegen), request.platform);
    }
    request.problem.core_num = point.core_num;
    request.devices.resize(static_cast<std::size_t>(point.ranks));
    std::iota(request.devices.begin(), request.devices.end(), 0);
    request.kernel = point.kernel;
    request.problem.ranks = point.ranks;
    request.problem.elements = point.payload_bytes / dtype_bytes(DType::FP32);
    if (const char* mode = builtin_mode(point.kernel)) request.problem.mode = mode;
    request.timing_only = true;
    requests.push_back(request);
  }
  const std::vector<BatchResult> results = run_batch(requests, jobs);
  std::vector<double> simulated_us;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const MeasuredPoint& point = data.points[i];
    const std::string name = point.kernel + " P=" + std::to_string(point.ranks) +
                             " core_num=" + std::to_string(point.core_num) +
                             " payload_bytes=" + std::to_string(point.payload_bytes);
    if (!results[i].error.empty()) throw InputError(name + ": " + results[i].error);
    if (!results[i].result.completed) {
      throw InputError(name + " did not finish: " + results[i].result.failure);
    }
    simulated_us.push_back(results[i].result.device_time_ns / 1000.0);
  }
  return simulated_us;
}

std::string fixed(double value, int decimals) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(decimals) << value;
  return text.str();
}

std::string significant(double value) {
  std::ostringstream text;
  text << std::setprecision(6) << value;
  return text.str();
}

void print_table(std::ostream& out, const MeasuredData& data, const ErrorSummary& summary) {
  out << std::left << std::setw(14) << "kernel" << std::right << std::setw(4) << "P";
  if (data.core_num_column) out << std::setw(9) << "core_num";
  if (data.codegen_column) out << std::setw(9) << "codegen";
  out << std::setw(15) << "payload_bytes" << std::setw(13) << "measured_us" << std::setw(14)
      << "simulated_us" << std::setw(10) << "error_%"
      << "\n";
  for (std::size_t i = 0; i < data.points.size(); ++i) {
    const MeasuredPoint& p = data.points[i];
    out << std::left << std::setw(14) << p.kernel << std::right << std::setw(4) << p.ranks;
    if (data.core_num_column) out << std::setw(9) << p.core_num;
    if (data.codegen_column) out << std::setw(9) << p.codegen;
    out << std::setw(15) << p.payload_bytes << std::setw(13) << fixed(p.device_us, 1)
        << std::setw(14) << fixed(summary.points[i].simulated_us, 1) << std::setw(10)
        << fixed(summary.points[i].error_percent, 1) << "\n";
  }
  out << "mean absolute error (MAPE): " << fixed(summary.mean_abs_percent, 2) << " %\n"
      << "geometric mean of absolute errors: " << fixed(summary.geomean_abs_percent, 2) << " %\n"
      << "largest absolute error: " << fixed(summary.max_abs_percent, 2) << " %\n";
  const std::vector<FamilyError> families = summarise_families(data.points, summary);
  if (families.size() < 2) return;
  out << "by kernel and P:\n";
  for (const FamilyError& f : families) {
    out << "  " << std::left << std::setw(14) << f.kernel << std::right << " P=" << f.ranks;
    if (f.core_num != 1) out << " core_num=" << f.core_num;
    if (!f.codegen.empty()) out << " codegen=" << f.codegen;
    out << ": " << f.points << (f.points == 1 ? " point" : " points") << ", MAPE "
        << fixed(f.mean_abs_percent, 2) << " %, largest " << fixed(f.max_abs_percent, 2) << " %\n";
  }
  const std::vector<CodegenChange> changes = codegen_changes(data.points, summary);
  if (changes.empty()) return;
  out << "codegen before -> after (measured: median over legs):\n"
      << std::left << std::setw(14) << "kernel" << std::right << std::setw(4) << "P"
      << std::setw(15) << "payload_bytes" << std::setw(6) << "legs" << std::setw(12) << "measured_%"
      << std::setw(13) << "leg_spread" << std::setw(13) << "simulated_%" << std::setw(12)
      << "difference"
      << "\n";
  for (const CodegenChange& c : changes) {
    out << std::left << std::setw(14) << c.kernel << std::right << std::setw(4) << c.ranks
        << std::setw(15) << c.payload_bytes << std::setw(6) << c.legs << std::setw(12)
        << fixed(c.measured_percent, 1) << std::setw(13) << fixed(c.leg_spread_percent, 1)
        << std::setw(13) << fixed(c.simulated_percent, 1) << std::setw(12)
        << fixed(c.simulated_percent - c.measured_percent, 1) << "\n";
  }
}

void say_kernel_column(std::ostream& out, const std::string& path, const MeasuredData& data) {
  out << data.points.size() << " measured points from " << path;
  if (!data.kernel_column) out << " (no kernel column: every point is " << kDefaultKernel << ")";
  out << "\n";
}

int jobs_option(const po::variables_map& vm) {
  const int jobs = vm["jobs"].as<int>();
  if (jobs < 1 || jobs > 256) throw InputError("--jobs: must be between 1 and 256");
  return jobs;
}

// Platform keys by name, through the same option table that reads INI files, so a fitted
// value is checked exactly as a configured one.
double key_value(const PlatformConfig& config, const std::string& key) {
  PlatformConfig copy = config;
  const po::options_description options = platform_options(copy);
  if (key.empty()) throw InputError("--fit: an empty key (a stray comma?)");
  if (options.find_nothrow(key, false) == nullptr) {
    throw InputError("--fit: '" + key + "' is not a platform key" +
                     unknown_key_hint(key, options, ""));
  }
  po::variables_map defaults;
  const char* const no_args[] = {"calibrate"};
  po::store(po::parse_command_line(1, no_args, options), defaults);
  if (defaults.count(key) == 0 || defaults[key].value().type() != typeid(double)) {
    throw InputError("--fit: '" + key + "' is not a continuous number and cannot be fitted");
  }
  return defaults[key].as<double>();
}

// A key in cycles also in us, the unit the README gives times in: " = 255.2 us at 1.8 GHz".
std::string in_us(const PlatformConfig& config, const std::string& key) {
  const std::string cycles = "_cycles";
  if (key.size() < cycles.size() || key.compare(key.size() - cycles.size(), cycles.size(), cycles))
    return "";
  const double us = key_value(config, key) / config.clock_GHz / 1000.0;
  return " = " + significant(us) + " us at " + significant(config.clock_GHz) + " GHz";
}

// The written profile keeps every value's source tag; the fitted keys say they were fitted.
std::map<std::string, std::string> fitted_tags(std::map<std::string, std::string> tags,
                                               const std::vector<std::string>& keys,
                                               std::size_t points) {
  for (const std::string& key : keys) {
    tags[key] = "calibrated: fitted by allreduce-sim calibrate to " + std::to_string(points) +
                " measured points";
  }
  return tags;
}

void set_key(PlatformConfig& config, const std::string& key, double value) {
  std::ostringstream text;
  text << std::setprecision(17) << value;
  const std::string option = "--" + key;
  const std::string shown = text.str();
  const char* const args[] = {"calibrate", option.c_str(), shown.c_str()};
  PlatformConfig updated = config;
  const po::options_description options = platform_options(updated);
  po::variables_map vm;
  po::store(po::parse_command_line(3, args, options), vm);
  po::notify(vm);
  validate(updated);
  config = updated;
}

// Deterministic Nelder-Mead minimisation of `f` from `start`, with an initial step of `step`
// along each axis; stops after `max_evaluations` or when the simplex is smaller than
// `tolerance` along every axis.
struct Minimum {
  std::vector<double> x;
  double value;
  int evaluations;
};

template <typename Function>
Minimum nelder_mead(const Function& f, const std::vector<double>& start, double step,
                    double tolerance, int max_evaluations) {
  const std::size_t n = start.size();
  std::vector<std::vector<double>> simplex(n + 1, start);
  std::vector<double> values(n + 1);
  int evaluations = 0;
  auto evaluate = [&](const std::vector<double>& x) {
    ++evaluations;
    return f(x);
  };
  for (std::size_t i = 0; i < n; ++i) simplex[i + 1][i] += step;
  for (std::size_t i = 0; i <= n; ++i) values[i] = evaluate(simplex[i]);
  auto along = [&](const std::vector<double>& from, const std::vector<double>& to, double t) {
    std::vector<double> x(n);
    for (std::size_t d = 0; d < n; ++d) x[d] = from[d] + t * (to[d] - from[d]);
    return x;
  };
  for (;;) {
    std::vector<std::size_t> order(n + 1);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    std::vector<std::vector<double>> sorted_simplex;
    std::vector<double> sorted_values;
    for (std::size_t i : order) {
      sorted_simplex.push_back(simplex[i]);
      sorted_values.push_back(values[i]);
    }
    simplex.swap(sorted_simplex);
    values.swap(sorted_values);

    double size = 0;
    for (std::size_t i = 1; i <= n; ++i) {
      for (std::size_t d = 0; d < n; ++d) {
        size = std::max(size, std::abs(simplex[i][d] - simplex[0][d]));
      }
    }
    if (size < tolerance || evaluations >= max_evaluations) break;

    std::vector<double> centroid(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t d = 0; d < n; ++d) centroid[d] += simplex[i][d] / static_cast<double>(n);
    }
    const std::vector<double> reflected = along(centroid, simplex[n], -1.0);
    const double reflected_value = evaluate(reflected);
    if (reflected_value < values[0]) {
      const std::vector<double> expanded = along(centroid, simplex[n], -2.0);
      const double expanded_value = evaluate(expanded);
      const bool expand = expanded_value < reflected_value;
      simplex[n] = expand ? expanded : reflected;
      values[n] = expand ? expanded_value : reflected_value;
    } else if (reflected_value < values[n - 1]) {
      simplex[n] = reflected;
      values[n] = reflected_value;
    } else {
      const bool outside = reflected_value < values[n];
      const std::vector<double> contracted = along(centroid, outside ? reflected : simplex[n], 0.5);
      const double contracted_value = evaluate(contracted);
      if (contracted_value < std::min(values[n], reflected_value)) {
        simplex[n] = contracted;
        values[n] = contracted_value;
      } else {
        for (std::size_t i = 1; i <= n; ++i) {
          simplex[i] = along(simplex[0], simplex[i], 0.5);
          values[i] = evaluate(simplex[i]);
        }
      }
    }
  }
  return {simplex[0], values[0], evaluations};
}

}  // namespace

MeasuredData read_measurements(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::exists(path, error)) throw InputError("--data: no such file: " + path);
  if (!fs::is_regular_file(path, error)) throw InputError("--data: not a regular file: " + path);
  std::ifstream in(path);
  if (!in) throw InputError("--data: cannot read " + path);

  MeasuredData data;
  std::map<std::string, std::size_t> column;
  std::size_t columns = 0;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    boost::trim(line);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> fields;
    boost::split(fields, line, boost::is_any_of(","));
    for (std::string& field : fields) boost::trim(field);
    const std::string at = where(path, line_number);
    if (column.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (!column.emplace(fields[i], i).second) {
          throw InputError(at + ": column '" + fields[i] + "' appears twice");
        }
      }
      for (const char* needed : {"P", "payload_bytes", "device_us"}) {
        if (column.count(needed) == 0) {
          throw InputError(at + ": the header has no '" + needed +
                           "' column (needed: [kernel,]P,payload_bytes,device_us)");
        }
      }
      data.kernel_column = column.count("kernel") > 0;
      data.core_num_column = column.count("core_num") > 0;
      data.codegen_column = column.count("codegen") > 0;
      columns = fields.size();
      continue;
    }
    if (fields.size() != columns) {
      throw InputError(at + ": " + std::to_string(fields.size()) + " fields, the header has " +
                       std::to_string(columns));
    }
    MeasuredPoint point;
    point.kernel = data.kernel_column ? fields[column["kernel"]] : kDefaultKernel;
    try {
      find_kernel(point.kernel);
    } catch (const InputError& e) {
      throw InputError(at + ": " + e.what());
    }
    const double ranks = parse_number(fields[column["P"]], "P", at);
    if (ranks < 2 || ranks > 4096 || ranks != std::floor(ranks)) {
      throw InputError(at + ": P " + fields[column["P"]] + " is not a rank count from 2 to 4096");
    }
    point.ranks = static_cast<int>(ranks);
    const double bytes = parse_number(fields[column["payload_bytes"]], "payload_bytes", at);
    if (bytes < 4 || bytes > 1e12 || bytes != std::floor(bytes) || std::fmod(bytes, 4) != 0) {
      throw InputError(at + ": payload_bytes " + fields[column["payload_bytes"]] +
                       " is not a positive whole number of FP32 elements up to 1e12 bytes");
    }
    point.payload_bytes = static_cast<std::uint64_t>(bytes);
    if (column.count("core_num") > 0) {
      const double blocks = parse_number(fields[column["core_num"]], "core_num", at);
      if (blocks < 1 || blocks > 1024 || blocks != std::floor(blocks)) {
        throw InputError(at + ": core_num " + fields[column["core_num"]] +
                         " is not a block count of 1 or more");
      }
      point.core_num = static_cast<int>(blocks);
    }
    if (column.count("codegen") > 0) point.codegen = fields[column["codegen"]];
    point.device_us = parse_number(fields[column["device_us"]], "device_us", at);
    // No device time is shorter than a nanosecond or longer than an hour; outside that range a
    // point is a unit or typing mistake, and its error would swamp every average.
    if (!(point.device_us >= 1e-3 && point.device_us <= 3.6e9)) {
      throw InputError(at + ": device_us " + fields[column["device_us"]] +
                       " is not a time from 0.001 us (1 ns) to 3.6e9 us (an hour)");
    }
    data.points.push_back(point);
  }
  if (column.empty()) throw InputError("--data: " + path + " has no header line");
  if (data.points.empty()) throw InputError("--data: " + path + " has no measured points");
  return data;
}

ErrorSummary summarise_errors(const std::vector<MeasuredPoint>& measured,
                              const std::vector<double>& simulated_us) {
  ErrorSummary summary;
  double log_sum = 0;
  bool exact = false;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const double error = 100.0 * (simulated_us[i] - measured[i].device_us) / measured[i].device_us;
    summary.points.push_back({simulated_us[i], error});
    summary.mean_abs_percent += std::abs(error) / static_cast<double>(measured.size());
    summary.max_abs_percent = std::max(summary.max_abs_percent, std::abs(error));
    if (error == 0) {
      exact = true;
    } else {
      log_sum += std::log(std::abs(error));
    }
  }
  summary.geomean_abs_percent =
      exact || measured.empty() ? 0 : std::exp(log_sum / static_cast<double>(measured.size()));
  return summary;
}

std::vector<FamilyError> summarise_families(const std::vector<MeasuredPoint>& measured,
                                            const ErrorSummary& summary) {
  std::map<std::tuple<std::string, int, int, std::string>, FamilyError> families;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const MeasuredPoint& m = measured[i];
    FamilyError& f = families[{m.kernel, m.ranks, m.core_num, m.codegen}];
    f.kernel = m.kernel;
    f.ranks = m.ranks;
    f.core_num = m.core_num;
    f.codegen = m.codegen;
    ++f.points;
    const double error = std::abs(summary.points[i].error_percent);
    f.mean_abs_percent += error;
    f.max_abs_percent = std::max(f.max_abs_percent, error);
  }
  std::vector<FamilyError> out;
  for (auto& [key, f] : families) {
    f.mean_abs_percent /= f.points;
    out.push_back(f);
  }
  return out;
}

std::vector<CodegenChange> codegen_changes(const std::vector<MeasuredPoint>& measured,
                                           const ErrorSummary& summary) {
  using Key = std::tuple<std::string, int, int, std::uint64_t>;
  // Per key and profile: the measured legs in order, and the simulated time.
  std::map<Key, std::map<std::string, std::vector<double>>> legs;
  std::map<Key, std::map<std::string, double>> simulated;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const MeasuredPoint& m = measured[i];
    const Key key{m.kernel, m.ranks, m.core_num, m.payload_bytes};
    legs[key][m.codegen].push_back(m.device_us);
    simulated[key][m.codegen] = summary.points[i].simulated_us;
  }
  std::vector<CodegenChange> out;
  for (const auto& [key, profiles] : legs) {
    const auto before = profiles.find("before");
    const auto after = profiles.find("after");
    if (before == profiles.end() || after == profiles.end()) continue;
    std::vector<double> changes;
    for (std::size_t leg = 0; leg < std::min(before->second.size(), after->second.size()); ++leg)
      changes.push_back(100.0 * (after->second[leg] / before->second[leg] - 1.0));
    std::sort(changes.begin(), changes.end());
    const std::size_t n = changes.size();
    CodegenChange c;
    std::tie(c.kernel, c.ranks, c.core_num, c.payload_bytes) = key;
    c.legs = static_cast<int>(n);
    c.measured_percent = n % 2 == 1 ? changes[n / 2] : (changes[n / 2 - 1] + changes[n / 2]) / 2;
    c.leg_spread_percent = n == 0 ? 0.0 : changes.back() - changes.front();
    c.simulated_percent = 100.0 * (simulated[key]["after"] / simulated[key]["before"] - 1.0);
    out.push_back(c);
  }
  return out;
}

int validate_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    po::options_description options("allreduce-sim validate");
    options.add_options()("help,h", "show this help")(
        "data", po::value<std::string>(),
        "measurement CSV: P,payload_bytes,device_us, optional kernel, core_num and codegen "
        "columns")("platform,p", po::value<std::string>(),
                   "profile: a name in configs/ or an INI path")(
        "csv", po::value<std::string>(), "also write the per-point table as CSV to FILE")(
        "jobs,j", po::value<int>()->default_value(2), "simulations run at once");
    const po::variables_map vm = parse_arguments(argc, argv, options);
    if (vm.count("help")) {
      out << "usage: allreduce-sim validate --data FILE -p PROFILE [--csv OUT]\n\n"
          << "Simulates every measured point on the profile and prints simulated against\n"
          << "measured time, the error of each point (100 (sim - meas) / meas), the mean\n"
          << "absolute error and the geometric mean of the absolute errors.\n\n"
          << options;
      return 0;
    }
    if (!vm.count("data")) throw InputError("validate: --data FILE is required");
    if (!vm.count("platform")) throw InputError("validate: -p PROFILE is required");
    OutputPaths outputs;
    const std::string data_path = vm["data"].as<std::string>();
    outputs.read("--data", data_path);
    const std::string profile = resolve_platform_path(vm["platform"].as<std::string>());
    outputs.read("-p", profile);
    const std::string csv_path = outputs.take(vm, "--csv");
    const int jobs = jobs_option(vm);
    const MeasuredData data = read_measurements(data_path);
    const PlatformConfig platform = load_platform(profile, po::variables_map());

    const ErrorSummary summary = summarise_errors(data.points, simulate(data, platform, jobs));
    say_kernel_column(out, data_path, data);
    out << "profile: " << platform.name << " (" << profile << ")\n";
    print_table(out, data, summary);
    if (!csv_path.empty()) {
      std::ostringstream csv;
      csv << "kernel,P," << (data.core_num_column ? "core_num," : "")
          << (data.codegen_column ? "codegen," : "")
          << "payload_bytes,measured_us,simulated_us,error_percent\n";
      for (std::size_t i = 0; i < data.points.size(); ++i) {
        const MeasuredPoint& p = data.points[i];
        csv << p.kernel << "," << p.ranks << ",";
        if (data.core_num_column) csv << p.core_num << ",";
        if (data.codegen_column) csv << p.codegen << ",";
        csv << p.payload_bytes << "," << significant(p.device_us) << ","
            << fixed(summary.points[i].simulated_us, 3) << ","
            << fixed(summary.points[i].error_percent, 3) << "\n";
      }
      write_file(csv_path, csv.str());
    }
    return 0;
  } catch (const InputError& e) {
    err << "allreduce-sim validate: error: " << e.what() << "\n";
    return 2;
  }
}

int calibrate_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    po::options_description options("allreduce-sim calibrate");
    options.add_options()("help,h", "show this help")(
        "data", po::value<std::string>(),
        "measurement CSV: P,payload_bytes,device_us, optional kernel, core_num and codegen "
        "columns")(
        "platform,p", po::value<std::string>()->default_value("a2a3-910b2"),
        "base profile: a name in configs/ or an INI path; its values are the starting point")(
        "fit",
        po::value<std::string>()->default_value(
            "launch.offset_cycles,launch.setup_cycles,link.latency_ns"),
        "comma-separated platform keys to fit (default: the three a2a3-910b2 fits); every other "
        "key is held at the base value")("write", po::value<std::string>(),
                                         "write the fitted profile as INI to FILE")(
        "max-evaluations", po::value<int>()->default_value(120),
        "stop once this many evaluations of all points are made (checked between steps: the "
        "first takes one more than the keys fitted, a shrink as many)")(
        "jobs,j", po::value<int>()->default_value(2), "simulations run at once");
    const po::variables_map vm = parse_arguments(argc, argv, options);
    if (vm.count("help")) {
      out << "usage: allreduce-sim calibrate --data FILE [-p BASE] [--fit k1,k2,...] "
             "[--write OUT.ini]\n\n"
          << "Fits the chosen keys by Nelder-Mead in log-parameter space, minimising the mean\n"
          << "squared relative error of the simulated against the measured device times.\n\n"
          << options;
      return 0;
    }
    if (!vm.count("data")) throw InputError("calibrate: --data FILE is required");
    const int jobs = jobs_option(vm);
    const int max_evaluations = vm["max-evaluations"].as<int>();
    if (max_evaluations < 1 || max_evaluations > 100000) {
      throw InputError("--max-evaluations: must be between 1 and 100000");
    }
    OutputPaths outputs;
    const std::string data_path = vm["data"].as<std::string>();
    outputs.read("--data", data_path);
    const std::string base_path = resolve_platform_path(vm["platform"].as<std::string>());
    outputs.read("-p", base_path);
    const std::string write_path = outputs.take(vm, "--write");
    const MeasuredData data = read_measurements(data_path);
    const LoadedPlatform loaded = load_platform_sources(base_path, po::variables_map());
    const PlatformConfig& base = loaded.config;

    std::vector<std::string> keys;
    boost::split(keys, vm["fit"].as<std::string>(), boost::is_any_of(","));
    std::vector<double> start;
    for (const std::string& key : keys) {
      if (std::count(keys.begin(), keys.end(), key) > 1) {
        throw InputError("--fit: '" + key + "' is listed twice");
      }
      const double value = key_value(base, key);
      // The search runs on log values; a key that is zero in the base starts from one unit.
      start.push_back(std::log(value > 0 ? value : 1.0));
    }

    auto config_at = [&](const std::vector<double>& x) {
      PlatformConfig config = base;
      for (std::size_t i = 0; i < keys.size(); ++i) set_key(config, keys[i], std::exp(x[i]));
      return config;
    };
    auto objective = [&](const std::vector<double>& x) {
      PlatformConfig config;
      try {
        config = config_at(x);
      } catch (const std::exception&) {
        return std::numeric_limits<double>::infinity();  // outside a key's allowed range
      }
      const std::vector<double> simulated = simulate(data, config, jobs);
      double sum = 0;
      for (std::size_t i = 0; i < simulated.size(); ++i) {
        const double relative = simulated[i] / data.points[i].device_us - 1.0;
        sum += relative * relative;
      }
      return sum / static_cast<double>(simulated.size());
    };
    // Initial steps of +35 % per key; stop when every key moves less than 0.01 %.
    const Minimum best = nelder_mead(objective, start, std::log(1.35), 1e-4, max_evaluations);
    const PlatformConfig fitted = config_at(best.x);
    const ErrorSummary summary = summarise_errors(data.points, simulate(data, fitted, jobs));

    say_kernel_column(out, data_path, data);
    out << "base profile: " << base.name << " (" << base_path << ")\n"
        << "method: Nelder-Mead in log-parameter space, minimising the mean squared relative "
           "error\n"
        << "evaluations: " << best.evaluations << " (each simulates all " << data.points.size()
        << " points, " << jobs << " at a time)\n"
        << "fitted keys:\n";
    for (std::size_t i = 0; i < keys.size(); ++i) {
      out << "  " << keys[i] << " = " << significant(std::exp(best.x[i])) << "  (base "
          << significant(key_value(base, keys[i])) << ")" << in_us(fitted, keys[i]) << "\n";
    }
    out << "held fixed: every other key, at the base profile's value\n";
    print_table(out, data, summary);
    if (!write_path.empty()) {
      std::ostringstream ini;
      ini << "# Fitted by allreduce-sim calibrate from " << data_path << " on the base profile "
          << base.name << ".\n# Fitted keys:";
      for (const std::string& key : keys) ini << " " << key;
      ini << "\n# MAPE " << fixed(summary.mean_abs_percent, 2) << " % over " << data.points.size()
          << " points.\n\n"
          << to_ini(fitted, fitted_tags(loaded.source, keys, data.points.size()));
      write_file(write_path, ini.str());
      out << "wrote " << write_path << "\n";
    }
    return 0;
  } catch (const InputError& e) {
    err << "allreduce-sim calibrate: error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace ars
