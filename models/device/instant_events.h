// Future instants that processes wait for: one SystemC event per instant, shared by all who
// wait for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include <systemc>

namespace ars {

// SystemC keeps every timed notification in a binary heap, and a thread's timed wait is one.
// Burst by burst, DMA queues wait for each burst's leaving time, six on average for each such
// instant on the 96-NPU SuperPod mesh, and sifting that heap held a quarter of the run's
// instructions. Processes waiting here for one picosecond share one event: one heap entry per
// instant. They then resume in the order SystemC triggers an event's waiters rather than in the
// order its heap pops tied entries; neither is the model's order, which is why what asks for a
// resource at one instant is served in an order of the models' own (see Interconnect).
class InstantEvents {
 public:
  // Suspends the calling thread until `at`, which lies after `now`.
  void wait_until(const sc_core::sc_time& at, const sc_core::sc_time& now) {
    sc_core::wait(event_at(at, now));
  }
  // The event notified at `at`, which lies after `now`: for a method's next_trigger.
  const sc_core::sc_event& event_at(const sc_core::sc_time& at, const sc_core::sc_time& now);
  // Events made so far: one per instant waited for at once, reused once their instant passed.
  std::size_t events_made() const { return events_.size(); }

 private:
  using Pending = std::map<std::uint64_t, sc_core::sc_event*>;  // by instant, in ps
  Pending pending_;
  // Entries of instants passed, each with its event, which has fired: kept for instants to come,
  // so that a new instant allocates nothing.
  std::vector<Pending::node_type> spare_;
  std::deque<sc_core::sc_event> events_;
  // The instant asked for last and its event, pending while that instant lies ahead.
  std::uint64_t last_at_ = 0;
  sc_core::sc_event* last_event_ = nullptr;
};

}  // namespace ars
