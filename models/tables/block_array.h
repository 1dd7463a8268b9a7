#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace ars {

// Entries in fixed blocks of kBlockBytes (512 by default): a vector's doubling would leave up to
// half its capacity unused and copy every entry as it grows, at millions of entries per run. An
// append touches 16 bytes of the header, the next slot and the count side by side, where a deque's
// reads the finish iterator of its 80-byte header and its size() both iterators.
template <typename T, std::size_t kBlockBytes = 512>
class BlockArray {
 public:
  BlockArray() = default;
  BlockArray(const BlockArray& other) {
    for (std::size_t i = 0; i < other.size_; ++i) push_back(other[i]);
  }
  BlockArray(BlockArray&& other) noexcept
      : next_(std::exchange(other.next_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        blocks_(std::move(other.blocks_)) {}
  BlockArray& operator=(BlockArray other) noexcept {
    std::swap(next_, other.next_);
    std::swap(size_, other.size_);
    blocks_.swap(other.blocks_);
    return *this;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void push_back(const T& value) {
    if (size_ % kBlock == 0) {
      blocks_.emplace_back(new T[kBlock]);
      next_ = blocks_.back().get();
    }
    *next_++ = value;
    ++size_;
  }
  T& operator[](std::size_t index) { return blocks_[index / kBlock][index % kBlock]; }
  const T& operator[](std::size_t index) const { return blocks_[index / kBlock][index % kBlock]; }

 private:
  static constexpr std::size_t kBlock = kBlockBytes / sizeof(T);
  static_assert(kBlock > 0, "a BlockArray's entries fit its blocks");
  T* next_ = nullptr;
  std::size_t size_ = 0;
  std::vector<std::unique_ptr<T[]>> blocks_;
};

}  // namespace ars
