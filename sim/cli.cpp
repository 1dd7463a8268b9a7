#include "sim/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <new>
#include <sstream>

#include <boost/program_options.hpp>

#include "kernels/registry.h"
#include "sim/config/codegen.h"
#include "sim/config/config.h"
#include "sim/config/suggest.h"
#include "sim/memory_guard.h"
#include "sim/outputs/output_file.h"
#include "sim/outputs/report.h"
#include "sim/outputs/vcd_writer.h"
#include "sim/run.h"
#include "sim/studies/calibrate.h"
#include "sim/studies/costcard.h"

namespace ars {

namespace po = boost::program_options;

namespace {

std::pair<int, int> parse_shape(const std::string& text) {
  int rows = 0;
  int cols = 0;
  char comma = 0;
  std::istringstream in(text);
  if (!(in >> rows >> comma >> cols) || comma != ',' || !in.eof() || rows <= 0 || cols <= 0) {
    throw InputError("--signal-shape: '" + text + "' is not ROWS,COLS with positive numbers");
  }
  return {rows, cols};
}

std::string kernel_list() {
  std::string text;
  for (const KernelSpec& k : kernel_registry())
    text += std::string("  ") + k.name + ": " + k.summary + "\n";
  return text + "  builtin: builtin_mesh, or builtin_ring with --mode ring\n";
}

using Subcommand = int (*)(int, const char* const*, std::ostream&, std::ostream&);

// `allreduce-sim NAME ...` runs NAME's entry with argv[0] = NAME.
struct SubcommandEntry {
  const char* name;
  Subcommand main;
  const char* summary;
};
constexpr SubcommandEntry kSubcommands[] = {
    {"costcard", costcard_main, "sweep kernels x P x sizes against the analytical cost cards"},
    {"calibrate", calibrate_main, "fit platform keys to measured allreduce times"},
    {"validate", validate_main, "compare a profile with measured allreduce times"},
};

std::vector<std::string> subcommand_names() {
  std::vector<std::string> names;
  for (const SubcommandEntry& sub : kSubcommands) names.emplace_back(sub.name);
  return names;
}

// A first word that is no option must be a subcommand; a kernel's name there is a kernel
// given without --kernel.
void refuse_first_word(const std::string& word) {
  const std::vector<std::string> kernels = kernel_names();
  if (std::find(kernels.begin(), kernels.end(), word) != kernels.end()) {
    throw InputError("'" + word + "' is a kernel, not a subcommand: use --kernel " + word);
  }
  throw InputError("unknown subcommand '" + word + "'" + did_you_mean(word, subcommand_names()) +
                   "; the subcommands are " + join(subcommand_names()) +
                   ", and a run takes options only (--help)");
}

std::string help_text(const po::options_description& options) {
  std::ostringstream help;
  help << "allreduce-sim: a timed SystemC/TLM simulator of allreduce on Ascend-class devices\n\n"
       << "usage: allreduce-sim [-p PLATFORM] [-d 0,1,2,3] [--kernel K] [--op OP] [--dtype T]\n"
       << "                     [--size N|NB|NK|NM] [--json FILE] [--vcd FILE] [-q] [platform "
          "keys]\n"
       << "       allreduce-sim SUBCOMMAND [options]   (SUBCOMMAND --help for its options)\n\n"
       << "Subcommands:\n";
  for (const SubcommandEntry& sub : kSubcommands) {
    help << "  " << std::left << std::setw(11) << sub.name << sub.summary << "\n";
  }
  help << "\nPlatforms (-p NAME, from configs/): " << join(platform_names())
       << "; or -p PATH.ini\n\n"
       << options << "\nKernels:\n"
       << kernel_list()
       << "\nSizes: a bare number counts elements (--size 64 is 64 x dtype); with a unit it\n"
       << "counts bytes: B, K or KiB, M or MiB, G or GiB, T or TiB (powers of 1024, as\n"
       << "nccl-tests).\n"
       << "\nExit codes: 0 correct (last line OK), 1 wrong result or a run that cannot finish\n"
       << "(deadlock, time limit), 2 bad input.\n";
  return help.str();
}

int parse_ranks_shown(const std::string& text) {
  if (text == "all") return 0;
  std::size_t used = 0;
  int ranks = 0;
  try {
    ranks = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || ranks < 1) {
    throw InputError("--ranks-shown: '" + text + "' is not a positive rank count or 'all'");
  }
  return ranks;
}

}  // namespace

std::vector<int> parse_devices(const std::string& text, int platform_devices,
                               const std::string& option) {
  const auto fail = [&](const std::string& what) {
    throw InputError(option + ": " + what + " (in '" + text + "')");
  };
  if (text.empty()) throw InputError(option + ": no devices given");
  std::vector<int> devices;
  if (text == "all") {
    for (int d = 0; d < platform_devices; ++d) devices.push_back(d);
    return devices;
  }
  const auto number = [&](const std::string& word, const std::string& item) {
    const bool digits =
        !word.empty() && word.size() <= 9 &&
        std::all_of(word.begin(), word.end(), [](char c) { return std::isdigit(c); });
    if (!digits) fail("'" + item + "' is not a device number");
    return std::stoi(word);
  };
  // getline drops a trailing empty item: "0,1," would silently mean "0,1".
  if (text.back() == ',') number("", "");
  std::vector<char> listed(platform_devices, 0);
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const std::size_t dash = item.find('-');
    const int first = number(item.substr(0, dash), item);
    const int last = dash == std::string::npos ? first : number(item.substr(dash + 1), item);
    if (last < first) fail("range '" + item + "' is reversed");
    for (int d = first; d <= last; ++d) {
      if (d >= platform_devices) {
        fail("device " + std::to_string(d) + " is not in the topology of " +
             std::to_string(platform_devices) + " devices");
      }
      if (listed[d]) {
        throw InputError("device " + std::to_string(d) + " is listed twice in " + option + " '" +
                         text + "'");
      }
      listed[d] = 1;
      devices.push_back(d);
    }
  }
  return devices;
}

namespace {

// The devices an output shows (--trace-devices, --vcd-devices): a list in -d's syntax, of
// devices taking part, given only with the output itself.
std::vector<int> shown_devices(const po::variables_map& vm, const std::string& option,
                               const std::string& output, const RunRequest& request) {
  if (vm.count(output) == 0) throw InputError("--" + option + ": needs --" + output + " FILE");
  const std::string text = vm[option].as<std::string>();
  if (text == "all") return request.devices;  // all that take part
  const std::vector<int> devices = parse_devices(text, request.platform.devices, "--" + option);
  for (const int device : devices) {
    if (std::find(request.devices.begin(), request.devices.end(), device) ==
        request.devices.end()) {
      throw InputError("--" + option + ": device " + std::to_string(device) +
                       " does not take part in the run (-d " + vm["devices"].as<std::string>() +
                       ")");
    }
  }
  return devices;
}

}  // namespace

DType parse_dtype(const std::string& text) {
  if (text == "fp32" || text == "FP32") return DType::FP32;
  if (text == "fp16" || text == "FP16") return DType::FP16;
  throw InputError("--dtype: unknown dtype '" + text + "' (fp32 or fp16)");
}

ReduceOp parse_op(const std::string& text) {
  std::string word;
  for (char c : text) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (word == "sum") return ReduceOp::Sum;
  if (word == "max") return ReduceOp::Max;
  if (word == "min") return ReduceOp::Min;
  if (word == "prod") return ReduceOp::Prod;
  throw InputError("--op: unknown reduce op '" + text + "' (sum, max, min or prod)");
}

namespace {

// The units of the one size vocabulary, in bytes (0: not one): powers of 1024, as nccl-tests
// reads K, M and G.
double unit_bytes(const std::string& unit) {
  if (unit == "B") return 1;
  if (unit == "K" || unit == "k" || unit == "KiB") return 1024.0;
  if (unit == "M" || unit == "m" || unit == "MiB") return 1024.0 * 1024;
  if (unit == "G" || unit == "g" || unit == "GiB") return 1024.0 * 1024 * 1024;
  if (unit == "T" || unit == "t" || unit == "TiB") return 1024.0 * 1024 * 1024 * 1024;
  return 0;
}
constexpr const char* kByteUnits = "B, K/KiB, M/MiB, G/GiB or T/TiB";

// A number with an optional unit of the size vocabulary: `value` is in bytes with a unit and
// the bare number without; 0 when the text is no such number (or, with `whole`, not a whole
// one before its unit).
struct Scaled {
  double value = 0;
  bool has_unit = false;
};
Scaled parse_scaled(const std::string& text, bool whole) {
  std::size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    return {};
  }
  // Decimal only: stod would also read leading blanks, hexadecimal and infinity.
  if (text.substr(0, used).find_first_not_of("0123456789.eE+-") != std::string::npos) return {};
  const std::string unit = text.substr(used);
  const double scale = unit.empty() ? 1 : unit_bytes(unit);
  if (scale == 0 || !(number > 0) || (whole && number != std::floor(number))) return {};
  return {number * scale, !unit.empty()};
}

// --memory-limit: bytes, a bare number or with a unit, fractions allowed (1.5G).
std::uint64_t parse_memory_limit(const std::string& text) {
  const double bytes = parse_scaled(text, false).value;
  if (!(bytes >= 1) || bytes > 1e18) {
    throw InputError("--memory-limit: '" + text +
                     "' is not a positive number of bytes (bare, or with " + kByteUnits + ")");
  }
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace

std::uint64_t parse_size(const std::string& text, DType dtype, const std::string& option) {
  const std::string units = std::string("elements, or bytes with ") + kByteUnits;
  const Scaled size = parse_scaled(text, true);
  if (size.value == 0) {
    throw InputError(option + ": '" + text + "' must be a positive whole number of " + units);
  }
  if (size.value > 1e15) {
    throw InputError(option + ": '" + text + "' is beyond 1e15 elements or bytes per rank");
  }
  const auto count = static_cast<std::uint64_t>(size.value);
  if (!size.has_unit) return count;
  if (count % dtype_bytes(dtype) != 0) {
    throw InputError(option + ": " + text + " is not a whole number of " + to_string(dtype) +
                     " elements");
  }
  return count / dtype_bytes(dtype);
}

std::string resolve_kernel(const std::string& option, const std::string& name,
                           const std::string& mode, bool mode_given) {
  const std::vector<std::string> names = kernel_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw InputError(option + ": unknown kernel '" + name + "'" + did_you_mean(name, names) +
                     "; the kernels are " + join(names));
  }
  if (name == "builtin") return "builtin_" + mode;
  const char* own_mode = builtin_mode(name);
  if (mode_given && own_mode == nullptr) {
    throw InputError("--mode: only the builtin has a mode; " + name +
                     " has none (--kernel builtin --mode " + mode + " runs the builtin)");
  }
  if (mode_given && mode != own_mode) {
    throw InputError("--mode " + mode + " contradicts --kernel " + name +
                     " (use --kernel builtin_" + mode + ")");
  }
  return name;
}

CommandLine parse_run_request(int argc, const char* const* argv) {
  CommandLine command;
  if (argc > 1 && argv[1][0] != '-') refuse_first_word(argv[1]);
  po::options_description run("Run options");
  run.add_options()("help,h", "show this help (with -p, that platform's values)")(
      "platform,p", po::value<std::string>()->default_value("a2a3"),
      "platform: a name in configs/ (listed above; a2a3sim = a2a3) or an INI path")(
      "devices,d", po::value<std::string>()->default_value("0,1,2,3"),
      "devices taking part: comma-separated numbers and ranges A-B, or all; P = their count")(
      "kernel,k", po::value<std::string>()->default_value("builtin"), "kernel to run (see below)")(
      "op", po::value<std::string>()->default_value("sum"), "reduce op: sum, max, min, prod")(
      "dtype", po::value<std::string>()->default_value("fp32"), "fp32 or fp16")(
      "size", po::value<std::string>()->default_value("64"),
      "per rank: elements, or bytes with a unit (see Sizes)")(
      "mode", po::value<std::string>()->default_value("mesh"),
      "the builtin's algorithm: mesh or ring (only with the builtin kernels)")(
      "repeat", po::value<int>()->default_value(1), "allreduce calls in one kernel")(
      "signal-shape", po::value<std::string>(), "override the signal's ROWS,COLS")(
      "inter", po::value<std::string>(),
      "hierarchical only: the allreduce between servers, ring (default) or rhd")(
      "quiet,q", "print only the summary: device time, algbw, busbw and the verdict")(
      "ranks-shown", po::value<std::string>()->default_value("8"),
      "the per-round table shows this many ranks (all: every rank)")(
      "core-num", po::value<int>()->default_value(1),
      "SPMD blocks per rank, each on its own vector core (host_mesh; at most vector.cores)")(
      "codegen", po::value<std::string>(),
      "codegen profile: a name in configs/codegen/ (before, after) or an INI path")(
      "json", po::value<std::string>(), "write the run as JSON to FILE")(
      "vcd", po::value<std::string>(),
      "write a VCD waveform (1 ns unit) to FILE, and a GTKWave save file beside it (.gtkw)")(
      "vcd-devices", po::value<std::string>(),
      "the devices --vcd shows (same list syntax as -d; all, the default: all that take part)")(
      "trace", po::value<std::string>(),
      "write a timeline (Chrome Trace Event JSON, opens in ui.perfetto.dev) to FILE")(
      "trace-devices", po::value<std::string>(),
      "the devices --trace shows (same list syntax as -d; all, the default: all that take part)")(
      "explain", "print the critical path step by step, across ranks")(
      "dump-schedule", po::value<std::string>(), "write every rank's executed operations to FILE")(
      "dump-schedule-times", "start every line of the schedule dump with its issue time (ns)")(
      "timing-only", "move no payload bytes (no golden check): for large scale studies")(
      "detailed-bursts",
      "issue every DMA burst in its own time (the default times a transfer as one step, with "
      "the same results, unless a waveform is written)")(
      "max-sim-time", po::value<double>()->default_value(1e10, "1e10"),
      "stop a run that has not finished after this many simulated ns")(
      "print-config", "print the platform's resolved configuration as INI and exit")(
      "memory-limit", po::value<std::string>(),
      "refuse a run whose estimated memory exceeds BYTES (units as --size; a bare number is "
      "bytes); "
      "default 80 % of physical memory")(
      "fault", po::value<std::vector<std::string>>(),
      "inject a fault (repeatable): drop-notify:RANK:INDEX, notify-value:RANK:INDEX:VALUE, "
      "skip-wait:RANK:INDEX (INDEX counts the rank's notifies or waits from 0), stall:RANK");
  PlatformConfig cli_platform;  // receives nothing: platform keys are applied over the file
  po::options_description all;
  const po::options_description platform_keys = platform_options(cli_platform);
  all.add(run).add(platform_keys);

  const po::variables_map vm = parse_arguments(argc, argv, all);
  RunRequest& request = command.request;
  const LoadedPlatform platform =
      load_platform_sources(resolve_platform_path(vm["platform"].as<std::string>()), vm);
  request.platform = platform.config;
  request.platform_origin = platform.origin();
  if (vm.count("help")) {
    // The platform keys' defaults are the selected platform's values.
    PlatformConfig shown = platform.config;
    po::options_description with_platform;
    with_platform.add(run).add(platform_options(shown));
    command.action = CommandLine::Action::Help;
    command.text = help_text(with_platform);
    return command;
  }
  if (vm.count("codegen"))
    load_codegen(resolve_codegen_path(vm["codegen"].as<std::string>()), request.platform);
  if (vm.count("print-config")) {
    command.action = CommandLine::Action::PrintConfig;
    command.text = "# " + platform.config.name + " as this run resolves it, from " +
                   platform.origin() +
                   ".\n# Each value is commented with its source: the file's tag, its base's "
                   "(\"base NAME: ...\"),\n# the command line, or the built-in default for a key "
                   "that a file without a base leaves unset.\n\n" +
                   to_ini(request.platform, platform.source);
    return command;
  }
  request.devices = parse_devices(vm["devices"].as<std::string>(), request.platform.devices);
  Problem& problem = request.problem;
  problem.dtype = parse_dtype(vm["dtype"].as<std::string>());
  problem.op = parse_op(vm["op"].as<std::string>());
  problem.elements = parse_size(vm["size"].as<std::string>(), problem.dtype);
  const std::string mode = vm["mode"].as<std::string>();
  if (mode != "mesh" && mode != "ring") {
    throw InputError("--mode: unknown mode '" + mode + "' (mesh or ring)");
  }
  request.kernel =
      resolve_kernel("--kernel", vm["kernel"].as<std::string>(), mode, !vm["mode"].defaulted());
  if (const char* own_mode = builtin_mode(request.kernel)) problem.mode = own_mode;
  problem.repeat = vm["repeat"].as<int>();
  if (problem.repeat < 1) throw InputError("--repeat: must be at least 1");
  if (vm.count("inter")) {
    problem.inter = vm["inter"].as<std::string>();
    if (problem.inter != "ring" && problem.inter != "rhd") {
      throw InputError("--inter: unknown algorithm '" + problem.inter + "' (ring or rhd)");
    }
  }
  problem.core_num = vm["core-num"].as<int>();
  if (vm.count("signal-shape"))
    problem.signal_shape = parse_shape(vm["signal-shape"].as<std::string>());
  request.timing_only = vm.count("timing-only") > 0;
  request.detailed_bursts = vm.count("detailed-bursts") > 0;
  request.quiet = vm.count("quiet") > 0;
  command.report.ranks_shown = parse_ranks_shown(vm["ranks-shown"].as<std::string>());
  request.max_sim_time_ns = vm["max-sim-time"].as<double>();
  // Simulated time counts whole picoseconds: a shorter limit would be none.
  if (!(request.max_sim_time_ns >= 1e-3) || request.max_sim_time_ns > 1e15) {
    throw InputError("--max-sim-time: must be a number of ns from 0.001 (1 ps) up to 1e15");
  }
  if (vm.count("memory-limit"))
    request.memory_limit_bytes = parse_memory_limit(vm["memory-limit"].as<std::string>());
  if (vm.count("fault")) {
    for (const std::string& text : vm["fault"].as<std::vector<std::string>>())
      request.faults.push_back(Fault::parse(text));
  }
  OutputPaths outputs;
  outputs.read("-p", platform.path);
  if (vm.count("codegen"))
    outputs.read("--codegen", resolve_codegen_path(vm["codegen"].as<std::string>()));
  command.json_path = outputs.take(vm, "--json");
  command.schedule_path = outputs.take(vm, "--dump-schedule");
  command.schedule_times = vm.count("dump-schedule-times") > 0;
  if (command.schedule_times && command.schedule_path.empty()) {
    throw InputError("--dump-schedule-times: needs --dump-schedule FILE");
  }
  request.vcd_path = outputs.take(vm, "--vcd");
  const std::string gtkw_path = request.vcd_path.empty() ? "" : gtkw_path_for(request.vcd_path);
  if (!gtkw_path.empty()) outputs.add("--vcd (its GTKWave save file)", gtkw_path);
  request.record_schedule = !command.schedule_path.empty();
  request.trace_path = outputs.take(vm, "--trace");
  if (vm.count("trace-devices"))
    request.trace_devices = shown_devices(vm, "trace-devices", "trace", request);
  if (vm.count("vcd-devices"))
    request.vcd_devices = shown_devices(vm, "vcd-devices", "vcd", request);
  command.report.explain = vm.count("explain") > 0;
  // The summary of -q shows no per-round or per-transfer record: a run that writes none of
  // them keeps none, whatever its length.
  request.keep_records = !request.quiet || command.report.explain || !command.json_path.empty() ||
                         !request.trace_path.empty();
  // The text report's round table shows the first ranks only; the JSON, the timeline and the
  // codegen's sync table show every rank's rounds.
  if (command.report.ranks_shown > 0 && command.json_path.empty() && request.trace_path.empty() &&
      request.platform.codegen.name.empty())
    request.round_records_ranks = command.report.ranks_shown;
  for (const auto& [key, value] : vm) {
    if (!value.defaulted() && platform_keys.find_nothrow(key, false) != nullptr)
      request.overridden_keys.push_back(key);
  }
  request.progress = !request.quiet && ::isatty(STDERR_FILENO) == 1;
  return command;
}

int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  if (argc > 1) {
    for (const SubcommandEntry& sub : kSubcommands) {
      if (std::strcmp(argv[1], sub.name) == 0) return sub.main(argc - 1, argv + 1, out, err);
    }
  }
  // Bad input: the message and exit code 2; no output file is written (or touched) then.
  const auto refuse = [&](const std::string& message) {
    err << "allreduce-sim: error: " << message << "\n";
    return 2;
  };
  try {
    const CommandLine command = parse_run_request(argc, argv);
    if (command.action != CommandLine::Action::Run) {
      out << command.text;
      return 0;
    }
    const RunRequest& request = command.request;
    const RunResult result = run_allreduce(request);
    if (!result.refused.empty()) return refuse(result.refused);
    print_report(out, result, command.report);
    if (!command.json_path.empty()) {
      write_file(command.json_path, [&result](std::ostream& json) { write_json(json, result); });
    }
    if (!command.schedule_path.empty()) {
      write_file(command.schedule_path, [&](std::ostream& schedule) {
        write_schedule(schedule, result, command.schedule_times);
      });
    }
    return result.completed && (result.correct || !result.checked) ? 0 : 1;
  } catch (const InputError& e) {
    return refuse(e.what());
  } catch (const std::bad_alloc&) {
    // The memory guard's estimate fell short of what the run really took.
    return refuse("out of memory; lower --memory-limit or --size, or use --timing-only");
  }
}

}  // namespace ars
