// `allreduce-sim costcard`: sweeps kernels x P x sizes, runs every point in its own process
// (run_batch) and compares it with the kernel's analytical card (sim/studies/cards.h): bytes,
// rounds, notifies and waits must match exactly (exit 1 otherwise), time is reported with its
// deviation and, where it deviates, where the difference comes from.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <vector>

namespace ars {

int costcard_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// nccl-tests' bus bandwidth of an allreduce: algbw x 2(P-1)/P.
double allreduce_busbw(double algbw, int ranks);

// The question users ask of a core-count sweep: index of the smallest core count (times listed
// by ascending core count) whose time is within `margin` (0.05: 5 %) of the fastest.
std::size_t smallest_near_best(const std::vector<double>& times_ns, double margin);

// A ring that beats the mesh by this much or less (in % of the mesh's time) only ties with it:
// run-to-run noise on hardware and the model's own error are larger than that.
constexpr double kCrossoverTiePercent = 1.0;

// Index of the smallest size from which the ring is faster than the mesh by more than
// `tie_percent` at this and every larger size (sizes ascending); nullopt when it is not so at
// the largest size.
std::optional<std::size_t> find_crossover(const std::vector<double>& mesh_ns,
                                          const std::vector<double>& ring_ns,
                                          double tie_percent = kCrossoverTiePercent);

// For every size, the index of the fastest kernel among `ns_by_kernel` (one time per size and
// kernel; NaN where a kernel did not run); nullopt where none ran. Ties go to the first listed.
std::vector<std::optional<std::size_t>> find_fastest(
    const std::vector<std::vector<double>>& ns_by_kernel);

}  // namespace ars
