#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test that needs no GPU (GPU tests carry the
# CTest label `gpu` and run through scripts/gpu-check.sh on a GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
# A fresh build has no record of how long each test takes, and ctest -j then starts the longest
# ones last (the run ends with one of them alone); tests/ctest_costs.txt seeds that record.
costs=build/Testing/Temporary/CTestCostData.txt
if [ ! -s "$costs" ]; then
  mkdir -p "$(dirname "$costs")"
  { grep -v '^#' tests/ctest_costs.txt; echo "---"; } >"$costs"
fi
ctest --test-dir build -LE gpu --output-on-failure -j2 --timeout 900
