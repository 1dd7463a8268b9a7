// One accelerator die: its global memory and, when it takes part in the run, a vector core
// with its unified buffer and DMA engines per SPMD block of the rank (problem core_num).
// Every block's DMA engine and core reach the device's one memory and its links, so the
// blocks of a rank contend for them.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <systemc>

#include "models/device/dma_engine.h"
#include "models/device/global_memory.h"
#include "models/device/unified_buffer.h"
#include "models/device/vector_core.h"

namespace ars {

class Device : public sc_core::sc_module {
 public:
  // `binding` gives the device a vector core running that rank; without one the device only
  // serves its memory.
  Device(sc_core::sc_module_name name, const PlatformConfig& config, int index,
         std::optional<VectorCore::Binding> binding, bool timing_only, InstantEvents& instants);

  int index() const { return index_; }
  GlobalMemory gm;
  // Block 0 (the only one when core_num = 1).
  std::unique_ptr<UnifiedBuffer> ub;
  std::unique_ptr<DmaEngine> dma;
  std::unique_ptr<VectorCore> core;

  struct Block {
    std::unique_ptr<UnifiedBuffer> ub;
    std::unique_ptr<DmaEngine> dma;
    std::unique_ptr<VectorCore> core;
  };
  // Blocks 1 .. core_num-1.
  std::vector<Block> more_blocks;
  int blocks() const { return core ? 1 + static_cast<int>(more_blocks.size()) : 0; }
  VectorCore& block_core(int block) { return block == 0 ? *core : *more_blocks.at(block - 1).core; }
  DmaEngine& block_dma(int block) { return block == 0 ? *dma : *more_blocks.at(block - 1).dma; }
  UnifiedBuffer& block_ub(int block) { return block == 0 ? *ub : *more_blocks.at(block - 1).ub; }

 private:
  int index_;
};

}  // namespace ars
