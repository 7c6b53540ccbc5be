#!/usr/bin/env bash
# Fails when libfaultline exports anything but fl_* (the version script and
# hidden visibility must keep the internals, Abseil, RE2 and Hyperscan out).
set -euo pipefail
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u)
bad=$(echo "$syms" | grep -v '^fl_' | grep -v '^FAULTLINE_0$' | grep -v '^$' || true)
count=$(echo "$syms" | grep -c '^fl_' || true)
if [ -n "$bad" ]; then
  echo "exported symbols outside fl_*:"; echo "$bad" | head -20; exit 1
fi
if [ "$count" -lt 30 ]; then echo "only $count fl_* symbols exported"; exit 1; fi
soname=$(objdump -p "$lib" | awk '/SONAME/{print $2}')
[ "$soname" = "libfaultline.so.0" ] || { echo "soname is $soname"; exit 1; }
echo "1 passed, 0 failed ($count fl_* symbols, soname $soname)"
