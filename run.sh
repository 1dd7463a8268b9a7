#!/usr/bin/env bash
# Installs what is missing, builds, and runs the default simulation: the mesh allreduce on
# four devices of the a2a3 platform. Extra arguments go to allreduce-sim.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh build
exec build/bin/allreduce-sim -p a2a3 -d 0,1,2,3 --kernel mesh "$@"
