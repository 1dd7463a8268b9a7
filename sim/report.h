// What a run reports: a human table (per rank and per round), and the JSON record.
#pragma once

#include <iosfwd>
#include <string>

#include "sim/run.h"

namespace ars {

// The per-rank and per-round tables, the wall time and rate, and the verdict line.
void print_report(std::ostream& out, const RunResult& result);

// The run as JSON: no wall-clock figures, so the same command writes the same bytes.
std::string to_json(const RunResult& result);

// The executed operations, one line each, rank by rank (stable across runs).
std::string schedule_text(const RunResult& result);

}  // namespace ars
