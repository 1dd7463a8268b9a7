#include "sim/studies/cards.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <numeric>

#include "kernels/cluster/hierarchical.h"
#include "kernels/cluster/rhd.h"
#include "kernels/ladder/host_mesh.h"
#include "kernels/ladder/ring.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"
#include "models/fabric/fabric.h"
#include "sim/config/codegen.h"

namespace ars {

namespace {

// The platform's costs in ps and bytes per ps, as the models charge them.
struct Costs {
  Costs(const PlatformConfig& c, ReduceOp op)
      : config(c),
        fabric(c),
        ps_per_cycle(1000.0 / c.clock_GHz),
        setup(c.dma_setup_cycles * ps_per_cycle),
        mte2(c.dma_mte2_bytes_per_cycle / ps_per_cycle),
        mte3(c.dma_mte3_bytes_per_cycle / ps_per_cycle),
        remote(c.dma_remote_bytes_per_cycle / ps_per_cycle),
        gm(c.gm_bandwidth_GBps * 1e-3),
        gm_read(c.gm_read_latency_cycles * ps_per_cycle),
        gm_write(c.gm_write_latency_cycles * ps_per_cycle),
        pipe_barrier(barrier_cycles(c) * ps_per_cycle),
        notify((c.codegen.notify_flush * c.cache_flush_cycles + c.notify_cycles) * ps_per_cycle),
        poll(c.poll_period_cycles * ps_per_cycle),
        // Cards run without a codegen profile (the default lowering) or with the runtime's own
        // synchronisation, so an invalidate follows every wait or none.
        invalidate(c.codegen.wait_invalidate == Codegen::WaitInvalidate::None
                       ? 0.0
                       : c.cache_invalidate_cycles * ps_per_cycle),
        vector_startup(c.reduce_startup_cycles(op == ReduceOp::Prod) * ps_per_cycle),
        vector_rate(c.vector_bytes_per_cycle / ps_per_cycle) {}

  // One-way latency of the interconnect between two devices (0 on the same device).
  double path_latency(int from, int to) const { return fabric.route(from, to).latency_ps; }
  // Rate of the slowest link from one device to another.
  double path_rate(int from, int to) const { return fabric.route(from, to).bytes_per_ps; }

  // The barrier before a notify: a pipe barrier (free right after another notify, whose own
  // closing pipe barrier left the pipes idle), a drain, or none.
  static double barrier_cycles(const PlatformConfig& c) {
    switch (c.codegen.notify_barrier) {
      case Codegen::NotifyBarrier::PipeAll:
        return c.pipe_barrier_cycles;
      case Codegen::NotifyBarrier::Drain:
        return c.drain_cycles;
      case Codegen::NotifyBarrier::None:
        break;
    }
    return 0;
  }
  // The barrier a notify pays when it follows another at once.
  double barrier_after_notify() const {
    return config.codegen.notify_barrier == Codegen::NotifyBarrier::PipeAll ? 0.0 : pipe_barrier;
  }

  // How long a notify from `from` to `to` keeps the core after its barrier: its costs before
  // the write leaves, and with acknowledged notifies the atomic's flight, its write and the
  // reply's flight.
  double notify_time(int from, int to) const {
    if (config.notify_acknowledged == 0) return notify;
    return notify + path_latency(from, to) + gm_write + path_latency(to, from);
  }

  // A wait that starts `lead` ps before its notify lands: polls at multiples of the period,
  // answered one period after the look that sees the value, then the invalidate.
  double wait(double lead) const {
    const double looks = lead <= 0 || poll <= 0 ? 0 : std::ceil(lead / poll - 1e-9);
    return (looks + 1) * poll + invalidate;
  }

  const PlatformConfig& config;
  Fabric fabric;
  double ps_per_cycle, setup, mte2, mte3, remote, gm, gm_read, gm_write, pipe_barrier, notify, poll,
      invalidate, vector_startup, vector_rate;
};

// One rank's timeline, replaying a kernel's operations against the costs: the DMA queues
// are FIFO servers, blocking calls advance `now`, waits see the symmetric peer's notify.
class Timeline {
 public:
  Timeline(const Costs& costs, int rank, int ranks, int block = 0)
      : c_(costs),
        rank_(rank),
        ranks_(ranks),
        block_(block),
        queue_free_(costs.config.dma_queues, 0.0) {}

  // The unified buffer the kernel tiles for.
  std::uint64_t ub_bytes() const { return c_.config.ub_usable_bytes; }

  void begin_round(const char* phase) {
    CardRound round;
    round.phase = phase;
    round.start_ns = now_ / 1000.0;
    card_.rounds.push_back(round);
  }

  // A transfer of `bytes` at byte offset `offset` of a 512-aligned tensor on rank `peer`;
  // returns when its data has landed.
  double submit(bool read, int peer, std::uint64_t offset, std::uint64_t bytes) {
    const bool remote = peer != rank_;
    double rate = remote ? c_.remote : (read ? c_.mte2 : c_.mte3);
    if (offset % c_.config.dma_full_rate_alignment != 0) {
      rate *= c_.config.dma_misaligned_rate_factor;
    }
    auto queue = std::min_element(queue_free_.begin(), queue_free_.end());
    const double start = std::max({now_, *queue, last_start_}) + c_.setup;
    const double issued = start + static_cast<double>(bytes) / rate;
    // Bursts stream through the link (remote) and the memory port behind each other.
    double tail = start + static_cast<double>(bytes) / c_.gm;
    if (remote) {
      // A read's data flows from the peer, a write's to it.
      const double link = read ? c_.path_rate(peer, rank_) : c_.path_rate(rank_, peer);
      double& link_free = link_free_[peer];
      tail = std::max(tail, std::max(start, link_free) + static_cast<double>(bytes) / link);
      link_free = tail;
    }
    // A read's request crosses to the peer first; the data then comes back.
    const double latency = (read ? c_.path_latency(rank_, peer) + c_.gm_read : c_.gm_write) +
                           c_.path_latency(peer, rank_);
    *queue = issued;
    last_start_ = start - c_.setup;
    if (remote) {
      (read ? card_.remote_read_bytes : card_.remote_write_bytes) += bytes;
      round().remote_bytes += bytes;
    }
    return std::max(issued, tail) + latency;
  }
  void sync(double done) {
    const double until = std::max(now_, done);
    round().transfer_ns += (until - now_) / 1000.0;
    now_ = until;
  }
  void load(std::uint64_t offset, std::uint64_t bytes) { sync(submit(true, rank_, offset, bytes)); }
  void store(std::uint64_t offset, std::uint64_t bytes) {
    sync(submit(false, rank_, offset, bytes));
  }
  // A store the core does not wait for with dma.posted_stores = 1; the next barrier's pipe
  // barrier waits until it has landed. The kernels that post stores never reuse their UB
  // bytes or GM range before that, so nothing else waits for it.
  void post_store(std::uint64_t offset, std::uint64_t bytes) {
    const double landed = submit(false, rank_, offset, bytes);
    if (c_.config.dma_posted_stores == 0) {
      sync(landed);
    } else {
      posted_until_ = std::max(posted_until_, landed);
    }
  }
  void remote_load(int peer, std::uint64_t offset, std::uint64_t bytes) {
    sync(submit(true, peer, offset, bytes));
  }
  void reduce(std::uint64_t bytes) {
    spend_barrier_or_reduce(c_.vector_startup + static_cast<double>(bytes) / c_.vector_rate,
                            &CardRound::reduce_ns);
  }
  // Returns when the notify's write has left the core.
  double notify(int peer) {
    ++card_.notifies;
    spend_barrier_or_reduce(now_ == notify_end_ ? c_.barrier_after_notify() : c_.pipe_barrier,
                            &CardRound::barrier_ns);
    const double sent = now_ + c_.notify;
    spend_barrier_or_reduce(c_.notify_time(rank_, peer), &CardRound::barrier_ns);
    notify_end_ = now_;
    return sent;
  }
  // Waits for a notify that left `from`'s core at `sent`.
  void wait(int from, double sent) {
    ++card_.waits;
    const double lands = sent + c_.path_latency(from, rank_) + c_.gm_write;
    spend_barrier_or_reduce(c_.wait(lands - now_), &CardRound::barrier_ns);
  }
  // The full-mesh barrier of kernels/ladder/barrier.cpp: notify every peer in rank order, then wait
  // for every peer in rank order. Peer q entered when this rank did and notifies this rank
  // as its (me - (me > q))-th notify.
  void barrier() {
    sync(posted_until_);
    const double entered = now_;
    for (int peer = 0; peer < ranks_; ++peer) {
      if (peer != rank_) notify(peer);
    }
    for (int src = 0; src < ranks_; ++src) {
      if (src == rank_) continue;
      double sent = entered + c_.pipe_barrier;
      for (int peer = 0; peer < rank_; ++peer) {
        if (peer != src) sent += c_.barrier_after_notify() + c_.notify_time(src, peer);
      }
      wait(src, sent + c_.notify);
    }
  }
  // Notifies to cells of the rank's own signal (the builtins' self-clearing epilogues).
  void self_notifies(int count) {
    for (int i = 0; i < count; ++i) notify(rank_);
  }
  double now() const { return now_; }
  int rank() const { return rank_; }
  int block() const { return block_; }

  RankCard finish() {
    for (std::size_t i = 0; i < card_.rounds.size(); ++i) {
      const double end = i + 1 < card_.rounds.size() ? card_.rounds[i + 1].start_ns : now_ / 1000;
      card_.rounds[i].time_ns = end - card_.rounds[i].start_ns;
    }
    card_.time_ns = now_ / 1000.0;
    return card_;
  }

 private:
  CardRound& round() {
    if (card_.rounds.empty()) begin_round("kernel");
    return card_.rounds.back();
  }
  void spend_barrier_or_reduce(double ps, double CardRound::*bucket) {
    round().*bucket += ps / 1000.0;
    now_ += ps;
  }

  const Costs& c_;
  int rank_;
  int ranks_;
  int block_;
  double now_ = 0;
  double notify_end_ = -1;  // when the last notify ended (none yet: never)
  std::vector<double> queue_free_;
  double last_start_ = 0;    // FIFO: no transfer starts before an earlier one
  double posted_until_ = 0;  // when the posted stores have all landed
  std::map<int, double> link_free_;
  RankCard card_;
};

using Chunks = TileRange;

// Stage-in or stage-out: every tile of the vector loaded and stored (byte offsets).
void copy_vector(Timeline& t, const Chunks& tiles, std::uint64_t element) {
  for (const auto& [offset, count] : tiles) {
    t.load(offset * element, count * element);
    t.store(offset * element, count * element);
  }
}

// The same, chunk by chunk (the kernels that cut the vector into P chunks copy it so).
void copy_chunks(Timeline& t, int ranks, std::uint64_t chunk, const Chunks& tiles,
                 std::uint64_t element) {
  for (int q = 0; q < ranks; ++q) {
    for (const auto& [offset, count] : tiles) {
      const std::uint64_t at = (q * chunk + offset) * element;
      t.load(at, count * element);
      t.store(at, count * element);
    }
  }
}

// Pulls issued at once, then each synced and reduced in turn (kernels/ladder/mesh.cpp).
void pull_and_reduce(Timeline& t, const std::vector<int>& peers, std::uint64_t offset,
                     std::uint64_t bytes) {
  std::vector<double> done;
  for (int peer : peers) done.push_back(t.submit(true, peer, offset, bytes));
  for (double d : done) {
    t.sync(d);
    t.reduce(bytes);
  }
}

std::vector<int> peers_from(int me, int ranks, int first) {
  std::vector<int> peers;
  for (int k = first; k < ranks; ++k) peers.push_back((me + k) % ranks);
  return peers;
}

void mesh(Timeline& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const Chunks tiles = Tiling(p.elements, p.dtype, p.ranks, t.ub_bytes()).chunks();
  t.begin_round("stage-in");
  copy_vector(t, tiles, element);
  t.begin_round("barrier");
  t.barrier();
  t.begin_round("exchange");
  for (const auto& [offset, count] : tiles) {
    t.load(offset * element, count * element);
    pull_and_reduce(t, peers_from(t.rank(), p.ranks, 1), offset * element, count * element);
    t.store(offset * element, count * element);
  }
}

void two_phase(Timeline& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const std::uint64_t chunk = p.elements / p.ranks;
  const Chunks tiles = Tiling(chunk, p.dtype, p.ranks, t.ub_bytes()).chunks();
  const std::uint64_t own = t.rank() * chunk;
  t.begin_round("stage-in");
  copy_chunks(t, p.ranks, chunk, tiles, element);
  t.begin_round("barrier A");
  t.barrier();
  t.begin_round("reduce-scatter");
  for (const auto& [offset, count] : tiles) {
    t.load((own + offset) * element, count * element);
    pull_and_reduce(t, peers_from(t.rank(), p.ranks, 1), (own + offset) * element, count * element);
    t.store(offset * element, count * element);
  }
  t.begin_round("barrier B");
  t.barrier();
  t.begin_round("all-gather");
  for (const auto& [offset, count] : tiles) {
    std::vector<double> done;
    for (int peer : peers_from(t.rank(), p.ranks, 0)) {
      done.push_back(t.submit(true, peer, offset * element, count * element));
    }
    for (int k = 0; k < p.ranks; ++k) {
      t.sync(done[k]);
      const std::uint64_t owner = (t.rank() + k) % p.ranks;
      t.store((owner * chunk + offset) * element, count * element);
    }
  }
}

// kernels/ladder/ring.cpp's pull_into_window: elements [begin, ...) of `peer`'s window, tile
// by tile.
void pull_into_window(Timeline& t, int peer, std::uint64_t begin, const Chunks& tiles, bool reduces,
                      std::uint64_t element) {
  for (const auto& [offset, count] : tiles) {
    const std::uint64_t at = (begin + offset) * element;
    t.remote_load(peer, at, count * element);
    if (reduces) {
      t.load(at, count * element);
      t.reduce(count * element);
    }
    t.store(at, count * element);
  }
}

// The tiles of a pull of `elements` through tiles of `tile` elements (kernels/ladder/ring.h).
Chunks pull_tiles(const Timeline& t, std::uint64_t elements, DType dtype, std::uint64_t tile) {
  return pull_tiling(elements, Tile{0, tile, dtype}, t.ub_bytes()).chunks();
}

// Every rank's timeline. The schedules below that are not symmetric (groups, folds) replay all
// ranks step by step, so that every wait sees the time its notify really left its sender.
using Ranks = std::vector<Timeline>;

// Ranks of one group allreduce and the elements [base, base + elements) it reduces.
struct GroupRange {
  std::vector<int> ranks;
  std::uint64_t base;
  std::uint64_t elements;
};

// kernels/ladder/ring.cpp's ring_allreduce in every group, round by round.
void ring_groups(Ranks& t, const std::vector<GroupRange>& groups, DType dtype, std::uint64_t tile) {
  const std::uint64_t element = dtype_bytes(dtype);
  for (const GroupRange& g : groups) {
    const int size = static_cast<int>(g.ranks.size());
    const int rounds = 2 * (size - 1);
    auto rank_at = [&](int position) {
      return g.ranks[static_cast<std::size_t>((position + size) % size)];
    };
    std::vector<double> sent(g.ranks.size());
    for (int i = 0; i < size && rounds > 0; ++i) sent[i] = t[rank_at(i)].notify(rank_at(i + 1));
    for (int s = 0; s < rounds; ++s) {
      std::vector<double> next(g.ranks.size());
      for (int i = 0; i < size; ++i) {
        Timeline& me = t[rank_at(i)];
        const RingRound round = ring_round(i, size, s);
        me.begin_round(round.reduces ? "RS" : "AG");
        me.wait(rank_at(i - 1), sent[(i - 1 + size) % size]);
        const std::uint64_t from = split_point(g.elements, size, round.chunk);
        const std::uint64_t to = split_point(g.elements, size, round.chunk + 1);
        pull_into_window(me, rank_at(i - 1), g.base + from, pull_tiles(me, to - from, dtype, tile),
                         round.reduces, element);
        if (s + 1 < rounds) next[i] = me.notify(rank_at(i + 1));
      }
      sent = next;
    }
  }
}

// kernels/cluster/rhd.cpp's rhd_allreduce in every group, step by step.
void rhd_groups(Ranks& t, const std::vector<GroupRange>& groups, DType dtype, std::uint64_t tile) {
  const std::uint64_t element = dtype_bytes(dtype);
  for (const GroupRange& g : groups) {
    const int size = static_cast<int>(g.ranks.size());
    const int core = 1 << rhd_steps(size);
    std::vector<RhdPlan> plans;
    for (int i = 0; i < size; ++i) plans.push_back(rhd_plan(i, size, g.elements));
    auto pull = [&](int i, int partner, std::uint64_t begin, std::uint64_t end, bool reduces) {
      Timeline& me = t[g.ranks[i]];
      pull_into_window(me, g.ranks[partner], g.base + begin,
                       pull_tiles(me, end - begin, dtype, tile), reduces, element);
    };
    std::vector<double> sent(g.ranks.size());
    for (int i = core; i < size; ++i) {
      t[g.ranks[i]].begin_round("fold");
      sent[i] = t[g.ranks[i]].notify(g.ranks[plans[i].fold_partner]);
    }
    for (int i = 0; i + core < size; ++i) {
      t[g.ranks[i]].begin_round("fold");
      t[g.ranks[i]].wait(g.ranks[i + core], sent[i + core]);
      pull(i, i + core, 0, g.elements, true);
    }
    for (const bool reduces : {true, false}) {
      const std::size_t steps = plans[0].reduce_scatter.size();
      for (std::size_t k = 0; k < steps; ++k) {
        auto step = [&](int i) {
          return (reduces ? plans[i].reduce_scatter : plans[i].all_gather)[k];
        };
        for (int i = 0; i < core; ++i) {
          t[g.ranks[i]].begin_round(reduces ? "RS" : "AG");
          sent[i] = t[g.ranks[i]].notify(g.ranks[step(i).partner]);
        }
        for (int i = 0; i < core; ++i) {
          t[g.ranks[i]].wait(g.ranks[step(i).partner], sent[step(i).partner]);
          pull(i, step(i).partner, step(i).begin, step(i).end, reduces);
        }
      }
    }
    for (int i = 0; i + core < size; ++i) {
      t[g.ranks[i]].begin_round("hand-back");
      sent[i] = t[g.ranks[i]].notify(g.ranks[i + core]);
    }
    for (int i = core; i < size; ++i) {
      t[g.ranks[i]].begin_round("hand-back");
      t[g.ranks[i]].wait(g.ranks[i - core], sent[i - core]);
      pull(i, i - core, 0, g.elements, false);
    }
  }
}

// kernels/ladder/barrier.cpp's row_barrier inside every group.
void group_barriers(Ranks& t, const std::vector<std::vector<int>>& groups) {
  for (const std::vector<int>& g : groups) {
    std::vector<std::vector<double>> sent(g.size(), std::vector<double>(g.size()));
    for (std::size_t a = 0; a < g.size(); ++a) {
      for (std::size_t b = 0; b < g.size(); ++b) {
        if (a != b) sent[a][b] = t[g[a]].notify(g[b]);
      }
    }
    for (std::size_t a = 0; a < g.size(); ++a) {
      for (std::size_t b = 0; b < g.size(); ++b) {
        if (a != b) t[g[a]].wait(g[b], sent[b][a]);
      }
    }
  }
}

void begin_rounds(Ranks& t, const char* phase) {
  for (Timeline& rank : t) rank.begin_round(phase);
}

std::vector<int> all_ranks(int ranks) {
  std::vector<int> everyone(static_cast<std::size_t>(ranks));
  std::iota(everyone.begin(), everyone.end(), 0);
  return everyone;
}

void ring(Ranks& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const std::uint64_t chunk = p.elements / p.ranks;
  const Tiling tiling(chunk, p.dtype, 2, t[0].ub_bytes());
  begin_rounds(t, "stage-in");
  for (Timeline& rank : t) copy_chunks(rank, p.ranks, chunk, tiling.chunks(), element);
  ring_groups(t, {{all_ranks(p.ranks), 0, p.elements}}, p.dtype, tiling.tile_elements);
  begin_rounds(t, "stage-out");
  for (Timeline& rank : t) copy_chunks(rank, p.ranks, chunk, tiling.chunks(), element);
}

void rhd(Ranks& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const Tiling tiling(p.elements, p.dtype, 2, t[0].ub_bytes());
  begin_rounds(t, "stage-in");
  for (Timeline& rank : t) copy_vector(rank, tiling.chunks(), element);
  rhd_groups(t, {{all_ranks(p.ranks), 0, p.elements}}, p.dtype, tiling.tile_elements);
  begin_rounds(t, "stage-out");
  for (Timeline& rank : t) copy_vector(rank, tiling.chunks(), element);
}

// kernels/cluster/hierarchical.cpp: stage-in, a barrier per server, the reduce-scatter of the own
// chunk from the server peers, the allreduce of chunk i among the ranks with local index i, a
// second barrier per server, the all-gather from the server peers into y.
void hierarchical(Ranks& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const std::vector<std::vector<int>> servers = server_groups(p);
  const int size = static_cast<int>(servers.front().size());
  const int in_flight = std::max(size, 2);
  const std::uint64_t ub = t[0].ub_bytes();
  const Tiling staging(p.elements, p.dtype, in_flight, ub);
  auto begin = [&](int chunk) { return split_point(p.elements, size, chunk); };
  auto length = [&](int chunk) { return begin(chunk + 1) - begin(chunk); };
  std::uint64_t longest = 0;
  for (int j = 0; j < size; ++j) longest = std::max(longest, length(j));

  begin_rounds(t, "stage-in");
  for (Timeline& rank : t) copy_vector(rank, staging.chunks(), element);
  begin_rounds(t, "barrier A");
  group_barriers(t, servers);
  for (const std::vector<int>& peers : servers) {
    for (int local = 0; local < size; ++local) {
      Timeline& me = t[peers[local]];
      std::vector<int> others;
      for (int k = 1; k < size; ++k) others.push_back(peers[(local + k) % size]);
      me.begin_round("intra RS");
      for (const auto& [offset, count] : Tiling(length(local), p.dtype, in_flight, ub).chunks()) {
        const std::uint64_t at = (begin(local) + offset) * element;
        me.load(at, count * element);
        pull_and_reduce(me, others, at, count * element);
        me.store(at, count * element);
      }
    }
  }
  std::vector<GroupRange> inter;
  for (int local = 0; local < size; ++local) {
    GroupRange g{{}, begin(local), length(local)};
    for (const std::vector<int>& peers : servers) g.ranks.push_back(peers[local]);
    inter.push_back(g);
  }
  if (inter_is_rhd(p)) {
    rhd_groups(t, inter, p.dtype, staging.tile_elements);
  } else {
    ring_groups(t, inter, p.dtype, staging.tile_elements);
  }
  begin_rounds(t, "barrier B");
  group_barriers(t, servers);
  for (const std::vector<int>& peers : servers) {
    for (int local = 0; local < size; ++local) {
      Timeline& me = t[peers[local]];
      me.begin_round("intra AG");
      for (const auto& [offset, full] : Tiling(longest, p.dtype, in_flight, ub).chunks()) {
        std::vector<std::pair<double, std::uint64_t>> pulls;  // done, byte offset
        std::vector<std::uint64_t> bytes;
        for (int k = 0; k < size; ++k) {
          const int chunk = (local + k) % size;
          if (offset >= length(chunk)) continue;
          const std::uint64_t at = (begin(chunk) + offset) * element;
          bytes.push_back(std::min(full, length(chunk) - offset) * element);
          pulls.emplace_back(me.submit(true, peers[chunk], at, bytes.back()), at);
        }
        for (std::size_t k = 0; k < pulls.size(); ++k) {
          me.sync(pulls[k].first);
          me.store(pulls[k].second, bytes[k]);
        }
      }
    }
  }
}

void host_ring(Timeline& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const std::uint64_t chunk = p.elements / p.ranks;
  const Tiling staging(chunk, p.dtype, 2, t.ub_bytes());
  const Chunks tiles = host_ring_tiling(staging).chunks();
  const int rounds = 2 * (p.ranks - 1);
  t.begin_round("stage-in");
  copy_chunks(t, p.ranks, chunk, staging.chunks(), element);
  for (int s = 0; s < rounds; ++s) {
    const RingRound round = ring_round(t.rank(), p.ranks, s);
    t.begin_round(round.reduces ? "RS" : "AG");
    t.barrier();
    pull_into_window(t, (t.rank() - 1 + p.ranks) % p.ranks, round.chunk * chunk, tiles,
                     round.reduces, element);
  }
  t.begin_round("final barrier");
  t.barrier();
  t.begin_round("stage-out");
  copy_chunks(t, p.ranks, chunk, staging.chunks(), element);
}

// Spec 3.1 as kernels/ladder/builtin_mesh.cpp lowers it: stage-in, a ready barrier, then per 16 KiB
// chunk an own load, a pull and reduce per peer in turn, a chunk barrier and a store; a
// self-clearing epilogue, stage-out.
void builtin_mesh(Timeline& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const Chunks tiles = Tiling(p.elements, p.dtype, 2, t.ub_bytes()).chunks();
  t.begin_round("stage-in");
  copy_vector(t, tiles, element);
  t.begin_round("ready");
  t.barrier();
  t.begin_round("exchange");
  for (const auto& [offset, count] : tiles) {
    t.load(offset * element, count * element);
    for (int peer : peers_from(t.rank(), p.ranks, 1)) {
      t.remote_load(peer, offset * element, count * element);
      t.reduce(count * element);
    }
    t.barrier();
    t.store(offset * element, count * element);
  }
  t.begin_round("epilogue");
  t.self_notifies(p.ranks - 1);
  t.begin_round("stage-out");
  copy_vector(t, tiles, element);
}

// Spec 3.2 as kernels/ladder/builtin_ring.cpp lowers it: stage-in; per round and subchunk a ready
// barrier, (RS: an own load) a pull from the left (RS: a reduce), a read-complete barrier and
// a store; the epilogue, stage-out.
void builtin_ring(Timeline& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const std::vector<std::uint64_t> bounds = ring_segment_bounds(p.elements, p.dtype, p.ranks);
  std::uint64_t longest = 0;
  for (int i = 0; i < p.ranks; ++i) longest = std::max(longest, bounds[i + 1] - bounds[i]);
  const std::uint64_t sub = Tiling(longest, p.dtype, 2, t.ub_bytes()).tile_elements;
  const std::uint64_t subchunks = (longest + sub - 1) / sub;
  const Chunks staging = Tiling(p.elements, p.dtype, 2, t.ub_bytes()).chunks();
  const int left = (t.rank() - 1 + p.ranks) % p.ranks;
  const int rounds = 2 * (p.ranks - 1);
  t.begin_round("stage-in");
  copy_vector(t, staging, element);
  for (int s = 0; s < rounds; ++s) {
    const RingRound r = ring_round(t.rank(), p.ranks, s);
    t.begin_round(r.reduces ? "RS" : "AG");
    const std::uint64_t end = bounds[r.chunk + 1];
    for (std::uint64_t k = 0; k < subchunks; ++k) {
      const std::uint64_t from = bounds[r.chunk] + k * sub;
      const std::uint64_t count = from < end ? std::min(sub, end - from) : 0;
      t.barrier();
      if (count > 0) {
        if (r.reduces) t.load(from * element, count * element);
        t.remote_load(left, from * element, count * element);
        if (r.reduces) t.reduce(count * element);
      }
      t.barrier();
      if (count > 0) t.store(from * element, count * element);
    }
  }
  t.begin_round("epilogue");
  t.self_notifies(rounds * (p.ranks - 1));
  t.begin_round("stage-out");
  copy_vector(t, staging, element);
}

// kernels/ladder/host_mesh.cpp, one block: tiles 0 and 1 staged (a local load and a store into the
// window) and a barrier on the block's lane; then per tile k its pulls and the load of tile
// k + 2 issued, tile k + 1's barrier while they fly, each pull synced and reduced, the store into
// y and tile k + 2's store into the window, both posted; a final barrier and the epilogue.
// Blocks share the device's link and memory port, which this card leaves out: it is exact for
// one block (and for blocks whose traffic never meets).
void host_mesh(Timeline& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const auto tiles = host_mesh_block_tiles(p.elements, t.block(), p.core_num);
  const auto offset = [&](std::size_t k) { return tiles[k].first * element; };
  const auto bytes = [&](std::size_t k) { return tiles[k].second * element; };
  t.begin_round("exchange");
  for (std::size_t k = 0; k < std::min<std::size_t>(tiles.size(), 2); ++k) {
    t.load(offset(k), bytes(k));
    t.post_store(offset(k), bytes(k));
  }
  if (!tiles.empty()) t.barrier();
  for (std::size_t k = 0; k < tiles.size(); ++k) {
    std::vector<double> pulls;
    for (int peer : peers_from(t.rank(), p.ranks, 1)) {
      pulls.push_back(t.submit(true, peer, offset(k), bytes(k)));
    }
    const bool ahead = k + 2 < tiles.size();
    const double load_ahead = ahead ? t.submit(true, t.rank(), offset(k + 2), bytes(k + 2)) : 0;
    if (k + 1 < tiles.size()) t.barrier();
    for (double done : pulls) {
      t.sync(done);
      t.reduce(bytes(k));
    }
    t.post_store(offset(k), bytes(k));
    if (ahead) {
      t.sync(load_ahead);
      t.post_store(offset(k + 2), bytes(k + 2));
    }
  }
  t.begin_round("final barrier");
  t.barrier();
  t.begin_round("epilogue");
  t.self_notifies(p.ranks - 1);
}

using Schedule = void (*)(Ranks&, const Problem&);

// A schedule whose ranks are symmetric, replayed rank by rank.
template <void (*schedule)(Timeline&, const Problem&)>
void each_rank(Ranks& t, const Problem& p) {
  for (Timeline& rank : t) schedule(rank, p);
}

const std::vector<std::pair<std::string, Schedule>>& schedules() {
  static const std::vector<std::pair<std::string, Schedule>> table = {
      {"mesh", each_rank<mesh>},
      {"two_phase", each_rank<two_phase>},
      {"ring", ring},
      {"host_ring", each_rank<host_ring>},
      {"builtin_mesh", each_rank<builtin_mesh>},
      {"builtin_ring", each_rank<builtin_ring>},
      {"host_mesh", each_rank<host_mesh>},
      {"rhd", rhd},
      {"hierarchical", hierarchical},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& card_kernels() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : schedules()) out.push_back(entry.first);
    return out;
  }();
  return names;
}

Card cost_card(const std::string& kernel, const Problem& problem, const PlatformConfig& config) {
  const auto entry = std::find_if(schedules().begin(), schedules().end(),
                                  [&](const auto& e) { return e.first == kernel; });
  if (entry == schedules().end()) throw InputError("no cost card for kernel '" + kernel + "'");
  if (problem.ranks < 2 || problem.ranks > config.devices) {
    throw InputError("cost card: P = " + std::to_string(problem.ranks) + " must be 2.." +
                     std::to_string(config.devices));
  }
  // The card's ranks sit on devices 0..P-1.
  Problem on_devices = problem;
  std::vector<int> rank_server;
  for (int r = 0; r < problem.ranks; ++r) rank_server.push_back(config.server_of(r));
  on_devices.servers = ServerMap(rank_server);
  // The HOST builtins run the runtime's own synchronisation, as in a run.
  PlatformConfig sync_config = config;
  if (find_kernel(kernel).runtime_kernel) sync_config.codegen = runtime_kernel_sync();
  const Costs costs(sync_config, problem.op);
  Card card;
  card.kernel = kernel;
  // A rank's card is its slowest block's, with the counts of all its blocks.
  std::vector<RankCard> rank_cards(static_cast<std::size_t>(problem.ranks));
  for (int b = 0; b < problem.core_num; ++b) {
    Ranks timelines;
    for (int r = 0; r < problem.ranks; ++r) timelines.emplace_back(costs, r, problem.ranks, b);
    entry->second(timelines, on_devices);
    for (int r = 0; r < problem.ranks; ++r) {
      const RankCard block_card = timelines[r].finish();
      RankCard& rank_card = rank_cards[r];
      const RankCard sum = rank_card;
      if (b == 0 || block_card.time_ns > rank_card.time_ns) rank_card = block_card;
      if (b == 0) continue;
      rank_card.remote_read_bytes = sum.remote_read_bytes + block_card.remote_read_bytes;
      rank_card.remote_write_bytes = sum.remote_write_bytes + block_card.remote_write_bytes;
      rank_card.notifies = sum.notifies + block_card.notifies;
      rank_card.waits = sum.waits + block_card.waits;
    }
  }
  for (int r = 0; r < problem.ranks; ++r) {
    card.ranks.push_back(rank_cards[r]);
    if (card.ranks.back().time_ns > card.time_ns) {
      card.time_ns = card.ranks.back().time_ns;
      card.slowest_rank = r;
    }
  }
  CardTerms& terms = card.terms;
  terms.alpha_ns = (costs.setup + 2 * costs.path_latency(1, 0) + costs.gm_read) / 1000.0;
  terms.alpha_local_ns = (costs.setup + costs.gm_read) / 1000.0;
  terms.notify_ns = (costs.pipe_barrier + costs.notify_time(1, 0)) / 1000.0;
  terms.signal_flight_ns = (costs.path_latency(1, 0) + costs.gm_write) / 1000.0;
  // The far pair's path: on a cluster or SuperPod the slower hop between servers or nodes.
  const double far_rate = costs.path_rate(problem.ranks - 1, 0);
  terms.beta_ns_per_byte = 1.0 / 1000.0 / std::min({costs.remote, far_rate, costs.gm});
  terms.beta_local_ns_per_byte = 1.0 / 1000.0 / std::min(costs.mte2, costs.gm);
  terms.gamma_ns_per_byte = 1.0 / 1000.0 / costs.vector_rate;
  terms.gamma_startup_ns = costs.vector_startup / 1000.0;
  Timeline barrier(costs, problem.ranks - 1, problem.ranks);
  barrier.barrier();
  terms.alpha_barrier_ns = barrier.now() / 1000.0;
  return card;
}

PlatformConfig ideal_platform(PlatformConfig config) {
  config.launch_offset_cycles = 0;
  config.launch_setup_cycles = 0;
  config.dma_posted_stores = 0;
  config.pipe_barrier_cycles = 0;
  config.cache_flush_cycles = 0;
  config.notify_cycles = 0;
  config.cache_invalidate_cycles = 0;
  config.link_atomic_ns = 0;
  config.gm_atomic_ns = 0;
  return config;
}

}  // namespace ars
