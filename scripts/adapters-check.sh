#!/usr/bin/env bash
# The adapters against the framework releases `pip install` gives today (issue 40): for each
# framework named (default: trl verl verifiers), a venv of its own in .cache/venv-FW (made once,
# reused; `--fresh` remakes it) with tests/python/release/requirements-FW.txt and ./python
# installed, then tests/python/release/check_FW.py run against this build's kernelrl and a live
# local service (one correct and one wrong kernel from a scripted policy). Needs PyPI; torch comes
# from PyPI too (large). Not part of CI (the downloads alone take longer than CI's budget): run
# before each release and record the output in docs/results.md.
#   scripts/adapters-check.sh [--fresh] [trl] [verl] [verifiers]
set -euo pipefail
cd "$(dirname "$0")/.."
fresh=0; frameworks=()
for a in "$@"; do
  case "$a" in
    --fresh) fresh=1 ;;
    trl | verl | verifiers) frameworks+=("$a") ;;
    *) echo "adapters-check: unknown argument '$a' (frameworks: trl verl verifiers; --fresh)" >&2; exit 64 ;;
  esac
done
[ ${#frameworks[@]} -gt 0 ] || frameworks=(trl verl verifiers)
export KERNELRL_BINARY="${KERNELRL_BINARY:-$PWD/build/tools/kernelrl/kernelrl}"
[ -x "$KERNELRL_BINARY" ] || { echo "adapters-check: $KERNELRL_BINARY is missing (scripts/build.sh first)" >&2; exit 1; }
export KERNELRL_SOURCE_DIR="$PWD" PYTHONDONTWRITEBYTECODE=1
failed=()
for fw in "${frameworks[@]}"; do
  venv=".cache/venv-$fw"
  [ $fresh = 1 ] && rm -rf "$venv"
  if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.installed" ] ||
     [ "tests/python/release/requirements-$fw.txt" -nt "$venv/.installed" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
    "$venv/bin/pip" install -q -r "tests/python/release/requirements-$fw.txt"
    touch "$venv/.installed"
  fi
  # The client as users install it (a wheel built from python/), reinstalled every run.
  "$venv/bin/pip" install -q --force-reinstall --no-deps ./python
  echo "== $fw: $("$venv/bin/pip" list 2>/dev/null | grep -iE "^($fw|torch|transformers) " | tr -s ' ' | tr '\n' ';')"
  if ! (cd tests/python && "../../$venv/bin/python" "release/check_$fw.py"); then failed+=("$fw"); fi
done
[ ${#failed[@]} -eq 0 ] || { echo "adapters-check: FAILED: ${failed[*]}" >&2; exit 1; }
echo "adapters-check: passed: ${frameworks[*]}"
