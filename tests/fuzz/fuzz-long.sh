#!/usr/bin/env bash
# fuzz-long.sh SECONDS [TARGET...]: runs every fuzz target (or the named
# ones) for SECONDS each, one at a time, through .ci/test.d/fuzz.sh (same
# build-fuzz/ build, seeds, options and kept corpora), then prints one row
# per target: execs, execs/s, libFuzzer's final cov: and ft:, corpus files,
# peak RSS and crash artifacts. Exits non-zero when any target failed.
# Example: tests/fuzz/fuzz-long.sh 3600            # the one-CPU-hour runs
#          tests/fuzz/fuzz-long.sh 300 fuzz_bundle fuzz_timeparse
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: tests/fuzz/fuzz-long.sh SECONDS [TARGET...]" >&2
  exit 1
fi
secs=$1
shift
BUILD=${FL_FUZZ_BUILD_DIR:-$PWD/build-fuzz}
if [ $# -gt 0 ]; then
  targets=("$@")
else
  # shellcheck disable=SC2207
  targets=($(sed -n '/^TARGETS=(/,/)/p' .ci/test.d/fuzz.sh | tr -d '()' | sed 's/TARGETS=//' | tr -s ' \n' ' '))
fi
# Artifacts of earlier runs would be counted as this run's crashes.
before=$(mktemp)
ls -1 "$BUILD/fuzz-artifacts" 2>/dev/null | sort >"$before"

for t in "${targets[@]}"; do rm -f "$BUILD/fuzz-$t.log"; done  # no stale figures
rc=0
FL_FUZZ_SECONDS=$secs FL_FUZZ_JOBS=1 FL_FUZZ_TARGETS="${targets[*]}" .ci/test.d/fuzz.sh || rc=$?

printf '\n%-22s %10s %8s %7s %7s %7s %8s %7s\n' target execs exec/s cov ft corpus rss_mb crashes
for t in "${targets[@]}"; do
  log=$BUILD/fuzz-$t.log
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" 2>/dev/null | grep -o '[0-9]*$' | tail -1)
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" 2>/dev/null | grep -o '[0-9]*$' | tail -1)
  # The last status line ("#N DONE cov: C ft: F corp: ..."), else any.
  last=$(grep -E '^#[0-9]+' "$log" 2>/dev/null | tail -1)
  cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*')
  ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*')
  corpus=$(ls "$BUILD/fuzz-corpus/$t" 2>/dev/null | wc -l)
  crashes=$(ls -1 "$BUILD/fuzz-artifacts" 2>/dev/null | sort | comm -13 "$before" - | grep -c "^$t-" || true)
  rate=$([ -n "$execs" ] && echo $((execs / (secs > 0 ? secs : 1))) || echo "?")
  printf '%-22s %10s %8s %7s %7s %7s %8s %7s\n' "$t" "${execs:-?}" "$rate" "${cov:-?}" "${ft:-?}" \
    "$corpus" "${rss:-?}" "$crashes"
done
echo "fuzz-long: $secs s per target, one at a time, $(date -u +%F)"
rm -f "$before"
exit $rc
