#include "sim/outputs/progress_line.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

namespace ars {

std::string progress_text(const ProgressFigures& f) {
  char text[320];
  int used = std::snprintf(text, sizeof text, "%s%ssimulated %.3f us, %d/%d ranks finished",
                           f.stage.c_str(), f.stage.empty() ? "" : ": ", f.simulated_us,
                           f.finished_ranks, f.ranks);
  const bool counted = f.total_operations > 0;
  if (counted) {
    const double share =
        std::min(1.0, static_cast<double>(f.operations) / static_cast<double>(f.total_operations));
    used += std::snprintf(text + used, sizeof text - static_cast<std::size_t>(used),
                          ", %.0f %% of %llu operations", 100 * share,
                          static_cast<unsigned long long>(f.total_operations));
  }
  used += std::snprintf(text + used, sizeof text - static_cast<std::size_t>(used), ", %.1f s wall",
                        f.wall_s);
  if (counted && f.operations > 0 && f.operations < f.total_operations) {
    const double left = f.wall_s * static_cast<double>(f.total_operations - f.operations) /
                        static_cast<double>(f.operations);
    std::snprintf(text + used, sizeof text - static_cast<std::size_t>(used),
                  left < 10 ? ", about %.1f s left" : ", about %.0f s left", left);
  }
  return text;
}

ProgressLine::ProgressLine(const RunProgress& progress, int ranks, std::string stage,
                           std::function<std::uint64_t(int rank)> count_rank)
    : progress_(progress),
      ranks_(ranks),
      stage_(std::move(stage)),
      count_rank_(std::move(count_rank)) {
  thread_ = std::thread([this] { draw(); });
}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_one();
  thread_.join();
  if (width_ > 0) std::fprintf(stderr, "\r%*s\r", width_, "");
}

bool ProgressLine::ended() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

void ProgressLine::draw() {
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t total = 0;
  int counted_ranks = 0;
  for (auto next = start + std::chrono::seconds(2);; next += std::chrono::milliseconds(500)) {
    // Until the first line, and between lines, the run's operations are counted rank by rank.
    while (counted_ranks < ranks_ && std::chrono::steady_clock::now() < next && !ended())
      total += count_rank_(counted_ranks++);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (wake_.wait_until(lock, next, [this] { return done_; })) return;
    }
    ProgressFigures figures;
    figures.stage = stage_;
    figures.simulated_us =
        static_cast<double>(progress_.simulated_ps.load(std::memory_order_relaxed)) / 1e6;
    figures.finished_ranks = progress_.finished_ranks.load(std::memory_order_relaxed);
    figures.ranks = ranks_;
    figures.wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    figures.operations = progress_.operations.load(std::memory_order_relaxed);
    figures.total_operations = counted_ranks == ranks_ ? total : 0;
    width_ = std::max(
        width_, std::fprintf(stderr, "\rallreduce-sim: %s", progress_text(figures).c_str()) - 1);
    std::fflush(stderr);
  }
}

}  // namespace ars
