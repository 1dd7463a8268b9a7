// A costcard sweep split into shards and merged, or stopped and resumed, gives the bytes of
// the sweep run in one go: the CSV and the printed tables.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/run_process.h"

namespace ars {
namespace {

using test::read_file;
using test::ScratchDir;

// Two kernels, two rank counts, five sizes: 20 points, and the same 20 once more on the ideal
// platform for the crossover's --ideal result: 40, so every shard of three has some.
const std::vector<std::string> kSweep = {"costcard", "--kernels", "mesh,ring", "--ranks",
                                         "2,4",      "-b",        "1KiB",      "-e",
                                         "16KiB",    "--jobs",    "1"};

std::vector<std::string> sweep(std::vector<std::string> extra) {
  std::vector<std::string> args = kSweep;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(SweepShards, ThreeShardsMergedGiveTheUnsplitSweep) {
  ScratchDir dir;
  const test::ProcessResult whole = test::run_binary(sweep({"--csv", dir / "whole.csv"}));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  std::size_t points = 0;
  for (const char* k : {"1", "2", "3"}) {
    const std::string file = dir / (std::string("shard") + k + ".jsonl");
    const test::ProcessResult shard =
        test::run_binary(sweep({"--shard", std::string(k) + "/3", "--points", file}));
    ASSERT_EQ(shard.exit_code, 0) << shard.err;
    points += lines(read_file(file));
  }
  EXPECT_EQ(points, 40u);  // 2 kernels x 2 P x 5 sizes x (as given, ideal), each in one shard
  const test::ProcessResult merged =
      test::run_binary(sweep({"--csv", dir / "merged.csv", "--merge", dir / "shard3.jsonl",
                              dir / "shard1.jsonl", dir / "shard2.jsonl"}));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_FALSE(read_file(dir / "whole.csv").empty());
  EXPECT_TRUE(read_file(dir / "whole.csv") == read_file(dir / "merged.csv"));
  EXPECT_EQ(whole.out, merged.out);

  const test::ProcessResult missing =
      test::run_binary(sweep({"--merge", dir / "shard1.jsonl", dir / "shard2.jsonl"}));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("is in none of the files"), std::string::npos) << missing.err;
}

// A point names every value of its platform: points made with a key changed are another
// sweep's, which neither --resume nor --merge takes for this one; and a point edited so that it
// cannot be the run its name says is refused with its line.
TEST(SweepShards, PointsOfAnotherPlatformOrEditedAreNotTaken) {
  ScratchDir dir;
  const std::vector<std::string> one = {"costcard", "--kernels", "mesh", "--ranks", "2", "-b",
                                        "1KiB",     "-e",        "1KiB", "--jobs",  "1"};
  const auto with = [&one](std::vector<std::string> extra) {
    std::vector<std::string> args = one;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::string faster = dir / "faster.jsonl";
  ASSERT_EQ(test::run_binary(with({"--points", faster, "--link.latency_ns", "10"})).exit_code, 0);
  const test::ProcessResult merged = test::run_binary(with({"--merge", faster}));
  EXPECT_EQ(merged.exit_code, 2);
  EXPECT_NE(merged.err.find("--merge: the point mesh P=2 1024B fp32 sum on a2a3 [values "),
            std::string::npos)
      << merged.err;
  EXPECT_EQ(test::run_binary(with({"--merge", faster, "--link.latency_ns", "10"})).exit_code, 0);
  // Resumed without the key, the sweep runs its own point next to the other's.
  ASSERT_EQ(test::run_binary(with({"--points", faster, "--resume"})).exit_code, 0);
  EXPECT_EQ(lines(read_file(faster)), 2u);

  std::string text = read_file(faster);
  const std::string time = "\"device_time_ns\":";
  text.replace(text.find(time) + time.size(), 1, "-");
  const std::string edited = dir / "edited.jsonl";
  std::ofstream(edited) << text;
  const test::ProcessResult negative =
      test::run_binary(with({"--merge", edited, "--link.latency_ns", "10"}));
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_NE(negative.err.find("line 1 is not the point it names: its device time -"),
            std::string::npos)
      << negative.err;
  text = read_file(faster);
  text.replace(text.find("\"run\":{") + 6, text.find('\n') - text.find("\"run\":{") - 6, "{}}");
  std::ofstream(edited) << text;
  const test::ProcessResult empty =
      test::run_binary(with({"--merge", edited, "--link.latency_ns", "10"}));
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("edited.jsonl' line 1: its run cannot be read back"), std::string::npos)
      << empty.err;
}

// A point whose kernel refuses its problem is bad input: it is counted apart and the sweep
// ends with exit code 2, as one such run does.
TEST(SweepShards, PointsTheKernelRefusesEndTheSweepWithTwo) {
  const test::ProcessResult run = test::run_binary(
      {"costcard", "--kernels", "mesh,ring", "--ranks", "3", "-b", "1KiB", "-e", "1KiB"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.out.find("ring                 3       1KiB  not run: ring: size 256 elements is "
                         "not divisible by the rank count P = 3"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("2 points: 1 refused (bad input), 0 did not run to the end, 0 wrong"),
            std::string::npos)
      << run.out;
}

// A sweep killed while it runs keeps every point it finished; resumed, it runs only the rest
// and its CSV is the uninterrupted sweep's.
TEST(SweepShards, AKilledSweepResumedGivesTheSameBytes) {
  ScratchDir dir;
  const test::ProcessResult whole = test::run_binary(sweep({"--csv", dir / "whole.csv"}));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;

  const std::string points = dir / "points.jsonl";
  std::vector<std::string> args = sweep({"--points", points});
  args.insert(args.begin(), std::getenv("ARS_BINARY"));
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  // Kill it once it has finished a few points (bounded, so a broken build fails, not hangs).
  for (int i = 0; i < 6000 && lines(read_file(points)) < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::size_t kept = lines(read_file(points));
  ASSERT_GE(kept, 3u);
  ASSERT_LT(kept, 40u) << "the sweep ended before it could be killed";
  // A point cut short while being written is no point: the resumed sweep drops it.
  std::ofstream(points, std::ios::app) << "{\"point\":\"ring P=4";

  const test::ProcessResult refused = test::run_binary(sweep({"--points", points}));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("add --resume"), std::string::npos) << refused.err;

  const test::ProcessResult resumed =
      test::run_binary(sweep({"--points", points, "--resume", "--csv", dir / "resumed.csv"}));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(lines(read_file(points)), 40u);
  EXPECT_TRUE(read_file(dir / "whole.csv") == read_file(dir / "resumed.csv"));
  EXPECT_EQ(whole.out, resumed.out);
}

// The example scripts: GNU parallel over three shards on this machine, and three Slurm array
// tasks (their environment set by hand, as sbatch --array=1-3 would), each then merged.
TEST(SweepShards, TheParallelAndSlurmScriptsGiveTheUnsplitSweep) {
  ScratchDir dir;
  const test::ProcessResult whole = test::run_binary(sweep({"--csv", dir / "whole.csv"}));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  std::string options;
  for (std::size_t i = 1; i < kSweep.size() - 2; ++i) options += " " + kSweep[i];  // no --jobs
  const std::string scripts = std::string(ARS_SOURCE_DIR) + "/scripts/";
  const std::string env = std::string("ARS_BINARY=") + std::getenv("ARS_BINARY") + " ";

  // Stderr apart: a sweep that takes more than a second on a loaded machine prints its
  // progress there, which the unsplit sweep's stdout does not hold.
  const std::string parallel = env + scripts + "costcard_shards.sh 3 " + (dir / "parallel") +
                               options + " > " + (dir / "parallel.txt") + " 2> " +
                               (dir / "parallel.err");
  ASSERT_EQ(std::system(parallel.c_str()), 0) << read_file(dir / "parallel.err");
  EXPECT_TRUE(read_file(dir / "whole.csv") == read_file(dir / "parallel/costcard.csv"));
  EXPECT_EQ(read_file(dir / "parallel.txt"), whole.out);

  for (const char* task : {"1", "2", "3"}) {
    const std::string slurm = env + "SLURM_ARRAY_TASK_ID=" + task + " SLURM_ARRAY_TASK_COUNT=3 " +
                              scripts + "costcard_slurm.sh " + (dir / "slurm") + options +
                              " > /dev/null 2>&1";
    ASSERT_EQ(std::system(slurm.c_str()), 0) << "task " << task;
  }
  const test::ProcessResult merged =
      test::run_binary(sweep({"--csv", dir / "slurm.csv", "--merge", dir / "slurm/shard1.jsonl",
                              dir / "slurm/shard2.jsonl", dir / "slurm/shard3.jsonl"}));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_TRUE(read_file(dir / "whole.csv") == read_file(dir / "slurm.csv"));
}

}  // namespace
}  // namespace ars
