// The kernel vocabulary: what one rank's allreduce program may do, in the tutorial's words.
// Kernels see only this header; the hardware behind it (models/) stays hidden, and no
// SystemC or TLM type appears here.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/server_map.h"

namespace ars {

// Bad input (options, configs, a problem outside a kernel's contract): the binary reports the
// message and exits with code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class DType { FP32, FP16 };
enum class ReduceOp { Sum, Max, Min, Prod };
enum class NotifyOp { AtomicAdd, Set };
enum class WaitCmp { Eq, Ge };

std::size_t dtype_bytes(DType dtype);
const char* to_string(DType dtype);
const char* to_string(ReduceOp op);
const char* to_string(NotifyOp op);
const char* to_string(WaitCmp cmp);

// What the user asked for; every rank sees the same problem.
struct Problem {
  int ranks = 4;                // P
  std::uint64_t elements = 64;  // per rank
  DType dtype = DType::FP32;
  ReduceOp op = ReduceOp::Sum;
  std::string mode = "mesh";  // the builtin's algorithm choice
  int repeat = 1;             // allreduce calls in one kernel on the same signal
  std::optional<std::pair<int, int>> signal_shape;  // user override of [rows, cols]
  int core_num = 1;  // SPMD blocks per rank, each on its own vector core (the HOST path)
  // Server of each rank's device (empty: every rank on one server): hierarchical algorithms
  // reduce inside a server first.
  ServerMap servers;
  // The hierarchical allreduce's algorithm between servers: "ring" or "rhd"; empty when not
  // asked for (ring). Other kernels refuse it.
  std::string inter;

  std::uint64_t bytes() const { return elements * dtype_bytes(dtype); }
};

struct WindowSpec {
  std::string name;
  std::uint64_t elements;  // of the problem's dtype; padded to a 4 KiB minimum when allocated
};

struct SignalSpec {
  std::string name;
  int rows;
  int cols;
};

// The symmetric memory a kernel needs on every rank.
struct Layout {
  std::vector<WindowSpec> windows;
  std::vector<SignalSpec> signals;
};

// A buffer in this rank's global memory. Windows are symmetric: the same handle names the
// same buffer on every rank, so remote_load(window, peer, ...) addresses the peer's copy.
struct Tensor {
  int id = -1;
  std::uint64_t elements = 0;
  DType dtype = DType::FP32;
};

// A window of INT32 cells shaped [rows, cols] used for synchronisation.
struct Signal {
  int id = -1;
  int rows = 0;
  int cols = 0;
};

// A region of the vector core's unified buffer holding `elements` values of `dtype`.
struct Tile {
  std::uint32_t offset = 0;
  std::uint64_t elements = 0;
  DType dtype = DType::FP32;
};

// An asynchronous DMA transfer in flight; sync() blocks until it has completed.
struct Transfer {
  std::uint64_t id = 0;
};

enum class StoreOp { Overwrite, AtomicAdd };

// One rank's view of the machine. Offsets and counts are in elements of the tensor's dtype.
// Every call takes simulated time on this rank; the blocking forms return once done.
class Rank {
 public:
  virtual ~Rank() = default;

  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // This SPMD block of the rank (0 .. blocks()-1); every block runs the same kernel body on its
  // own vector core, unified buffer and DMA queues. Kernels that take no core_num see one.
  virtual int block() const = 0;
  virtual int blocks() const = 0;
  virtual const Problem& problem() const = 0;

  virtual Tensor input() const = 0;   // x: this rank's contribution
  virtual Tensor output() const = 0;  // y: where the reduced vector must end up
  virtual Tensor window(const std::string& name) const = 0;
  virtual Signal signal(const std::string& name) const = 0;
  // Bytes of unified buffer a kernel may allocate.
  virtual std::uint64_t ub_bytes() const = 0;

  // Unified buffer. alloc fails with a clear error when the tile does not fit.
  virtual Tile alloc(std::uint64_t elements, DType dtype) = 0;
  virtual void release(const Tile& tile) = 0;

  // GM <-> UB on this device.
  virtual void load(const Tile& dst, const Tensor& src, std::uint64_t offset,
                    std::uint64_t count) = 0;
  virtual void store(const Tile& src, const Tensor& dst, std::uint64_t offset,
                     std::uint64_t count) = 0;
  // Peer window <-> UB across the interconnect (peer == rank() is a local access).
  virtual Transfer remote_load_async(const Tile& dst, const Tensor& window, int peer,
                                     std::uint64_t offset, std::uint64_t count) = 0;
  virtual Transfer remote_store_async(const Tile& src, const Tensor& window, int peer,
                                      std::uint64_t offset, std::uint64_t count,
                                      StoreOp op = StoreOp::Overwrite) = 0;
  virtual void sync(const Transfer& transfer) = 0;
  void remote_load(const Tile& dst, const Tensor& window, int peer, std::uint64_t offset,
                   std::uint64_t count) {
    sync(remote_load_async(dst, window, peer, offset, count));
  }
  void remote_store(const Tile& src, const Tensor& window, int peer, std::uint64_t offset,
                    std::uint64_t count, StoreOp op = StoreOp::Overwrite) {
    sync(remote_store_async(src, window, peer, offset, count, op));
  }

  // acc[i] = op(acc[i], other[i]) for the first `count` elements, on the vector unit.
  virtual void reduce(const Tile& acc, const Tile& other, std::uint64_t count) = 0;

  // Signals: notify writes the peer's cell; wait blocks until this rank's own cell
  // satisfies the comparison.
  virtual void notify(const Signal& signal, int peer, int row, int col, std::int32_t value,
                      NotifyOp op) = 0;
  virtual void wait(const Signal& signal, int row, int col, std::int32_t expected, WaitCmp cmp) = 0;

  // Report structure: starts round `n` of this rank, labelled with its phase.
  virtual void begin_round(const char* phase) = 0;
};

// The step-04 barrier on column `col` of a [P, *] signal: every peer's cell [me, col] gets
// +1, then this rank waits until each of its own cells [src, col] reaches `generation`.
void barrier(Rank& r, const Signal& signal, int col = 0, std::int32_t generation = 1);

// The row form of the same barrier, for signals with one row per barrier or round ([rows, P]:
// two-phase, host ring, builtin ring): every peer's cell [row, me] gets +1, then this rank
// waits until each of its own cells [row, src] reaches `generation`. Use barrier() for [P, *]
// signals and this one for [*, P] signals; the two address transposed cells.
void row_barrier(Rank& r, const Signal& signal, int row, std::int32_t generation = 1);
// The same among the ranks of `group` only (this rank one of them), in group order: the
// barrier inside one server of the hierarchical allreduce.
void row_barrier(Rank& r, const Signal& signal, int row, const std::vector<int>& group,
                 std::int32_t generation = 1);

}  // namespace ars
