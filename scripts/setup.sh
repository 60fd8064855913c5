#!/usr/bin/env bash
# Installs what kernelrl needs on a Debian machine (idempotent): compilers, CMake, the embedded
# Python with torch (Debian's python3-torch, CPU), pybind11, nlohmann-json, CLI11, xxHash, GoogleTest,
# Chart.js (libjs-chart.js libtorch-dev libpcre2-dev), which `kernelrl report` inlines into its HTML file,
# and Redis with its C client (redis-server libhiredis-dev) for `kernelrl serve` / `kernelrl worker --redis`
# (docs/service.md; the service tests start their own redis-server on a free loopback port, and parse
# the deployment examples with python3-yaml).
# The CUDA toolkit (nvcc) is expected to be installed already; without it only host candidates work.
set -euo pipefail

packages=(build-essential cmake ninja-build git python3 python3-dev python3-torch pybind11-dev
          nlohmann-json3-dev libcli11-dev libxxhash-dev libgtest-dev libgmock-dev libcpp-httplib-dev pkg-config
          libjs-chart.js libtorch-dev libpcre2-dev redis-server libhiredis-dev python3-yaml)

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
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || \
  echo "setup: note: nvcc not found; native (CUDA) candidates cannot be compiled on this machine"
"$(dirname "$0")/fetch-default-model.sh"
echo "setup: dependencies present"
