#include "sim/cards.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "kernels/host_mesh.h"
#include "kernels/ring.h"
#include "kernels/tiling.h"
#include "models/fabric.h"

namespace ars {

namespace {

// The platform's costs in ps and bytes per ps, as the models charge them.
struct Costs {
  explicit Costs(const PlatformConfig& c)
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
        notify((c.pipe_barrier_cycles + c.cache_flush_cycles + c.notify_cycles) * ps_per_cycle),
        poll(c.poll_period_cycles * ps_per_cycle),
        invalidate(c.cache_invalidate_cycles * ps_per_cycle),
        vector_startup(c.vector_startup_cycles * ps_per_cycle),
        vector_rate(c.vector_bytes_per_cycle / ps_per_cycle) {}

  // One-way latency of the interconnect between two devices (0 on the same device).
  double path_latency(int from, int to) const { return fabric.route(from, to).latency_ps; }
  // Rate of the slowest link from one device to another.
  double path_rate(int from, int to) const { return fabric.route(from, to).bytes_per_ps; }

  // How long a notify from `from` to `to` keeps the core: its costs before the write leaves,
  // and with acknowledged notifies the atomic's flight, its write and the reply's flight.
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
  double ps_per_cycle, setup, mte2, mte3, remote, gm, gm_read, gm_write, notify, poll, invalidate,
      vector_startup, vector_rate;
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
    const double sent = now_ + c_.notify;
    spend_barrier_or_reduce(c_.notify_time(rank_, peer), &CardRound::barrier_ns);
    return sent;
  }
  // Waits for a notify that left `from`'s core at `sent`.
  void wait(int from, double sent) {
    ++card_.waits;
    const double lands = sent + c_.path_latency(from, rank_) + c_.gm_write;
    spend_barrier_or_reduce(c_.wait(lands - now_), &CardRound::barrier_ns);
  }
  // The full-mesh barrier of kernels/barrier.cpp: notify every peer in rank order, then wait
  // for every peer in rank order. Peer q entered when this rank did and notifies this rank
  // as its (me - (me > q))-th notify.
  void barrier() {
    const double entered = now_;
    for (int peer = 0; peer < ranks_; ++peer) {
      if (peer != rank_) notify(peer);
    }
    for (int src = 0; src < ranks_; ++src) {
      if (src == rank_) continue;
      double sent = entered;
      for (int peer = 0; peer < rank_; ++peer) {
        if (peer != src) sent += c_.notify_time(src, peer);
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
  std::vector<double> queue_free_;
  double last_start_ = 0;  // FIFO: no transfer starts before an earlier one
  std::map<int, double> link_free_;
  RankCard card_;
};

using Chunks = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

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

// Pulls issued at once, then each synced and reduced in turn (kernels/mesh.cpp).
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

// kernels/ring.cpp's ring_exchange.
void ring_round_transfers(Timeline& t, const Problem& p, int round, std::uint64_t chunk,
                          const Chunks& tiles) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const int left = (t.rank() - 1 + p.ranks) % p.ranks;
  const RingRound r = ring_round(t.rank(), p.ranks, round);
  const std::uint64_t base = r.chunk * chunk;
  for (const auto& [offset, count] : tiles) {
    const std::uint64_t at = (base + offset) * element;
    t.remote_load(left, at, count * element);
    if (r.reduces) {
      t.load(at, count * element);
      t.reduce(count * element);
    }
    t.store(at, count * element);
  }
}

void ring(Timeline& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  const std::uint64_t chunk = p.elements / p.ranks;
  const Chunks tiles = Tiling(chunk, p.dtype, 2, t.ub_bytes()).chunks();
  const int left = (t.rank() - 1 + p.ranks) % p.ranks;
  const int rounds = 2 * (p.ranks - 1);
  t.begin_round("stage-in");
  copy_chunks(t, p.ranks, chunk, tiles, element);
  // Symmetry: the left neighbour sends its round-s notify when this rank sends its own.
  const int right = (t.rank() + 1) % p.ranks;
  double sent = t.notify(right);
  for (int s = 0; s < rounds; ++s) {
    t.begin_round(ring_round(t.rank(), p.ranks, s).reduces ? "RS" : "AG");
    t.wait(left, sent);
    ring_round_transfers(t, p, s, chunk, tiles);
    if (s + 1 < rounds) sent = t.notify(right);
  }
  t.begin_round("stage-out");
  copy_chunks(t, p.ranks, chunk, tiles, element);
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
    t.begin_round(ring_round(t.rank(), p.ranks, s).reduces ? "RS" : "AG");
    t.barrier();
    ring_round_transfers(t, p, s, chunk, tiles);
  }
  t.begin_round("final barrier");
  t.barrier();
  t.begin_round("stage-out");
  copy_chunks(t, p.ranks, chunk, staging.chunks(), element);
}

// Spec 3.1 as kernels/builtin_mesh.cpp lowers it: stage-in, a ready barrier, then per 16 KiB
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

// Spec 3.2 as kernels/builtin_ring.cpp lowers it: stage-in; per round and subchunk a ready
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

// kernels/host_mesh.cpp, one block: per tile a local load and a store into the window, a
// barrier on the block's lane, a pull and reduce per peer, the store into y; a final barrier
// and the epilogue. Blocks share the device's link and memory port, which this card leaves
// out: it is exact for one block (and for blocks whose traffic never meets).
void host_mesh(Timeline& t, const Problem& p) {
  const std::uint64_t element = dtype_bytes(p.dtype);
  t.begin_round("exchange");
  for (const auto& [offset, count] : host_mesh_block_tiles(p.elements, t.block(), p.core_num)) {
    t.load(offset * element, count * element);
    t.store(offset * element, count * element);
    t.barrier();
    for (int peer : peers_from(t.rank(), p.ranks, 1)) {
      t.remote_load(peer, offset * element, count * element);
      t.reduce(count * element);
    }
    t.store(offset * element, count * element);
  }
  t.begin_round("final barrier");
  t.barrier();
  t.begin_round("epilogue");
  t.self_notifies(p.ranks - 1);
}

using Schedule = void (*)(Timeline&, const Problem&);

const std::vector<std::pair<std::string, Schedule>>& schedules() {
  static const std::vector<std::pair<std::string, Schedule>> table = {
      {"mesh", mesh},           {"two_phase", two_phase},       {"ring", ring},
      {"host_ring", host_ring}, {"builtin_mesh", builtin_mesh}, {"builtin_ring", builtin_ring},
      {"host_mesh", host_mesh},
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
  const Costs costs(config);
  Card card;
  card.kernel = kernel;
  for (int r = 0; r < problem.ranks; ++r) {
    // A rank's card is its slowest block's, with the counts of all its blocks.
    RankCard rank_card;
    for (int b = 0; b < problem.core_num; ++b) {
      Timeline timeline(costs, r, problem.ranks, b);
      entry->second(timeline, problem);
      const RankCard block_card = timeline.finish();
      const RankCard sum = rank_card;
      if (b == 0 || block_card.time_ns > rank_card.time_ns) rank_card = block_card;
      if (b == 0) continue;
      rank_card.remote_read_bytes = sum.remote_read_bytes + block_card.remote_read_bytes;
      rank_card.remote_write_bytes = sum.remote_write_bytes + block_card.remote_write_bytes;
      rank_card.notifies = sum.notifies + block_card.notifies;
      rank_card.waits = sum.waits + block_card.waits;
    }
    card.ranks.push_back(rank_card);
    if (card.ranks.back().time_ns > card.time_ns) {
      card.time_ns = card.ranks.back().time_ns;
      card.slowest_rank = r;
    }
  }
  CardTerms& terms = card.terms;
  terms.alpha_ns = (costs.setup + 2 * costs.path_latency(1, 0) + costs.gm_read) / 1000.0;
  terms.alpha_local_ns = (costs.setup + costs.gm_read) / 1000.0;
  terms.notify_ns = costs.notify_time(1, 0) / 1000.0;
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
  return config;
}

}  // namespace ars
