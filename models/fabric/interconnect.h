// The fabric between devices. Routes every transaction by the device in its address; each
// link direction is a bandwidth resource shared by the bursts that cross it, so flows on the
// same direction share its bandwidth. Which links a pair's data crosses, and the path's
// latency, come from the Fabric (models/fabric/fabric.h); a link's resource and a pair's path are
// made when first used, so nothing is built per device pair up front. Multi-link paths are
// cut-through or store-and-forward at the switches as switch.forwarding says.
// A burst of a transfer run burst by burst is served once nothing else is left to run at its
// instant, with the other bursts asked at that instant, in the order of their flows: which of
// two bursts asking at one instant a resource serves first is then the model's, not the order
// in which SystemC happens to resume their queues (it pops same-time events in no stable
// order). Requests served at once (a notify's atomic, a transfer timed whole) go before them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/fabric/bandwidth_resource.h"
#include "models/fabric/fabric.h"
#include "models/fabric/path_table.h"
#include "models/platform/platform_config.h"
#include "models/records/trace_sink.h"
#include "models/tables/fixed_hash.h"

namespace ars {

// How much the interconnect's path cache may hold before it is emptied (between transactions):
// by default about 100 MB. A full mesh of thousands of ranks on a ring uses millions of pairs,
// each path a thousand links long; paths are worked out again as used, with the same answers.
struct PathCacheLimit {
  std::size_t paths = std::size_t{1} << 20;
  std::uint64_t links = std::uint64_t{1} << 23;
};

struct BurstTiming;

class Interconnect : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Interconnect);
  // Bound by every device's initiators (DMA engine, vector core); see connect_initiator.
  tlm_utils::multi_passthrough_target_socket<Interconnect> from_device;
  // Bound to every device's global memory, in device order.
  tlm_utils::multi_passthrough_initiator_socket<Interconnect> to_memory;

  Interconnect(sc_core::sc_module_name name, const PlatformConfig& config,
               PathCacheLimit path_cache = {});

  template <typename Socket>
  void connect_initiator(Socket& initiator, int device) {
    initiator.bind(from_device);
    port_device_.push_back(device);
    path_memo_.emplace_back();
  }

  // The links data crosses going from device `from` to device `to` (empty when equal). The
  // reference is good until the next path is made (a new path may move the others), and the
  // cache is emptied only between transactions.
  const Path& path(int from, int to);
  // The links made so far, in that order; link i has resource id devices + i (the memory
  // ports come first, see Platform::resources).
  const std::vector<std::unique_ptr<BandwidthResource>>& links() const { return links_; }

  // Where an earlier try of the run met a conflict, set before the simulation starts: the
  // transfers whose data crosses a marked link or a marked device's memory port run burst by
  // burst (see burst_by_burst).
  void mark_link(const std::string& place) { marked_links_.insert(place); }
  void mark_memory(int device);
  // A transfer of device `from` reading (or writing) device `to`'s memory crosses a mark.
  bool burst_by_burst(int from, int to, bool read);
  // After a conflict: stops the simulation once a 64th more of the time simulated so far has
  // passed, at the end of that instant, so that the try finds where else requests meet soon
  // after (on times the first conflict has made inexact: they only say where to look).
  void stop_soon();

  // Declares the links a waveform shows (see Fabric::traced_links for `devices`); links first
  // used later are declared then.
  void attach_trace(TraceSink* sink, const std::vector<int>& devices);
  void flush_trace();

 private:
  void b_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // What b_transport does for a transaction served at once; bursts asked burst by burst come
  // here from end_instant().
  void serve(int port, tlm::tlm_generic_payload& trans, BurstTiming* timing,
             sc_core::sc_time& delay);
  // A transaction carrying a whole transfer's bursts (see BurstTrain): the target memory
  // serves them, each crossing the links on its way first.
  void serve_train(int port, tlm::tlm_generic_payload& trans, BurstTiming& timing);
  class TrainAcrossLinks;
  // One burst of `bytes` crossing the links of `p`, asking at now + `delay`: its timing gains
  // the hops; the answer is the delay with which it asks for the target memory's port, when
  // its last byte has left the links (offset from now) and the read request's flight.
  struct Crossing {
    sc_core::sc_time memory_delay;
    sc_core::sc_time tail;
    sc_core::sc_time request;
  };
  Crossing cross_links(const Path& p, bool is_read, std::uint64_t bytes, BurstTiming* timing,
                       const sc_core::sc_time& delay);
  // Where a transaction from `port` goes: false when its address names no device; else its
  // target device and the path of links there (nullptr to the port's own device's memory).
  // Empties the path cache first once it holds more than path_cache_ allows.
  [[gnu::always_inline]] inline bool route(int port, const tlm::tlm_generic_payload& trans,
                                           int& target, const Path*& path);
  // Once nothing else is left to run at this instant: serves the bursts asked at it, by flow,
  // and stops the simulation if asked to.
  void end_instant();
  unsigned int transport_dbg(int port, tlm::tlm_generic_payload& trans);
  BandwidthResource* link(Fabric::LinkId id);

  int devices_;
  sc_core::sc_time atomic_occupancy_;
  Fabric fabric_;
  Forwarding forwarding_ = Forwarding::CutThrough;
  std::vector<int> port_device_;
  TraceSink* trace_ = nullptr;
  // Links in the order they were made (a trace's order), and by id.
  std::vector<std::unique_ptr<BandwidthResource>> links_;
  // Keys packed from device numbers fall into a few buckets under the standard library's
  // identity hash (n·(P+1) + c modulo a prime near P is one bucket for every n): mixed first.
  struct MixedHash {
    std::size_t operator()(std::uint64_t key) const { return fixed_hash(key); }
  };
  std::unordered_map<Fabric::LinkId, BandwidthResource*, MixedHash> link_by_id_;
  // Paths used, by from * devices + to, until they hold more than path_cache_ allows.
  PathCacheLimit path_cache_;
  PathTable paths_;
  // Per initiator port, the path it asked for last: a transfer's bursts ask for the same one
  // after each other, and an engine's transfers mostly for the same peer's. Its line is shared
  // with other ports', where a lookup reads the path's entry, likely out of the caches. The
  // memos point into paths_, and are dropped whenever it grows.
  struct PathMemo {
    std::uint64_t key = UINT64_MAX;
    const Path* path = nullptr;
  };
  std::vector<PathMemo> path_memo_;
  const Path& path_from_port(int port, int from, int to);
  std::uint64_t path_links_ = 0;  // links held by paths_
  struct Ask {
    std::uint64_t flow;
    int port;
    tlm::tlm_generic_payload* trans;
    BurstTiming* timing;
    sc_core::sc_time delay;
  };
  std::vector<Ask> asks_;     // bursts asked at this instant, served by end_instant()
  std::vector<Ask> serving_;  // the ones end_instant() serves (kept to reuse its memory)
  sc_core::sc_event instant_work_;
  sc_core::sc_event served_;
  bool stopping_ = false;
  sc_core::sc_time stop_at_;
  sc_core::sc_event stop_;
  std::unordered_set<std::string> marked_links_;
  std::vector<char> marked_memory_;  // by device; empty when none is
};

}  // namespace ars
