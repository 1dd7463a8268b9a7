#include "models/device/instant_events.h"

namespace ars {

const sc_core::sc_event& InstantEvents::event_at(const sc_core::sc_time& at,
                                                 const sc_core::sc_time& now) {
  // Processes waking together mostly wait for the same next instant in turn.
  if (at.value() == last_at_ && last_at_ > now.value()) return *last_event_;
  // SystemC fires an instant's events before it runs any process at that instant.
  while (!pending_.empty() && pending_.begin()->first <= now.value())
    spare_.push_back(pending_.extract(pending_.begin()));
  last_at_ = at.value();
  const auto next = pending_.lower_bound(at.value());
  if (next != pending_.end() && next->first == at.value()) return *(last_event_ = next->second);
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
  return *(last_event_ = entry->second);
}

}  // namespace ars
