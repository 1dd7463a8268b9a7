#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (one process per test).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh build
ctest --test-dir build --output-on-failure -j "$(nproc)"
