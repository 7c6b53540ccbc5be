#!/usr/bin/env bash
# Fails when libfaultline exports anything but fl_* (the version script and
# hidden visibility must keep the internals, Abseil, RE2 and Hyperscan out).
set -euo pipefail
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u)
bad=$(echo "$syms" | grep -v '^fl_' | grep -v '^FAULTLINE_0$' | grep -v '^FAULTLINE_X$' | grep -v '^$' || true)
count=$(echo "$syms" | grep -c '^fl_' || true)
if [ -n "$bad" ]; then
  echo "exported symbols outside fl_*:"; echo "$bad" | head -20; exit 1
fi
if [ "$count" -lt 30 ]; then echo "only $count fl_* symbols exported"; exit 1; fi
# Experimental fl_x_* symbols live under FAULTLINE_X, the frozen set under
# FAULTLINE_0.
xver=$(objdump -T "$lib" | awk '$NF ~ /^fl_x_/ && $(NF-1) != "FAULTLINE_X" {print $NF}')
[ -z "$xver" ] || { echo "fl_x_* symbols outside FAULTLINE_X: $xver"; exit 1; }
fver=$(objdump -T "$lib" | awk '$NF ~ /^fl_/ && $NF !~ /^fl_x_/ && $(NF-1) != "FAULTLINE_0" {print $NF}')
[ -z "$fver" ] || { echo "frozen symbols outside FAULTLINE_0: $fver"; exit 1; }
# The soname carries MAJOR.MINOR while the major is 0 (faultline.h).
want=${2:-}
soname=$(objdump -p "$lib" | awk '/SONAME/{print $2}')
case "$soname" in
  libfaultline.so.0.[0-9]*) ;;
  libfaultline.so.[1-9]*) ;;
  *) echo "soname is $soname"; exit 1 ;;
esac
[ -z "$want" ] || [ "$soname" = "$want" ] || { echo "soname is $soname, want $want"; exit 1; }
echo "1 passed, 0 failed ($count fl_* symbols, soname $soname)"
