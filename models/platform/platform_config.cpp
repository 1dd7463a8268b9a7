#include "models/platform/platform_config.h"

namespace ars {

const char* to_string(Topology topology) {
  switch (topology) {
    case Topology::FullMesh:
      return "full_mesh";
    case Topology::Ring:
      return "ring";
    case Topology::Switch:
      return "switch";
    case Topology::Cluster:
      return "cluster";
    case Topology::Superpod:
      return "superpod";
  }
  return "?";
}

const char* to_string(Forwarding forwarding) {
  return forwarding == Forwarding::CutThrough ? "cut_through" : "store_and_forward";
}

const char* to_string(Codegen::NotifyBarrier barrier) {
  switch (barrier) {
    case Codegen::NotifyBarrier::PipeAll:
      return "pipe_all";
    case Codegen::NotifyBarrier::Drain:
      return "drain";
    case Codegen::NotifyBarrier::None:
      return "none";
  }
  return "pipe_all";
}

const char* to_string(Codegen::WaitInvalidate invalidate) {
  switch (invalidate) {
    case Codegen::WaitInvalidate::EveryWait:
      return "every_wait";
    case Codegen::WaitInvalidate::WaitAll:
      return "wait_all";
    case Codegen::WaitInvalidate::None:
      return "none";
  }
  return "every_wait";
}

const char* to_string(Wiring wiring) {
  return wiring == Wiring::Rail ? "rail" : "leaf";
}

int PlatformConfig::server_of(int device) const {
  if (topology == Topology::Cluster) return device / cluster_npus_per_server;
  if (topology == Topology::Superpod) return device / superpod_npus_per_node;
  return 0;
}

long long PlatformConfig::structural_devices() const {
  if (topology == Topology::Cluster) {
    return static_cast<long long>(cluster_servers) * cluster_npus_per_server;
  }
  if (topology == Topology::Superpod) {
    return static_cast<long long>(superpod_nodes) * superpod_npus_per_node;
  }
  return 0;
}

}  // namespace ars
