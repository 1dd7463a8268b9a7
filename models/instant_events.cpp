#include "models/instant_events.h"

namespace ars {

const sc_core::sc_event& InstantEvents::event_at(const sc_core::sc_time& at,
                                                 const sc_core::sc_time& now) {
  // SystemC fires an instant's events before it runs any process at that instant.
  while (!pending_.empty() && pending_.begin()->first <= now.value())
    spare_.push_back(pending_.extract(pending_.begin()));
  const auto next = pending_.lower_bound(at.value());
  if (next != pending_.end() && next->first == at.value()) return *next->second;
  Pending::iterator entry;
  if (spare_.empty()) {
    entry = pending_.emplace_hint(next, at.value(), &events_.emplace_back());
  } else {
    Pending::node_type node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = at.value();
    entry = pending_.insert(next, std::move(node));
  }
  entry->second->notify(at - now);
  return *entry->second;
}

}  // namespace ars
