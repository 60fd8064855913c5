#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test that needs no GPU (GPU tests carry the
# CTest label `gpu` and run through scripts/gpu-check.sh on a GPU machine). Tests labelled `slow`
# (the service's 2,000-job burst) are left out; run them with `ctest --test-dir build -L slow`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir build -LE 'gpu|slow' --output-on-failure -j2 --timeout 900
