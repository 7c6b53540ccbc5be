#!/usr/bin/env bash
# Peer harness: faultline against ripgrep, GNU grep, a Python `re` loop and
# raw Hyperscan on the same generated job logs with the same signal patterns,
# in one go. Writes OUT/results.md (the table for bench/README.md) and the raw
# outputs next to it.
#
#   bench/peers.sh                       # 2 GB job, default paths
#   SIZE=512M REPS=1 bench/peers.sh      # quick look
#   PER_SIGNAL=1 bench/peers.sh          # also per-signal costs (~6 min more)
#   SINGLE=1 DENSE=0.17 SIZE=64M MEM8=0 bench/peers.sh
#                                        # issue #20's dense log: one file, a
#                                        # context signal on 1 line in 6
#   HOSTS=128 FILES_PER_RANK=20 SIZE=80M MEM8=0 bench/peers.sh
#                                        # a many-file archive: 1,024 ranks,
#                                        # 20,736 files
#
# Environment (defaults):
#   BUILD=build-bench         build dir with src/cli/faultline and bench/fl_hs_raw
#   DATA=bench-data           where the generated logs live (reused when present)
#   SIZE=2G SEED=1            generator size and seed (bench/gen_logs.py)
#   DENSE=0                   gen_logs.py --dense: the share of lines that are a
#                             context signal (0.17: 1 in 6, the issue #20 log)
#   SINGLE=0                  1: one interleaved file (gen_logs.py --single)
#   HOSTS=8 FILES_PER_RANK=1  gen_logs.py --hosts (8 ranks each) and
#                             --files-per-rank (each rank's output rotated)
#   REPS=3                    runs per configuration; the table takes the fastest
#   PY_MB=32                  MiB the Python loop reads, once (it is extrapolated)
#   MEM8=1                    also measure faultline's memory on 4x the data (8 GB
#                             for SIZE=2G: the same files through 4 paths)
#   PER_SIGNAL=0              1: fl_hs_raw --per-signal minus, alone and re2
#   COMPRESSED=0              1: also one SIZE log (gen_logs.py --single) as .gz
#                             (gzip -6), .zst (zstd -3), multi-frame .zst
#                             (pzstd -3), .zst --long=27 and .zst without
#                             its content size, on 1 and 2 threads next to
#                             each decoder alone into 2 MiB pieces
#                             (bench/compressed.py; needs fl_decode_file);
#                             OUT/compressed/results.md
#   OUT=$DATA/results-SIZE    results directory
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-build-bench}
DATA=${DATA:-bench-data}
SIZE=${SIZE:-2G}
SEED=${SEED:-1}
DENSE=${DENSE:-0}
SINGLE=${SINGLE:-0}
HOSTS=${HOSTS:-8}
FILES_PER_RANK=${FILES_PER_RANK:-1}
REPS=${REPS:-3}
PY_MB=${PY_MB:-32}
MEM8=${MEM8:-1}
PER_SIGNAL=${PER_SIGNAL:-0}
COMPRESSED=${COMPRESSED:-0}
# The data's name says how it was made (the default job keeps its old name).
VARIANT=
[[ $DENSE == 0 ]] || VARIANT+=-dense$DENSE
[[ $SINGLE == 0 ]] || VARIANT+=-single
[[ $HOSTS == 8 ]] || VARIANT+=-hosts$HOSTS
[[ $FILES_PER_RANK == 1 ]] || VARIANT+=-fpr$FILES_PER_RANK
JOB=$DATA/job-$SIZE-seed$SEED$VARIANT
OUT=${OUT:-$DATA/results-$SIZE$VARIANT}
FL=$BUILD/src/cli/faultline
HS=$BUILD/bench/fl_hs_raw
MW="python3 $HERE/memwatch.py"

for tool in "$FL" "$HS"; do
  [[ -x $tool ]] || { echo "peers.sh: $tool is missing (build faultline_cli and fl_hs_raw)" >&2; exit 1; }
done
command -v rg > /dev/null || { echo "peers.sh: ripgrep (rg) is not installed" >&2; exit 1; }
mkdir -p "$DATA" "$OUT"

if [[ ! -f $JOB.manifest.json ]]; then
  echo "== generating $SIZE into $JOB" >&2
  rm -rf "$JOB"
  if [[ $SINGLE == 1 ]]; then
    python3 "$HERE/gen_logs.py" --single "$JOB" --size "$SIZE" --seed "$SEED" --dense "$DENSE" --jobs 1
  else
    python3 "$HERE/gen_logs.py" --out "$JOB" --size "$SIZE" --seed "$SEED" --dense "$DENSE" \
      --hosts "$HOSTS" --files-per-rank "$FILES_PER_RANK" --jobs 2
  fi
fi
BYTES=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['bytes'])" "$JOB.manifest.json")

echo "== patterns" >&2
"$HS" --dump-patterns "$OUT/patterns.tsv"
python3 "$HERE/export_patterns.py" "$OUT/patterns.tsv" "$OUT"

echo "== warming the page cache" >&2
find "$JOB" -type f -exec cat {} + > /dev/null

{
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GB RAM"
  echo "kernel:  $(uname -r)"
  echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (at start)"
  echo "faultline: $("$FL" --version)"
  echo "ripgrep: $(rg --version | head -1); grep: $(grep --version | head -1); $(python3 --version)"
  echo "hyperscan: $(dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\n' libvectorscan5 libhyperscan5 2>/dev/null | awk '$3 ~ /^ii/ {print $1, $2}')"
  echo "data:    $JOB ($BYTES bytes, $(find "$JOB" -type f | wc -l) files)"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2

run() {  # run LABEL CMD...: REPS runs, each a JSON in $OUT/runs
  local label=$1; shift
  mkdir -p "$OUT/runs"
  for r in $(seq 1 "$REPS"); do
    $MW --label "$label#$r" --json "$OUT/runs/$label.$r.json" -- "$@" >&2
  done
}

echo "== runs (REPS=$REPS)" >&2
run faultline-t1 "$FL" bench --threads 1 "$JOB"
run faultline-t2 "$FL" bench --threads 2 "$JOB"
# diagnose (scan, correlation, report) against bench: the issue's "within 20%"
run faultline-diagnose-t1 "$FL" diagnose --threads 1 "$JOB"
run hs-raw-t1 "$HS" --threads 1 "$JOB"
run hs-raw-t2 "$HS" --threads 2 "$JOB"
run rg-j1 rg --no-config -uuu -a -c -j1 -f "$OUT/patterns.rg.txt" "$JOB"
run rg-j2 rg --no-config -uuu -a -c -j2 -f "$OUT/patterns.rg.txt" "$JOB"
run grep-E grep -E -c -r -f "$OUT/patterns.ere.txt" "$JOB"

# Python: one alternation of all patterns, searched line by line, over the
# first PY_MB of the job (whole files in path order); extrapolated by bytes.
cat > "$OUT/pyloop.py" << 'EOF'
import os, re, sys, time
pats = [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8")]
rx = re.compile("|".join("(?:%s)" % p for p in pats).encode())
cap = int(sys.argv[3]) << 20
files = ([sys.argv[2]] if os.path.isfile(sys.argv[2]) else
         sorted(os.path.join(r, f) for r, _, fs in os.walk(sys.argv[2]) for f in fs))
n = done = 0
t0 = time.perf_counter()
for path in files:
    with open(path, "rb") as f:
        for line in f:
            done += len(line)
            if rx.search(line):
                n += 1
            if done >= cap:  # one big file (SINGLE=1) is cut too
                break
    if done >= cap:
        break
dt = time.perf_counter() - t0
print("bytes %d lines_matched %d seconds %.3f" % (done, n, dt))
EOF
REPS=1 run python-re python3 "$OUT/pyloop.py" "$OUT/patterns.py.txt" "$JOB" "$PY_MB"  # slow: once

if [[ $MEM8 == 1 ]]; then
  echo "== memory on 4x the data (4 paths to the same files)" >&2
  mkdir -p "$DATA/x4"
  for k in a b c d; do ln -sfn "$JOB" "$DATA/x4/$k"; done
  REPS=1 run faultline-x4-t2 "$FL" bench --threads 2 "$DATA/x4/a" "$DATA/x4/b" "$DATA/x4/c" "$DATA/x4/d"
fi

if [[ $PER_SIGNAL == 1 ]]; then
  # CPU time of one thread on a sample holding the same share of every file.
  echo "== per-signal costs: Hyperscan (128 MB sample), RE2 phase B (512 MB sample)" >&2
  "$HS" --per-signal minus --sample-mb 128 "$JOB" > "$OUT/per-signal-minus.txt"
  "$HS" --per-signal alone --sample-mb 128 "$JOB" > "$OUT/per-signal-alone.txt"
  "$HS" --per-signal re2 --sample-mb 512 "$JOB" > "$OUT/per-signal-re2.txt"
fi

if [[ $COMPRESSED == 1 ]]; then
  echo "== compressed: one $SIZE log as .gz, .zst and multi-frame .zst" >&2
  for tool in "$BUILD/bench/fl_decode_file" gzip zstd pzstd; do
    command -v "$tool" > /dev/null || { echo "peers.sh: $tool is missing (COMPRESSED=1)" >&2; exit 1; }
  done
  ONE=$DATA/single-$SIZE-seed$SEED-dense$DENSE.log
  if [[ ! -f $ONE ]]; then
    python3 "$HERE/gen_logs.py" --single "$ONE" --size "$SIZE" --seed "$SEED" --dense "$DENSE" --jobs 2
  fi
  [[ -f $ONE.gz ]] || gzip -6 -c "$ONE" > "$ONE.gz"
  [[ -f $ONE.zst ]] || zstd -q -3 -c "$ONE" > "$ONE.zst"
  FRAMES=$DATA/single-$SIZE-seed$SEED-dense$DENSE.pzstd.log.zst
  [[ -f $FRAMES ]] || pzstd -q -3 -p 2 -c "$ONE" > "$FRAMES"
  LONG=$DATA/single-$SIZE-seed$SEED-dense$DENSE.long.log.zst
  [[ -f $LONG ]] || zstd -q -3 --long=27 -c "$ONE" > "$LONG"
  NOSIZE=$DATA/single-$SIZE-seed$SEED-dense$DENSE.nosize.log.zst
  [[ -f $NOSIZE ]] || zstd -q -3 --no-content-size -c < "$ONE" > "$NOSIZE"
  python3 "$HERE/compressed.py" --fl "$FL" --decode "$BUILD/bench/fl_decode_file" --plain "$ONE" \
    --gz "$ONE.gz" --zst "$ONE.zst" --frames "$FRAMES" --also "zst-long=$LONG" \
    --also "zst-nosize=$NOSIZE" --decode-buffer 2097152 --rounds "$REPS" --out "$OUT/compressed"
fi

"$FL" bench --threads 2 "$JOB" > "$OUT/faultline-bench.txt"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (at end)" >> "$OUT/machine.txt"

python3 "$HERE/peers_summary.py" "$OUT" "$BYTES"
echo "results: $OUT/results.md" >&2
