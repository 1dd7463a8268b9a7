// The progress line of a long run, drawn on stderr by a thread of its own: from 2 s of wall
// time on, twice a second, rewritten in place with '\r' and erased when the run ends.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "models/records/run_progress.h"

namespace ars {

struct ProgressFigures {
  std::string stage;  // which try of the run ("" for a run's first or only one)
  double simulated_us = 0;
  int finished_ranks = 0;
  int ranks = 0;
  double wall_s = 0;
  std::uint64_t operations = 0;        // issued so far
  std::uint64_t total_operations = 0;  // the run's; 0 while not yet counted
};

// "simulated 2999.722 us, 0/768 ranks finished, 41 % of 3145728 operations, 2.0 s wall,
// about 2.9 s left": the share and what is left once the run's operations are counted, the
// time left at the rate of operations so far; after "try 2: " or "burst by burst after 3
// tries: " where the tries before met (the wall time and what is left are this try's).
std::string progress_text(const ProgressFigures& figures);

class ProgressLine {
 public:
  // `count_rank` counts one rank's operations; the line's thread counts every rank with it,
  // on its own core, and stops counting when the run ends first. `stage`: see ProgressFigures.
  ProgressLine(const RunProgress& progress, int ranks, std::string stage,
               std::function<std::uint64_t(int rank)> count_rank);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();

 private:
  void draw();
  bool ended();

  const RunProgress& progress_;
  int ranks_;
  std::string stage_;
  std::function<std::uint64_t(int rank)> count_rank_;
  int width_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace ars
