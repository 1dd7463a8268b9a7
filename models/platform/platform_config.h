// Every hardware parameter of a platform, in the units its key names. Plain data: the
// configuration reader (sim/) fills it, the models read it.
#pragma once

#include <cstdint>
#include <string>

namespace ars {

enum class Topology { FullMesh, Ring, Switch, Cluster, Superpod };
enum class Wiring { Rail, Leaf };
enum class Forwarding { CutThrough, StoreAndForward };

// What a compiler build emits around signals (a codegen profile, configs/codegen/*.ini). The
// defaults are the lowering the sync.* costs were first calibrated on.
struct Codegen {
  enum class NotifyBarrier { PipeAll, Drain, None };  // before a notify
  enum class WaitInvalidate { EveryWait, WaitAll, None };
  std::string name;  // empty: no profile selected (the defaults, reported as before)
  NotifyBarrier notify_barrier = NotifyBarrier::PipeAll;
  int notify_flush = 1;  // the cache-line flush before the atomic
  int notify_dsb = 1;    // the dsb after the atomic (waits for its reply when acknowledged)
  // A whole-cache invalidate after every wait, or one after each run of waits (a pure wait-all
  // loop), charged when the core next does anything else.
  WaitInvalidate wait_invalidate = WaitInvalidate::EveryWait;
  int store_fence = 0;  // after a store into a window: cache-line flush, pipe barrier, dsb
};

const char* to_string(Codegen::NotifyBarrier barrier);
const char* to_string(Codegen::WaitInvalidate invalidate);

const char* to_string(Topology topology);
const char* to_string(Forwarding forwarding);
const char* to_string(Wiring wiring);

struct PlatformConfig {
  std::string name = "a2a3";
  double clock_GHz = 1.8;
  int devices = 8;
  Topology topology = Topology::FullMesh;

  // Unified buffer of the vector core.
  std::uint64_t ub_physical_bytes = 196608;
  std::uint64_t ub_usable_bytes = 188416;
  std::uint64_t ub_alignment_bytes = 32;

  // Vector cores of a device (AIV): a kernel runs as up to this many SPMD blocks per rank,
  // each with its own unified buffer and DMA queues, sharing the device's memory and links.
  int vector_cores = 1;

  // Vector unit: a reduce costs startup + bytes / bytes_per_cycle. A product's multiply starts
  // up a cycle later than an add, max or min (the hardware sheet's estimates: add 6, mul 7).
  double vector_startup_cycles = 6;
  double vector_mul_startup_cycles = 7;
  double reduce_startup_cycles(bool multiplies) const {
    return multiplies ? vector_mul_startup_cycles : vector_startup_cycles;
  }
  double vector_bytes_per_cycle = 128;

  // Global memory (HBM) of a device.
  double gm_read_latency_cycles = 1400;
  double gm_write_latency_cycles = 300;
  double gm_atomic_ns = 0;  // a signal atomic holds the device's memory this long (they queue)
  double gm_bandwidth_GBps = 1600;
  // What a rank's input, output, windows and signals must fit in (at most the 1 TiB a device's
  // local addresses span).
  double gm_capacity_GiB = 64;

  // DMA engines (MTE2: GM -> UB, MTE3: UB -> GM).
  int dma_queues = 1;  // transfers one device drives at once
  double dma_setup_cycles = 0;
  double dma_mte2_bytes_per_cycle = 32;
  double dma_mte3_bytes_per_cycle = 64;
  double dma_remote_bytes_per_cycle = 32;  // one queue's rate to or from a peer window
  std::uint64_t dma_burst_bytes = 512;
  std::uint64_t dma_full_rate_alignment = 512;
  double dma_misaligned_rate_factor = 0.7;
  // 1: a local store returns once handed to MTE3, which then runs alongside MTE2 and the
  // vector unit, as on an AIV; the core waits for it only where a later operation depends on
  // it (its tile rewritten, its bytes read or overwritten, a notify's pipe barrier, the end
  // of the kernel). 0: every store blocks until its data has landed.
  int dma_posted_stores = 0;

  // Interconnect: every link direction is a resource of this bandwidth and latency.
  double link_bandwidth_GBps = 28;
  double link_latency_ns = 1500;
  // A signal atomic holds every link direction it crosses this long (a full transaction for
  // four bytes): the rate at which one direction carries atomics, shared by all the blocks.
  double link_atomic_ns = 0;
  Forwarding switch_forwarding = Forwarding::CutThrough;
  double switch_latency_ns = 0;

  // Cluster: servers of NPUs on the HCCS full mesh above (link.*), joined by one RoCE NIC per
  // NPU to leaf switches, and leaves to spines. Rail wiring puts NPU i of every server on
  // leaf i; leaf wiring puts servers_per_leaf whole servers on each leaf. A leaf has one link
  // to every spine, each of rate nic x max(1, ports / spines) / oversubscription.
  int cluster_servers = 16;
  int cluster_npus_per_server = 8;
  Wiring cluster_wiring = Wiring::Rail;
  int cluster_servers_per_leaf = 4;
  int cluster_spines = 8;
  double cluster_oversubscription = 1;
  double nic_bandwidth_GBps = 25;
  double nic_latency_ns = 500;
  double leaf_latency_ns = 500;
  double spine_latency_ns = 500;

  // SuperPod: nodes of NPUs on a two-tier non-blocking Clos; each NPU has one port of this
  // rate each way. tier1: a path between NPUs of one node; tier2: between nodes.
  int superpod_nodes = 48;
  int superpod_npus_per_node = 8;
  double superpod_bandwidth_GBps = 196;
  double superpod_tier1_latency_ns = 500;
  double superpod_tier2_latency_ns = 1000;

  // Fixed costs of synchronisation and launch.
  double notify_cycles = 0;
  int notify_acknowledged = 0;
  double poll_period_cycles = 1440;
  double cache_flush_cycles = 0;
  double cache_invalidate_cycles = 0;
  double pipe_barrier_cycles = 0;
  double drain_cycles = 0;  // a narrower drain (MTE3 only) before a notify, instead of PIPE_ALL
  double dsb_cycles = 0;    // a data synchronisation barrier's own cost (its wait is extra)
  double launch_offset_cycles = 0;  // rank r starts r times this late
  double launch_setup_cycles = 0;   // device-side set-up before every rank's kernel body

  // The server (a SuperPod's node) a device sits in: hierarchical algorithms group ranks by
  // it. Topologies without servers put every device in server 0.
  int server_of(int device) const;

  Codegen codegen;

  // The device count a structured topology implies (servers x NPUs, nodes x NPUs); 0 for
  // the others, whose count is platform.devices.
  long long structural_devices() const;
};

}  // namespace ars
