#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test that needs no GPU (GPU tests carry the
# CTest label `gpu` and run through scripts/gpu-check.sh on a GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir build -LE gpu --output-on-failure -j2 --timeout 900
