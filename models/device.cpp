#include "models/device.h"

namespace ars {

Device::Device(sc_core::sc_module_name name, const PlatformConfig& config, int index,
               std::optional<VectorCore::Binding> binding, bool timing_only)
    : sc_module(name), gm("gm", config), index_(index) {
  if (!binding) return;
  ub = std::make_unique<UnifiedBuffer>("ub", config, !timing_only);
  dma = std::make_unique<DmaEngine>("dma", config, index);
  core = std::make_unique<VectorCore>("core", config, std::move(*binding), *ub, *dma, gm);
  dma->to_ub.bind(ub->from_core);
  core->to_ub.bind(ub->from_core);
}

}  // namespace ars
