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

const KernelSpec& find_kernel(const std::string& name) {
  std::string known;
  for (const KernelSpec& k : kernel_registry()) {
    if (name == k.name) return k;
    known += known.empty() ? "" : ", ";
    known += k.name;
  }
  throw InputError("unknown kernel '" + name + "' (known: " + known + ")");
}

}  // namespace ars
