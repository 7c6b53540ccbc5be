#!/usr/bin/env bash
# Feeds MiB (default 1024) of GPU job logs over OTLP/gRPC through the
# otelcol-faultline distribution twice: with the faultline connector, and
# with it removed (otlp -> nop). Prints records/s and the collector's RSS.
#
#   integrations/otelcol/bench/run.sh [MiB [LOGDIR]]
#
# LOGDIR defaults to a 128 MiB realistic job written by bench/gen_logs.py
# (64 ranks on 8 hosts, rare failures), cycled by 8 concurrent jobs.
# examples/incidents/xid79-two-hosts is the worst case (nearly every line
# is evidence). Needs libfaultline installed where pkg-config finds it
# (PKG_CONFIG_PATH, LD_LIBRARY_PATH), as for bindings/go/run-tests.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
mib=${1:-1024}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
logs=${2:-}
if [ -z "$logs" ]; then
  logs=$tmp/job
  python3 "$repo/bench/gen_logs.py" --out "$logs" --size 128M --seed 1 >/dev/null
fi
cd "$here/.."
go build -p 2 -o "$tmp/otelcol-faultline" ./cmd/otelcol-faultline
go build -p 2 -o "$tmp/bench" ./bench
"$tmp/bench" -collector "$tmp/otelcol-faultline" -connector=false -mib "$mib" -logs "$logs"
"$tmp/bench" -collector "$tmp/otelcol-faultline" -connector=true -mib "$mib" -logs "$logs"
