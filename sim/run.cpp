#include "sim/run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_set>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/registry.h"
#include "models/platform/clock.h"
#include "models/platform/platform.h"
#include "models/tables/fixed_hash.h"
#include "sim/config/codegen.h"
#include "sim/memory_guard.h"
#include "sim/outputs/output_file.h"
#include "sim/outputs/progress_line.h"
#include "sim/outputs/timeline_trace.h"
#include "sim/outputs/vcd_writer.h"

namespace ars {

namespace {

constexpr std::size_t kMismatchesKept = 8;

void check_problem(const RunRequest& request) {
  const Problem& p = request.problem;
  if (p.elements == 0) throw InputError("size must be at least one element");
  if (p.ranks < 1) throw InputError("at least one device is needed");
  std::vector<char> listed(request.platform.devices, 0);
  for (const int d : request.devices) {
    if (d < 0 || d >= request.platform.devices) {
      throw InputError("device " + std::to_string(d) + " is not in the topology of " +
                       std::to_string(request.platform.devices) + " devices");
    }
    if (listed[d]) throw InputError("device " + std::to_string(d) + " is listed twice in -d");
    listed[d] = 1;
  }
  for (const Fault& fault : request.faults) {
    if (fault.rank >= static_cast<int>(request.devices.size())) {
      throw InputError("--fault: rank " + std::to_string(fault.rank) +
                       " is not a rank (P = " + std::to_string(request.devices.size()) + ")");
    }
  }
}

// A fault at an index its rank never reached leaves the run as if it had not been asked for:
// refused once the rank has finished and its counts are known (a rank blocked earlier may
// simply not have got there). Returns the refusal, or "".
std::string unapplied_fault(const RunRequest& request, const RunResult& result) {
  const bool blocks = !result.blocks.empty();
  for (const Fault& fault : request.faults) {
    if (fault.kind == Fault::Kind::Stall) continue;
    const bool waits = fault.kind == Fault::Kind::SkipWait;
    std::uint64_t made = 0;
    bool finished = true;
    for (const RankStats& s : blocks ? result.blocks : result.ranks) {
      if (s.rank != fault.rank) continue;
      made = std::max(made, waits ? s.waits : s.notifies);
      finished = finished && s.finished;
    }
    if (!finished || fault.index < made) continue;
    const std::string what = waits ? " waits" : " notifies";
    return "--fault " + to_string(fault) + ": rank " + std::to_string(fault.rank) +
           (blocks ? "'s blocks each made at most " : " made ") + std::to_string(made) + what +
           " (INDEX counts them from 0), so the fault never applied";
  }
  return "";
}

// A rank's input, output, windows and signals must fit its device's memory. Checked here rather
// than at the first transfer past the end (or, past 1 TiB, into the next device's addresses):
// a timing-only run keeps no bytes, so nothing else would refuse it.
void check_device_memory(const RunRequest& request, Platform& platform) {
  const std::uint64_t needed = platform.device(request.devices.front()).gm.allocated_bytes();
  const double capacity = request.platform.gm_capacity_GiB * static_cast<double>(1ull << 30);
  if (static_cast<double>(needed) > capacity) {
    throw InputError("a rank's input, output, windows and signals take " + format_bytes(needed) +
                     " of its device's memory, more than the " +
                     format_bytes(static_cast<std::uint64_t>(capacity)) +
                     " it has (gm.capacity_GiB); use a smaller --size");
  }
}

}  // namespace

RankStats sum_blocks(const std::vector<RankStats>& blocks, int rank) {
  RankStats sum;
  sum.rank = rank;
  sum.start_ps = UINT64_MAX;
  sum.finished = true;
  for (const RankStats& b : blocks) {
    if (b.rank != rank) continue;
    sum.device = b.device;
    sum.remote_read_bytes += b.remote_read_bytes;
    sum.remote_write_bytes += b.remote_write_bytes;
    sum.local_bytes += b.local_bytes;
    sum.notifies += b.notifies;
    sum.waits += b.waits;
    sum.polls += b.polls;
    sum.transfers += b.transfers;
    sum.reduces += b.reduces;
    sum.ub_peak_bytes = std::max(sum.ub_peak_bytes, b.ub_peak_bytes);
    sum.start_ps = std::min(sum.start_ps, b.start_ps);
    if (b.finish_ps >= sum.finish_ps) {
      sum.rounds = b.rounds;
      sum.round_phases = b.round_phases;
      sum.sync = b.sync;
    }
    sum.finish_ps = std::max(sum.finish_ps, b.finish_ps);
    sum.finished = sum.finished && b.finished;
  }
  return sum;
}

namespace {

void check_signals_clear(Platform& platform, RunResult& result) {
  // Only cells ever written can be non-zero: the check costs what the run touched.
  for (int r = 0; r < platform.ranks() && result.signal_residue.empty(); ++r) {
    const std::string cell = platform.first_nonzero_cell(r);
    if (!cell.empty()) result.signal_residue = "rank " + std::to_string(r) + " " + cell;
  }
  result.signal_clear = result.signal_residue.empty();
}

// A forked copy of the process, made before anything is elaborated, that waits while the
// run is tried with transfers timed whole. Released, it ends quietly; told to take over, it
// redoes the run and carries on as the process, whose exit status this one then passes on; it
// is told how (see Handover) and why (where the transfers met), for its report. Without a copy
// (fork failed) the run goes burst by burst in place.
class Standby {
 public:
  Standby() {
    int fds[2];
    if (::pipe(fds) != 0) {
      taking_over_ = true;
      return;
    }
    std::fflush(nullptr);
    std::cout.flush();
    std::cerr.flush();
    pid_ = ::fork();
    if (pid_ < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      taking_over_ = true;
      return;
    }
    if (pid_ == 0) {
      ::close(fds[1]);
      char go = 0;
      ssize_t n;
      do {
        n = ::read(fds[0], &go, 1);
      } while (n < 0 && errno == EINTR);
      if (n != 1) std::_Exit(0);  // released, or the process ended
      char part[256];
      while ((n = ::read(fds[0], part, sizeof part)) != 0) {
        if (n > 0) told_.append(part, static_cast<std::size_t>(n));
        if (n < 0 && errno != EINTR) break;
      }
      ::close(fds[0]);
      taking_over_ = true;
      return;
    }
    ::close(fds[0]);
    fd_ = fds[1];
  }
  Standby(const Standby&) = delete;
  Standby& operator=(const Standby&) = delete;
  ~Standby() {
    if (fd_ < 0) return;
    ::close(fd_);
    ::waitpid(pid_, nullptr, 0);
  }
  bool taking_over() const { return taking_over_; }
  // What the copy was told as it took over (empty in the process that tried the run).
  const std::string& told() const { return told_; }
  [[noreturn]] void take_over(const std::string& what) {
    const std::string message = '\1' + what;
    if (::write(fd_, message.data(), message.size()) != static_cast<ssize_t>(message.size()))
      std::_Exit(1);
    ::close(fd_);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    std::_Exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  bool taking_over_ = false;
  std::string told_;
};

}  // namespace

double input_value(const Problem& problem, int rank, std::uint64_t index) {
  const std::uint32_t h = fixed_hash((static_cast<std::uint64_t>(rank) << 40) ^ index);
  if (problem.op == ReduceOp::Prod) {
    // Near one, so products over many ranks neither overflow nor vanish: 0.75 .. 1.25.
    return 0.75 + static_cast<double>(h % 33) / 64.0;
  }
  // Multiples of 1/64 in [-2, 2): sums over up to 16 ranks are exact even in FP16, as every
  // partial sum is a multiple of 1/64 under 2^11 / 64 = 32 in magnitude. Over more ranks FP16
  // draws from [-m, m) / 64 with m = 2048 / P, which keeps that so in any order of adding; past
  // 2048 ranks from {-1, 0, 1} / 64, whose partial sums stay far under 32 in any likely order.
  const int half = problem.dtype != DType::FP16 || problem.ranks <= 16 ? 128
                   : problem.ranks <= 2048                             ? 2048 / problem.ranks
                                                                       : 0;
  if (half == 0) return static_cast<double>(static_cast<int>(h % 3) - 1) / 64.0;
  return static_cast<double>(static_cast<int>(h % (2 * half)) - half) / 64.0;
}

// How a run is tried: every transfer burst by burst, or timed whole but for those crossing
// the resources named and the transfers named (where the tries before met).
struct Attempt {
  bool whole_transfers = false;
  std::vector<std::string> burst_resources;
  std::vector<std::uint64_t> burst_transfers;  // as flows (transfer_flow), sorted
  int transfers_from = 0;                      // the try that first marked transfers (0: none)
  std::size_t surveyed_met = 0;                // transfers the last survey found meeting
};

// Where a try's transfers timed whole met: the first meeting, every resource met at its
// instant and the transfers that met there, and whether two notifies met (which no transfer
// run burst by burst would part).
struct Meeting {
  std::string conflict;
  std::vector<std::string> places;
  std::vector<std::uint64_t> transfers;  // sorted
  double bytes_share = 0;                // of the bytes the try moved, those through `places`
  bool too_many_met = false;             // to run only those that met burst by burst
  bool notifies = false;
  bool memory_port = false;   // among the resources met
  std::size_t resources = 0;  // memory ports and links the try had used
  // The steps the try would have made burst by burst for each it made with its transfers
  // timed whole (Platform::burst_steps_per_whole_step), as far as it went.
  double burst_steps_per_step = 0;
};

// Tries with transfers timed whole before every transfer goes burst by burst: each marks where
// the ones before met. What a try weighs is what the run would cost burst by burst: the steps
// it makes so (its bursts where a transfer timed whole is one) for each it made timed whole.
// rhd between servers makes 20 for each; the builtin ring 10 to 15 early in its run and 2 to 6
// later, as its polls come to outnumber its bursts.
// - While no transfer is marked, a try marks the resources where it met when they are few (one
//   in kMarkedShare of those it used) and carry little (one in kHeavyShare of the bytes it
//   moved), for up to kResourceTries tries: a ring on a cluster meets on its spines' links to
//   one leaf round after round. Where the bursts cost kCostlyBursts steps or more, only while
//   those are links: every transfer of an NPU crosses its memory port, and rhd's fold at a
//   server count not a power of two meets on new ports try after try (48, 32, 32 between 250
//   servers).
// - Otherwise, where the bursts cost that much, it marks only the transfers that met (rhd's
//   fold and hand-back between 3 servers meet on a third of the memory ports, a quarter of the
//   bytes), for up to kTransferTries tries that survey the run to its end but for the last, so
//   that the next knows most meetings. A survey whose run comes to make fewer steps burst by
//   burst than that for each gives up: a survey, a run timed whole, would cost about what it
//   saves. A survey that finds no fewer transfers meeting than the survey before ends the
//   tries: marking does not settle them (flat rhd between 33, 34, 36, 40 and 48 servers finds
//   248 then 256, ..., 3968 then 4096, and its next try meets again; where the tries hold,
//   between 5 and 63 servers, the second survey finds at most 0.55 times the first's).
// - Otherwise, or when the meetings keep coming, every transfer goes burst by burst.
constexpr int kResourceTries = 3;
constexpr int kTransferTries = 3;
constexpr std::size_t kMarkedShare = 16;
constexpr double kHeavyShare = 8;
constexpr double kCostlyBursts = 8;

// The last try the marks allow.
int last_try(const Attempt& attempt) {
  return attempt.transfers_from == 0 ? kResourceTries : attempt.transfers_from + kTransferTries;
}

// What a try that met tells the copy standing by: how to try next, and the first meeting of
// all (for the report). One line each: "whole" or "bursts", the try that first marked transfers
// and how many transfers the last survey found meeting; the meeting; the transfers' flows (in
// hexadecimal, on one line); then the resources.
struct Handover {
  std::string first_meeting;
  Attempt attempt;

  std::string write() const {
    std::string text = attempt.whole_transfers ? "whole" : "bursts";
    text += ' ' + std::to_string(attempt.transfers_from) + ' ' +
            std::to_string(attempt.surveyed_met) + '\n';
    text += first_meeting + '\n';
    std::ostringstream flows;
    flows << std::hex;
    for (const std::uint64_t flow : attempt.burst_transfers) flows << flow << ' ';
    text += flows.str() + '\n';
    for (const std::string& place : attempt.burst_resources) text += place + '\n';
    return text;
  }
  static Handover read(const std::string& text) {
    Handover handover;
    std::istringstream lines(text);
    std::string how;
    lines >> how >> handover.attempt.transfers_from >> handover.attempt.surveyed_met;
    lines.ignore(1);
    handover.attempt.whole_transfers = how == "whole";
    std::getline(lines, handover.first_meeting);
    std::string flows_line;
    std::getline(lines, flows_line);
    std::istringstream flows(flows_line);
    flows >> std::hex;
    for (std::uint64_t flow; flows >> flow;) handover.attempt.burst_transfers.push_back(flow);
    for (std::string place; std::getline(lines, place);)
      handover.attempt.burst_resources.push_back(place);
    return handover;
  }
};

// One simulation of a checked request; nullopt when transfers timed whole met on a resource
// (`meeting` then says where). A try that surveys goes on past its meetings (see
// Platform::Options::survey_meetings). `stage` names the try on the progress line.
std::optional<RunResult> simulate(const RunRequest& request, const KernelSpec& kernel,
                                  const Problem& problem, const Layout& layout,
                                  const Attempt& attempt, const std::string& stage = "",
                                  bool survey = false, Meeting* meeting = nullptr) {
  RunResult result;
  result.request = request;
  result.request.problem = problem;
  // FP32 checks as the tutorial does. FP16 sums, maxima and minima of the inputs (multiples of
  // 1/64 kept exact in any order, see input_value) must be exact. A product rounds P - 1 times,
  // each within a unit roundoff (2^-24, 2^-11) of relative error while it is a normal number,
  // and within half the smallest subnormal's spacing below that: its absolute slack is the
  // smallest normal number, far under any product of inputs near one that did not vanish.
  const bool fp32 = problem.dtype == DType::FP32;
  result.rtol = fp32 ? 1e-5 : 0.0;
  result.atol = result.rtol;
  if (problem.op == ReduceOp::Prod) {
    result.rtol += (problem.ranks - 1) * (fp32 ? 0x1p-24 : 0x1p-11);
    result.atol = fp32 ? 0x1p-126 : 0x1p-14;
  }

  init_time_resolution();
  // sc_stop() after a rank's error announces itself on stdout; the run reports the error.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO,
                                          sc_core::SC_DO_NOTHING);
  std::unique_ptr<VcdWriter> vcd;
  if (!request.vcd_path.empty())
    vcd = std::make_unique<VcdWriter>(
        request.vcd_path, request.devices,
        request.vcd_devices.empty() ? request.devices : request.vcd_devices);
  std::unique_ptr<TimelineTrace> trace;
  if (!request.trace_path.empty()) {
    std::vector<std::string> signals;
    for (const SignalSpec& signal : layout.signals) signals.push_back(signal.name);
    trace = std::make_unique<TimelineTrace>(
        request.trace_devices.empty() ? request.devices : request.trace_devices, signals);
  }
  TraceTee sinks({vcd.get(), trace.get()});

  RunProgress progress;
  Platform::Options options;
  options.timing_only = request.timing_only;
  options.faults = request.faults;
  options.record_schedule = request.record_schedule;
  options.keep_records = request.keep_records;
  options.keep_sync_records = trace != nullptr;
  options.round_records_ranks = request.round_records_ranks;
  options.trace = sinks.empty() ? nullptr : &sinks;
  options.whole_transfers = attempt.whole_transfers;
  options.burst_resources = attempt.burst_resources;
  options.burst_transfers = attempt.burst_transfers;
  options.survey_meetings = survey;
  options.survey_burst_steps = kCostlyBursts;
  options.progress = request.progress ? &progress : nullptr;
  if (const std::optional<MapBudget> budget = process_map_budget())
    options.before_queue_threads = queue_thread_guard(request, problem, *budget);
  PlatformConfig config = request.platform;
  if (kernel.runtime_kernel) config.codegen = runtime_kernel_sync();
  Platform platform("platform", config, request.devices, problem, layout, kernel.body, options);
  check_device_memory(request, platform);

  const std::uint64_t n = problem.elements;
  const std::size_t element = dtype_bytes(problem.dtype);
  if (!request.timing_only) {
    for (int r = 0; r < problem.ranks; ++r) {
      std::vector<std::uint8_t> x(n * element);
      for (std::uint64_t i = 0; i < n; ++i)
        store_element(x.data(), problem.dtype, i, input_value(problem, r, i));
      platform.write_tensor(r, 0, x);
    }
  }

  const auto wall_start = std::chrono::steady_clock::now();
  Platform::Outcome outcome;
  {
    std::optional<ProgressLine> line;
    if (request.progress)
      line.emplace(progress, problem.ranks, stage, [&](int rank) {
        return count_rank_operations(request, kernel, problem, layout, rank).operations();
      });
    outcome = platform.run(ns(request.max_sim_time_ns));
  }
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  if (outcome.whole_transfers_conflicted) {
    if (meeting != nullptr) {
      *meeting = {
          outcome.conflict,        outcome.conflict_places, outcome.conflict_transfers,
          outcome.met_bytes_share, outcome.too_many_met,    outcome.notifies_met,
          outcome.memory_port_met, outcome.resources,       platform.burst_steps_per_whole_step()};
    }
    return std::nullopt;
  }
  if (!outcome.failure.empty()) throw InputError(outcome.failure);
  result.whole_transfers = attempt.whole_transfers;
  result.bursts_through = attempt.burst_resources;
  result.bursts_of = attempt.burst_transfers.size();
  result.completed = outcome.completed;
  result.failure = outcome.deadlock.empty() ? outcome.timeout : outcome.deadlock;

  std::uint64_t first_start = UINT64_MAX;
  std::uint64_t last_finish = 0;
  for (const BandwidthResource* resource : platform.resources())
    result.resources.push_back({resource->place(), resource->key()});
  result.dma_setup_ps = platform.device(request.devices.front()).block_dma(0).setup_ps();
  // Reserved: a growing vector would copy the records (their deques may throw when moved).
  result.ranks.reserve(static_cast<std::size_t>(problem.ranks));
  if (platform.blocks() > 1)
    result.blocks.reserve(static_cast<std::size_t>(problem.ranks) *
                          static_cast<std::size_t>(platform.blocks()));
  for (int r = 0; r < problem.ranks; ++r) {
    Device& device = platform.device(request.devices[static_cast<std::size_t>(r)]);
    for (int b = 0; b < platform.blocks(); ++b) {
      VectorCore& core = platform.core(r, b);
      // Moved, not copied: at thousands of ranks the per-rank records are most of the memory.
      RankStats s = core.release_stats();
      if (request.keep_records) s.transfer_records = device.block_dma(b).release_records();
      first_start = std::min(first_start, s.start_ps);
      last_finish = std::max(last_finish, s.finish_ps);
      result.simulated_operations += s.steps_but_bursts();
      if (request.record_schedule) result.schedule.push_back(core.release_schedule());
      if (platform.blocks() == 1) {
        result.ranks.push_back(std::move(s));
      } else {
        result.blocks.push_back(std::move(s));
      }
    }
    if (platform.blocks() > 1) result.ranks.push_back(sum_blocks(result.blocks, r));
  }
  result.refused = unapplied_fault(request, result);
  // Written only now: a refused run leaves the file the user had there as it was.
  if (vcd && result.refused.empty()) result.refused = vcd->write();
  if (!result.refused.empty()) return result;
  const std::uint64_t burst = request.platform.dma_burst_bytes;
  for (const RankStats& s : result.ranks) result.simulated_operations += s.bursts(burst);
  if (result.completed) {
    result.device_time_ps = last_finish - first_start;
    result.device_time_ns = static_cast<double>(result.device_time_ps) / 1000.0;
  }
  if (trace) {
    write_file(request.trace_path, [&](std::ostream& out) { trace->write(result, out); });
  }

  if (result.completed) check_signals_clear(platform, result);
  if (!result.completed || request.timing_only) return result;

  // Golden: the element-wise reduction over ranks (or the rank's own input for kernels that
  // move no data), in double precision, compared with rtol/atol.
  result.checked = true;
  std::vector<double> reduced;
  if (kernel.reduces) {
    reduced.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      double value = input_value(problem, 0, i);
      for (int q = 1; q < problem.ranks; ++q) {
        const double v = input_value(problem, q, i);
        switch (problem.op) {
          case ReduceOp::Sum:
            value += v;
            break;
          case ReduceOp::Max:
            value = std::max(value, v);
            break;
          case ReduceOp::Min:
            value = std::min(value, v);
            break;
          case ReduceOp::Prod:
            value *= v;
            break;
        }
      }
      reduced[i] = value;
    }
  }
  for (int r = 0; r < problem.ranks; ++r) {
    const std::vector<std::uint8_t> y = platform.read_tensor(r, 1);
    for (std::uint64_t i = 0; i < n; ++i) {
      const double expected = kernel.reduces ? reduced[i] : input_value(problem, r, i);
      const double got = load_element(y.data(), problem.dtype, i);
      if (!(std::fabs(got - expected) <= result.atol + result.rtol * std::fabs(expected))) {
        if (result.mismatches.size() < kMismatchesKept)
          result.mismatches.push_back({r, i, got, expected});
        ++result.mismatch_count;
      }
    }
  }
  result.signal_must_clear = kernel.clears_signal;
  result.correct = result.mismatch_count == 0 && (result.signal_clear || !kernel.clears_signal);
  return result;
}

const KernelSpec& run_kernel(const RunRequest& request) {
  return request.kernel_spec != nullptr ? *request.kernel_spec : find_kernel(request.kernel);
}

Problem run_problem(const RunRequest& request) {
  Problem problem = request.problem;
  problem.ranks = static_cast<int>(request.devices.size());
  std::vector<int> rank_server;
  for (const int device : request.devices)
    rank_server.push_back(request.platform.server_of(device));
  problem.servers = ServerMap(rank_server);
  if (problem.core_num < 1 || problem.core_num > request.platform.vector_cores) {
    throw InputError("--core-num " + std::to_string(problem.core_num) + ": must be 1.." +
                     std::to_string(request.platform.vector_cores) + " (vector.cores of " +
                     request.platform.name + ")");
  }
  refuse_core_num(problem, run_kernel(request));
  return problem;
}

RunResult run_allreduce(const RunRequest& request) {
  check_problem(request);
  const KernelSpec& kernel = run_kernel(request);
  const Problem problem = run_problem(request);
  if (kernel.runtime_kernel && !request.platform.codegen.name.empty()) {
    throw InputError("--codegen " + request.platform.codegen.name + ": " + kernel.name +
                     " is the runtime's own kernel, not compiled code: no codegen profile applies");
  }
  const Layout layout = kernel.layout(problem);
  if (const std::optional<MapBudget> budget = process_map_budget())
    check_thread_stacks(request, problem, *budget);
  check_memory(request, kernel, problem, layout);

  // A waveform or a timeline observes every burst; otherwise transfers are timed whole, with a
  // process standing by to redo the run should they meet (SystemC runs once per process).
  if (request.detailed_bursts || !request.vcd_path.empty() || !request.trace_path.empty())
    return *simulate(request, kernel, problem, layout, Attempt{});
  Attempt attempt{true, {}, {}, 0};
  std::string first_meeting;
  // The copies share the clock (a monotonic one): each knows when the first try began.
  const auto tries_start = std::chrono::steady_clock::now();
  for (int tries = 1;; ++tries) {
    Standby standby;
    const auto run_start = std::chrono::steady_clock::now();
    // A copy taking over to go burst by burst follows this round's try (none when the copy could
    // not be made: it was told nothing); a try that holds, the tries of the rounds before.
    const auto tried = [&](RunResult& result, int before) {
      result.bursts_because = first_meeting;
      result.tries_before = before;
      result.tries_wall_seconds = std::chrono::duration<double>(run_start - tries_start).count();
    };
    if (standby.taking_over()) {
      const Handover handover = Handover::read(standby.told());
      first_meeting = handover.first_meeting;
      attempt = handover.attempt;
      if (attempt.whole_transfers) continue;  // this copy makes the next try
      const int before = standby.told().empty() ? tries - 1 : tries;
      const std::string stage = before == 0 ? ""
                                            : "burst by burst after " + std::to_string(before) +
                                                  (before == 1 ? " try" : " tries");
      RunResult result = *simulate(request, kernel, problem, layout, attempt, stage);
      tried(result, before);
      return result;
    }
    // Tries marking transfers survey, but for the last.
    const bool survey = attempt.transfers_from != 0 && tries < last_try(attempt);
    Meeting meeting;
    std::optional<RunResult> result =
        simulate(request, kernel, problem, layout, attempt,
                 tries == 1 ? "" : "try " + std::to_string(tries), survey, &meeting);
    if (result) {
      tried(*result, tries - 1);
      return std::move(*result);
    }
    if (first_meeting.empty()) first_meeting = meeting.conflict;
    // Marks for the next try (see kResourceTries), unless two notifies met (served at once
    // either way), too many transfers met, the bursts cost little and resources do not settle
    // it, or tries have run out: then every transfer goes burst by burst.
    std::vector<std::string> resources = attempt.burst_resources;
    std::unordered_set<std::string> known(resources.begin(), resources.end());
    for (const std::string& place : meeting.places) {
      if (known.insert(place).second) resources.push_back(place);
    }
    bool marked = false;
    const bool costly = meeting.burst_steps_per_step >= kCostlyBursts;
    const bool light = attempt.burst_transfers.empty() && meeting.bytes_share * kHeavyShare <= 1;
    if (light && (!costly || (tries < kResourceTries && !meeting.memory_port))) {
      // Resources carrying little: marked while few; many, the meetings have spread.
      if (resources.size() * kMarkedShare <= meeting.resources) {
        marked = resources.size() > attempt.burst_resources.size();
        attempt.burst_resources = std::move(resources);
      }
    } else if (costly && !meeting.too_many_met) {
      std::vector<std::uint64_t> transfers;
      std::set_union(attempt.burst_transfers.begin(), attempt.burst_transfers.end(),
                     meeting.transfers.begin(), meeting.transfers.end(),
                     std::back_inserter(transfers));
      marked = transfers.size() > attempt.burst_transfers.size();
      attempt.burst_transfers = std::move(transfers);
      if (attempt.transfers_from == 0) attempt.transfers_from = tries;
    }
    const bool settling =
        !survey || attempt.surveyed_met == 0 || meeting.transfers.size() < attempt.surveyed_met;
    if (survey) attempt.surveyed_met = meeting.transfers.size();
    const bool again = !meeting.notifies && marked && settling && tries < last_try(attempt);
    if (!again) attempt = Attempt{};
    standby.take_over(Handover{first_meeting, attempt}.write());
  }
}

}  // namespace ars
