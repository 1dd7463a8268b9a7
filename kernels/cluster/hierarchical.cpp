// The hierarchical allreduce collective libraries run across servers: a reduce-scatter
// inside every server over its full mesh (the rank with local index i of D sums chunk i,
// N/D of the vector, pulled from its D-1 server peers), an allreduce of chunk i among the S
// ranks with local index i in every server (ring, or recursive halving-doubling with
// --inter rhd), then an all-gather inside the server (every rank pulls the D chunks into y).
// On a single server it is the mesh reduce-scatter plus all-gather.
// Per rank: 2(D-1)/D·N bytes read inside the server, plus the inter phase on N/D (ring:
// 2(S-1)/S·N/D; rhd: 2(p'-1)/p'·N/D, + N/D for a rank that takes a fold, N/D for an extra);
// notifies = waits = 2(D-1) (two server barriers) plus the inter phase's (ring 2(S-1); rhd
// 2 log2 p', + 1 with a fold).
#include "kernels/cluster/hierarchical.h"

#include <algorithm>
#include <string>
#include <utility>

#include "kernels/cluster/rhd.h"
#include "kernels/ladder/ring.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace ars {

namespace {

// The problem's servers, checked to hold as many ranks each; without any named, one server of
// every rank, made in `one`.
const ServerMap& equal_servers(const Problem& problem, ServerMap& one) {
  if (problem.servers.empty()) {
    one = ServerMap(std::vector<int>(static_cast<std::size_t>(problem.ranks), 0));
    return one;
  }
  const ServerMap& servers = problem.servers;
  for (int s = 1; s < servers.servers(); ++s) {
    if (servers.size(s) == servers.size(0)) continue;
    throw InputError("hierarchical: servers hold unequal rank counts (server " +
                     std::to_string(servers.server_number(0)) + " has " +
                     std::to_string(servers.size(0)) + ", server " +
                     std::to_string(servers.server_number(s)) + " has " +
                     std::to_string(servers.size(s)) +
                     "); list the same number of devices from every server in -d");
  }
  return servers;
}

}  // namespace

std::vector<std::vector<int>> server_groups(const Problem& problem) {
  ServerMap one;
  const ServerMap& servers = equal_servers(problem, one);
  std::vector<std::vector<int>> groups;
  for (int s = 0; s < servers.servers(); ++s) groups.emplace_back(servers.begin(s), servers.end(s));
  return groups;
}

ServerPlace server_place(const Problem& problem, int rank) {
  ServerMap one;
  const ServerMap& servers = equal_servers(problem, one);
  ServerPlace place;
  place.server = servers.server_index(rank);
  place.local = servers.local_index(rank);
  place.peers.assign(servers.begin(place.server), servers.end(place.server));
  for (int s = 0; s < servers.servers(); ++s)
    place.same_index.push_back(servers.begin(s)[place.local]);
  return place;
}

bool inter_is_rhd(const Problem& problem) {
  return problem.inter == "rhd";
}

namespace kernels {
namespace {

constexpr int kRowReady = 0;  // stage-in done: server peers may read the own window
constexpr int kRowFinal = 1;  // own chunk reduced across all servers
constexpr int kFirstInterRow = 2;

Layout layout(const Problem& p) {
  refuse_call_options(p, "hierarchical", false, true);
  if (!p.inter.empty() && p.inter != "ring" && p.inter != "rhd") {
    throw InputError("--inter: unknown algorithm '" + p.inter + "' (ring or rhd)");
  }
  const int servers = static_cast<int>(server_groups(p).size());
  const int inter_rows = inter_is_rhd(p) ? rhd_signal_rows(servers) : 2 * (servers - 1);
  return {{{"data", p.elements}}, {{"signal", kFirstInterRow + inter_rows, p.ranks}}};
}

void body(Rank& r) {
  const Problem& p = r.problem();
  ServerPlace place = server_place(p, r.rank());
  const int size = static_cast<int>(place.peers.size());  // D
  const int server = place.server;
  const int local = place.local;
  const std::vector<int>& peers = place.peers;
  const RankGroup same_index(std::move(place.same_index));
  auto begin = [&](int chunk) { return split_point(p.elements, size, chunk); };
  auto length = [&](int chunk) { return begin(chunk + 1) - begin(chunk); };

  const Tensor data = r.window("data");
  const Signal signal = r.signal("signal");
  // One tile for the own chunk and one per server peer; the inter phase uses the first two.
  const int in_flight = std::max(size, 2);
  const Tiling staging(p.elements, p.dtype, in_flight, r.ub_bytes());
  std::vector<Tile> tiles;
  for (int k = 0; k < in_flight; ++k) tiles.push_back(r.alloc(staging.tile_elements, p.dtype));

  r.begin_round("stage-in");
  copy_through_ub(r, tiles[0], r.input(), data, staging);
  r.begin_round("barrier A");
  row_barrier(r, signal, kRowReady, peers);

  // Reduce-scatter in place: no server peer reads the own chunk, each reads its own.
  r.begin_round("intra RS");
  const std::uint64_t own = begin(local);
  for (const auto& [offset, count] :
       Tiling(length(local), p.dtype, in_flight, r.ub_bytes()).chunks()) {
    r.load(tiles[0], data, own + offset, count);
    std::vector<Transfer> pulls;
    for (int k = 1; k < size; ++k) {
      pulls.push_back(r.remote_load_async(tiles[static_cast<std::size_t>(k)], data,
                                          peers[static_cast<std::size_t>((local + k) % size)],
                                          own + offset, count));
    }
    for (int k = 1; k < size; ++k) {
      r.sync(pulls[static_cast<std::size_t>(k - 1)]);
      r.reduce(tiles[0], tiles[static_cast<std::size_t>(k)], count);
    }
    r.store(tiles[0], data, own + offset, count);
  }

  if (inter_is_rhd(p)) {
    rhd_allreduce(r, data, signal, kFirstInterRow, same_index, server, own, length(local), tiles[0],
                  tiles[1]);
  } else {
    ring_allreduce(r, data, signal, kFirstInterRow, same_index, server, own, length(local),
                   tiles[0], tiles[1]);
  }

  r.begin_round("barrier B");
  row_barrier(r, signal, kRowFinal, peers);

  // All-gather straight into y: tiles[k] receives chunk local+k (k = 0: the own, read locally).
  r.begin_round("intra AG");
  std::uint64_t longest = 0;
  for (int j = 0; j < size; ++j) longest = std::max(longest, length(j));
  for (const auto& [offset, full] : Tiling(longest, p.dtype, in_flight, r.ub_bytes()).chunks()) {
    std::vector<Transfer> pulls(static_cast<std::size_t>(size));
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(size), 0);
    for (int k = 0; k < size; ++k) {
      const int chunk = (local + k) % size;
      const auto i = static_cast<std::size_t>(k);
      if (offset >= length(chunk)) continue;  // a shorter chunk ends before this tile
      counts[i] = std::min(full, length(chunk) - offset);
      pulls[i] = r.remote_load_async(tiles[i], data, peers[static_cast<std::size_t>(chunk)],
                                     begin(chunk) + offset, counts[i]);
    }
    for (int k = 0; k < size; ++k) {
      const auto i = static_cast<std::size_t>(k);
      if (counts[i] == 0) continue;
      r.sync(pulls[i]);
      r.store(tiles[i], r.output(), begin((local + k) % size) + offset, counts[i]);
    }
  }
  for (const Tile& t : tiles) r.release(t);
}

}  // namespace

extern const KernelSpec kHierarchical{
    "hierarchical",
    "reduce-scatter inside each server, allreduce between servers (--inter ring|rhd), "
    "all-gather inside each server",
    true, layout, body};

}  // namespace kernels
}  // namespace ars
