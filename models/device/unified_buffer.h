// The unified buffer (UB) of one vector core: on-core SRAM that DMA fills and drains and the
// vector unit computes on. Tiles are 32-byte aligned; asking for more than the usable
// capacity is an error naming the bytes asked and the limit.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/platform/platform_config.h"
#include "models/records/trace_sink.h"

namespace ars {

class UnifiedBuffer : public sc_core::sc_module {
 public:
  // The DMA engines and the vector unit reach the buffer through direct memory access.
  tlm_utils::multi_passthrough_target_socket<UnifiedBuffer> from_core;

  UnifiedBuffer(sc_core::sc_module_name name, const PlatformConfig& config, bool backed);

  // Returns the offset of a free, aligned region of `bytes`; throws InputError when none fits.
  std::uint32_t allocate(std::uint64_t bytes);
  void release(std::uint32_t offset);
  // The most bytes its tiles held at once (aligned), for the report.
  std::uint64_t peak_bytes_in_use() const { return peak_; }
  std::uint64_t usable_bytes() const { return usable_; }

  void attach_trace(TraceSink* sink, const std::string& scope);

 private:
  void b_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(int port, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);

  std::uint64_t usable_;
  std::uint64_t alignment_;
  std::vector<std::uint8_t> storage_;
  std::map<std::uint32_t, std::uint64_t> regions_;  // offset -> aligned size
  // The end of the regions that run on from offset 0 with no gap: a kernel that allocates a tile
  // per peer and releases none would otherwise walk them all at each allocation.
  std::uint64_t prefix_end_ = 0;
  std::uint64_t in_use_ = 0;
  std::uint64_t peak_ = 0;
  TraceSink* sink_ = nullptr;
  int in_use_var_ = -1;
};

}  // namespace ars
