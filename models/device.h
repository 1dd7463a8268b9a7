// One accelerator die: its global memory and, when it takes part in the run, a vector core
// with its unified buffer and DMA engines.
#pragma once

#include <memory>
#include <optional>

#include <systemc>

#include "models/dma_engine.h"
#include "models/global_memory.h"
#include "models/unified_buffer.h"
#include "models/vector_core.h"

namespace ars {

class Device : public sc_core::sc_module {
 public:
  // `binding` gives the device a vector core running that rank; without one the device only
  // serves its memory.
  Device(sc_core::sc_module_name name, const PlatformConfig& config, int index,
         std::optional<VectorCore::Binding> binding, bool timing_only);

  int index() const { return index_; }
  GlobalMemory gm;
  std::unique_ptr<UnifiedBuffer> ub;
  std::unique_ptr<DmaEngine> dma;
  std::unique_ptr<VectorCore> core;

 private:
  int index_;
};

}  // namespace ars
