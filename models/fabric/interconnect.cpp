#include "models/fabric/interconnect.h"

#include <algorithm>

#include "models/fabric/transaction.h"
#include "models/platform/clock.h"

namespace ars {

using sc_core::sc_time;

Interconnect::Interconnect(sc_core::sc_module_name name, const PlatformConfig& config,
                           PathCacheLimit path_cache)
    : sc_module(name),
      from_device("from_device"),
      to_memory("to_memory"),
      devices_(config.devices),
      atomic_occupancy_(ns(config.link_atomic_ns)),
      fabric_(config),
      path_cache_(path_cache) {
  from_device.register_b_transport(this, &Interconnect::b_transport);
  from_device.register_transport_dbg(this, &Interconnect::transport_dbg);
  SC_METHOD(end_instant);
  sensitive << instant_work_ << stop_;
  dont_initialize();
  const bool switched = config.topology == Topology::Switch ||
                        config.topology == Topology::Cluster ||
                        config.topology == Topology::Superpod;
  if (switched) forwarding_ = config.switch_forwarding;
}

BandwidthResource* Interconnect::link(Fabric::LinkId id) {
  BandwidthResource*& found = link_by_id_[id];
  if (found != nullptr) return found;
  Fabric::Link info = fabric_.link(id);
  links_.push_back(std::make_unique<BandwidthResource>(info.name, info.bytes_per_ps));
  found = links_.back().get();
  found->describe(devices_ + static_cast<int>(links_.size()) - 1, info.scope + "." + info.name,
                  info.key);
  if (trace_ != nullptr) found->attach_trace(trace_, info.scope);
  return found;
}

const Path& Interconnect::path(int from, int to) {
  const std::uint64_t key = static_cast<std::uint64_t>(from) * devices_ + to;
  if (const Path* found = paths_.find(key)) return *found;
  const Fabric::Route route = fabric_.route(from, to);
  path_links_ += route.links.size();
  std::vector<BandwidthResource*> links;
  links.reserve(route.links.size());
  bool marked = false;
  for (Fabric::LinkId id : route.links) {
    links.push_back(link(id));
    marked = marked || marked_links_.count(links.back()->place()) != 0;
  }
  bool moved = false;
  Path& p = paths_.add(key, links, moved);
  // The memos point into the table, which has moved.
  if (moved) std::fill(path_memo_.begin(), path_memo_.end(), PathMemo());
  p.latency = sc_time(route.latency_ps, sc_core::SC_PS);
  p.back_latency = sc_time(fabric_.route(to, from).latency_ps, sc_core::SC_PS);
  p.marked = marked;
  return p;
}

const Path& Interconnect::path_from_port(int port, int from, int to) {
  PathMemo& memo = path_memo_[static_cast<std::size_t>(port)];
  const std::uint64_t key = static_cast<std::uint64_t>(from) * devices_ + to;
  if (memo.key != key) memo = {key, &path(from, to)};
  return *memo.path;
}

void Interconnect::b_transport(int port, tlm::tlm_generic_payload& trans, sc_time& delay) {
  auto* timing = trans.get_extension<BurstTiming>();
  if (timing != nullptr && timing->train != nullptr) {
    serve_train(port, trans, *timing);
    return;
  }
  if (timing != nullptr && timing->claim.kind == ClaimKind::Burst) {
    if (asks_.empty()) instant_work_.notify(sc_core::SC_ZERO_TIME);
    asks_.push_back({timing->flow, port, &trans, timing, delay});
    timing->waiting = true;
    timing->served = &served_;
    return;
  }
  serve(port, trans, timing, delay);
}

void Interconnect::end_instant() {
  // Processes still to run at this instant may ask too: served in a later delta cycle.
  if (sc_core::sc_pending_activity_at_current_time()) {
    instant_work_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  if (!asks_.empty()) {
    serving_.swap(asks_);
    // The flows of one instant's asks are distinct (a transfer asks for its next burst once
    // the last is served), so an unstable sort, which allocates nothing, gives the one order.
    std::sort(serving_.begin(), serving_.end(),
              [](const Ask& a, const Ask& b) { return a.flow < b.flow; });
    for (Ask& ask : serving_) {
      serve(ask.port, *ask.trans, ask.timing, ask.delay);
      ask.timing->waiting = false;
    }
    serving_.clear();
    served_.notify();
  }
  if (stopping_ && current_time(*this) >= stop_at_) sc_core::sc_stop();
}

void Interconnect::stop_soon() {
  if (stopping_) return;
  stopping_ = true;
  const sc_time window = ps_exact(current_time(*this).value() / 64);
  stop_at_ = current_time(*this) + window;
  stop_.notify(window);
}

void Interconnect::mark_memory(int device) {
  marked_memory_.resize(static_cast<std::size_t>(devices_), 0);
  marked_memory_.at(static_cast<std::size_t>(device)) = 1;
}

bool Interconnect::burst_by_burst(int from, int to, bool read) {
  if (!marked_memory_.empty() && marked_memory_[static_cast<std::size_t>(to)] != 0) return true;
  if (from == to || marked_links_.empty()) return false;
  return (read ? path(to, from) : path(from, to)).marked;
}

bool Interconnect::route(int port, const tlm::tlm_generic_payload& trans, int& target,
                         const Path*& path) {
  const int source = port_device_.at(port);
  target = address_device(trans.get_address());
  if (target < 0 || target >= devices_) return false;
  path = nullptr;
  if (source == target) return true;
  // Emptied only here, before any path is looked up: the paths a transaction uses stay put
  // until it has passed.
  if (paths_.size() >= path_cache_.paths || path_links_ > path_cache_.links) {
    paths_.clear();
    path_links_ = 0;
    for (PathMemo& memo : path_memo_) memo = PathMemo();
  }
  // Data of a read flows from the target back to the source.
  path = trans.is_read() ? &path_from_port(port, target, source)
                         : &path_from_port(port, source, target);
  return true;
}

void Interconnect::serve(int port, tlm::tlm_generic_payload& trans, BurstTiming* timing,
                         sc_time& delay) {
  int target;
  const Path* path;
  if (!route(port, trans, target, path)) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (path == nullptr) {
    to_memory[target]->b_transport(trans, delay);
    return;
  }
  const Path& p = *path;
  AtomicWrite* atomic = trans.get_extension<AtomicWrite>();
  if (atomic != nullptr && atomic->kind != AtomicWrite::Kind::DataAdd) {
    // A signal update is a few bytes: it pays the path's latency, not its bandwidth, but it
    // holds each link direction for link.atomic_ns, after what is already queued there. The
    // memory returns when the update is applied; the acknowledgement then flies back.
    if (atomic_occupancy_ > sc_core::SC_ZERO_TIME) {
      const sc_time now = current_time(*this);
      sc_time head = now + delay;
      for (BandwidthResource* link : p.links()) head = std::max(head, link->free_at());
      for (BandwidthResource* link : p.links())
        link->reserve_span(head, atomic_occupancy_, 0, atomic->flow, &atomic->claim);
      delay = head + atomic_occupancy_ - now;
    }
    delay += p.latency;
    to_memory[target]->b_transport(trans, delay);
    delay += p.back_latency;
    return;
  }
  const sc_time now = current_time(*this);
  const Crossing crossed = cross_links(p, trans.is_read(), trans.get_data_length(), timing, delay);
  sc_time memory_delay = crossed.memory_delay;
  to_memory[target]->b_transport(trans, memory_delay);
  delay = timing != nullptr
              ? timing->tail + timing->latency
              : std::max(memory_delay, crossed.tail - now) + crossed.request + p.latency;
}

Interconnect::Crossing Interconnect::cross_links(const Path& p, bool is_read, std::uint64_t bytes,
                                                 BurstTiming* timing, const sc_time& delay) {
  // A read's request crosses the path to the target before any data comes back: one more
  // flight of pipeline latency (the bursts of a transfer still stream behind each other).
  const sc_time request = is_read ? p.back_latency : sc_core::SC_ZERO_TIME;
  if (timing != nullptr) timing->add_hop(sc_core::SC_ZERO_TIME, request);
  const sc_time now = current_time(*this);
  const std::uint64_t flow = timing != nullptr ? timing->flow : 0;
  sc_time head = now + delay;
  sc_time tail;
  // The link that bounds the burst: one that another flow held when the burst came, else the
  // one it leaves last.
  Claim* claim = timing != nullptr ? &timing->claim : nullptr;
  const BandwidthResource* held = nullptr;
  const BandwidthResource* last = nullptr;
  if (forwarding_ == Forwarding::StoreAndForward) {
    for (BandwidthResource* link : p.links()) {
      const BandwidthResource::Interval slot = link->reserve(head, bytes, flow, claim);
      if (slot.behind_other_flow && held == nullptr) held = link;
      head = tail = slot.end;
      last = link;
    }
    head = now + delay;
  } else {
    // Virtual cut-through: the burst's head enters a link as soon as the link before it has
    // begun to carry the burst and this one is free. A burst that finds a link busy waits in the
    // switch's buffer while the links behind it serve other flows; holding them idle until
    // every link was free at once kept a link shared by crossing flows busy a third of the time.
    // Each link is held at its own rate, so flows that together fit a faster link's rate (a
    // leaf's uplink) share it without waiting.
    for (BandwidthResource* link : p.links()) {
      const BandwidthResource::Interval slot = link->reserve(head, bytes, flow, claim);
      if (slot.behind_other_flow && held == nullptr) held = link;
      head = slot.start;
      if (slot.end > tail) {
        tail = slot.end;
        last = link;
      }
    }
  }
  if (timing != nullptr && last != nullptr) {
    timing->add_hop(tail - now, p.latency,
                    held != nullptr ? held->limit(true) : last->limit(false));
  }
  // A read's bytes leave the target's memory when the request arrives, before they queue for
  // the link; reserving the memory port only once the link is free would put that port's
  // other users (the target itself, other readers) behind this link's backlog.
  return {is_read ? delay : head - now, tail, request};
}

// A train of bursts to a peer's memory: the memory serves it, and each burst crosses the links
// on its way just before, as that burst sent alone would (see serve()).
class Interconnect::TrainAcrossLinks final : public BurstTrain {
 public:
  TrainAcrossLinks(Interconnect& interconnect, const Path& path,
                   const tlm::tlm_generic_payload& trans, BurstTiming& timing)
      : BurstTrain(timing.train->burst_bytes()),
        interconnect_(interconnect),
        path_(path),
        is_read_(trans.is_read()),
        length_(trans.get_data_length()),
        timing_(timing),
        initiator_(*timing.train) {}
  BurstTrain& initiator() { return initiator_; }
  sc_time leaves(std::uint64_t offset) override {
    const sc_time delay = initiator_.leaves(offset);
    const std::uint64_t bytes = std::min(burst_bytes(), length_ - offset);
    return interconnect_.cross_links(path_, is_read_, bytes, &timing_, delay).memory_delay;
  }
  bool passed() override { return initiator_.passed(); }

 private:
  Interconnect& interconnect_;
  const Path& path_;
  bool is_read_;
  std::uint64_t length_;
  BurstTiming& timing_;
  BurstTrain& initiator_;
};

void Interconnect::serve_train(int port, tlm::tlm_generic_payload& trans, BurstTiming& timing) {
  int target;
  const Path* path;
  if (!route(port, trans, target, path)) {
    // As serve() answers each burst: the first fails, which ends the train.
    timing.train->leaves(0);
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    timing.train->passed();
    return;
  }
  sc_time delay = sc_core::SC_ZERO_TIME;
  // A device's own memory takes the train as it comes; no link is on its way.
  if (path == nullptr) {
    to_memory[target]->b_transport(trans, delay);
    return;
  }
  TrainAcrossLinks across(*this, *path, trans, timing);
  timing.train = &across;
  to_memory[target]->b_transport(trans, delay);
  timing.train = &across.initiator();
}

unsigned int Interconnect::transport_dbg(int, tlm::tlm_generic_payload& trans) {
  const int target = address_device(trans.get_address());
  if (target < 0 || target >= devices_) return 0;
  return to_memory[target]->transport_dbg(trans);
}

void Interconnect::attach_trace(TraceSink* sink, const std::vector<int>& devices) {
  trace_ = sink;
  for (Fabric::LinkId id : fabric_.traced_links(devices)) link(id);
}

void Interconnect::flush_trace() {
  for (auto& link : links_) link->flush_trace();
}

}  // namespace ars
