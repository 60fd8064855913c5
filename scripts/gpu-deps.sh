#!/usr/bin/env bash
# Gathers what the GPU machine lacks into .gpu-deps/ (ignored by git; name it in the device call's
# carry): xxhash.h, PCRE2's header and library, and the commit being checked.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu-deps/include .gpu-deps/lib
cp /usr/include/xxhash.h /usr/include/pcre2.h .gpu-deps/include/
cp -L /usr/lib/x86_64-linux-gnu/libpcre2-8.so.0 .gpu-deps/lib/
c=$(git rev-parse --short=12 HEAD)
[ -n "$(git status --porcelain --untracked-files=no)" ] && c="$c-dirty"
echo "$c" > .gpu-deps/commit
echo "gpu-deps: $(cat .gpu-deps/commit)"
