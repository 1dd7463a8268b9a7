#include "sim/outputs/report.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kernels/registry.h"
#include "sim/outputs/critical_path.h"

namespace ars {

namespace {

double ps_to_ns(std::uint64_t ps) {
  return static_cast<double>(ps) / 1000.0;
}

// A value right-aligned in a column `width` wide, formatted as `format` formats: one too wide
// for its column gets a space before it, so that it shifts the rest of its row rather than
// running into the value on its left.
template <typename T>
std::string cell(const std::ostream& format, int width, const T& value) {
  std::ostringstream text;
  text.copyfmt(format);
  text.width(0);
  text << value;
  const std::string s = text.str();
  if (s.size() >= static_cast<std::size_t>(width)) return " " + s;
  return std::string(static_cast<std::size_t>(width) - s.size(), ' ') + s;
}

// "R" for a rank, "R.B" for block B of rank R when the run has blocks.
std::string owner_label(const RunResult& result, const RankStats& s) {
  return std::to_string(s.rank) + (result.blocks.empty() ? "" : "." + std::to_string(s.block));
}

void print_blocks(std::ostream& out, const RunResult& result) {
  out << "\nrank  block  remote_read_B  notifies  waits  polls  ub_peak_B   start_ns       "
         "finish_ns\n";
  for (const RankStats& s : result.blocks) {
    out << std::setw(4) << s.rank << cell(out, 7, s.block) << cell(out, 15, s.remote_read_bytes)
        << cell(out, 10, s.notifies) << cell(out, 7, s.waits) << cell(out, 7, s.polls)
        << cell(out, 11, s.ub_peak_bytes) << cell(out, 11, ps_to_ns(s.start_ps))
        << cell(out, 16, s.finished ? ps_to_ns(s.finish_ps) : 0.0)
        << (s.finished ? "" : "  (blocked)") << "\n";
  }
}

// One line per synchronisation instruction the codegen emitted in a round, for the first
// `shown` ranks (or blocks) as in the round table.
void print_sync(std::ostream& out, const RunResult& result, std::size_t shown) {
  out << "\nsync instructions (codegen " << result.request.platform.codegen.name << ")\n"
      << "rank  round  instruction       count        time_ns\n";
  const std::vector<RankStats>& owners = result.units();
  for (std::size_t owner = 0; owner < shown && owner < owners.size(); ++owner) {
    const RankStats& s = owners[owner];
    for (std::size_t i = 0; i < s.sync.size() && i < s.rounds.size(); ++i) {
      for (int k = 0; k < kSyncInstructions; ++k) {
        const SyncCost& cost = s.sync[i][static_cast<std::size_t>(k)];
        if (cost.count == 0) continue;
        out << std::setw(4) << owner_label(result, s) << std::setw(7) << s.rounds[i].round << "  "
            << std::left << std::setw(14) << to_string(static_cast<SyncInstruction>(k))
            << std::right << cell(out, 9, cost.count) << cell(out, 15, ps_to_ns(cost.ps)) << "\n";
      }
    }
  }
}

}  // namespace

// nccl-tests' definitions: algbw = bytes per rank / the time of one call; busbw = algbw x
// 2(P-1)/P for an allreduce (every rank sends and receives 2(P-1)/P of its vector on an ideal
// ring). With --repeat N the device time spans N calls.
double algbw_GBps(const RunResult& result) {
  const Problem& p = result.request.problem;
  return result.device_time_ps == 0 ? 0.0
                                    : static_cast<double>(p.bytes()) * p.repeat * 1000.0 /
                                          static_cast<double>(result.device_time_ps);
}

double busbw_GBps(const RunResult& result) {
  const double p = result.request.problem.ranks;
  return algbw_GBps(result) * 2.0 * (p - 1.0) / p;
}

namespace {

// Whether rank b, the next rank on the next device, did exactly what rank a did.
// With `timing_too`, the polls and the finish must match as well; without, only what the
// protocol fixes (bytes, notifies, waits, buffer, start) must.
bool alike_ranks(const RankStats& a, const RankStats& b, bool timing_too = true) {
  return b.rank == a.rank + 1 && b.device == a.device + 1 &&
         a.remote_read_bytes == b.remote_read_bytes &&
         a.remote_write_bytes == b.remote_write_bytes && a.notifies == b.notifies &&
         a.waits == b.waits && a.ub_peak_bytes == b.ub_peak_bytes && a.start_ps == b.start_ps &&
         a.finished == b.finished &&
         (!timing_too || (a.polls == b.polls && (!a.finished || a.finish_ps == b.finish_ps)));
}

// Past this many rows, ranks that differ only in their polls and finish share a row too.
constexpr std::size_t kRankRows = 32;

std::string span_label(int first, int last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

// One row per rank; with more ranks than the tables show one by one (--ranks-shown),
// consecutive ranks on consecutive devices that did exactly alike share a row: a 1024-rank
// ring's table is one row, and the ranks that differ stand out.
void print_ranks(std::ostream& out, const RunResult& result, const ReportOptions& options) {
  const std::vector<RankStats>& ranks = result.ranks;
  const bool grouped =
      options.ranks_shown > 0 && ranks.size() > static_cast<std::size_t>(options.ranks_shown);
  struct Row {
    std::size_t first;
    std::size_t last;
  };
  std::vector<Row> rows;
  const auto fold = [&](bool timing_too) {
    rows.clear();
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (grouped && !rows.empty() && alike_ranks(ranks[rows.back().last], ranks[i], timing_too)) {
        rows.back().last = i;
      } else {
        rows.push_back({i, i});
      }
    }
  };
  fold(true);
  // Polls and finish differ where ranks drift apart (a cluster's ring), leaving rows of one or
  // two ranks: past kRankRows a row then stands for ranks alike but for those two, and shows
  // their means and ranges.
  const bool ranged = grouped && rows.size() > kRankRows;
  if (ranged) fold(false);
  const auto rank_label = [&](const Row& row) {
    return span_label(ranks[row.first].rank, ranks[row.last].rank);
  };
  const auto device_label = [&](const Row& row) {
    return span_label(ranks[row.first].device, ranks[row.last].device);
  };
  std::size_t rank_width = 4;
  std::size_t device_width = 6;
  for (const Row& row : rows) {
    rank_width = std::max(rank_width, rank_label(row).size());
    device_width = std::max(device_width, device_label(row).size());
  }
  out << std::setw(static_cast<int>(rank_width)) << "rank"
      << std::setw(static_cast<int>(device_width + 2)) << "device"
      << "  remote_read_B  remote_write_B  notifies  waits  polls  ub_peak_B   start_ns       "
         "finish_ns\n";
  for (const Row& row : rows) {
    const RankStats& s = ranks[row.first];
    // Means over the row's ranks, and where polls or finish differ, their range and the
    // ranks at its ends (the last to finish sets the device time).
    std::uint64_t polls = 0, finish_ps = 0;
    std::size_t fewest = row.first, most = row.first, earliest = row.first, latest = row.first;
    for (std::size_t i = row.first; i <= row.last; ++i) {
      polls += ranks[i].polls;
      finish_ps += ranks[i].finish_ps;
      if (ranks[i].polls < ranks[fewest].polls) fewest = i;
      if (ranks[i].polls > ranks[most].polls) most = i;
      if (ranks[i].finish_ps < ranks[earliest].finish_ps) earliest = i;
      if (ranks[i].finish_ps > ranks[latest].finish_ps) latest = i;
    }
    const std::uint64_t n = row.last - row.first + 1;
    out << std::setw(static_cast<int>(rank_width)) << rank_label(row)
        << std::setw(static_cast<int>(device_width + 2)) << device_label(row)
        << cell(out, 15, s.remote_read_bytes) << cell(out, 16, s.remote_write_bytes)
        << cell(out, 10, s.notifies) << cell(out, 7, s.waits) << cell(out, 7, (polls + n / 2) / n)
        << cell(out, 11, s.ub_peak_bytes) << cell(out, 11, ps_to_ns(s.start_ps))
        << cell(out, 16, s.finished ? ps_to_ns((finish_ps + n / 2) / n) : 0.0)
        << (s.finished ? "" : "  (blocked)") << "\n";
    if (fewest != most || earliest != latest) {
      const auto at = [&](std::size_t i) {
        return " (rank " + std::to_string(ranks[i].rank) + ")";
      };
      out << std::string(rank_width + device_width + 2, ' ') << "  (means of " << n
          << " ranks; polls " << ranks[fewest].polls << at(fewest) << " to " << ranks[most].polls
          << at(most) << ", finish_ns " << ps_to_ns(ranks[earliest].finish_ps) << at(earliest)
          << " to " << ps_to_ns(ranks[latest].finish_ps) << at(latest) << ")\n";
    }
  }
  if (rows.size() < ranks.size()) {
    out << "(" << ranks.size() << " ranks in " << rows.size()
        << (rows.size() == 1 ? " row" : " rows") << ": alike consecutive ranks share one"
        << (ranged ? " (past " + std::to_string(kRankRows) +
                         " rows, ranks alike but for polls and finish, shown as their means)"
                   : "")
        << "; --ranks-shown all lists every rank)\n";
  }
}

// A row of the round table: rounds[first..last] of one owner (a rank, or a block).
struct RoundRow {
  std::size_t owner;  // in RunResult::units()
  std::size_t first;
  std::size_t last;
  bool means = false;      // a phase's rounds, their figures averaged (see kRowsPerRank)
  std::size_t stride = 1;  // with means: every stride-th round from first (one of each call)
};

// Past this many rows for one rank (its rounds not alike enough to share rows, as where the
// barrier waits alternate), the rank's rounds share one row per phase, of their means.
constexpr std::size_t kRowsPerRank = 32;

// The rows of one rank's rounds, phase by phase, each of the phase's means.
void phase_rows(const std::vector<RoundRecord>& rounds, std::size_t owner,
                std::vector<RoundRow>& rows) {
  for (std::size_t k = 0; k < rounds.size(); ++k) {
    if (k > 0 && rounds[k].phase == rounds[rows.back().first].phase &&
        rounds[k].round == rounds[k - 1].round + 1) {
      rows.back().last = k;
    } else {
      rows.push_back({owner, k, k, true});
    }
  }
}

// The rows of one rank's rounds over --repeat's calls: a row for each round of a call, of the
// means over every call; false when the calls' rounds do not line up so (the rows are left).
bool call_rows(const std::vector<RoundRecord>& rounds, std::size_t calls, std::size_t owner,
               std::vector<RoundRow>& rows) {
  if (calls < 2 || rounds.size() % calls != 0) return false;
  const std::size_t per_call = rounds.size() / calls;
  for (std::size_t k = per_call; k < rounds.size(); ++k) {
    if (!(rounds[k].phase == rounds[k - per_call].phase)) return false;
  }
  for (std::size_t j = 0; j < per_call; ++j)
    rows.push_back({owner, j, j + (calls - 1) * per_call, true, per_call});
  return true;
}

// Whether round k of a rank continues the row of its alike rounds: the same phase and
// figures as the row's first round, and its start as far after the previous round's as the
// second round of the row started after the first.
bool alike_rounds(const std::vector<RoundRecord>& rounds, const RoundRow& row, std::size_t k) {
  const RoundRecord& first = rounds[row.first];
  const RoundRecord& r = rounds[k];
  if (k != row.last + 1 || r.round != rounds[row.last].round + 1 || !(r.phase == first.phase) ||
      r.barrier_ps != first.barrier_ps || r.transfer_ps != first.transfer_ps ||
      r.reduce_ps != first.reduce_ps || r.bytes != first.bytes ||
      r.remote_bytes != first.remote_bytes || r.start_ps < rounds[row.last].start_ps)
    return false;
  const std::uint64_t step = r.start_ps - rounds[row.last].start_ps;
  return row.last == row.first || rounds[row.first + 1].start_ps - first.start_ps == step;
}

void print_tables(std::ostream& out, const RunResult& result, const ReportOptions& options) {
  const RunRequest& q = result.request;
  const Problem& p = q.problem;
  const char* mode = builtin_mode(q.kernel);
  out << "allreduce-sim: kernel " << q.kernel;
  if (mode != nullptr) out << " (mode " << mode << ")";
  out << " on " << q.platform.name << " (" << to_string(q.platform.topology) << ", "
      << q.platform.dma_queues << " DMA queue" << (q.platform.dma_queues == 1 ? "" : "s")
      << "), P = " << p.ranks << ", " << p.elements << " x " << to_string(p.dtype) << " ("
      << p.bytes() << " B) per rank, op " << to_string(p.op);
  if (p.repeat > 1) out << ", " << p.repeat << " calls";
  if (p.core_num > 1) out << ", " << p.core_num << " blocks per rank";
  if (!q.platform.codegen.name.empty()) out << ", codegen " << q.platform.codegen.name;
  out << "\n";
  if (!q.platform_origin.empty()) out << "config: " << q.platform_origin << "\n";
  for (std::size_t f = 0; f < q.faults.size(); ++f)
    out << (f == 0 ? "faults injected: " : ", ") << to_string(q.faults[f])
        << (f + 1 == q.faults.size() ? "\n" : "");
  out << "\n";

  out << std::fixed << std::setprecision(3);
  print_ranks(out, result, options);
  if (!result.blocks.empty()) print_blocks(out, result);
  // The phase column is as wide as the longest phase name, so no name shifts the columns.
  const std::vector<RankStats>& owners = result.units();
  std::size_t phase_width = std::string("phase").size();
  for (const RankStats& s : owners) {
    for (std::size_t i = 0; i < s.round_count(); ++i)
      phase_width = std::max(phase_width, s.phase(i).size());
  }
  // The first --ranks-shown ranks, each with all its blocks.
  const std::size_t blocks = static_cast<std::size_t>(result.blocks_per_rank());
  const std::size_t shown =
      options.ranks_shown > 0
          ? std::min<std::size_t>(static_cast<std::size_t>(options.ranks_shown) * blocks,
                                  owners.size())
          : owners.size();
  // Past --ranks-shown ranks, alike consecutive rounds of a rank share a row: the same
  // phase and figures, starts evenly spaced (the first start and the spacing tell every one).
  const bool grouped = options.ranks_shown > 0 && result.ranks.size() > shown;
  std::vector<RoundRow> rows;
  std::size_t round_width = std::string("  round").size();
  std::size_t rounds_shown = 0;
  bool any_means = false;
  bool any_calls = false;
  for (std::size_t i = 0; i < shown; ++i) {
    const std::vector<RoundRecord>& rounds = owners[i].rounds;
    const std::size_t rank_rows = rows.size();
    for (std::size_t k = 0; k < rounds.size(); ++k) {
      ++rounds_shown;
      if (grouped && rows.size() > rank_rows && alike_rounds(rounds, rows.back(), k)) {
        rows.back().last = k;
      } else {
        rows.push_back({i, k, k});
      }
    }
    // Past kRowsPerRank rows: with --repeat a row for each round of a call, of every call's;
    // past --ranks-shown ranks, a row for each phase.
    if (options.ranks_shown > 0 && rows.size() - rank_rows > kRowsPerRank) {
      rows.resize(rank_rows);
      if (call_rows(rounds, static_cast<std::size_t>(p.repeat), i, rows)) {
        any_calls = true;
      } else if (grouped) {
        phase_rows(rounds, i, rows);
        any_means = true;
      } else {
        for (std::size_t k = 0; k < rounds.size(); ++k) rows.push_back({i, k, k});
      }
    }
  }
  const auto round_label = [&](const RoundRow& row) {
    const std::vector<RoundRecord>& rounds = owners[row.owner].rounds;
    if (row.stride > 1) {
      return std::to_string(rounds[row.first].round) + ".." +
             std::to_string(rounds[row.last].round) + " by " + std::to_string(row.stride);
    }
    return span_label(rounds[row.first].round, rounds[row.last].round);
  };
  for (const RoundRow& row : rows) round_width = std::max(round_width, 2 + round_label(row).size());
  out << "\nrank" << std::setw(static_cast<int>(round_width)) << "round"
      << "  " << std::left << std::setw(static_cast<int>(phase_width)) << "phase" << std::right
      << "     start_ns    barrier_ns   transfer_ns     reduce_ns         bytes  remote_bytes\n";
  for (const RoundRow& row : rows) {
    const std::vector<RoundRecord>& rounds = owners[row.owner].rounds;
    const RoundRecord& r = rounds[row.first];
    out << std::setw(4) << owner_label(result, owners[row.owner])
        << std::setw(static_cast<int>(round_width)) << round_label(row) << "  " << std::left
        << std::setw(static_cast<int>(phase_width)) << r.phase << std::right
        << cell(out, 13, ps_to_ns(r.start_ps));
    if (!row.means || row.first == row.last) {
      out << cell(out, 14, ps_to_ns(r.barrier_ps)) << cell(out, 14, ps_to_ns(r.transfer_ps))
          << cell(out, 14, ps_to_ns(r.reduce_ps)) << cell(out, 14, r.bytes)
          << cell(out, 14, r.remote_bytes) << "\n";
      continue;
    }
    // Means, and the range of each figure that varies over the row's rounds.
    const std::size_t count = (row.last - row.first) / row.stride + 1;
    const double n = static_cast<double>(count);
    std::string ranges;
    const auto column = [&](auto field, const char* name, double scale) {
      double sum = 0;
      auto low = rounds[row.first].*field;
      auto high = low;
      for (std::size_t k = row.first; k <= row.last; k += row.stride) {
        sum += static_cast<double>(rounds[k].*field);
        low = std::min(low, rounds[k].*field);
        high = std::max(high, rounds[k].*field);
      }
      // A count alike in every round prints as the exact rows do: bytes whole.
      if (low == high && scale == 1.0) {
        out << cell(out, 14, low);
        return;
      }
      if (low != high) {
        std::ostringstream range;
        range << std::fixed << std::setprecision(scale == 1.0 ? 0 : 3)
              << (ranges.empty() ? "" : ", ") << name << " " << static_cast<double>(low) / scale
              << " to " << static_cast<double>(high) / scale;
        ranges += range.str();
      }
      out << cell(out, 14, sum / n / scale);
    };
    column(&RoundRecord::barrier_ps, "barrier_ns", 1000.0);
    column(&RoundRecord::transfer_ps, "transfer_ns", 1000.0);
    column(&RoundRecord::reduce_ps, "reduce_ns", 1000.0);
    column(&RoundRecord::bytes, "bytes", 1.0);
    column(&RoundRecord::remote_bytes, "remote_bytes", 1.0);
    out << "\n"
        << std::string(4 + round_width + 2, ' ') << "(means of " << count
        << (row.stride > 1 ? " calls" : " rounds") << (ranges.empty() ? "" : "; " + ranges)
        << ")\n";
  }
  if (rows.size() < rounds_shown) {
    out << "(" << rounds_shown << " rounds in " << rows.size()
        << " rows: alike consecutive rounds share one, starting at its start_ns and evenly "
           "spaced"
        << (any_means ? "; past " + std::to_string(kRowsPerRank) +
                            " rows a rank, a phase's rounds share one, of their means"
                      : "")
        << (any_calls ? "; past " + std::to_string(kRowsPerRank) +
                            " rows a rank, each round of a call shares one with that round of "
                            "every call (R..L by N: every N-th round), of their means"
                      : "")
        << ")\n";
  }
  if (shown < owners.size()) {
    out << "(rounds of ranks 0-" << shown / blocks - 1 << " of " << result.ranks.size()
        << " shown; --ranks-shown all shows every rank, --json writes them all)\n";
  }
  if (!q.platform.codegen.name.empty()) print_sync(out, result, shown);
}

// The verdict after a run that did not complete or whose result is wrong.
void print_failure(std::ostream& out, const RunResult& result) {
  if (!result.completed) {
    out << result.failure << "\nFAILED\n";
    return;
  }
  if (result.mismatch_count == 0) {
    out << "the kernel left its signal non-zero, so the next call cannot reuse it\nFAILED\n";
    return;
  }
  out << "wrong result: " << result.mismatch_count << " elements differ from the golden (rtol "
      << result.rtol << ", atol " << result.atol << ")\n";
  for (const Mismatch& m : result.mismatches) {
    out << "  rank " << m.rank << " y[" << m.index << "] = " << m.got << ", expected " << m.expected
        << "\n";
  }
  out << "FAILED\n";
}

// Round i of a rank (or block) as the JSON's "rounds" array holds it.
nlohmann::ordered_json round_json(const RunResult& result, const RankStats& s, std::size_t i) {
  using nlohmann::ordered_json;
  const RoundRecord& r = s.rounds[i];
  ordered_json round = {{"rank", s.rank}};
  if (!result.blocks.empty()) round["block"] = s.block;
  round["round"] = r.round;
  round["phase"] = r.phase.str();
  round["start_ns"] = ps_to_ns(r.start_ps);
  round["barrier_ns"] = ps_to_ns(r.barrier_ps);
  round["transfer_ns"] = ps_to_ns(r.transfer_ps);
  round["reduce_ns"] = ps_to_ns(r.reduce_ps);
  round["bytes"] = r.bytes;
  round["remote_bytes"] = r.remote_bytes;
  if (!result.request.platform.codegen.name.empty()) {
    round["sync"] = ordered_json::object();
    for (int k = 0; k < kSyncInstructions && i < s.sync.size(); ++k) {
      const SyncCost& cost = s.sync[i][static_cast<std::size_t>(k)];
      if (cost.count == 0) continue;
      round["sync"][to_string(static_cast<SyncInstruction>(k))] = {{"count", cost.count},
                                                                   {"ns", ps_to_ns(cost.ps)}};
    }
  }
  return round;
}

}  // namespace

void print_report(std::ostream& out, const RunResult& result, const ReportOptions& options) {
  const bool quiet = result.request.quiet;
  if (!quiet) print_tables(out, result, options);
  if (!quiet) out << "\n";
  out << std::fixed << std::setprecision(3);
  if (result.completed) {
    out << "device time: " << result.device_time_ns << " ns\n";
    out << "algbw: " << algbw_GBps(result) << " GB/s, busbw: " << busbw_GBps(result)
        << " GB/s (bytes per rank / "
        << (result.request.problem.repeat > 1
                ? "(device time / " + std::to_string(result.request.problem.repeat) + " calls)"
                : std::string("device time"))
        << "; busbw = algbw x 2(P-1)/P)\n";
  }
  if (result.completed && !quiet) {
    out << "signal: ";
    if (result.signal_clear) {
      out << "all zero at the end\n";
    } else if (result.signal_must_clear) {
      out << "NOT clear, " << result.signal_residue << "\n";
    } else {
      out << "left non-zero, as this kernel leaves it (reuse needs a reset): "
          << result.signal_residue << "\n";
    }
  }
  if (!quiet) {
    out << std::setprecision(3) << "simulation: " << result.simulated_operations
        << " operations in " << result.wall_seconds << " s wall (" << std::setprecision(0)
        << (result.wall_seconds > 0 ? result.simulated_operations / result.wall_seconds : 0.0)
        << " operations/s" << (result.whole_transfers ? ", transfers timed whole" : "");
    if (!result.bursts_because.empty()) {
      out << "; redone";
      const std::vector<std::string>& through = result.bursts_through;
      if (!through.empty()) {
        // A few names say which resources; the count says how many.
        constexpr std::size_t kNamed = 3;
        out << " with the transfers through " << through.size()
            << (through.size() == 1 ? " resource (" : " resources (");
        for (std::size_t i = 0; i < std::min(kNamed, through.size()); ++i)
          out << (i == 0 ? "" : ", ") << through[i];
        if (through.size() > kNamed) out << " and " << through.size() - kNamed << " more";
        out << ")";
      }
      if (result.bursts_of != 0) {
        out << (through.empty() ? " with " : " and ") << result.bursts_of
            << (result.bursts_of == 1 ? " transfer" : " transfers") << " that met";
      }
      out << " burst by burst: " << result.bursts_because;
    }
    if (result.tries_before > 0) {
      out << std::setprecision(3) << "; "
          << (result.tries_before == 1 ? std::string("the try")
                                       : "the " + std::to_string(result.tries_before) + " tries")
          << " before took " << result.tries_wall_seconds << " s";
    }
    out << ")\n";
  }
  out << std::setprecision(6) << std::defaultfloat;
  if (!quiet) print_explanation(out, result);
  if (options.explain) print_critical_path_steps(out, result, options.ranks_shown);
  if (!result.completed || (result.checked && !result.correct)) {
    print_failure(out, result);
  } else if (!result.checked) {
    out << "timing only: no payload moved, result not checked\n";
  } else {
    out << "OK\n";
  }
}

void write_json(std::ostream& out, const RunResult& result) {
  using nlohmann::ordered_json;
  const RunRequest& q = result.request;
  const Problem& p = q.problem;
  ordered_json j;
  j["kernel"] = q.kernel;
  if (const char* mode = builtin_mode(q.kernel)) j["mode"] = mode;
  j["platform"] = q.platform.name;
  j["P"] = p.ranks;
  j["devices"] = q.devices;
  j["dtype"] = to_string(p.dtype);
  j["op"] = to_string(p.op);
  j["elements"] = p.elements;
  j["bytes_per_rank"] = p.bytes();
  if (p.repeat > 1) j["repeat"] = p.repeat;
  j["dma_queues"] = q.platform.dma_queues;
  if (p.core_num > 1) j["core_num"] = p.core_num;
  if (!q.platform.codegen.name.empty()) j["codegen"] = q.platform.codegen.name;
  if (!q.faults.empty()) {
    j["faults"] = ordered_json::array();
    for (const Fault& fault : q.faults) j["faults"].push_back(to_string(fault));
  }
  j["device_time_ns"] = result.device_time_ns;
  if (result.completed) {
    j["algbw_GBps"] = algbw_GBps(result);
    j["busbw_GBps"] = busbw_GBps(result);
  }
  j["completed"] = result.completed;
  j["checked"] = result.checked;
  j["correct"] = result.correct;
  if (!result.completed) j["failure"] = result.failure;
  j["mismatches"] = result.mismatch_count;
  j["signal_clear"] = result.signal_clear;
  j["signal_must_clear"] = result.signal_must_clear;
  j["ranks"] = ordered_json::array();
  j["rounds"] = ordered_json::array();
  for (const RankStats& s : result.ranks) {
    j["ranks"].push_back({{"rank", s.rank},
                          {"device", s.device},
                          {"remote_read_bytes", s.remote_read_bytes},
                          {"remote_write_bytes", s.remote_write_bytes},
                          {"local_bytes", s.local_bytes},
                          {"notifies", s.notifies},
                          {"waits", s.waits},
                          {"polls", s.polls},
                          {"transfers", s.transfers},
                          {"reduces", s.reduces},
                          {"ub_peak_bytes", s.ub_peak_bytes},
                          {"start_ns", ps_to_ns(s.start_ps)},
                          {"finish_ns", ps_to_ns(s.finish_ps)},
                          {"finished", s.finished}});
  }
  for (const RankStats& s : result.blocks) {
    j["blocks"].push_back({{"rank", s.rank},
                           {"block", s.block},
                           {"remote_read_bytes", s.remote_read_bytes},
                           {"notifies", s.notifies},
                           {"waits", s.waits},
                           {"polls", s.polls},
                           {"ub_peak_bytes", s.ub_peak_bytes},
                           {"start_ns", ps_to_ns(s.start_ps)},
                           {"finish_ns", ps_to_ns(s.finish_ps)},
                           {"finished", s.finished}});
  }
  add_explanation(j, result);
  // The document holds "rounds" empty; each round is dumped on its own where it stands, at
  // the array's depth, which gives the bytes of dumping them all in the document.
  const std::string document = j.dump(2);
  const std::string empty_rounds = "\n  \"rounds\": []";
  const std::size_t at = document.find(empty_rounds) + empty_rounds.size() - 1;
  out.write(document.data(), static_cast<std::streamsize>(at));
  bool first = true;
  for (const RankStats& s : result.units()) {
    for (std::size_t i = 0; i < s.rounds.size(); ++i) {
      std::string round = round_json(result, s, i).dump(2);
      for (std::size_t at = round.find('\n'); at != std::string::npos;
           at = round.find('\n', at + 1)) {
        round.insert(at + 1, "    ");  // each line after the first, at the array's depth
      }
      out << (first ? "\n    " : ",\n    ") << round;
      first = false;
    }
  }
  out << (first ? "" : "\n  ") << document.substr(at) << "\n";
}

std::string to_json(const RunResult& result) {
  std::ostringstream out;
  write_json(out, result);
  return out.str();
}

void write_schedule(std::ostream& out, const RunResult& result, bool with_times) {
  out << "# " << (with_times ? "t_ns: issue time in ns; " : "")
      << "offset: elements from the window's start; bytes: bytes\n";
  for (const ScheduleLog& log : result.schedule) {
    if (!with_times) {
      out << log.text();
      continue;
    }
    for (const ScheduleLog::Entry entry : log) {
      out << "t_ns=" << std::fixed << std::setprecision(3) << ps_to_ns(entry.at_ps) << " "
          << entry.line << "\n";
    }
  }
}

}  // namespace ars
