// Many simulations from one command (sweeps, calibration). SystemC elaborates once per
// process, so every run happens in a forked child that sends its result back as JSON; up to
// `jobs` children run at once. The calling process must not have elaborated anything.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/run.h"

namespace ars {

struct BatchResult {
  RunResult result;      // filled when the run happened; its request is set in any case
  std::string error;     // the InputError or crash of a run that could not happen
  bool refused = false;  // `error` is a refusal of the request (bad input), not a crash
};

// Called after each finished run with (done, total).
using BatchProgress = std::function<void(std::size_t, std::size_t)>;
// Called after each finished run, as soon as it is known, with its index in the requests, its
// result and that result as one line of JSON (what batch_result_from_json reads back).
using BatchFinished = std::function<void(std::size_t, const BatchResult&, const std::string& json)>;

std::vector<BatchResult> run_batch(const std::vector<RunRequest>& requests, int jobs,
                                   const BatchProgress& progress = {},
                                   const BatchFinished& finished = {});

// One run's outcome as one line of JSON (no newline), and read back for its request: what a
// simulation process sends, and what a sweep keeps of each finished point.
std::string batch_json(const BatchResult& run);
BatchResult batch_result_from_json(const std::string& json, const RunRequest& request);

// The parts of a run result that to_json() writes, read back.
RunResult result_from_json(const std::string& json, const RunRequest& request);

}  // namespace ars
