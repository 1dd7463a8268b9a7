#include "kernels/registry.h"

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
}  // namespace kernels

const std::vector<KernelSpec>& kernel_registry() {
  static const std::vector<KernelSpec> registry = {
      kernels::kBarrier,  kernels::kMesh,        kernels::kTwoPhase,    kernels::kRing,
      kernels::kHostRing, kernels::kBuiltinMesh, kernels::kBuiltinRing,
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
}

void refuse_call_options(const Problem& problem, const char* kernel, bool takes_signal_shape) {
  if (problem.repeat != 1) {
    throw InputError(std::string("--repeat: ") + kernel +
                     " runs one allreduce per launch; only the builtin (mesh, ring) repeats");
  }
  if (problem.signal_shape && !takes_signal_shape) {
    throw InputError(std::string("--signal-shape: ") + kernel +
                     " allocates its own signal; only the builtins and host_ring take one");
  }
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

const KernelSpec& find_kernel(const std::string& name) {
  for (const KernelSpec& k : kernel_registry()) {
    if (name == k.name) return k;
  }
  std::string known;
  for (const std::string& k : kernel_names()) known += (known.empty() ? "" : ", ") + k;
  throw InputError("unknown kernel '" + name + "' (known: " + known + ")");
}

}  // namespace ars
