// The operations a core executed, in the order it issued them: one text line each, with the
// time it was issued. The lines are kept end to end in one buffer, each ended by a line break:
// a dump at a thousand ranks holds millions of lines, and a string apiece cost about three
// times its text. A buffer is one core's, so its growth copies that core's lines, not the run's,
// and the capacity it has not filled yet is never touched (not resident).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace ars {

class ScheduleLog {
 public:
  struct Entry {
    std::uint64_t at_ps;
    std::string_view line;  // without its line break
  };

  class Iterator {
   public:
    Iterator(const ScheduleLog& log, std::size_t index, std::size_t offset)
        : log_(&log), index_(index), offset_(offset) {
      find_end();
    }
    Entry operator*() const {
      return {log_->at_ps_[index_], {log_->text_.data() + offset_, end_ - offset_}};
    }
    Iterator& operator++() {
      offset_ = end_ + 1;
      ++index_;
      find_end();
      return *this;
    }
    bool operator!=(const Iterator& other) const { return index_ != other.index_; }

   private:
    void find_end() { end_ = index_ < log_->size() ? log_->text_.find('\n', offset_) : offset_; }
    const ScheduleLog* log_;
    std::size_t index_;
    std::size_t offset_;  // of the line's first character in the text
    std::size_t end_;     // of its line break
  };

  // Appends one line made of `parts` (none holding a line break).
  void add(std::uint64_t at_ps, std::initializer_list<std::string_view> parts) {
    for (std::string_view part : parts) text_.append(part);
    text_.push_back('\n');
    at_ps_.push_back(at_ps);
  }
  std::size_t size() const { return at_ps_.size(); }
  bool empty() const { return at_ps_.empty(); }
  Iterator begin() const { return {*this, 0, 0}; }
  Iterator end() const { return {*this, at_ps_.size(), text_.size()}; }
  // Every line, each with its line break.
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<std::uint64_t> at_ps_;
};

}  // namespace ars
