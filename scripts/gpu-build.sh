#!/usr/bin/env bash
# On the lent GPU machine: configures ./build-gpu (Release, this interpreter's pybind11, the headers
# scripts/gpu-deps.sh carried in .gpu-deps/include) and runs ninja there with the arguments given
# (targets, -j, -k). The one build recipe of gpu-check.sh, gpu-train-check.sh and learning-signal.sh.
#   scripts/gpu-build.sh [NINJA ARGS ...]
set -euo pipefail
cd "$(dirname "$0")/.."
python="$(command -v python3)"
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$python" \
  -Dpybind11_DIR="$("$python" -c 'import pybind11; print(pybind11.get_cmake_dir())')" \
  -DKERNELRL_EXTRA_INCLUDE="$PWD/.gpu-deps/include"
ninja -C build-gpu "$@"
