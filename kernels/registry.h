// The kernels the simulator can run. Adding one is a new file in kernels/ladder/ (the
// tutorial's) or kernels/cluster/ plus one line in registry.cpp.
#pragma once

#include <string>
#include <vector>

#include "kernels/api.h"

namespace ars {

struct KernelSpec {
  const char* name;
  const char* summary;
  bool reduces;  // the golden is the reduction over ranks; otherwise y must equal x
  // Checks the problem against the kernel's contract (throws InputError) and returns the
  // windows and signals it needs.
  Layout (*layout)(const Problem& problem);
  void (*body)(Rank& rank);
  // The kernel's barriers leave its signal all zero, so the signal can be reused: a cell left
  // non-zero after the run is a failure.
  bool clears_signal = false;
  // The kernel runs as problem.core_num SPMD blocks per rank (only the HOST builtin path);
  // every other kernel takes exactly one.
  bool takes_core_num = false;
  // The runtime's own hand-written kernel (the HOST builtins), not compiled code: it runs
  // the runtime's synchronisation (runtime_kernel_sync) and takes no codegen profile.
  bool runtime_kernel = false;
};

// "[rows,cols]", as signal-shape messages show a shape.
std::string shape_text(int rows, int cols);

// builtin_mesh and builtin_ring are the builtin in one mode each: throws InputError when the
// problem asks for the other mode.
void require_builtin_mode(const Problem& problem, const std::string& mode);

// For the kernels other than the builtin: one allreduce per launch, on the signal the
// tutorial gives them. Throws InputError naming the kernel when --repeat, or (unless the
// kernel takes one) --signal-shape or --inter asks for more, rather than silently ignoring it.
void refuse_call_options(const Problem& problem, const char* kernel, bool takes_signal_shape,
                         bool takes_inter = false);

// --inter chooses the hierarchical allreduce's algorithm between servers: every other kernel
// throws InputError naming itself.
void refuse_inter(const Problem& problem, const char* kernel);

// Throws InputError when the problem asks for more than one block of a kernel that runs one:
// the InCore builtins with the real builtin's refusal, the others naming the kernel.
void refuse_core_num(const Problem& problem, const KernelSpec& kernel);

// The kernels that cut the vector into P equal chunks (two_phase, ring, host_ring) have no
// remainder handling: InputError naming the kernel, and the nearest sizes that divide, otherwise.
void require_size_divisible_by_ranks(const Problem& problem, const char* kernel);

// The HOST builtins (host_ring, host_mesh) reduce FP32 with Sum only: InputError naming the
// kernel otherwise.
void refuse_outside_host_path(const Problem& problem, const char* kernel);

const std::vector<KernelSpec>& kernel_registry();
// Every name a user may give: the registered kernels and `builtin` (the builtin in the mode
// --mode chooses: builtin_mesh or builtin_ring).
std::vector<std::string> kernel_names();
// "mesh" or "ring" for builtin_mesh and builtin_ring; nullptr for every other kernel, which
// has no mode.
const char* builtin_mode(const std::string& kernel);
// Throws InputError naming every accepted name when `name` is not a registered kernel.
const KernelSpec& find_kernel(const std::string& name);

}  // namespace ars
