#include "sim/outputs/critical_path.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <tuple>
#include <utility>

#include "sim/config/config.h"

namespace ars {

namespace {

using Kind = PathStep::Kind;

constexpr Kind kParts[] = {Kind::LaunchOffset, Kind::Setup, Kind::Transfer, Kind::Reduce,
                           Kind::Notify,       Kind::Wait,  Kind::PeerWait, Kind::Unattributed};

// Fixed-point ns with picosecond digits: no rounding, no scientific notation.
std::string ns_text(std::uint64_t ps) {
  char text[32];
  std::snprintf(text, sizeof text, "%llu.%03llu", static_cast<unsigned long long>(ps / 1000),
                static_cast<unsigned long long>(ps % 1000));
  return text;
}

std::string percent_text(std::uint64_t part, std::uint64_t whole) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2f",
                whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return text;
}

const RankStats& unit(const RunResult& result, int rank, int block) {
  return result.units()[static_cast<std::size_t>(rank * result.blocks_per_rank() + block)];
}
// "rank 3", or "rank 3 block 5" when ranks run several blocks.
std::string who(const RunResult& result, int rank, int block) {
  return "rank " + std::to_string(rank) +
         (result.blocks_per_rank() > 1 ? " block " + std::to_string(block) : "");
}

std::string phase_of(const RunResult& result, int rank, int round) {
  const RankStats& s = result.ranks[static_cast<std::size_t>(rank)];
  return round >= 0 && static_cast<std::size_t>(round) < s.round_count()
             ? s.phase(static_cast<std::size_t>(round))
             : "launch";
}

// The limit after the tie rule (see describe_limit).
TransferLimit effective_limit(const RunResult& result, const TransferRecord& t) {
  const std::uint64_t streaming =
      t.left_ps - t.start_ps - std::min(result.dma_setup_ps, t.left_ps - t.start_ps);
  return t.held_ps * 100 < streaming ? TransferLimit{} : t.limit;
}

std::string queue_key(const TransferRecord& t) {
  const char* rate = t.op == TransferRecord::Op::Load    ? "dma.mte2_bytes_per_cycle"
                     : t.op == TransferRecord::Op::Store ? "dma.mte3_bytes_per_cycle"
                                                         : "dma.remote_bytes_per_cycle";
  return t.misaligned ? std::string(rate) + " x dma.misaligned_rate_factor" : std::string(rate);
}

std::string resource_text(const RunResult& result, const TransferLimit& limit) {
  const ResourceInfo& r = result.resources.at(static_cast<std::size_t>(limit.resource));
  return (limit.kind == TransferLimit::Kind::QueuedBehindFlow ? "queued behind another flow on "
                                                              : "") +
         r.place + " (" + r.key + ")";
}

// The same limit seen from any rank: the key and the kind of resource, not its place.
std::string limit_class(const RunResult& result, const TransferRecord& t) {
  const std::string key = limit_key(result, t);
  switch (effective_limit(result, t).kind) {
    case TransferLimit::Kind::QueueRate:
      return key + " (DMA queue rate)";
    case TransferLimit::Kind::ResourceRate:
      return key + " (" + (key.rfind("link", 0) == 0 ? "link" : "resource") + " rate)";
    case TransferLimit::Kind::QueuedBehindFlow:
      return "queued behind another flow (" + key + ")";
  }
  return key;
}

struct PathSummary {
  std::uint64_t parts[std::size(kParts)] = {};
  struct Share {
    std::uint64_t ps = 0;
    int count = 0;
    std::set<std::string> places;
  };
  std::map<std::pair<int, int>, Share> peers;  // (peer, its round)
  std::map<std::string, Share> limits;         // transfer time by what bound it
  std::map<std::string, Share> remote_limits;  // remote transfers by limit key
  std::map<std::string, Share> keys;           // transfer time by the key of its limit
  Share stretches[static_cast<std::size_t>(PathStep::Part::Latency) + 1];  // by PathStep::Part
  // Path time by the phase of its steps' rounds, in the order the path first meets them.
  std::vector<std::pair<std::string, std::uint64_t>> phases;
  int transfers = 0;
  int remote_transfers = 0;
};

std::size_t part_index(Kind kind) {
  return static_cast<std::size_t>(std::find(std::begin(kParts), std::end(kParts), kind) -
                                  std::begin(kParts));
}

// A stretch of a transfer on the path, as the summary names it.
// " (dev0.link_to_1)", " (dev0.link_to_1, dev2.link_to_1 and 5 more)", or nothing.
std::string places_text(const std::set<std::string>& places) {
  if (places.empty()) return "";
  std::string text = " (";
  std::size_t shown = 0;
  for (const std::string& place : places) {
    if (shown == 2) return text + " and " + std::to_string(places.size() - 2) + " more)";
    text += (shown++ == 0 ? "" : ", ") + place;
  }
  return text + ")";
}

std::string stretch_text(const RunResult& result, PathStep::Part part, const TransferRecord& t) {
  switch (part) {
    case PathStep::Part::Latency:
      return "path latency (links, switches, GM access)";
    case PathStep::Part::Held: {
      // By key, not place: the places are listed apart (see PathSummary::Share::places).
      const std::string& key = result.resources.at(static_cast<std::size_t>(t.limit.resource)).key;
      return (t.limit.kind == TransferLimit::Kind::QueuedBehindFlow
                  ? "queued behind another flow at " + key
                  : "held by " + key) +
             " beyond the queue's rate";
    }
    case PathStep::Part::Streaming:
      return "streaming at " + queue_key(t) + " on the DMA queue";
    case PathStep::Part::Setup:
      return "DMA set-up (dma.setup_cycles)";
    case PathStep::Part::QueueWait:
      return "waiting for the DMA queue (the rank's earlier transfers)";
  }
  return "";
}

PathSummary summarise(const RunResult& result, const CriticalPath& path) {
  PathSummary summary;
  int last_rank = -1;
  int last_ref = -1;
  for (const PathStep& step : path.steps) {
    const std::uint64_t span = step.end_ps - step.start_ps;
    summary.parts[part_index(step.kind)] += span;
    const std::string phase = phase_of(result, step.rank, step.round);
    const auto seen = std::find_if(summary.phases.begin(), summary.phases.end(),
                                   [&phase](const auto& p) { return p.first == phase; });
    if (seen == summary.phases.end()) {
      summary.phases.emplace_back(phase, span);
    } else {
      seen->second += span;
    }
    if (step.kind == Kind::PeerWait) {
      auto& share = summary.peers[{step.peer, step.peer_round}];
      share.ps += span;
      ++share.count;
    }
    if (step.kind == Kind::Transfer) {
      const TransferRecord t = transfer_of(result, step);
      const std::string key =
          step.part == PathStep::Part::Streaming ? queue_key(t)
          : step.part == PathStep::Part::Held
              ? result.resources.at(static_cast<std::size_t>(t.limit.resource)).key
              : "";
      auto& share = summary.limits[stretch_text(result, step.part, t)];
      share.ps += span;
      ++share.count;
      summary.stretches[static_cast<std::size_t>(step.part)].ps += span;
      ++summary.stretches[static_cast<std::size_t>(step.part)].count;
      if (step.part == PathStep::Part::Held)
        share.places.insert(result.resources.at(static_cast<std::size_t>(t.limit.resource)).place);
      if (!key.empty()) summary.keys[key].ps += span;
      if (step.rank * result.blocks_per_rank() + step.block == last_rank && step.ref == last_ref)
        continue;
      last_rank = step.rank * result.blocks_per_rank() + step.block;
      last_ref = step.ref;
      ++summary.transfers;
      if (t.op == TransferRecord::Op::RemoteLoad || t.op == TransferRecord::Op::RemoteStore) {
        ++summary.remote_transfers;
        ++summary.remote_limits[describe_limit(result, t)].count;
      }
    }
  }
  return summary;
}

// The part of the path a key's value sets, for keys that are no transfer rate.
struct KeyPart {
  const char* prefix;
  Kind kind;
};
constexpr KeyPart kKeyParts[] = {
    {"launch.offset_cycles", Kind::LaunchOffset},
    {"launch.setup_cycles", Kind::Setup},
    {"vector.", Kind::Reduce},
    {"sync.notify_", Kind::Notify},
    {"sync.pipe_barrier_cycles", Kind::Notify},
    {"sync.cache_flush_cycles", Kind::Notify},
    {"sync.poll_period_cycles", Kind::Wait},
    {"sync.cache_invalidate_cycles", Kind::Wait},
    {"sync.drain_cycles", Kind::Notify},
    {"sync.dsb_cycles", Kind::Notify},
};
constexpr const char* kRateKeys[] = {"link.bandwidth_GBps",        "nic.bandwidth_GBps",
                                     "cluster.oversubscription",   "cluster.spines",
                                     "superpod.bandwidth_GBps",    "gm.bandwidth_GBps",
                                     "dma.remote_bytes_per_cycle", "dma.mte2_bytes_per_cycle",
                                     "dma.mte3_bytes_per_cycle",   "dma.misaligned_rate_factor"};

// Keys of the latencies a transfer's path and a notify's flight pay.
constexpr const char* kLatencyKeys[] = {
    "link.latency_ns",           "switch.latency_ns",      "nic.latency_ns",
    "leaf.latency_ns",           "spine.latency_ns",       "superpod.tier1_latency_ns",
    "superpod.tier2_latency_ns", "gm.read_latency_cycles", "gm.write_latency_cycles"};
// Keys that shape the platform rather than time one part of the path.
constexpr const char* kShapeKeys[] = {"platform.clock_GHz",       "platform.devices",
                                      "platform.topology",        "platform.name",
                                      "ub.physical_bytes",        "ub.usable_bytes",
                                      "ub.alignment_bytes",       "vector.cores",
                                      "gm.capacity_GiB",          "dma.queues",
                                      "dma.burst_bytes",          "dma.full_rate_alignment",
                                      "dma.posted_stores",        "cluster.servers",
                                      "cluster.npus_per_server",  "cluster.wiring",
                                      "cluster.servers_per_leaf", "superpod.nodes",
                                      "superpod.npus_per_node",   "switch.forwarding",
                                      "sync.notify_acknowledged"};

bool listed(const std::string& key, const char* const* begin, const char* const* end) {
  return std::find(begin, end, key) != end;
}

std::string part_name(Kind kind) {
  return to_string(kind);
}

std::vector<std::string> key_notes(const RunResult& result, const PathSummary& summary) {
  std::vector<std::string> notes;
  const Topology topology = result.request.platform.topology;
  for (const std::string& key : result.request.overridden_keys) {
    if (!topology_reads(key, topology)) {
      notes.push_back(key + " is not used by " + to_string(topology) +
                      ": no path of this topology crosses what it sets");
      continue;
    }
    const bool multiplies = result.request.problem.op == ReduceOp::Prod;
    if ((key == "vector.startup_cycles" && multiplies) ||
        (key == "vector.mul_startup_cycles" && !multiplies)) {
      notes.push_back(key + " is not used by op " + to_string(result.request.problem.op) +
                      (multiplies ? ": a product's reduces start up by vector.mul_startup_cycles"
                                  : ": only prod's reduces multiply"));
      continue;
    }
    if (listed(key, std::begin(kLatencyKeys), std::end(kLatencyKeys))) {
      const PathSummary::Share& latency =
          summary.stretches[static_cast<std::size_t>(PathStep::Part::Latency)];
      const std::uint64_t flight = summary.parts[part_index(Kind::PeerWait)];
      notes.push_back(latency.ps + flight == 0
                          ? key +
                                " is not on the critical path: no transfer's latency and no "
                                "notify's flight is on it"
                          : key + " is on the critical path: it is part of the path latency of " +
                                std::to_string(latency.count) + " transfer stretches (" +
                                ns_text(latency.ps) +
                                " ns) and of the notifies' flight (waiting for a peer " +
                                ns_text(flight) + " ns)");
      continue;
    }
    if (key == "gm.atomic_ns" || key == "link.atomic_ns") {
      notes.push_back(key + " times the signal atomics, which the critical path meets in notify (" +
                      ns_text(summary.parts[part_index(Kind::Notify)]) +
                      " ns) and in the notifies' flight (waiting for a peer " +
                      ns_text(summary.parts[part_index(Kind::PeerWait)]) + " ns)");
      continue;
    }
    if (key == "dma.setup_cycles") {
      const PathSummary::Share& setup =
          summary.stretches[static_cast<std::size_t>(PathStep::Part::Setup)];
      notes.push_back(setup.ps == 0
                          ? key + " is not on the critical path: no DMA set-up is on it"
                          : key + " is on the critical path: DMA set-up " + ns_text(setup.ps) +
                                " ns, " + std::to_string(setup.count) + " transfers");
      continue;
    }
    if (listed(key, std::begin(kShapeKeys), std::end(kShapeKeys))) {
      notes.push_back(key +
                      " shapes the platform (devices, clock, queues, buffers or wiring): no one "
                      "part of the path is its; compare with a run without it");
      continue;
    }
    if (listed(key, std::begin(kRateKeys), std::end(kRateKeys))) {
      std::uint64_t bound_ps = 0;  // streaming at this rate, or held by a resource of it
      for (const auto& [limit_of, share] : summary.keys) {
        if (limit_of.find(key) != std::string::npos) bound_ps += share.ps;
      }
      const std::string share_text =
          ns_text(bound_ps) + " ns, " + percent_text(bound_ps, result.device_time_ps) + " %";
      if (bound_ps * 100 >= result.device_time_ps) {
        notes.push_back(key + " is limiting: the critical path streams at or is held by it for " +
                        share_text + " of the device time");
        continue;
      }
      std::string why;
      if (summary.remote_transfers > 0 && summary.remote_limits.size() == 1) {
        why = "every remote transfer on the critical path is bound by " +
              summary.remote_limits.begin()->first;
      } else if (summary.transfers == 0) {
        why = "no transfer is on the critical path";
      } else {
        why = "the critical path's transfer stretches are";
        const char* separator = " ";
        for (const auto& [limit_of, share] : summary.limits) {
          why += separator + limit_of + " (" + std::to_string(share.count) + ")";
          separator = ", ";
        }
      }
      notes.push_back(key + " is not limiting: " + why + " (it bounds " + share_text +
                      " of the critical path)");
      continue;
    }
    for (const KeyPart& part : kKeyParts) {
      if (key.rfind(part.prefix, 0) != 0) continue;
      const std::uint64_t ps = summary.parts[part_index(part.kind)];
      notes.push_back(ps == 0 ? key + " is not on the critical path: it spends no time in " +
                                    part_name(part.kind)
                              : key + " is on the critical path: " + part_name(part.kind) + " " +
                                    ns_text(ps) + " ns");
      break;
    }
  }
  return notes;
}

// Transfers of all ranks, per round: how many, and what bound them.
struct RoundLimits {
  int round;
  std::string phase;
  int transfers = 0;
  std::map<std::string, int> limits;
};

// What limit_class reads of a transfer, packed into one word: its limit after the tie rule, op
// and alignment. Counting by this, not by the text, keeps a string out of each of the millions
// of transfers a large run makes; words whose texts read alike add up under the text.
std::uint64_t limit_class_id(const RunResult& result, const TransferRecord& t) {
  const TransferLimit limit = effective_limit(result, t);
  return static_cast<std::uint64_t>(limit.kind) << 40 |
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(limit.resource)) << 8 |
         static_cast<std::uint64_t>(t.op) << 1 | static_cast<std::uint64_t>(t.misaligned);
}

std::vector<RoundLimits> round_limits(const RunResult& result) {
  // A round's transfers by class: one transfer of the class (to write its text) and how many.
  struct Class {
    std::uint64_t id;
    TransferRecord example;
    int count;
  };
  struct Round {
    int transfers = 0;
    std::vector<Class> classes;  // a handful: linear search beats a map
  };
  // By round and phase: ranks that number their rounds alike may be in different phases at
  // once (rhd's fold ranks hand back while the others are in their reduce-scatter).
  std::map<std::pair<int, std::string>, Round> rounds;
  for (const RankStats& s : result.units()) {
    auto entry = rounds.end();
    for (const TransferRecord t : s.transfer_records) {
      // A rank's transfers come round by round: the round's entry is most often the last one.
      if (entry == rounds.end() || entry->first.first != t.round)
        entry = rounds.try_emplace({t.round, phase_of(result, s.rank, t.round)}).first;
      Round& round = entry->second;
      ++round.transfers;
      const std::uint64_t id = limit_class_id(result, t);
      auto found = std::find_if(round.classes.begin(), round.classes.end(),
                                [&](const Class& c) { return c.id == id; });
      if (found == round.classes.end()) {
        round.classes.push_back({id, t, 1});
      } else {
        ++found->count;
      }
    }
  }
  std::vector<RoundLimits> out;
  for (auto& [key, round] : rounds) {
    RoundLimits limits{key.first, key.second, round.transfers, {}};
    for (const Class& c : round.classes) limits.limits[limit_class(result, c.example)] += c.count;
    out.push_back(std::move(limits));
  }
  return out;
}

std::string limits_text(const std::map<std::string, int>& limits) {
  std::string text;
  for (const auto& [limit_of, count] : limits) {
    text += (text.empty() ? "" : ", ") + limit_of + " x" + std::to_string(count);
  }
  return text;
}

std::string step_detail(const RunResult& result, const PathStep& step) {
  const RankStats& s = unit(result, step.rank, step.block);
  switch (step.kind) {
    case Kind::Transfer: {
      const TransferRecord t = s.transfer_records[static_cast<std::size_t>(step.ref)];
      return transfer_name(t) + ", " + std::to_string(t.bytes) + " B, bound by " +
             describe_limit(result, t);
    }
    case Kind::PeerWait:
      return who(result, step.peer, step.peer_block) + "'s notify (its round " +
             std::to_string(step.peer_round) + ", " + phase_of(result, step.peer, step.peer_round) +
             ") in flight until " + who(result, step.rank, step.block) + " saw it";
    default:
      return "";
  }
}

// One line of the step-by-step list (with its transfers under it): a hand-off between ranks,
// or the consecutive steps of one rank and round.
struct PathItem {
  std::uint64_t start_ps;
  std::uint64_t end_ps;
  std::string head;  // after the time span
  std::vector<std::string> details;
  std::string where;  // "rank 3 round 1 (RS)", "rank 2's notify to rank 3 round 1 (RS)"
  std::string shape;  // the duration and the text with every rank, block, round and device masked
};

// The text with the number after each word "rank ", "block ", "round " and "dev" as '#'.
std::string masked(const std::string& text) {
  static const std::string kNumbered[] = {"rank ", "block ", "round ", "dev"};
  const auto digit = [&](std::size_t at) {
    return at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]));
  };
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const bool word_start =
        at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    const std::string* word = nullptr;
    for (const std::string& w : kNumbered) {
      if (word_start && text.compare(at, w.size(), w) == 0 && digit(at + w.size())) word = &w;
    }
    if (word == nullptr) {
      out += text[at++];
      continue;
    }
    out += *word + '#';
    for (at += word->size(); digit(at);) ++at;
  }
  return out;
}

std::vector<PathItem> path_items(const RunResult& result, const CriticalPath& path) {
  std::vector<PathItem> items;
  std::size_t i = 0;
  while (i < path.steps.size()) {
    const PathStep& first = path.steps[i];
    PathItem item;
    item.start_ps = first.start_ps;
    item.where = who(result, first.rank, first.block) + " round " + std::to_string(first.round) +
                 " (" + phase_of(result, first.rank, first.round) + ")";
    std::size_t j = i;
    std::uint64_t parts[std::size(kParts)] = {};
    while (j < path.steps.size() && path.steps[j].rank == first.rank &&
           path.steps[j].block == first.block && path.steps[j].round == first.round &&
           path.steps[j].kind != Kind::PeerWait &&
           (j == i || path.steps[j].kind != Kind::LaunchOffset)) {
      parts[part_index(path.steps[j].kind)] += path.steps[j].end_ps - path.steps[j].start_ps;
      if (path.steps[j].kind == Kind::Transfer) {
        const std::string detail = step_detail(result, path.steps[j]);
        if (std::find(item.details.begin(), item.details.end(), detail) == item.details.end())
          item.details.push_back(detail);
      }
      ++j;
    }
    if (j == i) {  // a hand-off between ranks
      item.where = who(result, first.peer, first.peer_block) + "'s notify to " + item.where;
      item.end_ps = first.end_ps;
      item.head = "waiting for a peer: " + step_detail(result, first) + " (round " +
                  std::to_string(first.round) + ", " + phase_of(result, first.rank, first.round) +
                  ")";
      ++j;
    } else {
      item.end_ps = path.steps[j - 1].end_ps;
      item.head = item.where + ":";
      for (const Kind kind : kParts) {
        const std::uint64_t ps = parts[part_index(kind)];
        if (ps > 0) item.head += std::string(" ") + to_string(kind) + " " + ns_text(ps);
      }
    }
    item.shape = std::to_string(item.end_ps - item.start_ps) + " " + masked(item.head);
    for (const std::string& detail : item.details) item.shape += "\n" + masked(detail);
    items.push_back(std::move(item));
    i = j;
  }
  return items;
}

// The items from `at` on repeat the first `period` of them `more` times over.
struct Repeat {
  std::size_t period = 0;
  std::size_t more = 0;
};

// The repeat from `at` that covers the most items (the shortest period on a tie); a repeat
// must save lines, so it needs two more times at least. Periods up to four items: a ring's
// round on the path is a hand-off and the next rank's round.
Repeat longest_repeat(const std::vector<PathItem>& items, std::size_t at) {
  constexpr std::size_t kLongestPeriod = 4;
  Repeat best;
  for (std::size_t period = 1; period <= kLongestPeriod; ++period) {
    std::size_t more = 0;
    const auto alike = [&](std::size_t time) {
      const std::size_t from = at + time * period;
      if (from + period > items.size()) return false;
      for (std::size_t k = 0; k < period; ++k) {
        if (items[from + k].shape != items[at + k].shape) return false;
      }
      return true;
    };
    while (alike(more + 1)) ++more;
    if (more >= 2 && period * (more + 1) > best.period * (best.more + 1)) best = {period, more};
  }
  return best;
}

}  // namespace

const char* to_string(PathStep::Kind kind) {
  switch (kind) {
    case Kind::LaunchOffset:
      return "launch offset";
    case Kind::Setup:
      return "set-up";
    case Kind::Transfer:
      return "transfer";
    case Kind::Reduce:
      return "reduce";
    case Kind::Notify:
      return "notify";
    case Kind::Wait:
      return "wait";
    case Kind::PeerWait:
      return "waiting for a peer";
    case Kind::Unattributed:
      return "unattributed";
  }
  return "";
}

const char* to_string(PathStep::Part part) {
  switch (part) {
    case PathStep::Part::QueueWait:
      return "waiting for the DMA queue";
    case PathStep::Part::Setup:
      return "DMA set-up";
    case PathStep::Part::Streaming:
      return "streaming";
    case PathStep::Part::Held:
      return "held";
    case PathStep::Part::Latency:
      return "path latency";
  }
  return "";
}

std::string transfer_name(const TransferRecord& t) {
  switch (t.op) {
    case TransferRecord::Op::Load:
      return "load";
    case TransferRecord::Op::Store:
      return "store";
    case TransferRecord::Op::RemoteLoad:
      return "pull from rank " + std::to_string(t.peer);
    case TransferRecord::Op::RemoteStore:
      return "push to rank " + std::to_string(t.peer);
  }
  return "transfer";
}

std::string limit_key(const RunResult& result, const TransferRecord& t) {
  const TransferLimit limit = effective_limit(result, t);
  if (limit.kind != TransferLimit::Kind::QueueRate)
    return result.resources.at(static_cast<std::size_t>(limit.resource)).key;
  return queue_key(t);
}

std::string describe_limit(const RunResult& result, const TransferRecord& t) {
  const TransferLimit limit = effective_limit(result, t);
  if (limit.kind == TransferLimit::Kind::QueueRate) return queue_key(t) + " on the DMA queue";
  return resource_text(result, limit);
}

TransferRecord transfer_of(const RunResult& result, const PathStep& step) {
  return unit(result, step.rank, step.block).transfer_records[static_cast<std::size_t>(step.ref)];
}

namespace {

// The transfer the queue ran just before transfer `ticket`, if that one waited for it. A
// rank's queues take its transfers in ticket order, so it is the latest earlier ticket on the
// same queue, and the queue took `x` the moment that one's last burst left.
std::optional<std::size_t> queue_predecessor(const RankStats& s, std::size_t ticket,
                                             const TransferRecord& x) {
  if (x.start_ps <= x.submit_ps) return std::nullopt;
  for (std::size_t i = ticket; i-- > 0;) {
    const TransferRecord before = s.transfer_records[i];
    if (before.queue != x.queue) continue;
    if (before.left_ps == x.start_ps) return i;
    break;
  }
  return std::nullopt;
}

}  // namespace

CriticalPath critical_path(const RunResult& result) {
  CriticalPath path;
  // With core_num > 1 the path walks blocks: index rank * blocks + block.
  const auto& ranks = result.units();
  const int blocks = result.blocks_per_rank();
  if (!result.completed || ranks.empty()) return path;
  std::uint64_t first_start = UINT64_MAX;
  int rank = 0;
  int block = 0;
  std::size_t last = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    first_start = std::min(first_start, ranks[r].start_ps);
    if (ranks[r].finish_ps > ranks[last].finish_ps) last = r;
  }
  rank = static_cast<int>(last) / blocks;
  block = static_cast<int>(last) % blocks;
  path.end_rank = rank;
  path.end_block = block;
  path.device_time_ps = ranks[last].finish_ps - first_start;

  // Walk back from the last finish. On a rank, the span before the current time; a wait that
  // a peer's notify released hands the path to that peer at the moment the notify left it.
  // Each rank's cursor only moves back, so every span is visited at most once.
  std::vector<std::size_t> cursor;
  for (const RankStats& s : ranks) cursor.push_back(s.spans.size());
  std::vector<RoundCursor> span_rounds(ranks.size());  // each rank's spans, read walking back
  std::vector<PathStep> back;
  const auto push = [&](PathStep step) {
    step.block = block;
    back.push_back(step);
  };
  auto add = [&](Kind kind, int round, std::uint64_t start, std::uint64_t end, int ref = -1) {
    if (end > start) push({kind, rank, round, start, end, ref});
  };
  std::uint64_t t = ranks[last].finish_ps;
  for (;;) {
    const auto index = static_cast<std::size_t>(rank * blocks + block);
    const RankStats& s = ranks[index];
    std::size_t& i = cursor[index];
    RoundCursor& span_round = span_rounds[index];
    while (i > 0 && s.spans.read(i - 1, span_round).start_ps >= t) --i;
    if (i == 0) {
      add(Kind::Unattributed, -1, s.start_ps, t);
      add(Kind::LaunchOffset, -1, first_start, s.start_ps);
      break;
    }
    const CoreSpan span = s.spans.read(--i, span_round);
    const std::uint64_t end = std::min(span.end_ps, t);
    add(Kind::Unattributed, span.round, end, t);
    t = span.start_ps;
    switch (span.kind) {
      case CoreSpan::Kind::Setup:
        add(Kind::Setup, span.round, span.start_ps, end);
        break;
      case CoreSpan::Kind::Transfer: {
        // Its landing is what the core waited for, so the path follows the transfer back, as a
        // released wait follows its notify, and what the core did meanwhile (an earlier pull's
        // reduce, say) ran beside it, off the path. A transfer that waited for its queue follows
        // on to the transfer the queue ran before it, up to that one's last burst leaving: a pull
        // queued behind its rank's earlier pulls waits out their streaming, not their latency.
        // Stretches, latest first: latency and held (the awaited transfer's), then streaming and
        // set-up of each transfer the queue ran, then the wait for the queue.
        TransferRecord x = s.transfer_records[span.ref];
        std::size_t ref = span.ref;
        int round = span.round;
        std::uint64_t upto = end;
        const auto stretch = [&](PathStep::Part part, std::uint64_t from) {
          if (upto <= from) return;
          push({Kind::Transfer, rank, round, from, upto, static_cast<int>(ref), -1, -1, part});
          upto = from;
        };
        const std::uint64_t landed_from = x.finish_ps - x.latency_ps;
        stretch(PathStep::Part::Latency, landed_from);
        stretch(PathStep::Part::Held, landed_from - x.held_ps);
        for (;;) {
          stretch(PathStep::Part::Streaming, x.start_ps + result.dma_setup_ps);
          stretch(PathStep::Part::Setup, x.start_ps);
          const std::optional<std::size_t> before = queue_predecessor(s, ref, x);
          if (!before || upto <= x.submit_ps) break;
          ref = *before;
          x = s.transfer_records[ref];
          round = x.round >= 0 ? x.round : round;
        }
        stretch(PathStep::Part::QueueWait, x.submit_ps);
        add(Kind::Unattributed, span.round, span.start_ps, upto);
        t = std::min(upto, span.start_ps);
        break;
      }
      case CoreSpan::Kind::Reduce:
        add(Kind::Reduce, span.round, span.start_ps, end);
        break;
      case CoreSpan::Kind::Notify:
        add(Kind::Notify, span.round, span.start_ps, end, static_cast<int>(span.ref));
        break;
      case CoreSpan::Kind::Wait: {
        const WaitLink& w = s.wait_links[span.ref];
        if (!w.blocked || w.released_by.rank < 0) {
          add(Kind::Wait, span.round, span.start_ps, end, static_cast<int>(span.ref));
          break;
        }
        const NotifyLink& n =
            ranks[static_cast<std::size_t>(w.released_by.rank * blocks + w.released_by.block)]
                .notify_links[w.released_by.index];
        add(Kind::Wait, span.round, std::min(w.seen_ps, end), end, static_cast<int>(span.ref));
        if (std::min(w.seen_ps, end) > n.issued_ps) {
          PathStep step{Kind::PeerWait,
                        rank,
                        span.round,
                        n.issued_ps,
                        std::min(w.seen_ps, end),
                        static_cast<int>(span.ref),
                        w.released_by.rank,
                        n.round};
          step.peer_block = w.released_by.block;
          push(step);
        }
        rank = w.released_by.rank;
        block = w.released_by.block;
        t = n.issued_ps;
        break;
      }
    }
  }
  path.steps.assign(back.rbegin(), back.rend());
  return path;
}

// The critical path's wait for peers, per (peer, its round). A path through a thousand-rank
// ring waits on hundreds of them: the longest few are shown, in rank order, and the rest summed
// in one line.
void print_peer_waits(std::ostream& out, const RunResult& result, const PathSummary& summary) {
  using PeerWait = std::pair<std::pair<int, int>, std::uint64_t>;
  constexpr std::size_t kShownWaits = 8;
  char line[256];
  std::vector<PeerWait> waits;
  for (const auto& [peer, share] : summary.peers) waits.push_back({peer, share.ps});
  std::vector<PeerWait> shown = waits;
  if (shown.size() > kShownWaits) {
    std::stable_sort(shown.begin(), shown.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    shown.resize(kShownWaits);
    std::sort(shown.begin(), shown.end());
  }
  for (const auto& [peer, ps_waited] : shown) {
    std::snprintf(line, sizeof line, "    %16s ns  for rank %d (its round %d, %s)\n",
                  ns_text(ps_waited).c_str(), peer.first, peer.second,
                  phase_of(result, peer.first, peer.second).c_str());
    out << line;
  }
  if (shown.size() < waits.size()) {
    std::uint64_t rest_ps = 0;
    std::set<int> rest_ranks;
    for (const auto& wait : waits) {
      if (std::binary_search(shown.begin(), shown.end(), wait)) continue;
      rest_ps += wait.second;
      rest_ranks.insert(wait.first.first);
    }
    std::snprintf(line, sizeof line,
                  "    %16s ns  for %zu more rounds of %zu ranks (the %zu longest are above; "
                  "--json lists every one)\n",
                  ns_text(rest_ps).c_str(), waits.size() - shown.size(), rest_ranks.size(),
                  shown.size());
    out << line;
  }
}

// What bounds the transfers of every round, all ranks together.
void print_round_limits(std::ostream& out, const RunResult& result) {
  const std::vector<RoundLimits> rounds = round_limits(result);
  if (rounds.empty()) return;
  char line[256];
  // Consecutive rounds whose transfers are bound alike share a row ("4-256"): at thousands
  // of ranks a ring's rounds are mostly alike, and a row each would bury the ones that differ.
  struct Row {
    std::string rounds;
    const RoundLimits* first;
  };
  std::vector<Row> rows;
  // With --repeat, the calls' rounds bound alike share a row for each round of a call.
  const std::size_t calls = static_cast<std::size_t>(result.request.problem.repeat);
  const std::size_t per_call = result.ranks.front().round_count() / calls;
  const std::size_t per_row = rounds.size() / calls;  // a call's entries
  bool calls_alike =
      calls > 1 && result.ranks.front().round_count() % calls == 0 && rounds.size() % calls == 0;
  // Each entry is the one a call before, a call's rounds later, bound alike.
  for (std::size_t k = per_row; calls_alike && k < rounds.size(); ++k) {
    const RoundLimits& before = rounds[k - per_row];
    calls_alike = static_cast<std::size_t>(rounds[k].round) ==
                      static_cast<std::size_t>(before.round) + per_call &&
                  rounds[k].phase == before.phase && rounds[k].transfers == before.transfers &&
                  rounds[k].limits == before.limits;
  }
  for (std::size_t i = 0; calls_alike && i < per_row; ++i) {
    rows.push_back({std::to_string(rounds[i].round) + ".." +
                        std::to_string(rounds[i].round + (calls - 1) * per_call) + " by " +
                        std::to_string(per_call),
                    &rounds[i]});
  }
  for (std::size_t i = 0; !calls_alike && i < rounds.size();) {
    std::size_t j = i + 1;
    while (j < rounds.size() && rounds[j].round == rounds[j - 1].round + 1 &&
           rounds[j].phase == rounds[i].phase && rounds[j].transfers == rounds[i].transfers &&
           rounds[j].limits == rounds[i].limits) {
      ++j;
    }
    std::string label = std::to_string(rounds[i].round);
    if (j - i > 1) label += "-" + std::to_string(rounds[j - 1].round);
    rows.push_back({label, &rounds[i]});
    i = j;
  }
  // The columns are as wide as the longest round range and phase name, so none shifts them.
  int round_width = 5;
  int width = 12;
  for (const Row& row : rows) {
    round_width = std::max(round_width, static_cast<int>(row.rounds.size()));
    width = std::max(width, static_cast<int>(row.first->phase.size()));
  }
  std::snprintf(line, sizeof line, "%*s  %-*s  transfers  bound by\n", round_width, "round", width,
                "phase");
  out << "\nwhat bounds the transfers, per round (all ranks; "
      << (calls_alike ? "each round of a call shares a row with that round of every call, "
                        "bound alike; transfers counted per round of one call"
                      : "alike consecutive rounds share a row, transfers counted per round")
      << "):\n"
      << line;
  for (const Row& row : rows) {
    std::snprintf(line, sizeof line, "%*s  %-*s %10d  ", round_width, row.rounds.c_str(), width,
                  row.first->phase.c_str(), row.first->transfers);
    out << line << limits_text(row.first->limits) << "\n";
  }
}

void print_explanation(std::ostream& out, const RunResult& result) {
  const CriticalPath path = critical_path(result);
  if (path.steps.empty()) return;
  const PathSummary summary = summarise(result, path);
  const std::uint64_t total = path.device_time_ps;
  char line[256];
  out << "\ncritical path: " << ns_text(total) << " ns, ends on "
      << who(result, path.end_rank, path.end_block) << " (--explain prints it step by step)\n";
  for (const Kind kind : kParts) {
    const std::uint64_t ps = summary.parts[part_index(kind)];
    if (kind == Kind::Unattributed && ps == 0) continue;
    std::snprintf(line, sizeof line, "  %-20s %16s ns %7s %%\n", to_string(kind),
                  ns_text(ps).c_str(), percent_text(ps, total).c_str());
    out << line;
    if (kind == Kind::Transfer) {
      for (const auto& [stretch, share] : summary.limits) {
        std::snprintf(line, sizeof line, "    %16s ns  %s, %d step%s", ns_text(share.ps).c_str(),
                      stretch.c_str(), share.count, share.count == 1 ? "" : "s");
        out << line << places_text(share.places) << "\n";
      }
    }
    if (kind == Kind::PeerWait) print_peer_waits(out, result, summary);
  }
  out << "  by the phase of its rounds:\n";
  for (const auto& [phase, ps] : summary.phases) {
    std::snprintf(line, sizeof line, "    %-18s %16s ns %7s %%\n", phase.c_str(),
                  ns_text(ps).c_str(), percent_text(ps, total).c_str());
    out << line;
  }
  print_round_limits(out, result);
  const std::vector<std::string> notes = key_notes(result, summary);
  if (!notes.empty()) {
    out << "\noverridden keys:\n";
    for (const std::string& note : notes) out << "  " << note << "\n";
  }
  out << "\n";
}

void print_critical_path_steps(std::ostream& out, const RunResult& result, int ranks_shown) {
  const CriticalPath path = critical_path(result);
  if (path.steps.empty()) return;
  const std::vector<PathItem> items = path_items(result, path);
  const bool grouped =
      ranks_shown > 0 && result.ranks.size() > static_cast<std::size_t>(ranks_shown);
  out << "\ncritical path, step by step (ns from the first rank's start; consecutive steps of "
         "one rank and round grouped"
      << (grouped ? "; past --ranks-shown ranks, steps that repeat alike but for their ranks, "
                    "rounds and devices share a line"
                  : "")
      << "):\n";
  const std::uint64_t origin = path.steps.front().start_ps;
  const auto print_item = [&](const PathItem& item) {
    out << "  " << ns_text(item.start_ps - origin) << " - " << ns_text(item.end_ps - origin) << "  "
        << item.head << "\n";
    for (const std::string& detail : item.details) out << "      " << detail << "\n";
  };
  std::size_t i = 0;
  while (i < items.size()) {
    const Repeat repeat = grouped ? longest_repeat(items, i) : Repeat{};
    const std::size_t unit = std::max<std::size_t>(repeat.period, 1);
    for (std::size_t k = i; k < i + unit; ++k) print_item(items[k]);
    if (repeat.more > 0) {
      const PathItem& first = items[i + unit];
      const PathItem& last = items[i + unit * (repeat.more + 1) - 1];
      out << "  " << ns_text(first.start_ps - origin) << " - " << ns_text(last.end_ps - origin)
          << "  " << repeat.more << " more times the " << unit << (unit == 1 ? " step" : " steps")
          << " above, alike but for ranks, rounds and devices, "
          << ns_text(last.end_ps - items[i + unit * repeat.more].start_ps) << " ns each, through "
          << last.where << "\n";
    }
    i += unit * (repeat.more + 1);
  }
  out << "\n";
}

void add_explanation(nlohmann::ordered_json& json, const RunResult& result) {
  using nlohmann::ordered_json;
  const CriticalPath path = critical_path(result);
  if (path.steps.empty()) return;
  const PathSummary summary = summarise(result, path);
  ordered_json& cp = json["critical_path"];
  cp["device_time_ps"] = path.device_time_ps;
  cp["end_rank"] = path.end_rank;
  if (result.blocks_per_rank() > 1) cp["end_block"] = path.end_block;
  cp["parts"] = ordered_json::array();
  for (const Kind kind : kParts) {
    const std::uint64_t ps = summary.parts[part_index(kind)];
    cp["parts"].push_back({{"part", to_string(kind)},
                           {"ps", ps},
                           {"percent", std::stod(percent_text(ps, path.device_time_ps))}});
  }
  cp["phases"] = ordered_json::array();
  for (const auto& [phase, ps] : summary.phases) {
    cp["phases"].push_back({{"phase", phase},
                            {"ps", ps},
                            {"percent", std::stod(percent_text(ps, path.device_time_ps))}});
  }
  cp["transfer"] = ordered_json::array();
  for (const auto& [limit_of, share] : summary.limits)
    cp["transfer"].push_back({{"stretch", limit_of},
                              {"ps", share.ps},
                              {"steps", share.count},
                              {"places", share.places}});
  cp["waiting_for"] = ordered_json::array();
  for (const auto& [peer, share] : summary.peers) {
    cp["waiting_for"].push_back({{"peer", peer.first},
                                 {"round", peer.second},
                                 {"phase", phase_of(result, peer.first, peer.second)},
                                 {"ps", share.ps}});
  }
  cp["steps"] = ordered_json::array();
  for (const PathStep& step : path.steps) {
    ordered_json s = {{"kind", to_string(step.kind)},
                      {"rank", step.rank},
                      {"round", step.round},
                      {"start_ps", step.start_ps},
                      {"end_ps", step.end_ps}};
    if (result.blocks_per_rank() > 1) s["block"] = step.block;
    if (step.kind == Kind::PeerWait) {
      s["peer"] = step.peer;
      s["peer_round"] = step.peer_round;
      if (result.blocks_per_rank() > 1) s["peer_block"] = step.peer_block;
    }
    if (step.kind == Kind::Transfer) {
      const TransferRecord t = transfer_of(result, step);
      s["part"] = to_string(step.part);
      s["limit"] = describe_limit(result, t);
    }
    cp["steps"].push_back(s);
  }
  json["transfer_limits"] = ordered_json::array();
  for (const RoundLimits& r : round_limits(result)) {
    ordered_json limits = ordered_json::object();
    for (const auto& [limit_of, count] : r.limits) limits[limit_of] = count;
    json["transfer_limits"].push_back(
        {{"round", r.round}, {"phase", r.phase}, {"transfers", r.transfers}, {"bound_by", limits}});
  }
  json["key_notes"] = key_notes(result, summary);
}

}  // namespace ars
