// The allreduce-sim binary as a user runs it (path in ARS_BINARY): a run's JSON and verdict,
// the one-line errors and exit code 2 of bad input, and the help.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli.h"
#include "sim/config/config.h"
#include "sim/outputs/progress_line.h"
#include "tests/run_process.h"

namespace ars {
namespace {

namespace fs = std::filesystem;

// A file name in the temporary directory, removed when the test ends.
class TempFile {
 public:
  explicit TempFile(const std::string& suffix) {
    std::string pattern = (fs::temp_directory_path() / "ars-cli-XXXXXX").string() + suffix;
    const int fd = ::mkstemps(pattern.data(), static_cast<int>(suffix.size()));
    if (fd >= 0) ::close(fd);
    path_ = pattern;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Invocation {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the binary with `arguments` (shell words) and collects its exit code and both streams.
Invocation run_cli(const std::string& arguments) {
  const char* binary = std::getenv("ARS_BINARY");
  if (binary == nullptr) {
    ADD_FAILURE() << "ARS_BINARY is not set";
    return {};
  }
  const TempFile err("");
  const std::string command = std::string(binary) + " " + arguments + " 2>" + err.path();
  Invocation result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return result;
  }
  std::array<char, 4096> buffer;
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) {
    result.out.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_file(err.path());
  return result;
}

std::string last_line(const std::string& text) {
  const std::string trimmed = text.substr(0, text.find_last_not_of('\n') + 1);
  return trimmed.substr(trimmed.find_last_of('\n') + 1);
}

// Bad input: exit code 2 and exactly one line on stderr that contains `message`.
void expect_input_error(const Invocation& run, const std::string& message) {
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find(message), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.err.rfind("allreduce-sim: error: ", 0), 0u) << run.err;
}

TEST(Cli, MeshRunWritesTheCardsRemoteBytesToJsonAndEndsWithOk) {
  const TempFile json(".json");
  const Invocation run =
      run_cli("-p a2a3 -d 0,1,2,3 --kernel mesh --size 4096 --json " + json.path());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(last_line(run.out), "OK") << run.out;
  const nlohmann::json j = nlohmann::json::parse(read_file(json.path()));
  EXPECT_EQ(j.at("kernel"), "mesh");
  EXPECT_EQ(j.at("correct"), true);
  ASSERT_EQ(j.at("ranks").size(), 4u);
  // 4096 FP32 = 16384 B per rank, pulled from each of the 3 peers.
  for (const auto& rank : j.at("ranks")) {
    EXPECT_EQ(rank.at("remote_read_bytes").get<std::uint64_t>(), 3u * 16384u) << rank.dump();
  }
}

TEST(Cli, TheSameRunTwiceWritesByteIdenticalJson) {
  const TempFile first(".json");
  const TempFile second(".json");
  const std::string run =
      "-p a2a3 -d 0,2,5 --kernel mesh --dtype fp16 --op max --size 20000 --json ";
  ASSERT_EQ(run_cli(run + first.path()).exit_code, 0);
  ASSERT_EQ(run_cli(run + second.path()).exit_code, 0);
  const std::string text = read_file(first.path());
  EXPECT_NE(text.find("\"device_time_ns\""), std::string::npos);
  EXPECT_EQ(text, read_file(second.path()));
}

// The JSON is written as it is made, each round dumped on its own at the array's depth: the
// file must be exactly what dumping the whole document gives, nested objects included (the
// rounds' synchronisation costs under a codegen profile, the blocks of a many-core run).
TEST(Cli, JsonWrittenRoundByRoundIsTheWholeDocumentsDump) {
  for (const std::string run : {"-p a2a3-910b2 -d 0-3 --kernel builtin_mesh --codegen after "
                                "--size 64KiB --json ",
                                "-p a2a3-910b2 -d 0-1 --kernel host_mesh --core-num 2 "
                                "--size 2KiB --json "}) {
    SCOPED_TRACE(run);
    const TempFile json(".json");
    ASSERT_EQ(run_cli(run + json.path()).exit_code, 0);
    const std::string text = read_file(json.path());
    const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
    EXPECT_GE(j.at("rounds").size(), 4u);
    EXPECT_EQ(j.dump(2) + "\n", text);
  }
}

// The shipped what-if platforms load by name and run the mesh correctly.
TEST(Cli, Ring8RunsTheMeshOnARing) {
  const Invocation run = run_cli("-p ring8 -d 0,1,2,3 --kernel mesh");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("on ring8 (ring,"), std::string::npos) << run.out;
  EXPECT_EQ(last_line(run.out), "OK") << run.out;
}

TEST(Cli, Switch16RunsTheMeshOnSixteenDevices) {
  const Invocation run =
      run_cli("-p switch16 -d 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 --kernel mesh");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("on switch16 (switch,"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("P = 16"), std::string::npos) << run.out;
  EXPECT_EQ(last_line(run.out), "OK") << run.out;
}

TEST(Cli, UnknownOptionIsAnInputError) {
  expect_input_error(run_cli("--no-such-option 3"), "unrecognised option '--no-such-option'");
}

TEST(Cli, UnknownConfigKeyNamesTheKeyAndTheFile) {
  const TempFile ini(".ini");
  std::ofstream(ini.path()) << "[platform]\nname = bad\n\n[link]\nbogus_key = 3\n";
  const Invocation run = run_cli("-p " + ini.path());
  expect_input_error(run, "link.bogus_key");
  EXPECT_NE(run.err.find(ini.path()), std::string::npos) << run.err;
}

TEST(Cli, MissingConfigFileIsNamed) {
  const std::string missing = (fs::temp_directory_path() / "ars-no-such-dir" / "none.ini").string();
  expect_input_error(run_cli("-p " + missing), "config file not found: " + missing);
}

TEST(Cli, DuplicateDeviceIsNamed) {
  expect_input_error(run_cli("-d 0,1,2,1"), "device 1 is listed twice in -d");
}

TEST(Cli, SizeZeroIsRefused) {
  expect_input_error(run_cli("--size 0"), "--size: '0' must be a positive whole number");
}

// --size and --memory-limit read one vocabulary of units (a bare --memory-limit is bytes).
TEST(Cli, SizesAndMemoryLimitsShareTheUnits) {
  for (const char* size : {"16K", "16k", "16KiB", "16384B", "4096"}) {
    const Invocation run = run_cli(std::string("-k mesh --size ") + size);
    EXPECT_EQ(run.exit_code, 0) << size << run.err;
    EXPECT_NE(run.out.find("4096 x fp32 (16384 B) per rank"), std::string::npos) << size << run.out;
  }
  // The quiet ring's 4096 idle devices cost 48.14 MiB of models.
  const std::string idle = "-p ring8 --platform.devices 4096 -d 0-1 -q --memory-limit ";
  for (const char* limit : {"32M", "32m", "32MiB", "0.03125G", "33554432"}) {
    expect_input_error(run_cli(idle + limit), "more than the memory limit of 32.00 MiB");
  }
  for (const char* limit : {"64M", "1.5g", "1T"}) {
    const Invocation run = run_cli(idle + limit);
    EXPECT_EQ(run.exit_code, 0) << limit << run.err;
  }
}

TEST(Cli, HelpExitsZeroAndMentionsEveryOption) {
  const Invocation run = run_cli("--help");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.err.empty()) << run.err;
  for (const char* option :
       {"--help", "--platform", "--devices", "--kernel", "--op", "--dtype", "--size", "--mode",
        "--repeat", "--signal-shape", "--json", "--vcd", "--dump-schedule", "--timing-only",
        "--max-sim-time", "--print-config"}) {
    EXPECT_NE(run.out.find(std::string(option) + " "), std::string::npos) << option;
  }
  // Every platform key is also an option.
  PlatformConfig config;
  const boost::program_options::options_description keys = platform_options(config);
  for (const auto& key : keys.options()) {
    EXPECT_NE(run.out.find("--" + key->long_name() + " "), std::string::npos) << key->long_name();
  }
}

// One size vocabulary: a bare number counts elements, a unit bytes (nccl-tests' K, M, G).
TEST(Sizes, BareNumbersAreElementsAndUnitsAreBytes) {
  EXPECT_EQ(parse_size("64", DType::FP32), 64u);
  EXPECT_EQ(parse_size("64", DType::FP16), 64u);
  EXPECT_EQ(parse_size("512B", DType::FP32), 128u);
  EXPECT_EQ(parse_size("1K", DType::FP16), 512u);      // 1024 B of 2-byte elements
  EXPECT_EQ(parse_size("16KiB", DType::FP32), 4096u);  // 16384 B of 4-byte elements
  EXPECT_EQ(parse_size("128M", DType::FP32), 128u * 1024 * 1024 / 4);
  EXPECT_EQ(parse_size("1g", DType::FP32), 1024u * 1024 * 1024 / 4);
  try {
    parse_size("128MB", DType::FP32, "-e/--maxbytes");
    ADD_FAILURE() << "128MB was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("-e/--maxbytes: '128MB'", 0), 0u) << e.what();
  }
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(Cli, HelpListsSubcommandsEveryPlatformAndTheSelectedPlatformsValues) {
  const Invocation run = run_cli("-p a2a3 --help");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* subcommand : {"costcard", "calibrate", "validate"}) {
    EXPECT_NE(run.out.find(std::string("  ") + subcommand + " "), std::string::npos) << subcommand;
  }
  // Every platform in configs/, found by listing the directory.
  const std::vector<std::string> names = platform_names();
  EXPECT_GE(names.size(), 4u);
  for (const std::string& name : names) {
    EXPECT_NE(run.out.find(name), std::string::npos) << name;
  }
  // a2a3's own values (the built-in default is 32), printed as the shortest exact text.
  EXPECT_NE(run.out.find("--dma.remote_bytes_per_cycle arg (=15.56)"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("--dma.misaligned_rate_factor arg (=0.7)"), std::string::npos);
  EXPECT_EQ(run.out.find("0.6999"), std::string::npos);
  EXPECT_NE(
      run_cli("costcard -p a2a3 --help").out.find("--dma.remote_bytes_per_cycle arg (=15.56)"),
      std::string::npos);
  const Invocation calibrated = run_cli("-p a2a3-910b2 --help");
  EXPECT_NE(calibrated.out.find("--link.latency_ns arg (=122.1)"), std::string::npos)
      << calibrated.out;
}

// An editor's byte order mark before the first section is not part of its name.
TEST(Cli, ConfigFileMayStartWithAByteOrderMark) {
  const TempFile ini(".ini");
  std::ofstream(ini.path()) << "\xEF\xBB\xBF[platform]\nname = marked\ntopology = switch\n"
                               "devices = 16\n";
  const Invocation run = run_cli("-p " + ini.path() + " -k mesh -q");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const Invocation shown = run_cli("-p " + ini.path() + " --print-config");
  EXPECT_NE(shown.out.find("name = marked"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("topology = switch"), std::string::npos) << shown.out;
}

TEST(Cli, PrintConfigKeepsEveryValuesSourceTag) {
  const Invocation run = run_cli("-p a2a3 --print-config --link.latency_ns 900");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("clock_GHz = 1.8                # spec: 910B2/B3 core clock\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("latency_ns = 900               # command line\n"), std::string::npos);
  // a2a3.ini does not set this key and names no base: the built-in default, said so.
  EXPECT_NE(run.out.find("posted_stores = 0              # built-in default (the file names no "
                         "base)\n"),
            std::string::npos);
}

TEST(Cli, APartialConfigSaysWhatItInheritsFromItsBase) {
  test::ScratchDir dir;
  const std::string ini = dir / "wide.ini";
  std::ofstream(ini) << "base = a2a3\n[platform]\ntopology = switch  # what-if\ndevices = 16\n";
  const Invocation config = run_cli("-p " + ini + " --print-config");
  EXPECT_EQ(config.exit_code, 0) << config.err;
  EXPECT_NE(config.out.find("name = wide                    # the file's name"), std::string::npos)
      << config.out;
  EXPECT_NE(config.out.find("topology = switch              # what-if\n"), std::string::npos);
  EXPECT_NE(config.out.find("devices = 16                   # set in wide.ini, untagged\n"),
            std::string::npos);
  EXPECT_NE(config.out.find("remote_bytes_per_cycle = 15.56 # base a2a3: estimate:"),
            std::string::npos);
  // The report names the file, its base and how many keys it inherits: every key less the
  // three it sets or names itself by.
  PlatformConfig defaults;
  const std::string inherited = std::to_string(platform_options(defaults).options().size() - 3);
  const Invocation run = run_cli("-p " + ini + " -k mesh -d 0,9");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("on wide (switch,"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("config: " + ini + " (base a2a3, " + inherited + " keys inherited)\n"),
            std::string::npos)
      << run.out;
  // Without a base the unset keys are the built-in defaults, and the report says so.
  const std::string bare = dir / "bare.ini";
  std::ofstream(bare) << "[platform]\ntopology = switch\ndevices = 16\n";
  EXPECT_NE(run_cli("-p " + bare + " -k mesh")
                .out.find("config: " + bare + " (no base: " + inherited +
                          " keys take built-in defaults)\n"),
            std::string::npos);
}

TEST(Cli, BuiltinKernelNamesRunWithoutModeAndHandKernelsCarryNoMode) {
  const TempFile builtin(".json");
  const Invocation ring = run_cli("-k builtin_ring -q --json " + builtin.path());
  EXPECT_EQ(ring.exit_code, 0) << ring.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(builtin.path()));
  EXPECT_EQ(j.at("kernel"), "builtin_ring");
  EXPECT_EQ(j.at("mode"), "ring");
  const TempFile hand(".json");
  const Invocation mesh = run_cli("-k mesh --json " + hand.path());
  EXPECT_EQ(mesh.exit_code, 0) << mesh.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(hand.path())).count("mode"), 0u);
  EXPECT_EQ(mesh.out.rfind("allreduce-sim: kernel mesh on a2a3 (", 0), 0u) << mesh.out;
}

// The summary: device time, algbw and busbw, the verdict.
TEST(Cli, QuietPrintsOnlyTheSummary) {
  const Invocation run = run_cli("-k ring -q");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 3u) << run.out;
  EXPECT_EQ(lines[0].rfind("device time: ", 0), 0u);
  EXPECT_EQ(lines[1].rfind("algbw: ", 0), 0u);
  EXPECT_NE(lines[1].find(", busbw: "), std::string::npos);
  EXPECT_EQ(lines[2], "OK");
}

// The round table of a kernel with long phase names: every row as long as the header, so the
// columns stay under their names.
// A figure wider than its column keeps a space before it: on the calibrated profile rank 4
// launches 1020931.111 ns late, wider than start_ns, and waiting a cycle between polls makes
// rank 0's polls eight digits; every row still reads as its ten (rank) and nine (round) fields.
TEST(Cli, FiguresWiderThanTheirColumnsStayApart) {
  const Invocation run = run_cli(
      "-p a2a3-910b2 -k mesh -d 0-4 --sync.poll_period_cycles 1 --launch.offset_cycles 10000000");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> lines = lines_of(run.out);
  const auto fields = [](const std::string& line) {
    std::istringstream words(line);
    std::vector<std::string> all;
    for (std::string word; words >> word;) all.push_back(word);
    return all;
  };
  std::size_t header = 0;
  while (header < lines.size() && lines[header].rfind("rank  device", 0) != 0) ++header;
  ASSERT_LT(header + 5, lines.size()) << run.out;
  for (std::size_t i = header + 1; i <= header + 5; ++i) {
    const std::vector<std::string> row = fields(lines[i]);
    ASSERT_EQ(row.size(), 10u) << lines[i];
    EXPECT_NEAR(std::stod(row[8]), 1e7 / 1.8 * static_cast<double>(i - header - 1), 1e-3);
  }
  EXPECT_GE(fields(lines[header + 1])[6].size(), 7u) << lines[header + 1];  // rank 0's polls
  std::size_t rounds = 0;
  while (rounds < lines.size() && lines[rounds].rfind("rank  round", 0) != 0) ++rounds;
  ASSERT_LT(rounds, lines.size()) << run.out;
  int rows = 0;
  for (std::size_t i = rounds + 1; i < lines.size() && !lines[i].empty(); ++i, ++rows)
    EXPECT_EQ(fields(lines[i]).size(), 9u) << lines[i];
  EXPECT_EQ(rows, 5 * 3);
}

TEST(Cli, RoundTableStaysAlignedWithLongPhaseNames) {
  const Invocation run = run_cli("-k two_phase");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> lines = lines_of(run.out);
  std::size_t header = 0;
  while (header < lines.size() && lines[header].rfind("rank  round  phase", 0) != 0) ++header;
  ASSERT_LT(header, lines.size()) << run.out;
  int rows = 0;
  for (std::size_t i = header + 1; i < lines.size() && !lines[i].empty(); ++i, ++rows) {
    EXPECT_EQ(lines[i].size(), lines[header].size()) << lines[i];
  }
  EXPECT_EQ(rows, 4 * 5);  // stage-in, barrier A, reduce-scatter, barrier B, all-gather
  EXPECT_NE(run.out.find("reduce-scatter "), std::string::npos);
  // The transfer-limits table too: every count ends under the end of "transfers".
  std::size_t limits = 0;
  while (limits < lines.size() && lines[limits].rfind("round  phase", 0) != 0) ++limits;
  ASSERT_LT(limits, lines.size()) << run.out;
  const std::size_t end = lines[limits].find("transfers") + std::string("transfers").size();
  int limit_rows = 0;
  for (std::size_t i = limits + 1; i < lines.size() && !lines[i].empty(); ++i, ++limit_rows) {
    ASSERT_GT(lines[i].size(), end) << lines[i];
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(lines[i][end - 1]))) << lines[i];
    EXPECT_EQ(lines[i][end], ' ') << lines[i];
  }
  EXPECT_EQ(limit_rows, 3);  // the rounds that move data: stage-in, reduce-scatter, all-gather
}

// "A-B" or "A" -> {A, B}.
std::pair<int, int> span_of(const std::string& label) {
  const std::size_t dash = label.find('-');
  const int first = std::stoi(label.substr(0, dash));
  return {first, dash == std::string::npos ? first : std::stoi(label.substr(dash + 1))};
}

// The rounds of `rank` the round table covers, a row "A-B" counting B - A + 1.
std::size_t round_rows_of_rank(const std::string& out, int rank) {
  std::size_t rounds = 0;
  for (const std::string& line : lines_of(out)) {
    std::istringstream words(line);
    std::string r, round, phase;
    double start = -1;
    if (words >> r >> round >> phase >> start && r == std::to_string(rank) &&
        line.find("(") == std::string::npos &&
        round.find_first_not_of("0123456789-") == std::string::npos &&
        phase.find_first_of("0123456789") == std::string::npos) {
      const auto [first, last] = span_of(round);
      rounds += static_cast<std::size_t>(last - first + 1);
    }
  }
  return rounds;
}

TEST(Cli, RanksShownLimitsTheRoundTableAndSaysHowToSeeAll) {
  const std::string run16 =
      "-p switch16 -d 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 -k ring --size 256";
  const Invocation some = run_cli(run16);
  EXPECT_EQ(some.exit_code, 0) << some.err;
  // The ring at P = 16: stage-in, 2(P-1) = 30 rounds, stage-out.
  EXPECT_EQ(round_rows_of_rank(some.out, 7), 32u);
  EXPECT_EQ(round_rows_of_rank(some.out, 8), 0u);
  // Past 8 ranks, alike rounds share rows: fewer rows than rounds, and the table says so.
  EXPECT_NE(some.out.find("(256 rounds in "), std::string::npos) << some.out;
  EXPECT_NE(some.out.find("(rounds of ranks 0-7 of 16 shown; --ranks-shown all shows every rank"),
            std::string::npos)
      << some.out;
  const Invocation all = run_cli(run16 + " --ranks-shown all");
  EXPECT_EQ(round_rows_of_rank(all.out, 15), 32u);
  EXPECT_EQ(all.out.find("--ranks-shown all shows"), std::string::npos);
}

// The rank table's rows: the text between its header and the first blank line.
std::vector<std::string> rank_rows(const std::string& out) {
  const std::size_t header = out.find("rank  device  remote_read_B");
  std::vector<std::string> rows;
  if (header == std::string::npos) return rows;
  for (std::size_t at = out.find('\n', header) + 1; at < out.size() && out[at] != '\n';) {
    const std::size_t end = out.find('\n', at);
    rows.push_back(out.substr(at, end - at));
    at = end + 1;
  }
  return rows;
}

// Past --ranks-shown ranks, consecutive ranks on consecutive devices that did exactly alike
// share a row; every rank a row covers has the row's figures in the JSON, and no two
// neighbouring rows could have been one. Device 8 left out breaks the runs of devices.
TEST(Cli, RankTableGroupsAlikeRanksPastTheRanksShown) {
  const TempFile json(".json");
  const std::string run = "-p switch16 -d 0-7,9-15 -k ring --size 240";
  const Invocation grouped = run_cli(run + " --json " + json.path());
  ASSERT_EQ(grouped.exit_code, 0) << grouped.err;
  const nlohmann::json ranks = nlohmann::json::parse(read_file(json.path())).at("ranks");
  ASSERT_EQ(ranks.size(), 15u);
  const std::vector<std::string> rows = rank_rows(grouped.out);
  ASSERT_EQ(rows.size(), 7u) << grouped.out;
  EXPECT_EQ(rows.back(),
            "(15 ranks in 6 rows: alike consecutive ranks share one; --ranks-shown all lists "
            "every rank)");
  std::vector<std::vector<std::string>> figures;
  int next_rank = 0;
  for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
    std::istringstream words(rows[i]);
    std::string rank_label, device_label;
    words >> rank_label >> device_label;
    const auto [first, last] = span_of(rank_label);
    const auto [first_device, last_device] = span_of(device_label);
    EXPECT_EQ(first, next_rank) << rows[i];
    EXPECT_EQ(last_device - first_device, last - first) << rows[i];
    next_rank = last + 1;
    std::vector<std::string> row(std::istream_iterator<std::string>(words), {});
    ASSERT_EQ(row.size(), 8u) << rows[i];
    for (int r = first; r <= last; ++r) {
      const auto& rank = ranks[static_cast<std::size_t>(r)];
      EXPECT_EQ(rank.at("device"), first_device + (r - first));
      EXPECT_EQ(std::to_string(rank.at("remote_read_bytes").get<int>()), row[0]) << r;
      EXPECT_EQ(std::to_string(rank.at("notifies").get<int>()), row[2]) << r;
      EXPECT_EQ(std::to_string(rank.at("polls").get<int>()), row[4]) << r;
      EXPECT_EQ(std::to_string(rank.at("ub_peak_bytes").get<int>()), row[5]) << r;
      std::ostringstream finish;
      finish << std::fixed << std::setprecision(3) << rank.at("finish_ns").get<double>();
      EXPECT_EQ(finish.str(), row[7]) << r;
    }
    // Neighbouring rows with the same figures are on devices that do not follow each other.
    if (!figures.empty() && figures.back() == row) {
      std::istringstream previous(rows[i - 1]);
      std::string previous_rank, previous_device;
      previous >> previous_rank >> previous_device;
      EXPECT_NE(span_of(previous_device).second + 1, first_device) << rows[i];
    }
    figures.push_back(row);
  }
  EXPECT_EQ(next_rank, 15);

  // Every rank on its own row when asked, and always at P <= --ranks-shown.
  EXPECT_EQ(rank_rows(run_cli(run + " --ranks-shown all").out).size(), 15u);
  EXPECT_EQ(rank_rows(run_cli("-p switch16 -d 0-7 -k ring --size 256").out).size(), 8u);
}

// The unified buffer's peak, worked by hand from the kernels' tiles (aligned to 32 B): the
// ring at P = 4 holds two tiles of its chunk, 64 FP32 / 4 = 64 B each, or 10 FP16 = 20 B
// rounded up to 32; the mesh holds P tiles of at most 16 KiB: at P = 8, 8 x 16,384 B; at P = 16
// the whole buffer, 16 tiles of 11,776 B (188,416 / 16, a multiple of 32).
TEST(Cli, RanksReportTheirUnifiedBufferPeak) {
  const struct {
    std::string run;
    std::uint64_t peak;
  } cases[] = {{"-p a2a3 -d 0-3 --kernel ring --size 64", 2 * 64},
               {"-p a2a3 -d 0-3 --kernel ring --dtype fp16 --size 40", 2 * 32},
               {"-p a2a3 -d 0-7 --kernel mesh --size 4MiB --timing-only", 8 * 16384},
               {"-p switch16 -d 0-15 --kernel mesh --size 1MiB --timing-only", 188416}};
  for (const auto& c : cases) {
    const TempFile json(".json");
    const Invocation run = run_cli(c.run + " --json " + json.path());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json document = nlohmann::json::parse(read_file(json.path()));
    for (const auto& rank : document.at("ranks"))
      EXPECT_EQ(rank.at("ub_peak_bytes").get<std::uint64_t>(), c.peak) << c.run;
    const std::vector<std::string> rows = rank_rows(run.out);
    ASSERT_FALSE(rows.empty()) << run.out;
    std::istringstream words(rows.front());
    std::vector<std::string> row(std::istream_iterator<std::string>(words), {});
    ASSERT_EQ(row.size(), 10u) << rows.front();
    EXPECT_EQ(row[7], std::to_string(c.peak)) << c.run;
  }
}

// A row of alike rounds stands for each of them exactly: in the JSON every round it covers has
// the row's phase and figures, the first starts at the row's start_ns, the rest evenly spaced.
TEST(Cli, AlikeRoundsShareARowThatStandsForEachExactly) {
  const TempFile json(".json");
  const Invocation run = run_cli("-p switch16 -d 0-15 -k ring --size 256 --json " + json.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json rounds = nlohmann::json::parse(read_file(json.path())).at("rounds");
  const auto fixed = [](double ns) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(3) << ns;
    return text.str();
  };
  std::size_t rows = 0;
  std::size_t covered = 0;
  const std::size_t table = run.out.find("round  phase");
  ASSERT_NE(table, std::string::npos) << run.out;
  for (const std::string& line : lines_of(run.out.substr(table))) {
    std::istringstream words(line);
    std::string rank, label, phase, start, barrier, transfer, reduce, bytes, remote;
    if (!(words >> rank >> label >> phase >> start >> barrier >> transfer >> reduce >> bytes >>
          remote) ||
        rank.find_first_not_of("0123456789") != std::string::npos ||
        label.find_first_not_of("0123456789-") != std::string::npos)
      continue;
    ++rows;
    const auto [first, last] = span_of(label);
    // The JSON holds 32 rounds a rank, in rank then round order.
    const auto at = [&](int round) -> const nlohmann::json& {
      return rounds[static_cast<std::size_t>(std::stoi(rank) * 32 + round)];
    };
    const double step = last > first ? at(first + 1).at("start_ns").get<double>() -
                                           at(first).at("start_ns").get<double>()
                                     : 0.0;
    for (int k = first; k <= last; ++k) {
      const nlohmann::json& r = at(k);
      ++covered;
      EXPECT_EQ(r.at("round"), k);
      EXPECT_EQ(r.at("phase"), phase) << line;
      EXPECT_EQ(fixed(r.at("barrier_ns").get<double>()), barrier) << line;
      EXPECT_EQ(fixed(r.at("transfer_ns").get<double>()), transfer) << line;
      EXPECT_EQ(fixed(r.at("reduce_ns").get<double>()), reduce) << line;
      EXPECT_EQ(std::to_string(r.at("bytes").get<int>()), bytes) << line;
      EXPECT_EQ(std::to_string(r.at("remote_bytes").get<int>()), remote) << line;
      EXPECT_NEAR(r.at("start_ns").get<double>(),
                  at(first).at("start_ns").get<double>() + (k - first) * step, 1e-6)
          << line << " round " << k;
    }
    EXPECT_EQ(fixed(at(first).at("start_ns").get<double>()), start) << line;
  }
  EXPECT_EQ(covered, 8u * 32u);  // ranks 0-7, as --ranks-shown asks
  EXPECT_LT(rows, covered / 2);
  EXPECT_NE(run.out.find("(256 rounds in " + std::to_string(rows) + " rows"), std::string::npos)
      << run.out;
}

// The ring on 8 servers, 64 NPUs, its JSON in `json`.
Invocation cluster_ring(const TempFile& json) {
  return run_cli(
      "-p a2a3-cluster --cluster.servers 8 -d all -k ring --size 1MiB --timing-only "
      "--json " +
      json.path());
}

// On a cluster the ring's barrier waits alternate round by round, so few rounds are alike:
// past 32 rows a rank, its rounds share a row per phase, each figure the rounds' mean (the
// JSON's rounds, averaged), with the range of a figure that varies on the line beneath.
// Forty calls of the builtin mesh make 200 rounds a rank: past 32 rows, each of a call's five
// rounds shares a row with that round of every call, of the calls' means, as the JSON has them;
// the bounds table likewise has a row for each round of a call that moves data.
TEST(Cli, RepeatedCallsShareARowForEachRoundOfACall) {
  const TempFile json(".json");
  const Invocation run = run_cli("--repeat 40 --json " + json.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json rounds = nlohmann::json::parse(read_file(json.path())).at("rounds");
  ASSERT_EQ(rounds.size(), 4u * 200u);
  const std::vector<std::string> out = lines_of(run.out.substr(run.out.find("round  phase")));
  const char* const phases[] = {"stage-in", "ready", "exchange", "epilogue", "stage-out"};
  for (int rank = 0; rank < 4; ++rank) {
    for (int j = 0; j < 5; ++j) {
      const std::size_t row = 1 + 2 * static_cast<std::size_t>(rank * 5 + j);
      std::istringstream words(out.at(row));
      std::string owner, span, by, stride, phase, start, barrier, transfer;
      ASSERT_TRUE(words >> owner >> span >> by >> stride >> phase >> start >> barrier >> transfer)
          << out.at(row);
      EXPECT_EQ(owner, std::to_string(rank));
      EXPECT_EQ(span + " " + by + " " + stride,
                std::to_string(j) + ".." + std::to_string(195 + j) + " by 5");
      EXPECT_EQ(phase, phases[j]);
      double barrier_sum = 0, transfer_sum = 0;
      for (int call = 0; call < 40; ++call) {
        const nlohmann::json& r = rounds.at(static_cast<std::size_t>(rank * 200 + call * 5 + j));
        EXPECT_EQ(r.at("phase"), phase);
        barrier_sum += r.at("barrier_ns").get<double>();
        transfer_sum += r.at("transfer_ns").get<double>();
      }
      std::ostringstream means;
      means << std::fixed << std::setprecision(3) << barrier_sum / 40 << " " << transfer_sum / 40;
      EXPECT_EQ(barrier + " " + transfer, means.str()) << out.at(row);
      EXPECT_NE(out.at(row + 1).find("(means of 40 calls"), std::string::npos) << out.at(row + 1);
    }
  }
  for (const char* row :
       {"0..195 by 5  stage-in ", "2..197 by 5  exchange ", "4..199 by 5  stage-out "}) {
    EXPECT_NE(run.out.find("\n" + std::string(row)), std::string::npos) << row << run.out;
  }
  EXPECT_EQ(run.out.find("\n1..196 by 5  ready "), std::string::npos);  // it moves no data
}

// --ranks-shown counts ranks, each shown with all its blocks: two of four ranks with four
// blocks each are eight cores' three rounds.
TEST(Cli, RanksShownCountsRanksWithAllTheirBlocks) {
  const Invocation run =
      run_cli("-d 0-3 --kernel host_mesh --core-num 4 --size 4096 --ranks-shown 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> out = lines_of(run.out.substr(run.out.find("rank  round")));
  std::map<std::string, int> rounds_of;
  std::size_t i = 1;
  for (; i < out.size() && !out[i].empty() && out[i][0] != '('; ++i) {
    std::istringstream words(out[i]);
    std::string owner;
    words >> owner;
    ++rounds_of[owner];
  }
  const std::map<std::string, int> expected = {{"0.0", 3}, {"0.1", 3}, {"0.2", 3}, {"0.3", 3},
                                               {"1.0", 3}, {"1.1", 3}, {"1.2", 3}, {"1.3", 3}};
  EXPECT_EQ(rounds_of, expected) << run.out;
  ASSERT_LT(i, out.size());
  EXPECT_EQ(out[i].rfind("(rounds of ranks 0-1 of 4 shown;", 0), 0u) << out[i];
}

TEST(Cli, PhaseRowsPastThirtyTwoRowsAreTheRoundsMeans) {
  const TempFile json(".json");
  const Invocation run = cluster_ring(json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json rounds = nlohmann::json::parse(read_file(json.path())).at("rounds");
  const std::vector<std::string> out = lines_of(run.out.substr(run.out.find("round  phase")));
  const auto fixed = [](double value, int digits) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(digits) << value;
    return text.str();
  };
  int mean_rows = 0;
  for (std::size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i + 1].find("(means of ") == std::string::npos) continue;
    ++mean_rows;
    std::istringstream words(out[i]);
    std::string rank, label, phase, start, barrier, transfer, reduce;
    ASSERT_TRUE(words >> rank >> label >> phase >> start >> barrier >> transfer >> reduce);
    const auto [first, last] = span_of(label);
    double sums[3] = {0, 0, 0};
    double low = 1e300, high = 0;
    for (int k = first; k <= last; ++k) {
      const nlohmann::json& r = rounds[static_cast<std::size_t>(std::stoi(rank) * 128 + k)];
      EXPECT_EQ(r.at("phase"), phase);
      sums[0] += r.at("barrier_ns").get<double>();
      sums[1] += r.at("transfer_ns").get<double>();
      sums[2] += r.at("reduce_ns").get<double>();
      low = std::min(low, r.at("barrier_ns").get<double>());
      high = std::max(high, r.at("barrier_ns").get<double>());
    }
    const int n = last - first + 1;
    EXPECT_EQ(fixed(sums[0] / n, 3), barrier) << out[i];
    EXPECT_EQ(fixed(sums[1] / n, 3), transfer) << out[i];
    EXPECT_EQ(fixed(sums[2] / n, 3), reduce) << out[i];
    EXPECT_NE(out[i + 1].find("(means of " + std::to_string(n) + " rounds; barrier_ns " +
                              fixed(low, 3) + " to " + fixed(high, 3)),
              std::string::npos)
        << out[i + 1];
  }
  EXPECT_EQ(mean_rows, 16);  // RS and AG of ranks 0-7
  EXPECT_NE(run.out.find("(1024 rounds in 32 rows: "), std::string::npos) << run.out;
}

// The same ring's ranks differ in their polls and finish only, in 33 rows: past 32 they share
// a row of their means, and the line beneath names the ranks at the ends of each range.
TEST(Cli, RanksAlikeButForPollsAndFinishShareARowOfTheirMeans) {
  const TempFile json(".json");
  const Invocation run = cluster_ring(json);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json ranks = nlohmann::json::parse(read_file(json.path())).at("ranks");
  ASSERT_EQ(ranks.size(), 64u);
  double polls = 0;
  std::size_t fewest = 0, latest = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    polls += ranks[i].at("polls").get<double>();
    if (ranks[i].at("polls") < ranks[fewest].at("polls")) fewest = i;
    if (ranks[i].at("finish_ns") > ranks[latest].at("finish_ns")) latest = i;
  }
  std::ostringstream row;
  row << "0-63    0-63" << std::setw(15) << ranks[0].at("remote_read_bytes").get<int>();
  EXPECT_NE(run.out.find(row.str()), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(" " + std::to_string(std::llround(polls / 64)) + " "), std::string::npos);
  std::ostringstream ends;
  ends << "(means of 64 ranks; polls " << ranks[fewest].at("polls").get<int>() << " (rank "
       << fewest << ") to ";
  EXPECT_NE(run.out.find(ends.str()), std::string::npos) << run.out;
  std::ostringstream last;
  last << std::fixed << std::setprecision(3) << ranks[latest].at("finish_ns").get<double>()
       << " (rank " << latest << "))";
  EXPECT_NE(run.out.find(last.str()), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("(64 ranks in 1 row: "), std::string::npos) << run.out;
}

TEST(Cli, ScheduleDumpStatesItsUnitsAndCanCarryTimes) {
  const TempFile plain(".schedule");
  const TempFile timed(".schedule");
  ASSERT_EQ(run_cli("-k ring -q --dump-schedule " + plain.path()).exit_code, 0);
  ASSERT_EQ(run_cli("-k ring -q --dump-schedule-times --dump-schedule " + timed.path()).exit_code,
            0);
  const std::vector<std::string> lines = lines_of(read_file(plain.path()));
  const std::vector<std::string> times = lines_of(read_file(timed.path()));
  ASSERT_EQ(lines.size(), times.size());
  EXPECT_EQ(lines[0], "# offset: elements from the window's start; bytes: bytes");
  EXPECT_EQ(times[0],
            "# t_ns: issue time in ns; offset: elements from the window's start; "
            "bytes: bytes");
  // Every timed line is the plain line after its time; a rank's times never go back.
  double last = -1;
  std::string rank;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto space = times[i].find(' ');
    EXPECT_EQ(times[i].substr(space + 1), lines[i]);
    const double t = std::stod(times[i].substr(5, space - 5));
    const std::string this_rank = lines[i].substr(0, lines[i].find(' '));
    if (this_rank == rank) {
      EXPECT_GE(t, last) << times[i];
    }
    rank = this_rank;
    last = t;
  }
  EXPECT_EQ(times[1].rfind("t_ns=0.000 rank=0 op=round index=0 phase=stage-in", 0), 0u);
}

// The progress line: the share of the run's operations and the time left at the rate so far
// (40 of 100 operations in 2 s: 3 s left), nothing of either before the count is done.
TEST(Progress, LineGivesTheShareAndTheTimeLeftOnceCounted) {
  ProgressFigures f;
  f.simulated_us = 2999.7224;
  f.finished_ranks = 3;
  f.ranks = 768;
  f.wall_s = 2.0;
  f.operations = 40;
  EXPECT_EQ(progress_text(f), "simulated 2999.722 us, 3/768 ranks finished, 2.0 s wall");
  f.total_operations = 100;
  EXPECT_EQ(progress_text(f),
            "simulated 2999.722 us, 3/768 ranks finished, 40 % of 100 operations, 2.0 s wall, "
            "about 3.0 s left");
  f.wall_s = 20;  // 30 s left: whole seconds from 10 s on
  EXPECT_EQ(progress_text(f),
            "simulated 2999.722 us, 3/768 ranks finished, 40 % of 100 operations, 20.0 s wall, "
            "about 30 s left");
  f.operations = 100;  // all issued, the last still running: no time left to tell
  EXPECT_EQ(progress_text(f),
            "simulated 2999.722 us, 3/768 ranks finished, 100 % of 100 operations, 20.0 s wall");
}

// Where the tries before met, the line names the one running: its figures start again.
TEST(Progress, LineNamesTheTryRunning) {
  ProgressFigures f;
  f.simulated_us = 12.5;
  f.ranks = 384;
  f.wall_s = 2.0;
  f.stage = "try 2";
  EXPECT_EQ(progress_text(f), "try 2: simulated 12.500 us, 0/384 ranks finished, 2.0 s wall");
  f.stage = "burst by burst after 3 tries";
  EXPECT_EQ(progress_text(f),
            "burst by burst after 3 tries: simulated 12.500 us, 0/384 ranks finished, 2.0 s wall");
}

}  // namespace
}  // namespace ars
