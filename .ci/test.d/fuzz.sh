#!/usr/bin/env bash
# Short libFuzzer runs of every target in tests/fuzz (clang, ASan+UBSan,
# leak checking on). Builds into build-fuzz/ (kept between runs, and shared
# with sanitizers.sh, which runs the test suites from the same build), seeds
# each corpus from the repository (compiled rulesets and truncations, rule
# files, fixtures, generated .gz/.zst archives, Flight Recorder dumps from
# tests/flightrec/make_dumps.py) and fails on any crash, leak,
# UB report, timeout or out-of-memory. Each target runs FL_FUZZ_SECONDS
# (20: a smoke test: 13 targets two at a time fuzz 7 x 20 s = 2.3 min; longer runs
# are tests/fuzz/fuzz-long.sh) with a fresh random seed, printed so a failure can be replayed with
# -seed=N; FL_FUZZ_JOBS (2) targets run at a time. Artifacts (crashing
# inputs) land in build-fuzz/fuzz-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${FL_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
SECS=${FL_FUZZ_SECONDS:-20}
JOBS=${FL_FUZZ_JOBS:-2}
TARGETS=(fuzz_ruleset_load fuzz_ruleset_forged fuzz_rule_compiler fuzz_scan_lines fuzz_jsonl
         fuzz_compressed fuzz_capi_feed fuzz_flightrec
         fuzz_bundle fuzz_path_attribution fuzz_timeparse fuzz_compiler_meta fuzz_expand_path
)
# FL_FUZZ_TARGETS (space-separated) runs only those (tests/fuzz/fuzz-long.sh).
if [ -n "${FL_FUZZ_TARGETS:-}" ]; then read -r -a TARGETS <<<"$FL_FUZZ_TARGETS"; fi

command -v clang++ >/dev/null || { echo "fuzz: clang++ not installed"; exit 1; }
.ci/configure-sanitized "$BUILD" address,undefined -DFL_FUZZ=ON
t0=$SECONDS
cmake --build "$BUILD" -j2 --target fuzzers fl_rulec >"$BUILD/fuzz-build.log" 2>&1 ||
  { tail -50 "$BUILD/fuzz-build.log"; echo "fuzz: build failed"; exit 1; }
echo "fuzz: build $((SECONDS - t0)) s"

# Seeds, regenerated each run (cheap); corpora grow in $BUILD/fuzz-corpus.
SEEDS=$BUILD/fuzz-seeds
rm -rf "$SEEDS"
mkdir -p "$SEEDS"/{ruleset_load,compressed,logs,flightrec} "$BUILD/fuzz-artifacts"
"$BUILD/src/ruleset/fl_rulec" tests/fuzz/rules-small "$SEEDS/ruleset_load/small.flrules" 2>/dev/null
cp "$BUILD/src/ruleset/default.flrules" "$SEEDS/ruleset_load/default.flrules"
for f in small default; do
  size=$(stat -c %s "$SEEDS/ruleset_load/$f.flrules")
  for frac in 2 3 5 9 17; do
    head -c $((size * (frac - 1) / frac)) "$SEEDS/ruleset_load/$f.flrules" \
      >"$SEEDS/ruleset_load/$f.trunc$frac"
  done
done
# Log seeds: every fixture and example log under 64 KiB.
i=0
while IFS= read -r -d '' f; do
  cp "$f" "$SEEDS/logs/$i.log"; i=$((i + 1))
done < <(find tests/fixtures examples/incidents -type f -size -64k ! -name '*.json' -print0 | sort -z)
# Compressed seeds: byte 0 picks the format (even .gz, odd .zst).
n=0
for f in $(find tests/fixtures examples/incidents -type f -size -16k ! -name '*.json' | sort | head -12); do
  { printf '\x00'; gzip -c "$f"; } >"$SEEDS/compressed/$n.gz"
  { printf '\x00'; gzip -c "$f"; gzip -1 -c "$f"; } >"$SEEDS/compressed/$n.multi.gz"
  { printf '\x01'; zstd -q -c "$f"; } >"$SEEDS/compressed/$n.zst"
  { printf '\x05'; zstd -q -c "$f"; zstd -q -1 -c "$f"; } >"$SEEDS/compressed/$n.multi.zst"
  n=$((n + 1))
done

# Flight Recorder seeds: the test dumps of every format version (not the
# 1,024-rank job), each as a dump (byte 0 even) and as a bare pickle (odd).
python3 tests/flightrec/make_dumps.py "$SEEDS/flightrec-gen" --only versions --only p2p \
  --only filename --only hostile
n=0
while IFS= read -r -d '' f; do
  { printf '\x00'; cat "$f"; } >"$SEEDS/flightrec/$n.dump"
  { printf '\x01'; cat "$f"; } >"$SEEDS/flightrec/$n.pickle"
  n=$((n + 1))
done < <(find "$SEEDS/flightrec-gen" -type f -size -64k ! -name DONE -print0 | sort -z)
# Bundle seeds: real bundles of small fixtures (whole, two byte ranges, and
# pairs of logs), written by the fuzz_bundle binary itself.
mkdir -p "$SEEDS"/{bundle,timeparse,compiler_meta,paths}
# (An array, not `| head`: under pipefail the writer's SIGPIPE would fail the run.)
mapfile -d '' bundle_logs < <(find tests/fixtures examples/incidents -type f -size -16k ! -name '*.json' -print0 | sort -z)
FL_FUZZ_WRITE_BUNDLES="$SEEDS/bundle" ASAN_OPTIONS=detect_leaks=0 \
  "$BUILD/tests/fuzz/fuzz_bundle" "${bundle_logs[@]:0:16}" >"$BUILD/fuzz-bundle-seeds.log" 2>&1 ||
  { tail -20 "$BUILD/fuzz-bundle-seeds.log"; echo "fuzz: writing bundle seeds failed"; exit 1; }
# Time seeds: 3 choice bytes (year, zone), then one line of each format.
i=0
while IFS= read -r line; do
  printf '\x38\x48\x03%s' "$line" >"$SEEDS/timeparse/$i"; i=$((i + 1))
done <tests/fuzz/corpus/scan_lines/formats.log
# Compiler metadata seeds: ruleset.json NUL references.json.
{ cat tests/fuzz/rules-small/ruleset.json; printf '\0'; cat tests/fuzz/rules-small/references.json; } \
  >"$SEEDS/compiler_meta/small"
{ cat rulesets/ruleset.json; printf '\0'; cat rulesets/references.json; } >"$SEEDS/compiler_meta/default"
# Path seeds: the repository's own log paths.
i=0
while IFS= read -r -d '' f; do
  printf '%s' "$f" >"$SEEDS/paths/$i"; i=$((i + 1))
done < <(find tests/fixtures tests/realworld examples -type f -print0 | sort -z | head -z -n 400)

seeds_for() {
  # Inputs that once failed, kept as regression seeds (replayed first).
  [ -d "$ROOT/tests/fuzz/regressions/$1" ] && echo "$ROOT/tests/fuzz/regressions/$1"
  case $1 in
    fuzz_ruleset_load) echo "$SEEDS/ruleset_load" ;;
    fuzz_ruleset_forged) echo "$ROOT/tests/fuzz/corpus/ruleset_forged" ;;
    fuzz_rule_compiler) echo "$ROOT/rulesets $ROOT/tests/fuzz/rules-small" ;;
    fuzz_scan_lines) echo "$SEEDS/logs $ROOT/tests/fuzz/corpus/scan_lines" ;;
    fuzz_jsonl) echo "$ROOT/tests/fuzz/corpus/jsonl $SEEDS/logs" ;;
    fuzz_compressed) echo "$SEEDS/compressed" ;;
    fuzz_capi_feed) echo "$SEEDS/logs $ROOT/tests/fuzz/corpus/scan_lines $ROOT/tests/fuzz/corpus/jsonl" ;;
    fuzz_flightrec) echo "$ROOT/tests/fuzz/corpus/flightrec $SEEDS/flightrec" ;;
    fuzz_bundle) echo "$SEEDS/bundle" ;;
    fuzz_path_attribution) echo "$SEEDS/paths $ROOT/tests/fuzz/corpus/path_attribution" ;;
    fuzz_timeparse) echo "$SEEDS/timeparse $ROOT/tests/fuzz/corpus/timeparse" ;;
    fuzz_compiler_meta) echo "$SEEDS/compiler_meta" ;;
    fuzz_expand_path) echo "$ROOT/tests/fuzz/corpus/expand_path" ;;
  esac
}
max_len_for() {
  case $1 in
    fuzz_ruleset_load) echo 2000000 ;;
    fuzz_ruleset_forged) echo 20482 ;;
    fuzz_compressed) echo 65536 ;;
    fuzz_rule_compiler) echo 32768 ;;
    fuzz_bundle) echo 262144 ;;
    fuzz_path_attribution | fuzz_timeparse) echo 4096 ;;
    fuzz_compiler_meta) echo 131072 ;;
    fuzz_expand_path) echo 1024 ;;
    *) echo 65536 ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:handle_sigbus=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
run_one() {
  local t=$1 seed=$2 corpus=$BUILD/fuzz-corpus/$1
  mkdir -p "$corpus"
  # shellcheck disable=SC2046
  "$BUILD/tests/fuzz/$t" -seed="$seed" -max_total_time="$SECS" -rss_limit_mb=4096 -timeout=30 \
    -max_len="$(max_len_for "$t")" -print_final_stats=1 \
    -artifact_prefix="$BUILD/fuzz-artifacts/$t-" "$corpus" $(seeds_for "$t") \
    >"$BUILD/fuzz-$t.log" 2>&1
}

failed=0
declare -A pids seeds
start=$SECONDS
for t in "${TARGETS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 1; done
  seed=$(( (RANDOM << 15 | RANDOM) + 1 ))
  seeds[$t]=$seed
  echo "fuzz: $t -seed=$seed for $SECS s"
  run_one "$t" "$seed" &
  pids[$t]=$!
done
total_execs=0
for t in "${TARGETS[@]}"; do
  rc=0
  wait "${pids[$t]}" || rc=$?
  log=$BUILD/fuzz-$t.log
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  total_execs=$((total_execs + ${execs:-0}))
  if [ $rc -ne 0 ]; then
    failed=$((failed + 1))
    echo "fuzz: $t FAILED (exit $rc, seed ${seeds[$t]}); last lines of $log:"
    tail -60 "$log"
    { ls -1 "$BUILD/fuzz-artifacts/$t-"* 2>/dev/null || true; } | sed 's/^/fuzz: artifact /' 
    echo "fuzz: replay: $BUILD/tests/fuzz/$t <artifact>"
  else
    echo "fuzz: $t ok: ${execs:-?} execs, ${cov:-cov ?}, corpus $(ls "$BUILD/fuzz-corpus/$t" | wc -l) files"
  fi
done
echo "fuzz: ${#TARGETS[@]} targets, $total_execs execs in $((SECONDS - start)) s"
echo "fuzz: $(( ${#TARGETS[@]} - failed )) passed, $failed failed"
[ $failed -eq 0 ]
