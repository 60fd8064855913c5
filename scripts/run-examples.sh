#!/usr/bin/env bash
# The main job: installs what is missing, builds the kernelrl binary and the two tools it runs
# (tools/host-cc, tools/confine; not the tests or benchmarks), says what this machine can do
# (`kernelrl doctor`), and evaluates every shipped example candidate that can run here (native
# ones on a GPU; host and CPU kernelbench ones everywhere, at the examples' small size when there
# is no GPU: their full sizes are for an H200), each expected OK: the exit status is 1 when one is
# not. Arguments go to `kernelrl eval --batch` (e.g. --size full).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
step() { echo "== [$1/4] $2 ($((SECONDS - start)) s so far)"; }
step 1 "dependencies: scripts/setup.sh"
scripts/setup.sh --no-model
step 2 "build: the kernelrl binary, tools/host-cc and tools/confine (ninja -C build kernelrl_runtime)"
scripts/build.sh kernelrl_runtime
step 3 "this machine: kernelrl doctor"
kernelrl=build/tools/kernelrl/kernelrl
doctor=$("$kernelrl" doctor) || { echo "$doctor"; exit 2; }
echo "$doctor"
size=(--size full)
grep -q '^engine device  *cpu' <<<"$doctor" && size=(--size small)
for arg in "$@"; do [[ "$arg" == --size* ]] && size=(); done  # the caller's size wins
step 4 "evaluate examples/manifest.json (${size[*]:-$*})"
status=0
"$kernelrl" eval --batch examples/manifest.json --check-expect "${size[@]}" "$@" || status=$?
echo "== done in $((SECONDS - start)) s"
exit "$status"
