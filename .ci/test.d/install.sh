#!/usr/bin/env bash
# Install test and ABI check: examples/c builds against the installed header,
# libfaultline.so and faultline.pc only (and through the CMake package), runs,
# and the exported ABI is compared with the committed baseline.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "${FL_BUILD_DIR:-build}" --prefix "$prefix" >/dev/null
test -f "$prefix/include/faultline/faultline.h"
test -f "$prefix/lib/pkgconfig/faultline.pc"
ls "$prefix"/lib/libfaultline.so.0.* >/dev/null
test -f "$prefix/include/faultline/faultline_version.h"

# pkg-config consumer.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc -std=c99 -Wall -Werror examples/c/diagnose.c $(pkg-config --cflags --libs faultline) -o "$prefix/diagnose_pc"
out=$(LD_LIBRARY_PATH="$prefix/lib" "$prefix/diagnose_pc" examples/incidents/xid79-two-hosts)
echo "$out" | grep -q '^xid-79-fallen-off-bus:' || { echo "unexpected output: $out"; exit 1; }

# CMake consumer.
cmake -S tests/install -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$prefix/consumer/diagnose" examples/incidents/xid79-two-hosts | grep -q '^xid-79-fallen-off-bus:'

# ABI: no incompatible change against the baseline of this soname (additions
# are fine). While the major is 0 a minor release may break the ABI and gets
# a new soname (libfaultline.so.0.MINOR) and a new baseline; the break is
# recorded beside it as the abidiff from the previous baseline
# (tests/install/abi/*-to-*.abidiff.txt: 0.3 changed fl_session_options_init
# and the soname, nothing else), and faultline.h lists it under "Changes".
# Compatible additions refresh the baseline in place, with their abidiff
# against the one before kept beside it (*-additions.abidiff.txt).
if command -v abidiff >/dev/null; then
  lib=$(readlink -f "$prefix/lib/libfaultline.so")
  soname=$(objdump -p "$lib" | awk '/SONAME/{print $2}')
  baseline=tests/install/abi/$soname.abi.xz
  # The baseline is abidw's XML, xz-compressed (the opaque handles' private
  # definitions make it large). Record one when a release changes the ABI:
  #   abidw --headers-dir PREFIX/include/faultline --drop-private-types --no-corpus-path \
  #     --no-show-locs PREFIX/lib/libfaultline.so.X.Y.Z | sed -e "s| comp-dir-path='[^']*'||g" \
  #     -e "s|path='$PWD/|path='../|g" | xz -9 > tests/install/abi/SONAME.abi.xz
  # (the sed drops the build directories and makes absolute source paths
  # relative, as the build directory sees them: paths of the machine that
  # built it). Additions within a release (0.3: fl_ruleset_load_info,
  # fl_report_html, fl_report_input_warning*, fl_session_snapshot, the
  # incident id, action, attempts and history accessors,
  # fl_session_add_prior_bundle) are recorded the same way, so that removing
  # one later is caught.
  [ -f "$baseline" ] || { echo "abidiff: no ABI baseline $baseline for soname $soname"; exit 1; }
  xz -dc "$baseline" > "$prefix/baseline.abi"
  set +e
  abidiff --headers-dir2 "$prefix/include/faultline" --drop-private-types \
    "$prefix/baseline.abi" "$lib" > "$prefix/abidiff.txt"
  rc=$?
  set -e
  if [ $((rc & 8)) -ne 0 ] || [ $((rc & 1)) -ne 0 ] || [ $((rc & 2)) -ne 0 ]; then
    cat "$prefix/abidiff.txt"; echo "abidiff: incompatible ABI change against $baseline (exit $rc)"; exit 1
  fi
  [ $((rc & 4)) -ne 0 ] && echo "abidiff: compatible ABI additions (update the baseline when releasing)"
fi
echo "install: 1 passed, 0 failed"
