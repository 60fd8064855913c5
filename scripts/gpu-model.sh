#!/usr/bin/env bash
# On the lent GPU machine: gathers the default model's parts that this call carried
# (.gpu-model-aa/, .gpu-model-ab/ from `scripts/gpu-deps.sh --model`; one part per call, back to
# back) in /tmp/kernelrl-model, joins them once both are there, and prints the model's path (a
# file that exists only once both parts have come).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=/tmp/kernelrl-model
model="$dir/SmolLM2-135M-Instruct.Q4_1.gguf"
mkdir -p "$dir"
cp .gpu-model-*/part-* "$dir/" 2>/dev/null
if [ ! -s "$model" ] && [ -s "$dir/part-aa" ] && [ -s "$dir/part-ab" ]; then
  cat "$dir"/part-* >"$model"
fi
echo "$model"
