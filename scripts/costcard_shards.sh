#!/usr/bin/env bash
# A costcard sweep in N shards run by GNU parallel, here or on other machines, then merged.
#
# usage: scripts/costcard_shards.sh N OUTDIR [COSTCARD OPTIONS...]
#   Shard K of N runs `allreduce-sim costcard OPTIONS --shard K/N --points OUTDIR/shardK.jsonl
#   --resume` (its tables in OUTDIR/shardK.log); then the merged sweep is printed, and written
#   as CSV to OUTDIR/costcard.csv: exactly what one unsplit `costcard OPTIONS` gives.
#   Run it again after an interruption: every shard goes on from its last finished point.
# Environment:
#   ARS_BINARY     the simulator (default build/bin/allreduce-sim)
#   SSHLOGINFILE   run the shards on the hosts of this GNU parallel --sshloginfile (the
#                  binary, configs and OUTDIR at the same paths on every host: a shared
#                  file system)
#   JOBS           shards at once per host (default: one per core)
set -euo pipefail

usage="usage: costcard_shards.sh N OUTDIR [COSTCARD OPTIONS...]"
if [[ $# -lt 2 || ! $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "costcard_shards.sh: N (a positive whole number of shards) and OUTDIR come first; $usage" >&2
  exit 2
fi
N=$1
OUTDIR=$2
shift 2
BINARY=$(realpath "${ARS_BINARY:-build/bin/allreduce-sim}")
mkdir -p "$OUTDIR"
OUTDIR=$(realpath "$OUTDIR")

hosts=()
[[ -n ${SSHLOGINFILE:-} ]] && hosts=(--sshloginfile "$SSHLOGINFILE" --workdir "$PWD")
# Each shard runs one simulation at a time: parallel spreads the shards over the cores. A
# shard whose cards fail exits 1 but keeps its points; one that could not finish leaves some
# out, and the merge names them.
parallel --will-cite "${hosts[@]}" --jobs "${JOBS:-100%}" \
  "$BINARY" costcard "$@" --jobs 1 --shard {}/"$N" --points "$OUTDIR"/shard{}.jsonl --resume \
  ">" "$OUTDIR"/shard{}.log ::: $(seq 1 "$N") || true

"$BINARY" costcard "$@" --csv "$OUTDIR/costcard.csv" --merge "$OUTDIR"/shard*.jsonl
