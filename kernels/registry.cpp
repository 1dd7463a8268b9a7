#include "kernels/registry.h"

#include <algorithm>

namespace ars {

namespace kernels {
// One line per kernel: its descriptor is defined in its own file.
extern const KernelSpec kBarrier;
extern const KernelSpec kMesh;
extern const KernelSpec kTwoPhase;
extern const KernelSpec kRing;
extern const KernelSpec kHostRing;
extern const KernelSpec kBuiltinMesh;
extern const KernelSpec kBuiltinRing;
extern const KernelSpec kRhd;
extern const KernelSpec kHierarchical;
extern const KernelSpec kHostMesh;
}  // namespace kernels

const std::vector<KernelSpec>& kernel_registry() {
  static const std::vector<KernelSpec> registry = {
      kernels::kBarrier,  kernels::kMesh,         kernels::kTwoPhase,    kernels::kRing,
      kernels::kHostRing, kernels::kBuiltinMesh,  kernels::kBuiltinRing, kernels::kHostMesh,
      kernels::kRhd,      kernels::kHierarchical,
  };
  return registry;
}

std::string shape_text(int rows, int cols) {
  return "[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
}

void require_builtin_mode(const Problem& problem, const std::string& mode) {
  if (problem.mode != mode) {
    throw InputError("kernel builtin_" + mode + " is the builtin in mode " + mode +
                     ", but the mode is '" + problem.mode + "' (use --kernel builtin_" +
                     problem.mode + ")");
  }
  refuse_inter(problem, ("builtin_" + mode).c_str());
}

void refuse_inter(const Problem& problem, const char* kernel) {
  if (!problem.inter.empty()) {
    throw InputError(std::string("--inter: ") + kernel +
                     " has no inter-server phase; only hierarchical takes --inter");
  }
}

void refuse_call_options(const Problem& problem, const char* kernel, bool takes_signal_shape,
                         bool takes_inter) {
  if (!takes_inter) refuse_inter(problem, kernel);
  if (problem.repeat != 1) {
    throw InputError(std::string("--repeat: ") + kernel +
                     " runs one allreduce per launch; only the builtin (mesh, ring) repeats");
  }
  if (problem.signal_shape && !takes_signal_shape) {
    throw InputError(std::string("--signal-shape: ") + kernel +
                     " allocates its own signal; only the builtins and host_ring take one");
  }
}

void require_size_divisible_by_ranks(const Problem& problem, const char* kernel) {
  const auto ranks = static_cast<std::uint64_t>(problem.ranks);
  const std::uint64_t below = problem.elements / ranks * ranks;
  if (below == problem.elements) return;
  // At thousands of ranks a round size (1 MiB) rarely divides: name the sizes that do.
  const std::string above = std::to_string(below + ranks);
  const std::string nearest = below == 0 ? above : std::to_string(below) + " or " + above;
  throw InputError(std::string(kernel) + ": size " + std::to_string(problem.elements) +
                   " elements is not divisible by the rank count P = " + std::to_string(ranks) +
                   " (the nearest that are: " + nearest + " elements)");
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const KernelSpec& k : kernel_registry()) names.emplace_back(k.name);
  names.emplace_back("builtin");
  return names;
}

const char* builtin_mode(const std::string& kernel) {
  if (kernel == "builtin_mesh") return "mesh";
  if (kernel == "builtin_ring") return "ring";
  return nullptr;
}

void refuse_outside_host_path(const Problem& problem, const char* kernel) {
  std::string words = kernel;  // host_ring -> host ring
  std::replace(words.begin(), words.end(), '_', ' ');
  if (problem.op != ReduceOp::Sum) {
    throw InputError(std::string(kernel) + ": op " + to_string(problem.op) +
                     " is not supported (the " + words + " reduces with Sum only)");
  }
  if (problem.dtype != DType::FP32) {
    throw InputError(std::string(kernel) + ": dtype " + to_string(problem.dtype) +
                     " is not supported (the " + words + " takes FP32 only)");
  }
}

void refuse_core_num(const Problem& problem, const KernelSpec& kernel) {
  if (problem.core_num == 1 || kernel.takes_core_num) return;
  const std::string name = kernel.name;
  if (name == "builtin_mesh" || name == "builtin_ring") {
    throw InputError("--core-num " + std::to_string(problem.core_num) +
                     ": pld.tensor.allreduce is an InCore composite that runs on one vector "
                     "core (core_num must be 1); only the HOST builtin (builtin.tensor.allreduce, "
                     "kernel host_mesh) takes core_num");
  }
  throw InputError("--core-num " + std::to_string(problem.core_num) + ": kernel " + name +
                   " runs one block per rank; only host_mesh takes core_num");
}

const KernelSpec& find_kernel(const std::string& name) {
  for (const KernelSpec& k : kernel_registry()) {
    if (name == k.name) return k;
  }
  std::string known;
  for (const std::string& k : kernel_names()) known += (known.empty() ? "" : ", ") + k;
  throw InputError("unknown kernel '" + name + "' (known: " + known + ")");
}

}  // namespace ars
