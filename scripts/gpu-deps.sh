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
# --model: the default model in two parts, .gpu-model-aa/ and .gpu-model-ab/ (a call carries 64 MiB
# at most): carry one per call, back to back (scripts/gpu-train-check.sh reassembles them).
if [ "${1:-}" = --model ]; then
  rm -rf .gpu-model-aa .gpu-model-ab && mkdir -p .gpu-model-aa .gpu-model-ab
  split -b 50000000 -a 2 .cache/models/SmolLM2-135M-Instruct.Q4_1.gguf .gpu-model-aa/part-
  mv .gpu-model-aa/part-ab .gpu-model-ab/
fi
echo "gpu-deps: $(cat .gpu-deps/commit)"
