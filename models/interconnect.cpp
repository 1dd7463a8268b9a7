#include "models/interconnect.h"

#include <algorithm>

#include "models/clock.h"
#include "models/transaction.h"

namespace ars {

using sc_core::sc_time;

Interconnect::Interconnect(sc_core::sc_module_name name, const PlatformConfig& config)
    : sc_module(name),
      from_device("from_device"),
      to_memory("to_memory"),
      devices_(config.devices),
      paths_(config.devices, std::vector<Path>(config.devices)) {
  from_device.register_b_transport(this, &Interconnect::b_transport);
  from_device.register_transport_dbg(this, &Interconnect::transport_dbg);
  switch (config.topology) {
    case Topology::FullMesh:
      build_full_mesh(config);
      break;
    case Topology::Ring:
      build_ring(config);
      break;
    case Topology::Switch:
      build_switch(config);
      break;
  }
}

BandwidthResource* Interconnect::add_link(const std::string& scope, const std::string& name,
                                          double bytes_per_ps) {
  links_.push_back(std::make_unique<BandwidthResource>(name, bytes_per_ps));
  link_scopes_.push_back(scope);
  return links_.back().get();
}

void Interconnect::build_full_mesh(const PlatformConfig& config) {
  const double rate = GBps_to_bytes_per_ps(config.link_bandwidth_GBps);
  for (int from = 0; from < devices_; ++from) {
    for (int to = 0; to < devices_; ++to) {
      if (from == to) continue;
      Path& p = paths_[from][to];
      p.links.push_back(
          add_link("dev" + std::to_string(from), "link_to_" + std::to_string(to), rate));
      p.latency = ns(config.link_latency_ns);
    }
  }
}

void Interconnect::build_ring(const PlatformConfig& config) {
  const double rate = GBps_to_bytes_per_ps(config.link_bandwidth_GBps);
  // clockwise[d]: d -> d+1; counter[d]: d -> d-1 (the same pair of links when there are two).
  std::vector<BandwidthResource*> clockwise(devices_), counter(devices_);
  for (int d = 0; d < devices_; ++d) {
    const int next = (d + 1) % devices_;
    clockwise[d] = add_link("dev" + std::to_string(d), "link_to_" + std::to_string(next), rate);
  }
  for (int d = 0; d < devices_; ++d) {
    const int prev = (d - 1 + devices_) % devices_;
    counter[d] = devices_ == 2
                     ? clockwise[d]
                     : add_link("dev" + std::to_string(d), "link_to_" + std::to_string(prev), rate);
  }
  for (int from = 0; from < devices_; ++from) {
    for (int to = 0; to < devices_; ++to) {
      if (from == to) continue;
      const int forward = (to - from + devices_) % devices_;
      const bool go_clockwise = forward <= devices_ - forward;  // ties go clockwise
      Path& p = paths_[from][to];
      for (int d = from; d != to;) {
        p.links.push_back(go_clockwise ? clockwise[d] : counter[d]);
        d = go_clockwise ? (d + 1) % devices_ : (d - 1 + devices_) % devices_;
      }
      p.latency = ns(config.link_latency_ns) * static_cast<double>(p.links.size());
    }
  }
}

void Interconnect::build_switch(const PlatformConfig& config) {
  const double rate = GBps_to_bytes_per_ps(config.link_bandwidth_GBps);
  forwarding_ = config.switch_forwarding;
  std::vector<BandwidthResource*> up(devices_), down(devices_);
  for (int d = 0; d < devices_; ++d) {
    up[d] = add_link("dev" + std::to_string(d), "uplink", rate);
    down[d] = add_link("dev" + std::to_string(d), "downlink", rate);
  }
  for (int from = 0; from < devices_; ++from) {
    for (int to = 0; to < devices_; ++to) {
      if (from == to) continue;
      Path& p = paths_[from][to];
      p.links = {up[from], down[to]};
      p.latency = ns(2 * config.link_latency_ns + config.switch_latency_ns);
    }
  }
}

void Interconnect::b_transport(int port, tlm::tlm_generic_payload& trans, sc_time& delay) {
  const int source = port_device_.at(port);
  const int target = address_device(trans.get_address());
  if (target < 0 || target >= devices_) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (source == target) {
    to_memory[target]->b_transport(trans, delay);
    return;
  }
  // Data of a read flows from the target back to the source.
  const Path& p = trans.is_read() ? paths_[target][source] : paths_[source][target];
  const AtomicWrite* atomic = trans.get_extension<AtomicWrite>();
  if (atomic != nullptr && atomic->kind != AtomicWrite::Kind::DataAdd) {
    // A signal update is a few bytes: it pays the path's latency, not its bandwidth. The
    // memory returns when the update is applied; the acknowledgement then flies back.
    delay += p.latency;
    to_memory[target]->b_transport(trans, delay);
    delay += paths_[target][source].latency;
    return;
  }
  auto* timing = trans.get_extension<BurstTiming>();
  // A read's request crosses the path to the target before any data comes back: one more
  // flight of pipeline latency (the bursts of a transfer still stream behind each other).
  const sc_time request = trans.is_read() ? paths_[source][target].latency : sc_core::SC_ZERO_TIME;
  if (timing != nullptr) timing->add_hop(sc_core::SC_ZERO_TIME, request);
  const sc_time now = sc_core::sc_time_stamp();
  const std::uint64_t bytes = trans.get_data_length();
  sc_time head = now + delay;
  sc_time tail;
  Claim* claim = timing != nullptr ? &timing->claim : nullptr;
  if (forwarding_ == Forwarding::StoreAndForward) {
    for (BandwidthResource* link : p.links) head = tail = link->reserve(head, bytes, claim).end;
    head = now + delay;
  } else {
    sc_time span = sc_core::SC_ZERO_TIME;
    for (BandwidthResource* link : p.links) {
      head = std::max(head, link->free_at());
      span = std::max(span, link->duration(bytes));
    }
    for (BandwidthResource* link : p.links) tail = link->reserve_span(head, span, bytes, claim).end;
  }
  if (timing != nullptr) timing->add_hop(tail - now, p.latency);
  // A read's bytes leave the target's memory when the request arrives, before they queue for
  // the link; reserving the memory port only once the link is free would put that port's
  // other users (the target itself, other readers) behind this link's backlog.
  sc_time memory_delay = trans.is_read() ? delay : head - now;
  to_memory[target]->b_transport(trans, memory_delay);
  delay = timing != nullptr ? timing->tail + timing->latency
                            : std::max(memory_delay, tail - now) + request + p.latency;
}

unsigned int Interconnect::transport_dbg(int, tlm::tlm_generic_payload& trans) {
  const int target = address_device(trans.get_address());
  if (target < 0 || target >= devices_) return 0;
  return to_memory[target]->transport_dbg(trans);
}

void Interconnect::attach_trace(TraceSink* sink) {
  for (std::size_t i = 0; i < links_.size(); ++i) links_[i]->attach_trace(sink, link_scopes_[i]);
}

void Interconnect::flush_trace() {
  for (auto& link : links_) link->flush_trace();
}

}  // namespace ars
