#!/usr/bin/env bash
# The default model's sampling speed on the CPU with Debian's reference BLAS and with OpenBLAS,
# measured back to back in one session: kernelrl_sample_bench (bench/sample_bench.cpp) runs in
# alternating rounds, its libblas.so.3 (and liblapack.so.3) picked by LD_LIBRARY_PATH from the
# folders Debian's alternatives choose between, so the installed alternative is left as it is.
# Each run must report the BLAS it was given (else the script stops). Prints every run with the
# load average before it, then the median per BLAS and the ratio to the reference BLAS.
#
# usage: bench/blas_sampling.sh [--rounds N] [kernelrl_sample_bench options: --batch, --prompt, --new, --reps]
# Needs: ninja -C build kernelrl_sample_bench; libblas3 and libopenblas0-openmp (scripts/setup.sh);
# the default model (scripts/fetch-default-model.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=2
if [ "${1:-}" = "--rounds" ]; then rounds=$2; shift 2; fi
bench=build/bench/kernelrl_sample_bench
[ -x "$bench" ] || { echo "blas_sampling: $bench is not built: ninja -C build kernelrl_sample_bench" >&2; exit 2; }
lib=/usr/lib/$(gcc -print-multiarch)
reference="$lib/blas:$lib/lapack"
openblas="$lib/openblas-openmp"
for f in "$lib/blas/libblas.so.3" "$openblas/libblas.so.3"; do
  [ -e "$f" ] || { echo "blas_sampling: $f is missing (libblas3, libopenblas0-openmp: scripts/setup.sh)" >&2; exit 2; }
done

echo "# $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores," \
     "$(awk '/model name/{sub(/.*: /, ""); print; exit}' /proc/cpuinfo)"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((round = 1; round <= rounds; round++)); do
  for which in reference openblas; do
    dirs=$reference; want=/blas/libblas
    [ "$which" = openblas ] && { dirs=$openblas; want=openblas; }
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    out=$(LD_LIBRARY_PATH="$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bench" "$@") || {
      echo "$out"; echo "blas_sampling: the $which run failed" >&2; exit 1; }
    blas=$(awk '$1 == "blas" {print $2}' <<<"$out")
    [[ "$blas" == *"$want"* ]] || { echo "blas_sampling: the $which run loaded '$blas', not $want" >&2; exit 1; }
    [ "$round" -eq 1 ] && [ "$which" = reference ] && grep '^# model' <<<"$out"
    row() { awk -v n="$1" '$1 == "row" && $2 == n {print $3}' <<<"$out"; }
    printf 'round %d %-9s load %-14s sample %8s new tok/s  decode %8s new tok/s  prefill %8s tok/s  (%s)\n' \
           "$round" "$which" "$load" "$(row sample_new_tokens_per_s)" "$(row decode_new_tokens_per_s)" \
           "$(row prefill_tokens_per_s)" "$blas"
    echo "$which $(row sample_new_tokens_per_s) $(row decode_new_tokens_per_s) $(row prefill_tokens_per_s)" >>"$results"
  done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# Medians per BLAS and OpenBLAS / reference.
awk '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { for (k = 2; k <= 4; k++) v[$1, k] = v[$1, k] " " $k }
  END {
    split("sample decode prefill", name, " ")
    for (k = 2; k <= 4; k++) {
      r = median(v["reference", k]); o = median(v["openblas", k])
      printf "median %-7s reference %10.2f  openblas %10.2f  tokens/s  openblas/reference %.1fx\n", name[k - 1], r, o, o / r
    }
  }' "$results"
