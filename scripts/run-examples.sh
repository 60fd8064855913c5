#!/usr/bin/env bash
# The main job on its shipped default: installs, builds and evaluates the shipped example
# candidates (native ones on a GPU; host and CPU kernelbench ones everywhere).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec build/tools/kernelrl/kernelrl eval --batch examples/manifest.json "$@"
