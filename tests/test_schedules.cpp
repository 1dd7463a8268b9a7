// The step-11 "IR diff": the schedules kept in traces/ are what the simulator writes today, and
// they show the lesson: the builtin ring moves the hand ring's N/P chunks from the same left
// neighbour, but synchronises with full-mesh barriers where the hand ring only hands off to
// its right neighbour.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "tests/run_process.h"

namespace ars {
namespace {

using test::read_file;
using test::run_binary;
using test::ScratchDir;

std::string dump(const std::vector<std::string>& kernel_args, const ScratchDir& dir) {
  std::vector<std::string> args = kernel_args;
  const std::string path = dir / "run.schedule";
  args.insert(args.end(), {"-d", "0,1,2,3", "--size", "64", "--dump-schedule", path});
  const auto run = run_binary(args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return read_file(path);
}

// Lines of `schedule` with this rank and op, e.g. ("rank=0", "op=notify").
std::vector<std::string> lines_of(const std::string& schedule, const std::string& rank,
                                  const std::string& op) {
  std::vector<std::string> out;
  std::istringstream in(schedule);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(rank + " " + op + " ", 0) == 0) out.push_back(line);
  }
  return out;
}

std::set<std::string> peers_notified(const std::string& schedule) {
  std::set<std::string> peers;
  for (const std::string& line : lines_of(schedule, "rank=0", "op=notify")) {
    const auto at = line.find("peer=");
    const std::string peer = line.substr(at, line.find(' ', at) - at);
    if (line.find("value=1") != std::string::npos) peers.insert(peer);  // not the epilogue
  }
  return peers;
}

TEST(Schedules, KeptStepElevenDumpsAreWhatTheSimulatorWrites) {
  ScratchDir dir;
  EXPECT_EQ(dump({"-k", "ring"}, dir), read_file(ARS_SOURCE_DIR "/traces/ring_hand_p4.schedule"));
  EXPECT_EQ(dump({"-k", "builtin", "--mode", "ring"}, dir),
            read_file(ARS_SOURCE_DIR "/traces/ring_builtin_p4.schedule"));
}

TEST(Schedules, BuiltinRingPullsTheSameChunksButBarriersTheFullMesh) {
  ScratchDir dir;
  const std::string hand = dump({"-k", "ring"}, dir);
  const std::string builtin = dump({"-k", "builtin", "--mode", "ring"}, dir);
  // The same pulls: every rank reads N/P = 16 FP32 from its left neighbour in each of the
  // 2(P-1) = 6 rounds.
  EXPECT_EQ(lines_of(hand, "rank=0", "op=remote_load"),
            lines_of(builtin, "rank=0", "op=remote_load"));
  EXPECT_EQ(lines_of(hand, "rank=0", "op=remote_load").size(), 6u);
  // The hand ring hands off to its right neighbour only: 2(P-1) = 6 notifies per rank. The
  // builtin notifies every peer twice per round (ready, read-complete) plus its epilogue:
  // 4K(P-1)^2 + 2(P-1)^2 = 36 + 18 = 54 with K = 1.
  EXPECT_EQ(lines_of(hand, "rank=0", "op=notify").size(), 6u);
  EXPECT_EQ(lines_of(builtin, "rank=0", "op=notify").size(), 54u);
  EXPECT_EQ(peers_notified(hand), (std::set<std::string>{"peer=1"}));
  EXPECT_EQ(peers_notified(builtin), (std::set<std::string>{"peer=1", "peer=2", "peer=3"}));
}

}  // namespace
}  // namespace ars
