#include "models/platform_config.h"

namespace ars {

const char* to_string(Topology topology) {
  switch (topology) {
    case Topology::FullMesh:
      return "full_mesh";
    case Topology::Ring:
      return "ring";
    case Topology::Switch:
      return "switch";
  }
  return "?";
}

const char* to_string(Forwarding forwarding) {
  return forwarding == Forwarding::CutThrough ? "cut_through" : "store_and_forward";
}

int PlatformConfig::server_of(int) const {
  return 0;
}

}  // namespace ars
