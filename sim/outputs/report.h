// What a run reports: a human table (per rank and per round), and the JSON record.
#pragma once

#include <iosfwd>
#include <string>

#include "sim/run.h"

namespace ars {

struct ReportOptions {
  // The per-round table shows the first this many ranks (0: every rank); the JSON has all.
  int ranks_shown = 8;
  bool explain = false;  // print the critical path step by step
};

// The per-rank and per-round tables, the wall time and rate, the critical path's summary
// (with `explain`, the path step by step) and the verdict line; with the request's `quiet`,
// only the device time, algbw, busbw and the verdict.
void print_report(std::ostream& out, const RunResult& result, const ReportOptions& options = {});

// The run as JSON: no wall-clock figures, so the same command writes the same bytes. Written
// as it is made: a run's rounds are millions of objects at thousands of ranks, too many to
// hold as a document.
void write_json(std::ostream& out, const RunResult& result);
std::string to_json(const RunResult& result);

// nccl-tests' bandwidths of a completed run, in GB/s: algbw = bytes per rank / device time,
// busbw = algbw x 2(P-1)/P.
double algbw_GBps(const RunResult& result);
double busbw_GBps(const RunResult& result);

// The executed operations, one line each, rank by rank (stable across runs), after a header
// line stating the units; `with_times` starts each line with its issue time in ns.
void write_schedule(std::ostream& out, const RunResult& result, bool with_times = false);

}  // namespace ars
