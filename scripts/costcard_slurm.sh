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

OUTDIR=${1:?usage: sbatch --array=1-N costcard_slurm.sh OUTDIR [COSTCARD OPTIONS...]}
shift
K=${SLURM_ARRAY_TASK_ID:?run as a Slurm array task: sbatch --array=1-N}
N=${SLURM_ARRAY_TASK_COUNT:?run as a Slurm array task: sbatch --array=1-N}
mkdir -p "$OUTDIR"
exec "${ARS_BINARY:-build/bin/allreduce-sim}" costcard "$@" \
  --jobs "${SLURM_CPUS_PER_TASK:-1}" --shard "$K/$N" --points "$OUTDIR/shard$K.jsonl" --resume
