#!/usr/bin/env bash
# Installs what kernelrl needs on a Debian machine (idempotent): compilers, CMake, the embedded
# Python with torch (Debian's python3-torch and libtorch-dev, CPU; and setuptools, which
# torch.utils.cpp_extension imports: a machine without it cannot configure), pybind11, nlohmann-json,
# CLI11, xxHash, GoogleTest, cpp-httplib, PCRE2, Chart.js (which `kernelrl report` inlines into its HTML
# file) and OpenBLAS (libopenblas0-openmp: Debian's libtorch calls the BLAS of libblas.so.3, which
# without it is the reference implementation: the default model's prompt reading is 18x and its
# sampling 6x slower on the CPU, bench/blas_sampling.sh; the OpenMP build shares torch's threads
# instead of starting its own), and Redis with its C client (redis-server libhiredis-dev) for
# `kernelrl serve` / `kernelrl worker --redis` (docs/service.md; the service tests start their own
# redis-server on a free loopback port, and parse the deployment examples with python3-yaml), and
# gloo's headers (libgloo-dev: libtorch's ProcessGroupGloo.hpp includes them; the data-parallel
# gradient all-reduce, src/train/data_parallel, and its test are built only where they are).
# The CUDA toolkit (nvcc) is expected to be installed already; without it only host candidates work.
# Then the default policy model (scripts/fetch-default-model.sh), unless --no-model.
set -euo pipefail

fetch_model=1
for arg in "$@"; do
  case "$arg" in
    --no-model) fetch_model=0 ;;
    *) echo "usage: scripts/setup.sh [--no-model]" >&2; exit 64 ;;
  esac
done

packages=(build-essential cmake ninja-build git python3 python3-dev python3-setuptools python3-torch pybind11-dev
          nlohmann-json3-dev libcli11-dev libxxhash-dev libgtest-dev libgmock-dev libcpp-httplib-dev pkg-config
          libjs-chart.js libtorch-dev libpcre2-dev libopenblas0-openmp redis-server libhiredis-dev python3-yaml
          libgloo-dev libssl-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# The BLAS libtorch will load: installing OpenBLAS switches the alternative unless it was set by hand.
blas=$(readlink -f "$(/sbin/ldconfig -p | awk '/libblas\.so\.3 /{print $NF; exit}')" 2>/dev/null || true)
case "$blas" in
  *openblas*) echo "setup: BLAS: $blas" ;;
  *) echo "setup: note: libblas.so.3 is $blas, not OpenBLAS (the alternative was set by hand?): CPU matmuls will be" \
          "slow; 'update-alternatives --auto libblas.so.3-$(gcc -print-multiarch)' selects OpenBLAS" ;;
esac
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || \
  echo "setup: note: nvcc not found; native (CUDA) candidates cannot be compiled on this machine"
[ "$fetch_model" -eq 1 ] && "$(dirname "$0")/fetch-default-model.sh"
echo "setup: dependencies present"
