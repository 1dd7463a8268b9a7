// The hardware models on tiny platforms with round numbers (1 GHz: a cycle is 1 ns), each
// simulated time checked against a value worked out by hand in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>

#include "kernels/api.h"
#include "models/device/instant_events.h"
#include "models/fabric/bandwidth_resource.h"
#include "models/fabric/fabric.h"
#include "models/fabric/path_table.h"
#include "models/platform/clock.h"
#include "models/platform/platform.h"
#include "models/records/rank_stats.h"
#include "models/records/run_progress.h"
#include "models/records/schedule_log.h"
#include "models/tables/address_map.h"
#include "sim/memory_guard.h"
#include "sim/run.h"
#include "tests/parsed_run.h"

namespace ars {
namespace {

using test::parse_run;
using test::ParsedRun;

constexpr std::uint64_t kElements = 4096;  // FP32: 16384 B, 32 bursts of 512 B
constexpr std::uint64_t kBytes = kElements * 4;
constexpr std::int32_t kSignal = 0;  // index of the layout's only signal

std::uint64_t now_ps() {
  return sc_core::sc_time_stamp().value();
}

PlatformConfig round_config(Topology topology, int devices) {
  PlatformConfig c;
  c.name = "round";
  c.clock_GHz = 1.0;
  c.devices = devices;
  c.topology = topology;
  c.gm_read_latency_cycles = 1000;
  c.gm_write_latency_cycles = 300;
  c.gm_bandwidth_GBps = 1600;  // 1600 B/ns: never the bottleneck below
  c.dma_setup_cycles = 100;
  c.dma_mte2_bytes_per_cycle = 32;
  c.dma_mte3_bytes_per_cycle = 64;
  c.dma_remote_bytes_per_cycle = 64;  // above the link rate: the link is the bottleneck
  c.dma_burst_bytes = 512;
  c.link_bandwidth_GBps = 16;  // 16 B/ns: a 512 B burst holds a link direction for 32 ns
  c.link_latency_ns = 1000;
  c.switch_latency_ns = 200;
  c.notify_cycles = 20;
  c.poll_period_cycles = 500;
  c.cache_invalidate_cycles = 10;
  return c;
}

Problem problem_for(int ranks) {
  Problem p;
  p.ranks = ranks;
  p.elements = kElements;
  return p;
}

Layout layout_for(int ranks) {
  return {{{"data", kElements}}, {{"signal", ranks, 1}}};
}

Platform::Outcome run(Platform& platform) {
  return platform.run(sc_core::sc_time(1, sc_core::SC_MS));
}

TEST(Clock, WholePicosecondsConvertExactlyOnBothSidesOfTheInlineRange) {
  init_time_resolution();
  // ps() rounds v + 0.5 down: from 2^52 on, a double cannot hold the half and 2^52 + 1 would
  // round to 2^52 + 2, so ps_exact hands those to the library.
  const std::uint64_t edge = std::uint64_t{1} << 52;
  for (std::uint64_t value : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{999999937},
                              edge - 1, edge, edge + 1, edge + 3, (std::uint64_t{1} << 60) + 1}) {
    EXPECT_EQ(ps_exact(value).value(), value) << value;
  }
  EXPECT_NE(ps(static_cast<double>(edge + 1)).value(), edge + 1);  // why the edge is there
}

// A run that times transfers whole checks every request's claim. Here a port moves 1 B/ps, so
// a 100 B burst holds it for 100 ps; flows 1 and 2 stand for two transfers, a core running
// ahead having reserved flow 2's bursts before flow 1 asks for earlier times.
Claim whole_claim(std::uint64_t at_ps) {
  Claim claim;
  claim.checked = true;
  claim.at = ps_exact(at_ps);
  return claim;
}

// Four threads wait for 10, 10, 20 and 10 ns, the last then for 30 ns: two instants at once
// at first, so two events; at 10 ns the first instant has passed and its event serves 30 ns.
// A new event per wait would make five, and events never reused three.
struct InstantWaiters : sc_core::sc_module {
  InstantEvents instants;
  std::vector<std::pair<int, double>> resumed;  // (thread, ns)
  explicit InstantWaiters(sc_core::sc_module_name name) : sc_module(name) {
    const double until[] = {10, 10, 20, 10};
    for (int t = 0; t < 4; ++t) {
      sc_core::sc_spawn([this, t, until] {
        instants.wait_until(ns(until[t]), sc_core::sc_time_stamp());
        resumed.emplace_back(t, to_ns(sc_core::sc_time_stamp()));
        if (t != 3) return;
        instants.wait_until(ns(30), sc_core::sc_time_stamp());
        resumed.emplace_back(t, to_ns(sc_core::sc_time_stamp()));
      });
    }
  }
};

TEST(InstantEvents, ThreadsWaitingForOneInstantShareOneEventReusedOnceItPassed) {
  init_time_resolution();
  InstantWaiters waiters("waiters");
  sc_core::sc_start();
  std::vector<std::pair<int, double>> resumed = waiters.resumed;
  std::sort(resumed.begin(), resumed.end());
  EXPECT_EQ(resumed,
            (std::vector<std::pair<int, double>>{{0, 10}, {1, 10}, {2, 20}, {3, 10}, {3, 30}}));
  EXPECT_EQ(waiters.instants.events_made(), 2u);
}

TEST(BandwidthResource, AnEarlierRequestThatEndsBeforeTheNextRunIsServedAsOfItsTime) {
  init_time_resolution();
  BandwidthResource port("port", 1.0);
  port.describe(0, "dev0.memory_port", "gm.bandwidth_GBps");
  Claim ahead = whole_claim(1000);
  EXPECT_EQ(port.reserve(ps_exact(1000), 100, 2, &ahead).end.value(), 1100u);
  Claim ahead_next = whole_claim(1100);
  EXPECT_EQ(port.reserve(ps_exact(1100), 100, 2, &ahead_next).end.value(), 1200u);
  // Flow 1's two bursts at 500 and 600 ps end at 700 ps, before flow 2 could start (1000 ps):
  // in the order of time they would have come first and changed nothing of flow 2's.
  Claim early = whole_claim(500);
  const BandwidthResource::Interval first = port.reserve(ps_exact(500), 100, 1, &early);
  Claim early_next = whole_claim(600);
  const BandwidthResource::Interval second = port.reserve(ps_exact(600), 100, 1, &early_next);
  EXPECT_FALSE(early.conflict);
  EXPECT_FALSE(early_next.conflict);
  EXPECT_EQ(first.start.value(), 500u);
  EXPECT_EQ(second.start.value(), 600u);
  EXPECT_EQ(second.end.value(), 700u);
  // The port stays reserved up to flow 2's end for what asks next: after flow 2's last ask,
  // in order, it queues behind; at that ask's instant, a tie, it is a conflict.
  EXPECT_EQ(port.free_at().value(), 1200u);
  Claim later = whole_claim(1150);
  const BandwidthResource::Interval queued = port.reserve(ps_exact(1150), 100, 3, &later);
  EXPECT_EQ(queued.start.value(), 1200u);
  EXPECT_TRUE(queued.behind_other_flow);
  EXPECT_FALSE(later.conflict);
  Claim tied = whole_claim(1150);
  port.reserve(ps_exact(1150), 100, 4, &tied);
  EXPECT_TRUE(tied.conflict);
}

TEST(BandwidthResource, AnEarlierRequestThatWouldDelayTheNextRunIsAConflictThatSaysSo) {
  init_time_resolution();
  BandwidthResource port("port", 1.0);
  port.describe(0, "dev0.memory_port", "gm.bandwidth_GBps");
  Claim ahead = whole_claim(1000);
  port.reserve(ps_exact(1000), 100, transfer_flow(0, 0, 7), &ahead);
  // A 100 B burst asked at 950 ps would hold the port until 1050 ps: flow 2 would have waited.
  Claim early = whole_claim(950);
  const BandwidthResource::Interval slot =
      port.reserve(ps_exact(950), 100, transfer_flow(1, 0, 3), &early);
  EXPECT_EQ(slot.end.value(), 1050u);
  ASSERT_TRUE(early.conflict);
  EXPECT_EQ(early.conflict_flow, transfer_flow(0, 0, 7));
  EXPECT_EQ(conflict_message(transfer_flow(1, 0, 3), early),
            "dev1's transfer 3 and dev0's transfer 7 met on dev0.memory_port at 0.950 ns, asked "
            "after dev0's later bursts there (1.000 to 1.000 ns), which it would have delayed");
}

TEST(BandwidthResource, AnEarlierRequestBeforeEveryRunKeptIsAConflict) {
  init_time_resolution();
  BandwidthResource port("port", 1.0);
  port.describe(0, "dev0.memory_port", "gm.bandwidth_GBps");
  // Twenty flows one after another, 1000 ps apart: only the last runs are kept.
  for (std::uint64_t flow = 1; flow <= 20; ++flow) {
    Claim claim = whole_claim(flow * 1000);
    port.reserve(ps_exact(flow * 1000), 100, flow, &claim);
    EXPECT_FALSE(claim.conflict);
  }
  // Between flows 3 and 4 it would fit, but what was reserved there is no longer known.
  Claim early = whole_claim(3500);
  port.reserve(ps_exact(3500), 100, 99, &early);
  EXPECT_TRUE(early.conflict);
  // Between the last two it fits and is known.
  Claim late = whole_claim(19500);
  port.reserve(ps_exact(19500), 100, 98, &late);
  EXPECT_FALSE(late.conflict);
}

// The names of the device 0 DMA engine's SystemC processes of `kind` (its queues').
std::vector<std::string> engine_processes(Platform& platform, const std::string& kind) {
  std::vector<std::string> names;
  for (const sc_core::sc_object* child : platform.device(0).block_dma(0).get_child_objects()) {
    if (child->kind() == kind) names.push_back(child->name());
  }
  return names;
}

// One rank loads a tile from its input and stores it to its output: when each returned.
struct LoadAndStore {
  std::uint64_t loaded_ps = 0;
  std::uint64_t stored_ps = 0;
  std::uint64_t finish_ps = 0;             // the rank's end, by its core's own time
  std::vector<std::string> queue_threads;  // the DMA engine's threads, by name
};
LoadAndStore local_load_and_store(bool whole, double dma_setup_cycles = 100) {
  PlatformConfig config = round_config(Topology::FullMesh, 1);
  config.dma_setup_cycles = dma_setup_cycles;
  Platform::Options options;
  options.whole_transfers = whole;
  LoadAndStore times;
  Platform platform(
      "platform", config, {0}, problem_for(1), layout_for(1),
      [&](Rank& r) {
        const Tile tile = r.alloc(kElements, DType::FP32);
        r.load(tile, r.input(), 0, kElements);
        times.loaded_ps = now_ps();
        r.store(tile, r.output(), 0, kElements);
        times.stored_ps = now_ps();
      },
      options);
  EXPECT_TRUE(run(platform).completed);
  times.finish_ps = platform.device(0).block_core(0).stats().finish_ps;
  times.queue_threads = engine_processes(platform, "sc_thread_process");
  return times;
}

TEST(DmaEngine, LocalLoadAndStoreTakeSetupPlusBytesOverRatePlusLatency) {
  const LoadAndStore t = local_load_and_store(false);
  // Load: setup 100 ns + 16384 B / 32 B/ns = 512 ns + GM read latency 1000 ns = 1612 ns.
  EXPECT_EQ(t.loaded_ps, 1612000u);
  // Store: setup 100 + 16384 / 64 = 256 + GM write latency 300 = 656 ns more.
  EXPECT_EQ(t.stored_ps, 1612000u + 656000u);
}

// Timed whole, each transfer goes down as one transaction to the device's own memory, which
// serves its 32 bursts one after another: the same times as above.
TEST(DmaEngine, LocalTransfersTimedWholeAsOneTransactionTakeTheTimesOfTheirBursts) {
  const LoadAndStore t = local_load_and_store(true);
  EXPECT_EQ(t.loaded_ps, 1612000u);
  EXPECT_EQ(t.stored_ps, 1612000u + 656000u);
}

// Burst by burst, or with a set-up to wait for, every transfer waits for the engine's queue,
// whose thread is made at the first, in the engine; timed whole from an idle engine with no
// set-up, the core's thread reserves them and no queue thread is ever made.
TEST(DmaEngine, MakesItsQueueThreadInItselfOnlyOnceATransferWaitsForTheQueue) {
  EXPECT_EQ(local_load_and_store(false).queue_threads,
            std::vector<std::string>{"platform.dev0.dma.queue0"});
}

TEST(DmaEngine, ATransferTimedWholeWaitsForTheQueueThroughItsSetup) {
  EXPECT_EQ(local_load_and_store(true).queue_threads,
            std::vector<std::string>{"platform.dev0.dma.queue0"});
}

// Load: 16384 B / 32 B/ns = 512 ns + GM read latency 1000 ns; store: 16384 / 64 = 256 + 300 ns,
// by the core's own time (it runs ahead of SystemC's on its own memory).
TEST(DmaEngine, TransfersTimedWholeByTheCoreMakeNoQueueThread) {
  const LoadAndStore t = local_load_and_store(true, 0);
  EXPECT_EQ(t.finish_ps, 1512000u + 556000u);
  EXPECT_TRUE(t.queue_threads.empty());
}

// Two pulls from the own window issued back to back, with no set-up: the second waits for the
// engine's queue until the first has left. The rank's end by its own time, and the engine's
// threads and methods by name. Threads are refused when asked (no memory mapping left).
struct TwoPulls {
  std::uint64_t finish_ps = 0;
  std::vector<std::string> queue_threads;
  std::vector<std::string> queue_methods;
};
TwoPulls two_pulls_back_to_back(bool whole, bool refuse_threads) {
  PlatformConfig config = round_config(Topology::FullMesh, 1);
  config.dma_setup_cycles = 0;
  Platform::Options options;
  options.whole_transfers = whole;
  if (refuse_threads)
    options.before_queue_threads = [] { throw std::runtime_error("no mapping left"); };
  Platform platform(
      "platform", config, {0}, problem_for(1), layout_for(1),
      [&](Rank& r) {
        const Tile first = r.alloc(kElements / 2, DType::FP32);
        const Tile second = r.alloc(kElements / 2, DType::FP32);
        const Tensor data = r.window("data");
        const Transfer a = r.remote_load_async(first, data, 0, 0, kElements / 2);
        const Transfer b = r.remote_load_async(second, data, 0, kElements / 2, kElements / 2);
        r.sync(a);
        r.sync(b);
      },
      options);
  const Platform::Outcome outcome = run(platform);
  EXPECT_TRUE(outcome.completed) << outcome.failure;
  TwoPulls pulls;
  pulls.finish_ps = platform.device(0).block_core(0).stats().finish_ps;
  pulls.queue_threads = engine_processes(platform, "sc_thread_process");
  pulls.queue_methods = engine_processes(platform, "sc_method_process");
  return pulls;
}

// Each pull: 8192 B / 32 B/ns = 256 ns, then the GM read latency 1000 ns. The second leaves
// after the first, from 256 to 512 ns, and lands at 1512 ns: burst by burst through the
// queue's thread, and timed whole through its method, which takes no stack (the check before
// threads, refusing them, is not asked).
TEST(DmaEngine, AQueueOfTransfersBurstByBurstIsAThread) {
  const TwoPulls bursts = two_pulls_back_to_back(false, false);
  EXPECT_EQ(bursts.finish_ps, 1512000u);
  EXPECT_EQ(bursts.queue_threads, std::vector<std::string>{"platform.dev0.dma.queue0"});
  EXPECT_TRUE(bursts.queue_methods.empty());
}

TEST(DmaEngine, AQueueOfTransfersTimedWholeIsAMethodWithTheThreadsTimes) {
  const TwoPulls whole = two_pulls_back_to_back(true, true);
  EXPECT_EQ(whole.finish_ps, 1512000u);
  EXPECT_EQ(whole.queue_methods, std::vector<std::string>{"platform.dev0.dma.queue0"});
  EXPECT_TRUE(whole.queue_threads.empty());
}

// A queue thread refused (no memory mapping left for its stack) ends the run with the rank's
// error, as an error of its kernel does.
TEST(DmaEngine, AQueueThreadRefusedEndsTheRunNamingTheRank) {
  const PlatformConfig config = round_config(Topology::FullMesh, 1);
  Platform::Options options;
  options.before_queue_threads = [] { throw std::runtime_error("no mapping left"); };
  Platform platform(
      "platform", config, {0}, problem_for(1), layout_for(1),
      [&](Rank& r) { r.load(r.alloc(kElements, DType::FP32), r.input(), 0, kElements); }, options);
  EXPECT_EQ(run(platform).failure, "rank 0: no mapping left");
}

TEST(DmaEngine, GmAddressOffTheFullRateAlignmentRunsAtTheMisalignedRate) {
  const PlatformConfig config = round_config(Topology::FullMesh, 1);
  std::uint64_t loaded_ps = 0;
  Platform platform("platform", config, {0}, problem_for(1), layout_for(1),
                    [&](Rank& r) {
                      const Tile tile = r.alloc(kElements, DType::FP32);
                      r.load(tile, r.input(), 1, kElements - 1);  // 4 B past a 512 B boundary
                      loaded_ps = now_ps();
                    },
                    {});
  ASSERT_TRUE(run(platform).completed);
  // 16380 B at 32 B/ns x 0.7 = 731.25 ns, between the 100 ns setup and the 1000 ns latency.
  EXPECT_EQ(loaded_ps, 100000u + 731250u + 1000000u);
}

// Posted stores: the store returns at once; the next load into the same tile waits only for
// the store's bursts to leave MTE3 (setup 100 + 16384 / 64 = 256: 356 ns after 1612), then
// takes 1612 ns: 3580 ns, where a blocking store would first add the write latency 300
// (3880 ns, the test above's store time plus a load).
TEST(DmaEngine, PostedStoreOverlapsItsWriteLatencyWithTheNextLoad) {
  PlatformConfig config = round_config(Topology::FullMesh, 1);
  config.dma_posted_stores = 1;
  std::uint64_t stored_ps = 0;
  std::uint64_t reloaded_ps = 0;
  Platform platform("platform", config, {0}, problem_for(1), layout_for(1),
                    [&](Rank& r) {
                      const Tile tile = r.alloc(kElements, DType::FP32);
                      r.load(tile, r.input(), 0, kElements);
                      r.store(tile, r.output(), 0, kElements);
                      stored_ps = now_ps();
                      r.load(tile, r.input(), 0, kElements);
                      reloaded_ps = now_ps();
                    },
                    {});
  ASSERT_TRUE(run(platform).completed);
  EXPECT_EQ(stored_ps, 1612000u);
  EXPECT_EQ(reloaded_ps, 3580000u);
}

// Switch: a flow from device a to device b crosses a's uplink and b's downlink. Alone, the
// 32 bursts hold the link back to back from the setup on: 100 + 32 * 32 = 1124 ns for the last
// byte, then the path latency 2 * 1000 + 200 and the GM write latency 300: 3624 ns.
constexpr std::uint64_t kSetupPs = 100000;
constexpr std::uint64_t kLinkPs = kBytes * 1000 / 16;  // 1024 ns
constexpr std::uint64_t kPathPs = (2 * 1000 + 200 + 300) * 1000;
constexpr std::uint64_t kBurstPs = 512 * 1000 / 16;  // 32 ns
constexpr std::uint64_t kAlonePs = kSetupPs + kLinkPs + kPathPs;

// Rank r stores a tile into rank to[r]'s window (-1: idle); returns how long each store took.
std::vector<std::uint64_t> store_flows(const std::vector<int>& devices, const std::vector<int>& to,
                                       const PlatformConfig& config = round_config(Topology::Switch,
                                                                                   4),
                                       PathCacheLimit path_cache = {}, bool whole = false) {
  const int ranks = static_cast<int>(devices.size());
  std::vector<std::uint64_t> elapsed(devices.size(), 0);
  Platform::Options options;
  options.path_cache = path_cache;
  options.whole_transfers = whole;
  Platform platform(
      "platform", config, devices, problem_for(ranks), layout_for(ranks),
      [&](Rank& r) {
        const int target = to[r.rank()];
        if (target < 0) return;
        const Tile tile = r.alloc(kElements, DType::FP32);
        const std::uint64_t begin = now_ps();
        r.remote_store(tile, r.window("data"), target, 0, kElements);
        elapsed[r.rank()] = now_ps() - begin;
      },
      options);
  EXPECT_TRUE(run(platform).completed);
  return elapsed;
}

TEST(Interconnect, RemoteStoreAloneIsBoundByTheLink) {
  const std::vector<std::uint64_t> t = store_flows({0, 1, 2}, {2, -1, -1});
  EXPECT_EQ(t[0], kAlonePs);
}

// Timed whole, the store goes down as one transaction (a train of its 32 bursts): each burst
// still crosses the uplink and downlink, then reaches the memory, as if sent alone.
TEST(Interconnect, RemoteStoreTimedWholeAsOneTransactionTakesTheTimeOfItsBursts) {
  const std::vector<std::uint64_t> t =
      store_flows({0, 1, 2}, {2, -1, -1}, round_config(Topology::Switch, 4), {}, true);
  EXPECT_EQ(t[0], kAlonePs);
}

TEST(Interconnect, TwoFlowsIntoOneDownlinkEachTakeTwiceTheLinkTime) {
  // Ranks 0 and 1 both write into device 2: their bursts interleave on its downlink, which is
  // busy for 64 bursts, so each flow ends at 100 + 2048 + 2500 = 4648 ns, the first one to be
  // served up to one burst (32 ns) earlier.
  const std::vector<std::uint64_t> t = store_flows({0, 1, 2}, {2, 2, -1});
  const std::uint64_t shared = kSetupPs + 2 * kLinkPs + kPathPs;
  for (int r = 0; r < 2; ++r) {
    EXPECT_LE(t[r], shared) << "rank " << r;
    EXPECT_GE(t[r], shared - kBurstPs) << "rank " << r;
  }
  EXPECT_EQ(std::max(t[0], t[1]), shared);
}

// The two flows above tie at every burst: both queues ask for the downlink at the same
// instant. The interconnect serves the bursts of one delta cycle by flow, the lower device's
// first, whichever rank runs on it and whichever queue SystemC resumes first, so the flow of
// device 1 always ends one burst (32 ns) after that of device 0.
TEST(Interconnect, TiedBurstsAreServedInTheOrderOfTheirFlows) {
  const std::vector<std::uint64_t> t = store_flows({0, 1, 2}, {2, 2, -1});
  EXPECT_EQ(t[0], kSetupPs + 2 * kLinkPs + kPathPs - kBurstPs);
  EXPECT_EQ(t[1], kSetupPs + 2 * kLinkPs + kPathPs);
}

TEST(Interconnect, TiedBurstsAreServedInTheOrderOfTheirFlowsNotOfTheirRanks) {
  const std::vector<std::uint64_t> t = store_flows({1, 0, 2}, {2, 2, -1});
  EXPECT_EQ(t[1], kSetupPs + 2 * kLinkPs + kPathPs - kBurstPs);  // rank 1 runs on device 0
  EXPECT_EQ(t[0], kSetupPs + 2 * kLinkPs + kPathPs);
}

TEST(Interconnect, TwoFlowsOnDisjointLinksEachTakeTheTimeAlone) {
  const std::vector<std::uint64_t> t = store_flows({0, 1, 2, 3}, {2, 3, -1, -1});
  EXPECT_EQ(t[0], kAlonePs);
  EXPECT_EQ(t[1], kAlonePs);
}

TEST(Interconnect, StoreAndForwardSwitchHoldsEachBurstOnTheUplinkFirst) {
  // Each burst crosses a's uplink, then b's downlink once it has fully arrived: the last burst
  // leaves the uplink at 100 + 1024 ns and needs one more burst time (32 ns) on the downlink.
  PlatformConfig config = round_config(Topology::Switch, 4);
  config.switch_forwarding = Forwarding::StoreAndForward;
  const std::vector<std::uint64_t> t = store_flows({0, 1, 2}, {2, -1, -1}, config);
  EXPECT_EQ(t[0], kAlonePs + kBurstPs);
}

TEST(Interconnect, StoreAndForwardTimedWholeHoldsEachBurstOnTheUplinkFirst) {
  PlatformConfig config = round_config(Topology::Switch, 4);
  config.switch_forwarding = Forwarding::StoreAndForward;
  const std::vector<std::uint64_t> t = store_flows({0, 1, 2}, {2, -1, -1}, config, {}, true);
  EXPECT_EQ(t[0], kAlonePs + kBurstPs);
}

TEST(Interconnect, RingRoutesTheShortWayRoundHopByHop) {
  // Ring of 4: device 0 -> 2 crosses two link directions (0->1, 1->2), cut-through: the same
  // link time, twice the link latency, no switch. Device 0 -> 3 goes the other way, one hop.
  const PlatformConfig config = round_config(Topology::Ring, 4);
  const std::uint64_t one_hop = kSetupPs + kLinkPs + (1000 + 300) * 1000;
  const std::uint64_t two_hops = one_hop + 1000 * 1000;
  const std::vector<std::uint64_t> far = store_flows({0, 1, 2, 3}, {2, -1, -1, -1}, config);
  EXPECT_EQ(far[0], two_hops);
}

TEST(Interconnect, RingFlowsSharingAHopShareItsBandwidth) {
  // 0 -> 2 (via 1) and 1 -> 2 share the direction 1->2: both end one link time later.
  const PlatformConfig config = round_config(Topology::Ring, 4);
  const std::vector<std::uint64_t> t = store_flows({0, 1, 2, 3}, {2, 2, -1, -1}, config);
  const std::uint64_t one_hop = kSetupPs + kLinkPs + (1000 + 300) * 1000;
  EXPECT_EQ(std::max(t[0] - 1000 * 1000, t[1]), one_hop + kLinkPs);
}

// Three devices on a switch, each storing to both others at once on two DMA queues: every
// uplink and every downlink carries two flows, crossing. A queue streams 8 B/ns (a burst every
// 64 ns) and a link moves 20 B/ns (25.6 ns a burst), so two flows fit a link with room to spare
// and each store takes its time alone: the last burst leaves at 100 + 16384 / 8 = 2148 ns and
// lands the path latency 2 * 1000 + 200 and the GM write 300 later, 4648 ns, or up to one
// burst's 25.6 ns on the link later where two flows' bursts meet. A burst that finds its
// downlink busy waits in the switch, and the uplink serves the other flow meanwhile (virtual
// cut-through); holding the uplink idle until both links were free at once took 7413 to 7515 ns.
TEST(Interconnect, CutThroughCrossingFlowsThatFitTheLinksRunAsIfAlone) {
  PlatformConfig config = round_config(Topology::Switch, 3);
  config.dma_queues = 2;
  config.dma_remote_bytes_per_cycle = 8;
  config.link_bandwidth_GBps = 20;
  std::vector<std::uint64_t> elapsed(3, 0);
  Platform platform(
      "platform", config, {0, 1, 2}, problem_for(3), layout_for(3),
      [&](Rank& r) {
        const Tile first = r.alloc(kElements, DType::FP32);
        const Tile second = r.alloc(kElements, DType::FP32);
        const Tensor window = r.window("data");
        const std::uint64_t begin = now_ps();
        const Transfer a = r.remote_store_async(first, window, (r.rank() + 1) % 3, 0, kElements);
        const Transfer b = r.remote_store_async(second, window, (r.rank() + 2) % 3, 0, kElements);
        r.sync(a);
        r.sync(b);
        elapsed[r.rank()] = now_ps() - begin;
      },
      Platform::Options{});
  ASSERT_TRUE(run(platform).completed);
  const std::uint64_t alone = kSetupPs + kBytes * 1000 / 8 + kPathPs;
  EXPECT_EQ(alone, 4648000u);
  EXPECT_EQ(*std::min_element(elapsed.begin(), elapsed.end()), alone);
  for (int r = 0; r < 3; ++r) EXPECT_LE(elapsed[r], alone + 25600) << "rank " << r;
}

TEST(Interconnect, PathsWorkedOutAgainAfterTheCacheIsEmptiedGiveTheSameTimes) {
  // As above, with the path cache emptied before every burst: each transaction works its
  // path out again, and the paths it holds stay put while it passes.
  const PlatformConfig config = round_config(Topology::Ring, 4);
  PathCacheLimit one_path;
  one_path.paths = 1;
  const std::vector<std::uint64_t> t = store_flows({0, 1, 2, 3}, {2, 2, -1, -1}, config, one_path);
  const std::uint64_t one_hop = kSetupPs + kLinkPs + (1000 + 300) * 1000;
  EXPECT_EQ(std::max(t[0] - 1000 * 1000, t[1]), one_hop + kLinkPs);
  EXPECT_EQ(std::min(t[0] - 1000 * 1000, t[1]), one_hop + kLinkPs - kBurstPs);
}

// Full mesh: rank 0 pulls the tile from rank 1; how long the pull took.
std::uint64_t remote_load_elapsed(bool whole) {
  const PlatformConfig config = round_config(Topology::FullMesh, 2);
  Platform::Options options;
  options.whole_transfers = whole;
  std::uint64_t elapsed = 0;
  Platform platform(
      "platform", config, {0, 1}, problem_for(2), layout_for(2),
      [&](Rank& r) {
        if (r.rank() != 0) return;
        const Tile tile = r.alloc(kElements, DType::FP32);
        r.remote_load(tile, r.window("data"), 1, 0, kElements);
        elapsed = now_ps();
      },
      options);
  EXPECT_TRUE(run(platform).completed);
  return elapsed;
}

TEST(Interconnect, RemoteLoadPaysTheRequestFlightAndTheDataFlight) {
  // The link streams the 32 bursts from the setup on (100 + 1024 ns); the request's flight
  // (1000), the peer's GM read (1000) and the data's flight back (1000) are pipeline latency
  // paid once: 4124 ns.
  EXPECT_EQ(remote_load_elapsed(false), kSetupPs + kLinkPs + 3 * 1000 * 1000);
}

TEST(Interconnect, RemoteLoadTimedWholeAsOneTransactionPaysTheSameFlights) {
  // As above, the pull going down as one transaction: each burst still crosses the link and
  // carries the flights, which the transfer pays once: the same 4124 ns.
  EXPECT_EQ(remote_load_elapsed(true), kSetupPs + kLinkPs + 3 * 1000 * 1000);
}

TEST(UnifiedBuffer, OverflowNamesTheBytesAskedAndTheLimit) {
  PlatformConfig config = round_config(Topology::FullMesh, 1);
  config.ub_physical_bytes = 4096;
  config.ub_usable_bytes = 4096;
  bool returned = false;
  Platform platform("platform", config, {0}, problem_for(1), layout_for(1),
                    [&](Rank& r) {
                      r.alloc(512, DType::FP32);  // 2048 B: fits
                      r.alloc(513, DType::FP32);  // 2052 B more: does not
                      returned = true;
                    },
                    {});
  const Platform::Outcome outcome = run(platform);
  EXPECT_FALSE(outcome.completed);
  EXPECT_FALSE(returned);
  EXPECT_EQ(outcome.failure,
            "rank 0: UB overflow: asked for 2052 bytes with 2048 of 4096 usable bytes in use "
            "(limit 4096, ub.usable_bytes)");
}

TEST(UnifiedBuffer, TilesGoToTheFirstGapThatFits) {
  // 32-byte alignment; FP32 tiles of 256 elements are 1024 B. Holes left by releases are
  // filled first, from the lowest, and merge with their neighbours.
  PlatformConfig config = round_config(Topology::FullMesh, 1);
  std::vector<std::uint32_t> offsets;
  Platform platform("platform", config, {0}, problem_for(1), layout_for(1),
                    [&](Rank& r) {
                      const auto place = [&](std::uint64_t elements) {
                        const Tile tile = r.alloc(elements, DType::FP32);
                        offsets.push_back(tile.offset);
                        return tile;
                      };
                      const Tile a = place(256);  // [0, 1024)
                      const Tile b = place(256);  // [1024, 2048)
                      place(256);                 // [2048, 3072)
                      r.release(a);
                      const Tile d = place(128);  // the hole at 0: [0, 512)
                      place(256);                 // [512, 1024) is too small: [3072, 4096)
                      r.release(b);
                      place(384);  // [512, 2048), the two holes merged
                      place(8);    // no gap left below 4096
                      r.release(d);
                      place(8);  // the hole at 0 again
                    },
                    {});
  EXPECT_TRUE(run(platform).completed);
  EXPECT_EQ(offsets, (std::vector<std::uint32_t>{0, 1024, 2048, 0, 3072, 512, 4096, 0}));
}

// Signals on a two-device full mesh. Rank 1 notifies rank 0's cell [1,0]: each notify costs
// 20 ns at the core, then the path latency 1000 ns and the GM write latency 300 ns, so the
// first lands at 1320 ns and a second at 1340 ns. Rank 0 waits from t = 0 with a 500 ns poll
// period: the look after 1320 ns is at 1500 ns, answered at 2000 ns, plus the 10 ns invalidate.
constexpr std::uint64_t kReleasedPs = 2010000;

struct SignalRun {
  Platform::Outcome outcome;
  std::uint64_t released_ps = 0;  // 0: the wait never returned
  std::int32_t cell = 0;
  std::uint64_t polls = 0;
};

SignalRun signal_run(const std::vector<std::pair<std::int32_t, NotifyOp>>& notifies,
                     std::int32_t expected, WaitCmp cmp, std::vector<int> devices = {0, 1},
                     double poll_period_cycles = 500) {
  PlatformConfig config = round_config(Topology::FullMesh, 4);
  config.poll_period_cycles = poll_period_cycles;
  SignalRun result;
  Platform platform("platform", config, std::move(devices), problem_for(2), layout_for(2),
                    [&](Rank& r) {
                      const Signal s = r.signal("signal");
                      if (r.rank() == 1) {
                        for (const auto& [value, op] : notifies) r.notify(s, 0, 1, 0, value, op);
                      } else {
                        r.wait(s, 1, 0, expected, cmp);
                        result.released_ps = now_ps();
                      }
                    },
                    {});
  result.outcome = run(platform);
  result.cell = platform.read_cell(0, kSignal, 1, 0);
  result.polls = platform.core(0).stats().polls;
  return result;
}

TEST(Signals, AcknowledgedNotifyKeepsTheCoreForTheRoundTrip) {
  // sync.notify_acknowledged: the first notify leaves at 20 ns and is applied at 1320 ns, as
  // posted; its acknowledgement is back after another 1000 ns flight, at 2320 ns. Only then
  // does the second leave (2340 ns), applied at 3640 and acknowledged at 4640 ns.
  PlatformConfig config = round_config(Topology::FullMesh, 2);
  config.notify_acknowledged = 1;
  std::vector<std::uint64_t> returned;
  std::uint64_t released_ps = 0;
  Platform platform("platform", config, {0, 1}, problem_for(2), layout_for(2),
                    [&](Rank& r) {
                      const Signal s = r.signal("signal");
                      if (r.rank() == 1) {
                        for (int i = 0; i < 2; ++i) {
                          r.notify(s, 0, 1, 0, 1, NotifyOp::AtomicAdd);
                          returned.push_back(now_ps());
                        }
                      } else {
                        r.wait(s, 1, 0, 2, WaitCmp::Ge);
                        released_ps = now_ps();
                      }
                    },
                    {});
  ASSERT_TRUE(run(platform).completed);
  EXPECT_EQ(returned, (std::vector<std::uint64_t>{2320000u, 4640000u}));
  // Polls every 500 ns: the look at 4000 ns sees 2, answered at 4500 ns, plus the invalidate.
  EXPECT_EQ(released_ps, 4510000u);
}

TEST(VectorCore, LaunchSetupRunsBeforeTheBodyAndCountsInTheRanksTime) {
  // launch.offset 1000 cycles, launch.setup 250: rank 1 starts at 1000 ns, its body at
  // 1250 ns, and its local load (1612 ns) ends at 2862 ns; rank 0 ends at 1862 ns.
  PlatformConfig config = round_config(Topology::FullMesh, 2);
  config.launch_offset_cycles = 1000;
  config.launch_setup_cycles = 250;
  Platform platform("platform", config, {0, 1}, problem_for(2), layout_for(2),
                    [&](Rank& r) {
                      const Tile tile = r.alloc(kElements, DType::FP32);
                      r.load(tile, r.input(), 0, kElements);
                    },
                    {});
  ASSERT_TRUE(run(platform).completed);
  EXPECT_EQ(platform.core(0).stats().start_ps, 0u);
  EXPECT_EQ(platform.core(0).stats().finish_ps, 1862000u);
  EXPECT_EQ(platform.core(1).stats().start_ps, 1000000u);
  EXPECT_EQ(platform.core(1).stats().finish_ps, 2862000u);
}

TEST(Signals, ZeroPollPeriodReleasesWhenTheNotifyLands) {
  // No polling granularity: released at the landing, 1320 ns, plus the 10 ns invalidate.
  const SignalRun r = signal_run({{1, NotifyOp::AtomicAdd}}, 1, WaitCmp::Ge, {0, 1}, 0);
  ASSERT_TRUE(r.outcome.completed) << r.outcome.deadlock;
  EXPECT_EQ(r.released_ps, 1330000u);
}

TEST(Signals, ACellWrittenWithBothOpsIsAProtocolError) {
  // The spec's rule: a cell is only ever added to or only ever set. The Set lands second, at
  // 1340 ns, and the run reports the cell rather than a result that depends on the race.
  const SignalRun r = signal_run({{1, NotifyOp::AtomicAdd}, {5, NotifyOp::Set}}, 5, WaitCmp::Ge);
  EXPECT_FALSE(r.outcome.completed);
  EXPECT_EQ(r.outcome.failure,
            "rank 0's signal cell signal[1,0] was written with both AtomicAdd and Set (at "
            "1340.000 ns): a cell must never be written with both ops");
}

TEST(Signals, AtomicAddAccumulates) {
  const SignalRun r =
      signal_run({{1, NotifyOp::AtomicAdd}, {1, NotifyOp::AtomicAdd}}, 2, WaitCmp::Eq);
  ASSERT_TRUE(r.outcome.completed) << r.outcome.deadlock;
  EXPECT_EQ(r.cell, 2);
  EXPECT_EQ(r.released_ps, kReleasedPs);
  EXPECT_EQ(r.polls, 4u);  // looks at 0, 500, 1000 and 1500 ns
}

TEST(Signals, SetOverwrites) {
  const SignalRun r = signal_run({{5, NotifyOp::Set}, {3, NotifyOp::Set}}, 3, WaitCmp::Eq);
  ASSERT_TRUE(r.outcome.completed) << r.outcome.deadlock;
  EXPECT_EQ(r.cell, 3);
  EXPECT_EQ(r.released_ps, kReleasedPs);
}

TEST(Signals, EqWaitMissesAnOvershootAndDeadlocks) {
  // The cell is 1 from 1320 ns but already 2 at the 1500 ns look: Eq 1 never holds again.
  const SignalRun r =
      signal_run({{1, NotifyOp::AtomicAdd}, {1, NotifyOp::AtomicAdd}}, 1, WaitCmp::Eq);
  EXPECT_FALSE(r.outcome.completed);
  EXPECT_EQ(r.released_ps, 0u);
  EXPECT_EQ(r.cell, 2);
  EXPECT_NE(r.outcome.deadlock.find("rank 0 (device 0) waits on signal[1,0] Eq 1, cell holds 2"),
            std::string::npos)
      << r.outcome.deadlock;
}

TEST(Signals, GeWaitIsReleasedByTheSameOvershoot) {
  const SignalRun r =
      signal_run({{1, NotifyOp::AtomicAdd}, {1, NotifyOp::AtomicAdd}}, 1, WaitCmp::Ge);
  ASSERT_TRUE(r.outcome.completed) << r.outcome.deadlock;
  EXPECT_EQ(r.released_ps, kReleasedPs);
}

TEST(Signals, GeWaitIsReleasedByOneLargeAdd) {
  const SignalRun r = signal_run({{3, NotifyOp::AtomicAdd}}, 2, WaitCmp::Ge);
  ASSERT_TRUE(r.outcome.completed) << r.outcome.deadlock;
  EXPECT_EQ(r.cell, 3);
  EXPECT_EQ(r.released_ps, kReleasedPs);
}

TEST(Signals, WaitNobodyNotifiesIsAReportedDeadlock) {
  // Ranks on devices 3 and 1, so the report must tell rank and device apart.
  const SignalRun r = signal_run({}, 1, WaitCmp::Ge, {3, 1});
  EXPECT_FALSE(r.outcome.completed);
  EXPECT_TRUE(r.outcome.timeout.empty());
  EXPECT_NE(r.outcome.deadlock.find("rank 0 (device 3) waits on signal[1,0] Ge 1, cell holds 0"),
            std::string::npos)
      << r.outcome.deadlock;
  EXPECT_EQ(r.outcome.deadlock.find("rank 1"), std::string::npos) << "rank 1 finished";
}

// Posted signal updates on a two-device full mesh, into rank 1's memory: rank 1 to its own
// cells [0..63, 0], and (when asked) rank 0 to rank 1's cells [64..127, 0]. A notify costs the
// core 20 ns, so a loop's notify i leaves 20 (i + 1) ns after the loop starts; rank 1's own
// path has no latency, rank 0's the link's 1000 ns; each lands 300 ns (the GM write) after the
// memory starts it.
struct PostedRun {
  std::vector<std::uint64_t> landed_ps;  // by cell row
  // Updates in rank 1's memory when the first loop to run has ended, and the entries holding them.
  std::uint64_t in_flight = 0;
  std::size_t entries = 0;
};

PostedRun posted_run(double gm_atomic_ns, bool remote_too, double rank1_offset_cycles) {
  PlatformConfig config = round_config(Topology::FullMesh, 2);
  config.gm_atomic_ns = gm_atomic_ns;
  config.launch_offset_cycles = rank1_offset_cycles;  // rank r starts r times this late
  const int rows = remote_too ? 128 : 64;
  PostedRun result;
  Platform platform("platform", config, {0, 1}, problem_for(2),
                    {{{"data", kElements}}, {{"signal", rows, 1}}},
                    [&](Rank& r) {
                      const Signal s = r.signal("signal");
                      if (r.rank() == 0 && !remote_too) return;
                      const int first = r.rank() == 1 ? 0 : 64;
                      for (int row = first; row < first + 64; ++row)
                        r.notify(s, 1, row, 0, 1, NotifyOp::AtomicAdd);
                      if (r.rank() != (remote_too ? 0 : 1)) return;
                      result.in_flight = platform.device(1).gm.posted_updates();
                      result.entries = platform.device(1).gm.posted_entries();
                    },
                    {});
  EXPECT_TRUE(run(platform).completed);
  const SignalInfo& signal = platform.memory().signals.at(kSignal);
  for (int row = 0; row < rows; ++row) {
    const std::uint64_t address = signal.address + 4 * static_cast<std::uint64_t>(row);
    EXPECT_EQ(platform.device(1).gm.read_cell(address), 1) << "row " << row;
    const GlobalMemory::CellWrite* write = platform.device(1).gm.last_write(address);
    result.landed_ps.push_back(write == nullptr ? 0 : write->landed_ps);
  }
  return result;
}

TEST(Signals, PostedUpdatesQueuedForTheMemoryAreHeldAsOneRun) {
  // gm.atomic_ns 100: the memory starts update i at max(20 (i + 1), 20 + 100 i) = 20 + 100 i ns,
  // so it lands at 320 + 100 i ns. When the loop ends (1280 ns) ten have landed (the tenth at
  // 1220 ns) and 54 wait, all in one entry.
  const PostedRun r = posted_run(100, false, 0);
  ASSERT_EQ(r.landed_ps.size(), 64u);
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(r.landed_ps[i], (320 + 100 * i) * 1000) << i;
  EXPECT_EQ(r.in_flight, 54u);
  EXPECT_EQ(r.entries, 1u);
}

TEST(Signals, PostedRunsFromTwoCoresLandInTimeOrder) {
  // No atomic queue; rank 1 starts at 1300 ns. Rank 0's update j leaves at 20 (j + 1) ns and
  // lands at 20 (j + 1) + 1000 + 300 ns; rank 1's own update i at 1300 + 20 (i + 1) + 300 ns.
  // The two runs land interleaved from 1620 to 2580 ns, rank 0's j = i + 15 at the same
  // picosecond as rank 1's i, and each cell keeps the time its own update landed. Rank 0's
  // loop ends (1280 ns) before any of its 64 has landed: one entry holds them all.
  const PostedRun r = posted_run(0, true, 1300);
  EXPECT_EQ(r.in_flight, 64u);
  EXPECT_EQ(r.entries, 1u);
  ASSERT_EQ(r.landed_ps.size(), 128u);
  for (std::size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(r.landed_ps[i], (1300 + 20 * (i + 1) + 300) * 1000) << i;
    EXPECT_EQ(r.landed_ps[64 + i], (20 * (i + 1) + 1300) * 1000) << i;
  }
}

TEST(Signals, UpdatesArrivingAtOneInstantLandInTheirNotifiesOrder) {
  // Two Sets into rank 0's cell [0, 0] arrive at 1320 ns: rank 1's leaves at 20 ns over the
  // 1000 ns link, rank 0's own (no path latency) at 1020 ns, after 50 notifies into rows 1-50.
  // Equal arrivals land by sender, not by when (or in which order SystemC ran) the senders
  // issued them: rank 0's first, then rank 1's, which the cell keeps.
  const PlatformConfig config = round_config(Topology::FullMesh, 2);
  Platform platform("platform", config, {0, 1}, problem_for(2),
                    {{{"data", kElements}}, {{"signal", 64, 1}}},
                    [&](Rank& r) {
                      const Signal s = r.signal("signal");
                      if (r.rank() == 0) {
                        for (int row = 1; row <= 50; ++row)
                          r.notify(s, 0, row, 0, 1, NotifyOp::AtomicAdd);
                      }
                      r.notify(s, 0, 0, 0, r.rank() == 0 ? 7 : 9, NotifyOp::Set);
                    },
                    {});
  ASSERT_TRUE(run(platform).completed);
  EXPECT_EQ(platform.read_cell(0, kSignal, 0, 0), 9);
  const SignalInfo& signal = platform.memory().signals.at(kSignal);
  const GlobalMemory::CellWrite* write = platform.device(0).gm.last_write(signal.address);
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(write->landed_ps, 1320000u);
  EXPECT_EQ(write->notify.rank, 1);
  EXPECT_EQ(write->notify.index, 0u);
}

TEST(Signals, RunsFromFourSendersLandInArrivalThenSenderOrder) {
  // An 8-device ring, 1000 ns a hop, no atomic queue. Ranks 4-7 (4, 3, 2 and 1 hops from rank 0)
  // each add 1 to rows 0-15 of rank 0's signal in a loop, odd ranks from row 15 down, even ranks
  // from row 0 up; rank r starts 1000 r ns late, so each loop is one run of 16 updates, and all
  // four runs arrive together: a loop's k-th update at 8300 + 20 (k + 1) ns, two at a time. Each
  // row keeps, as its writer, the update that lands last: the latest to arrive, of equal
  // arrivals the highest sender's.
  PlatformConfig config = round_config(Topology::Ring, 8);
  config.gm_atomic_ns = 0;
  config.launch_offset_cycles = 1000;
  constexpr int kRows = 16;
  const auto step = [](int rank, int row) { return rank % 2 == 1 ? kRows - 1 - row : row; };
  const auto arrival_ns = [&](int rank, int row) { return 8300 + 20 * (step(rank, row) + 1); };
  Platform platform("platform", config, {0, 1, 2, 3, 4, 5, 6, 7}, problem_for(8),
                    {{{"data", kElements}}, {{"signal", kRows, 1}}},
                    [&](Rank& r) {
                      if (r.rank() < 4) return;
                      const Signal s = r.signal("signal");
                      for (int k = 0; k < kRows; ++k)
                        r.notify(s, 0, step(r.rank(), k), 0, 1, NotifyOp::AtomicAdd);
                    },
                    {});
  ASSERT_TRUE(run(platform).completed);
  const SignalInfo& signal = platform.memory().signals.at(kSignal);
  for (int row = 0; row < kRows; ++row) {
    int last = 4;
    for (int rank = 5; rank <= 7; ++rank) {
      if (arrival_ns(rank, row) >= arrival_ns(last, row)) last = rank;
    }
    EXPECT_EQ(platform.read_cell(0, kSignal, row, 0), 4) << "row " << row;
    const GlobalMemory::CellWrite* write =
        platform.device(0).gm.last_write(signal.address + 4 * static_cast<std::uint64_t>(row));
    ASSERT_NE(write, nullptr);
    EXPECT_EQ(write->notify.rank, last) << "row " << row;
    EXPECT_EQ(write->landed_ps, static_cast<std::uint64_t>(arrival_ns(last, row)) * 1000)
        << "row " << row;
  }
}

// A 2-server x 2-NPU cluster: devices 0, 1 in server 0 and 2, 3 in server 1, on the HCCS full
// mesh of round_config inside a server (16 B/ns, 1000 ns). NICs of 8 B/ns: a 512 B burst holds
// a NIC direction for 64 ns, the 16384 B tile 2048 ns; 300 ns per NIC (both ends of a path),
// 200 ns per leaf, 100 ns per spine. Rail wiring: leaf0 = {0, 2}, leaf1 = {1, 3}; leaf wiring
// with one server per leaf: leaf0 = {0, 1}, leaf1 = {2, 3}. A leaf's link to each spine
// carries 8 B/ns x max(1, 2 ports / spines) / oversubscription.
PlatformConfig cluster_config(Wiring wiring, int spines = 1, double oversubscription = 1) {
  PlatformConfig c = round_config(Topology::Cluster, 4);
  c.cluster_servers = 2;
  c.cluster_npus_per_server = 2;
  c.cluster_wiring = wiring;
  c.cluster_servers_per_leaf = 1;
  c.cluster_spines = spines;
  c.cluster_oversubscription = oversubscription;
  c.nic_bandwidth_GBps = 8;
  c.nic_latency_ns = 300;
  c.leaf_latency_ns = 200;
  c.spine_latency_ns = 100;
  return c;
}

constexpr std::uint64_t kNicPs = kBytes * 1000 / 8;    // 2048 ns
constexpr std::uint64_t kNicBurstPs = 512 * 1000 / 8;  // 64 ns
constexpr std::uint64_t kGmWritePs = 300 * 1000;
constexpr std::uint64_t kSameLeafPs = (300 + 200 + 300) * 1000;               // NIC, leaf, NIC
constexpr std::uint64_t kCrossLeafPs = (300 + 200 + 100 + 200 + 300) * 1000;  // ... spine ...

// One simulation per test case (SystemC elaborates once per process).
TEST(Cluster, FlowInsideAServerTakesTheHccsLink) {
  // 0 -> 1: HCCS, 100 + 1024 + 1000 + 300 = 2424 ns.
  EXPECT_EQ(store_flows({0, 1, 2, 3}, {1, -1, -1, -1}, cluster_config(Wiring::Rail))[0],
            kSetupPs + kLinkPs + 1000 * 1000 + kGmWritePs);
}

TEST(Cluster, CrossServerFlowPaysTheNicRateAndBothNicsAndTheLeafsLatency) {
  // 0 -> 2, same rail: NIC up, leaf0, NIC down: 100 + 2048 + 800 + 300 = 3248 ns.
  EXPECT_EQ(store_flows({0, 1, 2, 3}, {2, -1, -1, -1}, cluster_config(Wiring::Rail))[0],
            kSetupPs + kNicPs + kSameLeafPs + kGmWritePs);
}

TEST(Cluster, CrossRailFlowAlsoPaysTheSpineAndASecondLeaf) {
  // 0 -> 3, rail 0 to rail 1 through the spine: 100 + 2048 + 1100 + 300 = 3548 ns (the
  // leaf's uplink runs at 16 B/ns: the NIC stays the bottleneck).
  EXPECT_EQ(store_flows({0, 1, 2, 3}, {3, -1, -1, -1}, cluster_config(Wiring::Rail))[0],
            kSetupPs + kNicPs + kCrossLeafPs + kGmWritePs);
}

TEST(Cluster, TwoFlowsIntoOneNicShareIt) {
  // Leaf wiring: 0 -> 2 and 1 -> 2 both cross leaf0 -> spine0 -> leaf1 and end on leaf1's
  // link down to device 2, busy for 64 bursts of 64 ns: the last byte lands at
  // 100 + 4096 + 1100 + 300 = 5596 ns; the first flow ends one burst earlier.
  const std::vector<std::uint64_t> t =
      store_flows({0, 1, 2, 3}, {2, 2, -1, -1}, cluster_config(Wiring::Leaf));
  const std::uint64_t shared = kSetupPs + 2 * kNicPs + kCrossLeafPs + kGmWritePs;
  EXPECT_EQ(std::max(t[0], t[1]), shared);
  EXPECT_EQ(std::min(t[0], t[1]), shared - kNicBurstPs);
}

TEST(Cluster, TwoFlowsOnDifferentRailsDoNotInterfere) {
  // Rail wiring: 0 -> 2 on rail 0 and 1 -> 3 on rail 1 share no link: each takes 3248 ns.
  const std::vector<std::uint64_t> t =
      store_flows({0, 1, 2, 3}, {2, 3, -1, -1}, cluster_config(Wiring::Rail));
  EXPECT_EQ(t[0], kSetupPs + kNicPs + kSameLeafPs + kGmWritePs);
  EXPECT_EQ(t[1], kSetupPs + kNicPs + kSameLeafPs + kGmWritePs);
}

TEST(Cluster, NonBlockingUplinkCarriesTwoNicsFlows) {
  // Leaf wiring: 0 -> 2 and 1 -> 3 leave leaf0 on its one uplink, then part. At 16 B/ns a
  // burst holds the uplink 32 ns, so the two flows fit: the first ends as alone (3548 ns),
  // the second 32 ns later, each of its bursts behind one of the first's.
  const std::uint64_t alone = kSetupPs + kNicPs + kCrossLeafPs + kGmWritePs;
  const std::vector<std::uint64_t> t =
      store_flows({0, 1, 2, 3}, {2, 3, -1, -1}, cluster_config(Wiring::Leaf, 1, 1));
  EXPECT_EQ(std::min(t[0], t[1]), alone);
  EXPECT_EQ(std::max(t[0], t[1]), alone + kNicBurstPs / 2);
}

TEST(Cluster, OversubscribedSpineHalvesTheCrossLeafRate) {
  // The same flows with oversubscription 2: the uplink runs at 8 B/ns and carries 64 bursts of
  // 64 ns, so each flow moves at half the NIC rate: 100 + 4096 + 1100 + 300 = 5596 ns, the
  // two one burst apart.
  const std::vector<std::uint64_t> t =
      store_flows({0, 1, 2, 3}, {2, 3, -1, -1}, cluster_config(Wiring::Leaf, 1, 2));
  const std::uint64_t shared = kSetupPs + 2 * kNicPs + kCrossLeafPs + kGmWritePs;
  EXPECT_EQ(std::max(t[0], t[1]), shared);
  EXPECT_EQ(std::min(t[0], t[1]), shared - kNicBurstPs);
}

std::vector<std::string> link_names(const Fabric& fabric, int from, int to) {
  std::vector<std::string> names;
  for (Fabric::LinkId id : fabric.route(from, to).links) {
    const Fabric::Link link = fabric.link(id);
    names.push_back(link.scope + "." + link.name);
  }
  return names;
}

TEST(Cluster, EcmpPicksTheSameSpineEveryRunAndMachine) {
  // Two servers of 8 on two leaves, 4 spines. The spine of a pair is fixed_hash(from << 32 |
  // to) % 4: these values hold on every machine; changing them changes every cluster result.
  PlatformConfig config = cluster_config(Wiring::Leaf, 4);
  config.cluster_npus_per_server = 8;
  config.devices = 16;
  const Fabric fabric(config);
  EXPECT_EQ(link_names(fabric, 0, 9),
            (std::vector<std::string>{"dev0.nic_up", "leaf0.up_to_spine1", "spine1.down_to_leaf1",
                                      "leaf1.down_to_dev9"}));
  EXPECT_EQ(fabric.spine_of(9, 0), 2);
  EXPECT_EQ(fabric.spine_of(3, 12), 2);
  EXPECT_EQ(fabric.spine_of(5, 14), 0);
  EXPECT_EQ(link_names(Fabric(config), 0, 9), link_names(fabric, 0, 9));
  // The route's latency and slowest rate: 1100 ns; the NIC's 8 B/ns = 0.008 B/ps (the leaf's
  // links to the spines carry 8 B/ns x 8 ports / 4 spines = 16 B/ns each).
  EXPECT_DOUBLE_EQ(fabric.route(0, 9).latency_ps, 1100000.0);
  EXPECT_DOUBLE_EQ(fabric.route(0, 9).bytes_per_ps, 0.008);
  EXPECT_EQ(link_names(fabric, 0, 1), (std::vector<std::string>{"dev0.link_to_1"}));
}

TEST(Fabric, ExistingTopologiesKeepTheirLinkNames) {
  EXPECT_EQ(link_names(Fabric(round_config(Topology::Ring, 4)), 0, 2),
            (std::vector<std::string>{"dev0.link_to_1", "dev1.link_to_2"}));
  EXPECT_EQ(link_names(Fabric(round_config(Topology::Ring, 4)), 0, 3),
            (std::vector<std::string>{"dev0.link_to_3"}));
  EXPECT_EQ(link_names(Fabric(round_config(Topology::Switch, 4)), 1, 3),
            (std::vector<std::string>{"dev1.uplink", "dev3.downlink"}));
  EXPECT_EQ(link_names(Fabric(round_config(Topology::FullMesh, 4)), 3, 0),
            (std::vector<std::string>{"dev3.link_to_0"}));
}

// Two SuperPod nodes of two NPUs, 8 B/ns ports; tier 1 400 ns, tier 2 900 ns.
PlatformConfig superpod_config() {
  PlatformConfig config = round_config(Topology::Superpod, 4);
  config.superpod_nodes = 2;
  config.superpod_npus_per_node = 2;
  config.superpod_bandwidth_GBps = 8;
  config.superpod_tier1_latency_ns = 400;
  config.superpod_tier2_latency_ns = 900;
  return config;
}

TEST(Superpod, FlowInsideANodePaysTheFirstTier) {
  // 0 -> 1: 100 + 2048 + 400 + 300 ns.
  EXPECT_EQ(store_flows({0, 1, 2, 3}, {1, -1, -1, -1}, superpod_config())[0],
            kSetupPs + kNicPs + 400 * 1000 + kGmWritePs);
}

TEST(Superpod, FlowAcrossNodesPaysTheSecondTier) {
  // 0 -> 2: 100 + 2048 + 900 + 300 ns, over device 0's port and node 1's link down to 2.
  EXPECT_EQ(store_flows({0, 1, 2, 3}, {2, -1, -1, -1}, superpod_config())[0],
            kSetupPs + kNicPs + 900 * 1000 + kGmWritePs);
  EXPECT_EQ(link_names(Fabric(superpod_config()), 0, 2),
            (std::vector<std::string>{"dev0.ub_up", "node1.down_to_dev2"}));
}

// A block array keeps every entry across its blocks (64 of 8 bytes each), in a copy too; a
// moved-from one is empty and takes entries again.
TEST(BlockArray, KeepsEveryEntryAcrossBlocksCopiesAndMoves) {
  struct Entry {
    std::uint32_t index;
    std::uint32_t value;
  };
  BlockArray<Entry> entries;
  for (std::uint32_t i = 0; i < 1000; ++i) entries.push_back({i, 3 * i + 1});
  BlockArray<Entry> copy = entries;
  BlockArray<Entry> moved = std::move(entries);
  ASSERT_EQ(copy.size(), 1000u);
  ASSERT_EQ(moved.size(), 1000u);
  for (std::uint32_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(copy[i].index, i);
    EXPECT_EQ(copy[i].value, 3 * i + 1);
    EXPECT_EQ(moved[i].value, 3 * i + 1);
  }
  EXPECT_TRUE(entries.empty());
  entries.push_back({7, 8});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].value, 8u);
  copy = moved;
  copy.push_back({1000, 0});
  EXPECT_EQ(copy.size(), 1001u);
  EXPECT_EQ(copy[999].value, 2998u);
  EXPECT_EQ(moved.size(), 1000u);
}

// The packed span log reads back every span exactly: kind, reference, round (kept only where
// it changes), start and end, also for a span longer than 32 bits of picoseconds and for
// spans that do not start where the one before ended (a gap, an overlap).
TEST(SpanLog, ReadsBackEverySpanExactly) {
  using Kind = CoreSpan::Kind;
  const std::vector<CoreSpan> spans = {
      {Kind::Setup, -1, 0, 0, 500},
      {Kind::Transfer, 0, 536'870'911, 500, 4'295'000'000},  // the largest reference
      {Kind::Wait, 0, 3, 4'295'000'000, 12'000'000'000},     // 7.7 ms: its end kept apart
      {Kind::Reduce, 2, 1, 12'000'000'000, 12'000'000'001},  // round 1 had no span
      {Kind::Notify, 2, 9, 12'000'000'001, 12'000'004'000},
      {Kind::Wait, 2, 4, 12'000'005'000, 12'000'006'000},     // after a gap
      {Kind::Notify, 3, 10, 12'000'005'500, 12'000'007'000},  // overlapping the one before
      {Kind::Transfer, 3, 1, 12'000'007'000, 12'000'007'001},
  };
  SpanLog log;
  for (const CoreSpan& span : spans) log.push_back(span);
  ASSERT_EQ(log.size(), spans.size());
  std::size_t i = 0;
  for (const CoreSpan span : log) {
    SCOPED_TRACE(i);
    EXPECT_EQ(span.kind, spans[i].kind);
    EXPECT_EQ(span.round, spans[i].round);
    EXPECT_EQ(span.ref, spans[i].ref);
    EXPECT_EQ(span.start_ps, spans[i].start_ps);
    EXPECT_EQ(span.end_ps, spans[i].end_ps);
    ++i;
  }
  EXPECT_EQ(log.back().end_ps, 12'000'007'001u);
  EXPECT_THROW(log.push_back({Kind::Reduce, 2, SpanLog::kRefLimit, 0, 1}), std::length_error);
}

// The packed notify links read back exactly: times near their block's base and beyond 32 bits
// of it (kept apart), a time before the base (kept apart) and the largest offset that fits.
TEST(NotifyLog, ReadsBackEveryLinkExactly) {
  const std::vector<NotifyLink> links = {{5'000'000'000'000, -1},
                                         {5'000'000'000'000 + 4'294'967'294, 0},
                                         {5'000'000'000'000 + 4'294'967'295, 0},
                                         {5'000'000'000'000 + 4'294'967'296, 1},
                                         {4'999'999'999'999, 2},
                                         {5'000'000'000'007, 2046}};
  NotifyLog log;
  for (const NotifyLink& link : links) log.push_back(link);
  ASSERT_EQ(log.size(), links.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    EXPECT_EQ(log[i].issued_ps, links[i].issued_ps) << i;
    EXPECT_EQ(log[i].round, links[i].round) << i;
  }
}

// The schedule's lines, kept end to end, read back one by one with their times, an empty
// part and a line of nothing but parts included; the text is every line with its break.
TEST(ScheduleLog, ReadsBackEveryLineWithItsTime) {
  ScheduleLog log;
  EXPECT_TRUE(log.empty());
  log.add(7, {"rank=", "0", "", " op=", "load peer=0"});
  log.add(0, {});
  log.add(std::uint64_t{1} << 60, {"rank=12 op=wait cell=signal[3,4] Ge expected=1"});
  ASSERT_EQ(log.size(), 3u);
  std::vector<std::uint64_t> times;
  std::vector<std::string> lines;
  for (const ScheduleLog::Entry entry : log) {
    times.push_back(entry.at_ps);
    lines.emplace_back(entry.line);
  }
  EXPECT_EQ(times, (std::vector<std::uint64_t>{7, 0, std::uint64_t{1} << 60}));
  EXPECT_EQ(lines, (std::vector<std::string>{"rank=0 op=load peer=0", "",
                                             "rank=12 op=wait cell=signal[3,4] Ge expected=1"}));
  EXPECT_EQ(log.text(),
            "rank=0 op=load peer=0\n\nrank=12 op=wait cell=signal[3,4] Ge expected=1\n");
}

// The packed wait links read back exactly: a releasing rank's and block's largest values and
// "none", a blocked and an unblocked wait, a time beyond 32 bits of its block's base and a
// notify index beyond 31 bits (both kept apart).
TEST(WaitLog, ReadsBackEveryLinkExactly) {
  static_assert(sizeof(NotifyId) == 8);
  static_assert(sizeof(WaitLogEntry) == 12);
  std::vector<WaitLink> links(5);
  links[0].seen_ps = 9'000'000'000'000;
  links[1].seen_ps = links[0].seen_ps + 4'294'967'294;
  links[1].blocked = true;
  links[1].released_by =
      NotifyId(NotifyId::kRankLimit - 1, NotifyId::kBlockLimit - 1, (1u << 31) - 1);
  links[2].seen_ps = links[0].seen_ps + 4'294'967'295;
  links[2].released_by = NotifyId(3, 0, 7);
  links[3].seen_ps = links[0].seen_ps + 5;
  links[3].blocked = true;
  links[3].released_by = NotifyId(0, 2, 1u << 31);
  links[4].seen_ps = links[0].seen_ps + 6;
  WaitLog log;
  for (const WaitLink& link : links) log.push_back(link);
  ASSERT_EQ(log.size(), links.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    const WaitLink link = log[i];
    EXPECT_EQ(link.seen_ps, links[i].seen_ps) << i;
    EXPECT_EQ(link.blocked, links[i].blocked) << i;
    EXPECT_EQ(link.released_by.rank, links[i].released_by.rank) << i;
    EXPECT_EQ(link.released_by.block, links[i].released_by.block) << i;
    EXPECT_EQ(link.released_by.index, links[i].released_by.index) << i;
  }
  EXPECT_EQ(log[0].released_by.rank, -1);
}

// The address map keeps every entry through its growth: address 0 and the largest address, a
// signal's cells at a row stride, and lookups of addresses never made.
TEST(AddressMap, KeepsEveryEntryAsItGrows) {
  AddressMap<std::int32_t> map;
  EXPECT_EQ(map.find(0), nullptr);
  std::vector<std::uint64_t> addresses = {0, UINT64_MAX - 1};
  for (std::uint64_t row = 0; row < 5000; ++row) addresses.push_back(0x1000 + row * 4 * 4096 + 8);
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    const auto [value, fresh] = map.try_emplace(addresses[i]);
    EXPECT_TRUE(fresh);
    EXPECT_EQ(value, 0);
    value = static_cast<std::int32_t>(i) + 1;
  }
  EXPECT_EQ(map.size(), addresses.size());
  EXPECT_FALSE(map.try_emplace(addresses[7]).second);
  EXPECT_EQ(map.size(), addresses.size());
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    ASSERT_NE(map.find(addresses[i]), nullptr) << i;
    EXPECT_EQ(*map.find(addresses[i]), static_cast<std::int32_t>(i) + 1);
  }
  EXPECT_EQ(map.find(4), nullptr);
  EXPECT_EQ(map.find(0x1000 + 4), nullptr);
  std::int64_t sum = 0;
  std::size_t visited = 0;
  map.for_each([&](std::uint64_t address, std::int32_t value) {
    sum += value;
    ++visited;
    EXPECT_EQ(*map.find(address), value);
  });
  EXPECT_EQ(visited, addresses.size());
  const auto n = static_cast<std::int64_t>(addresses.size());
  EXPECT_EQ(sum, n * (n + 1) / 2);
}

// The path table keeps every path's links, near (up to four, in the entry) and far (a ring's
// longer paths), through its growth, which it reports so that pointers into it can be dropped;
// cleared, it holds none.
TEST(PathTable, KeepsEveryPathsLinksAsItGrowsAndSaysWhenItMoved) {
  std::vector<std::unique_ptr<BandwidthResource>> resources;
  for (int i = 0; i < 9; ++i) {
    resources.push_back(std::make_unique<BandwidthResource>("link" + std::to_string(i), 1.0));
  }
  // Path k crosses k % 10 links, starting at resource k % 9.
  const auto links_of = [&](std::uint64_t k) {
    std::vector<BandwidthResource*> links;
    for (std::uint64_t i = 0; i < k % 10; ++i) links.push_back(resources[(k + i) % 9].get());
    return links;
  };
  PathTable table;
  EXPECT_EQ(table.find(0), nullptr);
  int moves = 0;
  const std::uint64_t paths = 3000;
  for (std::uint64_t k = 0; k < paths; ++k) {
    const std::uint64_t key = k * 1031;  // a pair of devices, from * devices + to
    ASSERT_EQ(table.find(key), nullptr) << k;
    bool moved = false;
    Path& path = table.add(key, links_of(k), moved);
    moves += moved ? 1 : 0;
    path.latency = sc_core::sc_time(static_cast<double>(k), sc_core::SC_PS);
    path.marked = k % 3 == 0;
  }
  EXPECT_EQ(table.size(), paths);
  // The first path makes 16 entries, and each time 4/5 would be taken the table grows by half:
  // 16, 24, 36, ... 4618 entries, 15 moves to hold 3000 paths.
  EXPECT_EQ(moves, 15);
  for (std::uint64_t k = 0; k < paths; ++k) {
    const Path* path = table.find(k * 1031);
    ASSERT_NE(path, nullptr) << k;
    const std::vector<BandwidthResource*> expected = links_of(k);
    const std::vector<BandwidthResource*> stored(path->links().begin(), path->links().end());
    EXPECT_EQ(stored, expected) << k;
    EXPECT_EQ(path->latency.value(), k) << k;
    EXPECT_EQ(path->marked, k % 3 == 0) << k;
  }
  EXPECT_EQ(table.find(1), nullptr);
  table.clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(1031), nullptr);
  bool moved = true;
  table.add(1031, links_of(7), moved);
  EXPECT_FALSE(moved);  // the room is kept
  EXPECT_EQ(std::vector<BandwidthResource*>(table.find(1031)->links().begin(),
                                            table.find(1031)->links().end()),
            links_of(7));
}

// A log's rounds are kept where they change, with 32-bit entry indices: the last index that
// fits reads back its round, and one past it is refused rather than wrapped.
TEST(RoundChanges, KeepsRoundsUpToTheIndexLimit) {
  RoundChanges rounds;
  rounds.add(0, -1);
  rounds.add(1, 0);
  rounds.add(2, 0);
  rounds.add(RoundChanges::kIndexLimit - 1, 7);
  RoundCursor cursor;
  EXPECT_EQ(rounds.round(0, cursor), -1);
  EXPECT_EQ(rounds.round(2, cursor), 0);
  EXPECT_EQ(rounds.round(RoundChanges::kIndexLimit - 2, cursor), 0);
  EXPECT_EQ(rounds.round(RoundChanges::kIndexLimit - 1, cursor), 7);
  rounds.add(RoundChanges::kIndexLimit, 7);  // the same round: nothing to keep
  EXPECT_THROW(rounds.add(RoundChanges::kIndexLimit + 1, 8), std::length_error);
}

// A rank's round phases are kept where they change and read back round by round.
TEST(RoundPhases, ReadsBackEveryRoundsPhase) {
  const std::vector<std::string> phases = {"stage-in", "RS", "RS", "RS",
                                           "AG",       "AG", "RS", "stage-out"};
  RoundPhases rounds;
  for (const std::string& phase : phases) rounds.push_back(phase);
  ASSERT_EQ(rounds.size(), phases.size());
  for (std::size_t i = 0; i < phases.size(); ++i) EXPECT_EQ(rounds[i].str(), phases[i]) << i;
}

// Rounds that follow the one before cost no round of their own; rounds that jump ahead, go
// back or repeat after another read back as exactly as they do.
TEST(RoundChanges, ReadsBackFollowingAndJumpingRounds) {
  const std::vector<int> rounds_by_entry = {-1, 0, 0, 1, 2, 2, 2, 5, 6, 4, 5, 5, 3, 3, 4, 9};
  RoundChanges rounds;
  for (std::size_t i = 0; i < rounds_by_entry.size(); ++i) rounds.add(i, rounds_by_entry[i]);
  for (std::size_t i = 0; i < rounds_by_entry.size(); ++i) {
    RoundCursor fresh;  // each entry on its own, found by a search
    EXPECT_EQ(rounds.round(i, fresh), rounds_by_entry[i]) << i;
  }
}

// A walk reads each entry's round on from a cursor, which the reading moves: whatever the
// order of reading (forwards, backwards, skipping ahead and back), the rounds are the same.
TEST(RoundChanges, ACursorReadsTheSameRoundsInAnyOrder) {
  const std::vector<int> rounds_by_entry = {-1, 0, 0, 1, 2, 2, 2, 5, 6, 4, 5, 5, 3, 3, 4, 9};
  RoundChanges rounds;
  for (std::size_t i = 0; i < rounds_by_entry.size(); ++i) rounds.add(i, rounds_by_entry[i]);
  RoundCursor forwards;
  for (std::size_t i = 0; i < rounds_by_entry.size(); ++i)
    EXPECT_EQ(rounds.round(i, forwards), rounds_by_entry[i]) << i;
  RoundCursor backwards;
  for (std::size_t i = rounds_by_entry.size(); i-- > 0;)
    EXPECT_EQ(rounds.round(i, backwards), rounds_by_entry[i]) << i;
  RoundCursor skipping;
  for (std::size_t i : {0, 7, 3, 15, 9, 10, 2, 14, 1, 12, 11, 4})
    EXPECT_EQ(rounds.round(i, skipping), rounds_by_entry[i]) << i;
}

// The packed transfer log reads back every field exactly: records sharing their shape or not,
// with and without the delays kept beside the entries (queued, held), records kept whole (an
// offset beyond 32 bits, a landing that does not follow from the leaving time, the time held and
// the latency) and one whose times are out of order (never started).
TEST(TransferLog, ReadsBackEveryRecordExactly) {
  TransferRecord near;
  near.submit_ps = 7'000'000'000'000;  // 7 s: beyond 32 bits itself
  near.start_ps = near.submit_ps + 1'000;
  near.left_ps = near.start_ps + 4'294'967'295;  // the largest offset that fits
  near.held_ps = 250;
  near.latency_ps = 1'500'000;
  near.finish_ps = near.left_ps + near.held_ps + near.latency_ps;
  near.bytes = 196'608;
  near.peer = 1023;
  near.round = 2045;
  near.queue = 1023;
  near.op = TransferRecord::Op::RemoteStore;
  near.misaligned = true;
  near.limit = {TransferLimit::Kind::QueuedBehindFlow, 70'000};
  TransferRecord far = near;
  far.latency_ps = 4'294'967'296;  // 4.3 ms: beyond 32 bits, kept whole
  far.finish_ps = far.left_ps + far.held_ps + far.latency_ps;
  far.op = TransferRecord::Op::Load;
  TransferRecord early = near;  // landed before left + held + latency: kept whole
  early.finish_ps -= 1;
  TransferRecord unstarted;
  unstarted.submit_ps = 5'000;  // start_ps 0: never taken by a queue
  TransferRecord other = near;  // the same shape but for its peer; queued, never held
  other.peer = 5;
  other.held_ps = 0;
  other.finish_ps -= near.held_ps;
  TransferRecord prompt = near;  // taken at once, never held: no delays kept
  prompt.submit_ps += 9'000;
  prompt.start_ps = prompt.submit_ps;
  prompt.left_ps = prompt.start_ps + 4'294'967'295;
  prompt.held_ps = 0;
  prompt.finish_ps = prompt.left_ps + prompt.latency_ps;
  TransferRecord held = prompt;  // taken at once, then held
  held.held_ps = 7;
  held.finish_ps += 7;
  TransferLog log;
  for (const TransferRecord& r : {near, far, unstarted, near, other, prompt, held, prompt, early})
    log.push_back(r);
  ASSERT_EQ(log.size(), 9u);
  const auto same = [](const TransferRecord& a, const TransferRecord& b) {
    return a.submit_ps == b.submit_ps && a.start_ps == b.start_ps && a.left_ps == b.left_ps &&
           a.finish_ps == b.finish_ps && a.held_ps == b.held_ps && a.latency_ps == b.latency_ps &&
           a.bytes == b.bytes && a.peer == b.peer && a.round == b.round && a.queue == b.queue &&
           a.op == b.op && a.misaligned == b.misaligned && a.limit.kind == b.limit.kind &&
           a.limit.resource == b.limit.resource;
  };
  EXPECT_TRUE(same(log[0], near));
  EXPECT_TRUE(same(log[1], far));
  EXPECT_TRUE(same(log[2], unstarted));
  EXPECT_TRUE(same(log[3], near));
  EXPECT_TRUE(same(log[4], other));
  EXPECT_TRUE(same(log[5], prompt));
  EXPECT_TRUE(same(log[6], held));
  EXPECT_TRUE(same(log[7], prompt));
  EXPECT_TRUE(same(log[8], early));
  // A walk reads every record as reading it by its ticket does.
  std::size_t visited = 0;
  std::size_t far_peers = 0;
  for (const TransferRecord& r : log) {
    EXPECT_TRUE(same(r, log[visited])) << visited;
    ++visited;
    far_peers += r.peer == 1023 ? 1 : 0;
  }
  EXPECT_EQ(visited, 9u);
  EXPECT_EQ(far_peers, 7u);
}

// --- the progress line's figures ---

// The operations the ranks report while they run are those the count of their bodies gives
// (the share and time left of the progress line rest on it): the host mesh, 3 ranks of 2 blocks.
TEST(Progress, OperationsIssuedAreThoseCounted) {
  const ParsedRun run = parse_run({"-p", "a2a3-910b2", "-d", "0-2", "-k", "host_mesh", "--core-num",
                                   "2", "--size", "20KiB", "--timing-only"});
  std::uint64_t counted = 0;
  for (int rank = 0; rank < run.problem.ranks; ++rank)
    counted +=
        count_rank_operations(run.request, *run.kernel, run.problem, run.layout, rank).operations();
  RunProgress progress;
  Platform::Options options;
  options.timing_only = true;
  options.progress = &progress;
  Platform platform("platform", run.request.platform, run.request.devices, run.problem, run.layout,
                    run.kernel->body, options);
  ASSERT_TRUE(platform.run(sc_core::sc_time(1, sc_core::SC_SEC)).completed);
  EXPECT_GT(counted, 0u);
  EXPECT_EQ(progress.operations.load(), counted);
  EXPECT_EQ(progress.finished_ranks.load(), 6);  // every block of every rank
}

// --- a survey's run ---

// The builtin ring on 3 servers, timed whole and surveying: its transfers first meet at
// 109735.231 ns, on dev15's memory port, and its run ends at 6841315.444 ns. Returns when the
// survey's run stopped, with what it reported.
struct SurveyEnd {
  Platform::Outcome outcome;
  double burst_steps = 0;  // Platform::burst_steps_per_whole_step() at the end
  double stopped_ns = 0;
};

SurveyEnd survey_builtin_ring(double survey_burst_steps) {
  const ParsedRun run = parse_run({"-p", "a2a3-cluster", "--cluster.servers", "3", "-d", "all",
                                   "-k", "builtin_ring", "--size", "1MiB", "--timing-only"});
  Platform::Options options;
  options.timing_only = true;
  options.whole_transfers = true;
  options.survey_meetings = true;
  options.survey_burst_steps = survey_burst_steps;
  Platform platform("platform", run.request.platform, run.request.devices, run.problem, run.layout,
                    run.kernel->body, options);
  SurveyEnd end;
  end.outcome = platform.run(sc_core::sc_time(1, sc_core::SC_SEC));
  end.burst_steps = platform.burst_steps_per_whole_step();
  end.stopped_ns = sc_core::sc_time_stamp().to_seconds() * 1e9;
  return end;
}

// With no floor on what its bursts cost, the survey goes on past its meetings to the end of
// the run, where its polls have come to outnumber its bursts: under 8 steps burst by burst for
// each timed whole.
TEST(Survey, GoesOnPastItsMeetingsToTheEnd) {
  const SurveyEnd end = survey_builtin_ring(0);
  EXPECT_TRUE(end.outcome.whole_transfers_conflicted);
  EXPECT_FALSE(end.outcome.too_many_met);
  EXPECT_TRUE(end.outcome.memory_port_met);
  EXPECT_GT(end.stopped_ns, 6.0e6);
  EXPECT_GT(end.burst_steps, 1.0);
  EXPECT_LT(end.burst_steps, 8.0);
}

// A floor no run reaches: the survey checks at its first meeting, gives up and stops a 64th of
// the time later (109735.231 ns x 65 / 64 = 111449.8 ns), not for too many transfers meeting.
TEST(Survey, GivesUpWhereItsBurstsWouldCostLittle) {
  const SurveyEnd end = survey_builtin_ring(1e9);
  EXPECT_TRUE(end.outcome.whole_transfers_conflicted);
  EXPECT_FALSE(end.outcome.too_many_met);
  EXPECT_NEAR(end.stopped_ns, 111449.8, 1.0);
}

// The floor the tries use, 8: early in the run the bursts make more (10 to 15 steps for each),
// later fewer; the survey gives up at a meeting past twice the first's time.
TEST(Survey, GivesUpOnceItsRunComesToMakeFewBursts) {
  const SurveyEnd end = survey_builtin_ring(8);
  EXPECT_TRUE(end.outcome.whole_transfers_conflicted);
  EXPECT_FALSE(end.outcome.too_many_met);
  EXPECT_GT(end.stopped_ns, 2 * 109735.231);
  EXPECT_LT(end.stopped_ns, 6.0e6);
  EXPECT_LT(end.burst_steps, 8.0);
}

}  // namespace
}  // namespace ars
