// Why a run takes the time it takes: the critical path through the ranks, found from the
// run's dependency record (RankStats' spans and records), what bounds every transfer, and
// whether the platform keys the user overrode are on that path at all.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/run.h"

namespace ars {

// One stretch of the critical path. The steps tile [earliest start, latest finish] exactly.
struct PathStep {
  enum class Kind {
    LaunchOffset,  // the rank the path starts on launched after the first rank
    Setup,         // launch.setup_cycles
    Transfer,      // the core waited for a transfer (ref: the rank's transfer ticket)
    Reduce,
    Notify,        // pipe barrier, flush and issue of a notify, or its acknowledgement
    Wait,          // a wait's own cost: the look's answer and the invalidate (ref: wait index)
    PeerWait,      // a peer's notify in flight until the waiting rank's look saw it
    Unattributed,  // core time no record explains (none expected)
  };
  Kind kind;
  int rank;
  int round;  // the rank's round, -1 before its first
  std::uint64_t start_ps;
  std::uint64_t end_ps;
  int ref = -1;
  int peer = -1;  // PeerWait: the rank whose notify released the wait, and that notify's round
  int peer_round = -1;
  // Transfer: which stretch of the transfer's life the step covers.
  enum class Part { QueueWait, Setup, Streaming, Held, Latency };
  Part part = Part::Streaming;
  int block = 0;       // with core_num > 1: the rank's block (vector core) the step is on
  int peer_block = 0;  // PeerWait: the block of `peer` that sent the notify
};

const char* to_string(PathStep::Part part);

const char* to_string(PathStep::Kind kind);

struct CriticalPath {
  std::uint64_t device_time_ps = 0;
  int end_rank = -1;            // the rank that finished last
  int end_block = 0;            // and its block that finished last
  std::vector<PathStep> steps;  // in time order
};

// Empty (no steps) unless the run completed.
CriticalPath critical_path(const RunResult& result);
// The transfer a Transfer step covers, from its rank's (or block's) records.
TransferRecord transfer_of(const RunResult& result, const PathStep& step);

// What bound a transfer, e.g. "dma.remote_bytes_per_cycle on the DMA queue",
// "dev0.link_to_1 (link.bandwidth_GBps)", "queued behind another flow on dev0.link_to_1".
// A resource that held the transfer less than 1 % of its streaming time beyond the queue's
// rate is a tie, and the queue's rate is named.
std::string describe_limit(const RunResult& result, const TransferRecord& transfer);
// "load", "store", "pull from rank 3", "push to rank 3".
std::string transfer_name(const TransferRecord& transfer);
// The configuration key that sets the bounding rate.
std::string limit_key(const RunResult& result, const TransferRecord& transfer);

// The text report's part: the critical path's split of the device time, the limits of the
// transfers per round, and a note for each overridden key.
void print_explanation(std::ostream& out, const RunResult& result);
// --explain: the path itself, rank by rank and round by round. With more ranks than
// `ranks_shown` (0: every rank), consecutive steps that repeat alike but for their ranks,
// rounds and devices (a ring's hand-off and the next rank's round) share a line.
void print_critical_path_steps(std::ostream& out, const RunResult& result, int ranks_shown);
// The JSON's `critical_path`, `transfer_limits` and `key_notes`.
void add_explanation(nlohmann::ordered_json& json, const RunResult& result);

}  // namespace ars
