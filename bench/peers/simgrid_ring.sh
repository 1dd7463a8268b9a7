#!/usr/bin/env bash
# A peer side by side: SimGrid SMPI's ring allreduce (MPI_Allreduce with the logical-ring
# algorithm `lr`: reduce-scatter then all-gather) on a flat cluster of P hosts, then this
# simulator's hand ring at the same P and size (--timing-only -q: like SMPI's run, it prints the
# time and keeps no per-round records), each timed as a whole process
# with its peak memory (GNU time). Prints both and their ratios.
#
# usage: bench/peers/simgrid_ring.sh P [BYTES_PER_RANK] [-- ALLREDUCE_SIM_PLATFORM_ARGS...]
#   P                 ranks (hosts for SimGrid, devices for allreduce-sim)
#   BYTES_PER_RANK    default 1048576 (1 MiB of FP32); 1MiB, 256KiB and the like too
#   after --          platform options for allreduce-sim; default: -p ring8 --platform.devices P
# Environment: ARS_BINARY (default build/bin/allreduce-sim).
# The cluster's links are the ring8 platform's: 28 GB/s and 1.5 us per direction.
set -euo pipefail

usage="usage: simgrid_ring.sh P [BYTES_PER_RANK] [-- PLATFORM_ARGS...]"
P=${1:?$usage}
shift
if [[ ! $P =~ ^[1-9][0-9]*$ ]]; then
  echo "simgrid_ring.sh: P '$P' must be a positive whole number of ranks; $usage" >&2
  exit 2
fi
BYTES=1048576
if [[ $# -gt 0 && $1 != -- ]]; then
  # Bytes as the simulator's --size takes them: a number, with B, K/KiB, M/MiB or G/GiB.
  if [[ ! $1 =~ ^([0-9]+)(B|K|KiB|M|MiB|G|GiB)?$ ]]; then
    echo "simgrid_ring.sh: BYTES_PER_RANK '$1' must be a whole number of bytes, with B," \
      "K/KiB, M/MiB or G/GiB or none; $usage" >&2
    exit 2
  fi
  case ${BASH_REMATCH[2]} in
    K | KiB) BYTES=$((BASH_REMATCH[1] << 10)) ;;
    M | MiB) BYTES=$((BASH_REMATCH[1] << 20)) ;;
    G | GiB) BYTES=$((BASH_REMATCH[1] << 30)) ;;
    *) BYTES=$((10#${BASH_REMATCH[1]})) ;;
  esac
  shift
fi
[[ $# -gt 0 && $1 == -- ]] && shift
if [[ $# -gt 0 ]]; then
  PLATFORM=("$@")
else
  PLATFORM=(-p ring8 --platform.devices "$P")
fi
BINARY=${ARS_BINARY:-build/bin/allreduce-sim}
if (( BYTES % (4 * P) != 0 )); then
  echo "simgrid_ring.sh: $BYTES bytes per rank is not a whole number of FP32 elements per rank" \
    "(the hand ring needs the element count divisible by P = $P)" >&2
  exit 2
fi

need=()
command -v smpicc >/dev/null || need+=(libsimgrid-dev simgrid)
[[ -x /usr/bin/time ]] || need+=(time)
if (( ${#need[@]} )); then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  $sudo apt-get install -y --no-install-recommends "${need[@]}"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/allreduce.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long count = atol(argv[1]) / (long)sizeof(float);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  float* in = malloc(count * sizeof(float));
  float* out = malloc(count * sizeof(float));
  for (long i = 0; i < count; ++i) in[i] = (float)((rank + i) % 7);
  const double start = MPI_Wtime();
  MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const double end = MPI_Wtime();
  if (rank == 0) printf("simulated allreduce time: %.3f us\n", (end - start) * 1e6);
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
C
cat >"$work/cluster.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="flat" prefix="node-" suffix="" radical="0-$((P - 1))" speed="100Gf"
           bw="28GBps" lat="1.5us" bb_bw="1000TBps" bb_lat="0us"/>
</platform>
XML
for ((i = 0; i < P; ++i)); do echo "node-$i"; done >"$work/hosts"

smpicc -O2 -o "$work/allreduce" "$work/allreduce.c" 2>"$work/build.log" || {
  cat "$work/build.log" >&2
  exit 1
}

measure() {  # prints "wall_s peak_kB" of the command, its output into $work/out
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
    cat "$work/err" >&2
    exit 1
  }
  cat "$work/time"
}

read -r simgrid_wall simgrid_kb < <(measure smpirun -np "$P" -platform "$work/cluster.xml" \
  -hostfile "$work/hosts" --cfg=smpi/allreduce:lr --log=root.thres:critical \
  "$work/allreduce" "$BYTES")
simgrid_time=$(grep -o '[0-9.]* us' "$work/out" || true)

devices=$(seq -s, 0 $((P - 1)))
read -r ours_wall ours_kb < <(measure "$BINARY" "${PLATFORM[@]}" -d "$devices" -k ring \
  --size "${BYTES}B" --timing-only -q)
ours_time=$(grep -o 'device time: [0-9.]* ns' "$work/out" || true)

awk -v p="$P" -v b="$BYTES" -v sw="$simgrid_wall" -v sk="$simgrid_kb" -v ow="$ours_wall" \
  -v ok="$ours_kb" -v st="$simgrid_time" -v ot="$ours_time" 'BEGIN {
  printf "ring allreduce, P = %d, %d bytes per rank\n", p, b
  printf "%-14s %10s %12s   %s\n", "simulator", "wall_s", "peak_MiB", "simulated"
  printf "%-14s %10.2f %12.1f   %s\n", "SimGrid SMPI", sw, sk / 1024, st
  printf "%-14s %10.2f %12.1f   %s\n", "allreduce-sim", ow, ok / 1024, ot
  printf "ratio SimGrid / allreduce-sim: wall %.2fx, peak memory %.2fx\n", sw / ow, sk / ok
}'
