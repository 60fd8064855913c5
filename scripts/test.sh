#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test that needs no GPU (GPU tests carry the
# CTest label `gpu` and run through scripts/gpu-check.sh on a GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# A build made for the tests alone (a fresh clone: CI) carries no debug info (a sixth less compile
# time) and compiles the test programs' own code at -Og (a fifth less for those); a build folder
# that exists keeps its own settings (CMake's cache).
[ -f build/CMakeCache.txt ] ||
  export KERNELRL_CMAKE_ARGS="-DKERNELRL_DEBUG_INFO=none -DKERNELRL_TESTS_DEBUG_OPT=ON ${KERNELRL_CMAKE_ARGS:-}"
scripts/build.sh
# The engine tests share one compile cache (tests/eval/engine_test_util.hpp): a candidate several
# tests evaluate (the adversarial corpus's kernelbench entries, the CPU softmax) is built once.
export KERNELRL_TEST_COMPILE_CACHE="${KERNELRL_TEST_COMPILE_CACHE:-$PWD/build/test-compile-cache}"
# A fresh build has no record of how long each test takes, and ctest -j then starts the longest
# ones last (the run ends with one of them alone); tests/ctest_costs.txt seeds that record.
costs=build/Testing/Temporary/CTestCostData.txt
if [ ! -s "$costs" ]; then
  mkdir -p "$(dirname "$costs")"
  { grep -v '^#' tests/ctest_costs.txt; echo "---"; } >"$costs"
fi
ctest --test-dir build -LE gpu --output-on-failure -j2 --timeout 900
