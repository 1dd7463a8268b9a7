// The allreduce-sim binary as a user runs it (path in ARS_BINARY): a run's JSON and verdict,
// the one-line errors and exit code 2 of bad input, and the help.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config.h"

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

}  // namespace
}  // namespace ars
