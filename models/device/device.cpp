#include "models/device/device.h"

#include <string>

namespace ars {

Device::Device(sc_core::sc_module_name name, const PlatformConfig& config, int index,
               std::optional<VectorCore::Binding> binding, bool timing_only,
               InstantEvents& instants)
    : sc_module(name), gm("gm", config), index_(index) {
  if (!binding) return;
  const int blocks = binding->problem->core_num;
  for (int b = 0; b < blocks; ++b) {
    // Block 0 keeps the plain names, so one-block runs look as they always did.
    const std::string suffix = b == 0 ? "" : std::to_string(b);
    VectorCore::Binding block_binding = *binding;
    block_binding.block = b;
    Block block;
    block.ub = std::make_unique<UnifiedBuffer>(("ub" + suffix).c_str(), config, !timing_only);
    block.dma = std::make_unique<DmaEngine>(("dma" + suffix).c_str(), config, index, b, instants);
    block.core =
        std::make_unique<VectorCore>(("core" + suffix).c_str(), config, std::move(block_binding),
                                     *block.ub, *block.dma, gm, instants);
    block.dma->to_ub.bind(block.ub->from_core);
    block.core->to_ub.bind(block.ub->from_core);
    if (b == 0) {
      ub = std::move(block.ub);
      dma = std::move(block.dma);
      core = std::move(block.core);
    } else {
      more_blocks.push_back(std::move(block));
    }
  }
}

}  // namespace ars
