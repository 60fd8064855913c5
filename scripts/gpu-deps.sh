#!/usr/bin/env bash
# Gathers what the GPU machine lacks into .gpu-deps/ (ignored by git; name it in the device call's
# carry): xxhash.h, PCRE2's header and library, Debian's Chart.js (for HTML reports), and the
# commit being checked. --service adds what
# `scripts/gpu-check.sh service` needs: Debian's cpp-httplib and hiredis (headers, what httplib.h
# includes, libraries; CMakeLists.txt finds them there), brotli for cpp-httplib at run time
# (.gpu-deps/svc-lib), and redis-server with the libraries it loads (.gpu-deps/bin, .gpu-deps/redis-lib).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu-deps/include .gpu-deps/lib
cp /usr/include/xxhash.h /usr/include/pcre2.h .gpu-deps/include/
# OpenSSL's headers (the report channel's HMAC, src/common/report_mac.hpp): the library is there.
rm -rf .gpu-deps/include/openssl && cp -r /usr/include/openssl .gpu-deps/include/
cp /usr/include/x86_64-linux-gnu/openssl/* .gpu-deps/include/openssl/  # opensslconf.h, configuration.h
cp -L /usr/lib/x86_64-linux-gnu/libpcre2-8.so.0 .gpu-deps/lib/
cp -L /usr/share/javascript/chart.js/chart.min.js .gpu-deps/  # `kernelrl report --html` there (--chart-js)
c=$(git rev-parse --short=12 HEAD)
[ -n "$(git status --porcelain --untracked-files=no)" ] && c="$c-dirty"
echo "$c" > .gpu-deps/commit
if [[ " $* " == *" --service "* ]]; then
  inc=.gpu-deps/include
  rm -rf "$inc/hiredis" "$inc/brotli" .gpu-deps/svc-lib .gpu-deps/redis-lib .gpu-deps/bin
  mkdir -p .gpu-deps/svc-lib .gpu-deps/redis-lib .gpu-deps/bin
  cp /usr/include/httplib.h /usr/include/zlib.h /usr/include/zconf.h "$inc/"
  cp -r /usr/include/hiredis /usr/include/brotli "$inc/"
  cp -L /usr/lib/x86_64-linux-gnu/libcpp-httplib.so.0.11 /usr/lib/x86_64-linux-gnu/libhiredis.so.0.14 .gpu-deps/lib/
  for l in libbrotlidec.so.1 libbrotlienc.so.1 libbrotlicommon.so.1; do cp -L "/usr/lib/x86_64-linux-gnu/$l" .gpu-deps/svc-lib/; done
  # redis-server is Debian's redis-check-rdb binary called by that name; its libraries beyond glibc
  # and the C++ runtime go beside it (loaded through LD_LIBRARY_PATH for that process only).
  cp -L /usr/bin/redis-server .gpu-deps/bin/redis-server
  ldd /usr/bin/redis-server | awk '$3 ~ /^\// {print $3}' |
    grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so' | xargs -r -I{} cp -L {} .gpu-deps/redis-lib/
fi
# --model: the default model in two parts, .gpu-model-aa/ and .gpu-model-ab/ (a call carries 64 MiB
# at most): carry one per call, back to back (scripts/gpu-train-check.sh reassembles them).
if [[ " $* " == *" --model "* ]]; then
  rm -rf .gpu-model-aa .gpu-model-ab && mkdir -p .gpu-model-aa .gpu-model-ab
  split -b 50000000 -a 2 .cache/models/SmolLM2-135M-Instruct.Q4_1.gguf .gpu-model-aa/part-
  mv .gpu-model-aa/part-ab .gpu-model-ab/
fi
echo "gpu-deps: $(cat .gpu-deps/commit)"
