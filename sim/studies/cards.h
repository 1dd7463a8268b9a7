// Analytical cost cards: what each kernel should cost on a platform, derived from the
// configured PlatformConfig alone (never fitted to simulator output), in the alpha-beta-gamma
// terms of the tutorial's cost model.
//
// Terms (all from the configuration; ppc = 1000 / clock_GHz ps per cycle):
//   alpha    = dma.setup + path latency + gm.read_latency     fixed cost of one remote pull
//   alpha_l  = dma.setup + gm.read_latency (gm.write_latency for a store)   local load/store
//   beta     = 1 / min(dma.remote rate, link rate, gm rate)   per remotely read byte
//   beta_l   = 1 / min(MTE2 (MTE3) rate, gm rate)             per locally moved byte
//   gamma    = 1 / vector.bytes_per_cycle; gamma_0 = vector.startup_cycles (a reduce's alpha;
//            vector.mul_startup_cycles for prod)
//   nu       = sync.pipe_barrier + sync.cache_flush + sync.notify   cost of one notify
//   lambda   = path latency + gm.write_latency                flight of a notify
//   w(d)     = (ceil(d / T) + 1) T + sync.cache_invalidate    a wait that starts d before its
//                                                             notify lands (T = poll period)
//   alpha_barrier = (P-1) nu + w(lambda + nu) + (P-2)(T + invalidate)   a full-mesh barrier
//   Misaligned GM addresses (not dma.full_rate_alignment) scale the DMA queue rate by
//   dma.misaligned_rate_factor. A DMA queue is free again once its last burst has left
//   (setup + bytes / queue rate); dma.queues queues take transfers in FIFO order.
//
// Per rank, n = bytes per rank, c = a tile (16 KiB at most, see kernels/tiling.h), C tiles,
// Q = dma.queues. Every card starts with the stage-in copy S = sum over tiles of
// (alpha_l + c beta_l) for the load plus the same for the store, and the hand kernels end
// with the same stage-out copy.
//   mesh:         S + alpha_barrier + sum_c [load + pulls(P-1, c) + reduce tail + store]
//                 with Q = 1: pulls = alpha + (P-1) c beta (the queue pipelines them, each
//                 pull's latency hidden behind the next; reduces overlap the next pull), so
//                 mesh ~ alpha_barrier + (P-1) n beta + C (alpha + gamma_0 + c gamma) + copies.
//                 With Q >= P-1 the P-1 pulls run at once on their own links: ~ n beta.
//                 Bytes (P-1) n; rounds 3; notifies = waits = P-1.
//   two_phase:    S + 2 alpha_barrier + RS (pulls of n/P from P-1 peers, reduce, store) +
//                 AG (one local and P-1 remote pulls of n/P, P stores)
//                 ~ 2 alpha_barrier + 2 (P-1)/P n beta + (P-1)/P n gamma + copies.
//                 Bytes 2 (P-1)/P n; rounds 5; notifies = waits = 2(P-1).
//   ring:         S + 2(P-1) rounds of [w(lambda) + pull n/P + (RS: load, reduce, store;
//                 AG: store) + nu] + stage-out
//                 ~ 2(P-1)(w(lambda) + nu + alpha) + 2(P-1)/P n beta + (P-1)/P n gamma + copies.
//                 Bytes 2 (P-1)/P n; rounds 2P; notifies = waits = 2(P-1).
//   host_ring:    the ring's rounds in 256-element tiles, each round opened by alpha_barrier
//                 instead of the neighbour handshake, plus a final alpha_barrier.
//                 Bytes 2 (P-1)/P n; rounds 2P+1; notifies = waits = (2(P-1)+1)(P-1).
//   builtin_mesh: S + ready alpha_barrier + per 16 KiB chunk [load + (P-1) blocking
//                 (alpha + c beta + gamma_0 + c gamma) + alpha_barrier + store] +
//                 (P-1) nu + stage-out
//                 ~ (C+1) alpha_barrier + (P-1)(C alpha + n beta + n gamma) + copies.
//                 Bytes (P-1) n; rounds 5; notifies (P-1)(C+1) + (P-1); waits (P-1)(C+1).
//   builtin_ring: S + 2(P-1) rounds of K subchunks (<= 16 KiB of a segment) [alpha_barrier +
//                 (RS: load) pull from the left (RS: reduce) + alpha_barrier + store] +
//                 2(P-1)(P-1) nu + stage-out
//                 ~ 4K(P-1) alpha_barrier + 2(P-1) K alpha + 2(P-1)/P n beta + copies.
//                 Bytes 2n - seg(r-1) - seg(r); rounds 2P+2; notifies 4K(P-1)^2 + 2(P-1)^2;
//                 waits 4K(P-1)^2.
//   rhd:          S + [fold: an extra (rank >= p' = 2^floor(log2 P)) notifies its partner
//                 r - p', which waits w, pulls n and reduces] + log2 p' RS steps of [nu + w +
//                 pull the kept half, load, reduce, store] + log2 p' AG steps of [nu + w + pull
//                 the given-away half, store] + [hand-back: the partner notifies, the extra
//                 waits, pulls n, stores] + stage-out
//                 ~ (2 log2 p' + 2 with extras) (w(lambda) + nu + alpha) + (2(p'-1)/p' + 2
//                 with extras) n beta + (p'-1)/p' n gamma (+ n gamma) + copies: the spec's
//                 (2 floor(log2 P) + 2) alpha form.
//                 Bytes 2(p'-1)/p' n (+ n for a rank that takes a fold; an extra n); rounds
//                 2 + 2 log2 p' (+ fold and hand-back; an extra 4); notifies = waits =
//                 2 log2 p' (+ 1 with a fold; an extra 1).
//   hierarchical: S servers of D ranks. S + alpha_barrier(D) + RS of the own chunk n/D from
//                 the D-1 server peers (pulls at once, reduce in turn, store) + the ring or rhd
//                 above among the S ranks with the same local index, on n/D + alpha_barrier(D)
//                 + AG of the D chunks straight into y
//                 ~ 2 alpha_barrier(D) + 2(D-1)/D n beta_server + inter(S, n/D) with the
//                 scale-out beta (the NIC) + copies; on one server the mesh RS + AG.
//                 Bytes 2(D-1)/D n + the inter phase's on n/D; rounds 5 + the inter's;
//                 notifies = waits = 2(D-1) + the inter's.
//   ring, rhd and hierarchical replay every rank step by step, so each wait sees the moment
//   its notify really left (folds, uneven chunks and groups break the ranks' symmetry).
// The tutorial's reference forms (spec section 4) are the leading terms: ring
// 2(P-1) alpha + 2(P-1)/P n beta + (P-1)/P n gamma; mesh with one port alpha_barrier +
// (P-1)(alpha + n beta + n gamma) (here the pulls pipeline, so one alpha and the reduces
// hide behind the next pull); two-phase 2 alpha_barrier + 2(P-1)(alpha + n/P beta) +
// (P-1)/P n gamma.
//
// Timing assumes what --ideal guarantees: ranks start together, no transfer contends with
// another for a link or a memory port, ranks stay symmetric (each one's timeline is the
// others', shifted only by its position in a barrier's notify order). The time card is that of
// the slowest rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/api.h"
#include "models/platform/platform_config.h"

namespace ars {

// The fixed and per-byte terms of the configured platform (ns, ns per byte).
struct CardTerms {
  double alpha_ns = 0;          // one remote pull's fixed cost
  double alpha_local_ns = 0;    // one local load's fixed cost
  double alpha_barrier_ns = 0;  // one full-mesh barrier of P ranks
  double notify_ns = 0;         // nu: how long a notify keeps the core (acknowledged or not)
  double signal_flight_ns = 0;  // lambda
  double beta_ns_per_byte = 0;  // remote pulls
  double beta_local_ns_per_byte = 0;
  double gamma_ns_per_byte = 0;
  double gamma_startup_ns = 0;
};

struct CardRound {
  std::string phase;
  double start_ns = 0;
  double time_ns = 0;  // until the next round starts or the rank finishes
  double barrier_ns = 0;
  double transfer_ns = 0;
  double reduce_ns = 0;
  std::uint64_t remote_bytes = 0;
};

struct RankCard {
  double time_ns = 0;
  std::uint64_t remote_read_bytes = 0;
  std::uint64_t remote_write_bytes = 0;
  std::uint64_t notifies = 0;
  std::uint64_t waits = 0;
  std::vector<CardRound> rounds;
};

struct Card {
  std::string kernel;
  CardTerms terms;
  std::vector<RankCard> ranks;  // rank by rank
  int slowest_rank = 0;
  double time_ns = 0;  // of the slowest rank
};

// The kernels that have a card.
const std::vector<std::string>& card_kernels();

// The card of `kernel` for `problem` on ranks 0..P-1 of devices 0..P-1. Throws InputError
// for a kernel without a card or a problem outside the kernel's contract.
Card cost_card(const std::string& kernel, const Problem& problem, const PlatformConfig& config);

// --ideal: the platform without what the cards leave out: launch skew (ranks launch
// together), stores running behind later work (dma.posted_stores = 0), and the per-operation
// overheads beyond alpha (pipe barrier, cache flush and issue cost of a notify, the cache
// invalidate after a wait, the link time a signal atomic holds), whose exact timing depends on how
// staggered the ranks enter each barrier. Latencies, rates, the reduce cost and the polling period
// — the cards' alpha, beta and gamma — are kept. Contention is not removed but absent on a full
// mesh, where the cards give each transfer its own link and memory ports are far faster than any
// DMA queue; link sharing on ring and switch topologies is outside the cards.
PlatformConfig ideal_platform(PlatformConfig config);

}  // namespace ars
