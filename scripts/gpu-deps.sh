#!/usr/bin/env bash
# Gathers what the GPU machine lacks into .gpu-deps/ (ignored by git; name it in the device call's
# carry): xxhash.h, and the commit being checked.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu-deps/include
cp /usr/include/xxhash.h .gpu-deps/include/
c=$(git rev-parse --short=12 HEAD)
[ -n "$(git status --porcelain --untracked-files=no)" ] && c="$c-dirty"
echo "$c" > .gpu-deps/commit
echo "gpu-deps: $(cat .gpu-deps/commit)"
