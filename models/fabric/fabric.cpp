#include "models/fabric/fabric.h"

#include <algorithm>
#include <limits>

#include "models/platform/clock.h"
#include "models/tables/fixed_hash.h"

namespace ars {

namespace {

constexpr int kFieldBits = 28;  // a device, leaf or spine number fits in 28 bits

std::string dev(std::uint64_t d) {
  return "dev" + std::to_string(d);
}

// What sets a leaf-spine link's share: the spines its leaf's ports are spread over (which also
// spreads the pairs, ECMP hashing each onto one) and the oversubscription.
constexpr const char* kSpineLinkKeys = "cluster.spines and cluster.oversubscription";

}  // namespace

Fabric::Fabric(const PlatformConfig& config) : config_(config), devices_(config.devices) {
  if (config.topology != Topology::Cluster) return;
  const int servers = config.cluster_servers;
  const int npus = config.cluster_npus_per_server;
  const bool rail = config.cluster_wiring == Wiring::Rail;
  const int per_leaf = config.cluster_servers_per_leaf;
  leaves_ = rail ? npus : (servers + per_leaf - 1) / per_leaf;
  // A leaf's links to the spines together carry its ports' rate over the oversubscription;
  // with fewer ports than spines each is still one port's rate (over the oversubscription).
  const double ports = rail ? servers : static_cast<double>(per_leaf) * npus;
  leaf_uplink_bytes_per_ps_ = GBps_to_bytes_per_ps(config.nic_bandwidth_GBps) *
                              std::max(1.0, ports / config.cluster_spines) /
                              config.cluster_oversubscription;
}

Fabric::LinkId Fabric::id(Kind kind, std::uint64_t a, std::uint64_t b) {
  return (static_cast<std::uint64_t>(kind) << (2 * kFieldBits)) | (a << kFieldBits) | b;
}

Fabric::Fields Fabric::fields(LinkId id) {
  const std::uint64_t mask = (std::uint64_t{1} << kFieldBits) - 1;
  return {static_cast<Kind>(id >> (2 * kFieldBits)), (id >> kFieldBits) & mask, id & mask};
}

int Fabric::leaf_of(int device) const {
  const int npus = config_.cluster_npus_per_server;
  if (config_.cluster_wiring == Wiring::Rail) return device % npus;
  return device / npus / config_.cluster_servers_per_leaf;
}

int Fabric::spine_of(int from, int to) const {
  const std::uint64_t pair =
      (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint32_t>(to);
  return static_cast<int>(fixed_hash(pair) % static_cast<std::uint32_t>(config_.cluster_spines));
}

Fabric::Route Fabric::route(int from, int to) const {
  Route r;
  if (from == to) return r;
  const double hop_ps = config_.link_latency_ns * 1000.0;
  switch (config_.topology) {
    case Topology::FullMesh:
      r.links = {id(Kind::Mesh, from, to)};
      r.latency_ps = hop_ps;
      break;
    case Topology::Ring: {
      const int forward = (to - from + devices_) % devices_;
      const bool clockwise = forward <= devices_ - forward;  // ties go clockwise
      for (int d = from; d != to;) {
        // With two devices both ways round are the same pair of links.
        r.links.push_back(clockwise || devices_ == 2 ? id(Kind::Clockwise, d)
                                                     : id(Kind::Counter, d));
        d = clockwise ? (d + 1) % devices_ : (d - 1 + devices_) % devices_;
      }
      r.latency_ps = hop_ps * static_cast<double>(r.links.size());
      break;
    }
    case Topology::Switch:
      r.links = {id(Kind::Up, from), id(Kind::Down, to)};
      r.latency_ps = 2 * hop_ps + config_.switch_latency_ns * 1000.0;
      break;
    case Topology::Cluster: {
      if (config_.server_of(from) == config_.server_of(to)) {
        r.links = {id(Kind::Mesh, from, to)};
        r.latency_ps = hop_ps;
        break;
      }
      const int leaf_from = leaf_of(from);
      const int leaf_to = leaf_of(to);
      const double nic_ps = config_.nic_latency_ns * 1000.0;
      const double leaf_ps = config_.leaf_latency_ns * 1000.0;
      r.links.push_back(id(Kind::NicUp, from));
      r.latency_ps = 2 * nic_ps + leaf_ps;
      if (leaf_from != leaf_to) {
        const int spine = spine_of(from, to);
        r.links.push_back(id(Kind::LeafUp, leaf_from, spine));
        r.links.push_back(id(Kind::SpineDown, spine, leaf_to));
        r.latency_ps += leaf_ps + config_.spine_latency_ns * 1000.0;
      }
      r.links.push_back(id(Kind::LeafDown, to));
      break;
    }
    case Topology::Superpod:
      r.links = {id(Kind::UbUp, from), id(Kind::NodeDown, to)};
      r.latency_ps = 1000.0 * (config_.server_of(from) == config_.server_of(to)
                                   ? config_.superpod_tier1_latency_ns
                                   : config_.superpod_tier2_latency_ns);
      break;
  }
  r.bytes_per_ps = std::numeric_limits<double>::infinity();
  for (LinkId l : r.links) r.bytes_per_ps = std::min(r.bytes_per_ps, link_bytes_per_ps(l));
  return r;
}

double Fabric::link_bytes_per_ps(LinkId link_id) const {
  switch (fields(link_id).kind) {
    case Kind::Mesh:
    case Kind::Clockwise:
    case Kind::Counter:
    case Kind::Up:
    case Kind::Down:
      return GBps_to_bytes_per_ps(config_.link_bandwidth_GBps);
    case Kind::NicUp:
    case Kind::LeafDown:
      return GBps_to_bytes_per_ps(config_.nic_bandwidth_GBps);
    case Kind::LeafUp:
    case Kind::SpineDown:
      return leaf_uplink_bytes_per_ps_;
    case Kind::UbUp:
    case Kind::NodeDown:
      return GBps_to_bytes_per_ps(config_.superpod_bandwidth_GBps);
  }
  return 0;
}

Fabric::Link Fabric::link(LinkId link_id) const {
  const auto [kind, a, b] = fields(link_id);
  const double rate = link_bytes_per_ps(link_id);
  const auto n = static_cast<std::uint64_t>(devices_);
  switch (kind) {
    case Kind::Mesh:
      return {dev(a), "link_to_" + std::to_string(b), rate};
    case Kind::Clockwise:
      return {dev(a), "link_to_" + std::to_string((a + 1) % n), rate};
    case Kind::Counter:
      return {dev(a), "link_to_" + std::to_string((a + n - 1) % n), rate};
    case Kind::Up:
      return {dev(a), "uplink", rate};
    case Kind::Down:
      return {dev(a), "downlink", rate};
    case Kind::NicUp:
      return {dev(a), "nic_up", rate, "nic.bandwidth_GBps"};
    case Kind::LeafDown:
      return {"leaf" + std::to_string(leaf_of(static_cast<int>(a))), "down_to_" + dev(a), rate,
              "nic.bandwidth_GBps"};
    case Kind::LeafUp:
      return {"leaf" + std::to_string(a), "up_to_spine" + std::to_string(b), rate, kSpineLinkKeys};
    case Kind::SpineDown:
      return {"spine" + std::to_string(a), "down_to_leaf" + std::to_string(b), rate,
              kSpineLinkKeys};
    case Kind::UbUp:
      return {dev(a), "ub_up", rate, "superpod.bandwidth_GBps"};
    case Kind::NodeDown:
      return {"node" + std::to_string(config_.server_of(static_cast<int>(a))), "down_to_" + dev(a),
              rate, "superpod.bandwidth_GBps"};
  }
  return {};
}

int Fabric::scope_device(LinkId link_id) const {
  const Fields f = fields(link_id);
  switch (f.kind) {
    case Kind::Mesh:
    case Kind::Clockwise:
    case Kind::Counter:
    case Kind::Up:
    case Kind::Down:
    case Kind::NicUp:
    case Kind::UbUp:
      return static_cast<int>(f.a);
    case Kind::LeafDown:
    case Kind::LeafUp:
    case Kind::SpineDown:
    case Kind::NodeDown:
      break;
  }
  return -1;
}

std::vector<Fabric::LinkId> Fabric::traced_links(const std::vector<int>& devices) const {
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  std::vector<LinkId> out;
  const auto mesh_among = [&](bool same_server_only) {
    for (int from : sorted) {
      for (int to : sorted) {
        if (from == to) continue;
        if (same_server_only && config_.server_of(from) != config_.server_of(to)) continue;
        out.push_back(id(Kind::Mesh, from, to));
      }
    }
  };
  switch (config_.topology) {
    case Topology::FullMesh:
      mesh_among(false);
      break;
    case Topology::Ring:
      for (int d = 0; d < devices_; ++d) out.push_back(id(Kind::Clockwise, d));
      if (devices_ > 2) {
        for (int d = 0; d < devices_; ++d) out.push_back(id(Kind::Counter, d));
      }
      break;
    case Topology::Switch:
      for (int d = 0; d < devices_; ++d) {
        out.push_back(id(Kind::Up, d));
        out.push_back(id(Kind::Down, d));
      }
      break;
    case Topology::Cluster:
      mesh_among(true);
      for (int d : sorted) {
        out.push_back(id(Kind::NicUp, d));
        out.push_back(id(Kind::LeafDown, d));
      }
      if (leaves_ > 1) {
        for (int leaf = 0; leaf < leaves_; ++leaf) {
          for (int spine = 0; spine < config_.cluster_spines; ++spine) {
            out.push_back(id(Kind::LeafUp, leaf, spine));
            out.push_back(id(Kind::SpineDown, spine, leaf));
          }
        }
      }
      break;
    case Topology::Superpod:
      for (int d : sorted) {
        out.push_back(id(Kind::UbUp, d));
        out.push_back(id(Kind::NodeDown, d));
      }
      break;
  }
  return out;
}

}  // namespace ars
