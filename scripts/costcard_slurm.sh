#!/usr/bin/env bash
# One shard of a costcard sweep as a Slurm array task.
#
# usage: sbatch --array=1-N scripts/costcard_slurm.sh OUTDIR [COSTCARD OPTIONS...]
#   Task K runs `allreduce-sim costcard OPTIONS --shard K/N --points OUTDIR/shardK.jsonl
#   --resume`; a task requeued or resubmitted goes on from its last finished point. Once all
#   tasks are done, print the whole sweep:
#     allreduce-sim costcard OPTIONS --csv costcard.csv --merge OUTDIR/shard*.jsonl
#   (for example from `sbatch --dependency=afterany:JOBID`).
# Environment: ARS_BINARY (default build/bin/allreduce-sim, relative to the submit directory).
#SBATCH --job-name=costcard
#SBATCH --output=costcard-%A_%a.log
#SBATCH --cpus-per-task=2
set -euo pipefail

usage="usage: sbatch --array=1-N costcard_slurm.sh OUTDIR [COSTCARD OPTIONS...]"
if [[ $# -lt 1 ]]; then
  echo "costcard_slurm.sh: no OUTDIR; $usage" >&2
  exit 2
fi
if [[ -z ${SLURM_ARRAY_TASK_ID:-} || -z ${SLURM_ARRAY_TASK_COUNT:-} ]]; then
  echo "costcard_slurm.sh: not a Slurm array task (SLURM_ARRAY_TASK_ID and" \
    "SLURM_ARRAY_TASK_COUNT unset); $usage" >&2
  exit 2
fi
OUTDIR=$1
shift
K=$SLURM_ARRAY_TASK_ID
N=$SLURM_ARRAY_TASK_COUNT
mkdir -p "$OUTDIR"
exec "${ARS_BINARY:-build/bin/allreduce-sim}" costcard "$@" \
  --jobs "${SLURM_CPUS_PER_TASK:-1}" --shard "$K/$N" --points "$OUTDIR/shard$K.jsonl" --resume
