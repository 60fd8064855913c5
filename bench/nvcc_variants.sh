#!/usr/bin/env bash
# Cold compile time of one native candidate under alternative nvcc pipelines, each against the
# engine's current command measured in the same run (ratio < 1: the variant is faster).
#   bench/nvcc_variants.sh CANDIDATE_DIR [ARCH] [N]     (CANDIDATE_DIR from bench/make_candidates.py)
# Every compile gets a distinct source (a comment with a counter), so nothing is cached anywhere.
set -euo pipefail
dir="$1"; arch="${2:-90}"; n="${3:-9}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cuda_lib="$(dirname "$(command -v nvcc)")/../lib64"
common=(-Xcompiler -fPIC -gencode "arch=compute_${arch},code=sm_${arch}" -I"$root/include" -I"$root/src/compile/shims")
link=(-L"$cuda_lib" -L"$cuda_lib/stubs" -lcudart -Wl,-z,defs -Wl,--as-needed -lcuda)
src="$(ls "$dir"/*.cu | head -1)"
count=0

c_then_gold_cmd() {
  nvcc -c "${common[@]}" -std=c++17 --threads 2 -o "$work/x.o" "$work/x.cu" &&
    g++ -shared -fuse-ld=gold -o "$work/x.so" "$work/x.o" "${link[@]}"
}

variant() {  # name: compiles $work/x.cu into $work/x.so
  case "$1" in
    current) nvcc -shared "${common[@]}" -cudart shared -std=c++17 --threads 2 -Xlinker -z,defs -Xlinker --as-needed \
               -lcuda -o "$work/x.so" "$work/x.cu" ;;
    no_threads) nvcc -shared "${common[@]}" -cudart shared -std=c++17 -Xlinker -z,defs -Xlinker --as-needed \
               -lcuda -o "$work/x.so" "$work/x.cu" ;;
    c_then_gxx) nvcc -c "${common[@]}" -std=c++17 --threads 2 -o "$work/x.o" "$work/x.cu" &&
                 g++ -shared -o "$work/x.so" "$work/x.o" "${link[@]}" ;;
    c_then_gold) nvcc -c "${common[@]}" -std=c++17 --threads 2 -o "$work/x.o" "$work/x.cu" &&
                 g++ -shared -fuse-ld=gold -o "$work/x.so" "$work/x.o" "${link[@]}" ;;
    c14_then_gold) nvcc -c "${common[@]}" -std=c++14 --threads 2 -o "$work/x.o" "$work/x.cu" &&
                 g++ -shared -fuse-ld=gold -o "$work/x.so" "$work/x.o" "${link[@]}" ;;
    gold_tmp_shm) TMPDIR=/dev/shm nvcc -c "${common[@]}" -std=c++17 --threads 2 -o "$work/x.o" "$work/x.cu" &&
                 g++ -shared -fuse-ld=gold -o "$work/x.so" "$work/x.o" "${link[@]}" ;;
    gold_pipe)   nvcc -c "${common[@]}" -Xcompiler -pipe -std=c++17 --threads 2 -o "$work/x.o" "$work/x.cu" &&
                 g++ -shared -fuse-ld=gold -o "$work/x.so" "$work/x.o" "${link[@]}" ;;
    gold_threads4) nvcc -c "${common[@]}" -std=c++17 --threads 4 -o "$work/x.o" "$work/x.cu" &&
                 g++ -shared -fuse-ld=gold -o "$work/x.so" "$work/x.o" "${link[@]}" ;;
    empty_floor) c_then_gold_cmd ;;  # the adopted command on a file with no code at all: nvcc's floor
  esac
}

median_ms() {  # name
  local times=()
  for ((i = 0; i < n; i++)); do
    count=$((count + 1))
    if [ "$1" = empty_floor ]; then echo "// variant $1 run $count" >"$work/x.cu"
    else { echo "// variant $1 run $count"; cat "$src"; } >"$work/x.cu"; fi
    local t0=$(date +%s%N)
    variant "$1" >/dev/null 2>"$work/err" || { echo "$1 failed:" >&2; cat "$work/err" >&2; echo -1; return; }
    times+=($(( ($(date +%s%N) - t0) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (n + 1) / 2 ))p"
}

base=$(median_ms current)
printf '%-16s %8s %8s\n' variant median_ms ratio
printf '%-16s %8s %8s\n' current "$base" 1.00
for v in ${VARIANTS:-no_threads c_then_gold gold_pipe empty_floor}; do
  m=$(median_ms "$v")
  printf '%-16s %8s %8s\n' "$v" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN{printf "%.2f", a/b}')"
done

# Where the adopted command's time goes: nvcc's own per-phase times (--time) for one compile.
{ echo "// phases run"; cat "$src"; } >"$work/x.cu"
nvcc -c "${common[@]}" -std=c++17 --threads 2 -o "$work/x.o" "$work/x.cu" --time "$work/phases.csv" >/dev/null 2>&1 &&
  awk -F, 'NR > 1 { gsub(/^ +| +$/, "", $2); printf "phase %-24s %8.1f ms\n", $2, $7 }' "$work/phases.csv"
