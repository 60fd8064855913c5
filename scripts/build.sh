#!/usr/bin/env bash
# Configures and builds kernelrl into ./build (Release with debug info). Picks the Python that has
# torch: $KERNELRL_PYTHON, else /usr/bin/python3 (Debian's python3-torch).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${KERNELRL_PYTHON:-/usr/bin/python3}"
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -G Ninja -DPython_EXECUTABLE="$python" ${KERNELRL_CMAKE_ARGS:-} >build.configure.log 2>&1 || {
  cat build.configure.log; exit 1; }
ninja -C build "$@"
