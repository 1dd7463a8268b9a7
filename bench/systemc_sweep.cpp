// What SystemC alone costs per thread resume when thousands of threads take turns, as the
// ranks of a large run do: THREADS threads each wait 1 ns ROUNDS times, so every simulated
// nanosecond resumes all of them in turn; at each resume a thread touches its own STATE bytes,
// one byte every STRIDE bytes (64: contiguous lines, 4096: one line per page). Prints the wall
// time per resume. A floor to set a rank-round against (bench/README.md):
//   build/bin/systemc_sweep 4096 4000 4096 64
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include <systemc>

namespace {

// A count from the command line: digits only, within what an unsigned 64-bit number holds.
bool read_count(const char* text, std::size_t& count) {
  char* end = nullptr;
  errno = 0;
  count = static_cast<std::size_t>(std::strtoull(text, &end, 10));
  return text[0] >= '0' && text[0] <= '9' && *end == '\0' && errno == 0;
}

}  // namespace

int sc_main(int argc, char** argv) {
  std::size_t threads = 0;
  std::size_t rounds = 0;
  std::size_t state = 0;
  std::size_t stride = 64;
  const bool read = argc >= 3 && argc <= 5 && read_count(argv[1], threads) &&
                    read_count(argv[2], rounds) && (argc < 4 || read_count(argv[3], state)) &&
                    (argc < 5 || read_count(argv[4], stride));
  if (!read || threads == 0 || rounds == 0 || stride == 0) {
    std::fprintf(stderr,
                 "usage: systemc_sweep THREADS ROUNDS [STATE_BYTES [STRIDE]] (counts; THREADS, "
                 "ROUNDS and STRIDE at least 1)\n");
    return 2;
  }
  std::vector<std::unique_ptr<char[]>> blocks;
  try {
    for (std::size_t i = 0; i < threads; ++i) {
      blocks.emplace_back(new char[state + 1]());
      char* block = blocks.back().get();
      sc_core::sc_spawn([block, rounds, state, stride] {
        const sc_core::sc_time step(1, sc_core::SC_NS);
        for (std::size_t r = 0; r < rounds; ++r) {
          sc_core::wait(step);
          for (std::size_t at = 0; at < state; at += stride) ++block[at];
        }
      });
    }
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "systemc_sweep: %zu threads of %zu B each do not fit in memory\n", threads,
                 state);
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  sc_core::sc_start();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu threads, %zu B of state each (stride %zu): %.1f ns per resume\n", threads, state,
              stride, seconds * 1e9 / (static_cast<double>(threads) * static_cast<double>(rounds)));
  return 0;
}
