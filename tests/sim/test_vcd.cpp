// The waveform as a user meets it: GTKWave's own reader takes it, the hierarchy is per device,
// and the values tell the run's story (links busy while data moves, signal cells back at zero
// after the builtin's self-clearing epilogue).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/cli.h"
#include "sim/memory_guard.h"
#include "tests/parsed_run.h"
#include "tests/run_process.h"

namespace ars {
namespace {

using test::parse_run;
using test::ParsedRun;
using test::read_file;
using test::run_binary;
using test::ScratchDir;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Variable code -> name, and the last value written to each code, from a VCD text.
struct Waveform {
  std::map<std::string, std::string> names;
  std::map<std::string, std::string> last;
  std::map<std::string, std::size_t> ones;  // how often a 1-bit variable went to 1
};

Waveform parse(const std::string& vcd) {
  Waveform w;
  std::istringstream in(vcd);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "$var") {
      std::string type, width, code, name;
      words >> type >> width >> code >> name;
      w.names[code] = name;
    } else if (!first.empty() && first[0] == 'b') {
      std::string code;
      words >> code;
      w.last[code] = first.substr(1);
    } else if (!first.empty() && (first[0] == '0' || first[0] == '1')) {
      const std::string code = first.substr(1);
      w.last[code] = first.substr(0, 1);
      if (first[0] == '1') ++w.ones[code];
    }
  }
  return w;
}

TEST(Vcd, GtkwaveReadsEveryVariableInAPerDeviceHierarchy) {
  ScratchDir dir;
  const std::string vcd = dir / "run.vcd";
  const auto run = run_binary(
      {"-k", "builtin", "--mode", "ring", "-d", "0,1,2,3", "--size", "4096", "--vcd", vcd});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string text = read_file(vcd);

  // GTKWave's converter parses the file; its FST, written back as VCD, keeps every variable.
  ASSERT_EQ(std::system(("vcd2fst " + vcd + " " + dir / "run.fst" + " >/dev/null 2>&1").c_str()),
            0);
  ASSERT_EQ(std::system(
                ("fst2vcd " + dir / "run.fst" + " > " + dir / "back.vcd" + " 2>/dev/null").c_str()),
            0);
  const std::string back = read_file(dir / "back.vcd");
  EXPECT_GT(count(text, "$var "), 0u);
  EXPECT_EQ(count(back, "$var "), count(text, "$var "));
  for (int d = 0; d < 4; ++d) {
    EXPECT_NE(back.find("$scope module dev" + std::to_string(d) + " $end"), std::string::npos);
  }
  for (const char* scope : {"core", "dma", "ub", "signal"}) {
    // One such scope under each of the four devices taking part.
    EXPECT_EQ(count(back, std::string("$scope module ") + scope + " $end"), 4u) << scope;
  }

  const Waveform w = parse(text);
  std::size_t cells = 0;
  std::size_t busy_links = 0;
  for (const auto& [code, name] : w.names) {
    if (name.rfind("signal_r", 0) == 0) {
      ++cells;
      // The ring's epilogue adds -2K to every non-self cell: the signal ends all zero.
      EXPECT_EQ(w.last.count(code) ? w.last.at(code) : "0", "0") << name;
    }
    if (name.find("_busy") != std::string::npos && name.rfind("link_to_", 0) == 0 &&
        w.ones.count(code)) {
      ++busy_links;
    }
  }
  // Four devices, each a [2(P-1), P] = [6, 4] signal of which only the cells a run writes or
  // polls are variables: every row of the three peers' columns, never the rank's own column.
  EXPECT_EQ(cells, 4u * 6u * 3u);
  // Each rank pulls from its left neighbour: four link directions carry data.
  EXPECT_EQ(busy_links, 4u);
}

// The text a Text variable's bit vector carries: 8 bits per character, first character on top.
std::string ascii(const std::string& bits) {
  const std::size_t padded = (bits.size() + 7) / 8 * 8;
  const std::string all = std::string(padded - bits.size(), '0') + bits;
  std::string text;
  for (std::size_t at = 0; at < all.size(); at += 8) {
    const char c = static_cast<char>(std::stoi(all.substr(at, 8), nullptr, 2));
    if (c != 0) text += c;
  }
  return text;
}

// Phase names in full (barrier A and B apart), the devices outside -d without scopes, and a
// GTKWave save file beside the VCD that groups each device's phase (ASCII), round, busy links
// and signal cells.
TEST(Vcd, FullPhaseNamesOnlyTheDevicesTakingPartAndASaveFile) {
  ScratchDir dir;
  const std::string vcd = dir / "two_phase.vcd";
  const auto run =
      run_binary({"-k", "two_phase", "-d", "0,2", "--size", "4096", "--vcd", vcd, "-q"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string text = read_file(vcd);
  ASSERT_EQ(std::system(("vcd2fst " + vcd + " " + dir / "run.fst" + " >/dev/null 2>&1").c_str()),
            0);
  // dev1 (and the others not in -d) carry nothing: no scope.
  EXPECT_EQ(count(text, "$scope module dev"), 2u) << text.substr(0, 2000);
  EXPECT_EQ(text.find("$scope module dev1 "), std::string::npos);

  std::string phase_code;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(" phase $end") != std::string::npos && phase_code.empty()) {
      std::istringstream words(line);
      std::string var, type, width;
      words >> var >> type >> width >> phase_code;
      // "reduce-scatter", the longest name, fits: 14 characters of 8 bits.
      EXPECT_EQ(width, "112");
    }
  }
  std::vector<std::string> phases;
  std::istringstream changes(text);
  for (std::string line; std::getline(changes, line);) {
    if (line.size() > phase_code.size() + 2 && line[0] == 'b' &&
        line.compare(line.size() - phase_code.size() - 1, std::string::npos, " " + phase_code) ==
            0) {
      phases.push_back(ascii(line.substr(1, line.size() - phase_code.size() - 2)));
    }
  }
  const std::vector<std::string> expected = {
      "", "stage-in", "barrier A", "reduce-scatter", "barrier B", "all-gather"};
  ASSERT_GE(phases.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(phases[i], expected[i]) << i;

  const std::string gtkw = read_file(dir / "two_phase.gtkw");
  EXPECT_NE(gtkw.find("[dumpfile] \"two_phase.vcd\"\n"), std::string::npos) << gtkw;
  for (const auto& [device, peer, own] : {std::tuple{"dev0", "1", "0"}, {"dev2", "0", "1"}}) {
    const std::string d = device;
    // A group per device: its phase in ASCII, its round in decimal, its busy link, its cells.
    EXPECT_NE(gtkw.find("@800200\n-" + d + "\n@820\n" + d + ".core.phase[111:0]\n@24\n" + d +
                        ".core.round[15:0]\n@28\n" + d + ".link_to_"),
              std::string::npos)
        << gtkw;
    // The cells are those of the peer's column, which its notifies write; the rank's own
    // column is never touched and has no variable.
    EXPECT_NE(gtkw.find("@24\n" + d + ".signal.signal_r0_c" + peer + "[31:0]\n@24\n" + d +
                        ".signal.signal_r1_c" + peer + "[31:0]\n@1000200\n-" + d + "\n"),
              std::string::npos)
        << gtkw;
    EXPECT_EQ(gtkw.find(d + ".signal.signal_r0_c" + std::string(own)), std::string::npos);
  }
  EXPECT_EQ(gtkw.find("dev1"), std::string::npos);
}

// Every variable's full name (scope path and name) -> its changes as "time value" lines.
std::map<std::string, std::vector<std::string>> histories(const std::string& vcd) {
  std::map<std::string, std::string> name_of;
  std::map<std::string, std::vector<std::string>> by_name;
  std::vector<std::string> scope;
  std::string now = "0";
  std::istringstream in(vcd);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "$scope") {
      std::string kind, name;
      words >> kind >> name;
      scope.push_back(name);
    } else if (first == "$upscope") {
      scope.pop_back();
    } else if (first == "$var") {
      std::string type, width, code, name;
      words >> type >> width >> code >> name;
      std::string full;
      for (const std::string& part : scope) full += part + ".";
      name_of[code] = full + name;
      by_name[full + name];
    } else if (!first.empty() && first[0] == '#') {
      now = first.substr(1);
    } else if (!first.empty() && first[0] == 'b') {
      std::string code;
      words >> code;
      by_name[name_of.at(code)].push_back(now + " " + first);
    } else if (!first.empty() && (first[0] == '0' || first[0] == '1')) {
      by_name[name_of.at(first.substr(1))].push_back(now + " " + first.substr(0, 1));
    }
  }
  return by_name;
}

// --vcd-devices keeps the waveform of a few devices out of many: their variables change exactly
// as in the whole waveform, and the other devices taking part have no scope and no group.
TEST(Vcd, DevicesShownAreThoseAskedWithTheSameChanges) {
  ScratchDir dir;
  const std::vector<std::string> run = {"-p",   "a2a3",   "-d",    "0-7", "-k",
                                        "mesh", "--size", "64KiB", "-q"};
  std::vector<std::string> whole_args = run;
  whole_args.insert(whole_args.end(), {"--vcd", dir / "whole.vcd"});
  std::vector<std::string> part_args = run;
  part_args.insert(part_args.end(), {"--vcd", dir / "part.vcd", "--vcd-devices", "0,3"});
  ASSERT_EQ(run_binary(whole_args).exit_code, 0);
  ASSERT_EQ(run_binary(part_args).exit_code, 0);
  const auto whole = histories(read_file(dir / "whole.vcd"));
  const auto part = histories(read_file(dir / "part.vcd"));
  std::size_t shown = 0;
  for (const auto& [name, changes] : whole) {
    const bool asked = name.rfind("dev0.", 0) == 0 || name.rfind("dev3.", 0) == 0;
    const auto found = part.find(name);
    if (!asked) {
      EXPECT_EQ(found, part.end()) << name;
      continue;
    }
    ASSERT_NE(found, part.end()) << name;
    EXPECT_EQ(found->second, changes) << name;
    shown += changes.size();
  }
  EXPECT_EQ(part.size(), 2 * whole.size() / 8);  // two devices' variables of eight alike
  EXPECT_GT(shown, 100u);
  const std::string gtkw = read_file(dir / "part.gtkw");
  EXPECT_NE(gtkw.find("-dev0\n"), std::string::npos);
  EXPECT_NE(gtkw.find("-dev3\n"), std::string::npos);
  EXPECT_EQ(gtkw.find("dev1"), std::string::npos);
}

// A signal cell is a variable once the run writes it or a core polls it: in a deadlock the
// cells the ranks wait on, never written, are there at zero, and no other cell stays at zero
// (a [2(P-1), P] signal at thousands of ranks would otherwise declare millions of cells).
TEST(Vcd, SignalCellsAreThoseWrittenOrPolled) {
  ScratchDir dir;
  const auto run = run_binary({"-k", "ring", "-d", "0-3", "--size", "4096", "--fault",
                               "drop-notify:0:1", "--vcd", dir / "stuck.vcd", "-q"});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  ASSERT_NE(run.out.find("rank 1 (device 1) waits on signal[1,0] Ge 1, cell holds 0"),
            std::string::npos)
      << run.out;
  std::set<std::string> never_written;
  std::size_t cells = 0;
  for (const auto& [name, changes] : histories(read_file(dir / "stuck.vcd"))) {
    if (name.find(".signal.") == std::string::npos) continue;
    ++cells;
    if (changes == std::vector<std::string>{"0 b0"}) never_written.insert(name);
  }
  // The deadlock's four waits, as the report names them.
  EXPECT_EQ(never_written,
            (std::set<std::string>{"dev0.signal.signal_r4_c3", "dev1.signal.signal_r1_c0",
                                   "dev2.signal.signal_r2_c1", "dev3.signal.signal_r3_c2"}));
  EXPECT_GT(cells, never_written.size());
  EXPECT_LT(cells, 4u * 6u * 4u);
}

// --vcd-devices asks for devices of the VCD: without --vcd, or naming a device that takes no part,
// it is refused with exit 2 and no file written.
TEST(Vcd, DevicesShownMustTakePartAndNeedTheVcd) {
  ScratchDir dir;
  const auto alone = run_binary({"-d", "0,1", "--vcd-devices", "0"});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("--vcd-devices: needs --vcd FILE"), std::string::npos) << alone.err;
  const auto outside = run_binary({"-d", "0,1", "--vcd", dir / "w.vcd", "--vcd-devices", "1,6"});
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_NE(outside.err.find("--vcd-devices: device 6 does not take part in the run (-d 0,1)"),
            std::string::npos)
      << outside.err;
  EXPECT_FALSE(std::ifstream(dir / "w.vcd").good());
}

// `all` shows every device taking part, as leaving --vcd-devices out does, not the platform's.
TEST(Vcd, AllDevicesShownAreThoseTakingPart) {
  ScratchDir dir;
  const auto all = run_binary({"-d", "2-5", "--vcd", dir / "all.vcd", "--vcd-devices", "all"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  const auto plain = run_binary({"-d", "2-5", "--vcd", dir / "plain.vcd"});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(read_file(dir / "all.vcd"), read_file(dir / "plain.vcd"));
}

// The memory guard charges the VCD for the devices it shows, from the operations each rank's
// body asks for. The ring at P = 64, 64 KiB a rank (1 KiB chunks and tiles), per rank: 128
// rounds; 571 transfers of 1 KiB (stage-in and stage-out 64 loads and 64 stores each, 63 RS
// rounds of pull, load and store, 63 AG rounds of pull and store), 1142 bursts of 512 B; 63
// reduces; 126 notifies, 126 waits: 1014 operations, 1142 x 96 + 1014 x 128 = 239424 B.
TEST(Vcd, MemoryGuardChargesTheOperationsOfTheDevicesShown) {
  const std::vector<std::string> ring = {
      "-p",     "ring8", "--platform.devices", "64",    "-d",   "all", "-k", "ring",
      "--size", "64KiB", "--timing-only",      "--vcd", "w.vcd"};
  const auto estimate = [](const std::vector<std::string>& args) {
    const ParsedRun run = parse_run(args);
    return estimate_memory(run.request, *run.kernel, run.problem, run.layout, UINT64_MAX);
  };
  // The links shown carry 256 B a burst or notify: each rank pulls 126 chunks of two bursts from
  // the rank before it and notifies the rank after it 126 times, each over the one ring link
  // of the sending device, and 126 notifies land on it. Every device shown: every link.
  const std::uint64_t links_of_every_rank = (126 * 2 + 126 + 126) * 256;
  const MemoryEstimate every = estimate(ring);
  EXPECT_EQ(every.traces, 64u * 239424 + 64 * links_of_every_rank);
  EXPECT_FALSE(every.counted_in_part);
  // Devices 0 and 1: the links of 0 and 1, which carry ranks 1's and 2's pulls and ranks 0's
  // and 1's notifies, and the notifies landing on 0 and 1.
  std::vector<std::string> two = ring;
  two.insert(two.end(), {"--vcd-devices", "0,1"});
  const std::uint64_t links_of_two = (2 * 126 * 2 + 2 * 126 + 2 * 126) * 256;
  EXPECT_EQ(estimate(two).traces, 2u * 239424 + links_of_two);
  std::vector<std::string> no_vcd(ring.begin(), ring.end() - 2);
  EXPECT_EQ(estimate(no_vcd).traces, 0u);
  std::vector<std::string> with_schedule = two;
  with_schedule.insert(with_schedule.end(), {"--dump-schedule", "s.txt"});
  // Every rank's lines in the dump (96 B each, one per operation), and the two devices' VCD.
  EXPECT_EQ(estimate(with_schedule).traces, 64u * 1014 * 96 + 2u * 239424 + links_of_two);
}

// A waveform keeps the links of devices that take no part, which carry the flows between the
// ranks: the barrier of devices 0 and 3 on ring8, device 0 shown. Rank 0's notify crosses the
// clockwise links of devices 0, 1 and 2 (all shown), rank 1's the counter-clockwise links of 3,
// 2 and 1 (two shown) and lands on device 0: six charges of 256 B, where devices 0 and 1 have
// two (rank 0's notify on device 0's link, and the landing), for the same operations of rank 0.
TEST(Vcd, MemoryGuardChargesTheLinksOfDevicesThatTakeNoPart) {
  const auto traces = [](const std::string& devices) {
    const ParsedRun run = parse_run(
        {"-p", "ring8", "-d", devices, "-k", "barrier", "--vcd", "w.vcd", "--vcd-devices", "0"});
    return estimate_memory(run.request, *run.kernel, run.problem, run.layout, UINT64_MAX).traces;
  };
  EXPECT_EQ(traces("0,3") - traces("0,1"), (6u - 2u) * 256);
}

// Under the limit, the guard counts only until the total passes it: the waveform of every
// device (22.49 MiB of changes, the devices' 14.61 and their links' 7.88, over 5.25 MiB of
// device models, 64 x (12 + 72) KiB, and the cells the ring's notifies write) is refused under
// 16 MiB as "more than" what it counted; two devices run.
TEST(Vcd, MemoryGuardRefusesAWaveformOverTheLimitAndNamesTheWayOut) {
  ScratchDir dir;
  const std::vector<std::string> run = {"-p",
                                        "ring8",
                                        "--platform.devices",
                                        "64",
                                        "-d",
                                        "all",
                                        "-k",
                                        "ring",
                                        "--size",
                                        "64KiB",
                                        "--timing-only",
                                        "--vcd",
                                        dir / "w.vcd",
                                        "--memory-limit",
                                        "16MiB",
                                        "-q"};
  const auto every = run_binary(run);
  EXPECT_EQ(every.exit_code, 2);
  EXPECT_NE(every.err.find("needs more than 16.00 MiB of host memory (global memory 0.00 B, "
                           "signal cells more than "),
            std::string::npos)
      << every.err;
  EXPECT_NE(every.err.find(", traces more than "), std::string::npos) << every.err;
  EXPECT_NE(every.err.find("), more than the memory limit of 16.00 MiB; use "
                           "--vcd-devices to show fewer devices, a smaller --size, or a larger "
                           "--memory-limit\n"),
            std::string::npos)
      << every.err;  // not --timing-only, which the run already asks for
  EXPECT_FALSE(std::ifstream(dir / "w.vcd").good());
  std::vector<std::string> two = run;
  two.insert(two.end(), {"--vcd-devices", "0,1"});
  const auto shown = run_binary(two);
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(read_file(dir / "w.vcd").find("$scope module dev1 $end"), std::string::npos);
}

}  // namespace
}  // namespace ars
