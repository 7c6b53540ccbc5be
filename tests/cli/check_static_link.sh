#!/usr/bin/env bash
# check_static_link.sh FAULTLINE ARCHIVE...: fails when the faultline command
# (built with FL_CLI_STATIC) needs libfaultline.so or the shared library of a
# dependency it was to take from one of the static ARCHIVEs (libX.a: no
# libX.so* among its DT_NEEDED), or does not run.
set -euo pipefail
bin=$1; shift
needed=$(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}')
bad=""
for want in libfaultline.a "$@"; do
  stem=$(basename "$want" .a)
  hit=$(echo "$needed" | grep -E "^${stem}\.so(\.|$)" || true)
  [ -z "$hit" ] || bad="$bad $hit"
done
if [ -n "$bad" ]; then echo "needs shared libraries it should link statically:$bad"; exit 1; fi
"$bin" --version | grep -q '^faultline [0-9]' || { echo "$bin --version failed"; exit 1; }
echo "1 passed, 0 failed ($# static archives, needs: $(echo $needed | tr '\n' ' '))"
