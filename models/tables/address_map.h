// A map from memory addresses to small values, in one flat array (open addressing with linear
// probing): a signal cell costs its address and value in one slot, about 24 bytes at the
// table's average load, where a node-based map costs a node per cell plus its buckets (about
// 44 bytes) and a lookup reads one cache line, not two or three. Entries are never removed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "models/tables/open_addressing.h"

namespace ars {

template <typename Value>
class AddressMap {
 public:
  // The value at `address`, or nullptr when none was ever made.
  const Value* find(std::uint64_t address) const {
    if (slots_.empty()) return nullptr;
    const Slot& slot = slots_[probe(address + 1)];
    return slot.key == 0 ? nullptr : &slot.value;
  }
  // The value at `address`, made value-initialised (zero) when there was none, and whether it
  // was made now.
  std::pair<Value&, bool> try_emplace(std::uint64_t address) {
    if (open_addressing::must_grow(slots_.size(), size_)) grow();
    Slot& slot = slots_[probe(address + 1)];
    const bool fresh = slot.key == 0;
    if (fresh) {
      slot.key = address + 1;
      ++size_;
    }
    return {slot.value, fresh};
  }
  std::size_t size() const { return size_; }
  // Calls visit(address, value) for every entry, in no particular order.
  template <typename Visit>
  void for_each(Visit visit) const {
    for (const Slot& slot : slots_) {
      if (slot.key != 0) visit(slot.key - 1, slot.value);
    }
  }

 private:
  struct Slot {
    std::uint64_t key = 0;  // the address + 1; 0: an empty slot
    Value value{};
  };
  // The slot holding `key`, or the empty slot where it would go.
  std::size_t probe(std::uint64_t key) const {
    std::size_t i = open_addressing::home(key, slots_.size());
    while (slots_[i].key != 0 && slots_[i].key != key) i = open_addressing::next(i, slots_.size());
    return i;
  }
  void grow() {
    std::vector<Slot> old(open_addressing::grown(slots_.size()));
    old.swap(slots_);
    for (const Slot& slot : old) {
      if (slot.key != 0) slots_[probe(slot.key)] = slot;
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace ars
