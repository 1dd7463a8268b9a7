// The fabric between devices. Routes every transaction by the device in its address; each
// link direction is a bandwidth resource shared by the bursts that cross it, so flows on the
// same direction share its bandwidth. Topologies: full mesh (a link per ordered device pair),
// bidirectional ring (shortest way round, cut-through), switch (an up and a down link per
// device, cut-through or store-and-forward at the switch).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/bandwidth_resource.h"
#include "models/platform_config.h"
#include "models/trace_sink.h"

namespace ars {

class Interconnect : public sc_core::sc_module {
 public:
  // Bound by every device's initiators (DMA engine, vector core); see connect_initiator.
  tlm_utils::multi_passthrough_target_socket<Interconnect> from_device;
  // Bound to every device's global memory, in device order.
  tlm_utils::multi_passthrough_initiator_socket<Interconnect> to_memory;

  Interconnect(sc_core::sc_module_name name, const PlatformConfig& config);

  template <typename Socket>
  void connect_initiator(Socket& initiator, int device) {
    initiator.bind(from_device);
    port_device_.push_back(device);
  }

  struct Path {
    std::vector<BandwidthResource*> links;  // in the order the data crosses them
    sc_core::sc_time latency;
  };
  // The links data crosses going from device `from` to device `to` (empty when equal).
  const Path& path(int from, int to) const { return paths_[from][to]; }
  // Link i has resource id i (BandwidthResource::describe).
  const std::vector<std::unique_ptr<BandwidthResource>>& links() const { return links_; }

  void attach_trace(TraceSink* sink);
  void flush_trace();

 private:
  void b_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(int port, tlm::tlm_generic_payload& trans);
  BandwidthResource* add_link(const std::string& scope, const std::string& name,
                              double bytes_per_ps);
  void build_full_mesh(const PlatformConfig& config);
  void build_ring(const PlatformConfig& config);
  void build_switch(const PlatformConfig& config);

  int devices_;
  Forwarding forwarding_ = Forwarding::CutThrough;
  std::vector<int> port_device_;
  std::vector<std::unique_ptr<BandwidthResource>> links_;
  std::vector<std::string> link_scopes_;
  std::vector<std::vector<Path>> paths_;  // [from][to]
};

}  // namespace ars
