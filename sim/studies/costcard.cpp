#include "sim/studies/costcard.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <ostream>
#include <sstream>
#include <tuple>

#include <unistd.h>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "kernels/registry.h"
#include "sim/cli.h"
#include "sim/config/config.h"
#include "sim/outputs/output_file.h"
#include "sim/studies/batch.h"
#include "sim/studies/cards.h"

namespace ars {

namespace po = boost::program_options;

namespace {

constexpr double kTimeTolerancePct = 1.0;

struct Point {
  std::string kernel;
  int ranks = 0;
  int core_num = 1;
  std::uint64_t elements = 0;
  BatchResult run;
  Card card;
};

// The items between commas, an empty one included ("2," is "2" and ""), for its option to refuse.
std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  if (text.empty() || text.back() == ',') items.emplace_back();
  return items;
}

std::vector<std::string> parse_kernels(const std::string& text, std::ostream& err) {
  if (text != "all") {
    std::vector<std::string> kernels;
    for (const std::string& k : split(text)) {
      // `builtin` is the builtin in both modes.
      const std::vector<std::string> named =
          k == "builtin" ? std::vector<std::string>{"builtin_mesh", "builtin_ring"}
                         : std::vector<std::string>{resolve_kernel("--kernels", k, "mesh", false)};
      for (const std::string& kernel : named) {
        const auto& carded = card_kernels();
        if (std::find(carded.begin(), carded.end(), kernel) == carded.end()) {
          throw InputError("--kernels: kernel '" + kernel + "' has no cost card");
        }
        if (std::find(kernels.begin(), kernels.end(), kernel) != kernels.end())
          throw InputError("--kernels: " + kernel + " is listed twice");
        kernels.push_back(kernel);
      }
    }
    if (kernels.empty()) throw InputError("--kernels: no kernel given");
    return kernels;
  }
  std::vector<std::string> kernels;
  for (const std::string& k : card_kernels()) {
    const auto& registry = kernel_registry();
    const auto spec = std::find_if(registry.begin(), registry.end(),
                                   [&](const KernelSpec& s) { return k == s.name; });
    // The host path (FP32 Sum, core_num) is swept only when named.
    if (spec != registry.end() && spec->takes_core_num) continue;
    if (spec != registry.end()) {
      kernels.push_back(k);
    } else {
      err << "costcard: kernel " << k << " is not built into this binary; skipped\n";
    }
  }
  return kernels;
}

// A list of counts from `minimum` to `maximum` (`range` says what they are), each once.
std::vector<int> parse_counts(const std::string& option, const std::string& text, int minimum,
                              int maximum, const std::string& range) {
  std::vector<int> counts;
  for (const std::string& item : split(text)) {
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || !std::isdigit(static_cast<unsigned char>(item[0])) ||
        n < minimum || n > maximum) {
      throw InputError(option + ": '" + item + "' is not " + range);
    }
    if (std::find(counts.begin(), counts.end(), n) != counts.end())
      throw InputError(option + ": " + item + " is listed twice");
    counts.push_back(n);
  }
  if (counts.empty()) throw InputError(option + ": nothing given");
  return counts;
}

// Sizes as every command reads them (sim/cli.h): a bare number counts elements, a unit bytes.
std::uint64_t parse_bytes(const std::string& option, const std::string& text, DType dtype) {
  return parse_size(text, dtype, option) * dtype_bytes(dtype);
}

double pct(double measured, double card) {
  return card > 0 ? 100.0 * (measured - card) / card : 0.0;
}

// The deviation in at most 7 characters, so the dev% column keeps its width: two decimals
// while they fit, whole percents up to 999999, then powers of ten.
std::string format_dev(double dev) {
  std::ostringstream out;
  const double size = std::fabs(dev);
  if (size < 1000) {
    out << std::fixed << std::setprecision(2) << dev;
  } else if (size < 1e6) {
    out << std::fixed << std::setprecision(0) << dev;
  } else {
    out << std::scientific << std::setprecision(0) << dev;
  }
  return out.str();
}

// The rank that finished last: its per-round records explain the device time.
const RankStats& slowest(const RunResult& r) {
  return *std::max_element(
      r.ranks.begin(), r.ranks.end(),
      [](const RankStats& a, const RankStats& b) { return a.finish_ps < b.finish_ps; });
}

std::string human_bytes(std::uint64_t b) {
  std::ostringstream out;
  if (b >= (1u << 20) && b % (1u << 20) == 0) {
    out << b / (1u << 20) << "MiB";
  } else if (b >= 1024 && b % 1024 == 0) {
    out << b / 1024 << "KiB";
  } else {
    out << b << "B";
  }
  return out.str();
}

struct Checks {
  std::uint64_t remote_read = 0, card_remote_read = 0;
  std::uint64_t rounds = 0, card_rounds = 0;
  std::uint64_t notifies = 0, card_notifies = 0;
  std::uint64_t waits = 0, card_waits = 0;
  bool bytes_ok = true;
  bool rounds_ok = true;
};

// Every rank against its own card; the figures shown are the slowest rank's.
Checks check(const Point& p) {
  Checks c;
  const RunResult& r = p.run.result;
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const RankStats& s = r.ranks[i];
    const RankCard& k = p.card.ranks.at(i);
    c.bytes_ok = c.bytes_ok && s.remote_read_bytes == k.remote_read_bytes &&
                 s.remote_write_bytes == k.remote_write_bytes;
    c.rounds_ok = c.rounds_ok && s.rounds.size() == k.rounds.size() && s.notifies == k.notifies &&
                  s.waits == k.waits;
  }
  const RankStats& s = slowest(r);
  const RankCard& k = p.card.ranks.at(static_cast<std::size_t>(s.rank));
  c.remote_read = s.remote_read_bytes;
  c.card_remote_read = k.remote_read_bytes;
  c.rounds = s.rounds.size();
  c.card_rounds = k.rounds.size();
  c.notifies = s.notifies;
  c.card_notifies = k.notifies;
  c.waits = s.waits;
  c.card_waits = k.waits;
  return c;
}

// Where a deviating point's time went, from the slowest rank's per-round records.
std::string attribution(const Point& p) {
  const RunResult& r = p.run.result;
  const RankStats& s = slowest(r);
  const RankCard& k = p.card.ranks.at(static_cast<std::size_t>(s.rank));
  double barrier = 0, transfer = 0, reduce = 0;
  for (const RoundRecord& round : s.rounds) {
    barrier += static_cast<double>(round.barrier_ps) / 1000.0;
    transfer += static_cast<double>(round.transfer_ps) / 1000.0;
    reduce += static_cast<double>(round.reduce_ps) / 1000.0;
  }
  for (const CardRound& round : k.rounds) {
    barrier -= round.barrier_ns;
    transfer -= round.transfer_ns;
    reduce -= round.reduce_ns;
  }
  std::uint64_t first_start = UINT64_MAX, last_start = 0;
  for (const RankStats& rank : r.ranks) {
    first_start = std::min(first_start, rank.start_ps);
    last_start = std::max(last_start, rank.start_ps);
  }
  // The launch set-up (launch.setup_cycles) runs before the rank's first round: no card has it.
  const std::uint64_t setup_ps = s.rounds.empty() ? 0 : s.rounds.front().start_ps - s.start_ps;
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << "    rank " << s.rank << " vs card: barrier wait "
      << std::showpos << barrier << " ns, transfers (+ contention, - overlap) " << transfer
      << " ns, reduce " << reduce << " ns, launch skew "
      << static_cast<double>(last_start - first_start) / 1000.0 << " ns, launch set-up "
      << static_cast<double>(setup_ps) / 1000.0 << " ns\n";
  return out.str();
}

// The kernel as tables name it: host_mesh with 8 blocks per rank is host_mesh/8.
std::string point_name(const Point& p) {
  return p.core_num == 1 ? p.kernel : p.kernel + "/" + std::to_string(p.core_num);
}

// Width of the kernel column in the point and core-count tables ("builtin_mesh/16" fits).
constexpr int kKernelColumn = 16;
// And of the P column: a space before the largest topology's 16384 ranks, even after a name
// as wide as the kernel column ("hierarchical/rhd").
constexpr int kRanksColumn = 6;

void print_points(std::ostream& out, const std::vector<Point>& points, bool per_round) {
  out << std::left << std::setw(kKernelColumn) << "kernel" << std::right << std::setw(kRanksColumn)
      << "P"
      << "      bytes     time_ns     card_ns    dev%  remote_B/card      "
         "rounds/card  notifies/card  waits/card  ns/round (card)\n";
  for (const Point& p : points) {
    const std::uint64_t bytes = p.elements * dtype_bytes(p.run.result.request.problem.dtype);
    out << std::left << std::setw(kKernelColumn) << point_name(p) << std::right
        << std::setw(kRanksColumn) << p.ranks << std::setw(11) << human_bytes(bytes);
    if (!p.run.error.empty() || !p.run.result.completed) {
      out << "  not run: " << (p.run.error.empty() ? p.run.result.failure : p.run.error) << "\n";
      continue;
    }
    const Checks c = check(p);
    const double time = p.run.result.device_time_ns;
    const double dev = pct(time, p.card.time_ns);
    out << std::fixed << std::setprecision(1) << std::setw(12) << time << std::setw(12)
        << p.card.time_ns << std::setw(8) << format_dev(dev) << std::setw(10) << c.remote_read
        << "/" << std::left << std::setw(9) << c.card_remote_read << std::right << std::setw(4)
        << c.rounds << "/" << std::left << std::setw(4) << c.card_rounds << std::right
        << std::setw(8) << c.notifies << "/" << std::left << std::setw(6) << c.card_notifies
        << std::right << std::setw(6) << c.waits << "/" << std::left << std::setw(5) << c.card_waits
        << std::right << std::setprecision(1) << std::setw(10)
        << time / static_cast<double>(c.rounds) << " (" << p.card.time_ns / c.card_rounds << ")"
        << (c.bytes_ok ? "" : "  BYTE CARD FAILS") << (c.rounds_ok ? "" : "  ROUND CARD FAILS")
        << "\n";
    if (std::fabs(dev) > kTimeTolerancePct) out << attribution(p);
    if (per_round) {
      const RankStats& s = slowest(p.run.result);
      const RankCard& k = p.card.ranks.at(static_cast<std::size_t>(s.rank));
      out << "      rank " << s.rank << ", the last to finish: measured ns, card ns, deviation\n";
      for (std::size_t i = 0; i < s.rounds.size() && i < k.rounds.size(); ++i) {
        const RoundRecord& m = s.rounds[i];
        const std::uint64_t end = i + 1 < s.rounds.size() ? s.rounds[i + 1].start_ps : s.finish_ps;
        const double measured = static_cast<double>(end - m.start_ps) / 1000.0;
        out << "      round " << std::setw(3) << i << " " << std::left << std::setw(15) << m.phase
            << std::right << std::setw(12) << measured << std::setw(12) << k.rounds[i].time_ns
            << std::setw(8) << pct(measured, k.rounds[i].time_ns) << "%\n";
      }
    }
  }
}

// The elements that differ from the golden, or N/A for a point whose result was not checked
// (a timing-only sweep), as nccl-tests shows with its check off.
std::string wrong_column(const Point& p) {
  return p.run.result.checked ? std::to_string(p.run.result.mismatch_count) : "N/A";
}

// nccl-tests' table, one per kernel and P.
void print_nccl_tables(std::ostream& out, const std::vector<Point>& points) {
  for (std::size_t i = 0; i < points.size();) {
    std::size_t j = i;
    while (j < points.size() && points[j].kernel == points[i].kernel &&
           points[j].ranks == points[i].ranks && points[j].core_num == points[i].core_num) {
      ++j;
    }
    const Problem& first = points[i].run.result.request.problem;
    out << "\n# " << point_name(points[i]) << ", P = " << points[i].ranks << "\n"
        << "#       size         count    type   redop    time(us)  algbw(GB/s)  busbw(GB/s)  "
           "#wrong\n";
    for (std::size_t k = i; k < j; ++k) {
      const Point& p = points[k];
      const std::uint64_t bytes = p.elements * dtype_bytes(first.dtype);
      out << std::setw(12) << bytes << std::setw(14) << p.elements << std::setw(8)
          << to_string(first.dtype) << std::setw(8) << to_string(first.op);
      if (!p.run.error.empty() || !p.run.result.completed) {
        out << "         n/a\n";
        continue;
      }
      const double time = p.run.result.device_time_ns;
      const double algbw = static_cast<double>(bytes) / time;
      out << std::fixed << std::setprecision(2) << std::setw(12) << time / 1000.0 << std::setw(13)
          << algbw << std::setw(13) << allreduce_busbw(algbw, p.ranks) << std::setw(8)
          << wrong_column(p) << "\n";
    }
    i = j;
  }
}

const Point* find_point(const std::vector<Point>& points, const std::string& kernel, int ranks,
                        std::uint64_t elements) {
  for (const Point& p : points) {
    if (p.kernel == kernel && p.ranks == ranks && p.elements == elements && p.run.error.empty() &&
        p.run.result.completed) {
      return &p;
    }
  }
  return nullptr;
}

// Whether any of the points ran `kernel`.
bool swept(const std::vector<Point>& points, const std::string& kernel) {
  return std::any_of(points.begin(), points.end(),
                     [&](const Point& p) { return p.kernel == kernel; });
}

// Whether a sweep has a mesh and a ring of one kind to show a crossover for, `has` telling
// whether it has a kernel.
template <typename Has>
bool crossover_pair(Has has) {
  return (has("mesh") && has("ring")) || (has("builtin_mesh") && has("builtin_ring"));
}

// How much faster the ring is than the mesh, in % of the mesh's time (negative: slower).
double ring_gain_pct(double mesh_ns, double ring_ns) {
  return 100.0 * (mesh_ns - ring_ns) / mesh_ns;
}

// The times of `kernel` at P = `ranks` for each size, where that point ran.
std::vector<const Point*> series(const std::vector<Point>& points, const std::string& kernel,
                                 int ranks, const std::vector<std::uint64_t>& sizes) {
  std::vector<const Point*> found;
  for (std::uint64_t elements : sizes) found.push_back(find_point(points, kernel, ranks, elements));
  return found;
}

// The crossover of one mesh/ring pair: "from 128KiB" or "never", from the sizes where both ran.
std::string crossover_text(const std::vector<const Point*>& mesh,
                           const std::vector<const Point*>& ring,
                           const std::vector<std::uint64_t>& bytes, bool card) {
  std::vector<double> mesh_ns, ring_ns;
  std::vector<std::uint64_t> at;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (mesh[i] == nullptr || ring[i] == nullptr) continue;
    mesh_ns.push_back(card ? mesh[i]->card.time_ns : mesh[i]->run.result.device_time_ns);
    ring_ns.push_back(card ? ring[i]->card.time_ns : ring[i]->run.result.device_time_ns);
    at.push_back(bytes[i]);
  }
  if (at.empty()) return "not run";
  const auto cross = find_crossover(mesh_ns, ring_ns);
  return cross ? "from " + human_bytes(at[*cross]) : std::string("never");
}

void print_crossovers(std::ostream& out, const std::vector<Point>& points,
                      const std::vector<Point>& ideal_points, const std::vector<int>& ranks,
                      const std::vector<std::uint64_t>& sizes, std::size_t element) {
  if (!crossover_pair([&](const char* kernel) { return swept(points, kernel); })) return;
  out << "\nCrossover: smallest payload from which the ring beats the mesh at every larger size\n"
      << "by more than " << std::fixed << std::setprecision(0) << kCrossoverTiePercent
      << " % (closer is a tie); [the margin there, and one size below]\n"
      << "(tutorial rule: mesh for small messages, ring from about 16 KiB)\n";
  std::vector<std::uint64_t> bytes;
  for (std::uint64_t elements : sizes) bytes.push_back(elements * element);
  for (const char* ring : {"ring", "builtin_ring"}) {
    const char* mesh = std::string(ring) == "ring" ? "mesh" : "builtin_mesh";
    for (int p : ranks) {
      const std::vector<const Point*> m = series(points, mesh, p, sizes);
      const std::vector<const Point*> r = series(points, ring, p, sizes);
      std::vector<double> mesh_ns, ring_ns;
      std::vector<std::uint64_t> at;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (m[i] == nullptr || r[i] == nullptr) continue;
        mesh_ns.push_back(m[i]->run.result.device_time_ns);
        ring_ns.push_back(r[i]->run.result.device_time_ns);
        at.push_back(bytes[i]);
      }
      if (at.empty()) continue;
      out << "  " << ring << " vs " << mesh << ", P = " << p << ": " << std::setprecision(1);
      const auto cross = find_crossover(mesh_ns, ring_ns);
      const auto margin = [&](std::size_t i) {
        const double gain = ring_gain_pct(mesh_ns[i], ring_ns[i]);
        out << human_bytes(at[i]) << ": ring " << std::fabs(gain) << " % "
            << (gain > 0 ? "faster" : "slower")
            << (std::fabs(gain) <= kCrossoverTiePercent ? " (a tie)" : "") << ", "
            << ring_ns[i] / 1000.0 << " vs " << mesh_ns[i] / 1000.0 << " us";
      };
      if (!cross) {
        out << "the ring never wins up to " << human_bytes(at.back()) << " [";
        margin(at.size() - 1);
      } else {
        out << "from " << human_bytes(at[*cross]) << " [";
        margin(*cross);
        if (*cross > 0) {
          out << "; ";
          margin(*cross - 1);
        }
      }
      out << "]";
      if (!ideal_points.empty()) {
        out << "; --ideal: "
            << crossover_text(series(ideal_points, mesh, p, sizes),
                              series(ideal_points, ring, p, sizes), bytes, false);
      }
      out << "; cards: " << crossover_text(m, r, bytes, true);
      const bool rule_holds = cross && at[*cross] >= 8192 && at[*cross] <= 32768;
      out << "; rule of thumb " << (rule_holds ? "holds" : "does not hold") << "\n";
    }
  }
}

// Which of the algorithms collective libraries run at scale wins, per P and size, as runs of
// sizes with the same winner; the cards' verdict beside it.
void print_fastest(std::ostream& out, const std::vector<Point>& points,
                   const std::vector<int>& ranks, const std::vector<std::uint64_t>& sizes,
                   std::size_t element) {
  const std::vector<std::string> contenders = {"ring", "rhd", "hierarchical", "hierarchical/rhd"};
  // Only where the sweep has two of them to compare.
  if (std::count_if(contenders.begin(), contenders.end(),
                    [&](const std::string& name) { return swept(points, name); }) < 2)
    return;
  out << "\nFastest of ring, rhd and hierarchical (/rhd: --inter rhd) per P and size (simulated; "
         "cards):\n";
  for (int p : ranks) {
    std::vector<std::vector<double>> ns(contenders.size()), card(contenders.size());
    for (std::size_t k = 0; k < contenders.size(); ++k) {
      for (std::uint64_t elements : sizes) {
        const Point* point = find_point(points, contenders[k], p, elements);
        ns[k].push_back(point ? point->run.result.device_time_ns : std::nan(""));
        card[k].push_back(point ? point->card.time_ns : std::nan(""));
      }
    }
    const auto winners = find_fastest(ns);
    const auto card_winners = find_fastest(card);
    out << "  P = " << p << ":";
    for (std::size_t i = 0; i < sizes.size();) {
      std::size_t j = i;
      while (j < sizes.size() && winners[j] == winners[i] && card_winners[j] == card_winners[i])
        ++j;
      const std::string name = winners[i] ? contenders[*winners[i]] : "none ran";
      const std::string card_name = card_winners[i] ? contenders[*card_winners[i]] : "none";
      out << (i == 0 ? " " : ", ") << name << " at " << human_bytes(sizes[i] * element);
      if (j - 1 > i) out << ".." << human_bytes(sizes[j - 1] * element);
      out << " (cards: " << card_name << ")";
      i = j;
    }
    out << "\n";
  }
}

// For every kernel swept over several core counts, per P and size: the fastest core count and
// the smallest one within 5 % of it.
void print_core_counts(std::ostream& out, const std::vector<Point>& points) {
  std::map<std::tuple<std::string, int, std::uint64_t>, std::vector<const Point*>> sweeps;
  for (const Point& p : points) {
    if (p.run.error.empty() && p.run.result.completed)
      sweeps[{p.kernel, p.ranks, p.elements}].push_back(&p);
  }
  bool header = false;
  for (auto& [key, sweep] : sweeps) {
    if (sweep.size() < 2) continue;
    if (!header) {
      out << "\nCore counts: the fastest, and the smallest within 5 % of it\n"
          << std::left << std::setw(kKernelColumn) << "kernel" << std::right
          << std::setw(kRanksColumn) << "P"
          << "      bytes   fastest    time_ns   within_5%    time_ns\n";
      header = true;
    }
    std::sort(sweep.begin(), sweep.end(),
              [](const Point* a, const Point* b) { return a->core_num < b->core_num; });
    std::vector<double> times;
    for (const Point* p : sweep) times.push_back(p->run.result.device_time_ns);
    const auto fastest =
        static_cast<std::size_t>(std::min_element(times.begin(), times.end()) - times.begin());
    const std::size_t enough = smallest_near_best(times, 0.05);
    const Point& first = *sweep.front();
    out << std::left << std::setw(kKernelColumn) << first.kernel << std::right
        << std::setw(kRanksColumn) << first.ranks << std::setw(11)
        << human_bytes(first.elements * dtype_bytes(first.run.result.request.problem.dtype))
        << std::fixed << std::setprecision(1) << std::setw(10) << sweep[fastest]->core_num
        << std::setw(11) << times[fastest] << std::setw(12) << sweep[enough]->core_num
        << std::setw(11) << times[enough] << "\n";
  }
}

std::string csv(const std::vector<Point>& points, bool ideal) {
  std::ostringstream out;
  out << "kernel,P,dtype,op,bytes_per_rank,time_ns,card_time_ns,deviation_pct,remote_read_bytes,"
         "card_remote_read_bytes,rounds,card_rounds,notifies,card_notifies,waits,card_waits,"
         "algbw_GBps,busbw_GBps,wrong,ideal,platform\n";
  for (const Point& p : points) {
    if (!p.run.error.empty() || !p.run.result.completed) continue;
    const Problem& q = p.run.result.request.problem;
    const Checks c = check(p);
    const double time = p.run.result.device_time_ns;
    const double algbw = static_cast<double>(q.bytes()) / time;
    out << std::fixed << point_name(p) << "," << p.ranks << "," << to_string(q.dtype) << ","
        << to_string(q.op) << "," << q.bytes() << "," << std::setprecision(3) << time << ","
        << p.card.time_ns << "," << pct(time, p.card.time_ns) << "," << c.remote_read << ","
        << c.card_remote_read << "," << c.rounds << "," << c.card_rounds << "," << c.notifies << ","
        << c.card_notifies << "," << c.waits << "," << c.card_waits << "," << std::setprecision(6)
        << algbw << "," << allreduce_busbw(algbw, p.ranks) << "," << wrong_column(p) << ","
        << (ideal ? 1 : 0) << "," << p.run.result.request.platform.name << "\n";
  }
  return out.str();
}

// A progress line for sweeps that run longer than a second, counting the runs still to make (a
// crossover's points run once more on the ideal platform). On a terminal it is rewritten in
// place ('\r'); into a file or a pipe a '\r' would pile every update onto one line, so there
// it writes whole lines, fewer of them.
class Progress {
 public:
  Progress(std::ostream& err, bool terminal)
      : err_(err), terminal_(terminal), start_(std::chrono::steady_clock::now()) {}
  void operator()(std::size_t done, std::size_t total) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    // Quiet for short sweeps; then at most four updates a second on a terminal, one every
    // five seconds elsewhere, and always the last one.
    const double interval = terminal_ ? 0.25 : 5.0;
    if (elapsed < 1.0 || (done < total && shown_ && elapsed - last_shown_ < interval)) return;
    shown_ = true;
    last_shown_ = elapsed;
    const double left = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
    err_ << (terminal_ ? "\r" : "") << "costcard: " << done << "/" << total << " runs, "
         << std::fixed << std::setprecision(1) << elapsed << " s elapsed, about " << left
         << " s left" << (terminal_ ? "   " : "\n") << std::flush;
  }
  ~Progress() {
    if (shown_ && terminal_) err_ << "\n";
  }

 private:
  std::ostream& err_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  bool shown_ = false;
  double last_shown_ = 0;
};

// --shard K/N: this process runs the points whose index i has i % N == K - 1.
struct Shard {
  std::size_t index = 1;
  std::size_t count = 1;
};

Shard parse_shard(const std::string& text) {
  long long index = 0;
  long long count = 0;
  char slash = 0;
  std::istringstream in(text);
  if (!(in >> index >> slash >> count) || slash != '/' || !in.eof() || count < 1 || index < 1 ||
      index > count || text.find_first_of("+ ") != std::string::npos) {
    throw InputError("--shard: '" + text + "' is not K/N with 1 <= K <= N");
  }
  return {static_cast<std::size_t>(index), static_cast<std::size_t>(count)};
}

// Every value of a platform in 16 hex digits (FNV-1a of its INI text): the same on every host,
// and another as soon as one key differs (given on the command line, or edited in its file).
std::string platform_fingerprint(const PlatformConfig& platform) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const unsigned char c : to_ini(platform)) hash = (hash ^ c) * 0x100000001b3ull;
  std::ostringstream hex;
  hex << std::hex << std::setw(16) << std::setfill('0') << hash;
  return hex.str();
}

// What names a point in a points file: the same in every shard of the same sweep, and another
// for a sweep on a platform with any value changed.
std::string point_key(const RunRequest& request, bool ideal) {
  const Problem& p = request.problem;
  const std::string inter = request.kernel == "hierarchical" && p.inter == "rhd" ? "/rhd" : "";
  const std::string cores = p.core_num > 1 ? " cores=" + std::to_string(p.core_num) : "";
  return request.kernel + inter + cores + " P=" + std::to_string(request.devices.size()) + " " +
         std::to_string(p.bytes()) + "B " + to_string(p.dtype) + " " + to_string(p.op) + " on " +
         request.platform.name + " [values " + platform_fingerprint(request.platform) + "]" +
         (ideal ? " (ideal)" : "") + (request.timing_only ? " (timing only)" : "");
}

// Why a point read back cannot be the run its key names ("" when it can): a file edited by
// hand, or mixed from another sweep.
std::string implausible(const nlohmann::json& run, const RunRequest& request) {
  if (run.contains("error")) return "";
  const std::uint64_t bytes = request.problem.bytes();
  if (run.at("P").get<int>() != static_cast<int>(request.devices.size()) ||
      run.at("ranks").size() != request.devices.size())
    return "its run has " + std::to_string(run.at("ranks").size()) + " ranks";
  if (run.at("bytes_per_rank").get<std::uint64_t>() != bytes)
    return "its run moves " + run.at("bytes_per_rank").dump() + " bytes per rank";
  const double time = run.at("device_time_ns").get<double>();
  if (!(time >= 0 && time <= 1e15)) return "its device time " + run.at("device_time_ns").dump();
  if (run.at("correct").get<bool>() != (run.at("mismatches").get<std::uint64_t>() == 0) &&
      run.at("checked").get<bool>() && run.at("completed").get<bool>())
    return "its result is called correct with " + run.at("mismatches").dump() + " mismatches";
  return "";
}

// A point read back from a points file, and where it was read.
struct KeptPoint {
  std::string run;    // the run's JSON
  std::string where;  // "points file 'F' line N"
};

// The points file: one JSON line per finished point, {"point": KEY, "run": RESULT}. A last
// line cut short (the sweep was killed while writing it) is not a point; the others are
// added to `kept`, by key. Returns the bytes up to the end of the last whole line.
std::uint64_t read_points(const std::string& path, std::map<std::string, KeptPoint>& kept) {
  std::error_code error;
  // A device or a pipe (/dev/zero, a FIFO) would be read forever, or never end.
  if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error))
    throw InputError("the points file '" + path + "' is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read the points file '" + path + "'");
  std::uint64_t whole = 0;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (in.eof()) break;  // no newline after it: cut short
    const std::string where = "points file '" + path + "' line " + std::to_string(number);
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (!j.at("run").is_object()) throw InputError(where + " is not a point");
      kept.emplace(j.at("point").get<std::string>(), KeptPoint{j.at("run").dump(), where});
    } catch (const nlohmann::json::exception&) {
      throw InputError(where + " is not a point");
    }
    whole += line.size() + 1;
  }
  return whole;
}

}  // namespace

double allreduce_busbw(double algbw, int ranks) {
  return algbw * 2.0 * (ranks - 1) / ranks;
}

std::vector<std::optional<std::size_t>> find_fastest(
    const std::vector<std::vector<double>>& ns_by_kernel) {
  const std::size_t sizes = ns_by_kernel.empty() ? 0 : ns_by_kernel.front().size();
  std::vector<std::optional<std::size_t>> fastest(sizes);
  for (std::size_t i = 0; i < sizes; ++i) {
    for (std::size_t k = 0; k < ns_by_kernel.size(); ++k) {
      const double t = ns_by_kernel[k][i];
      if (std::isnan(t)) continue;
      if (!fastest[i] || t < ns_by_kernel[*fastest[i]][i]) fastest[i] = k;
    }
  }
  return fastest;
}

std::size_t smallest_near_best(const std::vector<double>& times_ns, double margin) {
  const double best = *std::min_element(times_ns.begin(), times_ns.end());
  std::size_t i = 0;
  while (times_ns[i] > best * (1.0 + margin)) ++i;
  return i;
}

std::optional<std::size_t> find_crossover(const std::vector<double>& mesh_ns,
                                          const std::vector<double>& ring_ns, double tie_percent) {
  std::optional<std::size_t> from;
  for (std::size_t i = mesh_ns.size(); i-- > 0;) {
    if (!(ring_ns[i] < mesh_ns[i] * (1.0 - tie_percent / 100.0))) break;
    from = i;
  }
  return from;
}

int costcard_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    PlatformConfig cli_platform;  // receives nothing: platform keys are applied over the file
    po::options_description sweep("costcard options");
    sweep.add_options()("help,h", "show this help")("platform,p",
                                                    po::value<std::string>()->default_value("a2a3"),
                                                    "platform: a name in configs/ or an INI path")(
        "kernels", po::value<std::string>()->default_value("all"),
        "all (every one-core kernel with a card; host_mesh only when named) or a comma-separated "
        "list; builtin = builtin_mesh and "
        "builtin_ring")("ranks", po::value<std::string>()->default_value("2,4,8"),
                        "rank counts P, comma-separated")(
        "minbytes,b", po::value<std::string>()->default_value("1KiB"),
        "smallest size per rank: elements, or bytes with B, K/KiB, M/MiB, G/GiB, T/TiB")(
        "maxbytes,e", po::value<std::string>()->default_value("4MiB"), "largest size per rank")(
        "stepfactor,f", po::value<int>()->default_value(2), "size multiplication factor")(
        "dtype", po::value<std::string>()->default_value("fp32"), "fp32 or fp16")(
        "op", po::value<std::string>()->default_value("sum"), "reduce op: sum, max, min, prod")(
        "ideal",
        "run on the ideal platform: ranks launch together, memory ports never contend; every "
        "time must then equal its card within 1 %")(
        "rounds", "print every round of the slowest rank, measured and card")(
        "timing-only",
        "move no payload bytes and check no result (#wrong shows N/A): sweeps at thousands of "
        "ranks, whose real data would not fit in memory")(
        "core-num", po::value<std::string>()->default_value("1"),
        "core counts (SPMD blocks per rank) swept for the kernels that take one (host_mesh), "
        "comma-separated; the report names the smallest within 5 % of the fastest per size")(
        "csv", po::value<std::string>(), "write the points as CSV to FILE")(
        "shard", po::value<std::string>(),
        "K/N: run only every N-th point, starting with the K-th (1 <= K <= N)")(
        "points", po::value<std::string>(),
        "append every finished point to FILE as one JSON line, as soon as it is known")(
        "resume", "skip the points already in the --points FILE (a sweep that was stopped)")(
        "merge", po::value<std::vector<std::string>>()->multitoken(),
        "run nothing: print the sweep (same options) from the points FILES of its shards")(
        "jobs,j", po::value<int>()->default_value(2), "simulations run at once")(
        "inter", po::value<std::string>(),
        "the hierarchical kernel's allreduce between servers, ring (default) or rhd; with rhd "
        "its points are named hierarchical/rhd");
    po::options_description all;
    all.add(sweep).add(platform_options(cli_platform));
    const po::variables_map vm = parse_arguments(argc, argv, all);
    const std::string platform_path = resolve_platform_path(vm["platform"].as<std::string>());
    PlatformConfig platform = load_platform(platform_path, vm);
    if (vm.count("help")) {
      // The platform keys' defaults are the selected platform's values.
      po::options_description shown;
      shown.add(sweep).add(platform_options(platform));
      out << "usage: allreduce-sim costcard [--kernels all|LIST] [--ranks 2,4,8] [-b 1KiB] "
             "[-e 4MiB] [-f 2]\n"
             "                              [--dtype T] [--op OP] [-p PLATFORM] [--ideal] "
             "[--timing-only] [--csv FILE] [platform keys]\n\n"
          << shown
          << "\nExit codes: 0 every byte and round card holds, 1 a card fails, 2 bad input.\n";
      return 0;
    }
    const bool ideal = vm.count("ideal") > 0;
    if (ideal) platform = ideal_platform(platform);
    const bool timing_only = vm.count("timing-only") > 0;
    const DType dtype = parse_dtype(vm["dtype"].as<std::string>());
    const ReduceOp op = parse_op(vm["op"].as<std::string>());
    const std::vector<std::string> kernels = parse_kernels(vm["kernels"].as<std::string>(), err);
    const std::vector<int> ranks = parse_counts(
        "--ranks", vm["ranks"].as<std::string>(), 2, platform.devices,
        "a rank count from 2 to " + std::to_string(platform.devices) + " (the platform's devices)");
    const std::vector<int> core_nums = parse_counts(
        "--core-num", vm["core-num"].as<std::string>(), 1, platform.vector_cores,
        "a core count from 1 to " + std::to_string(platform.vector_cores) + " (vector.cores)");
    const std::uint64_t min_bytes =
        parse_bytes("-b/--minbytes", vm["minbytes"].as<std::string>(), dtype);
    const std::uint64_t max_bytes =
        parse_bytes("-e/--maxbytes", vm["maxbytes"].as<std::string>(), dtype);
    const int factor = vm["stepfactor"].as<int>();
    if (factor < 2) throw InputError("-f: the step factor must be at least 2");
    if (max_bytes < min_bytes)
      throw InputError("-e/--maxbytes: the largest size is below the smallest (-b)");
    const int jobs = vm["jobs"].as<int>();
    if (jobs < 1 || jobs > 64) throw InputError("--jobs: must be 1 to 64");
    OutputPaths outputs;
    outputs.read("-p", platform_path);
    if (vm.count("merge")) {
      for (const std::string& file : vm["merge"].as<std::vector<std::string>>())
        outputs.read("--merge", file);
    }
    const std::string csv_path = outputs.take(vm, "--csv");
    const Shard shard = vm.count("shard") ? parse_shard(vm["shard"].as<std::string>()) : Shard{};
    const std::string points_path = outputs.take(vm, "--points");
    const bool resume = vm.count("resume") > 0;
    const bool merge = vm.count("merge") > 0;
    if (resume && points_path.empty()) throw InputError("--resume: needs the --points FILE");
    if (merge && (!points_path.empty() || vm.count("shard"))) {
      throw InputError("--merge: prints shards already run; it takes no --points or --shard");
    }
    if (!points_path.empty() && !resume && std::filesystem::exists(points_path)) {
      throw InputError("--points: '" + points_path +
                       "' exists; add --resume to go on with it, or remove it");
    }
    const std::string inter = vm.count("inter") ? vm["inter"].as<std::string>() : "";
    if (!inter.empty() && inter != "ring" && inter != "rhd") {
      throw InputError("--inter: unknown algorithm '" + inter + "' (ring or rhd)");
    }
    if (!inter.empty() &&
        std::find(kernels.begin(), kernels.end(), "hierarchical") == kernels.end()) {
      throw InputError(
          "--inter: only the hierarchical kernel takes it, and --kernels does not list it");
    }

    const std::size_t element = dtype_bytes(dtype);
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t b = min_bytes; b <= max_bytes; b *= static_cast<std::uint64_t>(factor)) {
      sizes.push_back(b / element);
      if (b > max_bytes / static_cast<std::uint64_t>(factor)) break;  // the next size overflows
    }
    std::vector<Point> points;
    std::vector<RunRequest> requests;
    for (const std::string& kernel : kernels) {
      const bool takes_core_num = find_kernel(kernel).takes_core_num;
      for (int p : ranks) {
        for (int core_num : takes_core_num ? core_nums : std::vector<int>{1}) {
          for (std::uint64_t elements : sizes) {
            RunRequest request;
            request.platform = platform;
            for (int d = 0; d < p; ++d) request.devices.push_back(d);
            request.problem.ranks = p;
            request.problem.elements = elements;
            request.problem.dtype = dtype;
            request.problem.op = op;
            request.problem.core_num = core_num;
            if (const char* mode = builtin_mode(kernel)) request.problem.mode = mode;
            request.kernel = kernel;
            request.timing_only = timing_only;
            if (kernel == "hierarchical") request.problem.inter = inter;
            Point& point = points.emplace_back();
            point.kernel = kernel + (request.problem.inter == "rhd" ? "/rhd" : "");
            point.ranks = p;
            point.core_num = core_num;
            point.elements = elements;
            try {
              point.card = cost_card(kernel, request.problem, platform);
            } catch (const InputError& e) {
              point.run.error = e.what();
              point.run.refused = true;
              point.run.result.request = request;
            }
            requests.push_back(request);
          }
        }
      }
    }

    // The crossover is also shown on the ideal platform: the mesh and ring points once more,
    // run (and sharded, kept and merged) after the sweep's own points.
    std::vector<Point> ideal_points;
    const bool pairs = crossover_pair([&kernels](const char* k) {
      return std::find(kernels.begin(), kernels.end(), k) != kernels.end();
    });
    const std::size_t sweep_points = points.size();
    for (std::size_t i = 0; !ideal && pairs && i < sweep_points; ++i) {
      const std::string& k = points[i].kernel;
      if (!points[i].run.error.empty() ||
          (k != "mesh" && k != "ring" && k != "builtin_mesh" && k != "builtin_ring")) {
        continue;
      }
      ideal_points.push_back(points[i]);
      requests.push_back(requests[i]);
      requests.back().platform = ideal_platform(platform);
    }
    const auto point_at = [&](std::size_t i) -> Point& {
      return i < sweep_points ? points[i] : ideal_points[i - sweep_points];
    };

    // Points already run (a resumed points file, or the shards to merge), by key.
    std::map<std::string, KeptPoint> kept;
    if (merge) {
      for (const std::string& file : vm["merge"].as<std::vector<std::string>>())
        read_points(file, kept);
    } else if (resume && std::filesystem::exists(points_path)) {
      // Appending goes after the last whole line: a line cut short is dropped.
      std::filesystem::resize_file(points_path, read_points(points_path, kept));
    }
    std::vector<RunRequest> to_run;
    std::vector<std::size_t> to_run_index;
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      keys.push_back(point_key(requests[i], ideal || i >= sweep_points));
      if (i % shard.count != shard.index - 1) continue;
      const auto found = kept.find(keys[i]);
      if (!point_at(i).run.error.empty()) {
        // The card refused the point: nothing to run.
      } else if (found != kept.end()) {
        try {
          const std::string wrong =
              implausible(nlohmann::json::parse(found->second.run), requests[i]);
          if (!wrong.empty())
            throw InputError(found->second.where + " is not the point it names: " + wrong);
          point_at(i).run = batch_result_from_json(found->second.run, requests[i]);
        } catch (const nlohmann::json::exception& e) {
          throw InputError(found->second.where + ": its run cannot be read back (" + e.what() +
                           ")");
        }
      } else if (merge) {
        throw InputError("--merge: the point " + keys[i] + " is in none of the files");
      } else {
        to_run.push_back(requests[i]);
        to_run_index.push_back(i);
      }
    }
    {
      std::ofstream points_file;
      if (!points_path.empty()) points_file.open(points_path, std::ios::app | std::ios::binary);
      // Only the process's stderr can be a terminal; any other stream is a file or a buffer.
      Progress progress(err, &err == &std::cerr && ::isatty(STDERR_FILENO) == 1);
      const std::vector<BatchResult> runs =
          run_batch(to_run, jobs, std::ref(progress),
                    [&](std::size_t i, const BatchResult&, const std::string& json) {
                      if (!points_file.is_open()) return;
                      const nlohmann::json line = {{"point", keys[to_run_index[i]]},
                                                   {"run", nlohmann::json::parse(json)}};
                      points_file << line.dump() << "\n" << std::flush;
                    });
      for (std::size_t r = 0; r < runs.size(); ++r) point_at(to_run_index[r]).run = runs[r];
    }
    // The points this process shows: every point, or its shard's, in sweep order.
    std::vector<Point> shown;
    for (std::size_t i = 0; i < sweep_points; ++i) {
      if (i % shard.count == shard.index - 1) shown.push_back(points[i]);
    }
    std::vector<Point> shown_ideal;
    for (std::size_t i = 0; i < ideal_points.size(); ++i) {
      if ((sweep_points + i) % shard.count == shard.index - 1)
        shown_ideal.push_back(ideal_points[i]);
    }
    points = std::move(shown);
    ideal_points = std::move(shown_ideal);
    // Written before the report, so that a CSV that cannot be written leaves only the error.
    if (!csv_path.empty()) write_file(csv_path, csv(points, ideal));

    out << "costcard on " << platform.name << (ideal ? " (ideal)" : "") << ", "
        << to_string(platform.topology) << ", dma.queues = " << platform.dma_queues
        << (platform.dma_queues == 1 ? " (one queue pulls peers in turn)"
                                     : " (several pulls at once)")
        << ", " << to_string(dtype) << " " << to_string(op) << "\n";
    if (!points.empty() && points.front().run.error.empty()) {
      const CardTerms& t = points.front().card.terms;
      out << std::setprecision(6) << "terms: alpha " << t.alpha_ns << " ns, alpha_local "
          << t.alpha_local_ns << " ns, notify " << t.notify_ns << " ns, signal flight "
          << t.signal_flight_ns << " ns, beta " << t.beta_ns_per_byte << " ns/B, beta_local "
          << t.beta_local_ns_per_byte << " ns/B, gamma " << t.gamma_ns_per_byte << " ns/B, gamma_0 "
          << t.gamma_startup_ns << " ns\n\n";
    }
    print_points(out, points, vm.count("rounds") > 0);
    print_nccl_tables(out, points);
    print_crossovers(out, points, ideal_points, ranks, sizes, element);
    print_fastest(out, points, ranks, sizes, element);
    print_core_counts(out, points);

    int card_failures = 0;
    int time_misses = 0;
    int refused = 0;
    int not_run = 0;
    int wrong = 0;
    for (const Point& p : points) {
      if (p.run.refused) {
        ++refused;
        continue;
      }
      if (!p.run.error.empty() || !p.run.result.completed) {
        ++not_run;
        continue;
      }
      if (p.run.result.checked && !p.run.result.correct) ++wrong;
      const Checks c = check(p);
      card_failures += (c.bytes_ok ? 0 : 1) + (c.rounds_ok ? 0 : 1);
      time_misses +=
          std::fabs(pct(p.run.result.device_time_ns, p.card.time_ns)) > kTimeTolerancePct ? 1 : 0;
    }
    out << "\n"
        << points.size() << " points: " << refused << " refused (bad input), " << not_run
        << " did not run to the end, " << wrong << " wrong results, " << card_failures
        << " byte/round card failures, " << time_misses << " times off their card by more than "
        << std::fixed << std::setprecision(1) << kTimeTolerancePct << " %"
        << (ideal ? "" : " (attributed above)") << "\n";
    // A point its kernel or card refuses is bad input, as for one run.
    if (refused > 0) return 2;
    return card_failures == 0 && not_run == 0 && wrong == 0 ? 0 : 1;
  } catch (const InputError& e) {
    err << "allreduce-sim costcard: error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace ars
