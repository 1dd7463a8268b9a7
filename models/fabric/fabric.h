// The structure of the interconnect, without SystemC: which link directions exist, which of
// them a device pair's data crosses, that path's latency and its slowest link's rate. Routes
// follow from the topology's structure when asked, so nothing is stored per device pair:
// memory and set-up are linear in devices and switches. The Interconnect builds its
// bandwidth resources from these answers and the cost cards read the same latencies and
// rates, so a route is worked out in one place.
//
// Link directions by topology (scope.name, as the VCD shows them):
//   full_mesh: devF.link_to_T per ordered pair.
//   ring:      devD.link_to_(D+1) and devD.link_to_(D-1); the shorter way round, ties clockwise.
//   switch:    devD.uplink and devD.downlink.
//   cluster:   inside a server the full mesh's devF.link_to_T; across servers devD.nic_up,
//              leafL.up_to_spineS, spineS.down_to_leafL, leafL.down_to_devD. The spine of a
//              pair on different leaves is a fixed hash of (source, destination) (ECMP).
//   superpod:  devD.ub_up and nodeN.down_to_devD (the node's first-tier switches).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/platform/platform_config.h"

namespace ars {

class Fabric {
 public:
  explicit Fabric(const PlatformConfig& config);

  using LinkId = std::uint64_t;
  struct Link {
    std::string scope;  // where the link starts: a device, a leaf, a spine, a node
    std::string name;
    double bytes_per_ps = 0;
    const char* key = "link.bandwidth_GBps";  // the configuration key that sets its rate
  };
  struct Route {
    std::vector<LinkId> links;  // in the order the data crosses them; empty from a device to itself
    double latency_ps = 0;      // one-way flight of the whole path
    double bytes_per_ps = 0;    // the slowest link's rate (0 when the path is empty)
  };

  Route route(int from, int to) const;
  Link link(LinkId id) const;
  // The link's rate alone: a route asks for it without building the link's names.
  double link_bytes_per_ps(LinkId id) const;
  // The device whose scope (Link::scope) holds the link, -1 for a leaf's, spine's or node's:
  // what a waveform or timeline of some devices shows of it, without building its name.
  int scope_device(LinkId id) const;
  // The links a waveform declares before the run, in a fixed order: every ring and switch
  // link and every link between leaves and spines; the full-mesh, NIC and SuperPod port links
  // of `devices` (the run's).
  std::vector<LinkId> traced_links(const std::vector<int>& devices) const;
  // The spine ECMP picks for a pair on different leaves of a cluster.
  int spine_of(int from, int to) const;

 private:
  int leaf_of(int device) const;
  enum class Kind : std::uint64_t {
    Mesh,       // a = from, b = to
    Clockwise,  // a = device
    Counter,    // a = device
    Up,         // a = device (switch uplink)
    Down,       // a = device (switch downlink)
    NicUp,      // a = device
    LeafDown,   // a = device
    LeafUp,     // a = leaf, b = spine
    SpineDown,  // a = spine, b = leaf
    UbUp,       // a = device
    NodeDown,   // a = device
  };
  static LinkId id(Kind kind, std::uint64_t a, std::uint64_t b = 0);
  // The fields id() packed.
  struct Fields {
    Kind kind;
    std::uint64_t a;
    std::uint64_t b;
  };
  static Fields fields(LinkId id);

  PlatformConfig config_;
  int devices_;
  int leaves_ = 0;
  double leaf_uplink_bytes_per_ps_ = 0;
};

}  // namespace ars
